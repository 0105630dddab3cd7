"""The step walk: verify steps of a drafting policy over completions, and their summary.

One engine for every policy (no draft, lookup, MTP chain, MTP + lookup hybrids). A verify
step (one target forward) starts at completion position ``t`` with ``t`` tokens committed,
takes the policy's accepted draft length ``a`` there and commits ``c = min(a + 1, L - t)``
tokens (the accepted draft tokens plus one bonus/correction token, cut at the end of the
stream)::

    t = start
    while t < L:
        a = accepted draft tokens at t     # lookup profile, MTP draw, or the better of both
        t += min(a + 1, L - t)

The bonus token is dropped only when the draft covers every remaining token (the request is
then finished).

Start convention (``start``, default 0, the same in every function of the package)
    ``start=0`` ("reference replay"): every completion token is produced by a counted
    forward; the forward producing token 0 (in a server: the prefill) also verifies a draft
    proposed from the prompt. tokens/forward = L / forwards. This convention reproduces the
    reference prompt-lookup replay (1.384 / 1.267 tokens/forward for n = 2 / 3, D = 24, on
    ``examples/captures/ar_reference_bf16.jsonl.gz``).
    ``start=1`` ("vLLM counters"): token 0 comes from the prefill and is not a decode step,
    as in vLLM's spec-decode counters (``completion tokens = 1 + num_drafts +
    num_accepted_tokens`` for an always-drafting proposer); the walk covers tokens 1..L-1,
    so tokens/forward = (L - 1) / forwards, vLLM's ``1 + num_accepted_tokens / num_drafts``.

What is counted (in vLLM's terms where they exist)
    ``forwards``
        verify steps = target forwards (vLLM: ``num_drafts`` for an always-drafting chain).
    ``drafts``
        steps that verify a non-empty draft (M > 1 rows; vLLM ``num_drafts``).
    accepted draft tokens, two counts that differ only at the last step of a request whose
        draft covers every remaining token:

        * the verifier's count ``a`` (capped at ``L - t``; vLLM ``num_accepted_tokens``),
          kept per step in the trace (:attr:`WalkResult.step_accepted`) and as the
          histogram :attr:`WalkResult.accept_hist`; :func:`summarize` reads it (mean
          acceptance length, matched runs, runs over a cap);
        * the committed count ``c - 1`` (tokens beyond the one every forward yields), summed
          per prompt in :attr:`WalkResult.accepted` so that ``tokens = forwards +
          accepted`` holds exactly; :meth:`WalkResult.mean_acceptance_length`,
          :meth:`WalkResult.frac_tokens_from_lookup` and ``meta["runs_over_cap"]`` use it.
    per-position acceptance rate
        of an MTP chain is its survival curve ``s_i = P(a >= i)``
        (:mod:`models.drafting.acceptance`); the walk draws ``a = #{i : u < s_i}``.

Engines behind :func:`walk`
    Deterministic modes (``lookup``, ``ar``) run a compiled per-request loop
    (``_lookup_kernels.walk_batch``) and keep the step trace. Stochastic modes (``mtp``,
    ``max``, ``suffix-first``, ``tree``) advance (replicates x prompts) lanes together with
    NumPy, one step per iteration (~L / min(step) iterations, ~140 for K=7), seeded with
    ``numpy.random.default_rng(seed)``; they keep no trace. Both fill the same per-prompt
    sums, so every policy is costed and summarised the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from models.errors import ModelInputError


__all__ = ["MODES", "SYNC_MODES", "WalkResult", "ReplaySummary", "walk", "summarize"]

MODES = ("mtp", "lookup", "max", "suffix-first", "tree", "ar")
_STOCHASTIC = ("mtp", "max", "suffix-first", "tree")
_SYNC = ("lookup", "suffix-first", "tree")  # steps that need the host lookup each step
#: Modes whose every step is priced synchronous (``sync=True``): what re-pricing reads.
SYNC_MODES = _SYNC


@dataclass
class WalkResult:
    """Verify steps of one policy over P completions and R Monte-Carlo replicates.

    Per-prompt sums have shape (R, P), float64 (integer-valued except ``time_ms``); the
    definitions are in the module docstring.

    Attributes
    ----------
    tokens : numpy.ndarray
        Committed tokens (``sum(L) - P * start`` per replicate).
    forwards : numpy.ndarray
        Verify steps (target forwards).
    time_ms : numpy.ndarray or None
        Summed modelled step time (ms) when a cost function was given.
    drafts : numpy.ndarray
        Steps that verified a non-empty draft.
    accepted : numpy.ndarray
        Committed accepted draft tokens, ``sum(c - 1)`` = ``tokens - forwards``.
    lookup_tokens : numpy.ndarray
        The part of ``accepted`` committed from a lookup draft.
    rows : numpy.ndarray
        Summed verify rows M over steps.
    lengths : numpy.ndarray
        int64, shape (P,): completion lengths L.
    start : int
        First walked position (see the module docstring).
    accept_hist : numpy.ndarray
        int64[max a + 1]: steps by the verifier's accepted count ``a``, summed over
        replicates.
    meta : dict
        ``mode``, ``k``, ``start``, ``n_rep``, ``total_tokens`` (sum L), ``run_cap``,
        ``runs_over_cap`` (steps with ``c - 1 > run_cap``, mean over replicates),
        ``state_step_frac`` (shape (P,): fraction of steps starting in an easy state),
        ``draft_tokens`` (stochastic modes, shape (R, P): GPU drafter tokens summed per
        lane; 0 for the deterministic modes, whose drafter is a host lookup), which with
        ``forwards`` and ``rows`` lets a result be re-priced under other cost constants
        without walking again (:mod:`planner.decide.draft.reprice`).
    step_positions, step_accepted, step_committed, step_proposed, step_match_len : \
