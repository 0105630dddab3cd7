"""Held-out power and false claims of the population prior (bench/bench_population.py): the
public cases judged with a prior refitted without their platform, the issue-20 quick forms,
same-config session pairs of the runs tables and A/A tables drawn from the fitted hierarchy.
The figures are docs/model.md's table ("The population prior over platforms")."""
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bp():
    np.seterr(all="ignore")
    import bench_population

    return bench_population


def test_public_cases_leave_one_platform_out(bp):
    summary = bp.public_cases(lopo=True)["summary"]
    s = summary["all"]
    assert s["planner"]["false_claims"] <= 0.05
    assert s["planner"]["power"] >= s["welch"]["power"]
    assert s["planner"]["wrong_sign"] == 0
    # docs/model.md's figures: 38 / 53 effects (34 / 53 before the grouped issue-1863 session
    # was dropped), and on >= 2 runs per arm 1 / 14 nulls and 13 / 18 effects
    assert s["planner"]["power"] >= 38 / 53 - 1e-9
    m = summary[">=2 runs per arm"]["planner"]
    assert m["false_claims"] <= 1 / 14 + 1e-9 and m["power"] >= 13 / 18 - 1e-9


def test_issue_cases(bp):
    got = {r["case"]: r["label"] for r in bp.issue_cases()}
    assert got["197 vs 340, --cv 20 % (a same-config pair)"] == "undecided"
    assert got["63.6,63.7 vs 61.8,61.6 (confirmed -3 %)"] == "A better"
    # the confirmed -3 % regressions: never the wrong sign (decisive is the target, undecided
    # is today's answer: see docs/model.md)
    for k, v in got.items():
        if "confirmed" in k:
            assert v in ("A better", "undecided")


def test_session_pairs_aa(bp):
    out = bp.session_pairs_aa()
    pairs = sum(d["pairs"] for k, d in out.items() if not k.startswith("rx9060xt"))
    dec = sum(d["decisive"] for k, d in out.items() if not k.startswith("rx9060xt"))
    assert pairs >= 30 and dec / pairs <= 0.05


def test_simulated_aa_from_the_fitted_hierarchy(bp):
    r = bp.simulated_aa(200)
    shares = [v["decisive"] for v in r.values()]
    # Bayesian coherence: ~5 % on tables drawn from the prior itself (200 tables: SE 1.5 %)
    assert max(shares) <= 0.10 and np.mean(shares) <= 0.07
