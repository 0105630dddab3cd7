"""Kernels for lookup-based draft profiles and the step walk (numba JIT).

Private module: the public, documented interface is :mod:`models.drafting.lookup`
and :mod:`models.drafting.walk`.  All kernels work on a *batch* laid out as

* ``seq``      int32[total]   prompt_r + completion_r concatenated for every request r
* ``seq_off``  int64[R+1]     start of request r in ``seq``
* ``plen``     int64[R]       prompt length of request r
* ``comp_off`` int64[R+1]     start of request r's completion positions in the outputs

and fill ``acc``, ``mlen``, ``prop`` (int32[comp_off[-1]]) in place.
Position ``p`` in a request's sequence is "context = seq[:p]"; completion position
``t = p - plen``.

Every kernel is a plain Python function ``_py_<name>``; ``<name>`` (``pld_batch``, ...)
calls it compiled by numba's JIT on its first call (:mod:`models.kernels._jit`), which
first compiles the kernels' callees and rebinds their global names here. Importing this
module does not import numba.
"""

from __future__ import annotations

import numpy as np

from models.kernels._jit import KernelGroup

_U64 = np.uint64
_B = np.uint64(0x9E3779B97F4A7C15)  # odd multiplier for polynomial hashing (mod 2**64)
_MIX = np.uint64(0xBF58476D1CE4E5B9)


def _mix(h):
    h = h ^ (h >> np.uint64(31))
    h = h * _MIX
    h = h ^ (h >> np.uint64(29))
    return h


def _ngram_hash(S, j, n):
    h = np.uint64(0)
    for i in range(n):
        h = h * _B + np.uint64(S[j + i] + 1)
    return _mix(h)


def _same(S, a, b, n):
    for i in range(n):
        if S[a + i] != S[b + i]:
            return False
    return True


def _table_find(S, tab_pos, tab_stamp, mask, stamp, j, n, h):
    """Slot holding an n-gram equal to S[j:j+n] (exact compare), or the empty slot to use."""
    slot = np.int64(h & mask)
    while True:
        if tab_stamp[slot] != stamp:
            return slot, False
        if _same(S, tab_pos[slot], j, n):
            return slot, True
        slot = (slot + 1) & mask


def _lce(S, a, b, end, cap):
    """Length of the common prefix of S[a:] and S[b:], b < end, at most ``cap``."""
    k = 0
    while k < cap and b + k < end and S[a + k] == S[b + k]:
        k += 1
    return k


def _table_size(seq_off, R):
    """Power-of-two hash-table size holding every n-gram start of the longest sequence."""
    maxN = 1
    for r in range(R):
        L = seq_off[r + 1] - seq_off[r]
        if L > maxN:
            maxN = L
    size = 1
    while size < 2 * maxN + 2:
        size *= 2
    return size


def _py_pld_batch(seq, seq_off, plen, comp_off, n, D, acc, mlen, prop):
    """Prompt lookup: most recent earlier occurrence of the last n tokens.

    The n-gram looked up at position p (``S[p-n:p]``) is the one inserted at p + 1, and the
    table does not change in between, so the insert reuses the lookup's slot (the key's
    slot, or the empty one where it goes) instead of hashing and probing again."""
    R = plen.shape[0]
    size = _table_size(seq_off, R)
    mask = np.uint64(size - 1)
    tab_pos = np.zeros(size, np.int64)
    tab_stamp = np.full(size, -1, np.int64)
    for r in range(R):
        S = seq[seq_off[r]:seq_off[r + 1]]
        N = S.shape[0]
        P = plen[r]
        o = comp_off[r]
        carry = -1  # slot of S[p-n-1:p-1] found by the lookup at p - 1, or -1
        for p in range(N):
            j = p - n - 1  # newest n-gram start whose continuation is known
            if j >= 0:
                if carry >= 0:
                    slot = carry
                else:
                    h = _ngram_hash(S, j, n)
                    slot, found = _table_find(S, tab_pos, tab_stamp, mask, r, j, n, h)
                tab_pos[slot] = j  # most recent occurrence wins
                tab_stamp[slot] = r
            carry = -1
            if p < P:
                continue
            t = p - P
            a = 0
            m = 0
            d = 0
            if p >= n:
                h = _ngram_hash(S, p - n, n)
                slot, found = _table_find(S, tab_pos, tab_stamp, mask, r, p - n, n, h)
                carry = slot
                if found:
                    s = tab_pos[slot] + n
                    d = min(D, p - s)
                    m = n
                    a = _lce(S, s, p, N, d)
            acc[o + t] = a
            mlen[o + t] = m
            prop[o + t] = d