numpy.ndarray or None
        Step trace of a deterministic walk, int32[n_steps] each: start position ``t``, the
        verifier's accepted count ``a``, committed ``c``, proposed draft length, drafter
        match length (0 = no proposal). None for stochastic modes.
    step_offsets : numpy.ndarray or None
        int64[P+1]: steps of request r are ``[step_offsets[r], step_offsets[r+1])``.
    """

    tokens: np.ndarray
    forwards: np.ndarray
    time_ms: np.ndarray | None
    drafts: np.ndarray
    accepted: np.ndarray
    lookup_tokens: np.ndarray
    rows: np.ndarray
    lengths: np.ndarray
    start: int = 0
    accept_hist: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    meta: dict = field(default_factory=dict)
    step_positions: np.ndarray | None = None
    step_accepted: np.ndarray | None = None
    step_committed: np.ndarray | None = None
    step_proposed: np.ndarray | None = None
    step_match_len: np.ndarray | None = None
    step_offsets: np.ndarray | None = None

    @property
    def n_rep(self) -> int:
        """Monte-Carlo replicates R."""
        return int(self.tokens.shape[0])

    def tokens_per_forward(self) -> float:
        """Pooled ratio over prompts and replicates: sum tokens / sum forwards."""
        return float(self.tokens.sum() / self.forwards.sum())

    def per_prompt_tpf(self) -> np.ndarray:
        """Per-prompt tokens/forward, shape (R, P)."""
        return self.tokens / np.maximum(self.forwards, 1)

    def mean_acceptance_length(self) -> float:
        """``1 + accepted / drafts`` with the committed count (1.0 without drafts).

        Equals tokens/forward for an always-drafting chain; :func:`summarize` gives the same
        figure with the verifier's count (``mean_accept_len_conditional``)."""
        d = self.drafts.sum()
        return float(1 + (self.tokens.sum() - self.forwards.sum()) / d) if d > 0 else 1.0

    def frac_tokens_from_lookup(self) -> float:
        """Committed lookup-draft tokens / all completion tokens (sum L, incl. a prefill
        token)."""
        total = self.meta.get("total_tokens", None)
        total = total if total else self.tokens.sum() / self.n_rep
        return float(self.lookup_tokens.sum() / self.n_rep / total)

    def per_request(self, r: int) -> np.ndarray:
        """int32 verifier accepted counts of request r's steps (deterministic walks only).

        Raises
        ------
        ValueError
            The walk kept no step trace (stochastic mode).
        """
        if self.step_offsets is None:
            raise ValueError("a stochastic walk keeps no step trace")
        return self.step_accepted[self.step_offsets[r]:self.step_offsets[r + 1]]

    def summary(self, cap: int = 8) -> "ReplaySummary":
        """Aggregate figures, see :func:`summarize`."""
        return summarize(self, cap=cap)


