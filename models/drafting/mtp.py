"""MTP / EAGLE chain simulation over a capture, and the shared step-walk engine.

A chain drafter of depth K proposes K tokens every step; the target verifies M = K+1 rows
and commits the accepted prefix plus one bonus/correction token. Over a completion of
length L the walk starts at position ``start`` (default 1: the first completion token comes
from the prefill forward and is not a decode step, as in vLLM's counters,
``completion = 1 + num_drafts + num_accepted``) and at each step commits
``min(a + 1, L - t)`` tokens (truncated at the end of the stream), until ``t == L``.

The accepted length ``a`` of an MTP step is drawn by inverse-survival sampling,
``a = #{i : u < s_i}`` with ``u ~ U(0, 1)``, from the prompt's curve (shape (K,)) or, in the
correlated model, from the curve of the position's *easiness state* (see
:mod:`models.drafting.hybrid`). Monte-Carlo replicates are vectorised over
(replicates x prompts) with NumPy; every iteration of the loop advances all lanes by one
step, so the loop runs ~L / min(step) times (~140 for K=7). Seeded with
``numpy.random.default_rng(seed)``.

The same engine :func:`walk` also runs lookup and hybrid policies (their per-position
accepted lengths come from deterministic draft profiles), and charges each step's time via a
cost model (:mod:`models.drafting.cost`), so TPS projections use per-step M.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from models.errors import ModelInputError

__all__ = ["WalkResult", "walk", "simulate_mtp", "MODES"]

MODES = ("mtp", "lookup", "max", "suffix-first", "tree", "ar")


@dataclass
class WalkResult:
    """Per-replicate, per-prompt sums of one policy's walk.

    Attributes
    ----------
    tokens : numpy.ndarray, float64, shape (R, P)
        Committed tokens in the decode walk (excludes the prefill token when ``start=1``).
    forwards : numpy.ndarray, float64, shape (R, P)
        Target (verify) forwards.
    time_ms : numpy.ndarray, float64, shape (R, P) or None
        Summed modelled step time (ms) when a cost function was given.
    drafts : numpy.ndarray, shape (R, P)
        Steps that carried a non-empty draft (vLLM ``num_drafts``).
    accepted : numpy.ndarray, shape (R, P)
        Accepted draft tokens (vLLM ``num_accepted``; committed = forwards + accepted up to
        end truncation).
    lookup_tokens : numpy.ndarray, shape (R, P)
        Accepted draft tokens that came from a lookup draft.
    rows : numpy.ndarray, shape (R, P)
        Summed verify rows M over steps.
    """

    tokens: np.ndarray
    forwards: np.ndarray
    time_ms: np.ndarray | None
    drafts: np.ndarray
    accepted: np.ndarray
    lookup_tokens: np.ndarray
    rows: np.ndarray
    meta: dict = field(default_factory=dict)

    @property
    def n_rep(self) -> int:
        return int(self.tokens.shape[0])

    def tokens_per_forward(self) -> float:
        """Pooled ratio over prompts and replicates: sum tokens / sum forwards."""
        return float(self.tokens.sum() / self.forwards.sum())

    def per_prompt_tpf(self) -> np.ndarray:
        """Per-prompt tokens/forward, shape (R, P)."""
        return self.tokens / np.maximum(self.forwards, 1)

    def mean_acceptance_length(self) -> float:
        """vLLM-style mean acceptance length ``1 + accepted / drafts`` (conditional on a
        draft; equals tokens/forward for an always-drafting chain)."""
        d = self.drafts.sum()
        return float(1 + self.accepted.sum() / d) if d > 0 else 1.0

    def frac_tokens_from_lookup(self) -> float:
        """Accepted lookup-draft tokens / all completion tokens (incl. the prefill token),
        the ``frac_from_lookup`` definition of :mod:`models.drafting.walk`."""
        total = self.meta.get("total_tokens", None)
        total = total if total else self.tokens.sum() / self.n_rep
        return float(self.lookup_tokens.sum() / self.n_rep / total)


def _pad(arrs: Sequence[np.ndarray], width: int, fill: int = 0) -> np.ndarray:
    out = np.full((len(arrs), width), fill, dtype=np.int64)
    for i, a in enumerate(arrs):
        out[i, : len(a)] = a
    return out


def walk(lengths: Sequence[int] | np.ndarray, *, mode: str = "mtp", n_rep: int = 1,
         seed: int | np.random.Generator | None = 0, curves: np.ndarray | None = None,
         state: Sequence[np.ndarray] | None = None,
         lookup: tuple[Sequence[np.ndarray], Sequence[np.ndarray], Sequence[np.ndarray]] | None = None,
         threshold: int = 1, tree_depth: int | None = None,
         cost: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
         start: int = 1, run_cap: int = 8) -> WalkResult:
    """Walk every completion with a drafting policy, vectorised over replicates x prompts.

    Parameters
    ----------
    lengths : array of int, shape (P,)
        Completion lengths L_p (tokens).
    mode : {"mtp", "lookup", "max", "suffix-first", "tree", "ar"}
        ``mtp``: chain of depth K (from ``curves``). ``lookup``: the deterministic lookup
        profile (accept_len[t], proposed[t]). ``max``/``suffix-first``/``tree``: hybrids,
        see :mod:`models.drafting.hybrid`. ``ar``: one token per forward.
    n_rep : int
        Monte-Carlo replicates R (use 1 for deterministic modes).
    seed : int or Generator
        ``numpy.random.default_rng(seed)``.
    curves : array, shape (P, S, K) or (P, K)
        Survival curves per prompt and easiness state (S states; S=1 for independence).
    state : sequence of int arrays, shape (L_p,) each, optional
        Easiness state (0..S-1) of each position; default 0.
    lookup : (accept_len, match_len, proposed), each a sequence of int arrays (L_p,)
        Lookup draft profile per prompt.
    threshold : int
        ``suffix-first``: use the lookup draft when ``match_len[t] >= threshold`` and
        ``proposed[t] > 0``.
    tree_depth : int, optional
        ``tree``: cap on the lookup branch length D (default: no cap).
    cost : callable(M, draft_tokens, sync) -> ms, optional
        Vectorised step-time function (e.g. :meth:`models.drafting.cost.CostModel.step_ms`).
    start : int
        First decode position (1 = first token from prefill).
    run_cap : int
        Steps with more than ``run_cap`` accepted draft tokens are counted in
        ``meta["runs_over_cap"]`` (mean over replicates), as in
        :class:`models.drafting.walk.ReplaySummary`.

    Returns
    -------
    WalkResult

    Raises
    ------
    ModelInputError
        Unknown mode, missing curves/lookup for the mode, or a state index outside 0..S-1.
    """
    if mode not in MODES:
        raise ModelInputError(f"unknown walk mode {mode!r} ({', '.join(MODES)})", field="policy")
    L = np.asarray(lengths, dtype=np.int64)
    P = L.size
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    need_mtp = mode in ("mtp", "max", "suffix-first", "tree")
    need_lookup = mode in ("lookup", "max", "suffix-first", "tree")
    Lmax = int(L.max()) if P else 0
    if need_mtp:
        if curves is None:
            raise ModelInputError(f"mode {mode} needs MTP acceptance curves", field="curve")
        cv = np.asarray(curves, dtype=float)
        if cv.ndim == 2:
            cv = cv[:, None, :]
        if cv.shape[0] != P:
            raise ModelInputError(f"curves for {cv.shape[0]} prompts, capture has {P}",
                                  field="curve")
        S, K = cv.shape[1], cv.shape[2]
        st = _pad(state, Lmax + 1) if state is not None else np.zeros((P, Lmax + 1), np.int64)
        if st.size and (st.min() < 0 or st.max() >= S):
            raise ModelInputError(f"easiness state outside 0..{S - 1}", field="state")
    else:
        K = 0
    if need_lookup:
        if lookup is None:
            raise ModelInputError(f"mode {mode} needs a lookup draft profile", field="policy")
        acc_l = _pad(lookup[0], Lmax + 1)
        ml = _pad(lookup[1], Lmax + 1)
        prop = _pad(lookup[2], Lmax + 1)
        if tree_depth is not None:
            prop = np.minimum(prop, int(tree_depth))
        acc_l = np.minimum(acc_l, prop)
    R = int(n_rep)
    shape = (R, P)
    t = np.full(shape, start, dtype=np.int64)
    Lb = np.broadcast_to(L, shape)
    tokens = np.zeros(shape)
    forwards = np.zeros(shape)
    drafts = np.zeros(shape)
    accepted = np.zeros(shape)
    from_l = np.zeros(shape)
    rows = np.zeros(shape)
    over = np.zeros(shape)
    state_steps = np.zeros(shape)
    time_ms = np.zeros(shape) if cost is not None else None
    pidx = np.broadcast_to(np.arange(P), shape)
    sync_const = mode in ("lookup", "suffix-first", "tree")
    while True:
        active = t < Lb
        if not active.any():
            break
        tc = np.minimum(t, Lmax)
        use_l = np.zeros(shape, dtype=bool)
        if need_mtp:
            u = rng.random(shape)
            sidx = st[pidx, tc]
            cur = cv[pidx, sidx]  # (R, P, K)
            state_steps += (sidx > 0) * active
            a_m = (u[..., None] < cur).sum(-1)
        if need_lookup:
            a_l = acc_l[pidx, tc]
            p_l = prop[pidx, tc]
        if mode == "ar":
            a = np.zeros(shape, np.int64)
            M = np.ones(shape, np.int64)
            d = np.zeros(shape, np.int64)
        elif mode == "mtp":
            a = a_m
            M = np.full(shape, K + 1)
            d = np.full(shape, K)
        elif mode == "lookup":
            a = a_l
            M = p_l + 1
            d = np.zeros(shape, np.int64)
            use_l = p_l > 0
        elif mode == "max":
            a = np.maximum(a_m, a_l)
            use_l = a_l > a_m
            M = np.full(shape, K + 1)
            d = np.full(shape, K)
        elif mode == "suffix-first":
            use_l = (ml[pidx, tc] >= threshold) & (p_l > 0)
            a = np.where(use_l, a_l, a_m)
            M = np.where(use_l, p_l + 1, K + 1)
            d = np.where(use_l, 0, K)
        else:  # tree
            a = np.maximum(a_m, a_l)
            use_l = a_l > a_m
            M = K + 1 + p_l
            d = np.full(shape, K)
        commit = np.minimum(a + 1, Lb - t) * active
        af = active.astype(float)
        tokens += commit
        forwards += af
        drafts += (M > 1) * af
        acc_step = np.minimum(a, np.maximum(commit - 1, 0)) * af
        accepted += acc_step
        over += acc_step > run_cap
        from_l += acc_step * use_l
        rows += M * af
        if cost is not None:
            time_ms += cost(M, d, np.full(shape, sync_const)) * af
        t = t + commit
    return WalkResult(tokens, forwards, time_ms, drafts, accepted, from_l, rows,
                      meta={"mode": mode, "k": K, "start": start, "n_rep": R,
                            "total_tokens": int(L.sum()), "run_cap": run_cap,
                            "runs_over_cap": float(over.sum() / R),
                            "state_step_frac": state_steps.sum(0) / np.maximum(forwards.sum(0), 1)})


def simulate_mtp(lengths: Sequence[int] | np.ndarray, curves: np.ndarray, *, n_rep: int = 200,
                 seed: int | np.random.Generator | None = 0, state: Sequence[np.ndarray] | None = None,
                 cost: Callable | None = None, start: int = 1) -> WalkResult:
    """Monte-Carlo MTP chain over completions of the given lengths.

    Parameters
    ----------
    lengths : array of int, shape (P,)
        Completion lengths (tokens); 512 for the P128 captures.
    curves : array, shape (K,), (P, K) or (P, S, K)
        Survival curve(s): global, per prompt, or per prompt and easiness state.
    n_rep : int
        Replicates R.
    seed : int or Generator
    state : sequence of int arrays (L_p,), optional
        Easiness state per position (correlated model).
    cost : callable, optional
        Step-time function for TPS.
    start : int
        First decode position (1: the first token comes from prefill).

    Returns
    -------
    WalkResult
        ``tokens``/``forwards`` of shape (R, P).

    Examples
    --------
    An all-ones curve accepts every draft: K+1 tokens per forward (up to truncation).

    >>> r = simulate_mtp([9], [1.0, 1.0, 1.0], n_rep=1)
    >>> r.tokens_per_forward()
    4.0
    """
    L = np.asarray(lengths, dtype=np.int64)
    cv = np.asarray(curves, dtype=float)
    if cv.ndim == 1:
        cv = np.broadcast_to(cv, (L.size, cv.size))
    return walk(L, mode="mtp", n_rep=n_rep, seed=seed, curves=cv, state=state, cost=cost,
                start=start)
