r"""Summaries of a Normal mixture (the exact engine's posterior of a contrast).

The exact engine's posterior of a linear contrast of the fixed effects is a mixture of
Normals over its grid points, :math:`\sum_g w_g N(m_g, v_g)`. This module gives its CDF,
quantiles, HDI and the ROPE probabilities (:func:`mixture_summary`), and the HDI of a
discrete distribution on a grid (:func:`_hdi_from_discrete`, for the noise scales).
"""

from __future__ import annotations

import math

import numpy as np

from models.stats import special
from models.stats.tps_model import DeltaSummary

__all__ = ["mixture_cdf", "mixture_hdi", "mixture_quantile", "mixture_summary"]


def _hdi_from_discrete(x, w, prob):
    """Shortest interval holding ``prob`` of a discrete distribution on sorted x."""
    c = np.concatenate([[0.0], np.cumsum(w)])
    best = (float(x[0]), float(x[-1]))
    width = np.inf
    j = 0
    for i in range(x.size):
        while j < x.size and c[j + 1] - c[i] < prob:
            j += 1
        if j >= x.size:
            break
        if x[j] - x[i] < width:
            width = x[j] - x[i]
            best = (float(x[i]), float(x[j]))
    return best


def mixture_cdf(x, w, m, v):
    """CDF of a Normal mixture at points x (any shape); components shape (G,)."""
    x = np.asarray(x, float)
    sd = np.sqrt(v)
    return np.sum(w * special.ndtr((x[..., None] - m) / sd), axis=-1)


def mixture_summary(w, m, v, rope: float, hdi_prob: float = 0.95) -> DeltaSummary:
    """Mean, SD, HDI and ROPE probabilities of a Normal mixture sum_g w_g N(m_g, v_g).

    The HDI is the shortest interval of mass ``hdi_prob``, found on the inverse CDF
    (the mixture is unimodal in practice; the shortest interval is exact either way up to
    the 4,001-point quantile grid refined by bisection).
    """
    w = np.asarray(w, float)
    keep = w > 1e-14 * w.max()
    w, m, v = w[keep] / w[keep].sum(), m[keep], v[keep]
    mean = float(np.sum(w * m))
    var = float(np.sum(w * (v + m * m)) - mean * mean)
    sd = math.sqrt(max(var, 0.0))
    s = np.sqrt(v)
    clip = lambda p: float(min(max(p, 0.0), 1.0))  # noqa: E731  (sums can round past 1)
    p_gt0 = clip(np.sum(w * special.ndtr(m / s)))
    p_gt = clip(np.sum(w * special.ndtr((m - rope) / s)))
    p_lt = clip(np.sum(w * special.ndtr((-rope - m) / s)))
    p_in = max(0.0, 1.0 - p_gt - p_lt)
    lo, hi = mixture_hdi(w, m, v, hdi_prob)
    return DeltaSummary(mean, sd, lo, hi, p_gt0, p_gt, p_lt, p_in, rope, hdi_prob)


def _prune(w, m, v, keep_mass=1.0 - 1e-9):
    """Drop the lightest components holding at most 1e-9 of the mass (renormalised)."""
    order = np.argsort(w)[::-1]
    c = np.cumsum(w[order])
    n = int(np.searchsorted(c, keep_mass * c[-1])) + 1
    idx = order[:n]
    ww = w[idx]
    return ww / ww.sum(), m[idx], v[idx]


def _cdf_table(w, m, v, n_points=1025):
    w, m, v = _prune(np.asarray(w, float), np.asarray(m, float), np.asarray(v, float))
    sd = np.sqrt(v)
    # ends of the table: the 1e-7 and 1 - 1e-7 quantiles (bisection), so that heavy-tailed
    # mixtures (wide components of small weight) do not dilute the table's resolution
    lo = np.full(2, np.min(m - 9 * sd))
    hi = np.full(2, np.max(m + 9 * sd))
    target = np.array([1e-7, 1.0 - 1e-7])
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        below = mixture_cdf(mid, w, m, v) < target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    x = np.linspace(lo[0], hi[1], n_points)
    F = mixture_cdf(x, w, m, v)
    return x, F


