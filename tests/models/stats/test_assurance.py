"""Assurance simulation (models.stats.assurance, models.stats.sequential): exactness, brute force, real
runs, MCMC."""

from __future__ import annotations

import math

import numpy as np
import pytest

from models.stats.assurance import Truth, evaluate_fixed, prior_truth, simulate
from models.stats.assurance_analysis import GridAnalysis, analysis_grid, decide, decide_analysis
from models.stats.decision import A_BETTER, B_BETTER, LABEL_CODES as LABEL, label_from
from models.stats.designs import Existing, flatten, paired_layout, separate_layout
from models.stats.noise import NoisePrior, ScalePrior, platform_prior
from models.stats.sequential import evaluate_sequential, sequential_plan
from models.stats.mixture import mixture_summary
from models.stats.tps_exact import SuffStats, conditional_posterior, fit_exact
from models.stats.tps_model import MU_PRIOR_SD, TPSData

BASE = 307.08
ROPE = math.log1p(0.001)                     # the default 0.1 %
#: Official-hardware noise as a fixed sigma: 1.16 TPS per run at 307.08 TPS, every run its
#: own allocation (tau carries it; df 1e5 makes it effectively known).
FIXED = NoisePrior(tau=ScalePrior("inv_chi2", 1.16 / BASE, 1e5),
                   sigma=ScalePrior("inv_chi2", 1e-4, 100), name="fixed-1.16TPS")
HF = platform_prior("hf-a10g-small")
N4 = platform_prior("published-n4")


def _log(tps):
    return math.log1p(tps / BASE)


def _fit_label(layout, y_row, prior, rope=ROPE):
    """Brute force: the planner verdict's own engine (fit_exact) on one simulated dataset."""
    X, inst = layout.design_arrays()
    data = TPSData.from_arrays(np.exp(5.7 + y_row), ["A" if x[0] else "B" for x in X],
                               [f"i{i}" for i in inst])
    s = fit_exact(data, prior).delta(0, 1, rope)
    return LABEL[label_from(s)], s


# ------------------------------------------------------------------------------------------
# exactness of the batched algebra and of the HDI labels
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", [separate_layout(5), separate_layout(7, 3), paired_layout(4),
                                    paired_layout(5, 2)])
def test_typed_statistics_reproduce_conditional_posterior(layout):
    rng = np.random.default_rng(1)
    tg, sg, _, _ = analysis_grid(HF, layout.n_runs)
    an = GridAnalysis(layout, HF, tg, sg)
    tr = prior_truth(HF, 0.004, 8, rng)
    ys = simulate(layout, tr, rng)
    z, zq = an.stats(ys)
    lw, m = an.log_weights(z, zq), an.delta_means(z)
    X, inst = layout.design_arrays()
    y = flatten(layout, ys)
    yc = y - y.mean(1, keepdims=True)          # fit_exact centres; its m0 is then 0
    st = SuffStats.from_design(X, inst, yc)
    v0 = np.full(2, MU_PRIOR_SD ** 2)
    ll, mean, cov = conditional_posterior(st, tg, sg, np.zeros(2), v0)
    ref = ll + HF.tau.logpdf(tg) + HF.sigma.logpdf(sg) + np.log(tg) + np.log(sg)
    a, b = lw - lw.max(1, keepdims=True), ref - ref.max(1, keepdims=True)
    keep = b > -30
    assert np.max(np.abs(a - b)[keep]) < 1e-6
    assert np.allclose(m, mean[..., 1] - mean[..., 0], atol=1e-12)
    assert np.allclose(an.delta_sd ** 2, cov[:, 1, 1] + cov[:, 0, 0] - 2 * cov[:, 0, 1])


