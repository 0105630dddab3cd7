r"""The few SciPy functions a verdict needs, restated so a verdict need not import SciPy.

Why: importing :mod:`scipy.special` costs about 0.2-0.25 s of CPU (SciPy 1.17: its
array-API layer imports ``numpy.f2py``, ``numpy.testing``, ``numpy.ma`` and more), and
:mod:`scipy.stats` 0.5-1 s, against a target of 0.5 s for a whole ``planner verdict``
process and about 4 s for a ``planner budget``. Code off those paths (calibration, MCMC,
planning) uses SciPy itself. Each function is built on the standard library's C
implementations (``math.erfc``, ``math.lgamma``, ``statistics.NormalDist``) or a compiled
sum, and is checked against SciPy in ``tests/models/stats/test_special.py`` to the stated
tolerance. The tolerances are near the double-precision rounding each algorithm allows
(the results are reported to four significant digits at most, and compared between runs
at 1e-9): agreement, not the same bits.

Contents (tolerance against SciPy, relative)
--------------------------------------------
ndtr(z)
    Standard Normal CDF :math:`\Phi(z) = \tfrac12\operatorname{erfc}(-z/\sqrt2)`,
    elementwise; 1e-14 above z = -8, 5e-13 down to z = -37 (``scipy.special.ndtr``).
ndtri(p)
    Its inverse (``statistics.NormalDist().inv_cdf``, Wichura's AS 241); 1e-14.
t_sf(t, df)
    Upper tail of Student's t, :math:`P(T > t)`, by the regularised incomplete beta
    function; 2e-12 for df <= 2e4, 1e-10 up to 1e6 (``scipy.special.stdtr``).
logsumexp(a, axis)
    :math:`\log\sum e^{a}` along an axis, shifted by the maximum; 1e-14.
mean_ndtr_ratio(x, scales)
    :math:`\frac1S\sum_s \frac1B\sum_j \Phi(x_j / s)`, by a compiled loop (the ~5e5 terms
    of a draft's P(one run beats the baseline)); the same float as NumPy's means of
    :func:`ndtr`.
gaussian_kde_1d(data, xs)
    ``scipy.stats.gaussian_kde(data)(xs)`` in one dimension (the budget's Δ curve); 1e-12.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from models.kernels.special import kde_sum, ndtr_into, ndtr_ratio_rows

__all__ = ["ndtr", "ndtri", "t_sf", "logsumexp", "mean_ndtr_ratio", "gaussian_kde_1d"]

_SQRT1_2 = math.sqrt(0.5)
_ERFC = np.frompyfunc(math.erfc, 1, 1)


def ndtr(z) -> np.ndarray:
    r"""Standard Normal CDF, elementwise: :math:`\Phi(z) = \tfrac12\,\mathrm{erfc}(-z/\sqrt2)`.

    Parameters
    ----------
    z : array_like
        Any shape; NaN gives NaN, :math:`\pm\infty` give 1 and 0.

    Returns
    -------
    ndarray (float64), the shape of ``z``; a 0-d array for a scalar.

    Notes
    -----
    ``erfc`` of a positive argument has full relative accuracy, so the lower tail keeps it:
    within 1e-14 of ``scipy.special.ndtr`` (relative) above z = -8 and 5e-13 down to z = -37,
    where both round :math:`z/\sqrt2`. Cost about 0.2 us per element (one C call each) up
    to :data:`NDTR_COMPILED_MIN` elements; a larger array (the half-million-point posterior
    of a table with sessions and cold runs), or any array once the C calls have cost about
    what the switch costs (:func:`_compiled_pays`), runs the same operations in a compiled loop
    (:func:`models.kernels.special.ndtr_into`, numba; about 0.02 us per element), the same
    values bit for bit.
    """
    z = np.asarray(z, dtype=float)
    if _compiled_pays(z.size):
        out = np.empty(z.shape)
        ndtr_into(np.ascontiguousarray(z).reshape(-1), out.reshape(-1))
        return out
    return 0.5 * np.asarray(_ERFC(-z * _SQRT1_2), dtype=float)


#: Elements from which :func:`ndtr` runs its compiled loop: about 50 ms of the C calls, so
#: importing numba and loading the cached kernel (~0.3 s once) pays for itself on the
#: arrays that reach it, and a verdict on a plain table (arrays of ~1e4 elements) never
#: imports numba (``tests/planner/decide/test_verdict_speed.py``).
NDTR_COMPILED_MIN = 1 << 18
#: Elements the C calls may take in a process where numba is already up before
#: :func:`ndtr` switches to its compiled loop for good: about 7 ms of C calls, the price of
#: loading that cached kernel then (~5 ms). The rule of renting until the rent paid equals
#: the price of buying: never more than twice the cheaper choice, whatever the process does
#: next (the sessions A/A study: 1,800 arrays of ~30,000 elements, 11.6 s of C calls).
NDTR_WARM_BUDGET = 1 << 15
#: The same rule where numba is not up yet: its import and set-up (~0.7 s) against ~0.84 s of
#: C calls. A verdict's whole process calls :func:`ndtr` on 0.1-0.2 million elements (the
#: quick forms, the README table), 20x below: those never import numba for it.
NDTR_COLD_BUDGET = 1 << 22
#: Elements the C calls took in this process: [while numba was up, in all].
_SLOW_ELEMENTS = [0, 0]


def _compiled_pays(n: int) -> bool:
    """Whether :func:`ndtr` of ``n`` elements runs the compiled loop (the same bits either
    way): always from :data:`NDTR_COMPILED_MIN` elements; below it once the C calls have
    cost about what switching costs: :data:`NDTR_WARM_BUDGET` elements while numba is up in
    this process (``models.kernels._jit.numba_up``), :data:`NDTR_COLD_BUDGET` in all."""
    if n >= NDTR_COMPILED_MIN:
        return True
    if _SLOW_ELEMENTS[0] > NDTR_WARM_BUDGET or _SLOW_ELEMENTS[1] > NDTR_COLD_BUDGET:
        return True
    from models.kernels._jit import numba_up

    if numba_up():
        _SLOW_ELEMENTS[0] += n
    _SLOW_ELEMENTS[1] += n
    return False


def ndtri(p: float) -> float:
    """Inverse of :func:`ndtr` for a scalar probability 0 < p < 1.

    Raises
    ------
    ValueError
        p outside (0, 1) (from :class:`statistics.NormalDist`).
    """
    return NormalDist().inv_cdf(float(p))


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of :math:`I_x(a, b)` (DLMF 8.17.22), by the modified Lentz method.

    Converges quickly for ``x < (a + 1) / (a + b + 2)``; returns NaN if 10,000 terms do not
    reach 1e-15.
    """
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_001):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            step = c * d
            h *= step
        if abs(step - 1.0) < 1e-15:
            return h
    return math.nan


