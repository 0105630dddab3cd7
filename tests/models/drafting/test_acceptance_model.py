"""Content acceptance model (v3, issue 12; v8, issue 21: + completion recurrence): the token-level walk, honest nested
leave-one-group-out, the n-gram reference, the stack transfer and the capture prediction.
Model layer only (no planner)."""

import copy

import numpy as np
import pytest

from models.drafting import acceptance_model as am
from models.drafting import content_prediction as cp
from models.drafting.acceptance import default_model
from models.drafting.capture import load_capture

P128 = "examples/captures/mtp_spec_on_k7_int4_frontier.jsonl.gz"


def test_calibration_table_pooled_counters():
    t = am.load_calibration()
    assert t["prompt_set_hash"] == "43df0c18b56abde3" and len(t["rows"]) == 128
    nd = sum(r["num_drafts"] for r in t["rows"])
    na = sum(r["num_accepted"] for r in t["rows"])
    assert 1 + na / nd == pytest.approx(3.854, abs=0.003)  # runs A 3.857 + B 3.851 pooled
    # a left-out group meets a reference without its own domain: lower predictability
    for g in ("aime2026", "gpqa_diamond", "mmlu_pro"):
        inside = [r for r in t["rows"] if r["group"] == g]
        assert np.mean([r["xng"]["-" + g] for r in inside]) < \
            np.mean([r["xng"]["all"] for r in inside])


def _walk_python(p, k):
    """Plain recursion of the expected forwards (reference for the kernel)."""
    L = len(p)
    F = [0.0] * (L + k + 2)
    for t in range(L - 1, 0, -1):
        jmax = min(k, L - 1 - t)
        s, ef = 1.0, 0.0
        for j in range(jmax + 1):
            nxt = F[t + j + 1]
            if j < jmax:
                ef += s * (1 - p[t + j]) * nxt
                s *= p[t + j]
            else:
                ef += s * nxt
        F[t] = 1 + ef
    return (L - 1) / F[1]


def test_walk_kernel_against_python_and_limits():
    rng = np.random.default_rng(3)
    ps = [rng.uniform(0, 1, n) for n in (2, 9, 40)]
    off = np.r_[0, np.cumsum([len(p) for p in ps])]
    got = am.walk_tpf(np.concatenate(ps), off, 7)
    assert np.allclose(got, [_walk_python(p, 7) for p in ps], atol=1e-12)
    # all accepted: K+1 tokens per forward (up to the end of the request); none: 1
    one = am.walk_tpf(np.ones(1 + 8 * 50), np.array([0, 401]), 7)[0]
    assert one == pytest.approx(8.0)
    assert am.walk_tpf(np.zeros(100), np.array([0, 100]), 7)[0] == pytest.approx(1.0)
    # constant p: geometric chain, 1 + p + ... + p^7 away from the end
    p = 0.7
    assert am.walk_tpf(np.full(20001, p), np.array([0, 20001]), 7)[0] == \
        pytest.approx(sum(p ** j for j in range(8)), rel=2e-3)


def test_honest_leave_one_group_out_figures():
    """Everything fitted inside each fold; v8 (recur128 state) brings AIME from v3's -6.2 %
    to -3.0 %: all three inside +-5 % and inside their 90 % intervals (docs/drafting.md)."""
    rows = {r["group"]: r for r in am.leave_one_group_out(seed=0)}
    import json
    from importlib import resources
    shipped = json.loads(resources.files("models").joinpath(
        "data", "acceptance_validation.json").read_text())
    v8 = next(v for k, v in shipped.items() if k.startswith("v8 walk"))
    for r in v8:  # the shipped record (read by planner shift) is what the code gives
        for key in ("predicted", "measured", "error_pct", "pi_low", "pi_high"):
            assert r[key] == pytest.approx(rows[r["group"]][key], abs=6e-4)
        assert r["covered"] == rows[r["group"]]["covered"]
    assert rows["aime2026"]["error_pct"] == pytest.approx(-2.99, abs=0.05)
    assert rows["gpqa_diamond"]["error_pct"] == pytest.approx(2.27, abs=0.05)
    assert rows["mmlu_pro"]["error_pct"] == pytest.approx(1.29, abs=0.05)
    assert all(abs(r["error_pct"]) <= 5 for r in rows.values())
    assert rows["aime2026"]["measured"] == pytest.approx(4.680, abs=0.001)
    assert all(r["covered"] for r in rows.values())
    assert all(r["nu"] == 3 for r in rows.values())