def test_existing_runs_algebra():
    """Old runs + new runs analysed together equal conditional_posterior on all of them."""
    rng = np.random.default_rng(2)
    old_lay, new_lay = paired_layout(3), separate_layout(4)
    tr = prior_truth(HF, 0.003, 1, rng)
    yo = flatten(old_lay, simulate(old_lay, tr, rng))[0]
    Xo, io = old_lay.design_arrays()
    ex = Existing(Xo, io, yo - yo.mean(), 0.0)
    tg, sg, _, _ = analysis_grid(HF, 14)
    an = GridAnalysis(new_lay, HF, tg, sg, ex)
    tr5 = Truth(tr.tau.repeat(5), tr.sigma.repeat(5), tr.delta.repeat(5), np.zeros(5))
    ys = simulate(new_lay, tr5, rng)
    z, zq = an.stats(ys)
    lw, m = an.log_weights(z, zq), an.delta_means(z)
    Xn, inn = new_lay.design_arrays()
    X = np.vstack([Xo, Xn])
    inst = np.concatenate([io, inn + io.max() + 1])
    y = np.hstack([np.broadcast_to(ex.y, (5, ex.y.size)), flatten(new_lay, ys)])
    yc = y - y.mean(1, keepdims=True)
    st = SuffStats.from_design(X, inst, yc)
    ll, mean, _ = conditional_posterior(st, tg, sg, np.zeros(2), np.full(2, MU_PRIOR_SD ** 2))
    ref = ll + HF.tau.logpdf(tg) + HF.sigma.logpdf(sg) + np.log(tg) + np.log(sg)
    a, b = lw - lw.max(1, keepdims=True), ref - ref.max(1, keepdims=True)
    assert np.max(np.abs(a - b)[b > -30]) < 1e-6
    assert np.allclose(m, mean[..., 1] - mean[..., 0], atol=1e-12)


def test_hdi_labels_from_cdf_equal_mixture_summary():
    """The CDF/density criterion gives exactly the label of the shortest-interval HDI of
    models.stats.mixture.mixture_summary on the same mixtures (incl. borderline ones)."""
    rng = np.random.default_rng(3)
    lay = separate_layout(4)
    tg, sg, _, _ = analysis_grid(HF, lay.n_runs)
    an = GridAnalysis(lay, HF, tg, sg)
    agree, n = 0, 0
    for dl in (0.0, 0.0015, 0.004, -0.006, 0.01):
        tr = prior_truth(HF, dl, 40, rng)
        z, zq = an.stats(simulate(lay, tr, rng))
        lw, m = an.log_weights(z, zq), an.delta_means(z)
        dec = decide(lw, m, an.delta_sd, ROPE)
        fused = decide_analysis(an, z, zq, ROPE)
        assert np.array_equal(dec.labels, fused.labels)
        for d in range(tr.size):
            w = np.exp(lw[d] - lw[d].max())
            s = mixture_summary(w / w.sum(), m[d], an.delta_sd ** 2, ROPE)
            agree += LABEL[label_from(s)] == dec.labels[d]
            n += 1
            assert abs(s.p_gt_rope - dec.p_gt[d]) < 1e-6
    assert agree == n


def test_fast_screen_gives_the_exact_labels():
    """exact_probs=False (the simulations' path: interpolated-CDF screen of clearly undecided
    mixtures) gives the labels, means and SDs of the exact path; P(Δ > ±r) within 7.4e-6."""
    rng = np.random.default_rng(8)
    for lay in (separate_layout(3), separate_layout(12, 2), paired_layout(6), paired_layout(7, 3)):
        tg, sg, _, _ = analysis_grid(HF, lay.n_runs)
        an = GridAnalysis(lay, HF, tg, sg)
        for dl in (0.0, 0.001, 0.004, -0.02):
            tr = prior_truth(HF, dl, 400, rng)
            z, zq = an.stats(simulate(lay, tr, rng))
            for rule, hp in (("verdict", 0.95), ("verdict", 0.99), ("superiority", 0.95),
                             ("equivalence", 0.95)):
                e = decide_analysis(an, z, zq, ROPE, rule=rule, hdi_prob=hp)
                f = decide_analysis(an, z, zq, ROPE, rule=rule, hdi_prob=hp, exact_probs=False)
                assert np.array_equal(e.labels, f.labels)
                assert np.allclose(e.mean, f.mean, rtol=0, atol=1e-14)
                assert np.allclose(e.sd, f.sd, rtol=1e-12, atol=1e-15)
                assert np.max(np.abs(e.p_gt - f.p_gt)) <= 7.5e-6
                assert np.max(np.abs(e.p_lt - f.p_lt)) <= 7.5e-6


