r"""A population prior over platforms: the joint prior of (tau, sigma) for a platform the data
do not know, learned from every platform with repeated runs.

Why
---
An unknown platform used to get independent weak priors on the between-session scale
:math:`\tau` and the run-to-run scale :math:`\sigma` (0.03 %-20 % each). With each arm's runs in
one session (the quick forms, tables without an instance), the offset between the arms then
has :math:`\tau`'s wide prior, and no amount of within-arm data narrows it: a confirmed 3 %
regression with 0.1 % run spread came out undecided (issue 20). Real platforms are not like
that: their session offsets scale with their run noise (public reports: 1-3 % offsets between
sessions of tight 0.2-0.5 % runs; the shipped local A10G: 0.11 % offsets, 0.04-0.09 % runs),
with heavy tails. This module learns that joint distribution.

Model
-----
Each *unit* u (one config of one platform, metric and workload on one instance, measured in one or more
sessions) has its own scales. With :math:`\ell_s = \log\sigma_u` and
:math:`\ell_r = \log(\tau_u/\sigma_u)`,

.. math::

    \ell_s &\sim t_{\nu_s}(\mu_s, s_s),\\
    \ell_r \mid \ell_s &\sim t_{\nu_r}\big(\mu_r + b\,(\ell_s - \ell_0),\ s_r\big),

so the ratio of session to run noise may depend on the run noise (:math:`b`; :math:`\ell_0 =`
:data:`REF_LOG_SIGMA`), and both may have heavy (Student-t) tails. The density of :math:`(\tau, \sigma)` is that of
:math:`(\ell_s, \ell_r)` divided by :math:`\tau\sigma` (:meth:`PopulationPrior.logpdf`).

Data of a unit: sessions :math:`j` with :math:`n_j` warm runs (log TPS), session means
:math:`m_j` and within-session sums of squares :math:`W_j`. Given :math:`(\tau, \sigma)` and a
flat prior on the unit's level,

.. math::

    \log p(y_u \mid \tau, \sigma) = \sum_j\Big[-(n_j - 1)\log\sigma - \frac{W_j}{2\sigma^2}\Big]
    - \tfrac12\sum_j \log v_j - \tfrac12\log\sum_j v_j^{-1}
    - \tfrac12\sum_j \frac{(m_j - \hat m)^2}{v_j}

(up to a constant), :math:`v_j = \tau^2 + \sigma^2/n_j`, :math:`\hat m` the
:math:`v^{-1}`-weighted mean. The hyper-parameters
:math:`\theta = (\mu_s, \log s_s, \log\nu_s, \mu_r, b, \log s_r, \log\nu_r)` maximise the
*platform-balanced* marginal likelihood

.. math::

    \sum_u w_u \log \iint p(y_u \mid \tau, \sigma)\, p(\ell_s, \ell_r \mid \theta)\,
    d\ell_s\, d\ell_r,\qquad w_u = \min\!\Big(1, \frac{C}{n_{p(u)}}\Big)

(empirical Bayes, each unit's scales integrated on a log grid). :math:`n_p` is the number of
units of the unit's platform and :data:`PLATFORM_CAP` :math:`= C`: no platform weighs more
than :math:`C` units, so the population of run-to-run scales is one over *platforms*, not over
the local GPU that ran hundreds of experiments.

The weights apply to the sigma block :math:`(\mu_s, s_s, \nu_s)`; the ratio block
:math:`(\mu_r, b, s_r, \nu_r)` maximises the unweighted sum (:math:`w_u = 1`), the two
blocks alternately (:data:`ROUNDS`), a composite likelihood. Only units that repeat a config
over sessions inform the ratio, and so far they are nearly all on A10Gs: capping them would
throw away the only evidence of how session offsets scale with run noise, which is a
relation within an experiment (pooled over experiments) rather than a property of one
platform.

The fitted numbers are shipped in ``models/data/population_prior.json`` with the fit's
inputs; ``bench/fit_population.py`` refits them (a test checks it reproduces them).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Sequence

import numpy as np

from models.stats.noise import REF_LOG_SIGMA, PopulationPrior, t_logpdf  # noqa: F401 (re-exported)

__all__ = ["PopulationPrior", "Unit", "PLATFORM_CAP", "unit_from_sessions", "fit_population",
           "load_population", "population_noise_prior", "t_logpdf", "SCHEMA"]

SCHEMA = "spec-planner/population-prior/1"
#: Most units one platform weighs in the fit of the sigma population (see the module
#: docstring). 3: the shipped local A10G has ~130 units of one GPU model; capped, it counts as
#: one platform among ~20 for how noisy an unknown platform's runs are.
PLATFORM_CAP = 3.0
#: Prior SD of the slope b (a ridge in the fit, the only hyperprior): a slope of +-1 (tau
#: growing as sigma^2, or tau independent of sigma) is 2 SD out.
B_PRIOR_SD = 0.5
#: Lower bound of the ratio's df (a fixed 2 or 4 widens its scale to 1.7-2.4 and calls fewer
#: public effects: the EB optimum sits at this bound, a Cauchy-like tail).
NU_R_MIN = 0.5
#: Rounds of the block-coordinate ascent (sigma block, ratio block); the third round moved
#: no parameter by more than 1e-4 on the shipped data.
ROUNDS = 4
#: Step of the central differences of the fit's gradient (log / logit parameters, ~1): truncation
#: error ~1e-10 x the third derivative, rounding ~1e-13 / 1e-5 on objectives of ~1e3.
GRAD_STEP = 1e-5
#: Floor of a within-session mean square (relative^2): transcribed values with 2 decimals can
#: repeat exactly; (0.001 %)^2, as the noise hierarchy's.
MS_FLOOR = 1e-10
#: Unit integration grid: log sigma over 1e-5 .. 0.9 (the exact engine's range), log ratio
#: over -7 .. 7 (a ratio of 1e-3 .. 1e3).
_LS = np.linspace(math.log(1e-5), math.log(0.9), 90)
_LR = np.linspace(-7.0, 7.0, 90)


@dataclass(frozen=True)
class Unit:
    """One config of one platform, metric and workload, in one or more sessions.

    Attributes
    ----------
    platform, key : str
        The platform and a label (``platform/metric/workload/config``).
    n : ndarray, shape (J,)
        Warm runs per session (>= 1).
    m : ndarray, shape (J,)
        Session means of log TPS.
    W : ndarray, shape (J,)
        Within-session sums of squares of log TPS (0 for a one-run session).
    """

    platform: str
    key: str
    n: np.ndarray
    m: np.ndarray
    W: np.ndarray

    @property
    def informative(self) -> bool:
        """True when the unit says something about a scale: two runs in a session, or two
        sessions."""
        return bool(self.n.size >= 2 or self.n.max() >= 2)

    def loglik(self, tau, sigma) -> np.ndarray:
        """:math:`\\log p(y_u \\mid \\tau, \\sigma)` up to a constant (module docstring),
        broadcast shape of ``tau`` and ``sigma`` (relative)."""
        t2 = np.asarray(tau, float)[..., None] ** 2
        s2 = np.asarray(sigma, float)[..., None] ** 2
        W = np.maximum(self.W, MS_FLOOR * np.maximum(self.n - 1, 0))
        ll = np.sum(-(self.n - 1) / 2 * np.log(s2) - W / (2 * s2), axis=-1)
        if self.n.size >= 2:
            v = t2 + s2 / self.n
            w = 1.0 / v
            mh = np.sum(w * self.m, -1, keepdims=True) / np.sum(w, -1, keepdims=True)
            ll = ll - 0.5 * (np.sum(np.log(v), -1) + np.log(np.sum(w, -1))
                             + np.sum(w * (self.m - mh) ** 2, -1))
        return ll


def unit_from_sessions(platform: str, key: str, sessions: Sequence[Sequence[float]]) -> Unit:
    """A :class:`Unit` from per-session TPS values (> 0; sessions may hold one run).

    Parameters
    ----------
    platform, key : str
    sessions : sequence of sequences of float
        TPS (any positive unit) of each session's warm runs.
    """
    logs = [np.log(np.asarray(s, float)) for s in sessions if len(s)]
    n = np.array([x.size for x in logs], float)
    m = np.array([x.mean() for x in logs])
    W = np.array([float(np.sum((x - x.mean()) ** 2)) for x in logs])
    return Unit(platform, key, n, m, W)


def _unit_grid_logliks(units: Sequence[Unit]) -> np.ndarray:
    """Each unit's log-likelihood on the (log sigma, log ratio) grid, shape (U, G)."""
    LS, LR = (g.ravel() for g in np.meshgrid(_LS, _LR, indexing="ij"))
    S, T = np.exp(LS), np.exp(LS + LR)
    return np.stack([u.loglik(T, S) for u in units])