def test_left_out_group_is_never_seen_by_the_fit(monkeypatch):
    """A fold that leaves AIME out reads no AIME counters and no n-gram state scored with
    AIME completions in the reference (nested, not just held out)."""
    t = am.load_calibration()
    keys = []
    real = am.calibration_states

    def spy(excluded=()):
        keys.append(tuple(sorted(excluded)))
        return real(excluded)

    monkeypatch.setattr(am, "calibration_states", spy)
    m0 = am.fit(t, exclude_groups=["aime2026"])
    assert keys and all("aime2026" in k for k in keys)
    t2 = copy.deepcopy(t)
    for r in t2["rows"]:
        if r["group"] == "aime2026":
            r["num_accepted"] *= 3
    m1 = am.fit(t2, exclude_groups=["aime2026"])
    assert np.allclose(m0.coef, m1.coef) and m0.tau == m1.tau


def test_shipped_fit_is_what_fit_gives():
    """A fresh install refits the shipped coefficients to 1e-4 of each one's standard error.

    Why that tolerance: the fit's conditioning, not the digits. The v8 coefficients are
    strongly correlated (recur128, own_hit and match16 overlap: condition number of their
    correlation matrix 2.3e4, of the covariance 1.1e6) and some are loosely identified
    (match16 slope 74 with SE 55, own-hit slope -1.5 with SE 3.7), so a relative tolerance
    on each digit would test the optimiser's stopping point, not the model: unpenalised, the
    separated own-hit slope made two installs 1 % apart. Under the prior, with the fourth
    fit pass, the mode moves by <= 1e-5 SE when the counters are perturbed by 1e-10 relative
    (1e5 times a build's ~1e-15 summation-order rounding) and by ~3e-6 SE when the start
    moves 1 % (:func:`test_fit_is_stable_under_perturbation`), so 1e-4 SE leaves a 10x
    margin over a perturbation far larger than any build's and is four orders below anything
    a prediction interval can see. Measured on the pinned versions numpy 2.4.6, SciPy 1.17.1,
    numba 0.65.1 (where the unpenalised v3 fit failed at rtol 1e-6).
    """
    m = am.default_content_model()
    f = am.fit()
    se = np.sqrt(np.diag(f.cov_unscaled) * f.s2)
    assert np.all(np.abs(m.coef - f.coef) <= 1e-4 * se)
    assert m.s2 == pytest.approx(f.s2, rel=1e-6) and m.tau == pytest.approx(f.tau, rel=1e-4)
    X0, off0 = am.calibration_states()
    assert np.allclose(m.predict_prompts(X0, off0), f.predict_prompts(X0, off0), rtol=1e-6)
    # the prior keeps the separated own-hit slope finite; recur128 carries the vocabulary
    assert -5 < m.coef[1] < 5 and m.coef[4] == pytest.approx(74.3, abs=0.1)
    assert m.coef[5] == pytest.approx(4.32, abs=0.01) and m.s2 < 0.0208  # v3's s2
    assert m.nu == 4 and m.groups == ["aime2026", "gpqa_diamond", "mmlu_pro"]
    X, off = am.calibration_states()
    t = am.load_calibration()
    y = np.array([1 + r["num_accepted"] / r["num_drafts"] for r in t["rows"]])
    assert np.corrcoef(m.predict_prompts(X, off), y)[0, 1] > 0.75  # easy fraction: 0.73


def test_fit_is_stable_under_perturbation(monkeypatch):
    """The tolerance of test_shipped_fit_is_what_fit_gives rests on this: counters perturbed
    by 1e-10 relative (far above a build's rounding) or a start 1 % off move the mode by
    under 3e-5 of each coefficient's standard error (measured 1.0e-5 and 2.7e-6)."""
    t = am.load_calibration()
    nd, na, g, L = am._counters(t)
    X, off = am.calibration_states()
    c0, cov, s2 = am._fit_c(X, off, np.log(na / nd))
    se = np.sqrt(np.diag(cov) * s2)
    rng = np.random.default_rng(1)
    c1, _, _ = am._fit_c(X, off, np.log(na * (1 + 1e-10 * rng.standard_normal(len(na))) / nd))
    assert np.max(np.abs(c1 - c0) / se) < 3e-5
    monkeypatch.setattr(am, "_C0", am._C0 * 1.01)
    c2, _, _ = am._fit_c(X, off, np.log(na / nd))
    assert np.max(np.abs(c2 - c0) / se) < 3e-5
    corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    assert 1e4 < np.linalg.cond(corr) < 1e5  # the conditioning the docstring above cites


def test_fit_needs_two_groups():
    from models.errors import ModelInputError
    with pytest.raises(ModelInputError):
        am.fit(exclude_groups=["aime2026", "gpqa_diamond"])


