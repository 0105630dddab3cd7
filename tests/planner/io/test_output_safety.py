"""Data loss: no output of any command overwrites an input (same path, symlink or hard link:
compared by device and inode), a file of another kind (by its suffix and its content), or a
folder; every output is written atomically (temp file + fsync + rename), so a full disk
leaves the old file as it was, one line, exit code 2, no partial or temporary file."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from planner.errors import InputError
from planner.io import files
from planner.report.output import guard_outputs

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
PLAN = ROOT / "examples" / "plan.toml"
QUICK = ["verdict", "--a", "308.49", "--b", "308.05", "--platform", "hf-a10g-small"]
CAL = ["--platform", "local-a10g", "--metric", "decode_wall", "--workload", "128x512"]
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def _one_error(code, err, *words):
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err


@pytest.fixture
def work(tmp_path):
    runs = tmp_path / "runs.csv"
    shutil.copy(RUNS, runs)
    plan = tmp_path / "plan.toml"
    shutil.copy(PLAN, plan)
    return tmp_path, runs, plan


def test_a_hard_link_to_an_input_is_never_written(cli, work):
    d, runs, plan = work
    before = runs.read_bytes()
    for opt, name in (("--md", "r.md"), ("--html", "r.html")):
        link = d / name
        os.link(runs, link)
        code, _, err = cli("verdict", runs, "--a", "fa2sw_precache_agentI", "--b",
                           "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2", opt, link)
        _one_error(code, err, "hard link", opt)
        link.unlink()
    for kind, name in (("calibrate", "prior.json"), ("calibrate-md", "cal.md")):
        link = d / name
        os.link(runs, link)
        opt = "-o" if kind == "calibrate" else "--md"
        code, _, err = cli("calibrate", runs, *CAL, opt, link)
        _one_error(code, err, "hard link")
        link.unlink()
    link = d / "plan.md"
    os.link(plan, link)
    code, _, err = cli("budget", plan, "--md", link)
    _one_error(code, err, "hard link")
    assert runs.read_bytes() == before and plan.read_bytes() == PLAN.read_bytes()


def test_ingest_output_hard_linked_into_its_input_folder(cli, tmp_path):
    res = tmp_path / "results" / "cfg"
    res.mkdir(parents=True)
    src = res / "r.json"
    src.write_text(json.dumps({"output_throughput": 300.0, "completed": 10, "duration": 2.0}))
    before = src.read_bytes()
    out = tmp_path / "runs.csv"
    os.link(src, out)
    code, _, err = cli("ingest", tmp_path / "results", "-o", out)
    _one_error(code, err, "hard link")
    assert src.read_bytes() == before


def test_guard_compares_file_identity_not_only_paths(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("config,tps\n")
    b = tmp_path / "elsewhere" / "b.md"
    b.parent.mkdir()
    os.link(a, b)
    with pytest.raises(InputError, match="hard link"):
        guard_outputs([("--md", b)], [a])
    c = tmp_path / "c.md"
    os.symlink(a, c)
    with pytest.raises(InputError, match="over an input"):
        guard_outputs([("--md", c)], [a])
    x, y = tmp_path / "x.html", tmp_path / "y.html"
    x.write_text("<!doctype html>")
    os.link(x, y)
    with pytest.raises(InputError, match="written twice"):
        guard_outputs([("--md", None), ("--html", x), ("--md (its plot)", None),
                       ("--html", y)], [])


@pytest.mark.parametrize("opt,name,content,what", [
    ("--md", "photo.png", PNG, "is not a .md file"),
    ("--md", "notes.md", PNG, "holds a PNG plot"),
    ("--md", "prev.md", b'{"schema": "spec-planner/verdict/1"}', "saved 'verdict' result"),
    ("--html", "page.html", b"config,tps\nA,1\n", "holds text of another kind"),
    ("--html", "data.json", b"{}", "is not a .html file"),
])
def test_a_report_never_replaces_a_file_of_another_kind(cli, tmp_path, opt, name, content,
                                                       what):
    target = tmp_path / name
    target.write_bytes(content)
    code, _, err = cli(*QUICK, opt, target)
    _one_error(code, err, what, "refusing to overwrite")
    assert target.read_bytes() == content


def test_calibrate_output_never_replaces_a_plan_or_another_result(cli, work):
    d, runs, plan = work
    code, _, err = cli("calibrate", runs, *CAL, "-o", plan)
    _one_error(code, err, "is not a .json file")
    saved = d / "verdict.json"
    saved.write_text('{"schema": "spec-planner/verdict/1", "command": "verdict"}')
    code, _, err = cli("calibrate", runs, *CAL, "-o", saved)
    _one_error(code, err, "saved 'verdict' result")
    assert plan.read_bytes() == PLAN.read_bytes()
    prior = d / "prior.json"
    for _ in range(2):  # its own output it replaces
        code, _, err = cli("calibrate", runs, *CAL, "-o", prior)
        assert code == 0, err
    assert json.loads(prior.read_text())["schema"] == "spec-planner/noise-prior/1"


def test_ingest_output_never_replaces_a_file_of_another_kind(cli, tmp_path):
    res = tmp_path / "results" / "cfg"
    res.mkdir(parents=True)
    (res / "r.json").write_text(json.dumps({"output_throughput": 300.0, "completed": 10,
                                            "duration": 2.0}))
    for name, content, what in (("plan.toml", b"[plan]\n", "is not a .csv file"),
                                ("runs.csv", PNG, "holds a PNG plot"),
                                ("runs.csv", b'{"runs": []}', "holds a JSON document")):
        out = tmp_path / name
        out.write_bytes(content)
        code, _, err = cli("ingest", tmp_path / "results", "-o", out)
        _one_error(code, err, what)
        assert out.read_bytes() == content


@pytest.mark.parametrize("spelling", ["newdir/", "newdir/.", "./", ".", "existing",
                                      "existing/"])
def test_a_folder_is_never_written_as_a_file(cli, tmp_path, monkeypatch, spelling):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "existing").mkdir()
    for opt in ("--md", "--html"):
        code, _, err = cli(*QUICK, opt, spelling)
        _one_error(code, err, opt)
        assert "folder" in err or "directory" in err, err
    code, _, err = cli(*QUICK, f"--md={spelling}")
    _one_error(code, err, "--md")
    assert not (tmp_path / "newdir").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"]


def _disk_full(monkeypatch, after: int = 100):
    """os.write as seen by write_atomic: writes ``after`` bytes, then ENOSPC."""
    state = {"left": after}

    def write(fd, data):
        if state["left"] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = min(len(data), state["left"])
        state["left"] -= n
        return os.write(fd, bytes(data[:n]))

    monkeypatch.setattr(files, "_write", write)


def test_a_full_disk_leaves_every_old_output_intact(cli, work, monkeypatch):
    d, runs, plan = work
    md, html, prior = d / "r.md", d / "r.html", d / "prior.json"
    assert cli(*QUICK, "--md", md, "--html", html)[0] == 0
    assert cli("calibrate", runs, *CAL, "-o", prior)[0] == 0
    res = d / "results" / "cfg"
    res.mkdir(parents=True)
    (res / "r.json").write_text(json.dumps({"output_throughput": 300.0, "completed": 10,
                                            "duration": 2.0}))
    table = d / "ingested.csv"
    assert cli("ingest", d / "results", "-o", table)[0] == 0
    old = {p: p.read_bytes() for p in (md, html, prior, table)}
    _disk_full(monkeypatch)
    for args in ([*QUICK, "--seed", "1", "--md", md], [*QUICK, "--seed", "1", "--html", html],
                 ["calibrate", runs, *CAL, "-o", prior],
                 ["ingest", d / "results", "-o", table]):
        code, _, err = cli(*args)
        _one_error(code, err, "cannot write it", "No space left on device")
    assert {p: p.read_bytes() for p in old} == old
    new = d / "new.md"
    code, _, err = cli(*QUICK, "--md", new)
    _one_error(code, err, "No space left on device")
    assert not new.exists()  # no 0-byte or partial file
    leftovers = [p.name for p in d.rglob("*") if p.name.startswith(".") or "tmp" in p.name]
    assert leftovers == []


def test_write_atomic_fsync_failure_and_mode(tmp_path, monkeypatch):
    p = tmp_path / "r.md"
    p.write_text("old")
    p.chmod(0o640)
    files.write_atomic(p, "new")
    assert p.read_text() == "new" and (p.stat().st_mode & 0o777) == 0o640

    def fsync(fd):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(files, "_fsync", fsync)
    with pytest.raises(InputError, match="Input/output error"):
        files.write_atomic(p, "newer", field="--md")
    assert p.read_text() == "new" and list(tmp_path.iterdir()) == [p]
    link = tmp_path / "link.md"
    os.symlink(p, link)
    monkeypatch.undo()
    files.write_atomic(link, "through")  # a symlinked report: its target replaced
    assert link.is_symlink() and p.read_text() == "through"


def test_atomic_output_for_writers_that_need_a_path(tmp_path):
    p = tmp_path / "fit.nc"
    p.write_bytes(b"CDF\x01old")
    with pytest.raises(InputError, match="cannot write it"):
        with files.atomic_output(p, field="--idata") as tmp:
            Path(tmp).write_bytes(b"CDF\x01partial")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert p.read_bytes() == b"CDF\x01old" and list(tmp_path.iterdir()) == [p]
    with files.atomic_output(p) as tmp:
        Path(tmp).write_bytes(b"CDF\x01new")
    assert p.read_bytes() == b"CDF\x01new" and list(tmp_path.iterdir()) == [p]


def test_a_stream_is_written_in_place_never_replaced(cli, tmp_path):
    import threading

    code, _, err = cli(*QUICK, "--md", "/dev/null", "--html", "/dev/null")
    assert code == 0, err
    assert Path("/dev/null").is_char_device()
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, _, err = cli(*QUICK, "--md", fifo)
    reader.join(timeout=60)
    assert code == 0, err
    assert got and got[0].startswith(b"# Verdict") and fifo.is_fifo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.md"]
