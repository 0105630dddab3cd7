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
