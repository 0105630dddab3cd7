"""MTP + lookup hybrids and the MTP/lookup acceptance-correlation model.

Hybrids (all run by the step walk :func:`models.drafting.mtp.walk`; the lookup side is a
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
    proposed[t] > 0`` from the lookup profile. The prompt's curve ``s_p`` is split into
    ``s_p ** theta_hard`` and ``s_p ** (theta_hard * exp(-gamma))`` with ``theta_hard`` solved
    per prompt so the prompt's tokens/forward is unchanged (harmonic mixture over
    positions: ``1/E_p = f_p/E_easy + (1-f_p)/E_hard``, f_p = easy fraction of positions).
    ``gamma = 0`` is independence. ``gamma`` is calibrated (:func:`calibrate_gamma`) so the
    implied within-prompt contrast ``E_easy - E_hard`` equals the slope of the measured
    per-prompt MTP tokens/forward (stack F counters) regressed on the capture's per-prompt
    easy fraction -- the between-prompt association read as a within-prompt effect (an
    ecological assumption, stated in docs/drafting.md).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from models.drafting.acceptance import scale_curve
from models.drafting.mtp import WalkResult, walk
from planner.errors import InputError

__all__ = ["easiness_state", "conditioned_curves", "calibrate_gamma", "hybrid_max",
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


def conditioned_curves(curves: np.ndarray, easy_frac: np.ndarray, gamma: float,
                       iters: int = 60) -> np.ndarray:
    """Split each prompt's curve into (hard, easy) curves preserving its tokens/forward.

    Parameters
    ----------
    curves : array, shape (P, K)
        Prompt curves ``s_p``.
    easy_frac : array, shape (P,)
        Fraction of the prompt's positions in the easy state.
    gamma : float
        Log-ratio of the power exponents (``theta_easy = theta_hard * exp(-gamma)``);
        0 = independence.

    Returns
    -------
    numpy.ndarray, shape (P, 2, K)
        ``[:, 0]`` hard, ``[:, 1]`` easy.
    """
    c = np.clip(np.asarray(curves, float), 1e-12, 1 - 1e-12)
    f = np.clip(np.asarray(easy_frac, float), 0, 1)
    if gamma == 0:
        return np.stack([c, c], axis=1)
    E = _expect(c)
    lc = np.log(c)
    lo = np.full(f.size, -8.0)
    hi = np.full(f.size, 8.0)  # log theta_hard
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        th = np.exp(mid)[:, None]
        eh = 1 + np.exp(lc * th).sum(1)
        ee = 1 + np.exp(lc * th * np.exp(-gamma)).sum(1)
        e_mix = 1 / (f / ee + (1 - f) / eh)
        too_high = e_mix > E  # increase theta
        lo = np.where(too_high, mid, lo)
        hi = np.where(too_high, hi, mid)
    th = np.exp(0.5 * (lo + hi))[:, None]
    return np.stack([np.exp(lc * th), np.exp(lc * th * np.exp(-gamma))], axis=1)


def calibrate_gamma(measured_tpf: np.ndarray, easy_frac: np.ndarray, base_curve: np.ndarray,
                    *, gamma_max: float = 8.0) -> dict:
    """Calibrate the easiness strength from per-prompt MTP counters.

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
        ``slope`` (tokens/forward per unit easy fraction, OLS), ``intercept``, ``r``
        (Pearson), ``gamma`` (0 when the slope is <= 0), ``e_easy``, ``e_hard``
        (implied tokens/forward in each state at the mean easy fraction), ``mean_easy_frac``.
    """
    y = np.asarray(measured_tpf, float)
    x = np.asarray(easy_frac, float)
    if y.size != x.size or y.size < 3:
        raise InputError("need matching per-prompt tokens/forward and easy fractions",
                         field="correlation")
    xm, ym = x.mean(), y.mean()
    sxx = ((x - xm) ** 2).sum()
    slope = float(((x - xm) * (y - ym)).sum() / sxx) if sxx > 0 else 0.0
    r = float(np.corrcoef(x, y)[0, 1]) if sxx > 0 and y.std() > 0 else 0.0
    c = np.atleast_2d(np.asarray(base_curve, float))
    fbar = np.array([xm])
    grid = np.linspace(0, gamma_max, 161)
    contrast = np.array([np.diff(_expect(conditioned_curves(c, fbar, g)[0]))[0]
                         for g in grid])
    if slope <= 0:
        g = 0.0
    elif slope >= contrast[-1]:
        g = float(gamma_max)
    else:
        g = float(np.interp(slope, contrast, grid))
    cc = conditioned_curves(c, fbar, g)[0]
    return {"slope": slope, "intercept": float(ym - slope * xm), "r": r, "gamma": g,
            "e_hard": float(_expect(cc[0])), "e_easy": float(_expect(cc[1])),
            "mean_easy_frac": float(xm)}


def run_hybrid(kind: str, lengths: Sequence[int], curves: np.ndarray,
               profile: tuple[Sequence[np.ndarray], Sequence[np.ndarray], Sequence[np.ndarray]],
               *, n_rep: int = 200, seed: int | np.random.Generator | None = 0,
               threshold: int = 2, tree_depth: int | None = None, gamma: float = 0.0,
               easy_threshold: int = 2, cost: Callable | None = None, start: int = 1
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
        Step time function.

    Returns
    -------
    WalkResult
        ``meta`` carries ``gamma`` and ``easy_threshold``.

    Raises
    ------
    InputError
        Unknown kind.
    """
    if kind not in HYBRIDS:
        raise InputError(f"unknown hybrid {kind!r} ({', '.join(HYBRIDS)})", field="policy")
    acc, ml, prop = profile
    cv = np.asarray(curves, float)
    state = None
    if gamma != 0:
        state = easiness_state(ml, prop, easy_threshold)
        L = np.asarray(lengths)
        f = np.array([s[start:l].mean() if l > start else 0.0 for s, l in zip(state, L)])
        cv = conditioned_curves(cv, f, gamma)
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


def scaled_curves(base_curve: np.ndarray, tpf: np.ndarray) -> np.ndarray:
    """Convenience: per-prompt curves ``base ** theta_p`` for target tokens/forward (P,)."""
    return scale_curve(base_curve, tpf)
