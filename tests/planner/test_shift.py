"""planner shift: evidence validation, result round trip, CLI errors."""

import json
import subprocess
import sys

import pytest

from models.drafting.shift import validate_pairs
from planner.shift import ShiftResult, run_shift


def test_proxy_pairs_leave_one_out_coverage():
    v = [r for r in validate_pairs(seed=0) if r["kind"] == "proxy"]
    assert len(v) == 7
    assert sum(r["covered"] for r in v) == 6  # the 8-prompt smoke pair (-25 %) misses
    off = [r for r in validate_pairs(seed=0) if r["kind"] == "official"]
    assert {r["mode"]: r["covered"] for r in off} == {"proxy": False, "official": True}


def test_official_evidence_centres_on_official_drop():
    r = run_shift(481.53, seed=0, n_draws=20000)
    assert r.ratio["point"] == pytest.approx(460.85 / 481.53, abs=0.005)
    assert 0.3 < r.p_drop < 0.6
    d = r.to_dict()
    assert d["schema"] == "spec-planner/shift/1"
    assert ShiftResult.from_dict(json.loads(json.dumps(d))).to_dict() == d


def test_proxy_evidence_is_harsher():
    assert run_shift(400.0, evidence="proxy", seed=0).p_drop > 0.9


def test_bad_input():
    from planner.errors import InputError
    with pytest.raises(InputError):
        run_shift(None)
    with pytest.raises(InputError):
        run_shift(400.0, x_pct=120)


def test_cli_exit_2_on_bad_score():
    p = subprocess.run([sys.executable, "-m", "planner", "shift", "--public-tps", "-1"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "public-tps" in p.stderr


@pytest.mark.parametrize("args,option", [
    (["--public-tps", "481", "--draws", "1000000000"], "--draws"),
    (["--public-tps", "1e308"], "--public-tps"),
    (["--run", "480", "--run", "nan"], "--run"),
])
def test_cli_out_of_range_names_the_option(args, option):
    p = subprocess.run([sys.executable, "-m", "planner", "shift", *args],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().count("\n") == 0 and f"field '{option}'" in p.stderr, p.stderr


def test_cli_both_scores_names_run_not_runs():
    p = subprocess.run([sys.executable, "-m", "planner", "shift", "--public-tps", "481",
                        "--run", "480"], capture_output=True, text=True)
    assert p.returncode == 2 and "--run " in p.stderr and "--runs" not in p.stderr
