"""ScalePrior's scipy.stats-free density equals scipy.stats within 1e-15 absolute (math.lgamma
for gammaln, a constant per prior), its quantiles bit for bit."""

import numpy as np
import pytest
from scipy import stats

from models.noise import ScalePrior

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
        np.testing.assert_array_equal(got, ref)
    # edge inputs go to scipy.stats itself
    with np.errstate(all="ignore"):
        for x in ([0.0, 1.0], [-1.0], [np.nan], [np.inf]):
            np.testing.assert_array_equal(p.logpdf(x), _ref_logpdf(p, x))
        for x in ([0.0, 0.5], [1.0], [np.nan], [1.5]):
            np.testing.assert_array_equal(p.ppf(x), _ref_ppf(p, x))