def mixture_quantile(q, w, m, v):
    """Quantiles of a Normal mixture, by interpolation in a 1,025-point CDF table.

    The table spans the mixture's 1e-7 .. 1 - 1e-7 quantiles; for q inside that range the
    interpolation error is far below 1e-3 of the mixture's SD.
    """
    x, F = _cdf_table(w, m, v)
    return np.interp(np.atleast_1d(np.asarray(q, float)), F, x)


def _pdf_and_slope(x, w, m, v):
    sd = np.sqrt(v)
    z = (np.asarray(x, float)[..., None] - m) / sd
    phi = np.exp(-0.5 * z * z) / (np.sqrt(2 * np.pi) * sd)
    return np.sum(w * phi, -1), np.sum(w * phi * (-z / sd), -1)


def mixture_hdi(w, m, v, prob=0.95):
    """Shortest interval of mass ``prob`` of a Normal mixture.

    Newton's method solves the HDI conditions F(hi) - F(lo) = prob, f(hi) = f(lo) exactly
    (to ~1e-12 of the interval's width) for a unimodal mixture, starting from the Normal
    approximation mean -/+ z sd (converges in 4-8 steps on verdicts' posteriors). If that
    does not converge, a 257-point CDF table gives the starting interval (min over a of
    Q(a+prob) - Q(a)) and Newton runs again; if that fails too, the table's interval is
    returned. Both starts reach the same root (within 1e-14 of the width on the verdicts of
    ``tests/planner/decide/test_verdict_hdi.py``); the first costs ~20 CDF evaluations instead of
    ~400, most of a verdict's time on a table.
    """
    w, m, v = _prune(np.asarray(w, float), np.asarray(m, float), np.asarray(v, float))
    mean = float(np.sum(w * m))
    sd = math.sqrt(max(float(np.sum(w * (v + m * m))) - mean * mean, 0.0))
    z = special.ndtri(0.5 + 0.5 * prob)
    if sd > 0:
        hdi = _hdi_newton(w, m, v, prob, mean - z * sd, mean + z * sd, max_iter=40)
        if hdi is not None:
            return hdi
    x, F = _cdf_table(w, m, v, n_points=257)
    a = np.linspace(0.0, 1.0 - prob, 2001)[1:-1]
    lo_t = np.interp(a, F, x)
    hi_t = np.interp(a + prob, F, x)
    k = int(np.argmin(hi_t - lo_t))
    hdi = _hdi_newton(w, m, v, prob, float(lo_t[k]), float(hi_t[k]), max_iter=20)
    return hdi if hdi is not None else (float(lo_t[k]), float(hi_t[k]))


def _hdi_newton(w, m, v, prob, lo, hi, max_iter):
    """Newton's method on F(hi) - F(lo) = prob, f(hi) = f(lo) from (lo, hi); None if the
    result is not finite or misses ``prob`` by more than 1e-6."""
    for _ in range(max_iter):
        (f_lo, f_hi), (d_lo, d_hi) = _pdf_and_slope([lo, hi], w, m, v)
        F_lo, F_hi = mixture_cdf(np.array([lo, hi]), w, m, v)
        r1, r2 = F_hi - F_lo - prob, f_hi - f_lo
        det = (-f_lo) * d_hi - f_hi * (-d_lo)
        if det == 0 or not np.isfinite(det):
            break
        dlo = (r1 * d_hi - f_hi * r2) / det
        dhi = ((-f_lo) * r2 - (-d_lo) * r1) / det
        step = max(abs(dlo), abs(dhi))
        scale = hi - lo
        if step > 0.2 * scale:  # keep Newton local
            dlo, dhi = dlo * 0.2 * scale / step, dhi * 0.2 * scale / step
        lo, hi = lo - dlo, hi - dhi
        if step < 1e-12 * scale:
            break
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi) or abs(
            float(mixture_cdf(hi, w, m, v) - mixture_cdf(lo, w, m, v)) - prob) > 1e-6:
        return None
    return float(lo), float(hi)
