"""Per-position draft profiles for lookup-based drafting (PLD, vLLM n-gram, suffix).

Key idea
--------
For prompt lookup, n-gram and suffix drafting the proposal made when the committed text
is ``prompt + completion[:t]`` depends only on that prefix (and, for a cross-request
cache, on earlier requests) -- not on which steps led there. So each policy is
evaluated once at EVERY completion position ``t = 0..L-1`` giving a
:class:`DraftProfile`; the verify steps are then obtained by a cheap walk
(:func:`models.drafting.walk.walk`): start at t, commit ``accept_len[t] + 1`` tokens
(capped at the end), repeat. Any walk (also a hybrid that switches drafters per step)
can reuse the same profile.

Per-position quantities (all int32[L], L = completion length)
-------------------------------------------------------------
``accept_len[t]``
    draft tokens a greedy verifier accepts: the common prefix of the proposal and the
    actual stream ``completion[t:]``, capped by the draft length and by ``L - t``
    (tokens beyond the captured completion are unknown).
``match_len[t]``
    what the drafter observes about its own match: the matched n-gram length
    (``pld``/``ngram``) or the suffix-match length of the chosen draft (``suffix``);
    0 = no proposal.
``proposed[t]``
    draft length proposed (0 = nothing to verify; the forward commits 1 token).

Policies
--------
* :class:`PLD` -- the reference replay's prompt lookup: fixed window ``n``, MOST RECENT
  earlier match.
* :class:`HFPromptLookup` -- Hugging Face ``transformers`` / Spec-Bench prompt lookup
  (``prompt_lookup_num_tokens``, ``max_matching_ngram_size``): longest window first from the
  maximum down to 1, FIRST (earliest) match in the sequence.
* :class:`NGram` -- vLLM ``method="ngram"`` (``NgramProposer``).
* :class:`Suffix` -- SuffixDecoding (arXiv 2411.04975) as served by vLLM
  ``method="suffix"`` via arctic-inference.
* :class:`AR` -- no drafting, 1 token per forward.

Token ids must be 0 <= id < 2**31 - 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["DraftProfile", "ProfileBatch", "AR", "PLD", "HFPromptLookup", "NGram", "Suffix", "profile_arrays",
           "draft_profiles", "replay", "pld_reference_replay", "ngram_reference_propose",
           "reference_profile"]


# ---------------------------------------------------------------------------
# Profile containers
# ---------------------------------------------------------------------------

@dataclass
class DraftProfile:
    """Per-position draft profile of one request.

    Attributes
    ----------
    accept_len : numpy.ndarray
        int32[L]; accepted draft tokens for a forward starting at completion position t.
    match_len : numpy.ndarray
        int32[L]; drafter's match length at t (0 = no proposal).
    proposed : numpy.ndarray
        int32[L]; proposed draft length at t (0 = no proposal).

    Notes
    -----
    Invariants: ``0 <= accept_len[t] <= min(proposed[t], L - t)``; ``proposed[t] == 0``
    implies ``accept_len[t] == 0`` and ``match_len[t] == 0``.
    """

    accept_len: np.ndarray
    match_len: np.ndarray
    proposed: np.ndarray

    def __len__(self) -> int:
        return int(self.accept_len.shape[0])


@dataclass
class ProfileBatch:
    """Concatenated profiles of R requests (what the kernels produce).

    Attributes
    ----------
    accept_len, match_len, proposed : numpy.ndarray
        int32[sum(L)], concatenated in request order.
    offsets : numpy.ndarray
        int64[R+1]; request r occupies ``[offsets[r], offsets[r+1])``.
    """

    accept_len: np.ndarray
    match_len: np.ndarray
    proposed: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)

    def __getitem__(self, r: int) -> DraftProfile:
        a, b = int(self.offsets[r]), int(self.offsets[r + 1])
        return DraftProfile(self.accept_len[a:b], self.match_len[a:b], self.proposed[a:b])

    def profiles(self) -> list:
        """List of :class:`DraftProfile`, one per request."""
        return [self[r] for r in range(len(self))]

    @property
    def lengths(self) -> np.ndarray:
        """int64[R] completion lengths."""
        return np.diff(self.offsets)

    def walk(self, *, start: int = 0, cost=None):
        """Walk all requests with this profile (:func:`models.drafting.walk.walk`, mode
        ``lookup``; ``start`` and ``cost`` as there).

        Returns
        -------
        WalkResult
            With the step trace.
        """
        from .walk import walk
        return walk(self.lengths, mode="lookup", lookup=self, start=start, cost=cost)


# ---------------------------------------------------------------------------
# Policies
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AR:
    """Autoregressive decoding: no draft, 1 token per forward."""

    name = "ar"


@dataclass(frozen=True)
class PLD:
    """Prompt lookup decoding.

    At committed text ``x = prompt + completion[:t]`` take the last ``n`` tokens, find
    their MOST RECENT earlier occurrence in ``x`` (start ``j <= len(x) - n - 1``, so at
    least one known token follows; the occurrence may overlap the current suffix), and
    propose ``x[j+n : j+n+D]`` cut at the end of ``x`` (the proposal never extends past
    the known text). Reproduces the reference PLD replay figures exactly (see
    docs/drafting_lookup.md).

    Parameters
    ----------
    n : int, default 2
        Match window (tokens), >= 1.
    D : int, default 24
        Maximum draft length (tokens), >= 1.
    """

    n: int = 2
    D: int = 24
    name = "pld"

    def __post_init__(self):
        if self.n < 1 or self.D < 1:
            raise ValueError("PLD needs n >= 1 and D >= 1")


@dataclass(frozen=True)
class HFPromptLookup:
    """Prompt lookup as Hugging Face ``transformers`` (``PromptLookupCandidateGenerator``) and
    Spec-Bench's PLD run it.

    At committed text ``x`` (length m) try window sizes ``n`` from
    ``min(max_matching_ngram_size, m - 1)`` down to 1; for the first size whose last-``n``
    tokens occur earlier in ``x`` followed by at least one known token, take the FIRST
    (earliest) such occurrence ``j`` and propose ``x[j+n : j+n+prompt_lookup_num_tokens]``
    cut at the end of ``x``. No match at any size -> no draft. (The generator's
    ``max_length`` cut is not modelled: the capture's completion ends the stream.)

    Parameters
    ----------
    max_matching_ngram_size : int, default 2
        Largest window (``transformers`` default 2; Spec-Bench uses 3).
    prompt_lookup_num_tokens : int, default 10
        Draft length (``transformers``/Spec-Bench default 10).
    """

    max_matching_ngram_size: int = 2
    prompt_lookup_num_tokens: int = 10
    name = "hf-pld"

    def __post_init__(self):
        if self.max_matching_ngram_size < 1 or self.prompt_lookup_num_tokens < 1:
            raise ValueError("HFPromptLookup needs max_matching_ngram_size >= 1 and "
                             "prompt_lookup_num_tokens >= 1")


def _hf_pld_batch(seq, seq_off, plen, comp_off, nmax, D, acc, mlen, prop) -> None:
    """Fill the profile arrays for :class:`HFPromptLookup` (one pass per request; per window
    size a dict from n-gram to its earliest start whose continuation is known)."""
    for r in range(plen.shape[0]):
        x = seq[seq_off[r]:seq_off[r + 1]].tolist()
        P = int(plen[r])
        L = len(x) - P
        o = int(comp_off[r])
        first = [dict() for _ in range(nmax + 1)]
        reg = [0] * (nmax + 1)
        for t in range(L):
            m = P + t
            for n in range(1, nmax + 1):
                d, j = first[n], reg[n]
                while j <= m - n - 1:
                    d.setdefault(tuple(x[j:j + n]), j)
                    j += 1
                reg[n] = j
            for n in range(min(nmax, m - 1), 0, -1):
                j = first[n].get(tuple(x[m - n:m]))
                if j is None:
                    continue
                s = j + n
                e = min(s + D, m)
                a = 0
                while a < e - s and a < L - t and x[s + a] == x[m + a]:
                    a += 1
                acc[o + t], mlen[o + t], prop[o + t] = a, n, e - s
                break


@dataclass(frozen=True)
class NGram:
    """vLLM n-gram proposer (``speculative_config.method = "ngram"``).

    Semantics of vLLM ``_find_longest_matched_ngram_and_propose_tokens``
    (vllm/v1/spec_decode/ngram_proposer.py): find the LONGEST suffix of the context
    with length in ``[prompt_lookup_min, prompt_lookup_max]`` that occurs earlier
    (occurrence may overlap the suffix, but must be followed by a known token); among
    occurrences of that length take the EARLIEST one (KMP over the reversed context
    updates the position on ``>=``); propose the following ``k`` tokens cut at the end
    of the context. No match -> no draft (the forward commits 1 token).

    Parameters
    ----------
    prompt_lookup_min : int, default 2
    prompt_lookup_max : int, default 6
        vLLM defaults both to 5 if unset; 2..6 is the ``DF_P128_ngram*`` setting.
    k : int, default 5
        ``num_speculative_tokens``.
    """

    prompt_lookup_min: int = 2
    prompt_lookup_max: int = 6
    k: int = 5
    name = "ngram"

    def __post_init__(self):
        if not (1 <= self.prompt_lookup_min <= self.prompt_lookup_max) or self.k < 1:
            raise ValueError("NGram needs 1 <= prompt_lookup_min <= prompt_lookup_max, k >= 1")


@dataclass(frozen=True)
class Suffix:
    """Suffix decoding (SuffixDecoding, arXiv 2411.04975; vLLM ``method="suffix"``).

    Two indexes, as in arctic-inference ``SuffixDecodingCache``:

    * local: the request's prompt + its output so far;
    * global: outputs (not prompts) of cached requests, including the active request's
      output so far. ``cache="fifo"``: requests in processing order, at most
      ``max_cached_requests`` responses including the active one (vLLM default 10000;
      0 disables the global index; < 0 unlimited). ``cache="loo"`` (leave-one-out): all
      OTHER requests' full outputs (as if they had been served before).

    Each index counts every substring of length <= ``max_tree_depth`` (= arctic's suffix
    tree truncated at depth, with node count = number of occurrences). For match length
    m = 1, 2, ... (< min(max_tree_depth, len(context))) while the last m tokens occur
    in the index, a greedy path is drafted: repeatedly take the most frequent child,
    multiply ``prob`` by child_count / node_count, stop when ``prob < min_token_prob``, at
    a leaf, or at ``min(max_spec_tokens, floor(m * max_spec_factor + max_spec_offset))``
    tokens. Score = sum of the drafted tokens' probs; the best score wins (ties -> longer
    match); the global draft replaces the local one only if its score is strictly higher.

    Differences from arctic-inference: substrings are keyed by a 64-bit polynomial hash
    (collisions astronomically unlikely but possible); ties between equally frequent
    children are broken by "first to reach that count" (arctic: hash-map order);
    probabilities use float32 like arctic.

    Parameters
    ----------
    max_tree_depth : int, default 24
        vLLM ``suffix_decoding_max_tree_depth`` (default 24, vllm/config/speculative.py).
    max_spec_tokens : int, default 24
        vLLM ``num_speculative_tokens`` (defaults to max_tree_depth for suffix).
    max_spec_factor : float, default 1.0
        vLLM ``suffix_decoding_max_spec_factor`` (default 1.0).
    max_spec_offset : float, default 0.0
        arctic ``max_spec_offset`` (vLLM passes 0).
    min_token_prob : float, default 0.1
        vLLM ``suffix_decoding_min_token_prob`` (default 0.1).
    cache : {"fifo", "loo", "none"}, default "fifo"
    max_cached_requests : int, default 10000
        vLLM ``suffix_decoding_max_cached_requests`` (default 10000), for ``cache="fifo"``.
    """

    max_tree_depth: int = 24
    max_spec_tokens: int = 24
    max_spec_factor: float = 1.0
    max_spec_offset: float = 0.0
    min_token_prob: float = 0.1
    cache: str = "fifo"
    max_cached_requests: int = 10000
    name = "suffix"

    def __post_init__(self):
        if self.max_tree_depth < 2 or self.max_spec_tokens < 0:
            raise ValueError("Suffix needs max_tree_depth >= 2, max_spec_tokens >= 0")
        if self.cache not in ("fifo", "loo", "none"):
            raise ValueError("cache must be 'fifo', 'loo' or 'none'")


# ---------------------------------------------------------------------------
# Batch layout and drivers
# ---------------------------------------------------------------------------

def _layout(prompts: Sequence, completions: Sequence):
    if len(prompts) != len(completions):
        raise ValueError("prompts and completions differ in length")
    R = len(prompts)
    plen = np.fromiter((len(p) for p in prompts), np.int64, R)
    clen = np.fromiter((len(c) for c in completions), np.int64, R)
    seq_off = np.zeros(R + 1, np.int64)
    seq_off[1:] = np.cumsum(plen + clen)
    comp_off = np.zeros(R + 1, np.int64)
    comp_off[1:] = np.cumsum(clen)
    parts = [x for pc in zip(prompts, completions) for x in pc]
    if R and all(type(x) is np.ndarray and x.dtype == np.int32 and x.ndim == 1 for x in parts):
        seq = np.concatenate(parts)  # (a capture's arrays: one copy in C, ~15x the loop)
        return seq, seq_off, plen, comp_off
    seq = np.empty(int(seq_off[-1]), np.int32)
    for r in range(R):
        a = seq_off[r]
        seq[a:a + plen[r]] = prompts[r]
        seq[a + plen[r]:seq_off[r + 1]] = completions[r]
    return seq, seq_off, plen, comp_off


def profile_arrays(seq, seq_off, plen, comp_off, policy, *, order=None) -> ProfileBatch:
    """Profiles from the concatenated layout (used for large synthetic batches).

    Parameters
    ----------
    seq : numpy.ndarray
        int32[total]; prompt_r + completion_r for each request, concatenated.
    seq_off : numpy.ndarray
        int64[R+1] request boundaries in ``seq``.
    plen : numpy.ndarray
        int64[R] prompt lengths.
    comp_off : numpy.ndarray
        int64[R+1] boundaries of the completions in the output arrays.
    policy : PLD, HFPromptLookup, NGram, Suffix or AR
    order : array_like of int, optional
        Processing order of requests for :class:`Suffix` with ``cache="fifo"``
        (default: file order).

    Returns
    -------
    ProfileBatch
    """
    from models.kernels import lookup as _k  # compiled kernels: loaded by the first call

    seq = np.ascontiguousarray(seq, np.int32)
    seq_off = np.ascontiguousarray(seq_off, np.int64)
    plen = np.ascontiguousarray(plen, np.int64)
    comp_off = np.ascontiguousarray(comp_off, np.int64)
    total = int(comp_off[-1])
    acc = np.zeros(total, np.int32)
    mlen = np.zeros(total, np.int32)
    prop = np.zeros(total, np.int32)
    if isinstance(policy, AR):
        pass
    elif isinstance(policy, PLD):
        _k.pld_batch(seq, seq_off, plen, comp_off, int(policy.n), int(policy.D), acc, mlen, prop)
    elif isinstance(policy, HFPromptLookup):
        _hf_pld_batch(seq, seq_off, plen, comp_off, int(policy.max_matching_ngram_size),
                      int(policy.prompt_lookup_num_tokens), acc, mlen, prop)
    elif isinstance(policy, NGram):
        _k.ngram_batch(seq, seq_off, plen, comp_off, int(policy.prompt_lookup_min),
                       int(policy.prompt_lookup_max), int(policy.k), acc, mlen, prop)
    elif isinstance(policy, Suffix):
        R = plen.shape[0]
        order = np.arange(R, dtype=np.int64) if order is None else np.asarray(order, np.int64)
        depth = int(policy.max_tree_depth)
        maxN = int(np.diff(seq_off).max()) if R else 1
        lsize = _pow2(maxN * depth * 10 // 7 + 16)
        if policy.cache == "none" or (policy.cache == "fifo" and policy.max_cached_requests == 0):
            mode, gsize = 0, 1
        else:
            mode = 2 if policy.cache == "loo" else 1
            # sized for the nodes real streams create (_SUFFIX_NODES of one per token and
            # depth), doubled by the kernel's refusal when a stream needs more
            gsize = _pow2(int(total * depth * _SUFFIX_NODES) * 10 // 7 + 16)
        nodes = np.zeros(1, np.int64)
        while True:
            rc = _k.suffix_batch(seq, seq_off, plen, comp_off, order, depth,
                                 int(policy.max_spec_tokens), float(policy.max_spec_factor),
                                 float(policy.max_spec_offset), np.float32(policy.min_token_prob),
                                 mode, int(policy.max_cached_requests), gsize, lsize,
                                 acc, mlen, prop, nodes)
            if rc != 1 or gsize >= _pow2(total * depth * 10 // 7 + 16):
                break
            gsize *= 2  # the global table could pass 70 % full: again, larger
        if rc != 0:
            raise RuntimeError("suffix index overflow (internal sizing error)")
    else:
        raise TypeError(f"unknown drafting policy {policy!r}")
    return ProfileBatch(acc, mlen, prop, comp_off)


#: Global suffix-index nodes per (completion token x tree depth) the first table is sized
#: for. Every substring of length <= depth of every completion is at most one node each
#: (total x depth); real streams repeat: the shipped captures need 0.77-0.85
#: of that. A stream needing more makes the kernel refuse the table (before it passes 70 %
#: full) and the replay runs again with twice the slots, up to the total x depth bound; the
#: profiles do not depend on the table size (nodes are found by their 64-bit key).
_SUFFIX_NODES = 0.85


def _pow2(x: int) -> int:
    s = 1
    while s < x:
        s *= 2
    return s


def draft_profiles(prompts, completions=None, policy=None, *, order=None) -> ProfileBatch:
    """Per-position draft profiles for every request.

    Parameters
    ----------
    prompts : list of array_like of int, or Capture
        Prompt token ids per request, or a :class:`~models.drafting.capture.Capture`
        (then ``completions`` is taken from it and may be omitted).
    completions : list of array_like of int
        Completion (greedy stream) token ids per request.
    policy : PLD, HFPromptLookup, NGram, Suffix or AR
    order : array_like of int, optional
        Request processing order (only matters for ``Suffix`` with a FIFO cache).

    Returns
    -------
    ProfileBatch
        ``batch[r]`` is request r's :class:`DraftProfile`; ``batch.walk()`` gives steps.
    """
    if hasattr(prompts, "completions") and hasattr(prompts, "prompts"):
        if policy is None:
            policy = completions
        completions = prompts.completions
        prompts = prompts.prompts
    if policy is None:
        raise TypeError("policy is required")
    seq, seq_off, plen, comp_off = _layout(prompts, completions)
    return profile_arrays(seq, seq_off, plen, comp_off, policy, order=order)


def replay(capture_or_prompts, completions=None, policy=None, *, start: int = 0, cap: int = 8):
    """Profiles + walk + summary in one call.

    Parameters
    ----------
    capture_or_prompts, completions, policy
        As for :func:`draft_profiles`.
    start : int, default 0
        First walked position (see :mod:`models.drafting.walk`).
    cap : int, default 8
        Run-length cap of the summary.

    Returns
    -------
    (ProfileBatch, WalkResult, ReplaySummary)
    """
    from .walk import summarize
    batch = draft_profiles(capture_or_prompts, completions, policy)
    w = batch.walk(start=start)
    return batch, w, summarize(w, cap=cap)


# ---------------------------------------------------------------------------
# Pure-Python reference replays (straightforward; used to check the kernels)
# ---------------------------------------------------------------------------

def pld_reference_replay(prompts, completions, n: int = 2, D: int = 24, *,
                         start: int = 0) -> list:
    """Straightforward step-by-step PLD replay (pure Python).

    For each request: ``ctx = prompt + completion[:start]``; each step looks up the most
    recent earlier occurrence of the last ``n`` tokens (a dict from n-gram to its newest
    start whose continuation is known), proposes up to ``D`` following known tokens,
    accepts the greedy-correct prefix (at most the remaining tokens), commits accepted +
    1 bonus (capped at the end).

    Returns
    -------
    list of list of int
        Accepted draft tokens per step, per request.
    """
    out = []
    for P, C in zip(prompts, completions):
        ctx = [int(x) for x in P]
        C = [int(x) for x in C]
        L = len(C)
        last = {}
        reg = 0  # n-gram starts registered so far: j < reg

        t = min(start, L)
        ctx.extend(C[:t])
        steps = []
        while t < L:
            while reg <= len(ctx) - n - 1:
                last[tuple(ctx[reg:reg + n])] = reg
                reg += 1
            a = 0
            if len(ctx) >= n:
                j = last.get(tuple(ctx[-n:]))
                if j is not None:
                    s = j + n
                    prop = ctx[s:min(s + D, len(ctx))]
                    while a < len(prop) and a < L - t and prop[a] == C[t + a]:
                        a += 1
            c = min(a + 1, L - t)
            ctx.extend(C[t:t + c])
            t += c
            steps.append(a)
        out.append(steps)
    return out


def ngram_reference_propose(context: Sequence[int], nmin: int, nmax: int, k: int):
    """Pure-Python re-implementation of vLLM's n-gram proposal for one context.

    Longest suffix match with length in [nmin, nmax] found by a KMP scan of the reversed
    context; the earliest occurrence among the longest; returns the following tokens
    (at most k, cut at the end of the context) and the match length, or ``([], 0)``.
    """
    tok = list(context)[::-1]
    total = len(tok)
    if total < nmin:
        return [], 0
    lps = [0] * nmax
    longest, position, prev, i = 0, 0, 0, 1
    while i < total:
        if tok[prev] == tok[i]:
            prev += 1
            if prev >= longest:
                longest, position = prev, i
            if i < nmax:
                lps[i] = prev
            if prev == nmax:
                prev = lps[nmax - 1]
            i += 1
        elif prev != 0:
            prev = lps[prev - 1]
        else:
            i += 1
    if longest < nmin:
        return [], 0
    s = total - 1 - position + longest
    return list(context)[s:s + min(k, total - s)], longest


def reference_profile(prompt, completion, propose) -> DraftProfile:
    """Profile by calling ``propose(context) -> (draft tokens, match_len)`` at every t."""
    P = [int(x) for x in prompt]
    C = [int(x) for x in completion]
    L = len(C)
    acc = np.zeros(L, np.int32)
    ml = np.zeros(L, np.int32)
    pr = np.zeros(L, np.int32)
    for t in range(L):
        d, m = propose(P + C[:t])
        a = 0
        while a < len(d) and a < L - t and d[a] == C[t + a]:
            a += 1
        acc[t], ml[t], pr[t] = a, (m if d else 0), len(d)
    return DraftProfile(acc, ml, pr)
