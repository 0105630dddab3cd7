"""Run-to-run TPS noise of one real run (what P(one run beats the baseline) integrates over)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

@dataclass
class NoiseSpec:
    """Run-to-run TPS noise of one real run.

    Attributes
    ----------
    sigma_tps : float or None
        Absolute sd (TPS) of one run; when None, ``cv * baseline TPS``.
    cv : float or None
        Coefficient of variation; None (default) with ``sigma_tps`` None: the platform noise
        prior's predictive noise of one run on a new allocation (:func:`predictive_run_sd`),
        the noise the runs/arm sizing uses. :data:`planner.defaults.ZTEST_CV` (1.16 / 307.08 =
        0.378 %, the published N = 4 repeats) was the default before.
    source : str or None
        Where the figure comes from (None: worded by :func:`run_draft`).
    """

    sigma_tps: float | None = None
    cv: float | None = None
    source: str | None = None

    @property
    def from_prior(self) -> bool:
        """True when neither ``sigma_tps`` nor ``cv`` is given: the platform prior decides."""
        return self.sigma_tps is None and self.cv is None

    def sigma_at(self, tps: float) -> float:
        """Sigma (TPS) of one run at the given TPS level (``sigma_tps``, else ``cv * tps``).

        Raises
        ------
        ValueError
            Neither is set (:attr:`from_prior`: use :func:`predictive_run_sd`).
        """
        if self.sigma_tps is not None:
            return float(self.sigma_tps)
        if self.cv is None:
            raise ValueError("no cv: the noise comes from the platform prior")
        return float(self.cv * tps)


#: Draws of the platform prior's scales behind P(one run beats the baseline) (seeded, 0).
NOISE_PRIOR_DRAWS = 256


def predictive_run_sd(prior, n: int = NOISE_PRIOR_DRAWS,
                      total: np.ndarray | None = None) -> np.ndarray:
    """Relative sd of one run on a new allocation, drawn from a platform noise prior.

    ``sqrt(tau^2 + sigma^2)`` with ``tau`` (between allocations) and ``sigma`` (within one)
    drawn independently from ``prior`` (:class:`models.stats.noise.NoisePrior`): the 20,000 seeded
    draws of :meth:`~models.stats.noise.NoisePrior.total_sd_median` (whose median is the figure
    shown), summarised by their ``n`` quantiles at ``(j + 0.5) / n`` so few points integrate
    over the whole distribution, tails included. Each arm of a one-run-per-arm comparison is its own allocation,
    so the difference has sd ``sqrt(2)`` times this, given the scales.

    Parameters
    ----------
    prior : models.stats.noise.NoisePrior
    n : int
        Number of draws (:data:`NOISE_PRIOR_DRAWS`).
    total : ndarray, optional
        ``prior.total_sd_draws()`` when the caller already holds them.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Relative sds (fractions of the TPS level), > 0.
    """
    total = prior.total_sd_draws() if total is None else total
    # sorted first: the same order statistics, so the same quantiles bit for bit, but
    # np.quantile's partition for 2n kth values took 12-30 ms on 20,000 draws, a sort 1 ms
    return np.quantile(np.sort(total), (np.arange(n) + 0.5) / n)


#: Simulated experiments per design when ``draft`` sizes a run (the assurance planner's
#: minimum is 100; 200 keeps ``planner draft`` within a second of its old run time, Monte
#: Carlo SE of an assurance near 0.8 about 0.03).
