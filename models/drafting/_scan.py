"""One-pass scanner of capture lines: JSON checked and token ids parsed in one kernel.

Private module of :mod:`models.drafting.capture`. The kernel :func:`_py_scan_records` reads
a chunk of a ``.jsonl`` capture (bytes, whole lines) once, and for every line that is a
plain capture record writes the token ids of its two arrays to ``out`` and the positions of
its fields to ``rec``; it replaces, for such lines, splitting the chunk into lines, a
msgspec decode per line, joining the raw arrays and parsing them (issue 9: about 0.1 s of
a 0.7 s ``planner draft`` on a 22.7 MB capture).

A line is *plain* when it is, byte for byte, valid JSON (RFC 8259) of this shape:

* one object, whitespace around tokens allowed, nothing else on the line;
* ``id``: a string without escapes, or a non-negative integer of at most 18 digits;
* ``prompt_token_ids``, ``completion_token_ids``: non-empty arrays of integers in
  0..2^31-1 (JSON's integer grammar: no sign, no leading zero, no fraction or exponent);
* ``group``, ``kind`` (optional): a string without escapes, or ``null``;
* any other key: any JSON value (skipped, fully checked; nesting up to 64 levels);
* no key twice among the five above; every key a string without escapes.

Anything else (blank lines aside) is marked *fallback*: the caller then reads the chunk
with the msgspec + line-by-line reader, which words every error (file, line, field) as
before. So the scanner never has to produce an error message, only to be right when it
says "plain": it accepts a subset of what both other readers accept, and reads it as they
do (``json.loads`` keeps the last of two equal keys; the five above are never repeated
here; other keys are ignored by every reader).

``rec`` columns (int64), one row per line of the chunk:

== ======================================================================
0  status: 0 plain record, 1 blank (whitespace only), 2 fallback
1  line start, 2 line end (byte offsets; the end excludes the newline)
3  id kind (0 string, 1 integer), 4-5 string bytes [a, b) or 4 the integer
6  prompt start in ``out``, 7 its count; 8 completion start, 9 its count
10 group kind (0 absent or null, 2 string), 11-12 its bytes [a, b)
13 kind kind, 14-15 its bytes (as group)
== ======================================================================
"""

from __future__ import annotations

import numpy as np

#: Columns of the record table (see the module docstring).
N_COLS = 16
#: Nesting depth the skipper of unknown values follows (deeper: fallback).
MAX_DEPTH = 64

_PROMPT = (112, 114, 111, 109, 112, 116, 95, 116, 111, 107, 101, 110, 95, 105, 100, 115)
_COMPLETION = (99, 111, 109, 112, 108, 101, 116, 105, 111, 110, 95, 116, 111, 107, 101, 110,
               95, 105, 100, 115)
_GROUP = (103, 114, 111, 117, 112)
_KIND = (107, 105, 110, 100)


def _ws(buf, j, e):
    """First index >= j that is not JSON whitespace (or e)."""
    while j < e:
        c = buf[j]
        if c == 32 or c == 9 or c == 13 or c == 10:
            j += 1
        else:
            break
    return j


def _string(buf, j, e, plain):
    """``buf[j]`` is '"': the index after the closing quote, or -1 when the string is not
    valid JSON (a control byte, a bad escape, no closing quote) or, with ``plain``, has an
    escape."""
    j += 1
    while j < e:
        c = buf[j]
        if c == 34:
            return j + 1
        if c < 32:
            return -1
        if c == 92:
            if plain or j + 1 >= e:
                return -1
            d = buf[j + 1]
            if d == 117:  # \uXXXX
                if j + 6 > e:
                    return -1
                for q in range(j + 2, j + 6):
                    h = buf[q]
                    if not ((48 <= h <= 57) or (65 <= h <= 70) or (97 <= h <= 102)):
                        return -1
                j += 6
                continue
            if d == 34 or d == 92 or d == 47 or d == 98 or d == 102 or d == 110 or \
                    d == 114 or d == 116:
                j += 2
                continue
            return -1
        j += 1
    return -1


def _number(buf, j, e):
    """A JSON number at j: the index after it, or -1."""
    if j < e and buf[j] == 45:
        j += 1
    if j >= e:
        return -1
    if buf[j] == 48:
        j += 1
    else:
        j = _digits(buf, j, e)  # (a leading 0 took the branch above)
        if j < 0:
            return -1
    if j < e and buf[j] == 46:
        j = _digits(buf, j + 1, e)
        if j < 0:
            return -1
    if j < e and (buf[j] == 101 or buf[j] == 69):
        j += 1
        if j < e and (buf[j] == 43 or buf[j] == 45):
            j += 1
        j = _digits(buf, j, e)
    return j


def _digits(buf, j, e):
    """One or more decimal digits at j: the index after them, or -1."""
    s = j
    while j < e and 48 <= buf[j] <= 57:
        j += 1
    return j if j > s else -1


