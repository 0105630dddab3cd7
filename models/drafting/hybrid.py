"""MTP + lookup hybrids and the MTP/lookup acceptance-correlation model.

Hybrids (all run by the one step walk :func:`models.drafting.walk.walk`; the lookup side is a
deterministic draft profile ``(accept_len, match_len, proposed)`` per completion position,
the MTP side a stochastic chain of depth K):

``max`` (:func:`hybrid_max`) -- upper bound
    Both drafts are verified and the step advances by the better one:
    ``a = max(a_mtp, a_lookup)``. Charged as a plain MTP step (M = K+1, async), i.e. it
    ignores the price of verifying both. A real server would need tree verification of two
    branches (M = K+1+D rows, tree attention mask) *and* the host-side lookup every step
    (synchronous scheduling); neither exists in vLLM's single-proposer path. Use it only as
    a ceiling.
``suffix-first`` (:func:`suffix_first`)
    If the lookup drafter's *observable* match length at the current position is
    ``>= threshold`` (and it proposes something), verify its draft (M = D_prop + 1, no MTP
    passes), else run the MTP chain (M = K+1, K drafter passes). The decision never uses
    the future acceptance. A real server needs the sampled ids on the host each step to run
    the lookup (synchronous scheduling, charged by ``sync_factor``) and a per-step switch
    between two proposers.
``tree`` (:func:`tree`)
    MTP chain with the lookup draft appended as a second root branch: verify
    M = K+1+D_prop rows (D_prop capped by ``tree_depth``), advance by the better branch.
    A real server needs tree verification (tree attention mask, KV compaction of the
    winning branch) and the host lookup each step (synchronous); charged with the verify
    cost at M = K+1+D (staircase at 17/33/49) times ``sync_factor`` and K drafter passes.

Correlation (latent easiness)
    MTP acceptance and lookup matchability are both high in repetitive stretches. Each
    completion position gets a state ``easy = match_len[t] >= easy_threshold and
    proposed[t] > 0`` from the lookup profile. The prompt's curve ``s_p`` is split into a
    hard curve ``s_p ** theta_hard`` and an easy curve ``s_p ** (theta_hard * exp(-gamma))``;
    an MTP step uses the curve of the state at the position where it starts.
    ``theta_hard`` is solved per prompt so the prompt's simulated tokens/forward is unchanged
    (step-weighted mixture, fixed point with short walks: :func:`fit_conditioned`), so the
    MTP-alone numbers do not move; only the joint behaviour with the lookup does.
    ``gamma = 0`` is independence. :func:`calibrate_gamma` reads the between-prompt
    regression of the measured per-prompt MTP tokens/forward (stack F counters) on the
    capture's per-prompt easy fraction as the within-prompt contrast (an ecological
    assumption: it attributes all of the prompt-level association to position-level
    easiness, so it is the strong end; independence is the other end).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from models.drafting.acceptance import scale_curve
from models.drafting.walk import WalkResult, walk
from models.errors import ModelInputError

__all__ = ["easiness_state", "conditioned_curves", "fit_conditioned", "calibrate_gamma", "hybrid_max",
           "suffix_first", "tree", "run_hybrid", "HYBRIDS"]

HYBRIDS = ("max", "suffix-first", "tree")


def easiness_state(match_len: Sequence[np.ndarray], proposed: Sequence[np.ndarray],
                   threshold: int) -> list[np.ndarray]:
    """Per-position easiness state (0 hard, 1 easy) from a lookup profile.

    Parameters
    ----------
    match_len, proposed : sequence of int arrays, shape (L_p,)
    threshold : int
        Easy when ``match_len >= threshold`` and ``proposed > 0``.

    Returns
    -------
    list of int64 arrays, shape (L_p,)
    """
    return [((np.asarray(m) >= threshold) & (np.asarray(p) > 0)).astype(np.int64)
            for m, p in zip(match_len, proposed)]


def _expect(curves: np.ndarray) -> np.ndarray:
    return 1 + curves.sum(-1)


def conditioned_curves(curves: np.ndarray, easy_step_frac: np.ndarray, gamma: float,
                       iters: int = 60) -> np.ndarray:
    """Split each prompt's curve into (hard, easy) curves preserving its tokens/forward.

    tokens/forward is a mean over *steps*, so the identity is the step-weighted mixture
    ``E_p = g_p * E_easy + (1 - g_p) * E_hard`` with ``g_p`` the fraction of the prompt's
    steps that start at an easy position (:func:`fit_conditioned` finds it by a fixed
    point with short walks).

    Parameters
    ----------
    curves : array, shape (P, K)
        Prompt curves ``s_p``.
    easy_step_frac : array, shape (P,)
        Fraction of the prompt's steps that start in the easy state.
    gamma : float
        ``theta_easy = theta_hard * exp(-gamma)``; 0 = independence.

    Returns
    -------
    numpy.ndarray, shape (P, 2, K)
        ``[:, 0]`` hard, ``[:, 1]`` easy.
    """
    c = np.clip(np.asarray(curves, float), 1e-12, 1 - 1e-12)
    g = np.clip(np.asarray(easy_step_frac, float), 0, 1)
    if gamma == 0:
        return np.stack([c, c], axis=1)
    E = _expect(c)
    lc = np.log(c)
    lo = np.full(g.size, -10.0)
    hi = np.full(g.size, 10.0)  # log theta_hard
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        th = np.exp(mid)[:, None]
        eh = 1 + np.exp(lc * th).sum(1)
        ee = 1 + np.exp(lc * th * np.exp(-gamma)).sum(1)
        too_high = g * ee + (1 - g) * eh > E  # increase theta
        lo = np.where(too_high, mid, lo)
        hi = np.where(too_high, hi, mid)
    th = np.exp(0.5 * (lo + hi))[:, None]
    return np.stack([np.exp(lc * th), np.exp(lc * th * np.exp(-gamma))], axis=1)


def fit_conditioned(lengths: Sequence[int], curves: np.ndarray, state: Sequence[np.ndarray],
                    gamma: float, *, iters: int = 4, n_rep: int = 16, seed: int = 12345,
                    start: int = 0) -> np.ndarray:
    """(hard, easy) curves per prompt whose simulated MTP tokens/forward equals the prompt's
    own (fixed point on the fraction of steps starting in the easy state).

    Parameters
    ----------
    lengths : array of int, shape (P,)
    curves : array, shape (P, K)
    state : sequence of int arrays (L_p,)
        0 hard / 1 easy per position.
    gamma : float
    iters, n_rep, seed
        Fixed-point iterations and the size / seed of the inner walks.
    start : int, default 0
        First walked position (see :mod:`models.drafting.walk`).

    Returns
    -------
    numpy.ndarray, shape (P, 2, K)
    """
    L = np.asarray(lengths)
    g = np.array([s[start:l].mean() if l > start else 0.0 for s, l in zip(state, L)])
    cc = conditioned_curves(curves, g, gamma)
    if gamma == 0:
        return cc
    for _ in range(iters):
        res = walk(L, mode="mtp", n_rep=n_rep, seed=seed, curves=cc, state=state, start=start)
        g = res.meta["state_step_frac"]
        cc = conditioned_curves(curves, g, gamma)
    return cc


def calibrate_gamma(measured_tpf: np.ndarray, easy_frac: np.ndarray, base_curve: np.ndarray
                    ) -> dict:
    """Calibrate the easiness strength from per-prompt MTP counters.

    OLS of the measured per-prompt MTP tokens/forward on the prompt's easy fraction of
    positions, ``tpf ~ a + b f``. Read ecologically, a prompt that is all-easy would run at
    ``a + b`` and an all-hard one at ``a`` tokens/forward; ``gamma`` is the log ratio of the
    power exponents that map the global curve to those two levels (clipped to
    [1.05, K + 0.95]).

    Parameters
    ----------
    measured_tpf : array, shape (P,)
        Measured per-prompt MTP tokens/forward (e.g. stack F run B counters).
    easy_frac : array, shape (P,)
        Per-prompt fraction of easy positions from the lookup profile on the capture.
    base_curve : array, shape (K,)
        Global curve.

    Returns
    -------
    dict
        ``slope``, ``intercept``, ``r`` (Pearson), ``gamma`` (0 when the slope is <= 0),
        ``e_hard``, ``e_easy`` (target levels), ``mean_easy_frac``.

    Raises
    ------
    ModelInputError
        Mismatched lengths or fewer than 3 prompts.
    """
    y = np.asarray(measured_tpf, float)
    x = np.asarray(easy_frac, float)
    if y.size != x.size or y.size < 3:
        raise ModelInputError("need matching per-prompt tokens/forward and easy fractions",
                              field="correlation")
    xm, ym = x.mean(), y.mean()
    sxx = ((x - xm) ** 2).sum()
    slope = float(((x - xm) * (y - ym)).sum() / sxx) if sxx > 0 else 0.0
    r = float(np.corrcoef(x, y)[0, 1]) if sxx > 0 and y.std() > 0 else 0.0
    k = np.asarray(base_curve).size
    a = float(ym - slope * xm)
    e_h = float(np.clip(a, 1.05, k + 0.95))
    e_e = float(np.clip(a + slope, 1.05, k + 0.95))
    g = 0.0
    if slope > 0 and e_e > e_h:
        c = np.clip(np.asarray(base_curve, float), 1e-12, 1 - 1e-12)
        th = []
        for tgt in (e_h, e_e):
            s = scale_curve(c, tgt)[0]
            th.append(float(np.median(np.log(s) / np.log(c))))
        g = float(np.log(th[0] / th[1]))
    return {"slope": slope, "intercept": a, "r": r, "gamma": g, "e_hard": e_h, "e_easy": e_e,
            "mean_easy_frac": float(xm), "n_prompts": int(y.size)}


def run_hybrid(kind: str, lengths: Sequence[int], curves: np.ndarray,
               profile: tuple[Sequence[np.ndarray], Sequence[np.ndarray], Sequence[np.ndarray]],
               *, n_rep: int = 200, seed: int | np.random.Generator | None = 0,
               threshold: int = 2, tree_depth: int | None = None, gamma: float = 0.0,
               easy_threshold: int = 2, cost: Callable | None = None, start: int = 0
               ) -> WalkResult:
    """Run a hybrid policy (``max``, ``suffix-first`` or ``tree``) over a capture.

    Parameters
    ----------
    kind : {"max", "suffix-first", "tree"}
    lengths : array of int, shape (P,)
    curves : array, shape (P, K)
        Prompt MTP curves.
    profile : (accept_len, match_len, proposed)
        Lookup draft profile, int arrays of shape (L_p,) per prompt.
    n_rep, seed
        Monte-Carlo replicates and seed.
    threshold : int
        ``suffix-first`` switch: lookup when ``match_len >= threshold``.
    tree_depth : int, optional
        Cap on the lookup branch (``tree``).
    gamma : float
        Easiness strength (0 = independence); see :func:`calibrate_gamma`.
    easy_threshold : int
        match_len defining the easy state.
    cost : callable, optional
        Step time function (:meth:`models.drafting.cost.ForwardCostModel.step_ms`).
    start : int, default 0
        First walked position (see :mod:`models.drafting.walk`).

    Returns
    -------
    WalkResult
        ``meta`` carries ``gamma`` and ``easy_threshold``.

    Raises
    ------
    ModelInputError
        Unknown kind.
    """
    if kind not in HYBRIDS:
        raise ModelInputError(f"unknown hybrid {kind!r} ({', '.join(HYBRIDS)})", field="policy")
    acc, ml, prop = profile
    cv = np.asarray(curves, float)
    state = None
    if gamma != 0:
        state = easiness_state(ml, prop, easy_threshold)
        cv = fit_conditioned(lengths, cv, state, gamma, start=start)
    res = walk(lengths, mode=kind, n_rep=n_rep, seed=seed, curves=cv, state=state,
               lookup=(acc, ml, prop), threshold=threshold, tree_depth=tree_depth, cost=cost,
               start=start)
    res.meta.update(gamma=gamma, easy_threshold=easy_threshold, threshold=threshold,
                    tree_depth=tree_depth)
    return res


def hybrid_max(lengths, curves, profile, **kw) -> WalkResult:
    """Upper-bound hybrid: advance by the better of MTP and lookup (see module doc).

    Real server needs: two-branch tree verify + synchronous host lookup; charged here as a
    plain async MTP step (ceiling only)."""
    return run_hybrid("max", lengths, curves, profile, **kw)


def suffix_first(lengths, curves, profile, **kw) -> WalkResult:
    """Lookup draft when its observable match length >= threshold, else MTP chain.

    Real server needs: synchronous scheduling (host lookup every step), two proposers."""
    return run_hybrid("suffix-first", lengths, curves, profile, **kw)


def tree(lengths, curves, profile, **kw) -> WalkResult:
    """MTP chain plus the lookup draft as a second root branch (M = K+1+D rows).

    Real server needs: tree attention verify + synchronous host lookup."""
    return run_hybrid("tree", lengths, curves, profile, **kw)