_NAMES = ("mu_s", "log_s_s", "log_nu_s", "mu_r", "b", "log_s_r", "log_nu_r", "logit_w_r",
          "d_w", "log_s_w")
#: Bounds of the free parameters: df 0.5 .. 60 (beyond 60 a t is a Normal, below 0.5 the
#: fit chases one outlying unit); scales 0.1 .. 5 on the log scale (below 0.1 a unit's grid,
#: step 0.13, cannot resolve them); medians within the grid; slope -1.5 .. 1.5; the broad
#: component's weight 0.5 % .. 50 % (above, it is the bulk), its shift -3 .. 8 (a ratio
#: 0.05x .. 3000x the bulk's) and its scale 0.1 .. 5 as the bulk's.
_BOUNDS = [(math.log(1e-5), math.log(0.5)), (math.log(0.1), math.log(5.0)),
           (math.log(0.5), math.log(60.0)), (-5.0, 6.0), (-1.5, 1.5),
           (math.log(0.1), math.log(5.0)), (math.log(NU_R_MIN), math.log(60.0)),
           (math.log(0.005 / 0.995), 0.0), (-3.0, 8.0), (math.log(0.1), math.log(5.0))]
#: Families of the ratio log(tau/sigma) | sigma: ``t`` a single t (the fit before issue 20's
#: rework: its df sat at its 0.5 bound), ``mix`` a bulk t plus a broad t of df
#: :data:`NU_W` with a fitted weight, shift and scale.
FAMILIES = ("t", "mix")
#: df of the broad component (fixed: 2-3 units inform it).
NU_W = 4.0


