"""Step walk over per-position draft profiles, and replay summaries.

The walk turns a per-position profile (``accept_len[t]``: accepted draft tokens if a
verify forward starts with ``t`` completion tokens committed) into the sequence of
verify steps actually taken::

    t = start
    while t < L:
        a = accept_len[t]          # accepted draft tokens in this forward
        t += min(a + 1, L - t)     # accepted drafts + 1 bonus/correction token

The bonus token is dropped only when the draft already covers every remaining token
(the request is then finished).

Convention for the first completion token (``start``):

* ``start=0`` (default, "reference replay"): every completion token is produced by a
  counted forward; the forward that produces token 0 (in a server: the prefill) also
  verifies the draft proposed from the prompt. tokens/forward = L / steps. This is the
  convention that reproduces the reference PLD figures (1.384 / 1.267 on
  ``ar_reference_bf16``, 1.480 / 1.342 on ``ar_reference_int4_frontier_specoff``).
* ``start=1`` ("vLLM counters"): token 0 comes from prefill and is not a decode step;
  steps cover tokens 1..L-1, so tokens/forward = (L - 1) / steps, as in the
  ``tokens_per_forward = D / (D - num_accepted)`` recomputation of mtp_acceptance.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _lookup_kernels as _k


@dataclass
class WalkResult:
    """Verify steps of a batch of requests.

    Attributes
    ----------
    positions : numpy.ndarray
        int32[n_steps] completion position t at which each step starts.
    accepted : numpy.ndarray
        int32[n_steps] accepted draft tokens per step (0 = draft rejected or no draft).
    committed : numpy.ndarray
        int32[n_steps] tokens committed per step = min(accepted + 1, L - t).
    step_offsets : numpy.ndarray
        int64[R+1]; steps of request r are ``[step_offsets[r], step_offsets[r+1])``.
    proposed : numpy.ndarray or None
        int32[n_steps] draft length proposed at each step (if the profile had it).
    match_len : numpy.ndarray or None
        int32[n_steps] drafter match length at each step (0 = no proposal).
    lengths : numpy.ndarray
        int64[R] completion length per request.
    start : int
        First walked position (see module docstring).
    """

    positions: np.ndarray
    accepted: np.ndarray
    committed: np.ndarray
    step_offsets: np.ndarray
    lengths: np.ndarray
    start: int = 0
    proposed: np.ndarray | None = None
    match_len: np.ndarray | None = None

    @property
    def n_steps(self) -> int:
        return int(self.accepted.shape[0])

    @property
    def tokens(self) -> int:
        """Tokens produced by the counted steps (= sum(L) - R*start)."""
        return int(self.committed.sum())

    def per_request(self, r: int) -> np.ndarray:
        """int32 accepted lengths of request r's steps."""
        return self.accepted[self.step_offsets[r]:self.step_offsets[r + 1]]

    def summary(self, cap: int = 8) -> "ReplaySummary":
        """Aggregate figures, see :class:`ReplaySummary`."""
        return summarize(self, cap=cap)


@dataclass
class ReplaySummary:
    """Replay figures over a batch.

    Attributes
    ----------
    tokens_per_forward : float
        committed tokens / counted target forwards (unconditional).
    mean_accept_len_conditional : float
        vLLM's "mean acceptance length": 1 + accepted / steps that carried a draft
        (``proposed > 0``); NaN if no step proposed or ``proposed`` unknown.
    frac_from_lookup : float
        accepted draft tokens / all completion tokens (sum of L, incl. a prefill token).
    n_steps, n_draft_steps, n_accepted : int
        Forwards, forwards carrying a draft, accepted draft tokens.
    matched_runs : int
        Steps with >= 1 accepted draft token.
    runs_over_cap : int
        Steps with more than ``cap`` accepted draft tokens.
    frac_beyond_cap : float
        sum(max(accepted - cap, 0)) / all completion tokens.
    accept_hist : numpy.ndarray
        int64[max_accepted+1] histogram of accepted draft tokens per step.
    cap : int
    """

    tokens_per_forward: float
    mean_accept_len_conditional: float
    frac_from_lookup: float
    n_steps: int
    n_draft_steps: int
    n_accepted: int
    matched_runs: int
    runs_over_cap: int
    frac_beyond_cap: float
    accept_hist: np.ndarray
    cap: int = 8

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["accept_hist"] = self.accept_hist.tolist()
        return d


