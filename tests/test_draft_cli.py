"""planner draft CLI: JSON schema, worth-a-run, bad input -> exit 2 one line."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from planner.draft import worth_a_run

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "tests" / "fixtures" / "draft_small_capture.jsonl.gz"


def run(*args):
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True,
                           text=True, cwd=ROOT)


def test_json_schema_small_capture():
    p = run("draft", str(SMALL), "-p", "pld", "-p", "mtp", "-p", "suffix-first",
            "--bootstrap", "200", "--mc-reps", "20", "--json", "--baseline-tps", "150")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert {"policies", "worth_a_run", "capture", "settings"} <= set(r)
    for pol in r["policies"]:
        for key in ("policy", "params", "tokens_per_forward", "mean_acceptance_length",
                    "frac_tokens_from_lookup", "runs_over_cap", "projected_tps", "worth_a_run"):
            assert key in pol
        assert set(pol["tokens_per_forward"]) >= {"point", "mean", "ci_low", "ci_high"}
    assert r["policies"][0]["policy"] == "ar"
    assert r["policies"][0]["projected_tps"]["point"] == pytest.approx(150)
    pld = r["policies"][1]
    assert pld["params"] == {"n": 2, "depth": 24}
    assert pld["tokens_per_forward"]["point"] > 1.5  # repetitive prompts
    # reproducible with --seed
    p2 = run("draft", str(SMALL), "-p", "pld", "-p", "mtp", "-p", "suffix-first",
             "--bootstrap", "200", "--mc-reps", "20", "--json", "--baseline-tps", "150")
    assert p2.stdout == p.stdout


@pytest.mark.parametrize("args", [
    ["-p", "mtp", "--k", "17"],
    ["-p", "pld", "--depth", "0"],
    ["-p", "pld", "--n", "99"],
    ["-p", "nonsense"],
    ["-p", "mtp", "--curve", "0.5,0.7"],
    ["-p", "mtp", "--k", "5", "--curve", "0.8,0.6,0.5"],
    ["--baseline-tps", "-3"],
])
def test_bad_input_exit_2_one_line(args):
    p = run("draft", str(SMALL), "--bootstrap", "50", "--mc-reps", "5", *args)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "Traceback" not in p.stderr
    assert p.stderr.startswith("planner: error:")


def test_acceptance_prompt_set_mismatch(tmp_path):
    f = tmp_path / "pp.jsonl"
    f.write_text(json.dumps({"id": "other-1", "num_drafts": 10, "num_accepted": 20,
                             "accepted_per_pos": [8, 6, 4, 1, 1, 0, 0]}) + "\n")
    before = f.read_text()
    p = run("draft", str(SMALL), "-p", "mtp", "--curve", str(f), "--bootstrap", "50")
    assert p.returncode == 2 and "does not match" in p.stderr
    assert f.read_text() == before


def test_missing_capture_exit_2():
    p = run("draft", "/nonexistent/capture.jsonl")
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_md_report_with_png(tmp_path):
    md = tmp_path / "r.md"
    p = run("draft", str(SMALL), "-p", "pld", "--bootstrap", "100", "--md", str(md))
    assert p.returncode == 0, p.stderr
    assert "tokens/forward" in md.read_text() and (tmp_path / "r.png").stat().st_size > 1000


def _plan(**kw):
    from planner.repeats import plan_repeats

    res = plan_repeats(**kw)
    return res if isinstance(res, dict) else res.to_dict()


def test_worth_a_run_is_sized_by_the_assurance_planner():
    """One sizing rule: draft's runs per arm and cost are plan_repeats' recommendation for the
    same gain draws, platform prior and platform cost model."""
    from models.noise import platform_prior
    from planner.costs import cost_model
    from planner.draft import SIZING_SIMS

    prior, cm = platform_prior("hf-a10g-small"), cost_model("hf-a10g-small")
    g = np.random.default_rng(0).normal(9.0, 1.0, 2000)  # ~2.9 % of 307 TPS
    w = worth_a_run(g, 1.16, baseline_tps=307.08, prior=prior, cost=cm, seed=4)
    rec = _plan(delta=g, baseline_tps=307.08, prior=prior, designs=("separate",), max_runs=40,
                price_per_hour=cm.price_per_hour, minutes_per_run=cm.minutes_per_run,
                startup_minutes=cm.startup_minutes, billed_per_minute=cm.billed_per_minute,
                sims=SIZING_SIMS, seed=4, search_beyond_cap=False)["recommended"]
    assert w["worth"] and w["code"] == "worth"
    assert w["runs_per_arm"] == rec["runs_per_arm"] and 1 <= w["runs_per_arm"] <= 10
    assert w["assurance_at_n"] == pytest.approx(rec["assurance"]) and w["assurance_at_n"] >= 0.8
    # the platform's cost model: one allocation per run, 5 min start-up + 3 min at $1.00/h
    assert w["cost_usd"] == pytest.approx(2 * w["runs_per_arm"] * 8 / 60)
    assert "power" not in w and w["assurance"] == 0.8
    assert 0.9 < w["p_run_beats_baseline"] < 1
    w = worth_a_run(np.full(100, -1.0), 1.16, baseline_tps=307.08, prior=prior, cost=cm)
    assert not w["worth"] and w["code"] == "no_gain" and "<= 0" in w["verdict"]
    w = worth_a_run(np.full(100, 0.2), 1.16, baseline_tps=307.08, prior=prior, cost=cm, cap=10)
    assert not w["worth"] and w["over_run_cap"] and w["code"] == "over_cap"


def test_verdict_to_settle_is_sized_by_the_assurance_planner():
    """The verdict's "to settle" advice is plan_more_runs' recommendation from the runs
    already bought."""
    from models.noise import platform_prior
    from planner.costs import cost_model
    from planner.repeats import plan_more_runs
    from planner.runs import runs_from_values
    from planner.verdict import SETTLE_MAX_RUNS, SETTLE_SIMS, verdict

    t = runs_from_values([308.1, 307.9], [309.0, 309.4], platform="hf-a10g-small")
    prior, cm = platform_prior("published-n4"), cost_model("hf-a10g-small")
    v = verdict(t, "A", "B", prior=prior, seed=1, platform="hf-a10g-small")
    assert v.label == "undecided"
    res = plan_more_runs(t, "A", "B", prior=prior, rope="0.1%", sims=SETTLE_SIMS, seed=1,
                         designs=("separate",), max_runs=SETTLE_MAX_RUNS, target=0.8,
                         price_per_hour=cm.price_per_hour, minutes_per_run=cm.minutes_per_run,
                         startup_minutes=cm.startup_minutes,
                         billed_per_minute=cm.billed_per_minute, search_beyond_cap=False)
    rec = (res if isinstance(res, dict) else res.to_dict())["recommended"]
    assert rec is not None and v.more_runs_code == "settle"
    assert v.more_runs_per_arm == rec["runs_per_arm"]
    assert f"${rec['cost_usd']:.2f}" in v.more_runs_note


def test_sweep_json():
    p = run("draft-sweep", str(SMALL), "--n-values", "1,2", "--d-values", "4,8",
            "--k-values", "2,3", "--mc-reps", "5", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["rows"]
    assert len(rows) == 1 + 4 + 2
    tps = [r["projected_tps"] for r in rows]
    assert tps == sorted(tps, reverse=True)


def test_draft_sweep_spelled_as_in_the_docs(cli):
    """`planner draft sweep` is an alias of `planner draft-sweep`."""
    code, out, err = cli("draft", "sweep", "--help")
    assert code == 0 and "Grid over pld" in out


def test_typed_results_round_trip_and_render_from_saved_json(tmp_path):
    """DraftResult / SweepResult -> JSON -> from_dict; the views and the plot work from the
    saved JSON (no bootstrap draws), the live result carries them as a typed field."""
    from planner.commands.draft import _markdown, _plot
    from planner.draft import DraftResult, SweepResult, parse_policy, run_draft, run_sweep
    from planner.errors import InputError
    from planner.report.output import to_json

    r = run_draft(SMALL, [parse_policy("pld")], n_boot=100, mc_reps=5, seed=1)
    assert isinstance(r, DraftResult)
    assert set(r.samples) == {"ar", "pld"} and r.samples["pld"].shape == (100,)
    text = to_json(r.to_dict())
    saved = json.loads(text)
    assert "samples" not in saved and "_samples" not in saved
    back = DraftResult.from_dict(saved)
    assert back.samples == {} and to_json(back.to_dict()) == text
    assert "| pld | " in _markdown(saved, None)
    png = tmp_path / "saved.png"
    _plot(saved, back.samples, png)
    assert png.stat().st_size > 1000
    s = run_sweep(SMALL, n_values=[2], d_values=[8], k_values=[2], mc_reps=5)
    assert isinstance(s, SweepResult) and [x["policy"] for x in s.rows].count("pld") == 1
    assert SweepResult.from_dict(json.loads(to_json(s.to_dict()))) == s
    with pytest.raises(InputError):
        DraftResult.from_dict(s.to_dict())