def _py_ngram_batch(seq, seq_off, plen, comp_off, nmin, nmax, k, acc, mlen, prop):
    """vLLM NgramProposer: longest suffix n-gram in [nmin, nmax], earliest occurrence."""
    R = plen.shape[0]
    size = _table_size(seq_off, R)
    mask = np.uint64(size - 1)
    nn = nmax - nmin + 1
    tab_pos = np.zeros((nn, size), np.int64)
    tab_stamp = np.full((nn, size), -1, np.int64)
    for r in range(R):
        S = seq[seq_off[r]:seq_off[r + 1]]
        N = S.shape[0]
        P = plen[r]
        o = comp_off[r]
        for p in range(N):
            for n in range(nmin, nmax + 1):
                j = p - n - 1
                if j >= 0:
                    h = _ngram_hash(S, j, n)
                    slot, found = _table_find(S, tab_pos[n - nmin], tab_stamp[n - nmin],
                                              mask, r, j, n, h)
                    if not found:  # keep the earliest occurrence
                        tab_pos[n - nmin, slot] = j
                        tab_stamp[n - nmin, slot] = r
            if p < P:
                continue
            t = p - P
            a = 0
            m = 0
            d = 0
            for n in range(nmax, nmin - 1, -1):
                if p < n:
                    continue
                h = _ngram_hash(S, p - n, n)
                slot, found = _table_find(S, tab_pos[n - nmin], tab_stamp[n - nmin],
                                          mask, r, p - n, n, h)
                if found:
                    s = tab_pos[n - nmin, slot] + n
                    d = min(k, p - s)
                    m = n
                    a = _lce(S, s, p, N, d)
                    break
            acc[o + t] = a
            mlen[o + t] = m
            prop[o + t] = d


# ---------------------------------------------------------------------------
# Step walk
# ---------------------------------------------------------------------------

def _py_walk_batch(acc, prop, mlen, comp_off, start, out_pos, out_acc, out_com, out_prop,
               out_ml, step_off):
    """Walk every request: t=start; a = min(acc[t], prop[t], L-t); commit min(a+1, L-t).

    Returns the total number of steps; ``out_*[:k]`` hold the trace."""
    R = comp_off.shape[0] - 1
    k = 0
    for r in range(R):
        o = comp_off[r]
        L = comp_off[r + 1] - o
        step_off[r] = k
        t = start if start < L else L
        while t < L:
            a = acc[o + t]
            if a > prop[o + t]:
                a = prop[o + t]
            if a > L - t:
                a = L - t
            out_pos[k] = t
            out_acc[k] = a
            out_prop[k] = prop[o + t]
            out_ml[k] = mlen[o + t]
            c = a + 1
            if c > L - t:
                c = L - t
            out_com[k] = c
            t += c
            k += 1
    step_off[R] = k
    return k


def _py_step_sums(step_off, com, prop, step_cost, run_cap, tokens, forwards, drafts, extra,
              rows, time_ms):
    """Per-request sums of a walk trace, in step order; returns #steps with com-1 > run_cap.

    ``extra`` = sum(com - 1) (the committed accepted count); ``drafts`` counts prop > 0;
    ``rows`` sums prop + 1; ``time_ms`` sums ``step_cost`` sequentially from 0.0."""
    over = 0
    for r in range(step_off.shape[0] - 1):
        tk = 0.0
        ex = 0.0
        dr = 0.0
        rw = 0.0
        tm = 0.0
        for k in range(step_off[r], step_off[r + 1]):
            tk += com[k]
            ex += com[k] - 1
            if prop[k] > 0:
                dr += 1.0
            rw += prop[k] + 1
            tm += step_cost[k]
            if com[k] - 1 > run_cap:
                over += 1
        tokens[r] = tk
        forwards[r] = step_off[r + 1] - step_off[r]
        drafts[r] = dr
        extra[r] = ex
        rows[r] = rw
        time_ms[r] = tm
    return over


