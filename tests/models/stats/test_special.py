"""models.stats.special (the verdict's SciPy-free special functions) against scipy.special."""

import math

import numpy as np
import pytest
from scipy import special as sp

from models.stats import special


def test_ndtr_matches_scipy():
    z = np.linspace(-37.0, 40.0, 200_001)
    got, ref = special.ndtr(z), sp.ndtr(z)
    assert got.shape == z.shape and got.dtype == np.float64
    rel = np.abs(got - ref) / ref
    assert rel[z > -8].max() < 1e-14
    assert rel.max() < 5e-13
    assert np.abs(got - ref).max() <= 2.3e-16
    assert special.ndtr(np.inf) == 1.0 and special.ndtr(-np.inf) == 0.0
    assert np.isnan(special.ndtr(np.nan))
    assert special.ndtr(np.zeros((2, 3))).shape == (2, 3)
    assert float(special.ndtr(0.3)) == pytest.approx(float(sp.ndtr(0.3)), rel=1e-15)


def test_ndtri_matches_scipy():
    p = np.concatenate([np.geomspace(1e-300, 0.5, 400), 1 - np.geomspace(1e-16, 0.5, 400)])
    for q in p:
        assert special.ndtri(q) == pytest.approx(float(sp.ndtri(q)), rel=1e-14, abs=1e-15)
    with pytest.raises(ValueError):
        special.ndtri(1.0)


@pytest.mark.parametrize("lo, hi, rel", [(0.5, 1e3, 1e-12), (1e3, 2e4, 2e-12), (2e4, 1e6, 1e-10)])
def test_t_sf_matches_scipy_stdtr(lo, hi, rel):
    rng = np.random.default_rng(7)
    for df in np.exp(rng.uniform(math.log(lo), math.log(hi), 400)):
        for t in (0.0, 1e-6, 0.1, 0.7, 1.0, 2.5, 5.0, 11.3, 30.0, 100.0, 1e4, -1.0, -11.3):
            ref = float(sp.stdtr(df, -t))
            assert special.t_sf(t, df) == pytest.approx(ref, rel=rel, abs=1e-300)
    assert special.t_sf(math.inf, 3) == 0.0 and special.t_sf(-math.inf, 3) == 1.0
    assert math.isnan(special.t_sf(math.nan, 3)) and math.isnan(special.t_sf(1.0, 0.0))


def test_logsumexp_matches_scipy():
    rng = np.random.default_rng(2)
    a = rng.normal(0, 300, (50, 7))
    a[3, :] = -np.inf
    a[4, 2] = -np.inf
    with np.errstate(divide="ignore"):
        ref = sp.logsumexp(a, axis=-1)
    got = special.logsumexp(a, axis=-1)
    assert got.shape == (50,)
    np.testing.assert_allclose(got, ref, rtol=1e-14)
    np.testing.assert_allclose(special.logsumexp(a.T, axis=0), ref, rtol=1e-14)


@pytest.mark.parametrize("b, s, block", [(2000, 256, 1 << 20), (1, 1, 1 << 20), (7, 3, 1),
                                         (50, 40, 120), (300, 5, 1 << 20)])
def test_mean_ndtr_ratio_is_the_mean_of_ndtr_means_bit_for_bit(b, s, block, monkeypatch):
    """The draft's P(one run beats the baseline) moved from a per-element Python erfc to a
    compiled loop in blocks: the same float, whatever the block (here as small as one row
    and as large as all)."""
    from models.stats import special as sp

    monkeypatch.setattr(sp, "_BLOCK", block)
    rng = np.random.default_rng(b + s)
    x = rng.normal(3.0, 12.0, b)
    x[::5] = 0.0
    scales = rng.uniform(0.2, 25.0, s)
    old = float(np.mean([sp.ndtr(x / c).mean() for c in scales]))
    new = sp.mean_ndtr_ratio(x, scales)
    assert new == old
    assert 0.0 < new < 1.0


def test_gaussian_kde_1d_matches_scipy():
    """Scott's-rule KDE against scipy.stats.gaussian_kde, to 1e-12 relative wherever the
    density is above 1e-6 of its peak (the budget's plotted Δ curve)."""
    from scipy import stats

    rng = np.random.default_rng(11)
    for t in range(40):
        n = int(rng.integers(2, 2500))
        d = rng.normal(rng.normal(0, 3), abs(rng.normal(0, 1)) + 1e-4, n)
        if t % 4 == 0:
            d = rng.standard_t(2, n) * 0.05          # heavy tails, as a projection's delta
        lo, hi = np.percentile(d, [0.1, 99.9])
        xs = np.linspace(lo - 0.15 * (hi - lo), hi + 0.15 * (hi - lo), 200)
        got, ref = special.gaussian_kde_1d(d, xs), stats.gaussian_kde(d)(xs)
        big = ref > 1e-6 * ref.max()
        np.testing.assert_allclose(got[big], ref[big], rtol=1e-12, err_msg=str(t))
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * ref.max())
    with pytest.raises(ValueError, match="no spread"):
        special.gaussian_kde_1d(np.ones(5), np.zeros(3))


def test_ndtr_switches_to_the_compiled_loop_once_numba_is_up_and_the_budget_is_spent(
        monkeypatch):
    """Small arrays take the C calls until numba is up in the process and they have cost
    NDTR_WARM_BUDGET elements; then the compiled loop, with the same bits."""
    from models.kernels import _jit

    calls = []

    def counted(z, out):
        calls.append(z.size)
        out[:] = 0.5 * np.asarray(special._ERFC(-z * special._SQRT1_2), dtype=float)

    monkeypatch.setattr(special, "ndtr_into", counted)
    monkeypatch.setattr(special, "_SLOW_ELEMENTS", [0, 0])
    z = np.random.default_rng(1).normal(0, 3, 10_000)
    want = 0.5 * np.asarray(special._ERFC(-z * special._SQRT1_2), dtype=float)
    monkeypatch.setitem(_jit._STATE, "up", False)
    for _ in range(10):  # numba not up: never compiled, nothing counted
        assert np.array_equal(special.ndtr(z), want)
    assert calls == [] and special._SLOW_ELEMENTS == [0, 100_000]
    monkeypatch.setitem(_jit._STATE, "up", True)
    n_slow = special.NDTR_WARM_BUDGET // z.size + 1
    for _ in range(n_slow + 3):
        assert np.array_equal(special.ndtr(z), want)
    assert calls == [z.size] * 3
    # numba not up: the switch once the C calls have cost NDTR_COLD_BUDGET elements
    calls.clear()
    monkeypatch.setattr(special, "_SLOW_ELEMENTS", [0, special.NDTR_COLD_BUDGET - 5_000])
    monkeypatch.setitem(_jit._STATE, "up", False)
    for _ in range(3):
        assert np.array_equal(special.ndtr(z), want)
    assert calls == [z.size] * 2
