"""Backoff n-gram top-1 predictor over reference completions: the ``xng_hit`` state of the
content acceptance model (:mod:`models.drafting.acceptance_model`)."""

from __future__ import annotations

import numpy as np

__all__ = ["NgramReference"]

_BITS = 18  # token ids < 2**18 (Gemma vocabulary 262,144)
_VOCAB = 1 << _BITS
_ORDERS = (3, 2, 1)


def _ctx_keys(seqs, n):
    """(ctx key, next token, sequence index) of every position t >= n of every sequence;
    windows holding a token id >= 2**18 are skipped (they cannot be keyed exactly)."""
    ks, nx, src = [], [], []
    for i, s in enumerate(seqs):
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
        src.append(np.full(int(ok.sum()), i, np.int64))
    if not ks:
        return (np.zeros(0, np.int64),) * 3
    return np.concatenate(ks), np.concatenate(nx), np.concatenate(src)


def _top1(ci, tok, cnt):
    """Per context index in ``ci`` (ascending), its most frequent next token (ties: the
    smallest id): ``(contexts, tokens)``, one entry per distinct context."""
    order = np.lexsort((tok, -cnt, ci))
    ci, tok = ci[order], tok[order]
    first = np.r_[True, ci[1:] != ci[:-1]] if ci.size else np.zeros(0, bool)
    return ci[first], tok[first]


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
        #: per order: the (context, next token) pairs sorted by (context index, token), their
        #: counts, each context's first pair, and per position of the references its pair and
        #: reference index (what :meth:`top1_hits` subtracts for ``without``)
        self._pairs = {}
        self.n_references = len(completions)
        for n in _ORDERS:
            k, nx, src = _ctx_keys(completions, n)
            uk, inv = np.unique(k, return_inverse=True)
            pair = (inv.astype(np.int64) << _BITS) | nx
            up, pair_of, cnt = np.unique(pair, return_inverse=True, return_counts=True)
            pci = up >> _BITS
            ptok = up & ((1 << _BITS) - 1)
            self.tables[n] = (uk, _top1(pci, ptok, cnt)[1])  # every context has a pair
            self._pairs[n] = (pci, ptok, cnt, np.searchsorted(pci, np.arange(len(uk) + 1)),
                              pair_of.astype(np.int64),
                              np.searchsorted(src, np.arange(len(completions) + 1)))

    def _best_without(self, n: int, i: int) -> np.ndarray:
        """Order ``n``'s top-1 next token per context of the references without reference
        ``i`` (-1: a context only reference ``i`` holds). Only the contexts of reference
        ``i`` change: their pairs' counts less ``i``'s own, re-ranked as in ``__init__``."""
        uk, best = self.tables[n]
        pci, ptok, cnt, cstart, pair_of, rows = self._pairs[n]
        own, n_own = np.unique(pair_of[rows[i]:rows[i + 1]], return_counts=True)
        if own.size == 0:
            return best
        ctx = np.unique(pci[own])
        lens = cstart[ctx + 1] - cstart[ctx]
        # every pair of those contexts (ascending: contexts ascending, pairs within each)
        idx = np.repeat(cstart[ctx] - np.r_[0, np.cumsum(lens)[:-1]], lens) + np.arange(
            lens.sum())
        left = cnt[idx].copy()
        left[np.searchsorted(idx, own)] -= n_own
        keep = left > 0
        ci, tok = _top1(pci[idx][keep], ptok[idx][keep], left[keep])
        out = best.copy()
        out[ctx] = -1
        out[ci] = tok
        return out

    def top1_share(self, prompt, completion, without: int | None = None) -> float:
        """Share of ``completion`` tokens the reference predicts top-1 (context may reach
        into the last 3 prompt tokens; ``without`` as in :meth:`top1_hits`). Returns a float
        in [0, 1]."""
        return float(self.top1_hits(prompt, completion, without).mean())

    def top1_hits(self, prompt, completion, without: int | None = None) -> np.ndarray:
        """Per completion token: does the reference predict it top-1? bool, shape (L,).

        ``without``: the index of one reference completion to leave out (a calibration
        prompt scored against the other references): the same hits as a reference built on
        the others, from this one's counts (rebuilding cost ~60 ms a prompt).

        Raises
        ------
        IndexError
            ``without`` outside ``0 .. n_references - 1``.
        """
        if without is not None and not 0 <= without < self.n_references:
            raise IndexError(f"without={without}: {self.n_references} references")
        c = np.asarray(completion, np.int64)
        s = np.concatenate([np.asarray(prompt, np.int64)[-max(_ORDERS):], c])
        off = len(s) - len(c)
        pred = np.full(len(c), -1, np.int64)
        for n in sorted(_ORDERS):  # low orders first, higher orders overwrite
            uk, best = self.tables[n]
            if len(uk) == 0:
                continue
            if without is not None:
                best = self._best_without(n, without)
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
            hit = (uk[pos] == k) & (best[pos] >= 0)
            idx = np.flatnonzero(ok)[hit]
            pred[idx] = best[pos[hit]]
        return pred == c
