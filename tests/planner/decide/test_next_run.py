"""planner next: the actions, agreement with ``planner repeats --runs`` (one sizing rule), and
the ``--watch`` loop stopping when the verdict settles."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from planner.cli import main
from planner.decide import comparison
from planner.decide.comparison import Selection
from planner.decide.next_run import (WATCH_BUDGET, WATCH_DECIDED, WATCH_TIMEOUT, advise,
                                     one_more_run, spent, watch)
from planner.decide.costs import cost_model
from planner.io.runs import RunsTable, read_runs

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
G = "validity/served_stack_identity_ablation/measured"
A, B = f"{G}:S0", f"{G}:S1"


def _run(capsys, argv):
    try:
        main(argv)
    except SystemExit as e:
        assert e.code in (0, None)
    return json.loads(capsys.readouterr().out)


def test_next_agrees_with_repeats_runs(capsys):
    """The same data, seed and settings: next's designs are repeats --runs' rows."""
    nxt = _run(capsys, ["next", str(RUNS), "--a", A, "--b", B, "--sims", "200", "--json"])
    rep = _run(capsys, ["repeats", "--runs", str(RUNS), "--a", A, "--b", B, "--sims", "200",
                        "--max-runs", "100", "--design", "separate,paired", "--json"])
    assert nxt["current"]["label"] == rep["existing"]["label"] == "undecided"
    rec = rep["recommended"]
    assert nxt["repeats"]["design"] == rec["design"]
    assert nxt["repeats"]["runs_per_arm"] == rec["runs_per_arm"]
    assert nxt["repeats"]["assurance"] == rec["assurance"]
    flagged = [x for x in nxt["actions"] if x.get("recommended_by_repeats")]
    assert len(flagged) == 1 and flagged[0]["runs_per_arm"] == rec["runs_per_arm"]
    # every design row of repeats is an action with its P(right) and cost
    rows = {(r["design"], r["runs_per_arm"]): r for r in rep["designs"]
            if r["design"] in ("separate", "paired")}
    acts = {(x["action"], x["runs_per_arm"]): x for x in nxt["actions"]
            if x["source"] == "repeats"}
    assert rows.keys() == acts.keys()
    for k, r in rows.items():
        assert acts[k]["p_right"] == r["assurance"]
        assert acts[k]["p_decided"] == pytest.approx(1 - r["labels"]["undecided"])
    # cheapest expected cost first; stop (undecided) last
    costs = [x["expected_cost"] for x in nxt["actions"] if x["expected_cost"] is not None]
    assert costs == sorted(costs)
    assert nxt["actions"][-1]["action"] == "stop"
    kinds = {x["action"] for x in nxt["actions"]}
    assert {"one_more_a", "one_more_b", "separate", "paired", "stop"} <= kinds


def test_next_json_is_byte_identical(capsys):
    argv = ["next", str(RUNS), "--a", A, "--b", B, "--sims", "100", "--json"]
    main(argv)
    one = capsys.readouterr().out
    main(argv)
    assert capsys.readouterr().out == one


def test_decided_comparison_says_stop():
    table = read_runs(RUNS)
    comp = comparison.from_table(table, "mtp_k_sweep_speed/runs:k11",
                                 "mtp_k_sweep_speed/runs:k13")
    adv = advise(comp, sims=100).to_dict()
    assert adv["current"]["decided"]
    assert adv["recommended"]["action"] == "stop"
    assert adv["actions"][0]["expected_cost"] == 0.0


def test_one_more_run_preposterior_is_a_probability():
    table = read_runs(RUNS)
    comp = comparison.from_table(table, A, B)
    from models.stats.tps_exact import fit_exact

    post = fit_exact(comp.data(), comp.prior)
    out = one_more_run(post, comp.data(), 1, np.log1p(0.001), sims=200, seed=0)
    assert 0.0 <= out["p_decided"] <= 1.0
    assert sum(out["labels"].values()) == pytest.approx(1.0)
    again = one_more_run(post, comp.data(), 1, np.log1p(0.001), sims=200, seed=0)
    assert again == out


def test_spent_prices_new_allocations_and_runs():
    from planner.io.rows import Run

    cm = cost_model("hf-a10g-small")
    runs = [Run(config="A", tps=1.0, instance="j1"), Run(config="B", tps=1.0, instance="j2"),
            Run(config="A", tps=1.0, instance="old")]
    n, usd, gh = spent(runs, {"old"}, cm)
    assert n == 3
    two = cm.cost([1, 1])
    assert usd >= two["cost_usd"] and gh > two["gpu_hours"]


# ---- the watch loop ---------------------------------------------------------------------


def _write(folder: Path, config: str, k: int, tps: float) -> None:
    d = folder / config / f"run{k}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "summary.json").write_text(json.dumps({"tps": tps, "job_id": f"{config}-{k}",
                                                "completed": True}))


class _Clock:
    """A fake clock whose sleep writes the next run into the folder (the harness landing
    one result per poll)."""

    def __init__(self, folder, pending):
        self.t = 0.0
        self.folder = folder
        self.pending = list(pending)
        self.sleeps = 0

    def clock(self):
        return self.t

    def sleep(self, s):
        self.t += s
        self.sleeps += 1
        if self.pending:
            _write(self.folder, *self.pending.pop(0))


def _harness_reader(folder):
    from planner.io.ingest import ingest
    from planner.errors import InputError

    def read():
        try:
            return ingest(folder)[0]
        except InputError as exc:
            if "no benchmark result files" in exc.message:
                return []
            raise
    return read


def _evaluate(rows):
    comp = comparison.from_table(RunsTable(rows, "<watch>"), "A", "B")
    return advise(comp, sims=100, seed=0)


def test_watch_stops_when_the_verdict_settles_and_agrees_with_repeats(tmp_path):
    rng = np.random.default_rng(5)
    runs = []
    for k in range(12):  # B 3 % faster than A, 0.4 % run-to-run noise
        runs.append(("A", k, float(300 * np.exp(rng.normal(0, 0.004)))))
        runs.append(("B", k, float(309 * np.exp(rng.normal(0, 0.004)))))
    # two runs already there, the rest land one per poll
    _write(tmp_path, *runs[0])
    _write(tmp_path, *runs[1])
    clk = _Clock(tmp_path, runs[2:])
    lines = []
    rc = watch(_harness_reader(tmp_path), _evaluate, a="A", b="B", interval=5.0,
               timeout=3600, max_runs=None, max_usd=None, cost=cost_model("hf-a10g-small"),
               out=lines.append, clock=clk.clock, sleep=clk.sleep)
    assert rc == WATCH_DECIDED, lines
    assert lines[-1].startswith("decided after")
    landed = 2 + clk.sleeps
    assert len(lines) == clk.sleeps + 2   # one line per new run, the first poll, the stop
    assert "B better" in lines[-2]
    assert landed < len(runs)             # it stopped before the writer ran out
    # the stopping point is the verdict on the runs in the folder
    rows = _harness_reader(tmp_path)()
    from planner.decide.verdict import judge

    comp = comparison.from_table(RunsTable(rows, "<f>"), "A", "B")
    assert judge(comp).rule_label == "B better"
    # one run earlier it was open, and the advice then was repeats --runs' own plan
    (tmp_path / runs[landed - 1][0] / f"run{runs[landed - 1][1]}" / "summary.json").unlink()
    rows = _harness_reader(tmp_path)()
    comp = comparison.from_table(RunsTable(rows, "<f>"), "A", "B")
    adv = advise(comp, sims=100, seed=0).to_dict()
    assert not adv["current"]["decided"]
    from planner.decide.repeats import plan_from
    from planner.decide.settle import settle_designs

    plan = plan_from(comp, rope="0.1%", sims=100, seed=0, designs=settle_designs(comp),
                     max_runs=100, cost=cost_model("hf-a10g-small"),
                     search_beyond_cap=False).to_dict()
    rec = plan["recommended"]
    if rec is None:
        assert adv["repeats"] is None
    else:
        assert adv["repeats"]["runs_per_arm"] == rec["runs_per_arm"]
        assert adv["repeats"]["design"] == rec["design"]


def test_watch_exits_3_when_the_budget_is_spent(tmp_path):
    rng = np.random.default_rng(1)
    runs = [(c, k, float(300 * np.exp(rng.normal(0, 0.004)))) for k in range(10)
            for c in ("A", "B")]            # A/A: no decision in a few runs
    _write(tmp_path, *runs[0])
    _write(tmp_path, *runs[1])
    clk = _Clock(tmp_path, runs[2:])
    lines = []
    rc = watch(_harness_reader(tmp_path), _evaluate, a="A", b="B", interval=1.0,
               timeout=None, max_runs=3, max_usd=None, cost=cost_model("hf-a10g-small"),
               out=lines.append, clock=clk.clock, sleep=clk.sleep)
    assert rc == WATCH_BUDGET
    assert lines[-1].startswith("budget spent undecided: 3 new runs")


def test_watch_times_out_on_an_empty_folder(tmp_path):
    clk = _Clock(tmp_path, [])
    lines = []
    rc = watch(_harness_reader(tmp_path), _evaluate, a="A", b="B", interval=10.0,
               timeout=30.0, max_runs=None, max_usd=None, cost=cost_model("hf-a10g-small"),
               out=lines.append, clock=clk.clock, sleep=clk.sleep)
    assert rc == WATCH_TIMEOUT and clk.sleeps == 3
    assert lines == ["timeout after 30 s undecided"]


def test_watch_keeps_a_timeout_shorter_than_its_interval(tmp_path):
    # the last sleep is cut to the time left: --timeout 1 with the 10 s default polls
    # stopped after 10 s before
    clk = _Clock(tmp_path, [])
    rc = watch(_harness_reader(tmp_path), _evaluate, a="A", b="B", interval=10.0,
               timeout=25.0, max_runs=None, max_usd=None, cost=cost_model("hf-a10g-small"),
               out=lambda _: None, clock=clk.clock, sleep=clk.sleep)
    assert rc == WATCH_TIMEOUT and clk.t == 25.0 and clk.sleeps == 3


@pytest.mark.parametrize("args,field", [(["--interval", "1e12"], "--interval"),
                                        (["--timeout", "1e9"], "--timeout"),
                                        (["--max-usd", "1e400"], "--max-usd")])
def test_watch_options_have_plausible_ranges(tmp_path, cli, args, field):
    code, _, err = cli("next", "--a", "A", "--b", "B", "--watch", str(tmp_path), *args)
    assert code == 2 and f"field '{field}'" in err and "Traceback" not in err


def test_watch_cli_on_a_prefilled_folder_exits_0(tmp_path, capsys):
    rng = np.random.default_rng(2)
    for k in range(6):
        _write(tmp_path, "A", k, float(300 * np.exp(rng.normal(0, 0.003))))
        _write(tmp_path, "B", k, float(315 * np.exp(rng.normal(0, 0.003))))
    main(["next", "--watch", str(tmp_path), "--a", "A", "--b", "B", "--interval",
          "0.01", "--timeout", "5", "--sims", "100"])   # exit 0: main returns
    out = capsys.readouterr().out
    assert "B better" in out and "decided after 0 new runs" in out


def test_selection_is_the_verdicts():
    table = read_runs(RUNS)
    comp = comparison.from_table(table, A, B, selection=Selection(run_group=G))
    adv = advise(comp, sims=100).to_dict()
    assert adv["a"] == A and adv["b"] == B


def test_next_for_a_ranking_advises_on_the_best_and_its_closest_rival(capsys):
    g = "serve_config_sweep"
    cfgs = [f"{g}:control", f"{g}:maxlen3072", f"{g}:cgsizes_1_8", f"{g}:batched2048"]
    out = _run(capsys, ["next", str(RUNS), "--run-group", g, "--configs", ",".join(cfgs),
                        "--sims", "100", "--json"])
    assert out["b"] == f"{g}:control"          # the best (P(fastest) 0.66)
    assert out["a"] == f"{g}:maxlen3072"       # the closest contender
    assert out["configs"][0] == f"{g}:control"
    assert not out["current"]["decided"]
