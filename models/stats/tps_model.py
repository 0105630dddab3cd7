r"""The hierarchical model of TPS, shared by the exact and the MCMC engine.

On the log scale, run :math:`r` of config :math:`c(r)` on instance :math:`i(r)`:

.. math::

    \log y_r = \mu_{c(r)} + \beta\,\mathrm{cold}_r + u_{i(r)} + \varepsilon_r,\qquad
    u_i \sim N(0, \tau^2),\quad \varepsilon_r \sim N(0, \sigma^2)

(:math:`\varepsilon_r` Student-t with unknown :math:`\nu` in the robust MCMC variant).
Priors: :math:`\mu_c \sim N(m_0, V_0)` with :math:`m_0` the mean log TPS of the data and
:math:`\sqrt{V_0} = 1` (a factor of e: weak even for the -65 % effects in the shipped runs);
the cold term is one slowdown :math:`s_j \ge 0` per cold group (the server session of a cold
run when the runs name sessions, else its instance), :math:`\beta\,\mathrm{cold}_r` above
reading :math:`-s_{j(r)}\mathrm{cold}_r`; the :math:`s_j` are independent draws of the
heavy-tailed, one-sided population prior of :mod:`models.stats.tps_cold` (fitted on every
shipped cold cell), so a cold run is never modelled as faster;
:math:`\tau, \sigma` from a :class:`models.stats.noise.NoisePrior`. Runs of two configs on the same
instance share :math:`u_i`, so paired designs cancel it.

This module holds the data container (:class:`TPSData`) and the common posterior summary
(:class:`DeltaSummary`) both engines return.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# the cold prior lives with the cold-start model; re-exported here
from models.stats.tps_cold import (COLD_NONE_SD, COLD_WEIGHTS, MAX_COLD_GROUPS,  # noqa: F401
                                   cold_prior_components, moment_normal)

#: Prior SD of each config mean on the log scale (a factor e: weak even for -65 % effects).
MU_PRIOR_SD = 1.0


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
    cold_group : ndarray of int, shape (n_runs,), optional
        Cold group of each cold run (index into ``cold_group_names``; -1 on warm runs): the
        runs sharing one slowdown (one server session, else one instance). Default: the
        run's instance.
    cold_weights : tuple of float
        Weights of the cold prior's components (:data:`models.stats.tps_cold.COLD_WEIGHTS`;
        a held-out fit may pass its own).
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
    cold_group: np.ndarray | None = None
    cold_group_names: list[str] = field(default_factory=list)
    cold_weights: tuple = COLD_WEIGHTS
    #: More than :data:`models.stats.tps_cold.MAX_COLD_GROUPS` cold groups were read as one.
    cold_groups_merged: bool = False

    @classmethod
    def from_arrays(cls, tps, config, instance, cold=None, session=None, *, use_cold=None,
                    lower_is_better: bool = False, cold_group=None):
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
        cold_group : sequence of str, shape (n,), optional
            The cold group of each run (read on cold runs only); default its instance.
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
        use = bool(use_cold and cold.any())
        glab = list(instance) if cold_group is None else list(cold_group)
        gnames = list(dict.fromkeys(glab[k] for k in np.flatnonzero(cold))) if use else []
        merged = len(gnames) > MAX_COLD_GROUPS
        if merged:   # too many for one slowdown each (models.stats.tps_cold): one shared
            glab, gnames = ["all"] * tps.size, ["all"]
        gmap = {g: k for k, g in enumerate(gnames)}
        gidx = np.array([gmap[glab[k]] if cold[k] and use else -1 for k in range(tps.size)],
                        int)
        out = cls(np.log(tps), cidx, iidx, cold, cnames, inames, use,
                  sidx, snames, -1.0 if lower_is_better else 1.0, gidx, gnames)
        out.cold_groups_merged = merged
        return out

    @property
    def n_runs(self) -> int:
        return int(self.y.size)

    @property
    def n_configs(self) -> int:
        return len(self.config_names)

    @property
    def n_instances(self) -> int:
        return len(self.instance_names)

    @property
    def n_cold(self) -> int:
        """Cold groups modelled (one slowdown each; 0 without the cold term)."""
        if not self.use_cold:
            return 0
        if self.cold_group is None or not self.cold_group_names:
            return 1
        return len(self.cold_group_names)

    def _groups(self) -> np.ndarray:
        """Cold group per run (-1 warm), one group when none were given."""
        if self.cold_group is None or not self.cold_group_names:
            return np.where(self.cold, 0, -1)
        return np.where(self.cold, self.cold_group, -1)

    def design_matrix(self) -> np.ndarray:
        """Fixed-effect design, shape (n_runs, p): config one-hot, then one cold column per
        cold group (:attr:`n_cold`)."""
        J = self.n_cold
        X = np.zeros((self.n_runs, self.n_configs + J))
        X[np.arange(self.n_runs), self.config] = 1.0
        if J:
            g = self._groups()
            k = np.flatnonzero(g >= 0)
            X[k, self.n_configs + g[k]] = self.cold_sign
        return X

    def prior_mean_sd(self) -> tuple[np.ndarray, np.ndarray]:
        """Prior means and SDs of the fixed effects, each shape (p,).

        Each cold group's entry is the moment-matched Normal of its one-sided prior
        (:func:`models.stats.tps_cold.moment_normal`); the engines use the mixture itself
        (:meth:`cold_prior`).
        """
        m0 = np.full(self.n_configs, float(np.mean(self.y)))
        sd = np.full(self.n_configs, MU_PRIOR_SD)
        if self.use_cold:
            mm, sm = moment_normal(self.cold_weights)
            m0 = np.append(m0, np.full(self.n_cold, mm))
            sd = np.append(sd, np.full(self.n_cold, sm))
        return m0, sd

    def cold_prior(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mixture (weights, means, SDs) of one cold group's prior
        (:func:`models.stats.tps_cold.cold_prior_components`); the groups' are independent."""
        return cold_prior_components(self.cold_weights)

    def one_run_per_instance(self) -> bool:
        """True when no instance holds two runs (tau and sigma then not separable)."""
        return bool(np.bincount(self.instance).max() <= 1)

    def residual_df(self) -> int:
        """Runs minus fixed effects: the data's own degrees of freedom for the noise."""
        return self.n_runs - self.n_configs - self.n_cold


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