def test_states_of_calibration_prompts_match_the_shipped_ones():
    """capture_states on calibration prompts leaves their own completion out of the n-gram
    reference: the same states as the shipped fold 'all'."""
    cap = load_capture(P128).subset([0, 5, 17])
    X, off = am.capture_states(cap)
    Xs, offs = am._subset(*am.calibration_states(), [0, 5, 17])
    assert np.array_equal(off, offs) and np.allclose(X, Xs)


def test_ngram_reference_plain_python():
    ref = am.NgramReference([np.array([5, 6, 7, 5, 6, 8, 5, 6, 7])])
    # context 1 unseen: no prediction; 5->6; (5,6)->7 twice vs 8 once; 9 never follows
    assert list(ref.top1_hits([1], [5, 6, 7, 9])) == [False, True, True, False]
    assert list(ref.top1_hits([1], [5, 6, 8])) == [False, True, False]
    assert ref.top1_share([1], [5, 6, 7, 9]) == pytest.approx(0.5)


def test_theta_inverts_the_power_curve():
    F = default_model().curve
    t = np.array([1.5, 3.8493, 6.0])
    th = cp._theta(F, t)
    assert np.allclose(1 + (F[None] ** th[:, None]).sum(1), t, atol=1e-9)
    assert cp._theta(F, np.array([3.8493]))[0] == pytest.approx(1.0, abs=1e-3)


def test_capture_prediction_stack_transfer_seed_and_extrapolation_share():
    cap = load_capture("tests/fixtures/draft_small_capture.jsonl.gz")
    F = default_model().curve
    p = cp.for_capture(cap, F, 7, n_draws=500, seed=1)
    assert np.allclose(1 + p.curves.sum(1), p.tpf, atol=1e-6)  # stack F: the prediction
    assert p.ratio_low < 1 < p.ratio_high
    assert np.array_equal(p.draws, cp.for_capture(cap, F, 7, n_draws=500, seed=1).draws)
    assert p.model["model"] == am.MODEL_NAME and p.share_beyond == 0.0
    other = np.array([0.70, 0.52, 0.40, 0.32, 0.26, 0.21])  # another stack's K=6 curve
    q = cp.for_capture(cap, other, 4, n_draws=500, seed=1)
    assert np.allclose(q.curves, other[None, :4] ** cp._theta(F, p.tpf)[:, None])


def test_interval_fields_combine_model_and_sampling_error():
    cap = load_capture("tests/fixtures/draft_small_capture.jsonl.gz")
    p = cp.for_capture(cap, default_model().curve, 7, n_draws=500, seed=1)
    f = cp.interval_fields(p, 3.0, 2.7, 3.4)
    lo = 3.0 * np.exp(-np.hypot(np.log(p.ratio_low), np.log(2.7 / 3.0)))
    hi = 3.0 * np.exp(np.hypot(np.log(p.ratio_high), np.log(3.4 / 3.0)))
    assert f == {"pi_low": pytest.approx(lo), "pi_high": pytest.approx(hi)}
    assert f["pi_low"] < min(2.7, 3.0 * p.ratio_low) and f["pi_high"] > 3.4
    assert cp.interval_fields(None, 3.0, 2.7, 3.4) == {"pi_low": 2.7, "pi_high": 3.4}


def test_ngram_ids_beyond_18_bits_are_never_keyed():
    """Ids >= 2**18 would collide in the packed context keys: they are neither predicted nor
    used as context (another tokenizer's capture is outside the model's domain anyway)."""
    big = 1 << 18
    ref = am.NgramReference([np.array([5, 6, 7, 5, 6, 8, 5, 6, 7, big, 6, 9])])
    assert list(ref.top1_hits([1], [5, big, 6, 7])) == [False, False, False, True]
    assert list(ref.top1_hits([1], [5, 6, 7, 9])) == [False, True, True, False]


