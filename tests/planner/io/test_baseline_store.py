"""The baseline store: round trip, concurrent writers, interrupted writes, corruption, the
default location, and verdict/rank --baseline."""

from __future__ import annotations

import json
import multiprocessing as mp
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from planner.cli import main
from planner.errors import InputError
from planner.io import baseline_store as bs
from planner.io.rows import Run
from planner.io.runs import read_runs

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
K11, K13 = "mtp_k_sweep_speed/runs:k11", "mtp_k_sweep_speed/runs:k13"


def _runs(config=K11):
    return read_runs(RUNS).measured().select([config]).runs


def test_round_trip_keeps_every_field(tmp_path):
    store = tmp_path / "b.sqlite"
    runs = _runs()
    b = bs.save(store, "k11", runs, config=K11, source=RUNS, saved_at="2026-01-01T00:00:00Z")
    assert b.n_runs == len(runs) == 3
    assert b.platform == "local-a10g" and b.metric == "probe_wall"
    assert b.workload == "probe-single-stream"
    import hashlib

    assert b.sha256 == hashlib.sha256(RUNS.read_bytes()).hexdigest()
    got, back = bs.load(store, "k11")
    assert got == b
    for r, s in zip(runs, back):
        for f in ("config", "tps", "instance", "session", "rep", "platform", "metric",
                  "workload", "run_group", "cold", "lower_is_better"):
            assert getattr(r, f) == getattr(s, f)
    assert [x.name for x in bs.list_baselines(store)] == ["k11"]
    # saving again under the name replaces it
    bs.save(store, "k11", runs[:2], config=K11, saved_at="2026-01-02T00:00:00Z")
    assert bs.load(store, "k11")[0].n_runs == 2
    with pytest.raises(InputError, match="exists"):
        bs.save(store, "k11", runs, config=K11, saved_at="x", replace=False)
    assert bs.delete(store, "k11") and bs.list_baselines(store) == []


def test_unknown_name_lists_the_saved_ones(tmp_path):
    store = tmp_path / "b.sqlite"
    bs.save(store, "one", _runs(), config=K11, saved_at="t")
    with pytest.raises(InputError, match=r"no baseline 'two' \(saved: one\)") as e:
        bs.load(store, "two")
    assert "unreadable" not in e.value.one_line()


def test_a_run_edited_by_hand_is_one_error(tmp_path):
    store = tmp_path / "b.sqlite"
    bs.save(store, "one", _runs(), config=K11, saved_at="t")
    con = sqlite3.connect(str(store))
    con.execute("UPDATE runs SET run = '{\"nope\": 1}' WHERE k = 0")
    con.commit()
    con.close()
    with pytest.raises(InputError, match="unreadable run"):
        bs.load(store, "one")


def test_interrupted_write_leaves_the_store_as_it_was(tmp_path):
    store = tmp_path / "b.sqlite"
    runs = _runs()
    bs.save(store, "k11", runs, config=K11, saved_at="t0")
    bad = runs + [Run(config=K11, tps=object())]   # not JSON: fails inside the transaction
    with pytest.raises(TypeError):
        bs.save(store, "k11", bad, config=K11, saved_at="t1")
    b, back = bs.load(store, "k11")
    assert b.saved_at == "t0" and len(back) == 3


def _writer(args):
    store, who, n = args
    runs = _runs()
    for k in range(n):
        bs.save(Path(store), f"{who}-{k}", runs, config=K11, saved_at=f"{who}{k}")
    return n


def test_two_processes_writing_at_once_both_land(tmp_path):
    store = tmp_path / "b.sqlite"
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        done = pool.map(_writer, [(str(store), "p", 15), (str(store), "q", 15)])
    assert done == [15, 15]
    names = {b.name for b in bs.list_baselines(store)}
    assert names == {f"{w}-{k}" for w in "pq" for k in range(15)}
    for n in names:
        assert len(bs.load(store, n)[1]) == 3


