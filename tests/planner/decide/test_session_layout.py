"""The quick forms' stated session layout (``verdict --sessions``), and sessions in the
"to settle" sizing: :func:`planner.decide.comparison.one_machine`,
:attr:`planner.decide.comparison.Comparison.arm_sessions`, :func:`models.stats.designs.units`
and the session SD in :func:`planner.decide.repeats.posterior_truth`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from models.stats.designs import units
from models.stats.tps_model import TPSData
from planner.decide import comparison

A = "35.73,35.76,35.94"      # the confirmed -3 % regression, three runs per arm
B = "34.43,34.47,35.23"


def _verdict(cli, *extra):
    code, out, err = cli("verdict", "--a-runs", A, "--b-runs", B, "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_per_run_sessions_call_the_regression_that_per_arm_sessions_cannot(cli):
    """Each run a fresh process on one machine: the runs' spread holds the session noise,
    so the 3 % gap is 4 of its SDs and decisive; A's runs in one session and B's in another
    leave the offset between the two sessions unmeasured (undecided, as without a layout)."""
    per_run = _verdict(cli, "--sessions", "per-run")
    assert per_run["label"] == "A better"
    assert -5.5 < per_run["delta_pct"]["hdi_low"] < per_run["delta_pct"]["hdi_high"] < -0.5
    g = per_run["grouping"]
    assert (g["instances"], g["sessions"], g["sessions_modelled"]) == (1, 6, True)
    assert g["session_source"] == "the stated layout, per-run"
    assert any("every run on one machine, as stated (per-run)" in n for n in per_run["notes"])
    assert not any("each arm's runs are taken as one session" in n for n in per_run["notes"])

    shared = _verdict(cli, "--sessions", "shared")
    assert shared["label"] == "A better"
    assert (shared["grouping"]["instances"], shared["grouping"]["sessions"]) == (1, 1)

    per_arm = _verdict(cli, "--sessions", "per-arm")
    default = _verdict(cli)
    assert per_arm["label"] == default["label"] == "undecided"
    assert per_arm["grouping"]["sessions"] == 2 and per_arm["grouping"]["sessions_modelled"]
    # one machine with a session per arm reads the gap as the default does (an offset
    # between two sessions, its prior scaled by the runs' spread): HDI ends within 0.5
    # points (with the session SD's nodes stopping at 2.5 % it was -6.20 .. +0.15 %)
    for end in ("hdi_low", "hdi_high"):
        assert abs(per_arm["delta_pct"][end] - default["delta_pct"][end]) < 0.5


def test_per_arm_sessions_plan_new_sessions_not_pairs(cli):
    """A pair of new runs is two more sessions: the advice sizes separate runs whose offset
    includes the session SD, as many as the default reading asks for within the simulations'
    spread (it asked for 1 run in A/B pairs before: the re-analysis merged A's and B's
    sessions into one instance and read their gap as evidence)."""
    per_arm = _verdict(cli, "--sessions", "per-arm")
    assert per_arm["more_runs_per_arm"] is not None and per_arm["more_runs_per_arm"] >= 3
    assert "each on a new instance" in per_arm["more_runs_note"]
    assert "pairs" not in per_arm["more_runs_note"]


def test_a_table_whose_sessions_hold_one_config_each_plans_no_pairs(cli, tmp_path):
    f = tmp_path / "runs.csv"
    rows = ["config,tps,instance,session"]
    rows += [f"A,{x},m0,sa" for x in A.split(",")] + [f"B,{x},m0,sb" for x in B.split(",")]
    f.write_text("\n".join(rows) + "\n")
    code, out, err = cli("repeats", "--runs", f, "--a", "A", "--b", "B", "--json",
                         "--sims", "400")
    assert code == 0, err
    d = json.loads(out)
    assert {r["design"] for r in d["designs"]} == {"separate", "sequential"}
    assert any("no paired design: A's and B's runs are in server sessions of their own" in n
               for n in d["notes"])
    assert f.read_text().startswith("config,tps,instance,session\n")


@pytest.mark.parametrize("args, field", [
    (("--sessions", "per-run", "--paired"), "--sessions"),
    (("--sessions", "each"), "--sessions"),
    (("--instance", "box1"), "--instance"),
])
def test_bad_layouts_are_refused_with_their_option(cli, args, field):
    code, out, err = cli("verdict", "--a-runs", A, "--b-runs", B, *args)
    assert code == 2 and field in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_sessions_with_a_runs_file_is_refused(cli, tmp_path):
    f = tmp_path / "runs.csv"
    f.write_text("config,tps\nA,1\nB,2\n")
    code, _, err = cli("verdict", f, "--a", "A", "--b", "B", "--sessions", "per-run")
    assert code == 2 and "--sessions" in err and "session columns" in err


def test_one_machine_names_sessions_by_layout():
    t = comparison.from_values([1.0, 2.0], [3.0, 4.0]).table
    for layout, want in (("per-arm", ["A-session", "A-session", "B-session", "B-session"]),
                         ("per-run", ["A-run-0", "A-run-1", "B-run-0", "B-run-1"]),
                         ("shared", ["", "", "", ""])):
        out = comparison.one_machine(t, layout)
        assert [r.session for r in out.runs] == want
        assert {r.instance for r in out.runs} == {"machine"}
    assert [r.session for r in t.runs] == ["", "", "", ""]      # the input is kept


def test_units_split_instances_by_session():
    d = TPSData.from_arrays([1.0, 1.1, 1.2, 1.3, 1.4], ["A", "A", "B", "B", "B"],
                            ["m0", "m0", "m0", "m1", "m1"], None, ["s", "s", "t", "u", "u"])
    u = units(d)
    assert u[0] == u[1] and len({u[1], u[2], u[3]}) == 3 and u[3] == u[4]
    plain = TPSData.from_arrays([1.0, 1.1, 1.2], ["A", "B", "B"], ["m0", "m0", "m1"])
    assert list(units(plain)) == list(np.asarray(plain.instance))


def test_the_truth_adds_the_session_sd_to_new_instances():
    from models.stats.designs import Existing
    from models.stats.tps_exact import fit_exact
    from planner.decide.priors import resolve_prior
    from planner.decide.repeats import posterior_truth

    comp = comparison.from_values([float(x) for x in A.split(",")],
                                  [float(x) for x in B.split(",")], layout="per-arm")
    data = comp.data(False)
    post = fit_exact(data, resolve_prior(None, "", None, None).prior)
    assert post.omega is not None
    t = posterior_truth(post, Existing.from_tpsdata(data), 4000, 0)
    # every drawn between-instance SD is at least its grid point's session SD
    rng = np.random.default_rng([0, 0])
    g = rng.choice(post.w.size, size=4000, p=post.w / post.w.sum())
    assert np.all(t.tau >= post.omega[g] * (1 - 1e-12))


def test_the_session_sd_reaches_noisy_platforms_scale():
    """A withdrawn llama.cpp claim (5 reps per arm on one phone, 2.5 % and 6.5 % spread, a
    10 % gap; public case llamacpp-9921-tg128): stated as one session per arm it was "A
    better", because the session SD's quadrature stopped at 2.5 % while the population
    prior scales it with a 4 % run noise. It is undecided, as without the statement."""
    from models.stats.tps_sessions import SESSION_NODE_HI, session_nodes

    nodes, lw = session_nodes()
    assert nodes[-1] == pytest.approx(SESSION_NODE_HI) and np.isclose(np.exp(lw).sum(), 1)
    assert np.all(np.diff(np.log(nodes)) < 0.47)


def test_a_withdrawn_claim_stated_per_arm_stays_undecided(cli):
    code, out, err = cli("verdict", "--a-summary", "mean=33.53,sd=0.83,n=5", "--b-summary",
                         "mean=30.10,sd=1.96,n=5", "--sessions", "per-arm", "--json")
    assert code == 0, err
    assert json.loads(out)["label"] == "undecided"


@pytest.mark.parametrize("extra", [[], ["--sessions", "shared"], ["--sessions", "per-run"]])
def test_runs_without_any_spread_get_no_label(cli, extra):
    """New-user report: 308,308 vs 309,309 (rounded or copied runs) was "B better" under
    every layout: equal values pull the run noise to the grid's floor; one distribution at
    CV 0.1 % rounded to whole TPS gave 10 of 100 decisive A/A calls at 2 runs per arm."""
    code, out, err = cli("verdict", "--a-runs", "308,308", "--b-runs", "309,309", "--json",
                         *extra)
    assert code == 0, err
    d = json.loads(out)
    assert d["label"] == "undecided" and d["more_runs_code"] == "no_spread"
    assert d["more_runs_per_arm"] is None
    code, out, _ = cli("verdict", "--a-runs", "308,308", "--b-runs", "309,309", *extra)
    assert out.startswith("No verdict: each arm's runs hold one value")
    # a stated noise measures what the runs cannot: the gap is judged against it
    code, out, _ = cli("verdict", "--a-runs", "308,308", "--b-runs", "309,309", "--cv", "0.1%",
                       "--json", *extra)
    stated = json.loads(out)
    assert stated["more_runs_code"] != "no_spread"
    assert stated["label"] == ("undecided" if extra[-1:] == ["per-run"] else "B better")
    # one arm with a spread measures the noise for both
    code, out, _ = cli("verdict", "--a-runs", "308,308", "--b-runs", "309,309.6", "--json",
                       *extra)
    assert json.loads(out)["more_runs_code"] != "no_spread"


def test_quick_forms_refuse_a_baseline(cli):
    code, _, err = cli("verdict", "--a-runs", A, "--b-runs", B, "--baseline", "foo")
    assert code == 2 and "field '--baseline'" in err
