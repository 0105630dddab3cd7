"""The official public -> private shift fitted on the shipped verifier pairs (issue 21 item 3):
the pairs as shipped, the fit, and its leave-one-pair-out predictive check (coverage of the
90 % interval, Brier and log score of P(invalid) against the verdicts)."""

import numpy as np
import pytest

from models.drafting import official_shift as o


def test_pairs_are_the_shipped_ones_and_follow_the_5_percent_rule():
    pairs = o.load_official_pairs()
    assert len(pairs) == 9 and sum(p.verdict_source == "transcribed" for p in pairs) == 8
    for p in pairs:  # every drop of more than 5 % was ruled invalid, every other valid
        assert p.invalid == (p.private < 0.95 * p.public), p.submission
    assert [p.drafter_tuned for p in pairs].count(True) == 4
    assert all(p.invalid for p in pairs if p.drafter_tuned)


@pytest.mark.parametrize("name,want", [("ext:osoi5-drafterft-w40-v0 (agentR)", True),
                                       ("my-drafter_ft-v2", True), ("epoch1-v0", False),
                                       (None, None), ("", None)])
def test_drafter_tuned_is_read_from_the_label(name, want):
    assert o.drafter_tuned_from_name(name) is want


def test_fit_separates_allocation_noise_from_prompt_set_shift():
    f = o.fit_official()
    assert f.covariates == ("intercept", "drafter_tuned") and f.n == 9
    # mean drop about 4 % untuned, 2 points more with a drafter tuned on public-like prompts
    assert np.exp(f.beta[0]) == pytest.approx(0.960, abs=0.002)
    assert f.beta[1] == pytest.approx(-0.0196, abs=0.001)
    a, t = f.posterior_sd("allocation"), f.posterior_sd("shift")
    assert 0.006 < a[0] < 0.011 and a[1] < 0.0079 < a[2]  # the re-runs' 0.79 % inside
    assert 0.004 < t[0] < 0.015
    # predictive variance of a pair >= the two allocations' noise
    m, sd, w = f.predictive(False)
    assert np.all(sd ** 2 >= 2 * f.sa ** 2 - 1e-15)


def test_p_invalid_is_exact_and_agrees_with_draws_and_quantiles():
    f = o.fit_official()
    for dt in (False, True):
        p = f.p_invalid(dt)
        r = f.draws(200_000, np.random.default_rng(0), dt)
        assert np.mean(r < 0.95) == pytest.approx(p, abs=0.005)
        assert f.cdf(f.quantile(0.3, dt), dt) == pytest.approx(0.3, abs=1e-6)
        lo, hi = f.p_invalid_interval(0.90, dt)
        assert lo < p < hi
    assert f.p_invalid(False) == pytest.approx(0.256, abs=0.005)
    assert f.p_invalid(True) == pytest.approx(0.719, abs=0.005)


def test_leave_one_pair_out_is_calibrated_and_the_covariate_earns_its_place():
    with_cov = o.leave_one_out()
    without = o.leave_one_out(covariate=False)
    assert with_cov["n"] == 9 and with_cov["covered"] == 8  # 90 % interval: 8/9
    # P(invalid) against the verdicts: better than a coin (0.25 / -0.693), than the held-in
    # invalid rate and than the same model without the drafter-tuned covariate
    assert with_cov["brier"] == pytest.approx(0.175, abs=0.005)
    assert with_cov["log_score"] == pytest.approx(-0.599, abs=0.01)
    assert with_cov["brier"] < 0.25 < without["brier"]
    assert with_cov["brier"] < with_cov["base_rate_brier"]
    assert with_cov["log_score"] > np.log(0.5) > without["log_score"]
    # the miss is the one invalid pair without a tuned drafter (6.4 % drop)
    miss = [r for r in with_cov["rows"] if not r["covered"]]
    assert [r["submission"] for r in miss] == ["ext:adaptive-centroid-onegraph-v12 (agentQ)"]
    # calls at 0.5: 8 of 9 verdicts right
    assert sum((r["p_invalid"] >= 0.5) == (r["verdict"] == "invalid")
               for r in with_cov["rows"]) == 8
    # leaving out every pair of a submitter at once changes nothing material
    agent = o.leave_one_out(by="agent")
    assert agent["covered"] == 8 and agent["brier"] == pytest.approx(with_cov["brier"],
                                                                     abs=0.01)


def test_prior_scale_of_the_shift_sd_barely_matters():
    ps = [o.fit_official(tau_scale=s).p_invalid(False) for s in (0.01, 0.03, 0.05)]
    assert max(ps) - min(ps) < 0.03