@dataclass
class ReplaySummary:
    """Summary figures of a walk, per replicate (means over replicates when R > 1).

    Attributes
    ----------
    tokens_per_forward : float
        Committed tokens / forwards (unconditional; pooled).
    mean_accept_len_conditional : float
        vLLM's "mean acceptance length": 1 + verifier-accepted draft tokens / drafts; NaN if
        no step carried a draft.
    frac_from_lookup : float
        Verifier-accepted draft tokens / all completion tokens (sum L, incl. a prefill
        token); for a lookup walk, the share of the stream the lookup supplied.
    n_steps, n_draft_steps, n_accepted : int or float
        Forwards, forwards with a draft, verifier-accepted draft tokens.
    matched_runs : int or float
        Steps with >= 1 accepted draft token.
    runs_over_cap : int or float
        Steps with more than ``cap`` accepted draft tokens.
    frac_beyond_cap : float
        sum(max(a - cap, 0)) / all completion tokens: the share a draft cap of ``cap``
        would lose.
    accept_hist : numpy.ndarray
        Steps by accepted count (:attr:`WalkResult.accept_hist`, summed over replicates).
    cap : int
        The run-length cap used above.
    """

    tokens_per_forward: float
    mean_accept_len_conditional: float
    frac_from_lookup: float
    n_steps: int | float
    n_draft_steps: int | float
    n_accepted: int | float
    matched_runs: int | float
    runs_over_cap: int | float
    frac_beyond_cap: float
    accept_hist: np.ndarray
    cap: int = 8

    def as_dict(self) -> dict:
        """Plain dict (``accept_hist`` as a list)."""
        d = dict(self.__dict__)
        d["accept_hist"] = self.accept_hist.tolist()
        return d


def summarize(w: WalkResult, *, cap: int = 8) -> ReplaySummary:
    """Summary figures of a walk (definitions in :class:`ReplaySummary`).

    Parameters
    ----------
    w : WalkResult
    cap : int, default 8
        Run-length cap for ``runs_over_cap`` / ``frac_beyond_cap``.

    Returns
    -------
    ReplaySummary
        Counts are ints for one replicate, means over replicates otherwise.
    """
    R = w.n_rep
    hist = np.asarray(w.accept_hist, np.int64)
    a = np.arange(hist.size)
    total = int(w.lengths.sum())
    n_acc = int((a * hist).sum())
    nd = int(round(float(w.drafts.sum())))

    def per_rep(x: int):
        return x if R == 1 else x / R

    return ReplaySummary(
        tokens_per_forward=float(w.tokens.sum()) / float(w.forwards.sum())
        if w.forwards.sum() else float("nan"),
        mean_accept_len_conditional=1.0 + n_acc / nd if nd else float("nan"),
        frac_from_lookup=n_acc / R / total if total else float("nan"),
        n_steps=per_rep(int(hist.sum())),
        n_draft_steps=per_rep(nd),
        n_accepted=per_rep(n_acc),
        matched_runs=per_rep(int(hist[1:].sum())),
        runs_over_cap=per_rep(int(hist[cap + 1:].sum())),
        frac_beyond_cap=float((np.clip(a - cap, 0, None) * hist).sum()) / R / total
        if total else float("nan"),
        accept_hist=hist,
        cap=cap,
    )


