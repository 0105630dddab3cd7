"""The exact engine's two-pass grid against a brute-force integral over the population
prior's whole support, on quick-form A/A tables drawn from that prior's own hierarchy
(bench/bench_exact_check.py at full size: 182 decisive tables of 3,400, all agreeing,
HDI ends within 0.4 % of the HDI's width)."""

import math

import numpy as np
import pytest

from models.stats.decision import label_from
from models.stats.mixture import mixture_summary
from models.stats.noise import POP_RANGE
from models.stats.population import population_noise_prior
from models.stats.tps_exact import SuffStats, conditional_posterior, fit_exact
from models.stats.tps_model import TPSData

ROPE = math.log1p(0.001)


def _brute(data, prior, n=200):
    X = data.design_matrix()
    m0, sd0 = data.prior_mean_sd()
    c = np.array([float(np.mean(data.y[data.config == k])) for k in range(data.n_configs)])
    st = SuffStats.from_design(X, data.instance, data.y - c[data.config])
    ax = np.exp(np.linspace(math.log(POP_RANGE[0]), math.log(POP_RANGE[1]), n))
    T, S = (g.ravel() for g in np.meshgrid(ax, ax, indexing="ij"))
    ll, mean, cov = conditional_posterior(st, T, S, m0 - c, sd0**2)
    lw = ll + prior.logpdf_joint(T, S) + np.log(T) + np.log(S)
    w = np.exp(lw - lw.max())
    m = mean[:, 1] - mean[:, 0] + c[1] - c[0]
    v = cov[:, 0, 0] + cov[:, 1, 1] - 2 * cov[:, 0, 1]
    return mixture_summary(w / w.sum(), m, v, ROPE, 0.95)


@pytest.mark.slow
def test_exact_matches_brute_force_on_population_draws():
    prior = population_noise_prior()
    rng = np.random.default_rng(20)
    k = 2
    tau, sig = prior.joint.rvs(40, rng)
    worst = 0.0
    for i in range(40):
        off = rng.normal(0, tau[i], 2)
        y = np.concatenate([off[0] + rng.normal(0, sig[i], k), off[1] + rng.normal(0, sig[i], k)])
        d = TPSData.from_arrays(300 * np.exp(y), ["A"] * k + ["B"] * k,
                                ["A-session"] * k + ["B-session"] * k, None, None, use_cold=False)
        s, b = fit_exact(d, prior).delta(0, 1, ROPE), _brute(d, prior)
        assert label_from(s) == label_from(b), i
        # HDI ends agree to 2 % of the HDI's width (the brute grid's own step is ~3 %)
        width = b.hdi_high - b.hdi_low
        worst = max(worst, abs(s.hdi_low - b.hdi_low) / width, abs(s.hdi_high - b.hdi_high) / width)
        assert abs(s.p_gt0 - b.p_gt0) < 0.005, i
    assert worst < 0.02