def _theta_to_prior(x) -> PopulationPrior:
    mix = dict(w_r=1.0 / (1.0 + math.exp(-x[7])), d_w=float(x[8]), s_w=math.exp(x[9]),
               nu_w=NU_W) if len(x) > 7 else {}
    return PopulationPrior(float(x[0]), math.exp(x[1]), math.exp(x[2]), float(x[3]),
                           float(x[4]), math.exp(x[5]), math.exp(x[6]), **mix)


def fit_population(units: Sequence[Unit], *, cap: float = PLATFORM_CAP,
                   start: Sequence[float] | None = None,
                   family: str = "t", rounds: int = ROUNDS) -> tuple[PopulationPrior, dict]:
    """Empirical-Bayes fit of the population prior (module docstring).

    Parameters
    ----------
    units : sequence of Unit
        Uninformative units (one session of one run) are dropped.
    cap : float
        :data:`PLATFORM_CAP`.
    start : sequence of 7 (``t``) or 10 (``mix``) floats, optional
        Starting point (``mu_s, log s_s, log nu_s, mu_r, b, log s_r, log nu_r`` and for
        ``mix`` ``logit w_r, d_w, log s_w``).
    family : {"t", "mix"}
        The ratio's family (:data:`FAMILIES`).
    rounds : int
        Rounds of the block ascent (:data:`ROUNDS`; fewer for a warm-started refit).

    Returns
    -------
    prior : PopulationPrior
    info : dict
        ``objective`` (the weighted marginal log-likelihood at the optimum), ``se`` (Laplace
        standard errors of the 7 free parameters, from the inverse Hessian), ``units``,
        ``platforms`` (units and weight per platform).

    Raises
    ------
    ValueError
        Fewer than 3 informative units or fewer than 2 platforms.
    """
    from scipy import optimize

    units = [u for u in units if u.informative]
    plats = sorted({u.platform for u in units})
    if len(units) < 3 or len(plats) < 2:
        raise ValueError("need >= 3 informative units on >= 2 platforms")
    cnt = {p: sum(u.platform == p for u in units) for p in plats}
    w_cap = np.array([min(1.0, cap / cnt[u.platform]) for u in units])
    L = _unit_grid_logliks(units)                                      # (U, G)
    Lmax = L.max(1, keepdims=True)
    E = np.exp(L - Lmax)
    LS, LR = (g.ravel() for g in np.meshgrid(_LS, _LR, indexing="ij"))

    # the prior as normalised weights on the grid nodes, P = p_s p_r: a discrete prior, so a
    # scale below the grid step cannot put unbounded density on one node; each factor
    # normalised on its own axis (the ratio's per row of log sigma), so the grid's ends cut no
    # mass from the sigma marginal through the ratio's
    def sigma_weights(pp):
        ps = np.exp(t_logpdf(_LS, pp.nu_s, pp.mu_s, pp.s_s))
        return ps / ps.sum()                                              # (n_s,)

    def ratio_weights(pp):
        pr = np.exp(pp.ratio_logpdf(_LR[None, :], _LS[:, None]))
        return pr / pr.sum(1, keepdims=True)                             # (n_s, n_r)

    def nodes(x):
        pp = _theta_to_prior(x)
        return (sigma_weights(pp)[:, None] * ratio_weights(pp)).ravel()

    def value(Q, w, b):
        """The objective from the units' prior-weighted likelihoods Q (U, m) and slopes b."""
        ml = np.log(np.maximum(Q, 1e-300)) + Lmax                         # (U, m)
        # the slope is identified only by units that repeat a config over sessions, whose run
        # scales span 0.004-0.4 %: a ridge keeps it from extrapolating to 20 % run noise
        return -(w @ ml) + 0.5 * (b / B_PRIOR_SD) ** 2

    def objs(X, w):
        """The objective at each row of X, shape (m, k_all): one pass over E for all m
        (E is U x G, ~15 MB; reading it is the cost, so m points cost little more than one)."""
        return value(E @ np.stack([nodes(x) for x in X], axis=1), w, np.asarray(X)[:, 4])

    E3 = E.reshape(len(units), _LS.size, _LR.size)
    SIGMA = slice(0, 3)   # the sigma block of theta (mu_s, log s_s, log nu_s); the ratio's after

    def ratio_summed(y):
        """M[u, i] = sum_j E[u, i, j] p_r[i, j] at the ratio block of y: E @ P = M @ p_s, so
        the sigma block reads E once per block, not once per evaluation."""
        return np.einsum("uij,ij->ui", E3, ratio_weights(_theta_to_prior(y)))  # (U, n_s)

    def sigma_objs(X, w, y, M):
        """:func:`objs` at rows X of the sigma block (``SIGMA``), the ratio block fixed at
        y's (M = ratio_summed(y))."""
        ps = [sigma_weights(_theta_to_prior(np.concatenate([x, y[SIGMA.stop:]]))) for x in X]
        return value(M @ np.stack(ps, axis=1), w, y[4])

    def obj(x, w):
        return float(objs([x], w)[0])

    if family not in FAMILIES:
        raise ValueError(f"family {family!r}: one of {', '.join(FAMILIES)}")
    k_all = 7 if family == "t" else 10
    x = np.array(start if start is not None else
                 [math.log(0.002), math.log(1.5), math.log(4.0), math.log(2.0), 0.0,
                  math.log(1.0), math.log(4.0), math.log(0.1 / 0.9), 3.0, math.log(1.5)
                  ][:k_all], float)
    ones = np.ones(len(units))
    blocks = ((SIGMA, w_cap), (slice(SIGMA.stop, k_all), ones))
    for _ in range(rounds):
        for sl, w in blocks:
            y0 = x.copy()
            M = ratio_summed(y0) if sl == SIGMA else None

            def f(z, sl=sl, w=w, M=M, y0=y0):
                # the value and its central-difference gradient (step GRAD_STEP) from one
                # pass over E: 2k + 1 points where SciPy's default forward differences made
                # k + 1 passes (0.2 ms of node weights against 4 ms per pass); the sigma
                # block's from E summed over the ratio axis once (sigma_objs)
                y = y0.copy()
                y[sl] = z
                idx = list(range(k_all))[sl]
                X = np.repeat(y[None], 2 * len(idx) + 1, axis=0)
                for j, i in enumerate(idx):
                    X[1 + 2 * j, i] += GRAD_STEP
                    X[2 + 2 * j, i] -= GRAD_STEP
                v = sigma_objs(X[:, SIGMA], w, y0, M) if M is not None else objs(X, w)
                return float(v[0]), (v[1::2] - v[2::2]) / (2.0 * GRAD_STEP)
            res = optimize.minimize(f, x[sl], method="L-BFGS-B", jac=True,
                                    bounds=_BOUNDS[:k_all][sl],
                                    options={"ftol": 1e-13, "gtol": 1e-8, "maxiter": 2000})
            x[sl] = res.x
    h = 1e-3
    se = [float("nan")] * k_all
    for sl, w in blocks:
        idx = list(range(k_all))[sl]
        k = len(idx)
        pts = []
        for i in range(k):
            for j in range(k):
                ei, ej = np.zeros(k_all), np.zeros(k_all)
                ei[idx[i]], ej[idx[j]] = h, h
                pts += [x + ei + ej, x + ei - ej, x - ei + ej, x - ei - ej]
        v = objs(pts, w).reshape(k, k, 4)
        H = (v[..., 0] - v[..., 1] - v[..., 2] + v[..., 3]) / (4 * h * h)
        try:
            cov = np.linalg.inv(H)
            for i in range(k):
                se[idx[i]] = float(math.sqrt(cov[i, i])) if cov[i, i] > 0 else float("nan")
        except np.linalg.LinAlgError:
            pass
    at_bound = [n for n, v, (lo, hi) in zip(_NAMES[:k_all], x, _BOUNDS[:k_all], strict=True)
                if v <= lo + 1e-6 or v >= hi - 1e-6]
    res.fun = obj(x, ones)
    info = {"objective": -float(res.fun), "objective_sigma": -obj(x, w_cap),
            "family": family,
            "theta": dict(zip(_NAMES[:k_all], map(float, x), strict=True)),
            "se": dict(zip(_NAMES[:k_all], se, strict=True)), "at_bound": at_bound,
            "units": len(units),
            "n_runs": int(sum(u.n.sum() for u in units)),
            "rounds": rounds,
            "platforms": {p: {"units": cnt[p], "weight": min(float(cnt[p]), cap)}
                          for p in plats}}
    return _theta_to_prior(x), info