def test_a_second_connection_waits_for_the_first_writer(tmp_path):
    store = tmp_path / "b.sqlite"
    bs.save(store, "k11", _runs(), config=K11, saved_at="t0")
    con = sqlite3.connect(str(store), isolation_level=None)
    con.execute("BEGIN IMMEDIATE")          # another writer holds the lock
    old = bs.BUSY_TIMEOUT_S
    try:
        bs.BUSY_TIMEOUT_S = 0.2
        with pytest.raises(InputError, match="locked"):
            bs.save(store, "k13", _runs(K13), config=K13, saved_at="t1")
    finally:
        bs.BUSY_TIMEOUT_S = old
        con.execute("ROLLBACK")
        con.close()
    bs.save(store, "k13", _runs(K13), config=K13, saved_at="t1")
    assert {b.name for b in bs.list_baselines(store)} == {"k11", "k13"}


@pytest.mark.parametrize("content", [b"\x00garbage\xff" * 100, b"SQLite format 3\x00" + b"\x07" * 400,
                                     b""])
def test_a_corrupted_store_is_one_line_naming_the_file(tmp_path, content):
    store = tmp_path / "b.sqlite"
    store.write_bytes(content)
    p = subprocess.run([sys.executable, "-m", "planner", "baseline", "list", "--store",
                        str(store)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and str(store) in lines[0]


def test_a_foreign_sqlite_file_is_refused(tmp_path):
    store = tmp_path / "other.sqlite"
    con = sqlite3.connect(str(store))
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(InputError, match="not a baseline store"):
        bs.list_baselines(store)


def test_default_path_never_falls_back_on_root():
    assert bs.default_path({"XDG_DATA_HOME": "/x/data", "HOME": "/h"}) == \
        Path("/x/data/spec-planner/baselines.sqlite")
    assert bs.default_path({"HOME": "/h"}) == Path("/h/.local/share/spec-planner/baselines.sqlite")
    assert bs.default_path({"XDG_DATA_HOME": "rel", "HOME": "/h"}).parts[:2] == ("/", "h")
    for env in ({}, {"HOME": ""}, {"HOME": "/"}):
        with pytest.raises(InputError, match="name the baseline store"):
            bs.default_path(env)


def test_cli_save_show_and_verdict_baseline_equals_the_pairwise_verdict(tmp_path, capsys):
    store = tmp_path / "b.sqlite"
    main(["baseline", "save", "k11", str(RUNS), "--config", K11, "--store", str(store)])
    assert "saved baseline 'k11': 3 runs" in capsys.readouterr().out
    main(["baseline", "show", "k11", "--store", str(store), "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert shown["n_runs"] == 3 and len(shown["runs"]) == 3
    main(["verdict", str(RUNS), "--baseline", "k11", "--b", K13, "--store", str(store),
          "--json"])
    vb = json.loads(capsys.readouterr().out)
    main(["verdict", str(RUNS), "--a", K11, "--b", K13, "--json"])
    v = json.loads(capsys.readouterr().out)
    with pytest.raises(SystemExit) as e:  # the baseline is config A: --a beside it is refused
        main(["verdict", str(RUNS), "--baseline", "k11", "--a", K11, "--b", K13, "--store",
              str(store)])
    assert e.value.code == 2 and "--baseline" in capsys.readouterr().err
    assert vb["a"] == "baseline:k11"
    assert vb["label"] == v["label"] == "B better"
    assert vb["delta_pct"] == pytest.approx(v["delta_pct"], rel=1e-9)
    main(["rank", str(RUNS), "--baseline", "k11", "--configs", f"{K13},{K11[:-3]}k9",
          "--store", str(store), "--json"])
    r = json.loads(capsys.readouterr().out)
    names = [x["config"] for x in r["configs"]]
    assert "baseline:k11" in names and r["best"] == K13
    assert next(x for x in r["configs"] if x["config"] == "baseline:k11")["baseline"]


def test_export_feeds_calibrate(tmp_path, capsys):
    store = tmp_path / "b.sqlite"
    main(["baseline", "save", "k11", str(RUNS), "--config", K11, "--store", str(store)])
    out = tmp_path / "k11.csv"
    main(["baseline", "export", "k11", "--store", str(store), "-o", str(out)])
    capsys.readouterr()
    back = read_runs(out)
    assert len(back.runs) == 3 and back.runs[0].config == K11
