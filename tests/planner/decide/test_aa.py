"""Calibration of the verdict on the shipped real runs: A/A splits and LOO prediction."""

import pytest

#: slow: scheduled first and kept on one worker (tests/conftest.py)
pytestmark = pytest.mark.slow

from models.stats.noise import platform_prior
from planner.io.runs import read_runs
from planner.decide.validation import aa_study, logo_study, loo_coverage, repeated_cells


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

    Predictive coverage meets 85-95 % in every family with >= 50 predicted runs, and the
    false-decisive rate meets <= 5 % in every family (2.8 % overall at 2 splits per config,
    once lone cold first runs are modelled as cold; bench/bench_calibration.py prints that
    table). The test uses 1 split per config to keep the suite under 10 minutes: decode_wall
    2.7 % false-decisive, coverage 88.6 % (307 runs), probes 0 % and 89.6 % (115 runs) with the
    former shared cold coefficient; with a slowdown per instance and the cold prior refitted
    without each group's fold (bench/bench_cold.py) decode_wall 4.4 % (5 of 113), coverage
    88.3 % (307 runs), probes 0 % and 89.6 %.
    """
    r = logo_study(read_runs(runs_csv), splits=1, seed=0, min_runs=3)
    for fam, v in r["families"].items():
        if v["coverage_n"] >= 50:
            assert 0.85 <= v["coverage"] <= 0.95, (fam, v)
    for fam, v in r["families"].items():
        assert v["rates"]["verdict"] <= 0.05, (fam, v["rates"])