def _literal(buf, j, e):
    """``true``, ``false`` or ``null`` at j: the index after it, or -1."""
    c = buf[j]
    if c == 116:
        if j + 4 <= e and buf[j + 1] == 114 and buf[j + 2] == 117 and buf[j + 3] == 101:
            return j + 4
    elif c == 102:
        if j + 5 <= e and buf[j + 1] == 97 and buf[j + 2] == 108 and buf[j + 3] == 115 and \
                buf[j + 4] == 101:
            return j + 5
    elif c == 110:
        if j + 4 <= e and buf[j + 1] == 117 and buf[j + 2] == 108 and buf[j + 3] == 108:
            return j + 4
    return -1


def _member_key(buf, j, e):
    """At j (after '{' or ','), a key string, ':' and whitespace: the index of the value,
    or -1."""
    if j >= e or buf[j] != 34:
        return -1
    j = _string(buf, j, e, False)
    if j < 0:
        return -1
    j = _ws(buf, j, e)
    if j >= e or buf[j] != 58:
        return -1
    return _ws(buf, j + 1, e)


def _skip_value(buf, j, e, stack):
    """One JSON value at j (no leading whitespace), any depth up to ``stack.size``: the
    index after it, or -1 when it is not valid JSON."""
    depth = 0
    while True:
        if j >= e:
            return -1
        c = buf[j]
        if c == 123 or c == 91:  # '{' or '['
            if depth >= stack.shape[0]:
                return -1
            j = _ws(buf, j + 1, e)
            if j >= e:
                return -1
            if buf[j] == (125 if c == 123 else 93):  # empty container
                j += 1
            else:
                stack[depth] = c
                depth += 1
                if c == 123:
                    j = _member_key(buf, j, e)
                    if j < 0:
                        return -1
                continue  # its first value
        elif c == 34:
            j = _string(buf, j, e, False)
        elif c == 116 or c == 102 or c == 110:
            j = _literal(buf, j, e)
        else:
            j = _number(buf, j, e)
        if j < 0:
            return -1
        # after a value: close containers, or go on to the next value
        while True:
            if depth == 0:
                return j
            j = _ws(buf, j, e)
            if j >= e:
                return -1
            top = stack[depth - 1]
            if buf[j] == (125 if top == 123 else 93):
                depth -= 1
                j += 1
                continue
            if buf[j] != 44:
                return -1
            j = _ws(buf, j + 1, e)
            if top == 123:
                j = _member_key(buf, j, e)
                if j < 0:
                    return -1
            break


def _equals(buf, a, lit):
    """``buf[a:a + len(lit)]`` holds the bytes ``lit`` (a tuple of ints)."""
    for q in range(len(lit)):
        if buf[a + q] != lit[q]:
            return False
    return True


def _key_code(buf, a, b):
    """1 id, 2 prompt_token_ids, 4 completion_token_ids, 8 group, 16 kind, 0 another key
    (``buf[a:b]``, the key's bytes; the five have five lengths)."""
    n = b - a
    if n == 2:
        return 1 if buf[a] == 105 and buf[a + 1] == 100 else 0
    if n == 16:
        return 2 if _equals(buf, a, _PROMPT) else 0
    if n == 20:
        return 4 if _equals(buf, a, _COMPLETION) else 0
    if n == 5:
        return 8 if _equals(buf, a, _GROUP) else 0
    if n == 4:
        return 16 if _equals(buf, a, _KIND) else 0
    return 0


def _uint(buf, j, e, max_digits):
    """A JSON integer without sign at j (no leading zero, at most ``max_digits`` digits,
    no fraction or exponent after it): ``(index after it, value)``, or ``(-1, 0)``."""
    s = j
    v = 0
    while j < e and 48 <= buf[j] <= 57:
        v = v * 10 + (buf[j] - 48)
        j += 1
        if j - s > max_digits:
            return -1, 0
    if j == s or (buf[s] == 48 and j - s > 1):
        return -1, 0
    if j < e and (buf[j] == 46 or buf[j] == 101 or buf[j] == 69):
        return -1, 0
    return j, v


def _token_ids(buf, j, e, out, k):
    """A non-empty JSON array of integers in 0..2^31-1 at j: ``(index after it, new k)``
    with the ids written to ``out[k:]``, or ``(-1, k)``."""
    if j >= e or buf[j] != 91:
        return -1, k
    j = _ws(buf, j + 1, e)
    while True:
        if j >= e:
            return -1, k
        j, v = _uint(buf, j, e, 10)
        if j < 0 or v > 2147483647:
            return -1, k
        out[k] = v
        k += 1
        j = _ws(buf, j, e)
        if j >= e:
            return -1, k
        if buf[j] == 93:
            return j + 1, k
        if buf[j] != 44:
            return -1, k
        j = _ws(buf, j + 1, e)