def _marginals(pp: PopulationPrior, n: int = 200_000):
    """Scaled-Inv-chi2 summaries of the tau and sigma marginals, for the code that reads one
    scale at a time (the repeat planner, the z-test's reach): matched to the median and the
    5-95 % width of the log scale over seeded draws (:meth:`PopulationPrior.rvs`). Quantiles,
    not moments: a Student-t on the log scale has no moments worth matching, and a moment
    match of the log variance gave a 95 % range of 0.11-68 % for a sigma whose draws span
    0.03-25 %."""
    from scipy import optimize, stats

    from models.stats.noise import ScalePrior

    rng = np.random.default_rng(0)
    t, s = pp.rvs(n, rng)
    out = []
    for x in (t, s):
        q05, q50, q95 = np.quantile(np.log(x), [0.05, 0.5, 0.95])
        width = q95 - q05

        def gap(lnu, width=width):
            nu = math.exp(lnu)
            return 0.5 * (math.log(stats.chi2.ppf(0.95, nu)) - math.log(stats.chi2.ppf(0.05, nu))
                          ) - width

        lnu = optimize.brentq(gap, math.log(0.05), math.log(1e5)) if gap(math.log(0.05)) > 0 \
            else math.log(0.05)
        nu = math.exp(lnu)
        # median of log sigma = log s + 0.5 log(nu / chi2_median)
        scale = math.exp(q50 - 0.5 * math.log(nu / stats.chi2.ppf(0.5, nu)))
        out.append(ScalePrior("inv_chi2", float(scale), float(nu)))
    return out


