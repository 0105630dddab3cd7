"""``planner draft``, ``repeats`` and ``budget`` called directly (issue 9): typer's JSON.

:func:`planner.cli._fast_invoke` skips typer's parser (a pydantic adapter per option,
~0.15-0.2 s of a process) when the arguments are plain. Each argument list below runs both
ways; the whole ``--json`` output, recorded inputs included, must be the same, and the fast
path must have been the one taken. A missing required argument is left to typer.
"""

import json
from pathlib import Path

import pytest

import planner.cli as cli

ROOT = Path(__file__).resolve().parents[3]
RUNS = ["--runs", "examples/runs/tps_runs.csv", "--a", "fa2sw_precache_agentI", "--b",
        "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2", "--run-group",
        "validity/free_ceiling_wallclock_realize/ab_out"]
BF16 = "examples/captures/ar_reference_bf16.jsonl.gz"
SMALL = ["--bootstrap", "200", "--mc-reps", "20"]


@pytest.mark.parametrize("args", [
    ["draft", *SMALL],
    ["draft", BF16, "-p", "pld", "--policy", "mtp", "--n", "3", "--depth", "16",
     "--baseline-tps", "120.5", "--sigma-tps", "1.2", *SMALL],
    ["draft", "--policy=suffix", BF16, "--sync-factor", "1.1", "--stop-at-eos", "--convention",
     "vllm", "--seed=7", *SMALL],
    ["draft", "-p", "mtp", "--k", "3", "--curve", "0.7,0.5,0.3", "--drafter-ms", ".5",
     "--minutes-per-run", "9", "--price-per-hour", "1e0", "--platform", "hf-a10g-small", *SMALL],
    ["repeats", "--delta", "0.44", "--platform", "hf-a10g-small", "--sims", "200"],
    ["repeats", "--delta", "0.3", "--relative", "--cv", "0.4%", "--sims", "200",
     "--max-runs", "12", "--seed=3"],
    ["repeats", *RUNS, "--sims", "200", "--lower-is-better"],
    ["budget", "examples/plan.toml", "--sims", "200"],
])
def test_direct_invocation_gives_the_typer_json(cli_output, args, monkeypatch):
    args = [*args, "--json"]
    slow = cli_output(args, fast=False)
    taken = []
    real = cli._fast_invoke
    monkeypatch.setattr(cli, "_fast_invoke", lambda a: taken.append(real(a)) or taken[-1])
    fast = cli_output(args, fast=True)
    assert taken == [True]
    assert fast == slow
    assert json.loads(fast)["inputs"]["options"]


@pytest.mark.parametrize("args", [
    ["budget"], ["budget", "--sims", "200"], ["budget", "a.toml", "b.toml"],
    ["repeats", "--delta", "-0.4"], ["repeats", "--cv", "0.4%", "--cv", "0.5%"],
])
def test_anything_else_is_left_to_typer(args):
    assert cli._fast_invoke(args) is False
