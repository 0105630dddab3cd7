"""planner draft CLI: JSON schema, worth-a-run, bad input -> exit 2 one line."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from planner.decide.draft import worth_a_run

ROOT = Path(__file__).resolve().parents[3]
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
    ["-p", "mtp:k=5,foo=1"],
    ["-p", "pld:n=2,k=3"],
    ["-p", "mtp", "--curve", "0.7,0.5", "--curve", "0.6,0.4"],
])
def test_bad_input_exit_2_one_line(args):
    p = run("draft", str(SMALL), "--bootstrap", "100", "--mc-reps", "5", *args)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "Traceback" not in p.stderr
    assert p.stderr.startswith("planner: error:")


def test_acceptance_prompt_set_mismatch(tmp_path):
    f = tmp_path / "pp.jsonl"
    f.write_text(json.dumps({"id": "other-1", "num_drafts": 10, "num_accepted": 20,
                             "accepted_per_pos": [8, 6, 4, 1, 1, 0, 0]}) + "\n")
    before = f.read_text()
    p = run("draft", str(SMALL), "-p", "mtp", "--curve", str(f), "--bootstrap", "100")
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
    from planner.decide.repeats import plan_repeats

    res = plan_repeats(**kw)
    return res if isinstance(res, dict) else res.to_dict()


def test_worth_a_run_is_sized_by_the_assurance_planner():
    """One sizing rule: draft's runs per arm and cost are plan_repeats' recommendation for the
    same gain draws, platform prior and platform cost model."""
    from models.stats.noise import platform_prior
    from planner.decide.costs import cost_model
    from planner.decide.draft import SIZING_SIMS

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
    already bought, or "more than the cap" when the Normal screen puts the assurance of
    SETTLE_MAX_RUNS more runs per arm below the target. This pair sits on that boundary: the
    screen gives 0.797 at 100 runs; the planner with 2,000 simulations gives 0.81 +- 0.01 at
    100 and 0.79 at 80, so "over the cap" is right within the Monte Carlo error of the
    verdict's own 200-simulation planner (SE 0.028)."""
    from models.stats.noise import platform_prior
    from planner.decide.costs import cost_model
    from planner.decide.repeats import plan_more_runs
    from planner.io.runs import runs_from_values
    from planner.decide.settle import SETTLE_MAX_RUNS, SETTLE_SIMS
    from planner.decide.verdict import verdict

    t = runs_from_values([308.1, 307.9], [309.0, 309.4], platform="hf-a10g-small")
    prior, cm = platform_prior("published-n4"), cost_model("hf-a10g-small")
    v = verdict(t, "A", "B", prior=prior, seed=1, platform="hf-a10g-small")
    assert v.label == "undecided"
    kw = dict(prior=prior, rope="0.1%", designs=("separate",), max_runs=SETTLE_MAX_RUNS,
              target=0.8, price_per_hour=cm.price_per_hour, minutes_per_run=cm.minutes_per_run,
              startup_minutes=cm.startup_minutes, billed_per_minute=cm.billed_per_minute,
              search_beyond_cap=False)
    if v.more_runs_code == "settle":
        rec = plan_more_runs(t, "A", "B", sims=SETTLE_SIMS, seed=1, **kw).to_dict()["recommended"]
        assert v.more_runs_per_arm == rec["runs_per_arm"]
        assert f"${rec['cost_usd']:.2f}" in v.more_runs_note
    else:
        assert v.more_runs_code == "over_cap" and v.more_runs_per_arm is None
        rows = plan_more_runs(t, "A", "B", sims=2000, seed=1, **kw).to_dict()["designs"]
        at_cap = max((r for r in rows if r["runs_per_arm"] <= SETTLE_MAX_RUNS),
                     key=lambda r: r["runs_per_arm"])
        se = (0.8 * 0.2 / SETTLE_SIMS) ** 0.5
        assert at_cap["assurance"] <= 0.8 + 2 * se


