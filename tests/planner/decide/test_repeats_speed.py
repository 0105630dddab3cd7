"""``planner repeats`` speed changes that keep the result bit for bit.

The search beyond the cap (``_Sizer.beyond_cap``) finds the first grid point whose Normal
approximation reaches the target by bisection (:func:`planner.decide.repeats._first_reaching`,
the approximation is nondecreasing in the runs per arm): the same index, assurance and SE
as a scan of the whole grid, over rules, ROPEs, effects (fixed and drawn), priors, runs
per allocation and targets.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from models.stats.assurance import prior_truth
from models.stats.assurance_known import normal_assurance
from models.stats.noise import platform_prior
from planner.decide.sizing import _first_reaching


def _grid(cap: int, limit: int = 5000) -> np.ndarray:
    # as _Sizer.beyond_cap builds it
    g = np.unique(np.concatenate([np.arange(cap + 1, min(limit, 4 * cap) + 1),
                                  np.round(np.geomspace(4 * cap, limit, 400)),
                                  [limit]]).astype(int))
    return g[g > cap]


@pytest.mark.parametrize("platform", ["hf-a10g-small", "local-a10g", "published-n4"])
def test_bisection_equals_the_full_scan(platform):
    pr = platform_prior(platform)
    rng = np.random.default_rng(4)
    hits = cases = 0
    for dpct in (0.05, 0.143, 0.5, -0.2, 0.0):
        for drawn in (False, True):
            d = math.log1p(dpct / 100)
            truth = prior_truth(pr, rng.normal(d, 0.002, 300) if drawn else d, 400,
                                np.random.default_rng([2, 0]))
            for rule in ("verdict", "superiority", "equivalence"):
                if rule == "superiority" and dpct <= 0:
                    continue
                for rope in (0.0, math.log1p(0.001)):
                    for rpi, cap in ((1, 40), (3, 12)) if rope else ((1, 40),):
                        grid = _grid(cap)

                        def f(n, rpi=rpi, truth=truth, rope=rope, rule=rule):
                            return normal_assurance(n, rpi, truth, rope, rule=rule)

                        a, se = f(grid)
                        for target in (0.5, 0.8, 0.95):
                            hit = np.flatnonzero(a >= target)
                            want = ((int(hit[0]), float(a[hit[0]]), float(se[hit[0]]))
                                    if hit.size else (None, float(a[-1]), float(se[-1])))
                            assert _first_reaching(grid, target, f) == want
                            cases += 1
                            hits += hit.size > 0
    assert hits > cases // 4 and hits < cases     # both outcomes are exercised
