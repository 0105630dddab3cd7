"""Issue 21, items 1 and 2: what a draft projection rests on (re-priced constants, flip
points) and the capture's own stack first."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "tests" / "fixtures" / "draft_small_capture.jsonl.gz"
CAPS = ROOT / "examples" / "captures"
K7 = CAPS / "mtp_spec_on_k7_int4_frontier.jsonl.gz"
K6 = CAPS / "mtp_spec_on_k6_int4_qat_body.jsonl.gz"


def _specs(*texts):
    from planner.decide.draft.policy import default_specs

    return default_specs(list(texts))


# ---------------------------------------------------------------- re-pricing is exact
def test_repriced_walks_equal_walks_priced_with_the_other_constants():
    """A walk's time decomposes into the cost model's linear features: re-pricing it under
    another sync factor, drafter and per-row cost equals walking again with those constants,
    for every family (the synchronous flag of each declaration is the walk's)."""
    from models.drafting.capture import load_capture
    from models.drafting.cost import load_cost_model
    from models.drafting.policies import WalkContext, registry
    from planner.decide.draft.policy import lookup_profile
    from planner.decide.draft.reprice import policy_sums

    cap = load_capture(SMALL)
    L = np.array([len(c) for c in cap.completions])
    curves = np.broadcast_to(load_cost_model and
                             np.array([0.7, 0.55, 0.44, 0.36, 0.3, 0.25, 0.21]), (len(L), 7))
    base = load_cost_model("F")
    other = load_cost_model("F", sync_factor=1.5, drafter_per_token_ms=0.4,
                            verify_per_row_ms=0.07, host_ms=0.1)
    for spec in _specs("ar", "pld", "ngram", "suffix", "mtp", "suffix-first", "tree",
                       "hybrid-max"):
        pol = registry()[spec.name]
        res = {}
        for c in (base, other):
            ctx = WalkContext(L, c.step_ms, 0, 4, np.random.default_rng(3), curves,
                              lambda n, p: lookup_profile(cap, n, p),
                              lambda *a: (0.0, None))
            res[c.sync_factor] = pol.walk(ctx, dict(spec.params))[0]
        s = policy_sums(res[1.2], base, pol.synchronous, pol.stochastic)
        F, ex, D, V = s.forwards, s.rows_extra, s.drafter, s.base_units
        sf = other.sync_factor if pol.synchronous else 1.0
        t = sf * (other.verify_base_ms * V + other.verify_per_row_ms * ex
                  + other.drafter_per_token_ms * D + other.host_ms * F)
        np.testing.assert_allclose(t, res[1.5].time_ms, rtol=1e-10, err_msg=spec.label)


def test_reprice_replays_the_runs_bootstrap_draws():
    """At the run's own constants the re-priced bootstrap draws of every policy's rate are
    the run's own (same prompts, same Monte-Carlo replicate), so a flip point is found on
    the draws the verdict was made from."""
    from models.drafting.bootstrap import bootstrap_ratios
    from models.drafting.capture import load_capture
    from models.drafting.cost import load_cost_model
    from models.drafting.policies import WalkContext, registry
    from planner.decide.draft.policy import lookup_profile
    from planner.decide.draft.reprice import Repricer, policy_sums

    cap = load_capture(SMALL)
    L = np.array([len(c) for c in cap.completions])
    curves = np.broadcast_to(np.array([0.7, 0.55, 0.44, 0.36, 0.3, 0.25, 0.21]), (len(L), 7))
    cost = load_cost_model("F")
    runs = []
    for spec in _specs("ar", "pld", "mtp", "tree"):
        pol = registry()[spec.name]
        ctx = WalkContext(L, cost.step_ms, 0, 6, np.random.default_rng(1), curves,
                          lambda n, p: lookup_profile(cap, n, p), lambda *a: (0.0, None))
        runs.append((pol, pol.walk(ctx, dict(spec.params))[0]))
    stats = {}
    for i, (_, r) in enumerate(runs):
        stats[f"tpf{i}"] = (r.tokens, r.forwards)
        stats[f"rate{i}"] = (r.tokens, r.time_ms)
    seed = np.random.SeedSequence(7)
    boot = bootstrap_ratios(stats, n_boot=300, seed=np.random.default_rng(seed))
    rep = Repricer([policy_sums(r, cost, p.synchronous, p.stochastic) for p, r in runs],
                   [(k, np.atleast_2d(n).shape[0]) for k, (n, _) in stats.items()], 300, seed)
    for i, (_, r) in enumerate(runs):
        draws, pt = rep.rates(i, cost)
        np.testing.assert_allclose(draws, boot[f"rate{i}"], rtol=1e-12)
        assert pt == pytest.approx(r.tokens.sum() / r.time_ms.sum(), rel=1e-12)


# ------------------------------------------------------------ the flip on the K=7 case
@pytest.fixture(scope="module")
def k7_case():
    from planner.decide.draft import run_draft

    specs = _specs("mtp", "tree", "suffix-first")
    base = _specs("mtp")[0]
    kw = dict(baseline=base, baseline_tps=307, mc_reps=60, n_boot=800)
    at = {}

    def run(sync):
        if sync not in at:
            at[sync] = run_draft(K7, specs, cost_overrides={"sync_factor": sync}, **kw)
        return at[sync]

    return run


def test_sync_factor_flip_point_is_where_the_verdict_flips(k7_case):
    """Issue 21: on the K=7 capture, tree is 'not worth' at the default sync factor 1.20 and
    'worth' at 1.0; the result now says where in [1.00, 1.26] it flips, and re-running at
    either side of that point gives the two verdicts."""
    r = k7_case(1.2)
    entry = next(e for e in r.rests_on if e["name"] == "sync_factor")
    assert (entry["low"], entry["high"], entry["value"]) == (1.0, 1.26, 1.2)
    assert entry["conclusion"] == "not worth a run" and r.worth_a_run["worth"] is False
    flip = entry["flip_at"]
    assert 1.0 < flip < 1.02
    assert "worth a run (tree" in entry["note"] and "below" in entry["note"]
    assert f"{flip:.3f}" in entry["note"]
    below, above = k7_case(round(flip - 0.004, 4)), k7_case(round(flip + 0.006, 4))
    assert below.worth_a_run["worth_policies"][:1] == ["tree(k=7,lookup=suffix)"]
    assert not above.worth_a_run["worth_policies"]


def test_rests_on_lists_every_deciding_constant_with_range_and_source(k7_case):
    from planner.results.rests_on import rests_on_from_list

    r = k7_case(1.2)
    entries = rests_on_from_list(r.rests_on)
    names = [e.name for e in entries]
    assert names == ["sync_factor", "drafter_per_token_ms", "verify_per_row_ms",
                     "cost_profile", "acceptance_curve", "prompt_set_model", "tps_anchor"]
    for e in entries:
        assert e.source and e.note and e.conclusion
        if e.low is not None:
            assert e.low <= (e.value if isinstance(e.value, float) else e.low) <= e.high
    acc = next(e for e in entries if e.name == "acceptance_curve")
    assert acc.value == "F7_P128_calib" and len(acc.alternatives) >= 3
    assert next(e for e in entries if e.name == "tps_anchor").flip_at is None


def test_sync_factor_refused_below_one_and_its_range_documented():
    """One meaning (the whole synchronous step over the asynchronous one): below 1 refused in
    one line (exit 2); the plausible range and its source are in the help and the docs."""
    p = subprocess.run([sys.executable, "-m", "planner", "draft", str(SMALL), "-p", "suffix",
                        "--sync-factor", "0.99"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "--sync-factor" in p.stderr
    doc = (ROOT / "docs" / "drafting.md").read_text()
    assert "1.15-1.26" in doc and "[1.00, 1.26]" in doc


# ---------------------------------------------------------------- the capture's own stack
def test_shipped_capture_fingerprints():
    from models.drafting.acceptance_stacks import SHIPPED_CAPTURES, fingerprint, match_stack
    from models.drafting.capture import load_capture

    for fp, (stem, _, _) in SHIPPED_CAPTURES.items():
        for eos in (False, True):
            cap = load_capture(CAPS / f"{stem}.jsonl.gz", stop_at_eos=eos)
            assert fingerprint(cap.completions) == fp
            assert match_stack(cap).capture == stem


def test_k6_capture_reads_its_own_stack_and_k7_frontier_stays():
    """The K=6 QAT-body capture projected 3.629 tokens/forward from stack F's counters while
    its own live run measured 3.386; it now reads its own stack's measured curve
    (Q6_P128_int4_g32) and says so. The K=7 frontier on the bf16 reference capture stays
    3.849 (its curve is borrowed: the interval widens, the point does not move)."""
    from planner.decide.draft import run_draft

    r = run_draft(K6, _specs("mtp:k=6"), mc_reps=100, n_boot=300)
    mtp = r.policies[1]
    assert mtp["tokens_per_forward"]["point"] == pytest.approx(3.386, rel=0.01)
    st = r.acceptance["stack"]
    assert st["own"] and st["record"] == "Q6_P128_int4_g32" and not st["borrowed"]
    assert "own stack" in r.acceptance["note"]
    bf16 = run_draft(CAPS / "ar_reference_bf16.jsonl.gz", _specs("mtp"), mc_reps=100,
                     n_boot=300, start=1)
    st = bf16.acceptance["stack"]
    assert st["borrowed"] and st["spread"]["ratio_low"] < 0.95 and "borrowed" in st["note"]
    t = bf16.policies[1]["tokens_per_forward"]
    assert bf16.acceptance["tokens_per_forward_curve"] == pytest.approx(3.8493)
    assert t["pi_low"] < t["ci_low"] * 0.95  # widened by the stacks' spread


def test_explicit_curve_is_the_users_choice():
    from planner.decide.draft import run_draft

    r = run_draft(K6, _specs("mtp:k=6"), mc_reps=20, n_boot=200, acceptance="KS_P128_k6")
    st = r.acceptance["stack"]
    assert st["given"] and not st["borrowed"] and not st["own"]


def test_cached_hybrid_fit_equals_run_hybrid():
    """A sweep's hybrids share their fitted easiness curves: the same numbers as a hybrid
    fitted on its own."""
    from models.drafting.capture import load_capture
    from models.drafting.cost import load_cost_model
    from models.drafting.policies import WalkContext, registry
    from planner.decide.draft.policy import lookup_profile

    cap = load_capture(SMALL)
    L = np.array([len(c) for c in cap.completions])
    curves = np.broadcast_to(np.array([0.7, 0.55, 0.44, 0.36, 0.3, 0.25, 0.21]), (len(L), 7))
    cost = load_cost_model("F")
    for spec in _specs("suffix-first", "tree"):
        out = []
        for cache in (None, {}):
            ctx = WalkContext(L, cost.step_ms, 0, 5, np.random.default_rng(2), curves,
                              lambda n, p: lookup_profile(cap, n, p),
                              lambda *a: (1.5, None), cache=cache)
            out.append(registry()[spec.name].walk(ctx, dict(spec.params))[0])
        np.testing.assert_array_equal(out[0].time_ms, out[1].time_ms)
        np.testing.assert_array_equal(out[0].tokens, out[1].tokens)


def test_rests_on_in_every_view_and_saved_json(tmp_path):
    from planner.decide.draft import DraftResult, run_draft
    from planner.report.output import to_json
    from planner.report.views import draft as view

    r = run_draft(SMALL, _specs("pld", "mtp", "suffix-first"), mc_reps=10, n_boot=200)
    text = to_json(r.to_dict())
    saved = json.loads(text)
    assert [e["name"] for e in saved["rests_on"]][0] == "sync_factor"
    assert to_json(DraftResult.from_dict(saved).to_dict()) == text
    md = view.render_markdown(saved)
    assert "## Rests on" in md and "sync_factor" in md
    assert "Rests on" in view.render_html(saved)
    old = {k: v for k, v in saved.items() if k != "rests_on"}  # saved before it existed
    assert "Rests on" not in view.render_markdown(old)
