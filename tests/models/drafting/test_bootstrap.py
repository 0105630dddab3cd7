"""Bootstrap over prompts: the compiled gather + sum gives NumPy's figures bit for bit."""

import numpy as np
import pytest

from models.drafting.bootstrap import bootstrap_ratios, resample_indices


def _plain(stats, n_boot, seed, groups):
    """The straightforward definition: one (B, P) index matrix, ``np.take`` and ``sum``."""
    rng = np.random.default_rng(seed)
    P = np.atleast_2d(next(iter(stats.values()))[0]).shape[1]
    idx = resample_indices(P, n_boot, rng, groups)
    out = {}
    for k, (n, d) in stats.items():
        n, d = np.atleast_2d(np.asarray(n, float)), np.atleast_2d(np.asarray(d, float))
        if n.shape[0] > 1:
            r = rng.integers(0, n.shape[0], size=(n_boot, 1))
            out[k] = n[r, idx].sum(1) / d[r, idx].sum(1)
        else:
            out[k] = np.take(n[0], idx).sum(1) / np.take(d[0], idx).sum(1)
    return out


@pytest.mark.parametrize("P", [3, 7, 128, 129, 1000, 5120])
@pytest.mark.parametrize("grouping", ["none", "runs", "mixed"])
def test_bootstrap_equals_take_and_sum(P, grouping):
    rng = np.random.default_rng(P)
    tok = rng.integers(1, 600, P).astype(float)
    fwd = rng.integers(1, 300, P).astype(float)
    stats = {"tpf0": (tok, tok), "rate0": (tok, rng.random(P) * 1e3),   # ar-like: tok twice
             "tpf1": (tok.copy(), fwd), "rate1": (tok, rng.random(P) * 1e3),
             "tpf2": (rng.random((3, P)) * 50, rng.random((3, P)) * 20 + 1)}
    groups = {"none": None,
              "runs": np.repeat(["b", "a", "c"], [P // 3, P // 3, P - 2 * (P // 3)]),
              "mixed": rng.choice(["x", "y"], P)}[grouping]
    for B in (1, 33, 2000 if P <= 1000 else 200):
        got = bootstrap_ratios(stats, n_boot=B, seed=7, groups=groups)
        want = _plain(stats, B, 7, groups)
        for k in want:
            assert got[k].tobytes() == want[k].tobytes(), (k, B)


def test_resample_indices_leave_the_generator_where_one_draw_would():
    g = np.repeat(["a", "b", "a"], [5, 4, 6])
    r1, r2 = np.random.default_rng(3), np.random.default_rng(3)
    idx = resample_indices(15, 9, r1, g)  # group a (not one run of prompts), then b
    a = r2.integers(0, 11, size=(9, 11))
    b = r2.integers(0, 4, size=(9, 4))
    assert np.array_equal(idx[:, :11], np.flatnonzero(g == "a")[a])
    assert np.array_equal(idx[:, 11:], b + 5)
    assert r1.random() == r2.random()
