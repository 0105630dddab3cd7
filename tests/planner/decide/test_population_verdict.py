"""The population prior in verdicts (issue 20): the stated 20 % CV pair, the JSON naming."""
import json
import math


def _judge(a, b, **kw):
    from models.stats.decision import label_from
    from models.stats.tps_exact import fit_exact
    from planner.decide.comparison import from_values

    comp = from_values(a, b, **kw)
    return label_from(fit_exact(comp.data(), comp.prior).delta(0, 1, math.log1p(0.001)))


def test_stated_twenty_percent_cv_single_pair_is_undecided():
    # with sigma at 20 % the gap log(340/197) is 1.95 SD of a difference (issue 20)
    assert _judge([197.0], [340.0], cv="20%") == "undecided"


def test_population_prior_in_a_verdict_json(cli):
    code, out, err = cli("verdict", "--a-runs", "63.6,63.7", "--b-runs", "61.8,61.6", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["prior"]["name"] == "population" and r["prior"]["level"] == "unknown-platform"
    assert "population prior over platforms" in r["prior"]["source"]
    assert any("population prior over platforms was used" in n for n in r["notes"])


def test_prior_conflict_needs_an_instance_with_two_runs():
    # one run per arm, each its own session: the runs say nothing about either scale (issue 20)
    from models.stats.noise import platform_prior
    from models.stats.tps_model import TPSData
    from planner.decide.prior_conflict import prior_conflicts

    d = TPSData.from_arrays([197.0, 340.0], ["A", "B"], ["A-session", "B-session"], None, None,
                            use_cold=False)
    assert prior_conflicts(d, platform_prior("local-a10g"), "platform:local-a10g") == []


def test_runs_without_any_spread_are_named(cli):
    # three identical values per arm: no measurement of the noise (a new user's ingested
    # mean_tpot_ms), said beside whatever the prior makes of it
    code, out, err = cli("verdict", "--a-runs", "10.00,10.00,10.00", "--b-runs", "9.90,9.95,9.90",
                         "--lower-is-better", "--json")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    flat = [n for n in notes if "all equal" in n]
    assert len(flat) == 1 and flat[0].startswith("A's 3 runs are all equal (10)")
    assert "B's" not in flat[0]
