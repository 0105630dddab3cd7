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