def _profile_arrays(lookup, L: np.ndarray):
    """Concatenated int32 (accept_len, match_len, proposed) of length sum(L) from a
    ``ProfileBatch`` or a tuple of per-prompt sequences (cut or zero-padded to L_p)."""
    if hasattr(lookup, "offsets"):
        if not np.array_equal(np.diff(lookup.offsets), L):
            raise ModelInputError("lookup profile lengths differ from the completion lengths",
                                  field="policy")
        return (np.asarray(lookup.accept_len, np.int32), np.asarray(lookup.match_len, np.int32),
                np.asarray(lookup.proposed, np.int32))
    out = []
    for seqs in lookup[:3]:
        if len(seqs) != L.size:
            raise ModelInputError(f"lookup profile for {len(seqs)} prompts, {L.size} lengths",
                                  field="policy")
        parts = []
        for s, n in zip(seqs, L):
            s = np.asarray(s, np.int32)[:n]
            parts.append(s if s.size == n else np.concatenate([s, np.zeros(n - s.size, np.int32)]))
        out.append(np.concatenate(parts) if parts else np.zeros(0, np.int32))
    return tuple(out)


def _walk_deterministic(mode, L, lookup, tree_depth, cost, start, n_rep, run_cap,
                        trace=True) -> WalkResult:
    """``lookup`` / ``ar`` walk through the compiled per-request loop, with its trace (or,
    ``trace=False``, the per-prompt sums in one pass without it)."""
    from models.kernels import lookup as _k  # compiled kernels: loaded by the first call

    P = L.size
    off = np.zeros(P + 1, np.int64)
    off[1:] = np.cumsum(L)
    total = int(off[-1])
    if mode == "ar":
        acc = ml = prop = np.zeros(total, np.int32)
    else:
        if lookup is None:
            raise ModelInputError(f"mode {mode} needs a lookup draft profile", field="policy")
        acc, ml, prop = _profile_arrays(lookup, L)
        if tree_depth is not None:
            prop = np.minimum(prop, int(tree_depth))
    acc, ml, prop = (np.ascontiguousarray(x, np.int32) for x in (acc, ml, prop))
    sums = [np.empty(P) for _ in range(6)]
    trace_fields: dict = {}
    if trace:
        pos, s_acc, s_com, s_prop, s_ml = (np.empty(total, np.int32) for _ in range(5))
        soff = np.empty(P + 1, np.int64)
        n = _k.walk_batch(acc, prop, ml, off, int(start), pos, s_acc, s_com, s_prop, s_ml,
                          soff)
        pos, s_acc, s_com, s_prop, s_ml = pos[:n], s_acc[:n], s_com[:n], s_prop[:n], s_ml[:n]
        if cost is not None:
            M = s_prop.astype(np.int64) + 1
            step = np.asarray(cost(M, np.zeros(n, np.int64), np.full(n, mode in _SYNC)), float)
        else:
            step = np.zeros(n)
        over = _k.step_sums(soff, s_com, s_prop, np.ascontiguousarray(step), int(run_cap),
                            *sums)
        hist = np.bincount(s_acc, minlength=1).astype(np.int64)
        trace_fields = dict(step_positions=pos, step_accepted=s_acc, step_committed=s_com,
                            step_proposed=s_prop, step_match_len=s_ml, step_offsets=soff)
    else:
        d_hi = int(prop.max()) if total else 0
        if cost is not None:  # one price per proposed length d: M = d + 1 rows
            m = np.arange(1, d_hi + 2, dtype=np.int64)
            table = np.asarray(cost(m, np.zeros(m.size, np.int64), np.full(m.size, mode in _SYNC)),
                               float)
        else:
            table = np.zeros(d_hi + 1)
        hist = np.zeros(d_hi + 1, np.int64)
        over = _k.walk_sums(acc, prop, off, int(start), np.ascontiguousarray(table),
                            int(run_cap), *sums, hist)
        nz = np.flatnonzero(hist)
        hist = hist[:nz[-1] + 1 if nz.size else 1]
    tokens, forwards, drafts, extra, rows, time_ms = (np.tile(x, (n_rep, 1)) for x in sums)
    return WalkResult(
        tokens=tokens, forwards=forwards, time_ms=time_ms if cost is not None else None,
        drafts=drafts, accepted=extra, lookup_tokens=extra.copy(), rows=rows, lengths=L,
        start=int(start), accept_hist=hist * n_rep,
        meta={"mode": mode, "k": 0, "start": start, "n_rep": n_rep, "total_tokens": total,
              "run_cap": run_cap, "runs_over_cap": float(over),
              "state_step_frac": np.zeros(P) / np.maximum(forwards.sum(0), 1)},
        **trace_fields)


