"""Work the planners do not repeat (memoised analyses and draws), with results identical to repeating it.

* ``_Draws`` draws the same random stream as ``_draws``, only as far as the rows used.
* A scenario memo (``evaluate_fixed(memo=...)``, ``evaluate_sequential_levels(memo=...)``)
  continues scenarios labelled before, on a prefix or in full: every result equals the
  one computed from scratch, whatever was labelled before (an adaptive prefix, the
  assurance alone, other HDI masses).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from models.stats.assurance import (Adaptive, _batched, _build, _chunk_for, _draws, _Draws,
                                    evaluate_fixed, prior_truth, scenario_memo)
from models.stats.assurance_analysis import _analysis, analysis_grid
from models.stats.designs import paired_layout, separate_layout
from models.stats.noise import NoisePrior, ScalePrior
from models.stats.sequential import evaluate_sequential_levels, sequential_plan

PRIOR = NoisePrior(tau=ScalePrior("half_normal", 0.006), sigma=ScalePrior("half_normal", 0.004),
                   name="test")
AD = Adaptive(goals=(0.8, 0.995), false_claim_limit=0.05, false_claim_z=2.0)


@pytest.mark.parametrize("lay", [separate_layout(7, 2), paired_layout(5), paired_layout(9, 4)])
def test_lazy_draws_are_the_same_stream(lay):
    D = 600
    ref_rng = np.random.default_rng([5, 1])
    ref = _draws(lay, D, ref_rng)
    rng = np.random.default_rng([5, 1])
    lazy = _Draws(lay, D, rng)
    truth = prior_truth(PRIOR, 0.003, D, np.random.default_rng(0))
    for e in (1, 250, 251, 600):                # rows [0, e) as the prefixes need them
        got = lazy.upto(e)
        for (zu, ze), (ru, re) in zip(got, ref):
            assert np.array_equal(zu, ru)
            assert np.array_equal(ze[:e], re[:e])
        a, b = _build(lay, truth, got, slice(0, e)), _build(lay, truth, ref, slice(0, e))
        assert all(np.array_equal(x, y) for x, y in zip(a, b))
    lazy.finish()
    assert ref_rng.standard_normal() == rng.standard_normal()   # the stream stands alike


def _same(a, b) -> None:
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y), f.name
        elif isinstance(x, float) and np.isnan(x):
            assert np.isnan(y), f.name
        else:
            assert x == y, f.name


@pytest.mark.parametrize("rule,delta", [("verdict", 0.004), ("verdict", 0.0015),
                                        ("equivalence", 0.0)])
def test_fixed_memo_continues_to_the_same_result(rule, delta):
    lay = separate_layout(8)
    truth = prior_truth(PRIOR, delta, 1000, np.random.default_rng(2))
    kw = dict(rule=rule, seed=4)
    fresh_full = evaluate_fixed(lay, PRIOR, truth, 0.001, **kw)
    fresh_ad = evaluate_fixed(lay, PRIOR, truth, 0.001, adaptive=AD, **kw)
    fresh_a = evaluate_fixed(lay, PRIOR, truth, 0.001, adaptive=AD, error_rates=False, **kw)
    memo: dict = {}
    # the assurance alone, then with the error rates, then in full (the planner's order)
    _same(evaluate_fixed(lay, PRIOR, truth, 0.001, adaptive=AD, error_rates=False, memo=memo,
                         **kw), fresh_a)
    n = []
    _same(evaluate_fixed(lay, PRIOR, truth, 0.001, adaptive=AD, memo=memo,
                         progress=n.append, **kw), fresh_ad)
    _same(evaluate_fixed(lay, PRIOR, truth, 0.001, memo=memo, **kw), fresh_full)
    # again: nothing left to simulate
    n2 = []
    _same(evaluate_fixed(lay, PRIOR, truth, 0.001, memo=memo, progress=n2.append, **kw),
          fresh_full)
    _same(evaluate_fixed(lay, PRIOR, truth, 0.001, adaptive=AD, memo=memo, **kw), fresh_ad)
    assert sum(n2) == 0
    # another seed or ROPE is another scenario
    _same(evaluate_fixed(lay, PRIOR, truth, 0.001, memo=memo, rule=rule, seed=5),
          evaluate_fixed(lay, PRIOR, truth, 0.001, rule=rule, seed=5))
    _same(evaluate_fixed(lay, PRIOR, truth, 0.002, memo=memo, **kw),
          evaluate_fixed(lay, PRIOR, truth, 0.002, **kw))


def test_memo_is_reset_for_another_truth():
    lay = separate_layout(4)
    t1 = prior_truth(PRIOR, 0.004, 400, np.random.default_rng(2))
    t2 = prior_truth(PRIOR, -0.004, 400, np.random.default_rng(3))
    memo: dict = {}
    evaluate_fixed(lay, PRIOR, t1, 0.001, memo=memo)
    _same(evaluate_fixed(lay, PRIOR, t2, 0.001, memo=memo),
          evaluate_fixed(lay, PRIOR, t2, 0.001))
    assert scenario_memo(memo, t2, PRIOR)["__owner__"][0] == id(t2)


def test_batched_memo_over_several_chunks():
    lay = separate_layout(5)
    truth = prior_truth(PRIOR, 0.003, 1500, np.random.default_rng(8))
    tg, sg, _, _ = analysis_grid(PRIOR, lay.n_runs)
    an = _analysis(lay, PRIOR, tg, sg)
    args = (0.001, "verdict", 0.95, 0.95, 400)
    full = _batched(lay, an, truth, np.random.default_rng([1, 1]), *args)
    memo: dict = {}
    part = _batched(lay, an, truth, np.random.default_rng([1, 1]), *args,
                    stop=lambda lab: lab.size >= 500, first=250, memo=memo)
    assert part.labels.size == 500
    again = _batched(lay, an, truth, np.random.default_rng([1, 1]), *args, memo=memo)
    for f in ("labels", "p_gt", "p_lt", "mean", "sd"):
        assert np.array_equal(getattr(again, f), getattr(full, f))
    assert _chunk_for(tg.size, lay.n_runs) > 400     # the planners use one chunk here


@pytest.mark.parametrize("base", ["separate", "paired"])
def test_sequential_memo_continues_to_the_same_result(base):
    full, looks = sequential_plan(base, 4, 16)
    truth = prior_truth(PRIOR, 0.004, 800, np.random.default_rng(6))
    masses = (0.95, 0.975, 0.99, 0.995)
    kw = dict(seed=3, until_false_claim=0.05, until_false_claim_se=2.0)
    fresh_ad = evaluate_sequential_levels(full, looks, PRIOR, truth, 0.001, masses,
                                          adaptive=AD, **kw)
    fresh = evaluate_sequential_levels(full, looks, PRIOR, truth, 0.001, masses, **kw)
    memo: dict = {}
    got_ad = evaluate_sequential_levels(full, looks, PRIOR, truth, 0.001, masses, adaptive=AD,
                                        memo=memo, **kw)
    got = evaluate_sequential_levels(full, looks, PRIOR, truth, 0.001, masses, memo=memo, **kw)
    one = evaluate_sequential_levels(full, looks, PRIOR, truth, 0.001, masses[:1], memo=memo,
                                     seed=3)
    for a, b in zip(got_ad + got + one, fresh_ad + fresh + evaluate_sequential_levels(
            full, looks, PRIOR, truth, 0.001, masses[:1], seed=3)):
        _same(a, b)
    assert len(got_ad) == len(fresh_ad) and len(got) == len(fresh)
