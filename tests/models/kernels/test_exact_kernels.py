"""The compiled loops of the exact engine's session path and density curve, and the
large-array ndtr, against the NumPy forms they replace (the "to settle" screen's loop:
``tests/planner/decide/test_verdict_speed.py``)."""

import numpy as np
import pytest

from models.stats import special
from models.stats.tps_exact import _integrate_fixed_many, _loglik_many, _moments_at


def _parts(rng, G, p):
    X = rng.normal(0, 1, (G, 3 * p, p))
    A = np.einsum("gnp,gnq->gpq", X, X) * rng.uniform(1e2, 1e8, G)[:, None, None]
    return A, rng.normal(0, 50, (G, p)), rng.uniform(1, 1e3, G), rng.normal(0, 10, G)


@pytest.mark.parametrize("p", [1, 2, 6])
def test_loglik_and_moments_equal_the_batched_linalg(p):
    rng = np.random.default_rng(p)
    A, b, q, lds = _parts(rng, 300, p)
    m0s = rng.normal(0, 0.01, (5, p))
    v0s = rng.uniform(1e-8, 1e-2, (5, p))
    ll, mean, cov = _integrate_fixed_many(37, A, b, q, lds, m0s, v0s)
    assert np.allclose(_loglik_many(37, A, b, q, lds, m0s, v0s), ll, rtol=1e-11, atol=1e-9)
    gi, ki = rng.integers(0, 300, 400), rng.integers(0, 5, 400)
    m, c = _moments_at(A, b, m0s, v0s, gi, ki)
    d = np.sqrt(np.einsum("nii->ni", cov[ki, gi]))
    assert np.max(np.abs(c - cov[ki, gi]) / (d[:, :, None] * d[:, None, :])) < 1e-10
    assert np.allclose(m, mean[ki, gi], rtol=1e-9, atol=1e-12)


def test_a_matrix_that_is_not_positive_definite_is_refused():
    A = -np.ones((1, 2, 2)) * 1e9
    with pytest.raises(np.linalg.LinAlgError):
        _loglik_many(3, A, np.zeros((1, 2)), np.zeros(1), np.zeros(1), np.zeros((1, 2)),
                     np.ones((1, 2)))


def test_density_walk_equals_the_direct_sum():
    from models.kernels.exact import density_grid

    rng = np.random.default_rng(4)
    n = 5000
    # wide and very narrow components, means inside and far outside the grid
    m = np.concatenate([rng.normal(0.001, 0.002, n), [0.5, -0.5, 0.0123]])
    sd = np.concatenate([rng.uniform(1e-6, 3e-3, n), [1e-3, 0.4, 1e-7]])
    w = rng.random(m.size)
    w /= w.sum()
    x = np.linspace(-0.006, 0.009, 200)
    out = np.empty(x.size)
    density_grid(w, m, sd, x[0], (x[-1] - x[0]) / 199, x.size, out)
    z = (x[:, None] - m) / sd
    want = np.sum(w * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi * sd * sd), axis=-1)
    assert np.allclose(out, want, rtol=1e-12, atol=0)


def test_compiled_ndtr_is_the_same_function():
    rng = np.random.default_rng(5)
    z = np.concatenate([rng.normal(0, 6, special.NDTR_COMPILED_MIN), [np.inf, -np.inf, np.nan,
                                                                       -0.0, 40.0, -40.0]])
    want = 0.5 * np.asarray(special._ERFC(-z * special._SQRT1_2), dtype=float)
    assert np.array_equal(special.ndtr(z.reshape(2, -1)), want.reshape(2, -1), equal_nan=True)
