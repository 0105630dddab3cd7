"""``planner repeats`` and ``planner.decide.repeats.plan_repeats``: JSON, recommendation, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from models.stats.noise import platform_prior
from planner.errors import InputError
from planner.decide.repeats import plan_repeats

KEYS = {"design", "runs_per_arm", "assurance", "false_claim_rate", "gpu_hours", "cost_usd"}


def test_json_designs_and_recommendation(cli):
    code, out, err = cli("repeats", "--delta", "-5.82", "--platform", "published-n4",
                         "--sims", "600", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["command"] == "repeats"
    assert r["designs"] and all(KEYS <= set(d) for d in r["designs"])
    rec = r["recommended"]
    assert rec is not None and KEYS <= set(rec)
    assert rec["assurance"] >= 0.8 and rec["false_claim_rate"] <= 0.05
    assert rec["design"] == "separate" and rec["runs_per_arm"] <= 3
    # cheapest among the qualifying designs
    ok = [d for d in r["designs"] if d["meets_target"] and d["false_claim_ok"]]
    assert rec["cost_usd"] == min(d["cost_usd"] for d in ok)
    # published-n4 pins sigma: no paired rows by default
    assert all(d["design"] != "paired" for d in r["designs"])
    seq = [d for d in r["designs"] if d["design"] == "sequential"]
    assert seq and all("expected_runs_per_arm" in d and "max_cost_usd" in d for d in seq)


def test_small_claim_not_reachable_within_cap(cli):
    code, out, err = cli("repeats", "--delta", "0.44", "--platform", "published-n4",
                         "--design", "separate", "--sims", "400", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["recommended"] is None
    assert "reaches assurance" in r["reason"]
    assert r["beyond_cap"]["runs_per_arm"] > 500          # ~2,300 per arm at ROPE 0.1 %


def test_python_api_matches_cli(cli):
    code, out, _ = cli("repeats", "--delta", "0.5", "--relative", "--platform", "hf-a10g-small",
                       "--design", "separate,paired", "--max-runs", "8", "--sims", "300",
                       "--seed", "3", "--json")
    assert code == 0
    a = json.loads(out)
    b = plan_repeats(0.5, relative=True, prior=platform_prior("hf-a10g-small"),
                     designs=("separate", "paired"), max_runs=8, sims=300, seed=3).to_dict()
    assert [d["assurance"] for d in a["designs"]] == [d["assurance"] for d in b["designs"]]
    assert [d["cost_usd"] for d in a["designs"]] == pytest.approx(
        [d["cost_usd"] for d in b["designs"]])


def test_delta_draws_accepted():
    draws = np.random.default_rng(0).normal(3.0, 1.0, 500)
    r = plan_repeats(draws, prior=platform_prior("hf-a10g-small"), designs=("paired",),
                     max_runs=6, sims=300)
    assert r.effect["kind"] == "distribution"
    assert r.inputs["delta"] == {"draws": 500, "mean": pytest.approx(float(draws.mean()))}
    assert 0 <= r.designs[0].assurance <= 1


def test_seed_reproducible(cli):
    args = ("repeats", "--delta", "2", "--design", "separate", "--max-runs", "6", "--sims",
            "300", "--json", "--seed", "5")
    _, o1, _ = cli(*args)
    _, o2, _ = cli(*args)
    assert o1 == o2  # byte for byte: timings are not in the JSON


def test_terminal_and_markdown(cli, tmp_path):
    md = tmp_path / "rep.md"
    code, out, err = cli("repeats", "--delta", "-5.82", "--platform", "published-n4",
                         "--design", "separate", "--max-runs", "4", "--sims", "300",
                         "--md", str(md))
    assert code == 0, err
    assert "Recommended" in out and "assurance" in out
    text = md.read_text()
    assert text.startswith("# How many runs") and "| design |" in text


def test_existing_runs(cli, runs_csv):
    a = "fa2sw_precache_agentI"
    b = "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"
    code, out, err = cli("repeats", "--runs", runs_csv, "--a", a, "--b", b, "--platform",
                         "local-a10g", "--metric", "decode_wall", "--workload", "128x512",
                         "--design", "paired", "--max-runs", "4", "--sims", "300", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["existing"]["n_a"] > 0 and r["existing"]["label"]
    assert r["effect"]["kind"] == "distribution"
    assert r["inputs"]["existing_runs"] > 0


@pytest.mark.parametrize("args,field", [
    (("--delta", "-1", "--rule", "superiority:0.95"), "--delta"),
    (("--delta", "0", "--rule", "superiority"), "--delta"),
    (("--delta", "1", "--assurance", "1.5"), "--assurance"),
    (("--delta", "1", "--assurance", "0"), "--assurance"),
    (("--delta", "1", "--max-cost", "0.01"), "--max-cost"),
    (("--delta", "1", "--max-runs", "0"), "--max-runs"),
    (("--delta", "1", "--rule", "bogus"), "--rule"),
    (("--delta", "1", "--design", "bogus"), "--design"),
    (("--delta", "0", "--rope", "0"), "--delta"),
    (("--rule", "verdict"), "--delta"),
])
def test_bad_input_is_one_line_exit_2(cli, args, field):
    code, out, err = cli("repeats", "--sims", "200", *args)
    assert code == 2
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err
    assert field in lines[0]


def test_api_errors():
    pr = platform_prior("hf-a10g-small")
    with pytest.raises(InputError):
        plan_repeats(-0.4, prior=pr, rule="superiority")
    with pytest.raises(InputError):
        plan_repeats(0.4, prior=pr, target=1.0)
    with pytest.raises(InputError):
        plan_repeats(0.4, prior=pr, max_cost=0.05)


@pytest.mark.parametrize("args,field,words", [
    (("--delta", "1", "--pairs-per-instance", "0"), "--pairs-per-instance", [">= 1"]),
    (("--delta", "1", "--runs-per-instance", "0"), "--runs-per-instance", [">= 1"]),
    (("--delta", "1", "--platform", "mars"), "--platform", ["unknown platform 'mars'"]),
    (("--delta", "1", "--batch", "0"), "--batch", [">= 1"]),
    (("--a", "A", "--b", "B", "--delta", "1"), "--a", ["only apply with --runs"]),
    (("--delta", "1", "--workload", "128x512"), "--workload", ["only applies with --runs"]),
    (("--delta", "1", "--sims", "5000000"), "--sims", ["100,000"]),
    (("--delta", "1", "--seed", "-1"), "--seed", []),
])
def test_option_errors_name_the_option(cli, args, field, words):
    code, out, err = cli("repeats", *args)
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert field in lines[0] and all(w in lines[0] for w in words), lines[0]
    if field != "--seed":
        assert f"field '{field}'" in lines[0]


def test_platform_alias_sizes(cli):
    code, out, err = cli("repeats", "--delta", "5", "--platform", "hf", "--design", "paired",
                         "--max-runs", "4", "--sims", "200", "--json")
    assert code == 0, err


def test_given_delta_with_runs_is_what_the_note_says(cli, runs_csv):
    a = "fa2sw_precache_agentI"
    b = "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"
    code, out, err = cli("repeats", "--runs", runs_csv, "--a", a, "--b", b, "--platform",
                         "local-a10g", "--metric", "decode_wall", "--workload", "128x512",
                         "--design", "paired", "--max-runs", "4", "--sims", "300", "--delta",
                         "40", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["effect"]["kind"] == "fixed" and r["effect"]["mean_tps"] == pytest.approx(40)
    notes = " ".join(r["notes"])
    assert "current posterior of Δ" not in notes and "given Δ = 40 TPS" in notes
    assert r["effect"]["source"] == "delta"


def test_md_never_overwrites_the_runs(cli, runs_csv, tmp_path):
    import shutil

    src = tmp_path / "runs.csv"
    shutil.copy(runs_csv, src)
    before = src.read_bytes()
    code, out, err = cli("repeats", "--runs", src, "--a", "x", "--b", "y", "--sims", "200",
                         "--md", src)
    assert code == 2 and "field '--md'" in err and src.read_bytes() == before


# --------------------------------------------------------------------------------------------
# seed-stable plans, runs per allocation, stated noise
# --------------------------------------------------------------------------------------------
def _known(tau: float, sigma: float):
    from models.stats.noise import NoisePrior, ScalePrior

    return NoisePrior(tau=ScalePrior("inv_chi2", tau, 1e9),
                      sigma=ScalePrior("inv_chi2", sigma, 1e9), name="known")


def test_known_noise_plan_is_the_same_for_8_seeds():
    """Issue 8.6: Δ = +1 % at 300 TPS, noise known at a 2 % CV, separate, ROPE 0, cap 200:
    the textbook 63-64 runs per arm for every seed (exact rates, SE ~ 0)."""
    import math

    pr = _known(2e-5, math.log1p(0.02))
    got = []
    for seed in range(8):
        r = plan_repeats(1.0, relative=True, baseline_tps=300, prior=pr, rope="0",
                         designs=("separate",), max_runs=200, seed=seed)
        assert r.recommended is not None
        got.append(r.recommended.runs_per_arm)
        assert r.recommended.false_claim_rate_se < 1e-6
        assert r.recommended.false_claim_rate <= 0.05
    assert got == [63] * 8


def test_cli_known_noise_json_has_standard_errors(cli):
    code, out, err = cli("repeats", "--delta", "1", "--relative", "--baseline-tps", "300",
                         "--cv", "2%", "--known-noise", "--design", "separate", "--rope", "0",
                         "--max-runs", "200", "--seed", "5", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["recommended"]["runs_per_arm"] == 64  # --cv 2% is a log-SD of 0.019998 (issue 20)
    assert r["inputs"]["prior"]["label"] == "stated"
    assert all("false_claim_rate_se" in d and "assurance_se" in d for d in r["designs"])


def test_false_claim_ok_tolerance():
    from planner.decide.sizing import false_claim_ok

    assert false_claim_ok(0.05, 0.0) and not false_claim_ok(0.0501, 0.0)
    assert false_claim_ok(0.059, 0.005) and not false_claim_ok(0.061, 0.005)
    assert not false_claim_ok(float("nan"), 0.01) and not false_claim_ok(None, None)


def test_runs_per_allocation_chosen_from_noise_and_costs():
    """Issue 8.7: τ = 0.2 %, σ = 1 %, 10 min start-up, 2 min per run -> r* = sqrt(10 · 1² /
    (2 · 0.2²)) = 11.18 (Kalibera & Jones); 11 and 12 are sized and the cheaper chosen."""
    from planner.decide.costs import CostModel
    from planner.decide.sizing import optimal_runs_per_instance

    assert optimal_runs_per_instance(0.002, 0.01, 10, 2) == pytest.approx(11.1803, abs=1e-4)
    assert optimal_runs_per_instance(0.008, 0.001, 5, 3) < 1
    cm = CostModel("custom", 1.0, 2.0, 10.0, True)
    r = plan_repeats(1.0, relative=True, prior=_known(0.002, 0.01), rope="0",
                     designs=("separate",), max_runs=40, runs_per_instance=None, cost=cm)
    al = r.allocation
    assert al["r_star"] == pytest.approx(11.18, abs=0.01)
    assert [c["runs_per_instance"] for c in al["candidates"]] == [11, 12]
    best = min(c["cost_usd"] for c in al["candidates"] if c["cost_usd"] is not None)
    chosen = next(c for c in al["candidates"] if c["runs_per_instance"] == al["runs_per_instance"])
    assert chosen["cost_usd"] == best
    assert r.recommended.runs_per_instance == al["runs_per_instance"]
    assert r.inputs["runs_per_instance"] == al["runs_per_instance"]
    assert "Kalibera" in al["reason"] and al["reason"] in r.notes
    d = r.to_dict()
    assert d["allocation"]["runs_per_instance"] == al["runs_per_instance"]
    # one run per allocation costs more here (a start-up per run)
    one = plan_repeats(1.0, relative=True, prior=_known(0.002, 0.01), rope="0",
                       designs=("separate",), max_runs=40, runs_per_instance=1, cost=cm)
    assert one.allocation is None
    assert one.recommended is None or one.recommended.cost_usd > r.recommended.cost_usd


@pytest.mark.parametrize("opt, val", [("--cv", "abc"), ("--cv-instance", "-2%"),
                                      ("--aa-runs", "300")])
def test_stated_noise_errors_name_the_option(cli, opt, val):
    code, _, err = cli("repeats", "--delta", "1", opt, val, "--sims", "100")
    assert code == 2 and opt in err
    code, _, err = cli("budget", "examples/plan.toml", opt, val)
    assert code == 2 and opt in err


def test_adaptive_sizes_are_stated_and_each_row_shows_its_se(cli, tmp_path):
    # new-user report: "2000 simulated experiments per design" while the rows far from the
    # target stop at 250-1,000 (models.stats.assurance.Adaptive); the table now shows each SE
    args = ("repeats", "--delta", "0.44", "--platform", "hf-a10g-small", "--design",
            "separate", "--max-runs", "8", "--sims", "1000", "--seed", "1")
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    r = json.loads(out)
    # the JSON is as before: the sizes show in the SEs (some rows stopped before 1,000)
    ks = [a * (1 - a) / se ** 2 for a, se in
          ((d["assurance"], d["assurance_se"]) for d in r["designs"]) if se > 0]
    assert min(ks) < 600 and "adaptive" not in r["inputs"]
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    code, out, err = cli(*args, "--md", md, "--html", html)
    assert code == 0, err
    flat = " ".join(out.split())
    words = ("up to 1,000 simulated experiments per design; rates far from their threshold "
             "stop at 250–500 (adaptive), the recommended design is simulated in full")
    assert words in flat and "1000 simulated experiments per design" not in flat
    assert words in md.read_text() and "stop at 250–500 (adaptive)" in html.read_text()
    cells = [f"{d['assurance']:.3f}±{d['assurance_se']:.3f}" for d in r["designs"]]
    assert "assurance ±SE" in out and all(c in out for c in cells)
    assert all(c in md.read_text() for c in cells)


def test_runs_plan_sims_every_design_in_full(cli, runs_csv):
    code, out, err = cli("repeats", "--runs", runs_csv, "--a", "fa2sw_precache_agentI", "--b",
                         "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2", "--run-group",
                         "validity/free_ceiling_wallclock_realize/ab_out", "--design",
                         "paired", "--max-runs", "4", "--sims", "300")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "300 simulated experiments per design (every design in full)" in flat
    assert "adaptive" not in flat


_A, _B = "fa2sw_precache_agentI", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"
_RUNS = str(Path(__file__).resolve().parents[3] / "examples" / "runs" / "tps_runs.csv")
_GROUP = "validity/free_ceiling_wallclock_realize/ab_out"


def _mean_tps(path, config, group):
    import csv

    with open(path, newline="") as f:
        xs = [float(r["tps"]) for r in csv.DictReader(f)
              if r["config"] == config and r["run_group"] == group]
    return sum(xs) / len(xs), len(xs)


def test_run_group_filters_the_runs_and_the_baseline_is_a_level(cli, runs_csv):
    # new-user report: '--run-group' was no option of repeats, and the inputs line showed
    # baseline_tps=307.08 (the HF default, never used with --runs) while A runs at ~454 TPS
    mean_a, n_a = _mean_tps(runs_csv, _A, _GROUP)
    _, n_b = _mean_tps(runs_csv, _B, _GROUP)
    args = ("repeats", "--runs", runs_csv, "--a", _A, "--b", _B, "--run-group", _GROUP,
            "--design", "paired", "--max-runs", "4", "--sims", "300")
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert (r["existing"]["n_a"], r["existing"]["n_b"]) == (n_a, n_b) == (6, 6)
    assert r["inputs"]["options"]["run_group"] == _GROUP
    assert "baseline_tps" not in r["inputs"]["options"]
    assert r["inputs"]["baseline_tps"] == pytest.approx(mean_a, rel=0.01)
    assert r["existing"]["level_tps_a"] == pytest.approx(mean_a, rel=0.01)
    assert r["inputs"]["platform"] == "local-a10g"        # from the rows of that group
    code, out, err = cli(*args)
    assert code == 0, err
    flat = " ".join(out.split())
    assert f"at {r['inputs']['baseline_tps']:.2f} TPS" in flat and "307.08" not in flat
    assert f"run_group={_GROUP}" in flat
    # without the filter the runs of every group are pooled: more runs of A
    code, out, err = cli("repeats", "--runs", runs_csv, "--a", _A, "--b", _B, "--platform",
                         "local-a10g", "--design", "paired", "--max-runs", "4", "--sims",
                         "200", "--json")
    assert code == 0, err
    pooled = json.loads(out)
    assert pooled["existing"]["n_a"] > n_a and "baseline_tps" not in pooled["inputs"]["options"]


@pytest.mark.parametrize("args,field", [
    (("--delta", "1", "--run-group", "g"), "--run-group"),
    (("--runs", _RUNS, "--a", _A, "--b", _B, "--baseline-tps", "400"),
     "--baseline-tps"),
    (("--runs", _RUNS, "--a", _A, "--b", _B, "--run-group", "nope"),
     "run_group"),
])
def test_run_filters_errors_are_one_line(cli, args, field):
    code, out, err = cli("repeats", "--sims", "200", *args)
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert field in lines[0], lines[0]


def test_repeats_runs_starts_from_the_verdict_of_the_same_file(cli, tmp_path):
    """New-user report: on a table with no platform and no instance column, 'planner
    verdict' read each arm's runs as one session (undecided) while 'repeats --runs' read
    every run as its own machine ('B better'): the plan must start from the same verdict."""
    import json

    p = tmp_path / "ok.csv"
    p.write_text("config,tps\nA,100.1\nA,100.3\nA,99.9\nB,100.6\nB,100.9\nB,100.5\n")
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B", "--json")
    assert code == 0, err
    v = json.loads(out)
    code, out, err = cli("repeats", "--runs", p, "--a", "A", "--b", "B", "--sims", "200",
                         "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["existing"]["label"] == v["label"] == "undecided"
    assert r["existing"]["delta_pct"]["hdi_low"] == pytest.approx(v["delta_pct"]["hdi_low"],
                                                                  rel=1e-9)
    assert any("one session" in n for n in r["notes"])


def test_runs_of_a_duration_read_in_its_direction(cli):
    """repeats --runs on a duration reads the direction as planner verdict does (new-user
    report: hyperfine times, B 2.4 % slower, came out 'B better' in TPS)."""
    hf = Path(__file__).resolve().parents[2] / "fixtures" / "readers" / "hyperfine.json"
    ab = ("--a", "python decode.py --attn fa2", "--b", "sdpa", "--instance", "box1")
    code, out, err = cli("verdict", hf, *ab, "--json")
    assert code == 0, err
    v = json.loads(out)
    code, out, err = cli("repeats", "--runs", hf, *ab, "--sims", "200", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["existing"]["direction"] == "lower_is_better" == v["direction"]
    assert r["existing"]["label"] == v["label"] == "B slower"
    code, txt, err = cli("repeats", "--runs", hf, *ab, "--sims", "200")
    assert code == 0 and "level 1.66 s" in txt and "TPS" not in txt.split("designs")[0]
    # stated the other way: the rule's label, with a note that the metric reads otherwise
    code, out, err = cli("repeats", "--runs", hf, *ab, "--sims", "200", "--json",
                         "--higher-is-better")
    r2 = json.loads(out)
    assert r2["existing"]["label"] == "B better"
    assert any("direction given as higher is better" in n for n in r2["notes"])
    code, _, err = cli("repeats", "--delta", "0.5", "--lower-is-better")
    assert code == 2 and "give --runs" in err


def test_runs_read_from_a_named_value_column_show_its_unit(cli, tmp_path):
    """--tps-column mean_tpot_ms: the values are ms, as the verdict on the same file says
    (repeats said 'units')."""
    p = tmp_path / "lat.csv"
    p.write_text("config,mean_tpot_ms\nbase,10.0\nbase,10.1\nbase,9.9\ncand,9.0\ncand,9.1\n"
                 "cand,8.9\n")
    code, out, err = cli("repeats", "--runs", p, "--tps-column", "mean_tpot_ms", "--a", "base",
                         "--b", "cand", "--sims", "200")
    assert code == 0, err
    assert "at 10.00 ms" in out and "units" not in out
