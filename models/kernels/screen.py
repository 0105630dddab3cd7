"""Kernel of the verdict's "to settle" screen (:func:`planner.decide.settle.settle_screen`).

The screen's assurance is a sum over the posterior's grid points g and the quadrature
nodes q of the true Δ of one Normal probability each; on a posterior of 264,638 points
(a table with sessions and four cold groups) x 48 nodes its NumPy form built a dozen
12.7-million-element temporaries. This loop computes each term with the same
operations in the same order (so each term's value is NumPy's) and sums them point by
point (the total differs from NumPy's ``hit @ px`` and ``np.sum`` by rounding only).
Importing this module does not import numba (:mod:`models.kernels._jit`).
"""

from __future__ import annotations

import math

from models.kernels._jit import KernelGroup

__all__ = ["screen_sum"]

_SQRT1_2 = math.sqrt(0.5)


def _py_ndtr(z):  # pragma: no cover - numba
    """:func:`models.stats.special.ndtr` of a scalar, its operations in its order."""
    return 0.5 * math.erfc(-z * _SQRT1_2)


def _py_screen_sum(w, mean_d, sd_d, beta, h, sr, x, px, rope):  # pragma: no cover - numba
    """``sum_g w[g] sum_q px[q] hit(g, q)``: the probability that the design's 95 % interval
    ``m_f +- h`` reaches the label the true Δ ``mean_d + sd_d x[q]`` deserves, with
    ``m_f | Δ ~ N(mean_d + beta (Δ - mean_d), sr^2)`` (all of shape (G,) but ``x``, ``px``
    (Q,); ``rope`` >= 0, log scale)."""
    tot = 0.0
    for g in range(w.shape[0]):
        md, s, hg = mean_d[g], sr[g], h[g]
        acc = 0.0
        for q in range(x.shape[0]):
            dl = md + sd_d[g] * x[q]
            mu = md + beta[g] * (dl - md)
            if dl > rope:
                hit = _ndtr((mu - rope - hg) / s)
            elif dl < -rope:
                hit = _ndtr((-rope - hg - mu) / s)
            else:
                hit = max(_ndtr((rope - hg - mu) / s) - _ndtr((-rope + hg - mu) / s), 0.0)
            acc += hit * px[q]
        tot += w[g] * acc
    return tot


_GROUP = KernelGroup(globals(), {"_ndtr": (_py_ndtr, {"nogil": True})})
_ndtr = _py_ndtr  # rebound to the compiled callee before the kernel is compiled
#: :func:`_py_screen_sum` compiled by numba on its first call.
screen_sum = _GROUP.kernel(_py_screen_sum, nogil=True, sig=(
    "f8[::1]", "f8[::1]", "f8[::1]", "f8[::1]", "f8[::1]", "f8[::1]", "f8[::1]", "f8[::1]",
    "f8"))
