"""Calibration of the verdict on the shipped real runs: A/A splits and LOO prediction."""

import pytest

from models.noise import platform_prior
from planner.runs import read_runs
from planner.validation import aa_study, logo_study, loo_coverage, repeated_cells


@pytest.fixture
def local_runs(runs_csv):
    return read_runs(runs_csv).filter(platform="local-a10g", metric="decode_wall",
                                      workload="128x512")


def test_aa_false_decisive_rate_is_at_most_5_percent(local_runs):
    cells = repeated_cells(local_runs, 6)
    assert len(cells) == 13
    r = aa_study(cells, platform_prior("local-a10g"), splits=12, seed=0)
    assert r["n"] == 156
    assert r["rates"]["verdict"] <= 0.05
    # the reference z-test (sigma = 1.16 TPS) over-calls on local runs: documented in docs/
    assert r["rates"]["z_test"] > r["rates"]["verdict"]


def test_loo_predictive_interval_covers_about_90_percent(local_runs):
    r = loo_coverage(repeated_cells(local_runs, 3), platform_prior("local-a10g"), prob=0.90)
    assert r["n"] == 252
    assert 0.86 <= r["coverage"] <= 0.94


@pytest.mark.slow
def test_leave_one_group_out_calibration_per_family(runs_csv):
    """Issue 8 targets on every shipped (platform, metric family), each run group checked with a
    hierarchy fitted without it (bench/bench_calibration.py prints the table).

    Predictive coverage meets 85-95 % in every family with >= 50 predicted runs. The
    false-decisive rate does not yet meet <= 5 %: most wrong calls are splits where one
    pseudo-config holds only first (rep 0) runs, which the verdict treats as warm (the
    cold-start part of issue 8, not done here); the rest is ~6 % on decode_wall and probes.
    """
    r = logo_study(read_runs(runs_csv), splits=2, seed=0, min_runs=3)
    for fam, v in r["families"].items():
        if v["coverage_n"] >= 50:
            assert 0.85 <= v["coverage"] <= 0.95, (fam, v)
    if any(v["rates"]["verdict"] > 0.05 for v in r["families"].values()):
        pytest.xfail("false-decisive rate > 5 % in some family (lone cold first runs): "
                     + ", ".join(f"{k} {v['rates']['verdict']:.3f}"
                                 for k, v in r["families"].items()))