@lru_cache(maxsize=1)
def _stored() -> dict:
    text = resources.files("models").joinpath("data/population_prior.json").read_text("utf-8")
    return json.loads(text)


def load_population() -> PopulationPrior:
    """The shipped fit, ``models/data/population_prior.json``."""
    return PopulationPrior.from_dict(_stored()["prior"])


def population_noise_prior(pp: PopulationPrior | None = None, *, source: str | None = None):
    """A :class:`models.stats.noise.NoisePrior` named ``population`` carrying the joint prior
    (``joint``) and, for code that reads one scale at a time, its marginals as
    Scaled-Inv-chi2 (stored in the JSON for the shipped fit; computed for another ``pp``).

    Parameters
    ----------
    pp : PopulationPrior, optional
        Default: the shipped fit.
    source : str, optional
        Provenance (default: the shipped file's).
    """
    from models.stats.noise import NoisePrior, ScalePrior

    if pp is None:
        d = _stored()
        pp = PopulationPrior.from_dict(d["prior"])
        tau, sigma = (ScalePrior.from_dict(d["marginals"][k]) for k in ("tau", "sigma"))
        source = source or d["source"]
    else:
        tau, sigma = _marginals(pp)
    return NoisePrior(tau=tau, sigma=sigma, name="population",
                      source=source or "population prior over platforms", joint=pp)
