"""Backoff n-gram top-1 predictor over reference completions: the ``xng_hit`` state of the
content acceptance model (:mod:`models.drafting.acceptance_model`)."""

from __future__ import annotations

import numpy as np

__all__ = ["NgramReference"]

_BITS = 18  # token ids < 2**18 (Gemma vocabulary 262,144)
_VOCAB = 1 << _BITS
_ORDERS = (3, 2, 1)


def _ctx_keys(seqs, n):
    """(ctx key, next token) of every position t >= n of every sequence; windows holding a
    token id >= 2**18 are skipped (they cannot be keyed exactly)."""
    ks, nx = [], []
    for s in seqs:
        s = np.asarray(s, np.int64)
        if len(s) <= n:
            continue
        k = np.zeros(len(s) - n, np.int64)
        ok = np.ones(len(s) - n, bool)
        for j in range(n + 1):
            ok &= s[j:len(s) - n + j] < _VOCAB
        for j in range(n):
            k = (k << _BITS) | s[j:len(s) - n + j]
        ks.append(k[ok])
        nx.append(s[n:][ok])
    if not ks:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(ks), np.concatenate(nx)


class NgramReference:
    """Backoff n-gram top-1 predictor (orders 3, 2, 1) fitted on reference completions.

    For every context of ``n`` tokens seen in the references the most frequent next token
    (ties: smallest id) is kept; a target token is predicted from its longest context found
    (stupid backoff, no smoothing: only the top-1 matters). Token ids must be < 2**18.

    Parameters
    ----------
    completions : sequence of int arrays
        Reference completions (only completions: prompts are benchmark text, outputs are
        what the drafter has to predict). Token ids >= 2**18 are never predicted and never
        used as context. The shipped reference is Gemma-tokenizer text: for a capture of
        another tokenizer ``xng_hit`` is meaningless (the model's domain is Gemma captures).
    """

    def __init__(self, completions):
        self.tables = {}
        for n in _ORDERS:
            k, nx = _ctx_keys(completions, n)
            uk, inv = np.unique(k, return_inverse=True)
            pair = (inv.astype(np.int64) << _BITS) | nx
            up, cnt = np.unique(pair, return_counts=True)
            ci = up >> _BITS
            tok = up & ((1 << _BITS) - 1)
            order = np.lexsort((tok, -cnt, ci))
            ci, tok = ci[order], tok[order]
            first = np.r_[True, ci[1:] != ci[:-1]]
            self.tables[n] = (uk, tok[first])

    def top1_share(self, prompt, completion) -> float:
        """Share of ``completion`` tokens the reference predicts top-1 (context may reach
        into the last 3 prompt tokens). Returns a float in [0, 1]."""
        return float(self.top1_hits(prompt, completion).mean())

    def top1_hits(self, prompt, completion) -> np.ndarray:
        """Per completion token: does the reference predict it top-1? bool, shape (L,)."""
        c = np.asarray(completion, np.int64)
        s = np.concatenate([np.asarray(prompt, np.int64)[-max(_ORDERS):], c])
        off = len(s) - len(c)
        pred = np.full(len(c), -1, np.int64)
        for n in sorted(_ORDERS):  # low orders first, higher orders overwrite
            uk, best = self.tables[n]
            if len(uk) == 0:
                continue
            t = np.arange(off, len(s))
            ok = t >= n
            for j in range(1, n + 1):  # a context with an id >= 2**18: no prediction
                ok &= np.where(t - j >= 0, s[np.maximum(t - j, 0)] < _VOCAB, True)
            k = np.zeros(ok.sum(), np.int64)
            tt = t[ok]
            for j in range(n):
                k = (k << _BITS) | s[tt - n + j]
            pos = np.searchsorted(uk, k)
            pos = np.minimum(pos, len(uk) - 1)
            hit = uk[pos] == k
            idx = np.flatnonzero(ok)[hit]
            pred[idx] = best[pos[hit]]
        return pred == c
