r"""Noise priors for the hierarchical TPS model.

TPS is modelled on the log scale, so every noise scale here is a *relative* standard
deviation (0.008 = 0.8 % of TPS). Two components:

* ``tau`` (:math:`\tau`): between instances (an HF job allocation, a local GPU/session);
* ``sigma`` (:math:`\sigma`): run to run on one instance.

Each component has an independent prior on its scale, one of

* ``inv_chi2`` (df :math:`\nu`, scale :math:`s_0`): :math:`\sigma^2 \sim
  \text{Scaled-Inv-}\chi^2(\nu, s_0^2) = \text{InvGamma}(\nu/2,\ \nu s_0^2/2)`. This is the
  posterior of a variance after :math:`\nu` degrees of freedom of repeated runs with pooled
  sample SD :math:`s_0` under the reference prior :math:`p(\sigma^2) \propto 1/\sigma^2`;
  it is how summary measurements (N repeats, sample SD) become priors.
* ``half_normal`` (scale): weakly informative, for when nothing is known.

Both engines (exact grid and PyMC) use these densities, so they fit the same model.
"""

from __future__ import annotations

import functools

import json
import math
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

__all__ = [
    "ScalePrior", "NoisePrior", "WEAK", "prior_from_summary", "fit_inv_chi2_to_log_moments",
    "platform_key", "platform_prior", "known_platforms", "fit_scale_population",
    "scale_population_nll",
    "PopulationPrior", "t_logpdf", "REF_LOG_SIGMA",
]

_KINDS = ("inv_chi2", "half_normal")


