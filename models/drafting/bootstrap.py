"""Bootstrap over prompts (and Monte-Carlo replicates) of ratio estimators.

Each bootstrap replicate b draws P prompt indices with replacement (within each prompt group
when the capture has groups: stratified), and, for a stochastic policy with R Monte-Carlo
replicates, one replicate r_b; the statistic is the token-weighted ratio estimator
``sum_p num[r_b, idx_bp] / sum_p den[r_b, idx_bp]`` (e.g. committed tokens / forwards =
tokens/forward, or tokens / time = TPS before the harness factor). A prompt is always
resampled together with its own acceptance and its own (tokens, forwards, time) sums.

Several statistics can share the same index matrix (paired comparison of a policy and a
baseline on the same resampled prompts): pass them together to :func:`bootstrap_ratios`.

Implementation: one (B, P) int index matrix and fancy-index gathers of the per-prompt
sums (a flat ``np.take``, once per input array, without Monte-Carlo replicates); no Python
loop over replicates. 10,000 x 128 takes a few ms (bench/bench_bootstrap.py).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from models.errors import ModelInputError

__all__ = ["resample_indices", "bootstrap_ratios", "summarize_samples", "DEFAULT_B"]

DEFAULT_B = 2000


def resample_indices(n_prompts: int, n_boot: int, rng: np.random.Generator,
                     groups: Sequence | None = None) -> np.ndarray:
    """Bootstrap prompt indices.

    Parameters
    ----------
    n_prompts : int
        P.
    n_boot : int
        B replicates.
    rng : numpy.random.Generator
    groups : sequence, shape (P,), optional
        Group label per prompt; resampling is stratified (each group keeps its size).

    Returns
    -------
    numpy.ndarray, int64, shape (B, P)

    Raises
    ------
    ModelInputError
        ``groups`` length differs from ``n_prompts`` or ``n_boot < 1``.
    """
    if n_boot < 1:
        raise ModelInputError(f"bootstrap replicates must be >= 1, got {n_boot}", field="bootstrap")
    if groups is None:
        return rng.integers(0, n_prompts, size=(n_boot, n_prompts))
    g = np.asarray(groups)
    if g.size != n_prompts:
        raise ModelInputError(f"{g.size} group labels for {n_prompts} prompts", field="groups")
    cols = []
    for lab in sorted(set(g.tolist()), key=str):
        members = np.flatnonzero(g == lab)
        draw = rng.integers(0, members.size, size=(n_boot, members.size))
        if members[-1] - members[0] + 1 == members.size:  # one run of prompts: shift in place
            draw += members[0]
            cols.append(draw)
        else:
            cols.append(members[draw])
    return np.concatenate(cols, axis=1)


def bootstrap_ratios(stats: Mapping[str, tuple[np.ndarray, np.ndarray]], *, n_boot: int = DEFAULT_B,
                     seed: int | np.random.Generator | None = 0, groups: Sequence | None = None
                     ) -> dict[str, np.ndarray]:
    """Paired bootstrap of several ratio estimators over the same resampled prompts.

    Parameters
    ----------
    stats : mapping name -> (num, den)
        ``num`` and ``den`` of shape (R, P) or (P,) (R Monte-Carlo replicates; each
        statistic may have its own R). Same P for all.
    n_boot : int
        Replicates B (default 2,000).
    seed : int or Generator
    groups : sequence, shape (P,), optional
        Stratify by prompt group.

    Returns
    -------
    dict name -> numpy.ndarray, shape (B,)
        Ratio ``sum num / sum den`` per bootstrap replicate.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    given = dict(stats)  # holds the inputs, so their ids name them during the call
    arrs = {k: (np.atleast_2d(np.asarray(n, float)), np.atleast_2d(np.asarray(d, float)))
            for k, (n, d) in given.items()}
    Ps = {a[0].shape[1] for a in arrs.values()}
    if len(Ps) != 1:
        raise ModelInputError("statistics have different prompt counts", field="bootstrap")
    P = Ps.pop()
    idx = resample_indices(P, n_boot, rng, groups)
    out = {}
    sums: dict[int, np.ndarray] = {}  # id(input array) -> its resampled sums (R = 1)
    for k, (num, den) in arrs.items():
        R = num.shape[0]
        if R > 1:
            r = rng.integers(0, R, size=(n_boot, 1))
            out[k] = num[r, idx].sum(1) / den[r, idx].sum(1)
            continue
        # one replicate: a flat gather (np.take, the same values as num[0][idx] in half
        # the time), each input array's sums computed once (the statistics of one policy
        # share its tokens)
        n_in, d_in = given[k]
        for a, key in ((num, id(n_in)), (den, id(d_in))):
            if key not in sums:
                sums[key] = np.take(a[0], idx).sum(1)
        out[k] = sums[id(n_in)] / sums[id(d_in)]
    return out


def summarize_samples(samples: np.ndarray, point: float | None = None, level: float = 0.95
                      ) -> dict:
    """Mean, sd and percentile interval of bootstrap samples.

    Parameters
    ----------
    samples : array_like, shape (B,)
        Bootstrap replicates of one statistic.
    point : float, optional
        Point estimate to report (default: the mean of the samples).
    level : float, default 0.95
        Coverage of the central percentile interval.

    Returns
    -------
    dict
        ``point`` (given, else the mean), ``mean``, ``sd``, ``ci_low``, ``ci_high``.
    """
    s = np.asarray(samples, float)
    a = (1 - level) / 2
    lo, hi = np.quantile(s, [a, 1 - a])
    return {"point": float(point if point is not None else s.mean()), "mean": float(s.mean()),
            "sd": float(s.std(ddof=1)) if s.size > 1 else 0.0, "ci_low": float(lo),
            "ci_high": float(hi)}
