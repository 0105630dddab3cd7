"""Unbounded reading: a gzip bomb (of spaces or of blank lines), /dev/zero or a sparse file of
NULs as any input (runs table, capture, plan, prior file, cost file, curve file, saved
result for ``planner report``) is refused quickly with one line; the bounds are those of
:mod:`models.files` (stated in docs/inputs.md)."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest

import models.files as mf
from models.drafting.acceptance import load_acceptance
from models.drafting.capture import load_capture
from models.drafting.cost import load_cost_model
from models.errors import ModelInputError

ROOT = Path(__file__).resolve().parents[3]
QUICK = ["--a", "308.49", "--b", "308.05", "--platform", "hf-a10g-small"]


def _bomb(path: Path, piece: bytes, mib: int, head: bytes = b"") -> Path:
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write(head)
        block = piece * (1 << 20)
        for _ in range(mib):
            fh.write(block)
    return path


def _sparse(path: Path, mib: int = 200) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(mib * 2**20)  # NULs, none of them on disk
    return path


@pytest.fixture
def small_bounds(monkeypatch):
    """Bounds small enough for a test-sized bomb (the rule, not the number, is tested)."""
    monkeypatch.setattr(mf, "BLANK_RUN_BYTES", 4 * 2**20)
    monkeypatch.setattr(mf, "MAX_FILE_BYTES", 48 * 2**20)
    monkeypatch.setattr(mf, "MAX_LINE_CHARS", 16 * 2**20)


def _refused(fn, *words, seconds: float = 5.0):
    t0 = time.perf_counter()
    with pytest.raises(ModelInputError) as e:
        fn()
    assert time.perf_counter() - t0 < seconds
    line = e.value.one_line()
    assert "\n" not in line
    for w in words:
        assert w in line, line
    return line


@pytest.mark.parametrize("piece", [b" ", b"\n", b"\r\n", b" \t\n"])
def test_a_capture_gzip_bomb_of_blank_space_is_refused(tmp_path, small_bounds, piece):
    p = _bomb(tmp_path / "bomb.jsonl.gz", piece, 40)
    _refused(lambda: load_capture(p), "nothing but spaces and blank lines", "gzip bomb")
    q = _bomb(tmp_path / "bomb2.jsonl.gz", piece, 40,  # a good record first
              head=b'{"id": 1, "prompt_token_ids": [1, 2], "completion_token_ids": [3]}\n')
    _refused(lambda: load_capture(q), "nothing but spaces and blank lines")


def test_a_capture_over_the_decompressed_bound(tmp_path, small_bounds):
    rec = b'{"id": 1, "prompt_token_ids": [1, 2, 3], "completion_token_ids": [4, 5]}\n'
    p = tmp_path / "big.jsonl.gz"
    with gzip.open(p, "wb", compresslevel=1) as fh:
        block = rec * ((1 << 20) // len(rec))
        for _ in range(60):
            fh.write(block)
    _refused(lambda: load_capture(p), "more than the 48 MiB", "decompressed")


def test_a_capture_line_over_the_line_bound(tmp_path, small_bounds):
    p = _bomb(tmp_path / "line.jsonl.gz", b"1,", 20, head=b'{"id": 1, "prompt_token_ids": [')
    _refused(lambda: load_capture(p), "a line longer than 16 MiB")


@pytest.mark.parametrize("make", ["dev-zero", "sparse", "sparse-gz"])
def test_a_capture_of_nuls_is_refused_at_once(tmp_path, make):
    if make == "dev-zero":
        p = Path("/dev/zero")
    elif make == "sparse":
        p = _sparse(tmp_path / "zeros.jsonl")
    else:
        p = _bomb(tmp_path / "zeros.jsonl.gz", b"\0", 8)
    _refused(lambda: load_capture(p), "a binary file (a NUL byte at byte 0", seconds=2.0)


@pytest.mark.parametrize("make", ["dev-zero", "sparse"])
def test_model_layer_json_files_are_bounded(tmp_path, make):
    p = Path("/dev/zero") if make == "dev-zero" else _sparse(tmp_path / "x.json")
    _refused(lambda: load_cost_model("F", p), "a binary file", seconds=2.0)
    _refused(lambda: load_acceptance(p), "a binary file", seconds=2.0)


def test_a_file_over_the_bound_is_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(mf, "MAX_FILE_BYTES", 2**20)
    p = tmp_path / "cost.json"
    p.write_text(json.dumps({"verify_base_ms": 5.0}) + " " * (2 * 2**20))
    _refused(lambda: load_cost_model("F", p), "over the 1 MiB")
    with open("/dev/zero", "rb"):  # a device is read up to the bound, then refused
        pass
    _refused(lambda: mf.read_bytes("/dev/zero", "/dev/zero", text=False), "more than the 1 MiB")


@pytest.mark.parametrize("make", ["dev-zero", "sparse"])
def test_every_command_door_refuses_nuls_in_one_line(cli, tmp_path, make):
    def src(suffix):
        return "/dev/zero" if make == "dev-zero" else _sparse(tmp_path / f"z{suffix}", 64)

    doors = [["verdict", src(".csv"), "--a", "A", "--b", "B"],
             ["calibrate", src(".csv")],
             ["repeats", "--runs", src(".csv"), "--a", "A", "--b", "B"],
             ["budget", src(".toml")],
             ["draft", src(".jsonl")],
             ["draft", "--cost-file", src(".json"), "-p", "pld"],
             ["draft", "--curve", src(".json"), "-p", "mtp"],
             ["verdict", *QUICK, "--prior", src(".json")],
             ["report", src(".json")],
             ["shift", "--public-tps", "300", "--private-capture", src(".jsonl")]]
    for args in doors:
        t0 = time.perf_counter()
        code, _, err = cli(*args)
        assert code == 2 and err.count("\n") == 1, (args, err)
        assert "binary file" in err or "NUL" in err, (args, err)
        assert time.perf_counter() - t0 < 20, args


def test_a_plan_projection_file_of_nuls(cli, tmp_path):
    proj = _sparse(tmp_path / "draft.json", 64)
    plan = tmp_path / "plan.toml"
    plan.write_text('[plan]\nbaseline_tps = 307\n[budget]\ntotal_usd = 50\n'
                    '[[comparison]]\nname = "x"\nbaseline = "a"\ncandidate = "b"\n'
                    f'projection = "{proj}"\npolicy = "pld"\n')
    code, _, err = cli("budget", plan)
    assert code == 2 and err.count("\n") == 1 and "binary file" in err, err


def test_the_docs_state_the_bounds():
    text = (ROOT / "docs" / "inputs.md").read_text()
    for bound in (mf.MAX_FILE_BYTES, mf.MAX_LINE_CHARS, mf.BLANK_RUN_BYTES):
        assert f"{bound // 2**20} MiB" in text


def test_a_real_sized_bomb_through_the_command_line(cli, tmp_path):
    """256 MiB of blank lines in ~250 KB, at the shipped bounds: refused at the first 64 MiB."""
    p = _bomb(tmp_path / "bomb.jsonl.gz", b"\n", 256)
    assert p.stat().st_size < 2**20
    t0 = time.perf_counter()
    code, _, err = cli("draft", p, "-p", "pld")
    assert code == 2 and err.count("\n") == 1 and "64 MiB of nothing but" in err, err
    assert time.perf_counter() - t0 < 15