@dataclass(frozen=True)
class ScalePrior:
    """Prior on one noise scale (relative SD on the log-TPS scale).

    Parameters
    ----------
    kind : {"inv_chi2", "half_normal"}
    scale : float
        :math:`s_0` for ``inv_chi2``; the half-normal scale otherwise. Relative (0.01 = 1 %).
    df : float
        Degrees of freedom :math:`\\nu` (``inv_chi2`` only).
    """

    kind: str
    scale: float
    df: float = 0.0

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"unknown prior kind {self.kind!r}; expected one of {_KINDS}")
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"prior scale must be > 0, got {self.scale!r}")
        if self.kind == "inv_chi2" and not (math.isfinite(self.df) and self.df > 0):
            raise ValueError(f"inv_chi2 prior needs df > 0, got {self.df!r}")

    def logpdf(self, s: np.ndarray) -> np.ndarray:
        """Log density of the *scale* s (> 0), shape of ``s``.

        For finite s > 0 this is ``scipy.stats.halfnorm.logpdf`` / ``invgamma.logpdf``
        written out, with ``math.lgamma`` for SciPy's ``gammaln`` (agreement within 1e-15,
        relative and absolute times df: tests/models/stats/test_noise_density.py), because
        importing scipy.stats costs about a second of CPU and scipy.special a quarter, most of
        a quick ``planner verdict``. Other inputs go to scipy.stats itself.
        """
        s = np.asarray(s, dtype=float)
        if not (s.size and np.all(np.isfinite(s)) and np.all(s > 0)):
            return self._logpdf_stats(s)
        if self.kind == "half_normal":
            x = s / self.scale
            return (0.5 * np.log(2.0 / np.pi) - x * x / 2.0 - np.log(self.scale))[()]
        a = self.df / 2.0
        b = self.df * self.scale**2 / 2.0
        # p(s) = p_{InvGamma}(s^2) * 2 s
        x = s**2 / b
        with np.errstate(divide="ignore", over="ignore"):
            lp = -(a + 1) * np.log(x) - math.lgamma(a) - 1.0 / x - np.log(b)
        return (lp + np.log(2.0 * s))[()]

    def _logpdf_stats(self, s: np.ndarray) -> np.ndarray:
        """:meth:`logpdf` by scipy.stats (edge inputs: s <= 0, non-finite, empty)."""
        from scipy import stats

        if self.kind == "half_normal":
            return stats.halfnorm.logpdf(s, scale=self.scale)
        a = self.df / 2.0
        b = self.df * self.scale**2 / 2.0
        return stats.invgamma.logpdf(s**2, a, scale=b) + np.log(2.0 * s)

    def ppf(self, q: float | np.ndarray) -> np.ndarray:
        """Quantiles of the scale.

        For 0 < q < 1, ``scipy.stats.halfnorm.ppf`` / ``invgamma.ppf`` written out with
        :mod:`scipy.special` (within 1e-14 relative of scipy.stats); other q go to
        scipy.stats. The few scalar quantiles of the embedded platform priors the planners ask
        for (the assurance grid's 1e-4 and 1 - 1e-4, the median) are read from
        ``models/data/scale_quantiles.json``, those same values stored (checked against
        scipy.special to 1e-14 in the tests), so a planner run on a platform prior does not
        import scipy.special (~0.25 s of CPU).
        """
        q = np.asarray(q, dtype=float)
        if q.ndim == 0:
            got = _stored_ppf(self, float(q))
            if got is not None:
                return np.float64(got)[()]
        from scipy import special

        if not (q.size and np.all(q > 0) and np.all(q < 1)):
            return self._ppf_stats(q)
        if self.kind == "half_normal":
            return (special.ndtri((1 + q) / 2.0) * self.scale + 0.0)[()]
        b = self.df * self.scale**2 / 2.0
        return np.sqrt(1.0 / special.gammainccinv(self.df / 2.0, q) * b + 0.0)[()]

    def _ppf_stats(self, q: np.ndarray) -> np.ndarray:
        """:meth:`ppf` by scipy.stats (q outside (0, 1), NaN or empty)."""
        from scipy import stats

        if self.kind == "half_normal":
            return stats.halfnorm.ppf(q, scale=self.scale)
        return np.sqrt(stats.invgamma.ppf(q, self.df / 2.0, scale=self.df * self.scale**2 / 2.0))

    def rvs(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Draws of the scale, shape (size,)."""
        if self.kind == "half_normal":
            return np.abs(rng.normal(0.0, self.scale, size))
        return np.sqrt(self.df * self.scale**2 / rng.chisquare(self.df, size))

    def mean_variance(self) -> float:
        """Prior mean of the variance (inf for inv_chi2 with df <= 2)."""
        if self.kind == "half_normal":
            return self.scale**2
        return self.df * self.scale**2 / (self.df - 2.0) if self.df > 2 else math.inf

    def median(self) -> float:
        return float(self.ppf(0.5))

    def to_dict(self) -> dict:
        d = {"kind": self.kind, "scale": self.scale}
        if self.kind == "inv_chi2":
            d["df"] = self.df
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ScalePrior":
        return cls(kind=d["kind"], scale=float(d["scale"]), df=float(d.get("df", 0.0)))

    def describe(self) -> str:
        if self.kind == "half_normal":
            return f"HalfNormal({100 * self.scale:.3g}%)"
        return f"Scaled-Inv-chi2(df={self.df:.3g}, scale={100 * self.scale:.3g}%)"


@dataclass(frozen=True)
class NoisePrior:
    """Joint (independent) prior on the instance and run noise scales.

    Parameters
    ----------
    tau : ScalePrior
        Between-instance scale (relative).
    sigma : ScalePrior
        Run-to-run scale on one instance (relative).
    name : str
        Label shown in reports.
    source : str
        Where the numbers come from.
    """

    tau: ScalePrior
    sigma: ScalePrior
    name: str = "custom"
    source: str = ""
    extra: dict = field(default_factory=dict, compare=False)
    #: A joint prior of (tau, sigma) (:class:`models.stats.population.PopulationPrior`, or any
    #: object with ``logpdf(tau, sigma)``, ``rvs(n, rng)`` and ``to_dict()``) that replaces
    #: the independent ``tau`` / ``sigma`` densities in both engines; ``tau`` and ``sigma``
    #: are then its marginals, for code that reads one scale at a time.
    joint: object | None = field(default=None, compare=False)

    def logpdf_joint(self, tau: np.ndarray, sigma: np.ndarray) -> np.ndarray:
        """Log prior density of the scale pair (tau, sigma) (relative, > 0), broadcast shape.

        The independent sum ``tau.logpdf(tau) + sigma.logpdf(sigma)`` unless a ``joint``
        prior is set (the population prior of an unknown platform), whose density it is.
        """
        if self.joint is not None:
            return self.joint.logpdf(tau, sigma)
        return self.tau.logpdf(tau) + self.sigma.logpdf(sigma)

    def session_logw(self, nodes: np.ndarray, lw: np.ndarray, sigma: np.ndarray) -> np.ndarray:
        """Log weights of the session-SD quadrature nodes given the run scale, shape
        (n, G) for ``nodes`` (n,) and ``sigma`` (G,).

        The session SD's prior is the population's ratio of session to run noise
        (:class:`PopulationPrior`: ``log(omega/sigma) | sigma`` its t conditional; this
        prior's ``joint`` or the shipped fit), evaluated at the nodes and normalised over them
        for each sigma: session offsets scale with the run noise and have heavy tails (issue
        20), where the fixed half-normal ``lw`` (the nodes' default weights, used when no
        population fit is shipped) put a 1 % session SD 2 SD out whatever the runs showed.
        """
        pp = self.joint if self.joint is not None else _shipped_population()
        if pp is None:
            return np.broadcast_to(np.asarray(lw)[:, None], (len(nodes), np.size(sigma)))
        ls = np.log(np.asarray(sigma, float))[None, :]
        lr = np.log(np.asarray(nodes, float))[:, None] - ls
        out = pp.ratio_logpdf(lr, ls)
        m = out.max(0, keepdims=True)
        return out - (m + np.log(np.exp(out - m).sum(0, keepdims=True)))

    def to_dict(self) -> dict:
        return {"name": self.name, "source": self.source, "tau": self.tau.to_dict(),
                "sigma": self.sigma.to_dict(), **({"extra": self.extra} if self.extra else {}),
                **({"joint": {"kind": "population", **self.joint.to_dict()}}
                   if self.joint is not None else {})}

    @classmethod
    def from_dict(cls, d: dict) -> "NoisePrior":
        joint = None
        if isinstance(d.get("joint"), dict):
            joint = PopulationPrior.from_dict(d["joint"])
        return cls(tau=ScalePrior.from_dict(d["tau"]), sigma=ScalePrior.from_dict(d["sigma"]),
                   name=d.get("name", "custom"), source=d.get("source", ""),
                   extra=d.get("extra", {}), joint=joint)

    def total_sd_draws(self, n: int = 20000) -> np.ndarray:
        """Seeded draws of sqrt(tau^2 + sigma^2), relative: the noise of one run on a new
        instance, tau and sigma drawn independently from their priors. Shape (n,)."""
        rng = np.random.default_rng(0)
        if self.joint is not None:
            t, s = self.joint.rvs(n, rng)
        else:
            t = self.tau.rvs(n, rng)
            s = self.sigma.rvs(n, rng)
        return np.sqrt(t**2 + s**2)

    def total_sd_median(self) -> float:
        """Median of :meth:`total_sd_draws` (sqrt(tau^2 + sigma^2) by Monte Carlo), relative."""
        return float(np.median(self.total_sd_draws()))


#: Weakly informative default when neither a platform nor a fitted prior is known: scales of
#: a few percent are possible, tenths of a percent typical (see docs/model.md).
WEAK = NoisePrior(tau=ScalePrior("half_normal", 0.02), sigma=ScalePrior("half_normal", 0.02),
                  name="weak", source="weakly informative HalfNormal(2%) on both scales")


def prior_from_summary(n: int, sd: float, mean: float | None = None) -> ScalePrior:
    """Inv-chi2 scale prior from one summary measurement.

    Parameters
    ----------
    n : int
        Number of repeats (>= 2).
    sd : float
        Sample SD; in TPS if ``mean`` is given (then divided by ``mean``), else relative.
    mean : float, optional
        Mean TPS of the repeats.

    Examples
    --------
    The published N = 4 repeats of one submission on HF a10g-small (mean 307.08, sd 1.16):
    ``prior_from_summary(4, 1.16, 307.08)`` is Scaled-Inv-chi2(3, 0.378 %).
    """
    if n < 2:
        raise ValueError("need n >= 2 repeats")
    rel = sd / mean if mean else sd
    return ScalePrior("inv_chi2", scale=float(rel), df=float(n - 1))


def fit_inv_chi2_to_log_moments(mean_log_var: float, var_log_var: float) -> ScalePrior:
    """Moment-match a Scaled-Inv-chi2 to the posterior mean/variance of log(variance).

    For :math:`\\sigma^2 \\sim` Scaled-Inv-chi2(:math:`\\nu, s_0^2`):
    :math:`E[\\log\\sigma^2] = \\log(\\nu s_0^2/2) - \\psi(\\nu/2)` and
    :math:`\\mathrm{Var}[\\log\\sigma^2] = \\psi'(\\nu/2)`. Used to turn a posterior of
    a log-variance back into a prior.

    Parameters
    ----------
    mean_log_var : float
        Posterior mean of :math:`\\log\\sigma^2` (:math:`\\sigma` relative, log-TPS scale).
    var_log_var : float
        Its posterior variance; values below 1e-8 are raised to 1e-8.

    Returns
    -------
    ScalePrior
        ``inv_chi2`` with the matched (df, scale). When no df in (0.001, 1e7) matches (a
        variance below about 2e-7, or above about 4e6), df is 1e7: the scale is taken as
        known.
    """
    from scipy import optimize, special

    v = max(var_log_var, 1e-8)
    # psi'(x) decreases from inf to 0; solve psi'(nu/2) = v
    f = lambda nu: special.polygamma(1, nu / 2.0) - v  # noqa: E731
    nu = optimize.brentq(f, 1e-3, 1e7) if f(1e7) < 0 < f(1e-3) else 1e7
    s0sq = 2.0 * math.exp(mean_log_var + special.digamma(nu / 2.0)) / nu
    return ScalePrior("inv_chi2", scale=math.sqrt(s0sq), df=float(nu))


def platform_key(name: str | None) -> str | None:
    """The cell of the embedded noise priors (``models/data/noise_priors.json``) a name
    denotes, letter case, ``_`` for ``-`` and surrounding blanks folded (``HF_A10G_Small`` is
    ``hf-a10g-small``).

    Other spellings of a platform (``hf``, ``official``), its price and which cell describes
    it are the planner's platforms registry (``planner.io.platforms``); the models know only
    the cells.

    Parameters
    ----------
    name : str or None
        A cell name as a user or a table spells it.

    Returns
    -------
    str or None
        The cell's key, or None when no cell has that name (or it is empty).
    """
    if not name:
        return None
    key = name.strip().lower().replace("_", "-")
    return key if key in _cells() else None


@functools.lru_cache(maxsize=1)
def _cells() -> frozenset:
    """The cell names of the embedded noise priors (read once)."""
    return frozenset(_load_embedded())


_PPF_TABLE: dict | None = None


def _stored_ppf(sp: "ScalePrior", q: float) -> float | None:
    """``sp.ppf(q)`` from ``models/data/scale_quantiles.json`` when stored (exact match of
    kind, df, scale and q), else None."""
    global _PPF_TABLE
    if _PPF_TABLE is None:
        text = resources.files("models").joinpath("data/scale_quantiles.json").read_text("utf-8")
        _PPF_TABLE = {(r["kind"], r["df"], r["scale"], r["q"]): r["value"]
                      for r in json.loads(text)["rows"]}
    return _PPF_TABLE.get((sp.kind, sp.df if sp.kind == "inv_chi2" else None, sp.scale, q))


@functools.lru_cache(maxsize=1)
def _shipped_population() -> "PopulationPrior | None":
    """The shipped population fit (``models/data/population_prior.json``), or None."""
    try:
        text = resources.files("models").joinpath("data/population_prior.json").read_text(
            "utf-8")
    except FileNotFoundError:
        return None
    return PopulationPrior.from_dict(json.loads(text)["prior"])


def _load_embedded() -> dict:
    text = resources.files("models").joinpath("data/noise_priors.json").read_text("utf-8")
    return json.loads(text)


def platform_prior(platform: str) -> NoisePrior:
    """The embedded default noise prior of a cell (a platform's measured noise).

    Parameters
    ----------
    platform : str
        A cell of ``models/data/noise_priors.json``: ``hf-a10g-small``, ``local-a10g``, or
        ``published-n4`` (only the published N = 4 repeats as the prior, on the total scale);
        letter case is ignored (:func:`platform_key`).

    Raises
    ------
    KeyError
        No such cell.

    Notes
    -----
    Sources are in ``models/data/noise_priors.json`` (``source`` fields) and docs/model.md.
    """
    key = platform_key(platform)
    if key is None:
        raise KeyError(platform)
    d = _load_embedded()[key]
    return NoisePrior.from_dict({**d, "name": key})


def known_platforms() -> list[str]:
    """The cells of the embedded noise priors, sorted."""
    return sorted(_cells())


def scale_population_nll(s2: np.ndarray, df: np.ndarray):
    r"""The negative log-likelihood of sample variances under a population of scales.

    With :math:`\sigma_r^2 \sim` Scaled-Inv-chi2(:math:`\nu, s_0^2`) and
    :math:`d_r s_r^2/\sigma_r^2 \sim \chi^2_{d_r}`, the marginal of :math:`x_r = s_r^2/s_0^2`
    is :math:`F(d_r, \nu)`, so the log density of :math:`s_r^2` is

    .. math::

       \tfrac{d}{2}\log\tfrac{d}{\nu} + (\tfrac{d}{2} - 1)\log x
       - \tfrac{d + \nu}{2}\log\!\big(1 + \tfrac{d x}{\nu}\big)
       - \log B(\tfrac{d}{2}, \tfrac{\nu}{2}) - 2\log s_0 .

    The returned function evaluates the sum over cells at :math:`(\log\nu, \log s_0)`,
    the terms in :math:`d_r` and :math:`s_r^2` alone computed once: an optimiser calls it a few
    hundred times per fit, and ``scipy.stats.f.logpdf``'s argument checks and broadcasting
    (~0.2 ms a call) were 70 % of a leave-one-group-out calibration study. The value equals
    ``-sum(scipy.stats.f.logpdf(s2 / s0**2, df, nu) - 2 log s0)`` (a test checks it to 1e-12).

    Parameters
    ----------
    s2 : ndarray, shape (C,)
        Sample variances (> 0, relative^2).
    df : ndarray, shape (C,)
        Their degrees of freedom (>= 1).

    Returns
    -------
    callable
        ``nll(p)`` for ``p = (log nu, log s0)``, a float; ``nll(p, grad=True)`` returns
        ``(value, gradient)``, the gradient in (log nu, log s0) analytic (digamma for the Beta
        term), for gradient-based optimisers.
    """
    from scipy import special

    s2 = np.asarray(s2, float)
    half = 0.5 * np.asarray(df, float)
    ds2 = 2.0 * half * s2
    # sum over cells of d/2 log d + (d/2 - 1) log s2: the terms without the parameters
    const = float(np.sum(half * np.log(2.0 * half) + (half - 1.0) * np.log(s2)))
    sum_half = float(half.sum())
    # the Beta-function term depends on d only through its few distinct values
    u_half, u_count = np.unique(half, return_counts=True)
    u_count = u_count.astype(float)

    def nll(p, grad: bool = False):
        log_nu, log_s0 = float(p[0]), float(p[1])
        nu = math.exp(log_nu)
        # (d/2 - 1) log x - 2 log s0 summed: -2 (sum d/2) log s0 beside the constant
        ll = const - sum_half * (log_nu + 2.0 * log_s0)
        a = ds2 * (math.exp(-2.0 * log_s0) / nu)
        c = half + 0.5 * nu
        log1p_a = np.log1p(a)
        ll -= float(np.sum(c * log1p_a))
        ll -= float(special.betaln(u_half, 0.5 * nu) @ u_count)
        if not grad:
            return -ll
        # d a / d log s0 = -2 a, d a / d log nu = -a; d betaln(h, b) / db = psi(b) - psi(h + b)
        frac = float(np.sum(c * a / (1.0 + a)))
        d_s0 = -2.0 * sum_half + 2.0 * frac
        d_nu = (-sum_half - 0.5 * nu * float(np.sum(log1p_a)) + frac
                - 0.5 * nu * float((special.digamma(0.5 * nu)
                                    - special.digamma(u_half + 0.5 * nu)) @ u_count))
        return -ll, np.array([-d_nu, -d_s0])

    return nll


#: Search range of log df in the scale-population fits (df 1e-3 .. 1e6): only a guard against
#: nu drifting to infinity when the cells look homogeneous (the shipped hierarchy's nodes have
#: df 0.7 .. 1.7).
LOG_NU_BOUNDS = (math.log(1e-3), math.log(1e6))


def minimize_scale_objective(fun, start):
    """Minimise an objective of ``p = (log nu, log s0)`` given as ``fun(p, grad=True) ->
    (value, gradient)`` (:func:`scale_population_nll`, alone or penalised): L-BFGS-B on the
    analytic gradient, log df within :data:`LOG_NU_BOUNDS`. About 20 evaluations where
    Nelder-Mead took ~180; on the shipped hierarchy's cells and 40 leave-one-group-out fits
    the optimum is within 4e-7 of Nelder-Mead's.

    Returns
    -------
    scipy.optimize.OptimizeResult
    """
    from scipy import optimize

    return optimize.minimize(lambda p: fun(p, True), start, jac=True, method="L-BFGS-B",
                             bounds=[LOG_NU_BOUNDS, (None, None)],
                             options={"ftol": 1e-13, "gtol": 1e-9, "maxiter": 500})


def fit_scale_population(s2: np.ndarray, df: np.ndarray) -> tuple[ScalePrior, dict]:
    r"""Empirical-Bayes prior for a noise scale that varies between experiments.

    Each cell c (one config on one instance in one experiment) has its own run-to-run scale
    :math:`\sigma_c`, drawn from :math:`\sigma_c^2 \sim` Scaled-Inv-chi2(:math:`\nu, s_0^2`).
    Its sample variance :math:`s_c^2` on :math:`d_c` degrees of freedom then satisfies
    :math:`s_c^2 / s_0^2 \sim F(d_c, \nu)`; (:math:`\nu, s_0`) maximise
    :math:`\sum_c \log f_F(s_c^2/s_0^2;\,d_c,\nu) - 2\log s_0`.

    This is the prior a *new* experiment should use (the spread of scales between
    experiments), not the posterior of one pooled scale, which is far too confident when
    experiments differ (on the shipped local runs cell SDs range from 0.01 % to 1 %).

    Parameters
    ----------
    s2 : ndarray, shape (C,)
        Sample variances of log TPS per cell (> 0).
    df : ndarray, shape (C,)
        Their degrees of freedom (n_c - 1 >= 1).

    Returns
    -------
    prior : ScalePrior
        ``inv_chi2`` with the fitted (df, scale).
    info : dict
        ``cells``, ``df_total``, ``neg_loglik``.

    Raises
    ------
    ValueError
        Fewer than 3 cells. A variance of 0 (or below) is not refused: it is raised to
        1e-16 (an SD of 1e-8, 0.000001 %) so that its F log-density stays finite.
    """
    s2 = np.asarray(s2, float)
    df = np.asarray(df, float)
    if s2.size < 3:
        raise ValueError("need at least 3 cells with repeated runs")
    s2 = np.maximum(s2, 1e-16)
    nll = scale_population_nll(s2, df)

    res = minimize_scale_objective(nll, [math.log(3.0), 0.5 * math.log(float(np.median(s2)))])
    nu, s0 = math.exp(res.x[0]), math.exp(res.x[1])
    return ScalePrior("inv_chi2", scale=s0, df=nu), {
        "cells": int(s2.size), "df_total": float(df.sum()), "neg_loglik": float(res.fun)}


#: Support of the population prior's draws (relative scales): the exact engine's grid, 1e-5 ..
#: its coarse grid's end (``models.stats.tps_exact._GRID_HI``, 0.97452...).
POP_RANGE = (1e-5, 0.9745)
#: Reference run-to-run scale of the ratio's location (0.1 %, log): ``mu_r`` is the median
#: log(tau/sigma) at sigma = 0.1 %, the middle of the run scales of the units that repeat a
#: config over sessions (0.004-0.4 %), where it is best determined.
REF_LOG_SIGMA = math.log(1e-3)


def t_logpdf(x, nu: float, mu, s: float) -> np.ndarray:
    """Log density of a location-scale Student t, shape of ``x`` (``math.lgamma``, no SciPy).

    Parameters
    ----------
    x : array_like
    nu : float
        Degrees of freedom (> 0).
    mu : array_like
        Location (broadcast with ``x``).
    s : float
        Scale (> 0).
    """
    z = (np.asarray(x, float) - mu) / s
    c = (math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi)
         - math.log(s))
    return c - (nu + 1) / 2 * np.log1p(z * z / nu)


@dataclass(frozen=True)
class PopulationPrior:
    """The fitted joint prior of (tau, sigma) (see the module docstring of
    :mod:`models.stats.population`).

    Attributes
    ----------
    mu_s, s_s, nu_s : float
        Location, scale and df of :math:`\\log\\sigma` (sigma relative, log-TPS).
    mu_r, b, s_r, nu_r : float
        Location at :math:`\\log\\sigma =` :data:`REF_LOG_SIGMA`, slope on its distance,
        scale and df of :math:`\\log(\\tau/\\sigma)` (of its bulk component when ``w_r > 0``).
    w_r, d_w, s_w, nu_w : float
        The ratio's broad component (issue 20): weight (0: a single t, the files before it),
        location shift from the bulk's, scale and df. The ratio's density is
        ``(1 - w_r) t(nu_r; m, s_r) + w_r t(nu_w; m + d_w, s_w)``, ``m = mu_r + b (log sigma -
        log 0.1 %)``.
    """

    mu_s: float
    s_s: float
    nu_s: float
    mu_r: float
    b: float
    s_r: float
    nu_r: float
    w_r: float = 0.0
    d_w: float = 0.0
    s_w: float = 1.0
    nu_w: float = 60.0

    def ratio_logpdf(self, lr, ls) -> np.ndarray:
        """Log density of :math:`\\ell_r = \\log(\\tau/\\sigma)` given
        :math:`\\ell_s = \\log\\sigma`, broadcast shape: the one function both engines' ratio
        densities follow (``tps_mcmc`` writes the same mixture in PyTensor)."""
        m = self.mu_r + self.b * (np.asarray(ls, float) - REF_LOG_SIGMA)
        bulk = t_logpdf(lr, self.nu_r, m, self.s_r)
        if self.w_r <= 0.0:
            return bulk
        broad = t_logpdf(lr, self.nu_w, m + self.d_w, self.s_w)
        return np.logaddexp(math.log1p(-self.w_r) + bulk, math.log(self.w_r) + broad)

    def logpdf_log(self, ls, lr) -> np.ndarray:
        """Log density of :math:`(\\ell_s, \\ell_r) = (\\log\\sigma, \\log\\tau/\\sigma)`."""
        ls = np.asarray(ls, float)
        return t_logpdf(ls, self.nu_s, self.mu_s, self.s_s) + self.ratio_logpdf(lr, ls)

    def logpdf(self, tau, sigma) -> np.ndarray:
        """Log density of the scales :math:`(\\tau, \\sigma)` (> 0, relative), broadcast shape:
        :meth:`logpdf_log` minus :math:`\\log\\tau + \\log\\sigma` (the Jacobian)."""
        lt, ls = np.log(np.asarray(tau, float)), np.log(np.asarray(sigma, float))
        return self.logpdf_log(ls, lt - ls) - lt - ls

    def rvs(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Draws ``(tau, sigma)``, each shape (size,), from the prior truncated to the exact
        engine's grid (both scales in 1e-5 .. 0.98, :data:`POP_RANGE`), the support both engines
        integrate over (by rejection: the heavy t tails put ~20 % of the untruncated mass
        outside it, offsets of more than 100 % or below 0.001 %)."""
        lo, hi = math.log(POP_RANGE[0]), math.log(POP_RANGE[1])
        out_s, out_t, n = [], [], 0
        while n < size:
            m = 2 * (size - n) + 16
            ls = self.mu_s + self.s_s * rng.standard_t(self.nu_s, m)
            loc = ls + self.mu_r + self.b * (ls - REF_LOG_SIGMA)
            lt = loc + self.s_r * rng.standard_t(self.nu_r, m)
            if self.w_r > 0.0:
                # the draws of the single-t prior are unchanged (no extra draws when w_r = 0)
                wide = rng.random(m) < self.w_r
                lt = np.where(wide, loc + self.d_w + self.s_w * rng.standard_t(self.nu_w, m), lt)
            ok = (ls > lo) & (ls < hi) & (lt > lo) & (lt < hi)
            out_s.append(ls[ok])
            out_t.append(lt[ok])
            n += int(ok.sum())
        return (np.exp(np.concatenate(out_t)[:size]), np.exp(np.concatenate(out_s)[:size]))

    _KEYS = ("mu_s", "s_s", "nu_s", "mu_r", "b", "s_r", "nu_r")
    _MIX_KEYS = ("w_r", "d_w", "s_w", "nu_w")

    def to_dict(self) -> dict:
        keys = self._KEYS + (self._MIX_KEYS if self.w_r > 0.0 else ())
        return {k: float(getattr(self, k)) for k in keys}

    @classmethod
    def from_dict(cls, d: dict) -> "PopulationPrior":
        return cls(**{k: float(d[k]) for k in cls._KEYS + cls._MIX_KEYS if k in d})

    def describe(self) -> str:
        """One line: median sigma and median tau/sigma with their slopes and tails."""
        return (f"log sigma ~ t{self.nu_s:.2g}(median {100 * math.exp(self.mu_s):.3g} %, "
                f"scale {self.s_s:.2g}); log tau/sigma ~ t{self.nu_r:.2g}(median ratio "
                f"{math.exp(self.mu_r):.3g} at sigma 0.1 %, slope {self.b:+.2g} on log sigma, "
                f"scale {self.s_r:.2g})"
                + (f" w.p. {1 - self.w_r:.2g}, else t{self.nu_w:.2g}(median ratio "
                   f"{math.exp(self.mu_r + self.d_w):.3g}, scale {self.s_w:.2g})"
                   if self.w_r > 0.0 else ""))
