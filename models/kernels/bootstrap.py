"""Kernel of the token bootstrap: gathered row sums, summed as NumPy sums them.

Private module: the public interface is :mod:`models.drafting.bootstrap`, which also
builds the summation program ``prog`` (NumPy's pairwise order, so a replicate's sum is
bit for bit ``V[sel][idx].sum()``).
"""

from __future__ import annotations

import numpy as np

from models.kernels._jit import KernelGroup

__all__ = ["gather_sums"]


def _py_leaf_sum(buf, lo, m):  # pragma: no cover - numba
    if m < 8:
        res = 0.0
        for i in range(lo, lo + m):
            res += buf[i]
        return res
    r0, r1, r2, r3 = buf[lo], buf[lo + 1], buf[lo + 2], buf[lo + 3]
    r4, r5, r6, r7 = buf[lo + 4], buf[lo + 5], buf[lo + 6], buf[lo + 7]
    i = 8
    while i < m - m % 8:
        j = lo + i
        r0 += buf[j]
        r1 += buf[j + 1]
        r2 += buf[j + 2]
        r3 += buf[j + 3]
        r4 += buf[j + 4]
        r5 += buf[j + 5]
        r6 += buf[j + 6]
        r7 += buf[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < m:
        res += buf[lo + i]
        i += 1
    return res


def _py_gather_sums(V, sel, idx, b0, c, prog, out):  # pragma: no cover - numba
    """``out[s, b0 + i] = V[sel[s, b0 + i]][idx[i]].sum()`` for i < c, summed as NumPy
    sums (``prog``)."""
    P = idx.shape[1]
    buf = np.empty(P)
    stack = np.empty(prog.shape[0] + 1)
    for i in range(c):
        b = b0 + i
        for s in range(sel.shape[0]):
            row = V[sel[s, b]]
            for p in range(P):
                buf[p] = row[idx[i, p]]
            sp = 0
            for q in range(prog.shape[0]):
                if prog[q, 0] < 0:
                    sp -= 1
                    stack[sp - 1] = stack[sp - 1] + stack[sp]
                else:
                    stack[sp] = _leaf_sum(buf, prog[q, 0], prog[q, 1])
                    sp += 1
            out[s, b] = stack[0]


_GROUP = KernelGroup(globals(), {"_leaf_sum": (_py_leaf_sum, {"nogil": True})})
_leaf_sum = _py_leaf_sum  # rebound to the compiled callee before the kernel is compiled
#: :func:`_py_gather_sums` compiled by numba on its first call.
gather_sums = _GROUP.kernel(_py_gather_sums, nogil=True, sig=(
    "f8[:,::1]", "i8[:,::1]", "i8[:,::1]", "i8", "i8", "i8[:,::1]", "f8[:,::1]"))
