r"""The hierarchical model of TPS, shared by the exact and the MCMC engine.

On the log scale, run :math:`r` of config :math:`c(r)` on instance :math:`i(r)`:

.. math::

    \log y_r = \mu_{c(r)} + \beta\,\mathrm{cold}_r + u_{i(r)} + \varepsilon_r,\qquad
    u_i \sim N(0, \tau^2),\quad \varepsilon_r \sim N(0, \sigma^2)

(:math:`\varepsilon_r` Student-t with unknown :math:`\nu` in the robust MCMC variant).
Priors: :math:`\mu_c \sim N(m_0, V_0)` with :math:`m_0` the mean log TPS of the data and
:math:`\sqrt{V_0} = 1` (a factor of e: weak even for the -65 % effects in the shipped runs);
:math:`\beta \sim N(0, 0.05^2)` (cold first runs were 1-4 % slow in the shipped runs);
:math:`\tau, \sigma` from a :class:`models.noise.NoisePrior`. Runs of two configs on the same
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
#: Prior SD of the cold-start coefficient on the log scale (5 % of TPS).
COLD_PRIOR_SD = 0.05


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

    @classmethod
    def from_arrays(cls, tps, config, instance, cold=None, session=None, *, use_cold=None):
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
                   sidx, snames)

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
            X[:, -1] = self.cold
        return X

    def prior_mean_sd(self) -> tuple[np.ndarray, np.ndarray]:
        """Prior means and SDs of the fixed effects, each shape (p,)."""
        m0 = np.full(self.n_configs, float(np.mean(self.y)))
        sd = np.full(self.n_configs, MU_PRIOR_SD)
        if self.use_cold:
            m0 = np.append(m0, 0.0)
            sd = np.append(sd, COLD_PRIOR_SD)
        return m0, sd

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
