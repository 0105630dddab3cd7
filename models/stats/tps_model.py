r"""The hierarchical model of TPS, shared by the exact and the MCMC engine.

On the log scale, run :math:`r` of config :math:`c(r)` on instance :math:`i(r)`:

.. math::

    \log y_r = \mu_{c(r)} + \beta\,\mathrm{cold}_r + u_{i(r)} + \varepsilon_r,\qquad
    u_i \sim N(0, \tau^2),\quad \varepsilon_r \sim N(0, \sigma^2)

(:math:`\varepsilon_r` Student-t with unknown :math:`\nu` in the robust MCMC variant).
Priors: :math:`\mu_c \sim N(m_0, V_0)` with :math:`m_0` the mean log TPS of the data and
:math:`\sqrt{V_0} = 1` (a factor of e: weak even for the -65 % effects in the shipped runs);
:math:`\beta = -s` with :math:`s \ge 0` the slowdown of a cold first run, a zero-inflated
exponential (:data:`COLD_P_NONE` of first runs are not slow; the others are slow by an
exponential amount of mean :data:`COLD_MEAN_SLOW`; fitted on the shipped cold/warm pairs, see
:func:`cold_prior_components`), so a cold run is never modelled as faster;
:math:`\tau, \sigma` from a :class:`models.stats.noise.NoisePrior`. Runs of two configs on the same
instance share :math:`u_i`, so paired designs cancel it.

This module holds the data container (:class:`TPSData`) and the common posterior summary
(:class:`DeltaSummary`) both engines return.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: Prior SD of each config mean on the log scale (a factor e: weak even for -65 % effects).
MU_PRIOR_SD = 1.0
#: Share of cold first runs (``rep`` 0) that are not measurably slow, and the mean slowdown
#: (log scale, 0.018 = 1.8 % of TPS) of the others, exponentially distributed. Maximum-likelihood
#: fit of d = log(rep 0) - mean log(reps >= 1) over the 136 cells of
#: ``examples/runs/tps_runs.csv`` holding one rep-0 run and >= 2 later runs on the same instance
#: (64 run groups; each d with the measurement SD of its cell's warm mean): P(not slow) = 0.675,
#: mean slowdown 1.79 %. Held out by whole run groups (5 folds, each judged by a fit on the other
#: four), the fitted distribution's central 90 % interval covered 89.7 % of the left-out cells'
#: d (6.6 % below, 3.7 % above: the largest drops, -8 % and -24 %, are left to
#: ``--likelihood student-t``); ``tests/planner/decide/test_cold.py`` repeats the fit and the check.
COLD_P_NONE = 0.675
COLD_MEAN_SLOW = 0.018
#: Equal-mass bins of the exponential part in the Normal-mixture form of the cold prior.
COLD_BINS = 12
#: SD (log scale) of the "not slow" component: 0.01 %, below the median run-to-run SD of
#: warm runs (0.038 %, ``examples/runs/tps_runs.md``).
COLD_NONE_SD = 1e-4
#: SD (log scale) of the moment-matched single Normal of the cold prior (for callers that need
#: one Normal; the engines use the mixture).
COLD_PRIOR_SD = math.sqrt((1 - COLD_P_NONE) * 2 * COLD_MEAN_SLOW**2
                          - ((1 - COLD_P_NONE) * COLD_MEAN_SLOW) ** 2)


def cold_prior_components(p_none: float = COLD_P_NONE, mean_slow: float = COLD_MEAN_SLOW,
                          bins: int = COLD_BINS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The one-sided prior of the cold-start coefficient as a mixture of Normals.

    :math:`\beta = -s`, :math:`s = 0` with probability ``p_none`` (a Normal of SD
    :data:`COLD_NONE_SD` at 0), else :math:`s \sim \mathrm{Exp}(\text{mean} = ` ``mean_slow``
    :math:`)`, split into ``bins`` equal-mass bins each replaced by the Normal with the bin's
    conditional mean and SD (moment matched). The mixture's mass above +0.1 % (a cold run
    *faster* than warm by 0.1 %) is below 1e-5 (12 bins: 6e-6); its tail
    probabilities beyond 1, 2, 3.4 and 5 % slow are within 0.002 of the exponential's; its mean and variance equal the exponential's.

    Parameters
    ----------
    p_none : float
        Probability that a cold run is not slow, in [0, 1).
    mean_slow : float
        Mean slowdown of the slow ones, log scale (> 0).
    bins : int
        Normal components of the exponential part.

    Returns
    -------
    weights, means, sds : ndarray, shape (bins + 1,)
        Mixture weights (sum 1), means and SDs of beta (log scale; means <= 0).
    """
    q = np.linspace(0.0, 1.0, bins + 1)
    edges = -mean_slow * np.log1p(-q[:-1])              # lower edges; the last bin is open
    hi = np.append(edges[1:], np.inf)
    lam = 1.0 / mean_slow
    # E[s | a<s<b] and E[s^2 | a<s<b] of the exponential, closed form
    fin = np.where(np.isinf(hi), 0.0, hi)                # x e^{-x/mean} -> 0 at infinity
    ea, eb = np.exp(-lam * edges), np.exp(-lam * hi)
    mass = ea - eb
    m1 = ((edges + mean_slow) * ea - (fin + mean_slow) * eb) / mass
    m2 = ((edges**2 + 2 * mean_slow * edges + 2 * mean_slow**2) * ea
          - (fin**2 + 2 * mean_slow * fin + 2 * mean_slow**2) * eb) / mass
    sd = np.sqrt(np.maximum(m2 - m1 * m1, 0.0))
    w = np.concatenate([[p_none], (1.0 - p_none) * mass])
    return w / w.sum(), np.concatenate([[0.0], -m1]), np.concatenate([[COLD_NONE_SD], sd])