def _stirling_tail(x: float) -> float:
    r""":math:`\log\Gamma(x) - [(x - \tfrac12)\log x - x + \log\sqrt{2\pi}]` for x >= 20
    (Stirling's series to :math:`x^{-9}`; the next term is below 2e-17 there, DLMF 5.11.1)."""
    r = 1.0 / (x * x)
    return (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r / 1188)))) / x


def _lbeta(a: float, b: float) -> float:
    r""":math:`\log B(a, b)`; with a large parameter by Stirling's series, because
    ``lgamma(a + b) - lgamma(a)`` loses about |lgamma(a)| x 1e-16 to cancellation."""
    if a < b:
        a, b = b, a
    if a < 20.0:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    # lgamma(a) - lgamma(a + b) = -b log a - (a + b - 1/2) log1p(b / a) + b + s(a) - s(a + b)
    return (math.lgamma(b) - b * math.log(a) - (a + b - 0.5) * math.log1p(b / a) + b
            + _stirling_tail(a) - _stirling_tail(a + b))


def _betainc(a: float, b: float, x: float, y: float, log_x: float, log_y: float) -> float:
    r"""Regularised incomplete beta :math:`I_x(a, b)` for a, b > 0 and 0 < x < 1.

    ``y`` is :math:`1 - x` and ``log_x``, ``log_y`` their logarithms, each computed by the
    caller without cancellation (for Student's t, :math:`x = \nu/(\nu + t^2)` is close to 1
    when :math:`t^2 \ll \nu`, and ``a * log(x)`` would amplify x's rounding a-fold).
    """
    front = math.exp(a * log_x + b * log_y - _lbeta(a, b))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, y) / b


def t_sf(t: float, df: float) -> float:
    r"""Upper tail of Student's t: :math:`P(T_{\nu} > t)`, for a scalar t and df > 0.

    :math:`P(T > t) = \tfrac12 I_{\nu/(\nu+t^2)}(\nu/2, 1/2)` for t > 0 (DLMF 8.17 and the
    t-distribution's relation to the beta); :math:`P(T > -t) = 1 - P(T > t)`. Agrees with
    ``scipy.special.stdtr(df, -t)`` within 2e-12 relative for df <= 2e4 and 1e-10 up to 1e6
    (tested); for df beyond 1e7 SciPy is asked instead.

    Parameters
    ----------
    t : float
        The statistic; NaN gives NaN.
    df : float
        Degrees of freedom, > 0 (Welch's df is real-valued); otherwise NaN.

    Returns
    -------
    float in [0, 1].
    """
    t, df = float(t), float(df)
    if math.isnan(t) or math.isnan(df) or df <= 0:
        return math.nan
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    if t == 0.0:
        return 0.5
    t2 = t * t
    x, y = df / (df + t2), t2 / (df + t2)
    log_x = -math.log1p(t2 / df)
    log_y = 2.0 * math.log(abs(t)) - math.log(df + t2)
    tail = 0.5 * _betainc(0.5 * df, 0.5, x, y, log_x, log_y) if df < 1e7 else math.nan
    if math.isnan(tail):   # pragma: no cover - df far beyond any table of runs
        from scipy.special import stdtr

        return float(stdtr(df, -t))
    return tail if t > 0 else 1.0 - tail


