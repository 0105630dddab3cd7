"""Adaptive Monte-Carlo sizes (models.stats.assurance.Adaptive): the stated tolerance.

* A stopped scenario is a prefix of the same simulated experiments: its labels are exactly
  the first k labels of the full simulation (so a scenario run to the end is byte-identical).
* Sequential plans keep their assurance scenario in full: assurance and expected runs are
  identical to the non-adaptive result.
The planners' tolerance (same decisions as the full simulation) is tested in
tests/planner/decide/test_repeats_adaptive.py.
"""

from __future__ import annotations

import math

import numpy as np

from models.stats.assurance import Adaptive, _batched, _chunk_for, evaluate_fixed, prior_truth
from models.stats.assurance_analysis import _analysis, analysis_grid
from models.stats.decision import target_labels
from models.stats.designs import separate_layout
from models.stats.noise import NoisePrior, ScalePrior
from models.stats.sequential import evaluate_sequential_levels, sequential_plan

PRIOR = NoisePrior(tau=ScalePrior("half_normal", 0.006), sigma=ScalePrior("half_normal", 0.004),
                   name="test")


def test_stopped_scenario_is_a_prefix_of_the_full_simulation():
    lay = separate_layout(6)
    truth = prior_truth(PRIOR, 0.004, 2000, np.random.default_rng(3))
    tg, sg, _, _ = analysis_grid(PRIOR, lay.n_runs)
    an = _analysis(lay, PRIOR, tg, sg)
    full = _batched(lay, an, truth, np.random.default_rng([7, 1]), 0.001, "verdict", 0.95,
                    0.95, _chunk_for(tg.size, lay.n_runs))
    seen = []

    def stop(lab):
        seen.append(lab.size)
        return lab.size >= 500

    part = _batched(lay, an, truth, np.random.default_rng([7, 1]), 0.001, "verdict", 0.95,
                    0.95, _chunk_for(tg.size, lay.n_runs), stop=stop, first=250)
    assert seen == [250, 500]
    assert np.array_equal(part.labels, full.labels[:500])
    assert np.array_equal(part.sd, full.sd[:500]) and np.array_equal(part.mean, full.mean[:500])
    # small chunks (several simulations) give the same prefix too
    part2 = _batched(lay, an, truth, np.random.default_rng([7, 1]), 0.001, "verdict", 0.95,
                     0.95, 4000, stop=lambda lab: lab.size >= 1000, first=250)
    assert np.array_equal(part2.labels, full.labels[:1000])

    res = evaluate_fixed(lay, PRIOR, truth, 0.001, seed=7, error_rates=False,
                         adaptive=Adaptive(goals=(0.8,), first=250))
    k = res.sims
    assert k < 2000
    hit = full.labels[:k] == target_labels(truth.delta[:k], 0.001, "verdict")
    assert res.assurance == float(np.mean(hit))
    # far from the goal at its stop: more than 3 smoothed SEs
    p = (hit.sum() + 1) / (k + 2)
    assert abs(res.assurance - 0.8) > 3 * math.sqrt(p * (1 - p) / k)


def test_rate_decisions():
    ad = Adaptive(goals=(0.8,), false_claim_limit=0.05, false_claim_z=2.0)
    assert ad.rate_decided(np.arange(250) < 25)            # 0.10, far below 0.8
    assert not ad.rate_decided(np.arange(250) < 195)       # 0.78: undecided
    assert ad.false_claim_side(np.zeros(250, bool), 2000) == -1
    assert ad.false_claim_side(np.arange(250) < 50, 2000) == 1      # 0.20
    assert ad.false_claim_side(np.arange(250) < 12, 2000) == 0      # 0.048
    # surely over => the reported (rate, binomial SE) fail the 5 % + 2 SE rule as well
    for x in range(0, 250):
        hits = np.arange(250) < x
        side = ad.false_claim_side(hits, 2000)
        p = x / 250
        ok = p <= 0.05 + 2 * math.sqrt(p * (1 - p) / 250)
        if side == 1:
            assert not ok
        if side == -1:
            assert ok


def _tol(p_full: float, p: float, se: float, k_min: int = 250) -> float:
    """4 Monte-Carlo SDs of a rate of k experiments, sqrt(p(1-p)/k) at the full simulation's
    rate, plus 1/k (k from the reported rate and binomial SE; the smallest prefix when the
    SE is 0)."""
    k = round(p * (1 - p) / se ** 2) if se else k_min
    k = max(k, k_min)
    return 4 * math.sqrt(p_full * (1 - p_full) / k) + 1 / k


def test_sequential_assurance_and_runs_identical():
    """The assurance scenario runs in full (identical assurance and expected runs) unless
    every mass is surely below every goal; the false-claim rates stay within tolerance."""
    full, looks = sequential_plan("separate", 2, 12)
    truth = prior_truth(PRIOR, 0.006, 1000, np.random.default_rng(5))
    kw = dict(until_false_claim=0.05, until_false_claim_se=2.0, seed=4)
    a = evaluate_sequential_levels(full, looks, PRIOR, truth, 0.001, (0.95, 0.99), **kw)
    for goals in ((), (0.3,), (0.99,)):
        b = evaluate_sequential_levels(full, looks, PRIOR, truth, 0.001, (0.95, 0.99), **kw,
                                       adaptive=Adaptive(goals=goals, false_claim_limit=0.05,
                                                         false_claim_z=2.0))
        assert [r.hdi_prob for r in a] == [r.hdi_prob for r in b]
        for x, y in zip(a, b):
            assert abs(x.false_claim_rate - y.false_claim_rate) <= _tol(
                x.false_claim_rate, y.false_claim_rate, y.false_claim_se)
            if y.sims == truth.size:
                assert x.assurance == y.assurance
                assert x.expected_runs_per_arm == y.expected_runs_per_arm
                assert np.array_equal(x.runs_per_arm_at_stop, y.runs_per_arm_at_stop)
            else:       # stopped: a prefix, surely below every goal
                assert goals and y.assurance < min(goals)
                assert np.array_equal(x.runs_per_arm_at_stop[:y.sims], y.runs_per_arm_at_stop)
                assert abs(x.assurance - y.assurance) <= _tol(x.assurance, y.assurance,
                                                              y.assurance_se)
    assert b[0].sims < truth.size       # goal 0.99: far above this plan's assurance