@dataclass
class TPSData:
    """Runs reduced to arrays for the engines.

    Attributes
    ----------
    y : ndarray, shape (n_runs,)
        log TPS.
    config : ndarray of int, shape (n_runs,)
        Config index into ``config_names``.
    instance : ndarray of int, shape (n_runs,)
        Instance index into ``instance_names``.
    cold : ndarray of bool, shape (n_runs,)
        Cold-start indicator (used only when ``use_cold`` is true).
    session : ndarray of int, shape (n_runs,), optional
        Session index (MCMC engine only).
    cold_sign : float
        The cold column's value on a cold run: +1 when higher is better (TPS: a cold run's
        value is lower, ``beta = -s``), -1 when lower is better (a latency: a cold run's value
        is *higher*). The coefficient's one-sided prior is the same either way: a cold run is
        never modelled as faster.
    """

    y: np.ndarray
    config: np.ndarray
    instance: np.ndarray
    cold: np.ndarray
    config_names: list[str]
    instance_names: list[str]
    use_cold: bool = False
    session: np.ndarray | None = None
    session_names: list[str] = field(default_factory=list)
    cold_sign: float = 1.0

    @classmethod
    def from_arrays(cls, tps, config, instance, cold=None, session=None, *, use_cold=None,
                    lower_is_better: bool = False):
        """Build from TPS values (> 0) and labels.

        Parameters
        ----------
        tps : array_like of float, shape (n,)
            TPS of each run.
        config, instance : sequence of str, shape (n,)
        cold : array_like of bool, shape (n,), optional
        session : sequence of str, optional
        use_cold : bool, optional
            Include the cold-start coefficient; default: when any run is cold.
        lower_is_better : bool
            The values are a latency or duration: a cold run is slower, so its value higher
            (:attr:`cold_sign` -1).
        """
        tps = np.asarray(tps, dtype=float)
        if tps.ndim != 1 or tps.size == 0:
            raise ValueError("need at least one TPS value")
        if not np.all(np.isfinite(tps)) or np.any(tps <= 0):
            raise ValueError("TPS must be finite and > 0")
        cnames = list(dict.fromkeys(config))
        inames = list(dict.fromkeys(instance))
        cidx = np.array([cnames.index(c) for c in config]) if len(cnames) < 64 else \
            np.array([{c: k for k, c in enumerate(cnames)}[c] for c in config])
        imap = {c: k for k, c in enumerate(inames)}
        iidx = np.array([imap[i] for i in instance])
        cold = np.zeros(tps.size, bool) if cold is None else np.asarray(cold, bool)
        if use_cold is None:
            use_cold = bool(cold.any())
        sidx, snames = None, []
        if session is not None:
            snames = list(dict.fromkeys(session))
            smap = {c: k for k, c in enumerate(snames)}
            sidx = np.array([smap[s] for s in session])
        return cls(np.log(tps), cidx, iidx, cold, cnames, inames, bool(use_cold and cold.any()),
                   sidx, snames, -1.0 if lower_is_better else 1.0)

    @property
    def n_runs(self) -> int:
        return int(self.y.size)

    @property
    def n_configs(self) -> int:
        return len(self.config_names)

    @property
    def n_instances(self) -> int:
        return len(self.instance_names)

    def design_matrix(self) -> np.ndarray:
        """Fixed-effect design, shape (n_runs, p): config one-hot, then the cold column."""
        X = np.zeros((self.n_runs, self.n_configs + int(self.use_cold)))
        X[np.arange(self.n_runs), self.config] = 1.0
        if self.use_cold:
            X[:, -1] = self.cold_sign * self.cold
        return X

    def prior_mean_sd(self) -> tuple[np.ndarray, np.ndarray]:
        """Prior means and SDs of the fixed effects, each shape (p,).

        The cold coefficient's entry is the moment-matched Normal of its one-sided prior
        (mean ``-(1 - COLD_P_NONE) COLD_MEAN_SLOW``, SD :data:`COLD_PRIOR_SD`); the engines
        use the mixture itself (:meth:`cold_prior`).
        """
        m0 = np.full(self.n_configs, float(np.mean(self.y)))
        sd = np.full(self.n_configs, MU_PRIOR_SD)
        if self.use_cold:
            m0 = np.append(m0, -(1.0 - COLD_P_NONE) * COLD_MEAN_SLOW)
            sd = np.append(sd, COLD_PRIOR_SD)
        return m0, sd

    def cold_prior(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mixture (weights, means, SDs) of the cold coefficient's prior
        (:func:`cold_prior_components`)."""
        return cold_prior_components()

    def one_run_per_instance(self) -> bool:
        """True when no instance holds two runs (tau and sigma then not separable)."""
        return bool(np.bincount(self.instance).max() <= 1)

    def residual_df(self) -> int:
        """Runs minus fixed effects: the data's own degrees of freedom for the noise."""
        return self.n_runs - self.n_configs - int(self.use_cold)


@dataclass
class DeltaSummary:
    """Posterior of :math:`\\Delta = \\mu_B - \\mu_A` (log scale) and its readings.

    All probabilities are posterior probabilities; ``rope`` is on the log scale.
    """

    mean: float
    sd: float
    hdi_low: float
    hdi_high: float
    p_gt0: float
    p_gt_rope: float
    p_lt_neg_rope: float
    p_in_rope: float
    rope: float
    hdi_prob: float = 0.95


def pct(x: float) -> float:
    """A log-scale difference as a percentage: 100 (exp(x) - 1)."""
    return 100.0 * math.expm1(x)