def _py_walk_sums(acc, prop, comp_off, start, step_cost, run_cap, tokens, forwards, drafts, extra,
              rows, time_ms, hist):
    """:func:`walk_batch` and :func:`step_sums` in one pass, without the trace.

    A step at ``t`` costs ``step_cost[prop[t]]`` (a table over proposed draft lengths),
    summed per request in step order from 0.0, as :func:`step_sums` sums the trace, so the
    per-request sums are the same numbers. ``hist[a]`` counts steps by the verifier's
    accepted count (``hist`` must hold max(prop) + 1 cells). Returns the number of steps
    with ``c - 1 > run_cap``."""
    over = 0
    for r in range(comp_off.shape[0] - 1):
        o = comp_off[r]
        L = comp_off[r + 1] - o
        t = start if start < L else L
        tk = 0.0
        ex = 0.0
        dr = 0.0
        rw = 0.0
        tm = 0.0
        nf = 0
        while t < L:
            d = prop[o + t]
            a = acc[o + t]
            if a > d:
                a = d
            if a > L - t:
                a = L - t
            hist[a] += 1
            c = a + 1
            if c > L - t:
                c = L - t
            tk += c
            ex += c - 1
            if d > 0:
                dr += 1.0
            rw += d + 1
            tm += step_cost[d]
            if c - 1 > run_cap:
                over += 1
            nf += 1
            t += c
        tokens[r] = tk
        forwards[r] = nf
        drafts[r] = dr
        extra[r] = ex
        rows[r] = rw
        time_ms[r] = tm
    return over


# ---------------------------------------------------------------------------
# Suffix drafting: hashed suffix trie (substrings up to max_depth with counts)
# ---------------------------------------------------------------------------
# Table layout: keyh uint64[size] (raw polynomial hash of the substring),
# T int32[size, 8] columns:
_LEN, _CNT, _PAR, _FCH, _NSIB, _TOK, _BEST, _STAMP = 0, 1, 2, 3, 4, 5, 6, 7


def _tfind(keyh, T, mask, h, ln, stamp):
    slot = np.int64(_mix(h) & mask)
    while True:
        if T[slot, _STAMP] != stamp:
            return -1 - slot  # empty slot, encoded negative
        if keyh[slot] == h and T[slot, _LEN] == ln:
            return slot
        slot = (slot + 1) & mask


def _tinc(keyh, T, mask, par, par_h, x, ln, stamp, new):
    """Count one more occurrence of (parent substring + x); return (slot, hash).
    ``new[0]`` counts the slots taken (nodes created)."""
    h = par_h * _B + np.uint64(x + 1)
    s = _tfind(keyh, T, mask, h, ln, stamp)
    if s < 0:
        s = -1 - s
        new[0] += 1
        keyh[s] = h
        T[s, _LEN] = ln
        T[s, _CNT] = 0
        T[s, _PAR] = par
        T[s, _FCH] = -1
        T[s, _TOK] = x
        T[s, _BEST] = -1
        T[s, _STAMP] = stamp
        if par >= 0:
            T[s, _NSIB] = T[par, _FCH]
            T[par, _FCH] = s
        else:
            T[s, _NSIB] = -1
    T[s, _CNT] += 1
    if par >= 0:
        b = T[par, _BEST]
        if b < 0 or T[s, _CNT] > T[b, _CNT]:
            T[par, _BEST] = s
    return s, h


def _tdec(keyh, T, mask, par, par_h, x, ln, stamp):
    h = par_h * _B + np.uint64(x + 1)
    s = _tfind(keyh, T, mask, h, ln, stamp)
    if s < 0:  # cannot happen for a sequence that was added
        return -1, h
    T[s, _CNT] -= 1
    if par >= 0 and T[par, _BEST] == s:
        best = -1
        bc = 0
        c = T[par, _FCH]
        while c >= 0:
            if T[c, _CNT] > bc:
                bc = T[c, _CNT]
                best = c
            c = T[c, _NSIB]
        T[par, _BEST] = best
    return s, h


def _tappend(keyh, T, mask, stamp, act_s, act_h, cur_len, x, depth, sign, new):
    """Append token x to a sequence whose active suffix nodes are act_*[1..]."""
    top = min(depth, cur_len + 1)
    for ln in range(top, 0, -1):
        if sign > 0:
            s, h = _tinc(keyh, T, mask, act_s[ln - 1], act_h[ln - 1], x, ln, stamp, new)
        else:
            s, h = _tdec(keyh, T, mask, act_s[ln - 1], act_h[ln - 1], x, ln, stamp)
        act_s[ln] = s
        act_h[ln] = h


def _tadd_seq(keyh, T, mask, stamp, S, a, b, depth, sign, new):
    act_s = np.full(depth + 1, -1, np.int64)
    act_h = np.zeros(depth + 1, np.uint64)
    for q in range(a, b):
        _tappend(keyh, T, mask, stamp, act_s, act_h, q - a, S[q], depth, sign, new)