def _pad(arrs: Sequence[np.ndarray], width: int, fill: int = 0) -> np.ndarray:
    out = np.full((len(arrs), width), fill, dtype=np.int64)
    for i, a in enumerate(arrs):
        out[i, : len(a)] = a
    return out


def _walk_stochastic(mode, L, rng, curves, state, lookup, threshold, tree_depth, cost, start,
                     R, run_cap) -> WalkResult:
    """MTP chain and hybrids: (R, P) lanes advanced together, one step per iteration."""
    P = L.size
    Lmax = int(L.max()) if P else 0
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
    need_lookup = mode != "mtp"
    if need_lookup:
        if lookup is None:
            raise ModelInputError(f"mode {mode} needs a lookup draft profile", field="policy")
        if hasattr(lookup, "offsets"):
            lookup = tuple(
                [np.asarray(x)[a:b] for a, b in zip(lookup.offsets[:-1], lookup.offsets[1:])]
                for x in (lookup.accept_len, lookup.match_len, lookup.proposed))
        acc_l = _pad(lookup[0], Lmax + 1)
        ml = _pad(lookup[1], Lmax + 1)
        prop = _pad(lookup[2], Lmax + 1)
        if tree_depth is not None:
            prop = np.minimum(prop, int(tree_depth))
        acc_l = np.minimum(acc_l, prop)
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
    draft_tokens = np.zeros(shape)  # GPU drafter tokens d summed per lane (re-costing)
    hist = np.zeros(1, np.int64)
    time_ms = np.zeros(shape) if cost is not None else None
    pidx = np.broadcast_to(np.arange(P), shape)
    sync_const = mode in _SYNC
    # one easiness state (no state given, or S = 1): every lane reads its prompt's one curve,
    # so the per-step gathers below reduce to a broadcast of the same numbers
    one_state = state is None or S == 1
    cv0 = cv[None, :, 0, :] if one_state else None
    # MTP chain and the max hybrid verify K + 1 rows after K drafter passes on every step:
    # their rows, drafter tokens and step price are the same arrays each step
    fixed = mode in ("mtp", "max")
    if fixed:
        M_fix, d_fix = np.full(shape, K + 1), np.full(shape, K)
        step_fix = cost(M_fix, d_fix, np.full(shape, sync_const)) if cost is not None else None
    if mode == "mtp" and one_state:
        return _mtp_chain(L, rng, cv0, K, start, R, run_cap, step_fix)
    while True:
        active = t < Lb
        if not active.any():
            break
        tc = np.minimum(t, Lmax)
        use_l = np.zeros(shape, dtype=bool)
        u = rng.random(shape)
        if one_state:  # sidx = 0 everywhere: no easy-state steps to count
            cur = cv0  # (1, P, K), broadcast over replicates
        else:
            sidx = st[pidx, tc]
            cur = cv[pidx, sidx]  # (R, P, K)
            state_steps += (sidx > 0) * active
        a_m = np.zeros(shape, np.int64)  # #{i : u < s_i}, one curve position at a time
        for i in range(K):
            a_m += u < cur[..., i]
        if need_lookup:
            a_l = acc_l[pidx, tc]
            p_l = prop[pidx, tc]
        if mode == "mtp":
            a = a_m
            M, d = M_fix, d_fix
        elif mode == "max":
            a = np.maximum(a_m, a_l)
            use_l = a_l > a_m
            M, d = M_fix, d_fix
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
        draft_tokens += d * af
        h = np.bincount(np.minimum(a, Lb - t)[active])
        if h.size > hist.size:
            hist = np.concatenate([hist, np.zeros(h.size - hist.size, np.int64)])
        hist[:h.size] += h
        if cost is not None:
            time_ms += (step_fix if fixed else cost(M, d, np.full(shape, sync_const))) * af
        t = t + commit
    return WalkResult(tokens, forwards, time_ms, drafts, accepted, from_l, rows, lengths=L,
                      start=int(start), accept_hist=hist,
                      meta={"mode": mode, "k": K, "start": start, "n_rep": R,
                            "total_tokens": int(L.sum()), "run_cap": run_cap,
                            "runs_over_cap": float(over.sum() / R),
                            "state_step_frac": state_steps.sum(0)
                            / np.maximum(forwards.sum(0), 1), "draft_tokens": draft_tokens})


