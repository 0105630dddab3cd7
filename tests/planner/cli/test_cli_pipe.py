"""A closed stdout (``planner ... | head -1``) ends a command quietly: no traceback, no
error line, exit code 141 (128 + SIGPIPE)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
ARGS = ["verdict", str(RUNS), "--a", "fa2sw_precache_agentI",
        "--b", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2",
        "--run-group", "validity/free_ceiling_wallclock_realize/ab_out"]


def _closed_stdout(args):
    """Run the CLI with a stdout pipe whose reader is already gone (every write fails)."""
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-m", "planner", *args], stdout=w,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    finally:
        os.close(w)
    return proc


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--json"]], ids=["terminal", "json"])
def test_closed_stdout_is_quiet(extra):
    proc = _closed_stdout(ARGS + extra)
    assert proc.stderr == ""
    assert proc.returncode == 141


@pytest.mark.slow
def test_closed_stdout_typer_path(tmp_path):
    # `report` goes through typer (not the fast path)
    out = subprocess.run([sys.executable, "-m", "planner", *ARGS, "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    saved = tmp_path / "v.json"
    saved.write_text(out.stdout)
    proc = _closed_stdout(["report", str(saved)])
    assert proc.stderr == ""
    assert proc.returncode == 141


def test_only_the_planner_process_skips_the_final_collection(cli):
    """gc.freeze() after the command, in the planner process only: an in-process caller
    (this test runner) keeps its collector as it was."""
    import gc

    before = gc.get_freeze_count()
    code, _, err = cli("verdict", "--a", "308.49", "--b", "308.05")
    assert code == 0, err
    assert gc.get_freeze_count() == before
    src = ("import atexit, gc, sys\n"
           "atexit.register(lambda: print('frozen', gc.get_freeze_count(), file=sys.stderr))\n"
           "sys.argv = ['planner', 'verdict', '--a', '308.49', '--b', '308.05']\n"
           "from planner.cli import main\nmain()\n")
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert int(p.stderr.split("frozen")[-1].split()[0]) > 1000
