"""Bootstrap over prompts (and Monte-Carlo replicates) of ratio estimators.

Each bootstrap replicate b draws P prompt indices with replacement (within each prompt group
when the capture has groups: stratified), and, for a stochastic policy with R Monte-Carlo
replicates, one replicate r_b; the statistic is the token-weighted ratio estimator
``sum_p num[r_b, idx_bp] / sum_p den[r_b, idx_bp]`` (e.g. committed tokens / forwards =
tokens/forward, or tokens / time = TPS before the harness factor). A prompt is always
resampled together with its own acceptance and its own (tokens, forwards, time) sums.

Several statistics can share the same index matrix (paired comparison of a policy and a
baseline on the same resampled prompts): pass them together to :func:`bootstrap_ratios`.

Implementation: one (B, P) int index matrix, filled group by group, and one compiled pass
over its rows that gathers each distinct input row into a small buffer and sums it exactly
as NumPy's ``sum`` does (pairwise summation, :func:`_pairwise_program`), so the figures are
those of ``np.take(a, idx).sum(1)`` without a (B, P) float array per input. Inputs equal in
value (the committed tokens of every deterministic policy, the forwards of ``ar``) are
summed once. 10,000 x 128 takes a few ms (bench/bench_bootstrap.py).
"""

from __future__ import annotations

import copy
from typing import Mapping, Sequence

import numpy as np

from models.errors import ModelInputError
from models.kernels.bootstrap import gather_sums as _gather_sums

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
    plan = _IndexDraws(n_prompts, n_boot, rng, groups)
    out = np.empty((n_boot, n_prompts), np.int64)
    plan.fill(out)
    return out


class _IndexDraws:
    """The draws of :func:`resample_indices`, handed out a block of rows at a time.

    Stratified resampling draws every group's whole (B, size) matrix in turn (label order);
    the rows of one replicate come from all of them. The constructor advances ``rng`` past
    all those draws (in blocks, as the caller's generator must end where one call would
    leave it) and keeps a copy of the generator at the start of each group; :meth:`fill`
    then draws the next rows of every group from its copy. A Generator's bounded integers
    continue its stream exactly across calls (the 32-bit half-word buffer is bit-generator
    state), so the rows are those of one ``rng.integers(0, size, (B, size))`` per group,
    bit for bit, while only a block of rows is ever in memory.
    """

    def __init__(self, n_prompts: int, n_boot: int, rng: np.random.Generator,
                 groups: Sequence | None):
        if n_boot < 1:
            raise ModelInputError(f"bootstrap replicates must be >= 1, got {n_boot}",
                                  field="bootstrap")
        self.n_boot, self.done = n_boot, 0
        if groups is None:
            parts = [np.arange(n_prompts)]
        else:
            g = np.asarray(groups)
            if g.size != n_prompts:
                raise ModelInputError(f"{g.size} group labels for {n_prompts} prompts",
                                      field="groups")
            labels = sorted(set(g.tolist()), key=str)
            parts = ([np.arange(n_prompts)] if len(labels) == 1
                     else [np.flatnonzero(g == lab) for lab in labels])
        self.groups = []  # (generator copy, first column, members or None when a run)
        a = 0
        step = max(1, (1 << 20) // max(n_prompts, 1))
        for members in parts:
            m = members.size
            if m == 0:  # no prompts: nothing drawn
                continue
            run = members[-1] - members[0] + 1 == m  # one run of prompts: a shift
            self.groups.append((copy.deepcopy(rng), a, m, None if run else members,
                                int(members[0])))
            for b0 in range(0, n_boot, step):  # advance the caller's generator
                rng.integers(0, m, size=(min(step, n_boot - b0), m))
            a += m

    def fill(self, out: np.ndarray) -> int:
        """Write the next ``len(out)`` rows (fewer at the end); returns how many."""
        c = min(out.shape[0], self.n_boot - self.done)
        for gen, a, m, members, first in self.groups:
            draw = gen.integers(0, m, size=(c, m))
            if members is None:
                np.add(draw, first, out=out[:c, a:a + m])
            else:
                out[:c, a:a + m] = members[draw]
        self.done += c
        return c


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
    arrs = {k: (np.atleast_2d(np.asarray(n, float)), np.atleast_2d(np.asarray(d, float)))
            for k, (n, d) in dict(stats).items()}
    Ps = {a[0].shape[1] for a in arrs.values()}
    if len(Ps) != 1:
        raise ModelInputError("statistics have different prompt counts", field="bootstrap")
    P = Ps.pop()
    draws = _IndexDraws(P, n_boot, rng, groups)
    # Distinct rows to sum: an input of one replicate once per distinct value (statistics
    # share inputs), one of R > 1 replicates per statistic (its own replicate draw r_b).
    blocks: list = []  # arrays stacked into V
    base: list = []  # first row of each block in V
    sel: list = []  # per summed quantity, the V row of each bootstrap replicate
    single: list = []  # (array, its sel position) of the one-replicate inputs

    def block(a):
        for i, b in enumerate(blocks):
            if b is a:
                return i
        blocks.append(a)
        base.append(base[-1] + blocks[-2].shape[0] if len(blocks) > 1 else 0)
        return len(blocks) - 1

    def slot(a, r):
        if r is None:
            for b, j in single:
                if b is a or (b.shape == a.shape and np.array_equal(b, a)):
                    return j
            sel.append(np.full(n_boot, base[block(a)], np.int64))
            single.append((a, len(sel) - 1))
        else:
            sel.append(base[block(a)] + r)
        return len(sel) - 1

    which = {}
    for k, (num, den) in arrs.items():
        R = num.shape[0]
        r = rng.integers(0, R, size=n_boot) if R > 1 else None
        which[k] = (slot(num, r), slot(den, r))
    V = np.ascontiguousarray(np.concatenate(blocks, axis=0) if len(blocks) > 1 else blocks[0])
    sums = np.empty((len(sel), n_boot))
    sel = np.ascontiguousarray(np.stack(sel))
    prog = _pairwise_program(P)
    idx = np.empty((max(1, min(n_boot, (1 << 19) // P)), P), np.int64)  # <= 4 MB of rows
    b0 = 0
    while b0 < n_boot:
        c = draws.fill(idx)
        _gather_sums(V, sel, idx, b0, c, prog, sums)
        b0 += c
    return {k: sums[i] / sums[j] for k, (i, j) in which.items()}


def _pairwise_program(n: int) -> np.ndarray:
    """NumPy's pairwise summation of a contiguous row of ``n`` float64, as a post-order
    program for :func:`_gather_sums`.

    Returns
    -------
    numpy.ndarray, int64, shape (K, 2)
        ``(lo, m)``: push the sum of ``row[lo:lo + m]`` (m <= 128: eight accumulators,
        combined ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the remainder
        in order; m < 8: in order from 0.0); ``(-1, 0)``: pop right and left, push left +
        right. NumPy (``pairwise_sum``, numpy/_core/src/umath/loops_utils.h.src) splits a
        row longer than 128 at ``n // 2`` rounded down to a multiple of 8.
    """
    ops: list = []

    def rec(lo: int, m: int) -> None:
        if m <= 128:
            ops.append((lo, m))
            return
        h = m // 2
        h -= h % 8
        rec(lo, h)
        rec(lo + h, m - h)
        ops.append((-1, 0))

    rec(0, int(n))
    return np.array(ops, np.int64).reshape(-1, 2)


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
