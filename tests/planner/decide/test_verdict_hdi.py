"""mixture_hdi: Newton from the Normal approximation reaches the same HDI as Newton from the
257-point CDF table (the former start), on the posteriors of real verdicts."""

import numpy as np
import pytest

from pathlib import Path

from models.stats import mixture as mx
from models.stats import tps_exact as te
from models.stats.noise import WEAK
from models.stats.noise_hierarchy import load_hierarchy
from planner.io.runs import read_runs, runs_from_values
from planner.decide.comparison import build_data

ROOT = Path(__file__).resolve().parents[3]


def _table_start(w, m, v, prob):
    w, m, v = mx._prune(np.asarray(w, float), np.asarray(m, float), np.asarray(v, float))
    x, F = mx._cdf_table(w, m, v, n_points=257)
    a = np.linspace(0.0, 1.0 - prob, 2001)[1:-1]
    lo_t, hi_t = np.interp(a, F, x), np.interp(a + prob, F, x)
    k = int(np.argmin(hi_t - lo_t))
    return mx._hdi_newton(w, m, v, prob, float(lo_t[k]), float(hi_t[k]), max_iter=20)


def _posteriors():
    runs = read_runs(ROOT / "examples" / "runs" / "tps_runs.csv")
    pairs = [("fa2sw_precache_agentI", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2",
              "validity/free_ceiling_wallclock_realize/ab_out"),
             ("bi0_k_sweep:k0", "bi0_k_sweep:k4", "bi0_k_sweep"),
             ("fa2sw_onegraph/runs:base", "fa2sw_onegraph/runs:both", "fa2sw_onegraph/runs")]
    prior = load_hierarchy().choose("local-a10g", "decode_wall", "128x512").prior
    for a, b, g in pairs:
        t = runs.filter(run_group=g).select([a, b])
        for cold in (False, True):
            yield te.fit_exact(build_data(t, a, b, use_cold=cold), prior)
    for va, vb in [([308.49], [308.05]), ([308.1, 307.9], [309.0, 309.4]),
                   ([300.0, 330.0, 290.0], [301.0])]:
        yield te.fit_exact(build_data(runs_from_values(va, vb), "A", "B", use_cold=False), WEAK)


@pytest.fixture(scope="module")
def posteriors():
    return list(_posteriors())


@pytest.mark.parametrize("prob", [0.95, 0.5])
def test_newton_from_the_normal_start_equals_the_table_start(prob, posteriors):
    n = 0
    for post in posteriors:
        c = np.zeros(post.mean.shape[-1])
        c[0], c[1] = -1.0, 1.0
        m, v = post.contrast(c)
        lo, hi = mx.mixture_hdi(post.w, m, v, prob)
        ref = _table_start(post.w, m, v, prob)
        assert ref is not None
        assert abs(lo - ref[0]) < 1e-12 * (hi - lo) and abs(hi - ref[1]) < 1e-12 * (hi - lo)
        F = mx.mixture_cdf(np.array([lo, hi]), *mx._prune(post.w, m, v))
        assert F[1] - F[0] == pytest.approx(prob, abs=1e-10)
        n += 1
    assert n >= 8


def test_a_bimodal_mixture_still_gets_an_interval_of_the_right_mass():
    w, m, v = np.array([0.5, 0.5]), np.array([-5.0, 5.0]), np.array([0.1, 0.1])
    lo, hi = mx.mixture_hdi(w, m, v, 0.95)
    F = mx.mixture_cdf(np.array([lo, hi]), w, m, v)
    assert F[1] - F[0] == pytest.approx(0.95, abs=1e-6)
    assert lo < -5 and hi > 5