def _bench():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[3] / "bench" / "bench_shift_acceptance.py"
    spec = importlib.util.spec_from_file_location("bench_shift_acceptance", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_addendum4_decision_follows_the_preregistered_rule():
    """The pre-registered rule (addendum 4) applied to the recorded held-out figures: neither
    candidate passes (v5a: GPQA +12.8 %, v5b: GPQA +17.6 % and a worse in-sample fit), so
    v3 stays the shipped model and the +-5 % target stays missed."""
    import json
    from importlib import resources
    d = json.loads(resources.files("models").joinpath(
        "data", "acceptance_validation.json").read_text())
    prereg = json.loads(resources.files("models").joinpath(
        "data", "acceptance_model_prereg.json").read_text())
    assert set(prereg["addendum_4"]["candidates"]) == {"content-walk-v5a", "content-walk-v5b"}
    a4 = d["addendum_4"]
    v3 = next(v for k, v in d.items() if k.startswith("v3 walk"))
    cands = {"content-walk-v5a": next(v for k, v in d.items() if k.startswith("v5a ")),
             "content-walk-v5b": next(v for k, v in d.items() if k.startswith("v5b "))}
    dec = _bench().apply_rule((v3, a4["in_sample"]["content-walk-v3"]),
                              {n: (r, a4["in_sample"][n]) for n, r in cands.items()})
    rec = a4["decision"]
    assert dec["v3_max_abs_error_pct"] == pytest.approx(rec["v3_max_abs_error_pct"], abs=0.01)
    assert dec["checks"] == rec["checks"] and dec["ships"] == rec["ships"]
    assert dec["ships"] == "content-walk-v3" and not dec["target_met"]
    assert not any(c["passes"] for c in dec["checks"].values())
    assert am.MODEL_NAME.startswith("content-walk-v8")  # addenda 6-7 replaced v3 since
    v5a = {r["group"]: r["error_pct"] for r in cands["content-walk-v5a"]}
    assert v5a["aime2026"] == pytest.approx(-5.10, abs=0.05)
    assert v5a["gpqa_diamond"] == pytest.approx(12.77, abs=0.05)
    # more held-out units than three groups: every left-out prompt and 9 disjoint chunks
    cov = a4["coverage_90"]["content-walk-v3"]
    assert cov["prompts_total"][1] == 128 and cov["chunks_covered"][1] == 9


@pytest.mark.slow
def test_v5_candidates_never_see_the_left_out_group():
    """Addendum 4's candidates are nested like v3: with AIME left out, no state is scored
    against AIME completions (training prompts against the other training group, AIME
    against the training groups), and AIME's counters do not move the fit."""
    b = _bench()
    t = am.load_calibration()
    nd, na, g, L = am._counters(t)
    z = b._npz()
    off = z["offsets"]
    X, _ = b.v5_states(["aime2026"], g, local=False)
    for i in range(len(g)):
        key = "xng_-aime2026" + ("" if g[i] == "aime2026" else f"-{g[i]}")
        assert np.array_equal(X[off[i]:off[i + 1], 2], z[key][off[i]:off[i + 1]])
    # the fits' first 40 evaluations (the full fits take ~3,000 each along a flat ridge): a
    # counter that leaked into a fold would move its first step already
    m0 = b.v5_fit(g, nd, na, L, ["aime2026"], local=True, max_nfev=40)[0]
    na2 = np.where(g == "aime2026", na * 3, na)
    m1 = b.v5_fit(g, nd, na2, L, ["aime2026"], local=True, max_nfev=40)[0]
    assert np.allclose(m0.coef, m1.coef) and m0.tau == m1.tau and len(m0.coef) == 7
    # and the check can fail: the same counters tripled on a training group move the fit
    na3 = np.where(g == "gpqa_diamond", na * 3, na)
    m3 = b.v5_fit(g, nd, na3, L, ["aime2026"], local=True, max_nfev=40)[0]
    assert not np.allclose(m0.coef, m3.coef)


def test_recur_mask_counts_the_completion_only():
    """recur128: token t's id among the previous 128 completion tokens (prompt excluded)."""
    c = np.array([5, 6, 5, 7, 6, 6])
    assert list(am.recur_mask(c)) == [False, False, True, False, True, True]
    assert list(am.recur_mask(c, window=1)) == [False, False, False, False, False, True]
    far = np.r_[9, np.arange(100, 228), 9]  # 9 again 129 tokens later: outside the window
    assert not am.recur_mask(far)[-1] and am.recur_mask(far, window=129)[-1]
    assert am.STATES[-1] == "recur128" and am.calibration_states()[0].shape[1] == 6


def test_addendum_6_7_decision_is_recorded():
    """v7 (prompt in the window) failed the 11-fold criterion; v8 passed all four."""
    import json
    from importlib import resources
    d = json.loads(resources.files("models").joinpath(
        "data", "acceptance_validation.json").read_text())["addendum_6_7"]
    assert not d["v7"]["passes"] and d["v7"]["non_domain_fold_max_abs_error_pct"] > 4.6
    assert d["v8"]["passes"] and d["ships"] == "content-walk-v8"
    assert d["v8"]["logo_max_abs_error_pct"] <= 5.66 and d["v8"]["s2"] < d["v3"]["s2"]
