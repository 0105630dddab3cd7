"""The sequential plans' futility rule (:func:`models.stats.sequential._futile`) computes its later
terms only where they can matter; its answer must be the one of the plain formula."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from models.stats.assurance_analysis import Decisions
from models.stats.sequential import _futile


def _plain(mean, sd, n_now, n_cap, rope, hdi_prob, rule, level, thresh):
    s_fin = sd * math.sqrt(n_now / n_cap)
    om = np.sqrt(np.maximum(sd ** 2 - s_fin ** 2, 1e-300))
    zq = float(ndtri(0.5 + hdi_prob / 2.0)) if rule != "superiority" else float(ndtri(level))
    p = ndtr((mean - rope - zq * s_fin) / om)
    if rule != "superiority":
        p = p + ndtr((-rope - zq * s_fin - mean) / om)
        half = rope - zq * s_fin
        p = p + np.where(half > 0, ndtr((half - mean) / om) - ndtr((-half - mean) / om), 0.0)
    return p < thresh


@pytest.mark.parametrize("rule", ["verdict", "equivalence", "superiority"])
def test_futile_equals_the_plain_formula(rule):
    rng = np.random.default_rng(5)
    rope = 0.001
    checked = 0
    for n_now, thresh in [(4, 0.01), (10, 0.01), (20, 0.2), (36, 0.01)]:
        # posterior SDs from far wider than the ROPE to narrower (the equivalence term is
        # nonzero only once the final SD is small), means around and beyond the ROPE
        sd = np.exp(rng.uniform(np.log(1e-5), np.log(0.05), 20000))
        mean = rng.normal(0, 1, 20000) * rng.choice([1e-4, 1e-3, 1e-2], 20000)
        dec = Decisions(np.zeros(mean.size, np.int8), mean * 0, mean * 0, mean, sd)
        got = _futile(dec, n_now, 40, rope, 0.95, rule, 0.95, thresh)
        want = _plain(mean, sd, n_now, 40, rope, 0.95, rule, 0.95, thresh)
        assert np.array_equal(got, want)
        checked += int(got.sum())
    assert 0 < checked < 80000                           # both answers occur
    dec = Decisions(np.zeros(3, np.int8), np.zeros(3), np.zeros(3), np.zeros(3), np.ones(3))
    assert _futile(dec, 40, 40, rope, 0.95, rule, 0.95, 0.01).all()   # at the cap
