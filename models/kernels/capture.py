"""Kernel of the capture reader: parse JSON arrays of token ids into one int32 array.

Private module: the public interface is :func:`models.drafting.capture.load_capture`.
"""

from __future__ import annotations

from models.kernels._jit import KernelGroup

__all__ = ["parse_token_arrays"]


def _py_parse_token_arrays(buf, bounds, out, counts):  # pragma: no cover - numba
    """Parse JSON arrays of non-negative int32 ids.

    ``buf[bounds[m]:bounds[m + 1]]`` is array m's text, already valid JSON (msgspec);
    its ids are appended to ``out`` and ``counts[m]`` set to how many, or -1 (nothing
    appended) when it is not a non-empty array of integers in 0..2^31-1.
    """
    k = 0
    for m in range(bounds.shape[0] - 1):
        a = bounds[m]
        b = bounds[m + 1]
        counts[m] = -1
        if b - a < 3 or buf[a] != 91 or buf[b - 1] != 93:  # '[' ... ']'
            continue
        k0 = k
        val = 0
        nd = 0
        ok = True
        for i in range(a + 1, b):
            c = buf[i]
            if 48 <= c <= 57:
                val = val * 10 + (c - 48)
                nd += 1
                if nd > 10:
                    ok = False
                    break
            elif c == 44 or c == 93:  # ',' or the closing ']'
                if nd == 0 or val > 2147483647:
                    ok = False
                    break
                out[k] = val
                k += 1
                val = 0
                nd = 0
            elif not (c == 32 or c == 9 or c == 10 or c == 13):
                ok = False
                break
        if ok:
            counts[m] = k - k0
        else:
            k = k0
    return k


_GROUP = KernelGroup(globals())
#: :func:`_py_parse_token_arrays` compiled by numba on its first call.
parse_token_arrays = _GROUP.kernel(_py_parse_token_arrays, nogil=True,
                                   sig=("u1[::1]r", "i8[::1]", "i4[::1]", "i8[::1]"))
