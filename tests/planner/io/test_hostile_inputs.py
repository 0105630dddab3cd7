"""Inputs that cannot hurt: binary, endless, oversized, UTF-16 or absurd-number files are
refused with one line naming the file (bounds in :mod:`planner.io.files`), and what ``planner
ingest`` writes cannot run as a spreadsheet formula."""

from __future__ import annotations

import csv
import gzip
import json
import time

import pytest

from planner.errors import InputError
from planner.io import files
from planner.io.ingest import ingest
from planner.io.plan_file import read_plan
from planner.io.rows import Run, WARMUP_PHASE
from planner.io.runs import read_runs
from planner.io.writer import write_runs_csv

_GOOD = "config,tps,instance\nA,300.5,i1\nB,301.5,i2\nA,300.1,i3\nB,302.0,i4\n"


def _one_line(exc: InputError) -> str:
    s = str(exc)
    assert "\n" not in s
    return s


def test_dev_zero_is_refused_at_its_first_bytes(cli):
    t0 = time.perf_counter()
    with pytest.raises(InputError) as e:
        read_runs("/dev/zero")
    assert _one_line(e.value) == ("/dev/zero: a binary file (a NUL byte at byte 0), not text; "
                                  "UTF-16 without a byte-order mark reads so too: save it as "
                                  "UTF-8 (iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8)")
    assert time.perf_counter() - t0 < 1.0
    code, out, err = cli("verdict", "/dev/zero", "--a", "A", "--b", "B")
    assert code == 2 and err.count("\n") == 1 and "binary file" in err


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json", ""])
def test_a_sparse_file_of_nuls_is_refused_without_reading_it(tmp_path, suffix):
    p = tmp_path / f"zeros{suffix}"
    with open(p, "wb") as fh:
        fh.truncate(200 * 2**20)  # 200 MiB of NULs, none of them on disk
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=r"a binary file \(a NUL byte at byte 0\)"):
        read_runs(p)
    assert time.perf_counter() - t0 < 1.0


def test_a_file_over_the_size_bound_is_refused_before_reading(tmp_path):
    p = tmp_path / "huge.csv"
    with open(p, "wb") as fh:
        fh.write(_GOOD.encode())
        fh.truncate(files.MAX_FILE_BYTES + 1)
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert _one_line(e.value) == f"{p}: 512 MiB is over the 512 MiB an input file may hold"


def test_a_gzip_bomb_is_refused_not_inflated(tmp_path):
    blank = b"\n" * (64 * 2**20)  # 64 MiB of blank lines in ~64 KB
    for name in ("bomb.csv", "bomb.jsonl", "bomb.json"):
        p = tmp_path / name
        p.write_bytes(gzip.compress(blank, compresslevel=9))
        t0 = time.perf_counter()
        with pytest.raises(InputError, match="binary file|not UTF-8"):
            read_runs(p)
        assert time.perf_counter() - t0 < 1.0


def test_a_line_over_the_line_bound_is_refused_with_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_LINE_CHARS", 1000)
    p = tmp_path / "r.csv"
    p.write_text(_GOOD + "A," + "1" * 2000 + ",i5\n")
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert e.value.line == 6 and "a line longer than" in _one_line(e.value)
    q = tmp_path / "r.jsonl"
    q.write_text(json.dumps({"config": "A", "tps": 300.0}) + "\n"
                 + json.dumps({"config": "B", "tps": 301.0, "note": "x" * 2000}) + "\n")
    with pytest.raises(InputError) as e:
        read_runs(q, configs=["A", "B"])
    assert e.value.line == 2 and "a line longer than" in str(e.value)


def test_a_utf16_export_says_how_to_convert(tmp_path):
    msg = ("a UTF-16 text file (byte-order mark FF FE); save it as UTF-8 (a spreadsheet's "
           "'CSV UTF-8', or iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8)")
    for name in ("r.csv", "r.json", "r.txt"):
        p = tmp_path / name
        p.write_bytes(_GOOD.encode("utf-16"))
        with pytest.raises(InputError) as e:
            read_runs(p)
        assert _one_line(e.value) == f"{p}: {msg}"
    plan = tmp_path / "plan.toml"
    plan.write_bytes('[plan]\nbaseline_tps = 300\n'.encode("utf-16"))
    with pytest.raises(InputError, match="a UTF-16 text file"):
        read_plan(plan)
    d = tmp_path / "results" / "cfg"
    d.mkdir(parents=True)
    (d / "r.json").write_bytes(json.dumps({"output_throughput": 300.0, "completed": 1,
                                           "duration": 2.0}).encode("utf-16-be"))
    with pytest.raises(InputError, match="binary file|UTF-16"):
        ingest(tmp_path / "results")


def test_an_integer_of_thousands_of_digits_is_one_line(tmp_path):
    big = "1" * 5000
    cases = {"r.json": '{"runs": [{"config": "A", "tps": %s}]}' % big,
             "r.jsonl": '{"config": "A", "tps": 300}\n{"config": "B", "tps": %s}\n' % big,
             "serve.json": '{"output_throughput": %s, "completed": 1, "duration": 2}' % big}
    for name, text in cases.items():
        p = tmp_path / name
        p.write_text(text)
        with pytest.raises(InputError) as e:
            read_runs(p)
        assert "an integer of thousands of digits" in _one_line(e.value)
    assert e.value.file == str(tmp_path / "serve.json")
    plan = tmp_path / "plan.toml"
    plan.write_text(f"[plan]\nbaseline_tps = {big}\n")
    with pytest.raises(InputError, match="an integer of thousands of digits"):
        read_plan(plan)


def test_ingest_output_cannot_run_as_a_spreadsheet_formula(tmp_path):
    names = ["=cmd|' /C calc'!A0", "+1+2", "-O2", "@SUM(A1)", "plain"]
    runs = [Run(config=n, tps=300.0 + k, instance=f"@host{k}", rep=k, line=k + 1)
            for k, n in enumerate(names)]
    runs.append(Run(config="plain", tps=299.0, instance="h", rep=-1, phase=WARMUP_PHASE,
                    line=9))
    out = tmp_path / "runs.csv"
    write_runs_csv(runs, out)
    rows = list(csv.reader(out.open()))[1:]
    assert [r[0] for r in rows] == ["'=cmd|' /C calc'!A0", "'+1+2", "'-O2", "'@SUM(A1)",
                                    "plain", "plain"]
    assert all(r[2].startswith("'@host") for r in rows[:5])
    assert rows[5][4] == "-1"  # a number stays a number
    back = read_runs(out)
    assert back.configs == ["'=cmd|' /C calc'!A0", "'+1+2", "'-O2", "'@SUM(A1)", "plain"]
    assert [r.tps for r in back.runs] == [r.tps for r in runs]


@pytest.mark.parametrize("name", ["runs.csv", "runs.json"])
def test_a_non_utf8_byte_is_named_by_its_line(tmp_path, name):
    # streamed (.csv) and whole-file (.json) reading both name the line of the bad byte
    from planner.io.runs import read_runs

    p = tmp_path / name
    body = (b"config,tps\nA,300\nA,30\xff1\nB,302\n" if name.endswith(".csv") else
            b'[{"config": "A", "tps": 300},\n {"config": "A\xff", "tps": 301}]\n')
    p.write_bytes(body)
    with pytest.raises(InputError, match="not UTF-8") as e:
        read_runs(p)
    assert e.value.line == (3 if name.endswith(".csv") else 2)
    assert p.read_bytes() == body