def _mtp_chain(L, rng, cv0, K, start, R, run_cap, step_fix) -> WalkResult:
    """:func:`_walk_stochastic` for the MTP chain with one curve per prompt, with only what
    changes from step to step in the loop: the same draws (one ``rng.random((R, P))`` per
    step), accepted counts, commits, forwards, histogram and runs over the cap. The rest
    follows exactly from those: every lane commits ``L - start`` tokens, every step drafts
    (M = K + 1 rows), the committed accepted count is ``tokens - forwards`` (integers), and
    a step price that is the same for every lane is added ``forwards`` times in step order
    from 0.0, which is the running sum ``np.cumsum`` gives (the loop adds 0.0 to a finished
    lane, which leaves it unchanged)."""
    P = L.size
    shape = (R, P)
    t = np.full(shape, start, dtype=np.int64)
    Lb = np.broadcast_to(L, shape)
    forwards = np.zeros(shape)
    over = np.zeros(shape)
    hist = np.zeros(1, np.int64)
    per_lane = step_fix is not None and not np.all(step_fix == step_fix.flat[0])
    time_ms = np.zeros(shape) if per_lane else None
    curves = [np.ascontiguousarray(cv0[..., i]) for i in range(K)]  # (1, P) each
    a = np.empty(shape, np.int64)
    hit = np.empty(shape, bool)
    while True:
        active = t < Lb
        if not active.any():
            break
        u = rng.random(shape)
        a[...] = 0  # #{i : u < s_i}, one curve position at a time
        for c in curves:
            np.less(u, c, out=hit)
            a += hit
        rem = Lb - t
        commit = np.minimum(a + 1, rem) * active
        af = active.astype(float)
        forwards += af
        over += np.maximum(commit - 1, 0) > run_cap  # the committed accepted count
        h = np.bincount(np.minimum(a, rem)[active])
        if h.size > hist.size:
            hist = np.concatenate([hist, np.zeros(h.size - hist.size, np.int64)])
        hist[:h.size] += h
        if per_lane:
            time_ms += step_fix * af
        t = t + commit
    tokens = np.maximum(Lb - start, 0).astype(np.float64)
    if step_fix is not None and not per_lane:
        n = forwards.astype(np.int64)
        run = np.cumsum(np.full(int(n.max()) if n.size else 0, float(step_fix.flat[0])))
        time_ms = np.zeros(shape)
        time_ms[n > 0] = run[n[n > 0] - 1]
    return WalkResult(tokens, forwards, time_ms, forwards.copy() if K >= 1 else np.zeros(shape),
                      tokens - forwards, np.zeros(shape), (K + 1) * forwards, lengths=L,
                      start=int(start), accept_hist=hist,
                      meta={"mode": "mtp", "k": K, "start": start, "n_rep": R,
                            "total_tokens": int(L.sum()), "run_cap": run_cap,
                            "runs_over_cap": float(over.sum() / R),
                            "state_step_frac": np.zeros(P) / np.maximum(forwards.sum(0), 1),
                            "draft_tokens": K * forwards})


