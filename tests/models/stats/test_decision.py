"""The decision rule (models.stats.decision) and the assurance kernels that implement it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from models.stats.assurance_analysis import decide
from models.stats.decision import (A_BETTER, B_BETTER, EQUIVALENT, LABEL_CODES, LABEL_NAMES, LABELS,
                             UNDECIDED, label_code, label_from, target_labels)
from models.stats.mixture import mixture_summary
from models.stats.tps_model import DeltaSummary

R = math.log1p(0.001)                      # the default ROPE, 0.1 %


def test_codes_and_names_are_one_table():
    assert (UNDECIDED, B_BETTER, A_BETTER, EQUIVALENT) == (0, 1, 2, 3)
    assert set(LABELS) == set(LABEL_NAMES.values())
    assert all(LABEL_CODES[LABEL_NAMES[c]] == c for c in LABEL_NAMES)


@pytest.mark.parametrize("lo,hi,rope,want", [
    (0.002, 0.01, 0.001, "B better"),
    (0.001, 0.01, 0.001, "undecided"),        # L = r: not strictly above
    (-0.01, -0.002, 0.001, "A better"),
    (-0.01, -0.001, 0.001, "undecided"),      # U = -r
    (-0.0005, 0.0008, 0.001, "equivalent"),
    (-0.001, 0.0008, 0.001, "undecided"),     # L = -r: not strictly inside
    (-0.0005, 0.002, 0.001, "undecided"),
    (-0.0005, 0.0008, 0.0, "undecided"),      # no equivalence without a ROPE
    (1e-9, 0.01, 0.0, "B better"),
])
def test_hdi_rule(lo, hi, rope, want):
    assert LABEL_NAMES[label_code(lo, hi, rope)] == want
    assert LABEL_NAMES[label_code(lo, hi, rope, rule="equivalence")] == want
    s = DeltaSummary(0, 0, lo, hi, 0, 0, 0, 0, rope)
    assert label_from(s) == want
    assert label_from(s, ok=False) == "undecided"


def test_superiority_rule_reads_p_gt_rope_only():
    # an HDI far above the ROPE does not matter: superiority looks at P(delta > r) >= level
    assert label_code(0.1, 0.2, R, rule="superiority", p_gt_rope=0.95) == B_BETTER
    assert label_code(0.1, 0.2, R, rule="superiority", p_gt_rope=0.9499) == UNDECIDED
    assert label_code(-0.2, -0.1, R, rule="superiority", p_gt_rope=0.0) == UNDECIDED
    assert label_code(0, 0, R, rule="superiority", p_gt_rope=0.97, level=0.975) == UNDECIDED
    with pytest.raises(ValueError, match="p_gt_rope"):
        label_code(0.1, 0.2, R, rule="superiority")
    with pytest.raises(ValueError, match="unknown decision rule"):
        label_code(0.1, 0.2, R, rule="frequentist")


def test_target_labels():
    d = np.array([-0.01, -R, 0.0, R, 0.01])
    assert target_labels(d, R, "verdict").tolist() == [2, 3, 3, 3, 1]
    assert target_labels(d, R, "superiority").tolist() == [-1, -1, -1, -1, 1]
    assert target_labels(d, R, "equivalence").tolist() == [-1, -1, 3, -1, -1]


def _random_mixtures(rng, D, G, scale):
    """D unimodal Normal mixtures of G components shaped like the analysis posteriors:
    component SDs around ``scale``, means spread less than their SDs around centres within
    ±3 ROPE widths, so that every label occurs, some near their boundaries."""
    sd = scale * np.exp(rng.uniform(-0.5, 0.5, G))
    centre = rng.uniform(-3.0, 3.0, D) * R
    m = centre[:, None] + rng.normal(0.0, 0.4, (D, G)) * sd[None, :]
    lw = rng.normal(0.0, 1.5, (D, G))
    return lw, m, sd


@pytest.mark.parametrize("rule,hdi_prob,level", [("verdict", 0.95, 0.95),
                                                 ("verdict", 0.99, 0.95),
                                                 ("superiority", 0.95, 0.9)])
@pytest.mark.parametrize("exact_probs", [True, False])
def test_kernel_labels_equal_the_python_rule(rule, hdi_prob, level, exact_probs):
    """The numba kernel (CDF / density comparisons, tabulated fast path) gives the label of
    the Python rule applied to mixture_summary's HDI and P(delta > r), on random mixtures;
    only mixtures whose HDI end (or P) lies within 1e-7 of the boundary are left out."""
    rng = np.random.default_rng(20240607 + int(1000 * hdi_prob) + 7 * exact_probs)
    D, G = 200, 6
    seen = {c: 0 for c in LABEL_NAMES}
    compared = 0
    for scale in (1e-4, 3e-4, 1e-3):             # posterior SDs from 0.1 to 1 ROPE width
        lw, m, sd = _random_mixtures(rng, D, G, scale)
        dec = decide(lw, m, sd, R, rule=rule, level=level, hdi_prob=hdi_prob,
                     exact_probs=exact_probs)
        for d in range(D):
            w = np.exp(lw[d] - lw[d].max())
            s = mixture_summary(w / w.sum(), m[d], sd ** 2, R, hdi_prob)
            if rule == "superiority":
                if abs(s.p_gt_rope - level) < 1e-7:
                    continue
            elif min(abs(s.hdi_low - R), abs(s.hdi_low + R), abs(s.hdi_high - R),
                     abs(s.hdi_high + R)) < 1e-7 * (1.0 + s.sd / R):
                continue
            want = label_code(s.hdi_low, s.hdi_high, R, rule=rule, p_gt_rope=s.p_gt_rope,
                              level=level)
            assert dec.labels[d] == want, (scale, d, s, dec.labels[d])
            seen[want] += 1
            compared += 1
    assert compared >= 0.95 * 3 * D
    if rule == "superiority":
        assert seen[B_BETTER] >= 50 and seen[UNDECIDED] >= 50
    else:
        assert min(seen.values()) >= 20, seen
