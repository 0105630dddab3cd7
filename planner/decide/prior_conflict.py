"""Where the runs alone contradict an informative noise prior (the verdict's prior-conflict
notes)."""

from __future__ import annotations

import numpy as np

from models.stats.noise import WEAK, NoisePrior
from models.stats.tps_model import TPSData

__all__ = ["CONFLICT_DRAWS", "prior_conflicts", "prior_median", "prior_range"]


#: Draws of a prior scale behind its 95 % range in :func:`prior_conflicts` (seeded, 0;
#: the 2.5 % and 97.5 % order statistics of 4,000 draws are within ~3 % of the quantiles).
CONFLICT_DRAWS = 4_000



def prior_range(scale_prior, rng: np.random.Generator | None = None) -> tuple[float, float]:
    """Central 95 % range of a noise scale's prior (relative SD, log scale), from the 2.5 %
    and 97.5 % order statistics of :data:`CONFLICT_DRAWS` seeded draws (no np.quantile).

    Parameters
    ----------
    scale_prior
        A scale prior of :class:`models.stats.noise.NoisePrior` (``tau`` or ``sigma``).
    rng : numpy.random.Generator, optional
        Default: seed 0.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    draws = np.sort(scale_prior.rvs(CONFLICT_DRAWS, rng))
    return float(draws[CONFLICT_DRAWS // 40]), float(draws[CONFLICT_DRAWS - 1 - CONFLICT_DRAWS // 40])


def prior_median(scale_prior) -> float:
    """Median of a noise scale's prior, from the middle order statistic of
    :data:`CONFLICT_DRAWS` draws (seed 0; within ~3 % of the exact median): no SciPy in a
    verdict process."""
    draws = np.sort(scale_prior.rvs(CONFLICT_DRAWS, np.random.default_rng(0)))
    return float(draws[CONFLICT_DRAWS // 2])


def prior_conflicts(data: TPSData, prior: NoisePrior, label: str) -> list[str]:
    """Notes where the runs alone contradict an informative noise prior.

    The runs are fitted again under the weakly informative prior (:data:`models.stats.noise.WEAK`,
    exact engine). For each scale (``tau``, between instances; ``sigma``, run to run) whose
    95 % HDI from the runs alone lies entirely outside the prior's central 95 % range, a
    note says so: the informative prior then moves the noise the runs show into the other
    scale (a paired A/B on machines 3 % apart, under a prior allowing 0.2-0.55 % between
    instances, read the machines' spread as run noise and came out undecided while a paired
    t test gave p = 0.0005). The rule is conservative: a scale the runs cannot learn has a
    wide HDI and never triggers it.

    Parameters
    ----------
    data : TPSData
        The compared runs (cold flags off).
    prior : NoisePrior
        The informative prior the verdict used.
    label : str
        Its name, for the note.

    Returns
    -------
    list of str
        Zero to two notes; none when no instance holds two or more runs.
    """
    from models.stats.tps_exact import fit_exact

    # a note computed from the data alone needs data that inform it: an instance (a session,
    # in the quick forms) holding two or more runs, of one config or a pair (one run per arm,
    # each in its own session, says nothing about either scale; issue 20)
    if data.n_runs == 0 or np.bincount(data.instance).max() < 2:
        return []
    alone = fit_exact(data, WEAK)
    rng = np.random.default_rng(0)
    joint = None
    if prior.joint is not None:  # the population prior: the ranges of its own joint draws
        joint = dict(zip(("tau", "sigma"), (np.sort(x) for x in prior.joint.rvs(
            CONFLICT_DRAWS, np.random.default_rng(0))), strict=True))
    out = []
    for name, word, sp in (("tau", "sigma_instance (between instances)", prior.tau),
                           ("sigma", "sigma_run (run to run)", prior.sigma)):
        s = alone.scale_summary(name)
        if joint is not None:
            d = joint[name]
            lo, hi = float(d[CONFLICT_DRAWS // 40]), float(d[CONFLICT_DRAWS - 1 - CONFLICT_DRAWS // 40])
        else:
            lo, hi = prior_range(sp, rng)
        if s["hdi_low"] > hi or s["hdi_high"] < lo:
            out.append(f"the runs disagree with the {label} prior on {word}: alone they give "
                       f"{_pct(s['median'])} % (95 % HDI {_pct(s['hdi_low'])} .. "
                       f"{_pct(s['hdi_high'])} %), outside the prior's 95 % range "
                       f"{_pct(lo)} .. {_pct(hi)} %; the prior moves that noise into "
                       "the other scale and the verdict leans on it: check the platform, or "
                       "compare with the weak prior")
    return out


def _pct(x: float) -> str:
    """A relative scale in percent: two decimals, or two significant digits below 0.01 %
    (a stated CV of 0.0001 % read '0.00 .. 0.00 %')."""
    v = 100 * float(x)
    return f"{v:.2f}" if abs(v) >= 0.01 or v == 0 else f"{v:.2g}"
