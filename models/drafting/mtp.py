"""MTP / EAGLE chain simulation over a capture.

A chain drafter of depth K proposes K tokens every step; the target verifies M = K+1 rows
and commits the accepted prefix plus one bonus/correction token. The accepted length ``a``
of a step is drawn by inverse-survival sampling, ``a = #{i : u < s_i}`` with
``u ~ U(0, 1)``, from the prompt's survival curve ``s`` (shape (K,); ``s_i`` is vLLM's
per-position acceptance rate at draft position i) or, in the correlated model, from the
curve of the position's easiness state (see :mod:`models.drafting.hybrid`).

The steps are those of the one step walk, :func:`models.drafting.walk.walk` (mode
``mtp``); its start convention and counts apply (``start=1`` gives vLLM's counters).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .walk import WalkResult, walk

__all__ = ["simulate_mtp"]


def simulate_mtp(lengths: Sequence[int] | np.ndarray, curves: np.ndarray, *, n_rep: int = 200,
                 seed: int | np.random.Generator | None = 0, state: Sequence[np.ndarray] | None = None,
                 cost: Callable | None = None, start: int = 0) -> WalkResult:
    """Monte-Carlo MTP chain over completions of the given lengths.

    Parameters
    ----------
    lengths : array of int, shape (P,)
        Completion lengths (tokens); 512 for the P128 captures.
    curves : array, shape (K,), (P, K) or (P, S, K)
        Survival curve(s): global, per prompt, or per prompt and easiness state.
    n_rep : int, default 200
        Replicates R.
    seed : int or Generator
        ``numpy.random.default_rng(seed)``.
    state : sequence of int arrays (L_p,), optional
        Easiness state per position (correlated model).
    cost : callable, optional
        Step-time function for TPS
        (:meth:`models.drafting.cost.ForwardCostModel.step_ms`).
    start : int, default 0
        First walked position (0 reference replay, 1 vLLM counters; see
        :mod:`models.drafting.walk`).

    Returns
    -------
    WalkResult
        ``tokens``/``forwards`` of shape (R, P).

    Raises
    ------
    ModelInputError
        Curves for a different number of prompts, or a state outside the curves' states.

    Examples
    --------
    An all-ones curve accepts every draft: K+1 tokens per forward (up to truncation).

    >>> r = simulate_mtp([9], [1.0, 1.0, 1.0], n_rep=1, start=1)
    >>> r.tokens_per_forward()
    4.0
    """
    L = np.asarray(lengths, dtype=np.int64)
    cv = np.asarray(curves, dtype=float)
    if cv.ndim == 1:
        cv = np.broadcast_to(cv, (L.size, cv.size))
    return walk(L, mode="mtp", n_rep=n_rep, seed=seed, curves=cv, state=state, cost=cost,
                start=start)
