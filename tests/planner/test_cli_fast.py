"""``planner repeats`` and ``planner budget`` called directly (issue 9): typer's JSON.

:func:`planner.cli._fast_invoke` skips typer's parser (a pydantic adapter per option,
~0.15-0.2 s of a process) when the arguments are plain. Each argument list below runs both
ways; the whole ``--json`` output, recorded inputs included, must be the same, and the fast
path must have been the one taken. A missing required argument is left to typer.
"""

import contextlib
import io
import json
from pathlib import Path

import pytest

import planner.cli as cli

ROOT = Path(__file__).resolve().parents[2]
RUNS = ["--runs", "examples/runs/tps_runs.csv", "--a", "fa2sw_precache_agentI", "--b",
        "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2", "--run-group",
        "validity/free_ceiling_wallclock_realize/ab_out"]


def _run(args, monkeypatch, fast: bool) -> str:
    monkeypatch.setattr(cli, "_FAST_COMMANDS", (args[0],) if fast else ())
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(args)
    return out.getvalue()


@pytest.mark.parametrize("args", [
    ["repeats", "--delta", "0.44", "--platform", "hf-a10g-small", "--sims", "200"],
    ["repeats", "--delta", "0.3", "--relative", "--cv", "0.4%", "--sims", "200",
     "--max-runs", "12", "--seed=3"],
    ["repeats", *RUNS, "--sims", "200", "--lower-is-better"],
    ["budget", "examples/plan.toml", "--sims", "200"],
])
def test_direct_invocation_gives_the_typer_json(args, monkeypatch):
    args = [*args, "--json"]
    slow = _run(args, monkeypatch, fast=False)
    taken = []
    real = cli._fast_invoke
    monkeypatch.setattr(cli, "_fast_invoke", lambda a: taken.append(real(a)) or taken[-1])
    fast = _run(args, monkeypatch, fast=True)
    assert taken == [True]
    assert fast == slow
    assert json.loads(fast)["inputs"]["options"]


@pytest.mark.parametrize("args", [
    ["budget"], ["budget", "--sims", "200"], ["budget", "a.toml", "b.toml"],
    ["repeats", "--delta", "-0.4"], ["repeats", "--cv", "0.4%", "--cv", "0.5%"],
])
def test_anything_else_is_left_to_typer(args):
    assert cli._fast_invoke(args) is False