def walk_arrays(accept_len: np.ndarray, comp_offsets: np.ndarray, *, start: int = 0,
                proposed: np.ndarray | None = None,
                match_len: np.ndarray | None = None) -> WalkResult:
    """Walk a batch of concatenated profiles (numba kernel).

    Parameters
    ----------
    accept_len : numpy.ndarray
        int32[sum(L)] concatenated per-position accepted lengths.
    comp_offsets : numpy.ndarray
        int64[R+1] request boundaries in ``accept_len``.
    start : int, default 0
        First position walked in every request (0 or 1, see module docstring).
    proposed, match_len : numpy.ndarray, optional
        Concatenated per-position draft lengths / match lengths, gathered at the steps.

    Returns
    -------
    WalkResult
    """
    acc = np.ascontiguousarray(accept_len, dtype=np.int32)
    off = np.ascontiguousarray(comp_offsets, dtype=np.int64)
    if start < 0:
        raise ValueError("start must be >= 0")
    total = int(off[-1])
    have_prop = proposed is not None
    have_ml = match_len is not None
    prop_in = np.ascontiguousarray(proposed, np.int32) if have_prop else np.zeros(total, np.int32)
    ml_in = np.ascontiguousarray(match_len, np.int32) if have_ml else np.zeros(total, np.int32)
    pos = np.empty(total, np.int32)
    out = np.empty(total, np.int32)
    com = np.empty(total, np.int32)
    prop = np.empty(total, np.int32)
    ml = np.empty(total, np.int32)
    soff = np.empty(off.shape[0], np.int64)
    n = _k.walk_batch(acc, prop_in, ml_in, off, int(start), pos, out, com, prop, ml, soff)
    return WalkResult(positions=pos[:n], accepted=out[:n], committed=com[:n], step_offsets=soff,
                      lengths=np.diff(off), start=int(start),
                      proposed=prop[:n] if have_prop else None,
                      match_len=ml[:n] if have_ml else None)


def walk(accept_len, *, start: int = 0) -> WalkResult:
    """Walk one request's profile (or a list of them).

    Parameters
    ----------
    accept_len : array_like of int, or list of array_like
        int32[L] accepted draft tokens per completion position t (0..L-1), i.e.
        ``DraftProfile.accept_len``; a list walks several requests at once. A
        :class:`~models.drafting.lookup.DraftProfile` (or list of them) is accepted too.
    start : int, default 0
        First walked position (0: reference replay; 1: first token from prefill).

    Returns
    -------
    WalkResult
        ``accepted`` holds the per-step accepted lengths; tokens/forward =
        ``committed.sum() / n_steps``.

    Examples
    --------
    >>> walk([2, 0, 0, 1, 0, 0]).accepted.tolist()   # t=0 -> 3, t=3 -> 5
    [2, 1, 0]
    """
    items = accept_len if isinstance(accept_len, (list, tuple)) and len(accept_len) and \
        (hasattr(accept_len[0], "__len__") or hasattr(accept_len[0], "accept_len")) \
        else [accept_len]
    arrs, props, mls = [], [], []
    for it in items:
        if hasattr(it, "accept_len"):
            arrs.append(np.asarray(it.accept_len, np.int32))
            props.append(np.asarray(it.proposed, np.int32))
            mls.append(np.asarray(it.match_len, np.int32))
        else:
            arrs.append(np.asarray(it, np.int32))
    off = np.zeros(len(arrs) + 1, np.int64)
    off[1:] = np.cumsum([len(a) for a in arrs])
    cat = np.concatenate(arrs) if arrs else np.zeros(0, np.int32)
    return walk_arrays(cat, off, start=start,
                       proposed=np.concatenate(props) if props else None,
                       match_len=np.concatenate(mls) if mls else None)


def summarize(w: WalkResult, *, cap: int = 8) -> ReplaySummary:
    """Aggregate a :class:`WalkResult` (definitions in :class:`ReplaySummary`)."""
    total = int(w.lengths.sum())
    acc = w.accepted.astype(np.int64)
    n_steps = int(acc.shape[0])
    if w.proposed is not None:
        drafted = w.proposed > 0
        nd = int(drafted.sum())
        mal = 1.0 + float(acc[drafted].sum()) / nd if nd else float("nan")
    else:
        nd = -1
        mal = float("nan")
    hist = np.bincount(acc, minlength=1) if n_steps else np.zeros(1, np.int64)
    return ReplaySummary(
        tokens_per_forward=float(w.committed.sum()) / n_steps if n_steps else float("nan"),
        mean_accept_len_conditional=mal,
        frac_from_lookup=float(acc.sum()) / total if total else float("nan"),
        n_steps=n_steps,
        n_draft_steps=nd,
        n_accepted=int(acc.sum()),
        matched_runs=int((acc >= 1).sum()),
        runs_over_cap=int((acc > cap).sum()),
        frac_beyond_cap=float(np.clip(acc - cap, 0, None).sum()) / total if total else float("nan"),
        accept_hist=hist,
        cap=cap,
    )