def walk(lengths: Sequence[int] | np.ndarray, *, mode: str = "mtp", n_rep: int = 1,
         seed: int | np.random.Generator | None = 0, curves: np.ndarray | None = None,
         state: Sequence[np.ndarray] | None = None, lookup=None, threshold: int = 1,
         tree_depth: int | None = None,
         cost: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
         start: int = 0, run_cap: int = 8, trace: bool = True) -> WalkResult:
    """Walk every completion with a drafting policy.

    Parameters
    ----------
    lengths : array of int, shape (P,)
        Completion lengths L_p (tokens).
    mode : {"mtp", "lookup", "max", "suffix-first", "tree", "ar"}
        ``mtp``: chain of depth K (from ``curves``), M = K+1 rows, K drafter passes.
        ``lookup``: the deterministic lookup profile, M = proposed + 1.
        ``max``/``suffix-first``/``tree``: hybrids, see :mod:`models.drafting.hybrid`.
        ``ar``: one token per forward.
    n_rep : int, default 1
        Monte-Carlo replicates R (deterministic modes repeat their one walk R times).
    seed : int or Generator
        ``numpy.random.default_rng(seed)`` for the stochastic modes.
    curves : array, shape (P, S, K) or (P, K)
        MTP survival curves per prompt and easiness state (S states; S=1: independence).
    state : sequence of int arrays, shape (L_p,) each, optional
        Easiness state (0..S-1) of each position; default 0.
    lookup : ProfileBatch or (accept_len, match_len, proposed)
        Lookup draft profile (:func:`models.drafting.lookup.draft_profiles`), or three
        sequences of per-prompt int arrays of shape (L_p,).
    threshold : int, default 1
        ``suffix-first``: use the lookup draft when ``match_len[t] >= threshold`` and
        ``proposed[t] > 0``.
    tree_depth : int, optional
        Cap on the lookup draft length (``tree``: the lookup branch D; default no cap).
    cost : callable(M, draft_tokens, sync) -> ms, optional
        Vectorised step-time function, e.g.
        :meth:`models.drafting.cost.ForwardCostModel.step_ms`.
    start : int, default 0
        First walked position: 0 reference replay, 1 vLLM counters (module docstring).
    run_cap : int, default 8
        ``meta["runs_over_cap"]`` counts steps with more than ``run_cap`` committed
        accepted tokens.
    trace : bool, default True
        Keep the step trace of a deterministic walk (``step_*`` fields). False: one
        compiled pass fills the same per-prompt sums and histogram without it (no
        per-step arrays; what ``planner draft`` needs).

    Returns
    -------
    WalkResult
        With the step trace for ``lookup`` and ``ar`` (unless ``trace=False``).

    Raises
    ------
    ModelInputError
        Unknown mode, missing curves/lookup for the mode, mismatched prompt counts, or a
        state index outside 0..S-1.
    ValueError
        ``start < 0``.

    Examples
    --------
    >>> w = walk([6], mode="lookup", lookup=([[2, 0, 0, 1, 0, 0]],) * 3)
    >>> w.step_accepted.tolist(), w.tokens_per_forward()    # t=0 -> 3, t=3 -> 5 -> 6
    ([2, 1, 0], 2.0)
    """
    if mode not in MODES:
        raise ModelInputError(f"unknown walk mode {mode!r} ({', '.join(MODES)})",
                              field="policy")
    if start < 0:
        raise ValueError("start must be >= 0")
    L = np.asarray(lengths, dtype=np.int64).reshape(-1)
    R = int(n_rep)
    if mode not in _STOCHASTIC:
        return _walk_deterministic(mode, L, lookup, tree_depth, cost, start, R, run_cap,
                                   trace)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return _walk_stochastic(mode, L, rng, curves, state, lookup, threshold, tree_depth, cost,
                            start, R, run_cap)