@pytest.mark.parametrize("prior,layout,dl", [
    (HF, separate_layout(3), 0.004), (HF, paired_layout(4), 0.002),
    (N4, separate_layout(6), _log(-5.82)), (platform_prior("local-a10g"), separate_layout(6, 3),
                                            0.003)])
def test_fixed_grid_labels_match_fit_exact(prior, layout, dl):
    """The fixed analysis grid gives the labels of the adaptive two-pass fit_exact."""
    rng = np.random.default_rng(4)
    tg, sg, _, _ = analysis_grid(prior, layout.n_runs)
    an = GridAnalysis(layout, prior, tg, sg)
    tr = prior_truth(prior, dl, 60, rng)
    ys = simulate(layout, tr, rng)
    z, zq = an.stats(ys)
    dec = decide_analysis(an, z, zq, ROPE)
    y = flatten(layout, ys)
    same = 0
    for d in range(tr.size):
        lab, s = _fit_label(layout, y[d], prior)
        same += lab == dec.labels[d]
        assert abs(s.p_gt_rope - dec.p_gt[d]) < 5e-3
    assert same >= tr.size - 1


# ------------------------------------------------------------------------------------------
# the numbers of docs/planning.md, and brute force
# ------------------------------------------------------------------------------------------
def test_official_noise_small_claim_needs_about_a_hundred_runs():
    """+0.44 TPS at sigma = 1.16 TPS, every run its own allocation: 3 runs per arm give
    almost nothing; the 80 % point is ~110 per arm when the HDI only has to exclude 0, and
    ~1,200 per arm at the default ROPE of 0.1 % (0.31 TPS)."""
    tr = prior_truth(FIXED, _log(0.44), 2000, np.random.default_rng([0, 0]))
    a3 = evaluate_fixed(separate_layout(3), FIXED, tr, ROPE, error_rates=False).assurance
    assert a3 < 0.1
    a3z = evaluate_fixed(separate_layout(3), FIXED, tr, 0.0, error_rates=False).assurance
    assert a3z < 0.15
    lo = evaluate_fixed(separate_layout(100), FIXED, tr, 0.0, error_rates=False).assurance
    hi = evaluate_fixed(separate_layout(125), FIXED, tr, 0.0, error_rates=False).assurance
    assert lo < 0.8 < hi                       # 80 % point in (100, 125]: ~112 (docs)
    lo = evaluate_fixed(separate_layout(1100), FIXED, tr, ROPE, error_rates=False).assurance
    hi = evaluate_fixed(separate_layout(1300), FIXED, tr, ROPE, error_rates=False).assurance
    assert lo < 0.8 < hi                       # ~1,186 (docs)


def test_large_effect_needs_at_most_three_runs():
    for prior in (FIXED, N4):
        tr = prior_truth(prior, _log(-5.82), 2000, np.random.default_rng([0, 0]))
        r = evaluate_fixed(separate_layout(3), prior, tr, ROPE)
        assert r.assurance >= 0.8
        assert r.false_claim_rate <= 0.05