def test_sweep_json():
    p = run("draft-sweep", str(SMALL), "--families", "pld,mtp", "--n-values", "1,2",
            "--d-values", "4,8", "--k-values", "2,3", "--mc-reps", "5", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["rows"]
    assert len(rows) == 1 + 4 + 2
    tps = [r["projected_tps"] for r in rows]
    assert tps == sorted(tps, reverse=True)


def test_sweep_covers_every_family_with_intervals_and_verdicts():
    """Issue 21: the sweep covered only pld and MTP K, without intervals or a worth-a-run
    column; now every family's grid (vLLM's ngram, suffix, hybrid thresholds, tree depth),
    each row with its bootstrap intervals, gain and verdict against the baseline, and the
    sweep's rests_on; grid sizes are in the result."""
    p = run("draft-sweep", str(SMALL), "--n-values", "2", "--d-values", "8", "--k-values",
            "2,3", "--ngram-windows", "2-4", "--ngram-k", "3,5", "--suffix-factors", "1",
            "--thresholds", "2,4", "--tree-depths", "4", "--mc-reps", "5", "--bootstrap",
            "200", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    fams = {r["policy"] for r in d["rows"]}
    assert fams == {"ar", "pld", "ngram", "suffix", "mtp", "suffix-first", "tree"}
    assert d["grid"]["sizes"] == {"pld": 1, "ngram": 2, "suffix": 1, "mtp": 2,
                                  "suffix-first": 2, "tree": 1}
    assert d["grid"]["rows"] == len(d["rows"]) == 10
    for r in d["rows"]:
        lo, hi = r["projected_tps_ci"]
        assert lo <= r["projected_tps"] <= hi
        lo, hi = r["tokens_per_forward_ci"]
        assert lo <= r["tokens_per_forward"] <= hi
        if r["is_baseline"]:
            assert r["worth"] is None and r["gain_tps"] is None
        else:
            assert isinstance(r["worth"], bool) and r["gain_ci"][0] <= r["gain_ci"][1]
            assert r["verdict_code"] in ("worth", "no_gain", "over_cap", "too_little_evidence")
    hybrids = [r for r in d["rows"] if r["policy"] in ("suffix-first", "tree")]
    assert all(r["params"]["k"] == 3 for r in hybrids)  # the largest MTP K
    assert {e["name"] for e in d["rests_on"]} >= {"sync_factor", "acceptance_curve",
                                                  "cost_profile", "tps_anchor"}
    p2 = run("draft-sweep", str(SMALL), "--n-values", "2", "--d-values", "8", "--k-values",
             "2,3", "--ngram-windows", "2-4", "--ngram-k", "3,5", "--suffix-factors", "1",
             "--thresholds", "2,4", "--tree-depths", "4", "--mc-reps", "5", "--bootstrap",
             "200", "--json")
    assert p2.stdout == p.stdout  # seeded: byte-identical


def test_draft_sweep_spelled_as_in_the_docs(cli):
    """`planner draft sweep` is an alias of `planner draft-sweep`."""
    code, out, err = cli("draft", "sweep", "--help")
    assert code == 0 and "Grid over every drafting family" in " ".join(out.split())


def test_typed_results_round_trip_and_render_from_saved_json(tmp_path):
    """DraftResult / SweepResult -> JSON -> from_dict; the views and the plot work from the
    saved JSON (no bootstrap draws), the live result carries them as a typed field."""
    from planner.decide.draft import DraftResult, SweepResult, parse_policy, run_draft, run_sweep
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
    from planner.report.views.draft import render_markdown
    from planner.report.plots import tpf_plot

    assert "| pld | " in render_markdown(saved, None)
    assert len(tpf_plot(saved["policies"], back.samples)) > 1000
    s = run_sweep(SMALL, n_values=[2], depth_values=[8], k_values=[2], mc_reps=5)
    assert isinstance(s, SweepResult) and [x["policy"] for x in s.rows].count("pld") == 1
    assert SweepResult.from_dict(json.loads(to_json(s.to_dict()))) == s
    with pytest.raises(InputError):
        DraftResult.from_dict(s.to_dict())


def test_vllm_and_hf_parameter_names_and_unknown_keys():
    """vLLM's / HF's names are aliases of the canonical ones; a key a policy does not take, or
    one given twice under two spellings, is refused."""
    from planner.decide.draft import parse_policy
    from planner.errors import InputError

    sp = parse_policy("ngram:prompt_lookup_min=2,prompt_lookup_max=4,num_speculative_tokens=5")
    assert sp.params == {"min_n": 2, "max_n": 4, "k": 5}
    assert parse_policy("mtp:num_speculative_tokens=5").params == {"k": 5}
    assert parse_policy("hf-pld:max_matching_ngram_size=3,prompt_lookup_num_tokens=10"
                        ).params == {"max_n": 3, "depth": 10}
    assert parse_policy("suffix:num_speculative_tokens=16").params == {"depth": 16}
    for bad in ("mtp:k=5,foo=1", "ar:k=1", "pld:min_n=2", "mtp:k=5,num_speculative_tokens=6"):
        with pytest.raises(InputError, match="does not take|given twice"):
            parse_policy(bad)


def _hf_reference_propose(x, nmax, D):
    """transformers' PromptLookupCandidateGenerator, transcribed: windows from
    min(nmax, len - 1) down to 1, first match followed by a known token."""
    m = len(x)
    for n in range(min(nmax, m - 1), 0, -1):
        for j in range(0, m - n + 1):
            if x[j:j + n] == x[m - n:] and j + n < min(j + n + D, m):
                return x[j + n:min(j + n + D, m)], n
    return [], 0


def test_hf_pld_differs_from_pld_on_a_hand_made_stream():
    """pld takes the most recent match of the last n tokens, hf-pld the first (and falls back
    to shorter windows): on this stream they propose different drafts at t = 0."""
    from models.drafting import lookup as lk

    prompt, comp = [1, 2, 3, 9, 1, 2, 4, 7, 1, 2], [3, 9, 1, 2, 4, 7, 5]
    pld = lk.draft_profiles([prompt], [comp], lk.PLD(n=2, D=4))
    hf = lk.draft_profiles([prompt], [comp], lk.HFPromptLookup(2, 4))
    # t = 0, context ends "1 2": pld drafts 4 7 1 2 (after the match at 4), hf 3 9 1 2 (at 0)
    assert pld.accept_len.tolist() == [0, 4, 4, 3, 0, 1, 0]
    assert hf.accept_len.tolist() == [4, 4, 4, 3, 0, 1, 0]
    # a window-1 fallback: no earlier "5 6", but an earlier "6"
    hf1 = lk.draft_profiles([[6, 8, 5, 6]], [[8, 0]], lk.HFPromptLookup(2, 3))
    assert hf1.match_len.tolist()[0] == 1 and hf1.accept_len.tolist()[0] == 1
    assert lk.draft_profiles([[6, 8, 5, 6]], [[8, 0]], lk.PLD(n=2, D=3)).proposed[0] == 0
    # the profile equals the transcription of the transformers generator on random streams
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.integers(0, 4, 40).tolist()
        P, nmax, D = int(rng.integers(2, 20)), int(rng.integers(1, 4)), int(rng.integers(1, 6))
        got = lk.draft_profiles([x[:P]], [x[P:]], lk.HFPromptLookup(nmax, D))
        want = lk.reference_profile(x[:P], x[P:], lambda c, nmax=nmax, D=D: _hf_reference_propose(c, nmax, D))
        assert got.accept_len.tolist() == want.accept_len.tolist()
        assert got.match_len.tolist() == want.match_len.tolist()
        assert got.proposed.tolist() == want.proposed.tolist()


def test_vllm_counters_follow_vllm_definitions():
    """The counters of a lookup policy recomputed from the step trace of its walk
    (start = 1, as a vLLM server counts), and MTP K = 7 on the shipped capture against the
    live record's counters (mean acceptance length 3.8493, per-position 0.7291 ...)."""
    from models.drafting import lookup as lk
    from models.drafting.capture import load_capture
    from planner.decide.draft import parse_policy, run_draft

    r = run_draft(SMALL, [parse_policy("pld:n=2,depth=8")], n_boot=100, mc_reps=2, seed=0,
                  start=1).to_dict()
    v = r["policies"][1]["vllm_counters"]
    cap = load_capture(SMALL)
    w = lk.draft_profiles(cap, lk.PLD(n=2, D=8)).walk(start=1)
    drafted = w.step_proposed > 0
    a = w.step_accepted[drafted]
    assert v["convention"] == "vllm"
    assert v["num_drafts"] == drafted.sum()
    assert v["num_draft_tokens"] == w.step_proposed.sum()
    assert v["num_accepted_tokens"] == a.sum()
    assert v["draft_acceptance_rate"] == pytest.approx(a.sum() / w.step_proposed.sum())
    assert v["mean_acceptance_length"] == pytest.approx(1 + a.sum() / drafted.sum())
    assert v["acceptance_rate_per_position"][:3] == pytest.approx(
        [(a >= i).mean() for i in (1, 2, 3)])
    assert r["policies"][0]["vllm_counters"]["num_drafts"] == 0  # ar drafts nothing

    m = run_draft(None, [parse_policy("mtp:num_speculative_tokens=7")], n_boot=100,
                  mc_reps=20, seed=0, start=1).to_dict()["policies"][1]["vllm_counters"]
    assert m["mean_acceptance_length"] == pytest.approx(3.8493, abs=0.03)
    assert m["acceptance_rate_per_position"] == pytest.approx(
        [0.7291, 0.5537, 0.4393, 0.3609, 0.3013, 0.2518, 0.2132], abs=0.015)
    assert m["num_draft_tokens"] == pytest.approx(7 * m["num_drafts"])


def _tiny_capture(path, n_prompts, length):
    with open(path, "w") as f:
        for i in range(n_prompts):
            f.write(json.dumps({"id": f"p{i}", "prompt_token_ids": list(range(10 + i, 40 + i)),
                                "completion_token_ids": list(range(20 + i, 20 + i + length))})
                    + "\n")
    return path


@pytest.mark.parametrize("n_prompts,length", [(6, 1), (6, 2), (2, 100)])
def test_too_small_a_capture_is_refused_naming_it(tmp_path, cli, n_prompts, length):
    """Issue 10: 6 prompts with 1- or 2-token completions printed 'worth a run' / 'not worth a
    run'; below the floors (3 prompts, 4 walked tokens per prompt, 32 in all) draft and the
    sweep exit 2 with one line naming the capture."""
    cap = _tiny_capture(tmp_path / "tiny.jsonl", n_prompts, length)
    for argv in (("draft", cap), ("draft-sweep", cap)):
        code, out, err = cli(*argv)
        assert code == 2 and err.count("\n") == 1, err
        assert "tiny.jsonl" in err and "too little capture" in err and not out


def test_limited_capture_says_too_little_evidence():
    """6 prompts x 48 tokens: above the refuse floors, below the limited ones: no policy is
    called worth a run, the JSON says why."""
    from planner.decide.draft import EVIDENCE_FLOORS, parse_policy, run_draft

    r = run_draft(SMALL, [parse_policy("pld"), parse_policy("mtp")], n_boot=100, mc_reps=5,
                  seed=1).to_dict()
    ev = r["evidence"]
    assert (ev["level"], ev["prompts"], ev["tokens"]) == ("limited", 6, 288)
    assert ev["floors"] == EVIDENCE_FLOORS["limited"]
    assert ev["reasons"] == ["6 prompts < 12", "288 walked tokens (AR steps) < 512"]
    assert r["worth_a_run"]["worth"] is False and r["worth_a_run"]["worth_policies"] == []
    assert r["worth_a_run"]["verdict"].startswith("too little evidence (6 prompts < 12")
    assert all(not p["worth_a_run"]["worth"] for p in r["policies"] if p["worth_a_run"])


@pytest.mark.parametrize("spec", ["pld:", "pld:,", "pld:n=3,", "pld:,n=3", "pld:n=", "pld:=3"])
def test_one_policy_grammar(spec, cli):
    """NAME or NAME:KEY=VALUE,...: an empty list after ':' and empty items are refused alike."""
    code, out, err = cli("draft", SMALL, "-p", spec)
    assert code == 2 and err.count("\n") == 1 and "policy" in err


def test_one_name_for_the_draft_depth():
    """depth= is the one spelling in outputs; D=, num_speculative_tokens= and (hf-pld)
    prompt_lookup_num_tokens= are aliases; --num-speculative-tokens / --depth-values are
    accepted beside --depth / --d-values."""
    from planner.decide.draft import parse_policy

    for s in ("pld:D=8", "pld:depth=8", "pld:num_speculative_tokens=8"):
        assert parse_policy(s).label == "pld(depth=8)"
    assert parse_policy("hf-pld:prompt_lookup_num_tokens=8").label == "hf-pld(depth=8)"
    out = run("draft-sweep", SMALL, "--depth-values", "8", "--n-values", "2", "--k-values",
              "2", "--mc-reps", "5", "--json")
    rows = json.loads(out.stdout)["rows"]
    assert [r["params"] for r in rows if r["policy"] == "pld"] == [{"n": 2, "depth": 8}]
    assert [r["from_capture"] for r in rows if r["policy"] == "mtp"] == [False]


def test_default_capture_is_named_not_located():
    """Without a CAPTURE the result names the shipped example, never a machine path."""
    p = run("draft", "-p", "pld", "--bootstrap", "100", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["capture"]["path"] == "embedded:draft_default_capture.jsonl.gz"
    assert r["inputs"]["files"][0]["name"] == "embedded:draft_default_capture.jsonl.gz"
    assert str(ROOT) not in p.stdout and r["evidence"]["level"] == "ok"


@pytest.mark.parametrize("command,args,option", [
    ("draft", ["--mc-reps", "100000000"], "--mc-reps"),
    ("draft-sweep", ["--mc-reps", "100000000"], "--mc-reps"),
    ("draft", ["--minutes-per-run", "1e308"], "--minutes-per-run"),
    ("draft", ["--price-per-hour", "1e308"], "--price-per-hour"),
    ("draft", ["--baseline-tps", "1e308"], "--baseline-tps"),
    ("draft", ["--sigma-tps", "0"], "--sigma-tps"),
    ("draft", ["--sigma-tps", "1e308"], "--sigma-tps"),
    ("draft", ["--platform", "foo"], "--platform"),
])
def test_out_of_range_options_name_the_option(command, args, option):
    extra = ["--bootstrap", "100"] if command == "draft" else []
    p = run(command, str(SMALL), *extra, *args)
    assert p.returncode == 2, p.stdout[-300:]
    assert p.stderr.strip().count("\n") == 0 and "Traceback" not in p.stderr
    assert f"field '{option}'" in p.stderr, p.stderr


def test_headline_names_the_policy_with_the_highest_gain():
    p = run("draft", str(ROOT / "examples" / "captures" / "mtp_spec_on_k7_int4_frontier.jsonl.gz"),
            "-p", "mtp", "-p", "hybrid-max", "-p", "suffix-first", "--baseline", "mtp",
            "--baseline-tps", "307", "--bootstrap", "200", "--mc-reps", "20", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    gains = {q["label"]: q["projected_tps"]["point"] for q in r["policies"]
             if not q["is_baseline"]}
    w = r["worth_a_run"]
    assert w["best_policy"] == max(gains, key=gains.get)
    assert w["best_policy"].startswith("hybrid-max")
    assert w["best_runnable"].startswith("suffix-first") and w["worth"] is False
    assert w["verdict"].startswith(f"best projected: {w['best_policy']}")
    assert "upper bound" in w["verdict"] and "best runnable: suffix-first" in w["verdict"]
    # suffix-first verifies MTP drafts: a model row, labelled so (no capture row given)
    assert w["basis"] == "model" and w["headline_policy"].startswith("suffix-first")
    assert "best runnable: suffix-first(k=7,lookup=suffix) †: not worth a run" in w["verdict"]


def test_default_headline_is_led_by_a_capture_row_and_names_the_model_row():
    """New-user report: on the shipped AR capture 'worth a run: +304.0 TPS ... (best:
    mtp(k=7))' was led by the MTP row, whose numbers come from the acceptance curve (†), not
    from the capture's tokens. The headline now leads with the best row measured on the
    capture (suffix, +41.2 TPS) and names mtp(k=7) † as projected, with its PI."""
    p = run("draft", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    w = r["worth_a_run"]
    rows = {q["label"]: q for q in r["policies"] if not q["is_baseline"]}
    measured = {k: q["projected_tps"]["point"] for k, q in rows.items() if q["from_capture"]}
    assert w["basis"] == "capture" and w["headline_policy"] == max(measured, key=measured.get)
    assert w["headline_policy"] == "suffix" and rows["suffix"]["worth_a_run"]["worth"]
    assert w["verdict"].startswith("worth a run: +41.2 TPS projected")
    assert "(best measured on this capture's tokens: suffix)" in w["verdict"]
    mtp = rows["mtp(k=7)"]["tokens_per_forward"]
    # the shipped capture holds the calibration prompts: their measured counters
    assert (f"model-based best: mtp(k=7) †, +304.0 TPS projected from the MTP counters "
            f"measured on these prompts (see †), not from this capture's own tokens, "
            f"tokens/forward {mtp['point']:.3f}, new "
            f"prompt set 90 % PI [{mtp['pi_low']:.3f}, {mtp['pi_high']:.3f}]") in w["verdict"]
    # unchanged: the highest-gain row is still reported as such
    assert w["best_policy"] == "mtp(k=7)" and w["best_runnable"] == "mtp(k=7)"
    t = run("draft")
    assert t.returncode == 0, t.stderr
    assert "(best measured on this capture's tokens: suffix); model-based" in \
        " ".join(t.stdout.split())


def test_headline_of_model_rows_only_says_so():
    """Without a capture-based row the model row leads, labelled † and projected in the same
    sentence, and the line says its assurance integrates over the content model's prediction
    interval (this capture is not the calibration prompts)."""
    p = run("draft", str(SMALL), "-p", "mtp", "--bootstrap", "200", "--mc-reps", "20",
            "--json", "--baseline-tps", "150")
    assert p.returncode == 0, p.stderr
    w = json.loads(p.stdout)["worth_a_run"]
    assert w["basis"] == "model" and w["headline_policy"] == "mtp(k=7)"
    assert ("(best: mtp(k=7) †, projected from the MTP acceptance curve (see †), not measured "
            "on this capture") in w["verdict"]
    assert w["verdict"].endswith("its assurance integrates over that prediction interval)")


AIME = ROOT / "examples" / "captures" / "ar_longform_aime_int4.jsonl.gz"


@pytest.mark.slow
def test_model_row_tps_carries_the_prediction_interval():
    """A content-model row on new prompts: the TPS row has the tokens/forward PI mapped through
    the cost model, worth-a-run integrates over it and says the model's uncertainty dominates;
    capture rows keep the bootstrap only (new-user report: mtp at 662 TPS [645, 679] with a
    tokens/forward PI of about +-17 %)."""
    p = run("draft", str(AIME), "-p", "mtp", "-p", "suffix", "--seed", "1", "--json")
    assert p.returncode == 0, p.stderr
    rows = {r["label"]: r for r in json.loads(p.stdout)["policies"]}
    m, tpf = rows["mtp(k=7)"]["projected_tps"], rows["mtp(k=7)"]["tokens_per_forward"]
    for side in ("pi_low", "pi_high"):  # TPS proportional to tokens/forward at one step time
        assert m[side] == pytest.approx(m["point"] * tpf[side] / tpf["point"], rel=1e-12)
    assert m["pi_low"] < m["ci_low"] - 50 and m["pi_high"] > m["ci_high"] + 50
    w = rows["mtp(k=7)"]["worth_a_run"]
    mu = w["model_uncertainty"]
    assert mu["dominates_run_noise"] and mu["sd_tps"] > 10 * w["sigma_tps"]
    # the gain draws carry the model's spread: their 95 % interval is wider than the PI's 90 %
    assert w["gain_tps"]["ci_low"] < mu["gain_pi_low"] < mu["gain_pi_high"] < \
        w["gain_tps"]["ci_high"]
    assert "not run noise, dominates" in w["verdict"]
    for lab in ("ar", "suffix"):
        assert "pi_low" not in rows[lab]["projected_tps"]
        assert "model_uncertainty" not in (rows[lab]["worth_a_run"] or {})


def test_model_spread_lowers_p_run_beats_baseline():
    """Integrating over a wide prediction interval pulls P(the run beats the baseline) of a
    small projected gain towards 1/2; without it the bootstrap alone says near certain."""
    from types import SimpleNamespace
    from planner.decide.draft import model_spread_draws

    rng = np.random.default_rng(0)
    tps = 160.0 + rng.normal(0, 1.0, 4000)          # bootstrap: 160 +- 1 TPS, baseline 150
    tpf = {"point": 2.0, "pi_low": 1.6, "pi_high": 2.4}
    pred = SimpleNamespace(ratio_low=0.8, ratio_high=1.2)
    wide, spread = model_spread_draws(pred, tps, 160.0, tpf, np.random.default_rng(1))
    assert (spread["tps_pi_low"], spread["tps_pi_high"]) == pytest.approx((128.0, 192.0))
    # the split Normal reproduces the 90 % bounds
    q = np.quantile(wide / tps, [0.05, 0.95])
    assert q == pytest.approx([0.8, 1.2], abs=0.02)
    from scipy.special import ndtr
    narrow = float(ndtr((tps - 150) / (0.6 * np.sqrt(2))).mean())
    widened = float(ndtr((wide - 150) / (0.6 * np.sqrt(2))).mean())
    assert narrow > 0.999 and 0.6 < widened < 0.8


def test_one_noise_model_for_p_one_run_and_the_sizing():
    """P(one run beats) and the sigma shown use the platform prior the runs/arm sizing uses
    (new-user report: 'noise sigma 0.63', from the N = 4 repeats' 0.378 %, beside a sizing on
    the hf-a10g-small prior of ~0.8 % between allocations); --sigma-tps still fixes it."""
    from models.stats.noise import platform_prior
    from scipy.special import ndtr
    from planner.decide.draft import predictive_run_sd

    prior = platform_prior("hf-a10g-small")
    rel = predictive_run_sd(prior)
    assert np.median(rel) == pytest.approx(prior.total_sd_median(), rel=0.02)
    assert 0.0080 < prior.total_sd_median() < 0.0095       # tau 0.802 % dominates
    args = ("draft", str(SMALL), "-p", "pld", "-p", "suffix", "--baseline", "pld",
            "--bootstrap", "200", "--seed", "2", "--json", "--baseline-tps", "150")
    d = json.loads(run(*args).stdout)
    st = d["settings"]["noise"]
    assert st["sigma_tps"] == pytest.approx(150 * prior.total_sd_median(), rel=1e-9)
    assert "hf-a10g-small" in st["label"] and "new allocation" in st["label"]
    w = d["policies"][1]["worth_a_run"]
    g = w["gain_tps"]
    # integrating over the prior's spread: between the fixed-sigma values at its 5 % and 95 %
    lo, hi = np.quantile(rel, [0.05, 0.95]) * 150 * np.sqrt(2)
    p_at = [ndtr(g["mean"] / s) for s in (hi, lo)]
    assert min(p_at) - 0.05 < w["p_run_beats_baseline"] < max(p_at) + 0.05
    d2 = json.loads(run(*args, "--sigma-tps", "0.5").stdout)
    assert d2["settings"]["noise"]["sigma_tps"] == 0.5
    assert d2["settings"]["noise"]["label"] == "stated sigma"
    # the sizing simulates the stated sd too (new-user report: --sigma-tps 1e6 moved only
    # P(one run beats) to 0.50 while "1 run per arm confirms it with assurance 0.99")
    w2 = d2["policies"][1]["worth_a_run"]
    assert w2["runs_per_arm"] is not None and w2["runs_per_arm"] <= w["runs_per_arm"]
    gain = w["gain_tps"]["point"]
    noisy = json.loads(run(*args, "--sigma-tps", str(round(abs(gain) * 3, 3))).stdout)
    w3 = noisy["policies"][1]["worth_a_run"]
    # a run sd of 3 gains: one run per arm beats the baseline about ndtr(1 / (3 sqrt 2))
    assert w3["p_run_beats_baseline"] < 0.7
    assert w3["runs_per_arm"] is None or w3["runs_per_arm"] > 8


def test_a_repeated_capture_keeps_the_intervals_of_its_prompts(cli, tmp_path):
    """New-user report: a capture with every record doubled narrowed the bootstrap interval by
    about sqrt(2). Repeated records are resampled with their prompt (cluster bootstrap): a
    capture repeated 3 times gives the point and interval of the original (the issue's
    draft-big benchmark is such a file)."""
    import gzip
    import json

    src = Path(__file__).resolve().parents[2] / "fixtures" / "draft_small_capture.jsonl.gz"
    lines = [ln for ln in gzip.open(src, "rt") if ln.strip()]
    once, thrice = tmp_path / "once.jsonl", tmp_path / "thrice.jsonl"
    once.write_text("".join(lines))
    thrice.write_text("".join(lines * 3))
    out = {}
    for f in (once, thrice):
        code, txt, err = cli("draft", f, "-p", "pld", "--json")
        assert code == 0, err
        out[f.name] = json.loads(txt)
    a, b = out["once.jsonl"], out["thrice.jsonl"]
    pa, pb = a["policies"][1]["tokens_per_forward"], b["policies"][1]["tokens_per_forward"]
    assert pa["point"] == pytest.approx(pb["point"], rel=1e-12)
    wa, wb = pa["ci_high"] - pa["ci_low"], pb["ci_high"] - pb["ci_low"]
    assert wb == pytest.approx(wa, rel=0.15)      # not narrowed by sqrt(3)
    assert "duplicates" not in a["capture"]
    assert b["capture"]["duplicates"]["distinct_prompts"] == len(lines)
    code, txt, _ = cli("draft", thrice, "-p", "pld")
    assert "records repeat earlier ones" in txt


def test_sync_factor_cannot_make_a_synchronous_policy_beat_its_asynchronous_self():
    """--sync-factor 0.5 is refused (it projected 612.8 TPS for suffix-first); at 1, the
    lowest value, a synchronous policy projects exactly what the same walk without the sync
    penalty would, and a larger factor only lowers it."""
    p = run("draft", str(SMALL), "-p", "suffix", "--sync-factor", "0.5")
    assert p.returncode == 2 and "--sync-factor" in p.stderr and "[1, 100]" in p.stderr

    from planner.decide.draft import parse_policy, run_draft

    def tps(f):
        r = run_draft(SMALL, [parse_policy("suffix")], n_boot=100, seed=0, baseline_tps=100.0,
                      cost_overrides={"sync_factor": f})
        return r.policies[1]["projected_tps"]["point"], r.policies[1]["step_ms"]

    (t1, s1), (t12, s12), (t2, s2) = tps(1.0), tps(1.2), tps(2.0)
    assert t1 > t12 > t2 and s12 == pytest.approx(1.2 * s1) and s2 == pytest.approx(2 * s1)


def test_unused_lookup_and_bad_per_prompt_name_their_option(cli):
    """New-user report: --lookup nope was taken when no hybrid ran, and a bad --per-prompt
    run named field 'run'."""
    code, _, err = cli("draft", "--lookup", "nope")
    assert code == 2 and "hybrid lookup must be pld, hf-pld, ngram or suffix" in err
    code, _, err = cli("draft", "--per-prompt", "C")
    assert code == 2 and "field '--per-prompt'" in err