def _tspeculate(keyh, T, mask, stamp, S, p, depth, max_spec, factor, offset, min_prob,
                powB, buf, best_buf):
    """arctic-inference SuffixTree::speculate (path mode) on the hashed trie.

    Returns (score, match_len, n_tokens); tokens in best_buf.
    """
    best_score = np.float32(0.0)
    best_m = 0
    best_n = 0
    Lp = min(depth, p)
    h = np.uint64(0)
    for m in range(1, Lp):
        h = h + np.uint64(S[p - m] + 1) * powB[m - 1]
        node = _tfind(keyh, T, mask, h, m, stamp)
        if node < 0 or T[node, _CNT] <= 0:
            break
        mt = min(max_spec, int(m * factor + offset + 1e-6))
        if mt < 0:
            mt = 0
        prob = np.float32(1.0)
        score = np.float32(0.0)
        nt = 0
        while nt < mt:
            c = T[node, _BEST]
            if c < 0 or T[c, _CNT] <= 0:
                break
            prob = prob * (np.float32(T[c, _CNT]) / np.float32(T[node, _CNT]))
            if prob < min_prob:
                break
            buf[nt] = T[c, _TOK]
            score += prob
            nt += 1
            node = c
        if score >= best_score:
            best_score = score
            best_m = m
            best_n = nt
            for i in range(nt):
                best_buf[i] = buf[i]
    return best_score, best_m, best_n


def _py_suffix_batch(seq, seq_off, plen, comp_off, order, depth, max_spec, factor, offset,
                 min_prob, cache_mode, cache_size, gsize, lsize, acc, mlen, prop, nodes):
    """Suffix decoding replay over requests in ``order``.

    cache_mode: 0 = no global cache, 1 = FIFO of ``cache_size`` requests (including the
    active one; cache_size < 0 = unlimited), 2 = leave-one-out (all other requests).
    Returns 0 on success, 1 when the global table (``gsize`` slots) could pass 70 % full
    (checked before each sequence is added, against the nodes it already holds plus
    ``depth`` per token to add: the caller retries with a larger table; the result does
    not depend on the table size), 2 when the local table is too small (a sizing error).
    ``nodes[0]`` receives the global table's node count.
    """
    # the global table's stamp and the add / remove signs as int64 values, not constants:
    # numba types a constant argument as its literal (Literal[int](0)) and compiles each
    # callee once per literal it is given (_tappend three times, _tinc, _tdec, _tfind,
    # _tadd_seq, _tspeculate twice: 8.8 -> 6.8 s CPU of this kernel's cold compile)
    zero = np.int64(0)
    plus = np.int64(1)
    minus = np.int64(-1)
    R = plen.shape[0]
    powB = np.empty(depth + 1, np.uint64)
    powB[0] = np.uint64(1)
    for i in range(1, depth + 1):
        powB[i] = powB[i - 1] * _B
    gmask = np.uint64(gsize - 1)
    lmask = np.uint64(lsize - 1)
    gkey = np.zeros(gsize if cache_mode != 0 else 1, np.uint64)
    gT = np.full((gsize if cache_mode != 0 else 1, 8), -1, np.int32)
    lkey = np.zeros(lsize, np.uint64)
    lT = np.full((lsize, 8), -1, np.int32)
    buf = np.empty(depth + 1, np.int32)
    bl = np.empty(depth + 1, np.int32)
    bg = np.empty(depth + 1, np.int32)
    gnew = np.zeros(1, np.int64)  # global slots taken
    lnew = np.zeros(1, np.int64)  # (local slots: not needed, the table is reset by stamp)
    if cache_mode == 2:
        for r in range(R):
            a = seq_off[r] + plen[r]
            if (gnew[0] + (seq_off[r + 1] - a) * depth) * 10 > gsize * 7:
                return 1
            _tadd_seq(gkey, gT, gmask, zero, seq, a, seq_off[r + 1], depth, plus, gnew)
    fifo = np.empty(R, np.int64)
    fhead = 0
    ftail = 0
    g_s = np.full(depth + 1, -1, np.int64)
    g_h = np.zeros(depth + 1, np.uint64)
    l_s = np.full(depth + 1, -1, np.int64)
    l_h = np.zeros(depth + 1, np.uint64)
    for oi in range(order.shape[0]):
        r = order[oi]
        S = seq[seq_off[r]:seq_off[r + 1]]
        N = S.shape[0]
        P = plen[r]
        o = comp_off[r]
        stamp = oi + 1
        if (N * depth) * 10 > lsize * 7:
            return 2
        # local tree: prompt (+ response appended as it is committed)
        l_s[:] = -1
        l_h[:] = 0
        for q in range(P):
            _tappend(lkey, lT, lmask, stamp, l_s, l_h, q, S[q], depth, plus, lnew)
        # global tree bookkeeping
        if cache_mode == 1:
            if cache_size >= 0:
                while ftail - fhead > cache_size - 1 and ftail > fhead:
                    e = fifo[fhead]
                    fhead += 1
                    _tadd_seq(gkey, gT, gmask, zero, seq, seq_off[e] + plen[e],
                              seq_off[e + 1], depth, minus, gnew)
            fifo[ftail] = r
            ftail += 1
        elif cache_mode == 2:
            _tadd_seq(gkey, gT, gmask, zero, seq, seq_off[r] + P, seq_off[r + 1], depth, minus,
                      gnew)
        if cache_mode == 1 and (gnew[0] + (N - P) * depth) * 10 > gsize * 7:
            return 1  # (leave-one-out re-adds only nodes the table holds)
        g_s[:] = -1
        g_h[:] = 0
        for p in range(P, N):
            t = p - P
            sl, ml, nl = _tspeculate(lkey, lT, lmask, stamp, S, p, depth, max_spec, factor,
                                     offset, min_prob, powB, buf, bl)
            src = bl
            m = ml
            n = nl
            if cache_mode != 0:
                sg, mg, ng = _tspeculate(gkey, gT, gmask, zero, S, p, depth, max_spec, factor,
                                         offset, min_prob, powB, buf, bg)
                if sg > sl:
                    src = bg
                    m = mg
                    n = ng
            a = 0
            while a < n and p + a < N and src[a] == S[p + a]:
                a += 1
            acc[o + t] = a
            mlen[o + t] = m if n > 0 else 0
            prop[o + t] = n
            _tappend(lkey, lT, lmask, stamp, l_s, l_h, p, S[p], depth, plus, lnew)
            if cache_mode != 0:
                _tappend(gkey, gT, gmask, zero, g_s, g_h, t, S[p], depth, plus, gnew)
    nodes[0] = gnew[0]
    return 0