@pytest.mark.parametrize("prior,n,dl,rope", [
    (FIXED, 112, _log(0.44), 0.0),           # the ~80 % point of the small claim
    (N4, 1, _log(-5.82), ROPE),              # the large effect, 1 and 2 runs per arm
    (N4, 2, _log(-5.82), ROPE),
])
def test_brute_force_agrees_within_monte_carlo_error(prior, n, dl, rope):
    """Independent simulations refitted one by one with fit_exact (the verdict's engine)."""
    lay = separate_layout(n)
    fast = evaluate_fixed(lay, prior, prior_truth(prior, dl, 2000, np.random.default_rng(7)),
                          rope, error_rates=False, seed=7)
    rng = np.random.default_rng(99)
    tr = prior_truth(prior, dl, 250, rng)
    y = flatten(lay, simulate(lay, tr, rng))
    tgt = B_BETTER if dl > 0 else A_BETTER
    hits = [(_fit_label(lay, y[d], prior, rope)[0] == tgt) for d in range(tr.size)]
    p = float(np.mean(hits))
    se = math.sqrt(fast.assurance_se ** 2 + p * (1 - p) / len(hits))
    assert abs(p - fast.assurance) <= 3 * se + 1e-9, (p, fast.assurance, se)


def test_false_claims_and_wrong_sign():
    tr = prior_truth(HF, 0.004, 2000, np.random.default_rng(0))
    for lay in (separate_layout(1), separate_layout(4), paired_layout(3)):
        r = evaluate_fixed(lay, HF, tr, ROPE)
        assert r.false_claim_rate <= 0.05
        assert r.wrong_sign_rate <= 0.02


def test_reproducible_with_seed():
    tr = prior_truth(HF, 0.004, 500, np.random.default_rng(0))
    a = evaluate_fixed(separate_layout(5), HF, tr, ROPE, seed=3)
    b = evaluate_fixed(separate_layout(5), HF, tr, ROPE, seed=3)
    c = evaluate_fixed(separate_layout(5), HF, tr, ROPE, seed=4)
    assert a == b
    assert a.assurance != c.assurance or a.false_claim_rate != c.false_claim_rate


def test_sequential_optional_stopping_is_reported():
    tr = prior_truth(N4, _log(-5.82), 2000, np.random.default_rng(0))
    full, looks = sequential_plan("separate", 2, 20)
    s95 = evaluate_sequential(full, looks, N4, tr, ROPE, hdi_prob=0.95)
    s99 = evaluate_sequential(full, looks, N4, tr, ROPE, hdi_prob=0.99)
    fixed20 = evaluate_fixed(separate_layout(20), N4, tr, ROPE)
    assert s95.expected_runs_per_arm < 20
    assert s95.false_claim_rate > fixed20.false_claim_rate      # optional stopping inflates
    assert s99.false_claim_rate < s95.false_claim_rate          # a stricter look repairs it
    assert s99.false_claim_rate <= 0.05
    assert s95.assurance >= 0.8


# ------------------------------------------------------------------------------------------
# MCMC confirms a sample of simulated experiments
# ------------------------------------------------------------------------------------------
def test_mcmc_confirms_simulated_experiments():
    mc = pytest.importorskip("models.stats.tps_mcmc", reason="MCMC engine (models/stats/tps_mcmc.py) "
                             "not in the tree")
    rng = np.random.default_rng(11)
    lay = separate_layout(4)
    tr = prior_truth(N4, _log(-5.82), 3, rng)
    ys = simulate(lay, tr, rng)
    tg, sg, _, _ = analysis_grid(N4, lay.n_runs)
    an = GridAnalysis(lay, N4, tg, sg)
    z, zq = an.stats(ys)
    dec = decide_analysis(an, z, zq, ROPE)
    y = flatten(lay, ys)
    X, inst = lay.design_arrays()
    for d in range(tr.size):
        data = TPSData.from_arrays(np.exp(5.7 + y[d]), ["A" if x[0] else "B" for x in X],
                                   [f"i{i}" for i in inst])
        # 2,000 draws a chain: 1,000 left the tail ESS short of 400 and the engine sampled
        # everything again with 1,850-1,900 draws after twice the warm-up (36 -> 18 s)
        post = mc.fit_mcmc(data, N4, draws=2000, chains=2, seed=d)
        s = post.delta(0, 1, ROPE)
        assert abs(s.p_lt_neg_rope - dec.p_lt[d]) < 0.03
        if abs(s.hdi_high + ROPE) > 0.1 * (s.hdi_high - s.hdi_low):   # not borderline
            assert LABEL[label_from(s)] == dec.labels[d]


