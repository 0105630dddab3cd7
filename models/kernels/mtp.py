"""Kernel of the MTP acceptance model: tokens per forward of a K-token draft walk.

Private module: the public interface is :func:`models.drafting.acceptance_model.walk_tpf`.
"""

from __future__ import annotations

import numpy as np

from models.kernels._jit import KernelGroup

__all__ = ["walk_tpf"]


def _py_walk_kernel(p, off, K):  # pragma: no cover - numba
    R = off.shape[0] - 1
    out = np.empty(R)
    for r in range(R):
        a = off[r]
        L = off[r + 1] - a
        F = np.zeros(L + K + 2)
        for t in range(L - 1, 0, -1):
            s = 1.0
            ef = 0.0
            jmax = min(K, L - 1 - t)
            for j in range(jmax + 1):
                if j < jmax:
                    pj = p[a + t + j]
                    ef += s * (1.0 - pj) * F[t + j + 1]
                    s *= pj
                else:
                    ef += s * F[t + j + 1]
            F[t] = 1.0 + ef
        out[r] = (L - 1) / F[1] if L > 1 else 1.0
    return out


_GROUP = KernelGroup(globals())
#: :func:`_py_walk_kernel` compiled by numba on its first call.
walk_tpf = _GROUP.kernel(_py_walk_kernel, sig=("f8[::1]", "i8[::1]", "i8"))