# ---------------------------------------------------------------------------
# Compilation: numba's JIT on the first call (models.kernels._jit)
# ---------------------------------------------------------------------------
#: The kernels' callees, with their numba options (compiled and rebound in this module's
#: globals before any kernel: the kernel bodies call them by these names).
_HELPERS = {"_mix": {"inline": "always"}, "_ngram_hash": {}, "_same": {}, "_table_find": {},
            "_lce": {}, "_table_size": {}, "_tfind": {}, "_tinc": {}, "_tdec": {},
            "_tappend": {}, "_tadd_seq": {}, "_tspeculate": {}}
_GROUP = KernelGroup(globals(), {name: (globals()[name], opts) for name, opts in _HELPERS.items()})

# argument types as the callers (models.drafting.lookup, .walk) pass them: see KernelGroup.kernel
pld_batch = _GROUP.kernel(_py_pld_batch, sig=(
    "i4[::1]", "i8[::1]", "i8[::1]", "i8[::1]", "i8", "i8", "i4[::1]", "i4[::1]", "i4[::1]"))
ngram_batch = _GROUP.kernel(_py_ngram_batch, sig=(
    "i4[::1]", "i8[::1]", "i8[::1]", "i8[::1]", "i8", "i8", "i8", "i4[::1]", "i4[::1]",
    "i4[::1]"))
walk_batch = _GROUP.kernel(_py_walk_batch, sig=(
    "i4[::1]", "i4[::1]", "i4[::1]", "i8[::1]", "i8", "i4[::1]", "i4[::1]", "i4[::1]",
    "i4[::1]", "i4[::1]", "i8[::1]"))
step_sums = _GROUP.kernel(_py_step_sums, sig=(
    "i8[::1]", "i4[::1]", "i4[::1]", "f8[::1]", "i8", "f8[::1]", "f8[::1]", "f8[::1]",
    "f8[::1]", "f8[::1]", "f8[::1]"))
walk_sums = _GROUP.kernel(_py_walk_sums, nogil=True, sig=(
    "i4[::1]", "i4[::1]", "i8[::1]", "i8", "f8[::1]", "i8", "f8[::1]", "f8[::1]", "f8[::1]",
    "f8[::1]", "f8[::1]", "f8[::1]", "i8[::1]"))
suffix_batch = _GROUP.kernel(_py_suffix_batch, sig=(
    "i4[::1]", "i8[::1]", "i8[::1]", "i8[::1]", "i8[::1]", "i8", "i8", "f8", "f8", "f4", "i8",
    "i8", "i8", "i8", "i4[::1]", "i4[::1]", "i4[::1]", "i8[::1]"))