# --------------------------------------------------------------------------------------------
# known noise (exact rates) and the Normal approximation beyond the cap
# --------------------------------------------------------------------------------------------
def _known(tau: float, sigma: float) -> NoisePrior:
    return NoisePrior(tau=ScalePrior("inv_chi2", tau, 1e9),
                      sigma=ScalePrior("inv_chi2", sigma, 1e9), name="known")


@pytest.mark.parametrize("make, rope, rule, delta", [
    (lambda: separate_layout(12, 3), 0.001, "verdict", 0.005),
    (lambda: paired_layout(8, 4), 0.001, "verdict", 0.005),
    (lambda: separate_layout(20, 2), 0.0, "superiority", 0.005),
    (lambda: paired_layout(10, 5), 0.004, "equivalence", 0.0),
])
def test_known_noise_rates_match_the_simulation(make, rope, rule, delta):
    """The closed form of evaluate_known agrees with the simulated engine (12,000 experiments)
    within 3.5 SE on assurance, false-claim rate and label fractions."""
    from models.stats.assurance_known import evaluate_known, known_scales

    pr = _known(0.008, 0.003)
    assert known_scales(pr) == (0.008, 0.003) and known_scales(HF) is None
    lay = make()
    k = evaluate_known(lay, pr, prior_truth(pr, delta, 500, np.random.default_rng(0)), rope,
                       rule=rule)
    f = evaluate_fixed(lay, pr, prior_truth(pr, delta, 12000, np.random.default_rng(1)), rope,
                       rule=rule, seed=3)
    assert k.assurance_se < 1e-6 and k.false_claim_se < 1e-6      # a fixed Δ: exact
    assert abs(k.assurance - f.assurance) < 3.5 * f.assurance_se + 1e-3
    assert abs(k.false_claim_rate - f.false_claim_rate) < 3.5 * f.false_claim_se + 1e-3
    for name, p in k.label_fractions.items():
        assert abs(p - f.label_fractions[name]) < 0.015


def test_known_noise_textbook_sample_size():
    """2 % CV known, Δ = +1 %, ROPE 0, 95 % HDI: n = 2 (z.975 + z.8)² (σ/δ)² = 62.2 with
    σ = log 1.02 -> the smallest n with assurance >= 0.8 is 63, and the false-claim rate of
    the HDI rule at Δ = 0 is 5 % (a hair below: the μ prior shrinks)."""
    from models.stats.assurance_known import evaluate_known

    pr = _known(2e-5, math.log1p(0.02))
    tr = prior_truth(pr, math.log1p(0.01), 200, np.random.default_rng(0))
    a62 = evaluate_known(separate_layout(62), pr, tr, 0.0)
    a63 = evaluate_known(separate_layout(63), pr, tr, 0.0)
    assert a62.assurance < 0.8 <= a63.assurance
    assert 0.0499 < a63.false_claim_rate <= 0.05


@pytest.mark.parametrize("n, rope, delta", [(40, ROPE, math.log1p(0.44 / BASE)),
                                            (100, math.log1p(5e-4), math.log1p(0.001)),
                                            (24, 0.0, math.log1p(0.01))])
def test_normal_assurance_tolerance(n, rope, delta):
    """The beyond-cap approximation is within 0.03 (plus 2 SE) of the simulation at >= 24
    runs per arm, one run per allocation (HF prior)."""
    from models.stats.assurance_known import normal_assurance

    tr = prior_truth(HF, delta, 1000, np.random.default_rng(0))
    a, _ = normal_assurance(np.array([n]), 1, tr, rope)
    f = evaluate_fixed(separate_layout(n), HF, tr, rope, seed=1, error_rates=False)
    assert abs(a[0] - f.assurance) < 0.03 + 2 * f.assurance_se
