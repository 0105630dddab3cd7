"""Compiled sums of :mod:`models.stats.special` (its public, documented interface).

Importing this module does not import numba: each kernel is compiled on its first call
(:mod:`models.kernels._jit`).
"""

from __future__ import annotations

import math

import numpy as np

from models.kernels._jit import KernelGroup

__all__ = ["kde_sum", "ndtr_into", "ndtr_ratio_rows"]

_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _py_ndtr_ratio_rows(x, scales, out):  # pragma: no cover - numba
    """``out[i, j] = ndtr(x[j] / scales[i])`` with the operations of
    :func:`models.stats.special.ndtr` in its order (divide, negate, times sqrt(1/2), libm
    ``erfc``, times 0.5), so the values are that function's."""
    for i in range(scales.shape[0]):
        s = scales[i]
        for j in range(x.shape[0]):
            z = x[j] / s
            out[i, j] = 0.5 * math.erfc(-z * _SQRT1_2)


def _py_ndtr_into(z, out):  # pragma: no cover - numba
    """``out[i] = ndtr(z[i])`` with the operations of :func:`models.stats.special.ndtr` in its
    order (negate, times sqrt(1/2), libm ``erfc``, times 0.5): that function's values."""
    for i in range(z.shape[0]):
        out[i] = 0.5 * math.erfc(-z[i] * _SQRT1_2)


def _py_kde_sum(d, x, h):  # pragma: no cover - numba
    """``out[j] = sum_i phi((x[j] - d[i]) / h) / (n h)``, phi the standard Normal density."""
    out = np.zeros(x.size)
    c = _INV_SQRT_2PI / (d.size * h)
    for j in range(x.size):
        acc = 0.0
        for i in range(d.size):
            z = (x[j] - d[i]) / h
            acc += math.exp(-0.5 * z * z)
        out[j] = acc * c
    return out


_GROUP = KernelGroup(globals())
#: :func:`_py_ndtr_ratio_rows` compiled by numba on its first call.
ndtr_ratio_rows = _GROUP.kernel(_py_ndtr_ratio_rows, nogil=True,
                                sig=("f8[::1]", "f8[::1]", "f8[:,::1]"))
#: :func:`_py_ndtr_into` compiled by numba on its first call (releases the GIL).
ndtr_into = _GROUP.kernel(_py_ndtr_into, nogil=True, sig=("f8[::1]", "f8[::1]"))
#: :func:`_py_kde_sum` compiled by numba on its first call (releases the GIL).
kde_sum = _GROUP.kernel(_py_kde_sum, nogil=True, sig=("f8[::1]", "f8[::1]", "f8"))
