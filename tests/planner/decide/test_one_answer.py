"""One answer everywhere (issue 20 item 5): ``planner verdict``, ``planner repeats --runs`` and
``planner budget`` read the same runs through :mod:`planner.decide.comparison`.

On the same table (a shipped pair, a quick-form pair and its table, a table with a session
column, one with cold runs after a warm-up pass, with and without a platform): the same
posterior of Δ bit for bit, the verdict's "to settle" advice is ``planner repeats --runs``'
recommendation (``--sims 200 --max-runs 100`` and the designs of
:func:`planner.decide.settle.settle_designs`), the same runs read cold, and budget's baseline
level is the warm level those runs give.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from planner.decide.comparison import Comparison, from_values, measured_runs
from planner.decide.settle import SETTLE_MAX_RUNS, SETTLE_SIMS, settle_designs
from planner.decide.verdict import judge
from planner.io.runs import read_runs, runs_from_values

ISSUE_A, ISSUE_B = "35.73,35.76,35.94", "34.43,34.47,35.23"    # issue 20's quick form
#: An undecided quick form on hf-a10g-small (each run its own allocation).
HF_A, HF_B = "300.0,301.2,299.1", "300.5,299.8,301.0"
SHIPPED = ("examples/runs/tps_runs.csv", "bi0_body_groupsize/runs:g128",
           "bi0_body_groupsize/runs:g32", "decode_wall")
HEAD = "config,tps,instance,session,rep,phase,platform,metric,workload\n"
#: One machine, two server sessions per config, rep 0 of each session cold.
SESSIONS = HEAD + "".join(
    f"{c},{v},m1,{c}{s},{k},measure,local-a10g,decode_wall,128x512\n"
    for c, s, vals in (("A", 1, (450.2, 452.1, 452.6)), ("A", 2, (449.0, 451.3, 451.0)),
                       ("B", 1, (450.0, 452.9, 452.2)), ("B", 2, (451.1, 452.0, 452.4)))
    for k, v in enumerate(vals))
#: Two machines; A's session opens with a warm-up pass (its rep 0 is warm), B's does not.
WARMUP = HEAD + "A,440.0,m1,s1,0,warmup,local-a10g,decode_wall,128x512\n" + "".join(
    f"{c},{v},{m},s1,{k},measure,local-a10g,decode_wall,128x512\n"
    for c, m, vals in (("A", "m1", (449.1, 452.1, 452.6)), ("B", "m2", (446.0, 455.9, 455.2)))
    for k, v in enumerate(vals))


def _csv(tmp_path, a: str, b: str, name="q.csv") -> str:
    p = tmp_path / name
    p.write_text("config,tps\n" + "".join(f"A,{x}\n" for x in a.split(","))
                 + "".join(f"B,{x}\n" for x in b.split(",")))
    return str(p)


def _json(cli, *args):
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    return json.loads(out)


def _settle_args(comp) -> list[str]:
    return ["--sims", str(SETTLE_SIMS), "--max-runs", str(SETTLE_MAX_RUNS),
            "--design", ",".join(settle_designs(comp))]


def _same_answer(v: dict, r: dict) -> None:
    """The verdict and the repeats plan of the same runs: one posterior, one advice."""
    assert v["delta_pct"] == r["existing"]["delta_pct"]          # the same fit, bit for bit
    assert v["level_tps_a"] == r["existing"]["level_tps_a"]
    assert v["label"] == r["existing"]["label"]
    assert [e["cold"] for e in v["runs"]] == [e["cold"] for e in r["runs"]]
    # the same grouping read (the words on its sources differ for typed values: "the cold
    # column" of the quick form's rows, "no rep, cold or instance column" of a table)
    keys = ("instances", "sessions", "sessions_modelled", "cold_groups", "cold_group_by")
    assert [v["grouping"][k] for k in keys] == [r["existing"]["grouping"][k] for k in keys]
    if v["label"] != "undecided":
        assert v["more_runs_per_arm"] is None and v["more_runs_code"] is None
        return
    rec = r["recommended"]
    assert v["more_runs_per_arm"] == (None if rec is None else rec["runs_per_arm"])
    assert v["more_runs_code"] == ("over_cap" if rec is None else "settle")
    if rec is not None:
        assert ("in A/B pairs" in v["more_runs_note"]) == (rec["design"] == "paired")
        assert f"assurance {rec['assurance']:.2f}" in v["more_runs_note"]


@pytest.mark.parametrize("platform", [None, "hf-a10g-small"])
def test_quick_form_and_its_table_give_one_answer(cli, tmp_path, platform):
    """verdict --a-runs/--b-runs and repeats --runs on the same values as a table."""
    a, b = (ISSUE_A, ISSUE_B) if platform is None else (HF_A, HF_B)
    plat = [] if platform is None else ["--platform", platform]
    v = _json(cli, "verdict", "--a-runs", a, "--b-runs", b, *plat)
    comp = from_values([float(x) for x in a.split(",")], [float(x) for x in b.split(",")],
                       platform=platform)
    assert comp.sessions == (platform is None)
    r = _json(cli, "repeats", "--runs", _csv(tmp_path, a, b), "--a", "A", "--b", "B", *plat,
              *_settle_args(comp))
    assert v["label"] == "undecided"
    _same_answer(v, r)
    if platform is None:
        # machines unknown: no pairs (a pair of new runs is two server sessions, whose offset
        # does not cancel), so the advice is separate runs on new machines
        assert settle_designs(comp) == ("separate",)
        assert v["more_runs_code"] == "settle" and "each on a new instance" in v["more_runs_note"]


def test_quick_form_json_and_terminal_advise_the_same(cli):
    code, out, err = cli("verdict", "--a-runs", ISSUE_A, "--b-runs", ISSUE_B)
    assert code == 0, err
    v = _json(cli, "verdict", "--a-runs", ISSUE_A, "--b-runs", ISSUE_B)
    assert f"about {v['more_runs_per_arm']} more run" in " ".join(out.split())


@pytest.mark.parametrize("text", [SESSIONS, WARMUP], ids=["sessions", "warmup"])
def test_session_and_cold_tables_give_one_answer(cli, tmp_path, text):
    p = tmp_path / "runs.csv"
    p.write_text(text)
    v = _json(cli, "verdict", p, "--a", "A", "--b", "B")
    from planner.decide.comparison import from_table

    comp = from_table(read_runs(p), "A", "B")
    r = _json(cli, "repeats", "--runs", p, "--a", "A", "--b", "B", *_settle_args(comp))
    _same_answer(v, r)
    cold = [(e["config"], e["rep"]) for e in v["runs"] if e["cold"]]
    if text is SESSIONS:
        assert v["grouping"]["sessions_modelled"] and v["grouping"]["cold_groups"] == 4
        assert cold == [("A", 0), ("A", 0), ("B", 0), ("B", 0)]
    else:
        # the warm-up pass took A's cold start; B's rep 0 is cold (one reading for both)
        assert cold == [("B", 0)]
        assert "warm-up pass" in v["grouping"]["cold_source"]


def test_shipped_pair_with_warmup_passes_gives_one_answer(cli):
    path, a, b, metric = SHIPPED
    v = _json(cli, "verdict", path, "--a", a, "--b", b, "--metric", metric)
    r = _json(cli, "repeats", "--runs", path, "--a", a, "--b", b, "--metric", metric,
              "--sims", "200", "--max-runs", "100", "--design", "separate,paired")
    _same_answer(v, r)
    # both configs warmed up before their measured runs: no run read cold
    assert not v["cold_runs"] and not any(e["cold"] for e in r["runs"])


def test_budget_reads_the_warm_level_the_verdict_reads(tmp_path):
    """A plan's baseline level from its runs table is the mean of the runs the verdict reads
    warm (B's cold first run, 446.0, would pull it down), and the comparison is sized under the
    platform's prior, the verdict's."""
    from planner.decide.budget import plan_budget
    from planner.io.plan_file import read_plan

    runs = tmp_path / "runs.csv"
    runs.write_text(WARMUP)
    plan = tmp_path / "p.toml"
    plan.write_text(f"[plan]\nplatform = \"local-a10g\"\nruns = \"{runs}\"\n[budget]\n"
                    "total_usd = 5.0\nmax_runs_per_arm = 12\n[[comparison]]\nname = \"x\"\n"
                    "baseline = \"B\"\ncandidate = \"A\"\ndelta_pct = 1.0\n")
    c = plan_budget(read_plan(plan), sims=200, seed=0).to_dict()["comparisons"][0]
    sub, cold = measured_runs(read_runs(runs), "B", "B")
    warm = [r.tps for r, f in zip(sub.runs, cold) if not f]
    assert cold.tolist() == [True, False, False]
    assert c["baseline_tps"] == pytest.approx(np.mean(warm))
    assert c["prior"] == from_values([1.0, 1.1], [1.0, 1.2], platform="local-a10g").prior_label


def test_knowing_less_is_never_read_as_more_precise():
    """What is coherent between knowing the platform and not (the monotone claim is not:
    a named platform's prior may say its machines differ more than the population prior
    expects of runs this tight, and then asks for more runs; see docs/planning.md).

    With the machines unknown each arm's runs are one session: under the same prior that
    reading never gives a narrower interval than reading every run as its own machine, and
    its advice never plans pairs (planning them made the advice smaller the less was known:
    11 paired runs without a platform, more than 100 separate ones on a named one)."""
    for a, b in ((ISSUE_A, ISSUE_B), (HF_A, HF_B), ("300.0,300.1,300.05", "301.0,301.1,301.05")):
        va, vb = [float(x) for x in a.split(",")], [float(x) for x in b.split(",")]
        unknown = from_values(va, vb)
        assert unknown.sessions and settle_designs(unknown) == ("separate",)
        own = Comparison(runs_from_values(va, vb, platform=""), "A", "B",
                         prior=unknown.prior, prior_label=unknown.prior_label,
                         choice=unknown.choice, plain=True)
        w = [judge(c, rope="0.1%").to_dict()["delta_pct"] for c in (unknown, own)]
        assert w[0]["hdi_high"] - w[0]["hdi_low"] >= w[1]["hdi_high"] - w[1]["hdi_low"]
