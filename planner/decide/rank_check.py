"""Calibration checks of :mod:`planner.decide.rank`: how often N identical configs get a
decisive "fastest" (the A/A false-call rate), in simulation and on A/A splits of real runs,
and how often a truly fastest config is named (power).

Used by ``tests/planner/decide/test_rank_calibration.py`` (slow) and ``bench/bench_rank.py
--calibration``, whose figures docs/rank.md reports.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.decide.comparison import Selection
from planner.decide.rank import from_table, rank
from planner.io.rows import Run
from planner.io.runs import RunsTable

__all__ = ["Rate", "simulate", "real_splits", "aa_cells"]

#: Posterior draws of P(fastest) in the checks (the decisive rule's 0.95 threshold is read to
#: a Monte-Carlo SE of at most 0.008).
CHECK_DRAWS = 4000


@dataclass
class Rate:
    """A rate of decisive calls: ``k`` of ``n`` trials (``wrong`` of them naming a config
    that is not the truly fastest), with its binomial SE."""

    k: int
    n: int
    wrong: int = 0

    @property
    def rate(self) -> float:
        return self.k / self.n if self.n else float("nan")

    @property
    def se(self) -> float:
        p = self.rate
        return float(np.sqrt(p * (1 - p) / self.n)) if self.n else float("nan")

    def to_dict(self) -> dict:
        return {"decisive": self.k, "trials": self.n, "rate": self.rate, "se": self.se,
                "wrong": self.wrong}


def simulate(n_configs: int, sims: int, *, runs_per_config: int = 3, effect: float = 0.0,
             platform: str = "local-a10g", rope: str = "0.1%", seed: int = 0,
             layout: str = "one-instance") -> Rate:
    """Decisive rankings of ``n_configs`` simulated configs.

    Each simulation draws the noise scales (tau, sigma) from the platform's noise prior
    (:func:`planner.decide.priors.resolve_prior`), then ``runs_per_config`` warm runs per
    config: ``layout`` ``one-instance`` puts every run on one machine (a local sweep),
    ``own-instance`` each run on its own (HF jobs). Config 0 is faster by ``effect`` (log
    scale; 0 for A/A); the rest are identical. The runs are ranked with that same prior.

    Returns
    -------
    Rate
        Decisive rankings; ``wrong`` counts those not naming config 0 (all of them when
        ``effect`` is 0 every decisive call is a false one).
    """
    from planner.decide.priors import resolve_prior

    prior = resolve_prior(platform, platform).prior
    rng = np.random.default_rng([int(seed), int(n_configs), 7])
    k = wrong = 0
    for s in range(int(sims)):
        tau = float(prior.tau.rvs(1, rng)[0])
        sig = float(prior.sigma.rvs(1, rng)[0])
        runs = []
        u0 = rng.normal(0, tau)
        for c in range(n_configs):
            mu = np.log(300.0) + (effect if c == 0 else 0.0)
            for j in range(runs_per_config):
                inst = "gpu0" if layout == "one-instance" else f"job{c}-{j}"
                u = u0 if layout == "one-instance" else rng.normal(0, tau)
                y = float(np.exp(mu + u + rng.normal(0, sig)))
                runs.append(Run(config=f"c{c}", tps=y, instance=inst, rep=j + 1,
                                platform=platform, run_group="sim", cold=False,
                                metric="decode_wall"))
        fld = from_table(RunsTable(runs, "<sim>"), None, prior=platform)
        r = rank(fld, rope=rope, seed=s, draws=CHECK_DRAWS)
        if r.label == "fastest":
            k += 1
            wrong += r.best != "c0" or effect == 0.0
    return Rate(k, int(sims), int(wrong))


def aa_cells(table: RunsTable, min_runs: int) -> list[tuple[str, str]]:
    """(run_group, config) cells of ``table`` holding at least ``min_runs`` measured runs of
    one metric and workload (:func:`real_splits` splits each such (metric, workload) part)."""
    counts: dict = {}
    for r in table.measured().runs:
        key = (r.run_group, r.config, r.metric, r.workload)
        counts[key] = counts.get(key, 0) + 1
    return sorted({(g, c) for (g, c, _, _), n in counts.items() if n >= min_runs})


def real_splits(table: RunsTable, n_configs: int, splits: int, *, rope: str = "0.1%",
                seed: int = 0, min_runs: int | None = None) -> tuple[Rate, int]:
    """Decisive rankings of A/A splits of real repeated runs.

    Every cell of :func:`aa_cells` with at least ``min_runs`` (default ``n_configs``) runs is
    split ``splits`` times at random into ``n_configs`` pseudo-configs of (nearly) equal
    size, instances, sessions and cold flags kept; each split is ranked as ``planner rank``
    ranks a run group (its platform's prior from the hierarchy).

    Returns
    -------
    (Rate, int)
        The decisive rankings (all false) and the number of cells used.
    """
    from dataclasses import replace

    rng = np.random.default_rng([int(seed), int(n_configs), 11])
    cells = aa_cells(table, min_runs or n_configs)
    k = n = 0
    for g, c in cells:
        sub = table.filter(run_group=g).measured().select([c])
        kinds = sorted({(r.metric, r.workload) for r in sub.runs})
        for m, w in kinds:
            base = [r for r in sub.runs if r.metric == m and r.workload == w]
            if len(base) < (min_runs or n_configs):
                continue
            for s in range(int(splits)):
                perm = rng.permutation(len(base))
                runs = [replace(base[i], config=f"aa{j % n_configs}")
                        for j, i in enumerate(perm)]
                fld = from_table(RunsTable(runs, table.path), None,
                                 selection=Selection(run_group=g, metric=m or None,
                                                     workload=w or None))
                r = rank(fld, rope=rope, seed=s, draws=CHECK_DRAWS)
                n += 1
                k += r.label == "fastest"
    return Rate(k, n, k), len(cells)