def _plain_string_or_null(buf, j, e, rec, r, col):
    """``group`` / ``kind`` at j: a string without escapes (rec[r, col] = 2 and its bytes)
    or ``null`` (0): the index after it, or -1."""
    if buf[j] == 34:
        j2 = _string(buf, j, e, True)
        if j2 < 0:
            return -1
        rec[r, col] = 2
        rec[r, col + 1] = j + 1
        rec[r, col + 2] = j2 - 1
        return j2
    if buf[j] == 110 and _literal(buf, j, e) == j + 4:
        rec[r, col] = 0
        return j + 4
    return -1


def _record(buf, j, e, out, k, rec, r, stack):
    """The object at j (``buf[j]`` is '{') up to the line end e: the new k when it is a
    plain record (fields in ``rec[r]``), else -1."""
    seen = 0
    j = _ws(buf, j + 1, e)
    if j < e and buf[j] == 125:
        return -1  # {}: the fallback words the missing fields
    while True:
        if j >= e or buf[j] != 34:
            return -1
        a = j + 1
        j2 = _string(buf, j, e, True)
        if j2 < 0:
            return -1
        code = _key_code(buf, a, j2 - 1)
        j = _ws(buf, j2, e)
        if j >= e or buf[j] != 58:
            return -1
        j = _ws(buf, j + 1, e)
        if j >= e or (seen & code) != 0:
            return -1
        seen |= code
        if code == 1:
            c = buf[j]
            if c == 34:
                j2 = _string(buf, j, e, True)
                if j2 < 0:
                    return -1
                rec[r, 3] = 0
                rec[r, 4] = j + 1
                rec[r, 5] = j2 - 1
                j = j2
            elif 48 <= c <= 57:
                j, v = _uint(buf, j, e, 18)
                if j < 0:
                    return -1
                rec[r, 3] = 1
                rec[r, 4] = v
            else:
                return -1
        elif code == 2 or code == 4:
            k0 = k
            j, k = _token_ids(buf, j, e, out, k)
            if j < 0:
                return -1
            col = 6 if code == 2 else 8
            rec[r, col] = k0
            rec[r, col + 1] = k - k0
        elif code == 8 or code == 16:
            j = _plain_string_or_null(buf, j, e, rec, r, 10 if code == 8 else 13)
            if j < 0:
                return -1
        else:
            j = _skip_value(buf, j, e, stack)
            if j < 0:
                return -1
        j = _ws(buf, j, e)
        if j >= e:
            return -1
        if buf[j] == 125:
            j += 1
            break
        if buf[j] != 44:
            return -1
        j = _ws(buf, j + 1, e)
    if _ws(buf, j, e) != e or (seen & 7) != 7:
        return -1
    return k


def _py_scan_records(buf, out, rec):  # pragma: no cover - numba
    """Scan whole lines of ``buf`` (see the module docstring) into ``out`` and ``rec``
    (one row per line, ``rec.shape[0]`` lines at most). Returns the ids written to
    ``out``; a fallback line writes none."""
    stack = np.empty(MAX_DEPTH, np.uint8)
    n = buf.shape[0]
    i = 0
    r = 0
    k = 0
    while i < n and r < rec.shape[0]:
        e = i
        while e < n and buf[e] != 10:
            e += 1
        for q in range(N_COLS):
            rec[r, q] = 0
        rec[r, 1] = i
        rec[r, 2] = e
        j = _ws(buf, i, e)
        if j == e:
            rec[r, 0] = 1
        elif buf[j] != 123:
            rec[r, 0] = 2
        else:
            k2 = _record(buf, j, e, out, k, rec, r, stack)
            if k2 < 0:
                rec[r, 0] = 2
            else:
                k = k2
        r += 1
        i = e + 1
    return k


#: The kernel's callees and their numba options (compiled and rebound in this module's
#: globals before the kernel, by either route: the kernel body calls them by these names).
_HELPERS = ("_ws", "_string", "_digits", "_number", "_literal", "_member_key", "_skip_value",
            "_equals", "_key_code", "_uint", "_token_ids", "_plain_string_or_null", "_record")
_PY_HELPERS = {name: globals()[name] for name in _HELPERS}
_JITTED: dict = {}


def _jit_helpers() -> None:
    """Compile the callees with numba and rebind their names here (idempotent; imports
    numba)."""
    if _JITTED:
        return
    from numba import njit

    g = globals()
    for name in _HELPERS:
        g[name] = njit(cache=True)(_PY_HELPERS[name])
    _JITTED["_helpers"] = True


def _jit_scan():
    """:func:`_py_scan_records` compiled by numba's JIT (``cache=True``; imports numba)."""
    if "scan" not in _JITTED:
        _jit_helpers()
        from numba import njit

        _JITTED["scan"] = njit(cache=True, nogil=True)(_py_scan_records)
    return _JITTED["scan"]


def _make_kernel():
    from models.kernels._aot import lazy

    return lazy("scan_records", _jit_scan)


#: :func:`_py_scan_records` compiled, ahead of time (:mod:`models.kernels._aot`) or by numba on the
#: first call: importing this module imports neither.
scan_records = _make_kernel()