def logsumexp(a, axis: int = -1) -> np.ndarray:
    r""":math:`\log\sum_j e^{a_j}` along ``axis``, shifted by the maximum (no overflow).

    Parameters
    ----------
    a : array_like
        Finite values or -inf (a slice of all -inf gives -inf).
    axis : int

    Returns
    -------
    ndarray, ``a``'s shape without ``axis``.
    """
    a = np.asarray(a, dtype=float)
    mx = np.max(a, axis=axis, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - mx), axis=axis, keepdims=True)) + mx
    return np.squeeze(out, axis=axis)


#: Elements of the work block of :func:`mean_ndtr_ratio` (8 MiB of float64).
_BLOCK = 1 << 20


def mean_ndtr_ratio(x, scales) -> float:
    r"""Mean over scales of the mean Normal CDF of ``x / s``:
    :math:`\frac1S\sum_{i}\frac1B\sum_j \Phi(x_j / s_i)`.

    The value of ``float(np.mean([ndtr(x / s).mean() for s in scales]))``, bit for bit
    (the same elementwise operations in a compiled loop, then NumPy's own pairwise means
    row by row), at ~5 ns an element instead of ~0.2 us. Memory is a block of at most
    :data:`_BLOCK` elements, whatever ``S * B``.

    Parameters
    ----------
    x : array_like, shape (B,)
        Values (e.g. TPS gains), B >= 1.
    scales : array_like, shape (S,)
        Positive divisors (e.g. sd of a one-run difference, TPS), S >= 1.

    Returns
    -------
    float

    Notes
    -----
    The loop is :func:`models.kernels.special.ndtr_ratio_rows`, compiled by numba on its
    first call.
    """
    x = np.ascontiguousarray(x, dtype=np.float64).ravel()
    scales = np.ascontiguousarray(scales, dtype=np.float64).ravel()
    rows = max(1, _BLOCK // max(x.size, 1))
    means = np.empty(scales.size)
    buf = np.empty((min(rows, scales.size), x.size))
    for a in range(0, scales.size, rows):
        blk = scales[a:a + rows]
        out = buf[:blk.size]
        ndtr_ratio_rows(x, blk, out)
        for i in range(blk.size):  # 1-D means: NumPy's pairwise sum, as ndtr(...).mean()
            means[a + i] = out[i].mean()
    return float(means.mean())


def gaussian_kde_1d(data, xs) -> np.ndarray:
    r"""Gaussian kernel density estimate of 1-D data at ``xs``, with Scott's bandwidth:
    what ``scipy.stats.gaussian_kde(data)(xs)`` computes.

    :math:`\hat f(x) = \frac{1}{n h}\sum_i \varphi\big((x - d_i) / h\big)`, with
    :math:`h = s\, n^{-1/5}` and :math:`s` the sample standard deviation (``ddof=1``),
    Scott's rule as SciPy states it for equal weights.

    Parameters
    ----------
    data : array_like, shape (n,)
        Sample (n >= 2, not all equal).
    xs : array_like, shape (m,)
        Evaluation points.

    Returns
    -------
    ndarray, shape (m,)
        Density at ``xs`` (per unit of ``data``).

    Raises
    ------
    ValueError
        The data have no spread (SciPy raises ``LinAlgError`` there).

    Notes
    -----
    Restated because ``scipy.stats`` costs 0.5-1 s of CPU to import (a tenth of a
    ``planner budget``). The sum runs in :func:`models.kernels.special.kde_sum`, which
    releases the GIL (the budget sizes comparisons on threads). It agrees with SciPy to
    1e-12 relative where the density is above 1e-6 of its peak (the plotted curve; tested
    in ``tests/models/stats/test_special.py``): the same terms, summed in another order
    and with :math:`(x - d_i) / h` divided rather than multiplied by a reciprocal, differ
    only in the last bits of each term.
    """
    d = np.ascontiguousarray(data, dtype=np.float64).ravel()
    x = np.ascontiguousarray(xs, dtype=np.float64).ravel()
    n = d.size
    sd = float(np.std(d, ddof=1)) if n > 1 else 0.0
    if not sd > 0:
        raise ValueError("gaussian_kde_1d: the data have no spread")
    h = sd * n ** (-1.0 / 5.0)
    return kde_sum(d, x, h)
