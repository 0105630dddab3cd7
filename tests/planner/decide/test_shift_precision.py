"""planner shift: what the headline rounds away (new-user report: --draws 100 printed
P = 0.56 with no Monte Carlo error, 0.46 at 20,000 draws; --level 0.9999 read "100 %
interval"). Said in ``trust``, which every view prints (planner report too)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from planner.decide.shift import ShiftResult, run_shift


def test_official_p_is_exact_at_any_draws():
    """The official fit's P is a mixture-of-normals CDF: no Monte Carlo error, the same at
    100 and 20,000 draws."""
    a = run_shift(481.53, n_draws=100, seed=0).to_dict()
    b = run_shift(481.53, n_draws=20000, seed=3).to_dict()
    assert a["p_drop"] == b["p_drop"] and a["p_drop_mc_se"] == 0.0
    assert "second decimal is not supported" not in a["trust"]


def test_mc_standard_error_is_binomial_and_said_when_it_hides_the_second_decimal():
    small = run_shift(481.53, n_draws=100, seed=0, evidence="proxy", x_pct=15).to_dict()
    p = small["p_drop"]
    assert small["p_drop_mc_se"] == pytest.approx(np.sqrt(p * (1 - p) / 100))
    assert small["p_drop_mc_se"] > 0.04
    assert "second decimal is not supported" in small["trust"]
    big = run_shift(481.53, n_draws=20000, seed=0, evidence="proxy", x_pct=15).to_dict()
    assert big["p_drop_mc_se"] < 0.005
    assert "Precision:" not in big["trust"]  # nothing rounded away at the defaults
    # the two answers of the report differ by about two standard errors, not by a bug
    assert abs(small["p_drop"] - big["p_drop"]) < 3 * small["p_drop_mc_se"]


def test_level_said_with_its_digits_and_thin_tails_said():
    d = run_shift(481.53, n_draws=20000, seed=0, level=0.9999).to_dict()
    assert "interval level is 99.99 %" in d["trust"]
    assert "rests on 1 of 20,000 draws" in d["trust"]
    assert "Precision:" not in run_shift(481.53, n_draws=20000, seed=0, level=0.95).trust


def test_saved_results_round_trip_and_old_ones_load():
    d = run_shift(481.53, n_draws=1000, seed=0).to_dict()
    assert ShiftResult.from_dict(json.loads(json.dumps(d))).to_dict() == d
    old = {k: v for k, v in d.items() if k != "p_drop_mc_se"}
    assert ShiftResult.from_dict(old).p_drop_mc_se is None


def test_cli_terminal_shows_the_standard_error():
    p = subprocess.run([sys.executable, "-m", "planner", "shift", "--public-tps", "481.53",
                        "--draws", "100", "--evidence", "proxy", "--x", "15"], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "300"})
    assert p.returncode == 0, p.stderr
    assert "Monte Carlo standard error of 0.0466 at 100 draws" in " ".join(p.stdout.split())
