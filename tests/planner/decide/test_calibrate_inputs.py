"""planner calibrate on degenerate input: identical values are refused (as --aa-runs), and
runs without shared instances say that the instance/run split is not learned."""

import json


def test_identical_runs_are_refused(cli, tmp_path):
    p = tmp_path / "same.csv"
    p.write_text("config,tps\nA,300\nA,300\nA,300\nB,310\nB,310\n")
    code, _, err = cli("calibrate", p)
    assert code == 2 and "all equal" in err and "Traceback" not in err


def test_without_shared_instances_the_split_is_flagged(cli, tmp_path):
    p = tmp_path / "noinst.csv"
    p.write_text("config,tps\nA,300\nA,301\nA,300.5\nB,310\nB,311\n")
    code, out, err = cli("calibrate", p, "--json")
    assert code == 0, err
    assert "not a split" in json.loads(out)["split_note"]
    q = tmp_path / "inst.csv"
    q.write_text("config,tps,instance\nA,300,g1\nA,301,g1\nA,300.5,g2\nB,310,g2\nB,311,g1\n")
    code, out, err = cli("calibrate", q, "--json")
    assert code == 0 and json.loads(out)["split_note"] is None


def test_equal_runs_within_each_instance_are_refused(cli, tmp_path):
    """Instances differ but every instance repeats one value: sigma_run is not measured
    (it wrote a 0.002 % prior); one A and one B run per instance stays valid."""
    p = tmp_path / "eq.csv"
    p.write_text("config,instance,rep,tps\nA,i1,1,100\nA,i1,2,100\nA,i2,1,101\nA,i2,2,101\n")
    code, _, err = cli("calibrate", p)
    assert code == 2 and "run-to-run spread" in err
    q = tmp_path / "pairs.csv"
    q.write_text("config,instance,tps\nA,i1,100\nB,i1,101\nA,i2,100.5\nB,i2,101.2\n"
                 "A,i3,99.8\nB,i3,100.9\n")
    code, _, err = cli("calibrate", q)
    assert code == 0, err


def test_a_half_normal_prior_takes_no_df(cli, tmp_path):
    import json

    p = tmp_path / "p.json"
    p.write_text(json.dumps({"tau": {"kind": "half_normal", "scale": 0.01, "df": 3},
                             "sigma": {"kind": "half_normal", "scale": 0.01}}))
    code, _, err = cli("verdict", "--a-runs", "300,301", "--b-runs", "302,303", "--prior", p)
    assert code == 2 and "tau.df" in err


def test_sigma_instance_unlearnable_is_said(tmp_path, cli):
    """Each config on its own instance: sigma_instance cannot be told from the config
    means, and the printed 'posterior' is the weak starting prior; a note says so (it read
    as learned). A config on two instances learns it: no note."""
    p = tmp_path / "one_each.csv"
    p.write_text("config,tps,instance\nA,300,i1\nA,301,i1\nB,310,i2\nB,311,i2\n")
    code, out, err = cli("calibrate", p)
    assert code == 0, err
    assert "sigma_instance above is the weak starting prior, not learned" in out
    q = tmp_path / "spans.csv"
    q.write_text("config,tps,instance\nA,300,i1\nA,301,i1\nA,303,i2\nA,304,i2\n"
                 "B,310,i2\nB,311,i2\n")
    code, out, err = cli("calibrate", q)
    assert code == 0, err
    assert "not learned" not in out


def _outlier_table(tmp_path, factor):
    """Two configs x three warm runs on one instance (a real local-a10g smoke pair), one run
    of the first config scaled by ``factor`` (a typo, a failed run)."""
    a = [257.4245, 257.3661, 257.4174]
    b = [271.8264, 273.1975, 272.3653]
    a[1] *= factor
    f = tmp_path / f"runs_{factor}.csv"
    f.write_text("config,instance,rep,tps\n"
                 + "".join(f"A,box,{k + 1},{x}\n" for k, x in enumerate(a))
                 + "".join(f"B,box,{k + 1},{x}\n" for k, x in enumerate(b)))
    return f


def test_a_typo_run_is_named_as_a_prior_conflict_not_a_confident_prior(cli, tmp_path):
    """New-user report: one run at a tenth of its value gave sigma_run 18.0 % [16.2, 20.0]
    and a prior written at df 10 from 4 df of runs: the HalfNormal(2 %) starting prior held
    the fit far below the runs' own spread (~130 %) and nothing said so."""
    code, out, err = cli("calibrate", _outlier_table(tmp_path, 0.1), "--json")
    assert code == 0, err
    d = json.loads(out)
    note = d["conflict_note"]
    assert note and note.startswith("prior conflict") and "above the fitted" in note
    assert d["prior"]["sigma"]["df"] <= 4           # the runs' df, not the cap of 10
    assert d["posterior"]["uncapped_df"]["sigma"] > 10
    code, out, _ = cli("calibrate", _outlier_table(tmp_path, 0.1))
    assert "prior conflict" in out


def test_clean_runs_have_no_conflict_note(cli, tmp_path):
    code, out, err = cli("calibrate", _outlier_table(tmp_path, 1.0), "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["conflict_note"] is None and d["runs_left_out"] == 0


def test_the_runs_left_out_are_counted(cli):
    """The shipped table: 447 rows of the cell, 135 cold, 266 used; the other 46 are groups
    with one run per config, which the headline now names."""
    from pathlib import Path

    runs = Path(__file__).resolve().parents[3] / "examples" / "runs" / "tps_runs.csv"
    code, out, err = cli("calibrate", runs, "--platform", "local-a10g", "--metric",
                         "decode_wall", "--workload", "128x512", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert (d["runs_used"], d["cold_dropped"], d["runs_left_out"]) == (266, 135, 46)
    assert d["conflict_note"] is None
