"""ScalePrior's scipy.stats-free density and quantiles against scipy.stats.

Tolerances: the log density within 1e-15 (relative and absolute, times df): the same
formula with ``math.lgamma`` for SciPy's ``gammaln``, which differ by an ulp of a constant
per prior. The quantiles within 1e-14 relative: scipy.special's ``ndtri`` /
``gammainccinv`` as scipy.stats uses them, so only the last bits of an operation order may
differ between SciPy versions. Both are far below what any reported figure shows."""

import numpy as np
import pytest
from scipy import stats

from models.stats.noise import ScalePrior

PRIORS = [ScalePrior("half_normal", 0.05), ScalePrior("half_normal", 1.7e-3),
          ScalePrior("inv_chi2", 0.004, 3.0), ScalePrior("inv_chi2", 0.0123, 41.5),
          ScalePrior("inv_chi2", 0.2, 0.7)]


def _ref_logpdf(p, s):
    s = np.asarray(s, float)
    if p.kind == "half_normal":
        return stats.halfnorm.logpdf(s, scale=p.scale)
    return stats.invgamma.logpdf(s**2, p.df / 2.0, scale=p.df * p.scale**2 / 2.0) \
        + np.log(2.0 * s)


def _ref_ppf(p, q):
    q = np.asarray(q, float)
    if p.kind == "half_normal":
        return stats.halfnorm.ppf(q, scale=p.scale)
    return np.sqrt(stats.invgamma.ppf(q, p.df / 2.0, scale=p.df * p.scale**2 / 2.0))


@pytest.mark.parametrize("p", PRIORS, ids=lambda p: f"{p.kind}-{p.scale}-{p.df}")
def test_logpdf_and_ppf_match_scipy_stats(p):
    rng = np.random.default_rng(1)
    s = np.concatenate([np.exp(rng.uniform(-12, 2, 2000)), np.geomspace(1e-6, 10, 300)])
    for x in (s, s.reshape(-1, 23), s[:1], float(s[5])):
        got, ref = p.logpdf(x), _ref_logpdf(p, x)
        assert np.shape(got) == np.shape(ref) and type(got) is type(ref)
        np.testing.assert_allclose(got, ref, rtol=1e-15, atol=1e-15 * max(1.0, p.df))
    q = np.concatenate([rng.uniform(0, 1, 2000), [1e-12, 0.025, 0.5, 0.975, 1 - 1e-12]])
    for x in (q, q[:1], 0.5, 0.975):
        got, ref = p.ppf(x), _ref_ppf(p, x)
        assert np.shape(got) == np.shape(ref) and type(got) is type(ref)
        np.testing.assert_allclose(got, ref, rtol=1e-14, atol=0)
    # edge inputs go to scipy.stats itself
    with np.errstate(all="ignore"):
        for x in ([0.0, 1.0], [-1.0], [np.nan], [np.inf]):
            np.testing.assert_array_equal(p.logpdf(x), _ref_logpdf(p, x))
        for x in ([0.0, 0.5], [1.0], [np.nan], [1.5]):
            np.testing.assert_array_equal(p.ppf(x), _ref_ppf(p, x))


def test_stored_scale_quantiles_are_scipys():
    """models/data/scale_quantiles.json holds what scipy.special gives (ScalePrior.ppf's
    formula), to 1e-14 relative, for every scale of every embedded platform prior at the
    grid's quantiles. Stored, not computed at use, so a draft or repeats on a platform prior
    does not import scipy.special (0.2-0.25 s of CPU, a sixth of a warm ``planner draft``)."""
    import json
    from importlib import resources

    from scipy import special

    from models.stats.noise import ScalePrior, known_platforms, platform_prior

    rows = json.loads(resources.files("models").joinpath("data/scale_quantiles.json")
                      .read_text("utf-8"))["rows"]
    for r in rows:
        if r["kind"] == "half_normal":
            want = special.ndtri((1 + r["q"]) / 2.0) * r["scale"] + 0.0
        else:
            b = r["df"] * r["scale"] ** 2 / 2.0
            want = np.sqrt(1.0 / special.gammainccinv(r["df"] / 2.0, r["q"]) * b + 0.0)
        assert r["value"] == pytest.approx(float(want), rel=1e-14, abs=0), r
    have = {(r["kind"], r["df"], r["scale"], r["q"]) for r in rows}
    for p in known_platforms():
        pr = platform_prior(p)
        for sp in (pr.tau, pr.sigma):
            for q in (1e-4, 1 - 1e-4, 0.5):
                assert (sp.kind, sp.df if sp.kind == "inv_chi2" else None, sp.scale, q) in have
    # a prior that is not stored still goes through scipy: the same formula
    sp = ScalePrior("inv_chi2", 0.0123, 5.0)
    assert float(sp.ppf(1e-4)) == pytest.approx(float(np.sqrt(
        1.0 / special.gammainccinv(2.5, 1e-4) * (5.0 * 0.0123 ** 2 / 2.0))), rel=1e-14)


def test_scale_population_nll_is_the_f_log_density_of_the_variances():
    """The hierarchy's and fit_scale_population's objective equals SciPy's F log density
    (-sum log f_F(s2/s0^2; d, nu) + 2 log s0) over the range the fits visit, df 0.3 .. 1e5."""
    import math

    from models.stats.noise import scale_population_nll

    rng = np.random.default_rng(3)
    for C in (3, 40, 400):
        s2 = rng.lognormal(-14.0, 2.5, C)
        df = rng.integers(1, 30, C).astype(float)
        nll = scale_population_nll(s2, df)
        for log_nu, log_s0 in [(0.0, -7.0), (3.0, -6.5), (-1.2, -9.0), (11.5, -7.0)]:
            nu, s0 = math.exp(log_nu), math.exp(log_s0)
            want = -float(np.sum(stats.f.logpdf(s2 / s0**2, df, nu) - 2 * log_s0))
            assert nll((log_nu, log_s0)) == pytest.approx(want, rel=1e-10, abs=1e-9)
            value, grad = nll((log_nu, log_s0), grad=True)
            assert value == nll((log_nu, log_s0))
            # the analytic gradient the fits descend on: central differences agree
            h = 1e-6
            num = [(nll((log_nu + h, log_s0)) - nll((log_nu - h, log_s0))) / (2 * h),
                   (nll((log_nu, log_s0 + h)) - nll((log_nu, log_s0 - h))) / (2 * h)]
            scale = max(1.0, float(np.abs(grad).max()))
            assert np.abs(grad - np.array(num)).max() <= 1e-6 * scale, (log_nu, log_s0)
