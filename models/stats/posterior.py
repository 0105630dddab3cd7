r"""The interface every posterior engine of the hierarchical TPS model provides.

Two engines fit :mod:`models.stats.tps_model`: the exact grid engine
(:class:`models.stats.tps_exact.GridPosterior`) and the MCMC engine
(:class:`models.stats.tps_mcmc.McmcPosterior`). Code that reads a fit (``planner verdict``, the
repeat planner's existing-runs path) types it as :class:`Posterior` and never asks which engine
made it.

Scales
------
Everything is on the **log-TPS scale**: a config mean :math:`\mu_k` is a log TPS, a difference
:math:`\Delta = \mu_B - \mu_A` is a log ratio (:func:`models.stats.tps_model.pct` turns it into % of
A), and the noise scales :math:`\tau` (between instances) and :math:`\sigma` (run to run on one
instance) are standard deviations of log TPS, i.e. relative SDs (0.004 = 0.4 % of TPS). Only
:meth:`Posterior.level` returns TPS.

Capabilities
------------
:meth:`Posterior.delta_density` is the one optional capability: an engine with a closed-form
density of :math:`\Delta` returns it (the exact engine: a Normal mixture over the grid), an
engine that only has draws returns ``None`` (the MCMC engine; a kernel density estimate would
be a second smoothing choice nobody asked for). Callers branch on ``None``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from models.stats.tps_model import DeltaSummary

__all__ = ["Posterior"]


@runtime_checkable
class Posterior(Protocol):
    """A fitted posterior of the hierarchical TPS model.

    Attributes
    ----------
    names : list of str
        Fixed-effect names: the configs (indices ``0 .. n_configs - 1``), then ``cold`` when
        the cold-start coefficient is modelled.
    n_configs : int
        Number of configs.
    tau, sigma : ndarray, shape (G,) or (S,)
        Support of the noise scales, log-TPS units (relative SDs): grid points (exact engine,
        weighted by its ``w``) or draws (MCMC engine, equally weighted).
    """

    names: list[str]
    n_configs: int
    tau: np.ndarray
    sigma: np.ndarray

    def delta(self, a: int, b: int, rope: float, hdi_prob: float = 0.95) -> DeltaSummary:
        """Posterior of :math:`\\Delta = \\mu_b - \\mu_a` (log scale) read against a ROPE.

        Parameters
        ----------
        a, b : int
            Config indices (in ``names``).
        rope : float
            ROPE half-width, log scale (>= 0).
        hdi_prob : float
            Mass of the highest-density interval.
        """
        ...

    def level(self, k: int) -> float:
        """Posterior mean TPS level of config ``k`` (TPS)."""
        ...

    def scale_summary(self, which: str, hdi_prob: float = 0.95) -> dict:
        """``mean``, ``median``, ``hdi_low``, ``hdi_high`` of ``"tau"`` or ``"sigma"``
        (relative SDs, log scale)."""
        ...

    def delta_density(self, a: int, b: int, x: np.ndarray) -> np.ndarray | None:
        """Posterior density of :math:`\\Delta = \\mu_b - \\mu_a` at log-scale points ``x``
        (per log unit, same shape as ``x``), or ``None`` when the engine has no closed-form
        density (draws only)."""
        ...
