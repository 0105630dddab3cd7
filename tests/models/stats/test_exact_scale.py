"""The exact engine is linear in the runs: per-instance sufficient statistics by
bincount and grid sums over instance types above ``_DENSE_MAX_INSTANCES``, equal (to rounding)
to the per-instance path that small designs keep."""

import time
import tracemalloc

import numpy as np
import pytest

import models.stats.tps_exact as te
from models.stats.noise import WEAK
from models.stats.tps_model import TPSData


def _design(rng, n_inst, n_runs, p_cold=0.1):
    inst = np.sort(rng.integers(0, n_inst, n_runs))
    inst = np.unique(inst, return_inverse=True)[1]
    cfg = rng.integers(0, 2, n_runs)
    X = np.zeros((n_runs, 3))
    X[np.arange(n_runs), cfg] = 1.0
    X[:, 2] = rng.random(n_runs) < p_cold
    return X, inst


def test_typed_path_equals_the_per_instance_path(monkeypatch):
    rng = np.random.default_rng(0)
    X, inst = _design(rng, 300, 1500)
    y = rng.normal(0, 0.01, (3, X.shape[0]))            # a batch of datasets
    tau = np.array([1e-4, 1e-3, 3e-3, 2e-2])
    sig = np.array([2e-3, 4e-4, 1e-2, 5e-3])
    m0, v0 = np.zeros(3), np.array([0.01, 0.01, 1e-4])
    sparse = te.SuffStats.from_design(X, inst, y)           # > 256 instances: bincount path
    monkeypatch.setattr(te, "_DENSE_MAX_INSTANCES", 10**9)
    monkeypatch.setattr(te, "_DENSE_MAX_CELLS", 10**12)
    dense = te.SuffStats.from_design(X, inst, y)
    for f in ("n_i", "x_i", "XtX", "Xty", "T_i", "Q"):
        np.testing.assert_allclose(getattr(sparse, f), getattr(dense, f), rtol=1e-12,
                                   atol=1e-15)
    ref = te.conditional_posterior(dense, tau, sig, m0, v0)
    monkeypatch.setattr(te, "_DENSE_MAX_INSTANCES", 10)
    typed = te.conditional_posterior(dense, tau, sig, m0, v0)
    for a, b in zip(ref, typed):
        np.testing.assert_allclose(b, a, rtol=1e-11, atol=1e-13)


def test_instance_types_group_equal_designs():
    X = np.array([[1, 0], [1, 0], [0, 1], [1, 0], [1, 0], [0, 1], [0, 1]], float)
    inst = np.array([0, 0, 1, 2, 2, 3, 4])
    y = np.arange(7.0)
    count, n_k, x_k, S1, S2 = te.SuffStats.from_design(X, inst, y).instance_types()
    got = {(n, tuple(x)): (c, s1, s2) for c, n, x, s1, s2 in zip(count, n_k, x_k, S1, S2)}
    assert got == {(2.0, (2.0, 0.0)): (2.0, 1.0 + 7.0, 1.0 + 49.0),
                   (1.0, (0.0, 1.0)): (3.0, 2.0 + 5.0 + 6.0, 4.0 + 25.0 + 36.0)}


def test_twenty_thousand_runs_on_four_thousand_instances_is_fast_and_small():
    """The issue-10 table shape: a dense indicator matrix would be 4,000 x 20,000 (640 MB)."""
    rng = np.random.default_rng(1)
    n = 20_000
    inst = rng.integers(0, 4000, n)
    cfg = np.where(rng.random(n) < 0.5, "A", "B")
    u = rng.normal(0, 0.004, 4000)
    tps = 300 * np.exp(np.where(cfg == "B", 0.003, 0.0) + u[inst] + rng.normal(0, 0.002, n))
    data = TPSData.from_arrays(tps, list(cfg), [f"i{k}" for k in inst], use_cold=False)
    tracemalloc.start()
    t0 = time.perf_counter()
    post = te.fit_exact(data, WEAK)
    names = list(data.config_names)
    d = post.delta(names.index("A"), names.index("B"), 0.001)
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert dt < 5.0                      # ~0.15 s on the 2-core CI machine; 85 s before
    assert peak < 150e6                  # no (instances x runs) array
    assert d.mean == pytest.approx(0.003, abs=3e-4)
    assert post.scale_summary("tau")["median"] == pytest.approx(0.004, rel=0.15)
    assert post.scale_summary("sigma")["median"] == pytest.approx(0.002, rel=0.1)
