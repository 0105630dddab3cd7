"""planner rank: one joint fit of N configs, P(fastest), the contenders, and agreement with
the pairwise verdicts on the shipped sweeps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from planner.decide import comparison
from planner.decide.comparison import Selection
from planner.decide.rank import from_table, is_decisive, p_fastest, rank
from planner.decide.verdict import judge
from planner.errors import InputError
from planner.io.rows import Run
from planner.io.runs import RunsTable, read_runs

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
#: The shipped MTP K sweep (configs that differ by the draft depth K within one run group),
#: and the batch-invariant K sweep.
SWEEPS = ("mtp_k_sweep_speed/runs", "bi0_k_sweep")


@pytest.fixture(scope="module")
def table():
    return read_runs(RUNS)


def _pairwise_best(table, group):
    """The config every pairwise verdict calls better than each other config (or None)."""
    configs = table.filter(run_group=group).measured().configs
    for c in configs:
        ok = True
        for o in configs:
            if o == c:
                continue
            comp = comparison.from_table(table, o, c, selection=Selection(run_group=group))
            if judge(comp, rope="0.1%").rule_label != "B better":
                ok = False
                break
        if ok:
            return c
    return None


@pytest.mark.parametrize("group", SWEEPS)
def test_rank_names_the_best_k_the_pairwise_verdicts_imply(table, group):
    fld = from_table(table, None, selection=Selection(run_group=group))
    r = rank(fld, rope="0.1%")
    best = _pairwise_best(table, group)
    assert best is not None
    assert r.best == best
    assert r.configs[0]["config"] == best
    assert r.label == "fastest"
    assert r.contenders == [best]
    # every other config: the verdict of (it, best) is "B better" and rank says not tied
    for row in r.configs[1:]:
        assert not row["tied_with_best"]
        assert row["diff_pct"]["hdi_high"] < 0
    assert sum(x["p_fastest"] for x in r.configs) == pytest.approx(1.0)
    if group == "mtp_k_sweep_speed/runs":
        assert best.endswith(":k13")


def test_rank_row_fields_and_seeded_json_is_byte_identical(table):
    from planner.report.output import to_json

    fld = from_table(table, None, selection=Selection(run_group="mtp_k_sweep_speed/runs"))
    a = to_json(rank(fld, seed=3).to_dict())
    fld = from_table(table, None, selection=Selection(run_group="mtp_k_sweep_speed/runs"))
    b = to_json(rank(fld, seed=3).to_dict())
    assert a == b
    d = json.loads(a)
    assert d["schema"] == "spec-planner/rank/1"
    for row in d["configs"]:
        for k in ("config", "mean", "hdi_low", "hdi_high", "p_fastest", "diff_pct"):
            assert k in row
        assert row["hdi_low"] <= row["mean"] <= row["hdi_high"]


def _runs(levels, n=3, sd=0.003, seed=0, instance="gpu0"):
    rng = np.random.default_rng(seed)
    return [Run(config=f"c{k}", tps=float(lv * np.exp(rng.normal(0, sd))), instance=instance,
                rep=j + 1, platform="local-a10g", run_group="g", cold=False,
                metric="decode_wall")
            for k, lv in enumerate(levels) for j in range(n)]


def test_close_configs_are_contenders_and_undecided():
    runs = _runs([300.0, 300.1, 300.05, 290.0], n=3, sd=0.002, seed=1)
    r = rank(from_table(RunsTable(runs, "<t>"), None), rope="0.5%")
    assert r.label == "undecided"
    assert set(r.contenders) == {"c0", "c1", "c2"}
    assert "c3" not in r.contenders
    tied = {x["config"]: x["tied_with_best"] for x in r.configs}
    assert tied["c3"] is False


def test_lower_is_better_names_the_smallest():
    runs = _runs([10.0, 12.0, 14.0], n=4, sd=0.002, seed=2)
    r = rank(from_table(RunsTable(runs, "<t>"), None, lower_is_better=True), rope="0.5%")
    assert r.best == "c0" and r.direction == "lower_is_better"


def test_p_fastest_matches_two_config_probability(table):
    """With two configs P(fastest) is P(B > A) of the verdict, to Monte-Carlo error."""
    g = "surgattn_attrib_793"
    a, b = f"{g}:all_3d", f"{g}:drafter_only_3d"
    sel = Selection(run_group=g, metric="decode_wall")
    fld = from_table(table, [a, b], selection=sel)
    r = rank(fld, draws=40000)
    v = judge(comparison.from_table(table, a, b, selection=sel))
    pb = next(x["p_fastest"] for x in r.configs if x["config"] == b)
    assert pb == pytest.approx(v.p_b_gt_a, abs=4 * np.sqrt(0.25 / 40000))


def test_p_fastest_exact_posterior_draws():
    class P:
        w = np.array([0.5, 0.5])
        mean = np.array([[0.0, 0.1], [0.0, 0.1]])
        cov = np.array([np.eye(2) * 1e-10] * 2)

    p = p_fastest(P(), 2, draws=1000)
    assert p.tolist() == [0.0, 1.0]
    assert p_fastest(P(), 2, draws=1000, lower=True).tolist() == [1.0, 0.0]


def test_decisive_rule():
    assert is_decisive(0.96, [True, True])
    assert not is_decisive(0.94, [True, True])
    assert not is_decisive(0.99, [True, False])


def test_errors_are_input_errors(table):
    with pytest.raises(InputError, match="at least 2"):
        from_table(table, ["mtp_k_sweep_speed/runs:k13"])
    with pytest.raises(InputError, match="named twice"):
        fld = from_table(table, ["mtp_k_sweep_speed/runs:k13", "mtp_k_sweep_speed/runs:k13"])
        rank(fld)
    with pytest.raises(InputError):
        rank(from_table(table, ["mtp_k_sweep_speed/runs:k13", "no-such-config"]))


def test_draws_out_of_range_is_the_projects_one_line_error(cli):
    from pathlib import Path

    runs = Path(__file__).resolve().parents[3] / "examples" / "runs" / "tps_runs.csv"
    code, _, err = cli("rank", runs, "--draws", "99")
    assert code == 2 and err.startswith("planner: error: field '--draws'") and "[100," in err
