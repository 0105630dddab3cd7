"""Runs tables, ingest and calibrate: reading, and one-line errors with exit code 2."""

import hashlib
import json
from pathlib import Path

import pytest

from planner.io.runs import read_runs

HEADER = "config,tps,instance,rep,platform,metric,workload\n"


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


BAD = {
    "empty.csv": ("", "empty file", None),
    "nocfg.csv": ("tps,instance\n300,i1\n", "missing required column 'config'", "config"),
    "notps.csv": ("config,instance\nA,i1\n", "missing required column 'tps'", "tps"),
    "text.csv": (HEADER + "A,fast,i1,0,,,\n", "not a number", "tps"),
    "nan.csv": (HEADER + "A,nan,i1,0,,,\n", "not a finite number", "tps"),
    "neg.csv": (HEADER + "A,-3,i1,0,,,\n", "must be > 0", "tps"),
    "zero.csv": (HEADER + "A,0,i1,0,,,\n", "must be > 0", "tps"),
    "dup.csv": (HEADER + "A,300,i1,0,,,\nA,300,i1,0,,,\nB,301,i2,0,,,\n", "duplicate row",
                "tps"),
    "bad.json": ('[{"config": "A", "tps": 300}, {"config": "B", "tps": }]', "invalid JSON", None),
    "bad.jsonl": ('{"config": "A", "tps": 300}\n{"config": "B", "tps": "x"}\n', "not a number",
                  "tps"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_runs_files_give_one_line_exit_2(cli, tmp_path, name):
    text, msg, field = BAD[name]
    p = _write(tmp_path, name, text)
    before = _digest(p)
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B")
    assert code == 2
    assert "Traceback" not in err
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1, err
    assert str(p) in lines[0] and msg in lines[0]
    if field:
        assert f"field '{field}'" in lines[0]
    assert _digest(p) == before


def test_error_names_the_line(tmp_path):
    from planner.errors import InputError

    p = _write(tmp_path, "r.csv", HEADER + "A,300,i1,0,,,\nA,301,i2,1,,,\nB,zz,i3,0,,,\n")
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert e.value.line == 4 and e.value.field == "tps"


def test_config_not_in_file(cli, tmp_path):
    p = _write(tmp_path, "r.csv", HEADER + "alpha,300,i1,0,,,\nalpha,301,i2,1,,,\nbeta,302,i3,0,,,\n")
    code, out, err = cli("verdict", p, "--a", "alpha", "--b", "betta")
    assert code == 2 and "'betta' is not in the file" in err and "did you mean 'beta'" in err


def test_one_run_per_config_without_prior(cli, tmp_path):
    p = _write(tmp_path, "r.csv", HEADER + "A,300,i1,0,,,\nB,302,i2,0,,,\n")
    # no platform: the weakly informative unknown-platform prior (issue 8), which one run per
    # config cannot overrule: undecided, and the note says how to state the noise
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["label"] == "undecided" and d["prior"]["level"] == "unknown-platform"
    assert any("state your noise (a CV, A/A runs or a prior)" in n for n in d["notes"])
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B", "--prior", "hf-a10g-small")
    assert code == 0, err


def test_mixed_metrics_refused(cli, tmp_path):
    p = _write(tmp_path, "r.csv", HEADER + "A,300,i1,0,local,decode_wall,128x512\n"
               "A,301,i1,1,local,decode_wall,128x512\nB,325,i1,0,local,bench_serving,128x512\n"
               "B,326,i1,1,local,bench_serving,128x512\n")
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B")
    assert code == 2 and "mix metric" in err and "--metric" in err
    assert len(err.strip().splitlines()) == 1


def test_bad_prior_file(cli, tmp_path):
    p = _write(tmp_path, "r.csv", HEADER + "A,300,i1,0,,,\nB,302,i2,0,,,\n")
    pr = _write(tmp_path, "noise.json", '{"tau": {"kind": "nope"}}')
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B", "--prior", pr)
    # the rule planner calibrate applies to what it writes (limits.check_noise_prior)
    assert code == 2 and "unknown kind 'nope'" in err and "field 'tau.kind'" in err
    assert str(pr) in err


def test_bad_quick_values(cli):
    code, out, err = cli("verdict", "--a", "308", "--b", "-1")
    assert code == 2 and "--b" in err
    code, out, err = cli("verdict", "--a-runs", "308,x", "--b-runs", "300")
    assert code == 2 and "--a-runs" in err


def test_reads_json_and_jsonl(tmp_path):
    rows = [{"config": "A", "tps": 300.0, "instance": "i1"},
            {"config": "B", "tps": 301.0, "instance": "i1"}]
    pj = _write(tmp_path, "r.json", json.dumps({"runs": rows}))
    pl = _write(tmp_path, "r.jsonl", "\n".join(json.dumps(r) for r in rows))
    assert [r.tps for r in read_runs(pj).runs] == [300.0, 301.0]
    assert [r.config for r in read_runs(pl).runs] == ["A", "B"]


def test_shipped_runs_table(runs_csv):
    t = read_runs(runs_csv)
    assert len(t) == 741 and len(t.configs) == 200


def test_cold_flags():
    from planner.io.rows import Run
    from planner.io.table import RunsTable

    runs = [Run("A", 300, instance="g", rep=0, run_group="x"),
            Run("A", 305, instance="g", rep=1, run_group="x"),
            Run("B", 305, instance="h", rep=0, run_group="x"),
            Run("C", 305, instance="g", rep=0, run_group="x", cold=False)]
    # B's rep 0 is alone on its instance (an allocation of one run): not flagged
    assert RunsTable(runs).cold_flags().tolist() == [True, False, False, False]


# ---------------------------------------------------------------- ingest


def _harness(tmp_path):
    root = tmp_path / "results"
    for cfg, jobs in {"subA": [("j1", 300.1), ("j2", 301.0)], "subB": [("j3", 303.2)]}.items():
        for job, tps in jobs:
            d = root / cfg / job
            d.mkdir(parents=True)
            (d / "summary.json").write_text(json.dumps(
                {"tps": tps, "job_id": job, "ppl": 2.37, "duration_s": 200.0, "completed": True,
                 "model": "gemma"}))
    (root / "subB" / "manifest.json").write_text(json.dumps({"name": "submission-B"}))
    d = root / "subA" / "j9"
    d.mkdir()
    (d / "summary.json").write_text(json.dumps({"tps": 10.0, "job_id": "j9", "completed": False}))
    return root


def test_ingest(cli, tmp_path):
    root = _harness(tmp_path)
    out = tmp_path / "runs.csv"
    code, _, err = cli("ingest", root, "-o", out)
    assert code == 0, err
    t = read_runs(out)
    assert sorted(t.configs) == ["subA", "submission-B"]
    assert {r.instance for r in t.runs} == {"j1", "j2", "j3"}
    assert all(r.metric == "bench_serving" for r in t.runs)
    # the canonical platform name, the one every other command prints
    assert {r.platform for r in t.runs} == {"hf-a10g-small"}
    assert {r.workload for r in t.runs} == {"128x512"}
    assert "1 incomplete skipped" in err


def test_ingest_unreadable_summary(cli, tmp_path):
    root = _harness(tmp_path)
    bad = root / "subA" / "j1" / "summary.json"
    bad.write_text("{not json")
    code, _, err = cli("ingest", root, "-o", tmp_path / "o.csv")
    assert code == 2 and str(bad) in err and "unreadable JSON" in err
    assert len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- calibrate


def test_calibrate_reproduces_the_embedded_local_prior(runs_csv, tmp_path, cli):
    from models.stats.noise import platform_prior

    out = tmp_path / "noise.json"
    code, _, err = cli("calibrate", runs_csv, "--platform", "local-a10g", "--metric",
                       "decode_wall", "--workload", "128x512", "-o", out)
    assert code == 0, err
    d = json.loads(out.read_text())
    emb = platform_prior("local-a10g")
    assert d["prior"]["tau"]["scale"] == pytest.approx(emb.tau.scale, rel=1e-3)
    assert d["prior"]["sigma"]["scale"] == pytest.approx(emb.sigma.scale, rel=1e-3)
    assert d["runs_used"] == 266 and d["groups"] == 38
    # and the file works as --prior
    code, o, err = cli("verdict", "--a", "454.1", "--b", "455.0", "--prior", out, "--json")
    assert code == 0 and json.loads(o)["prior"]["label"].startswith("file:")


def test_calibrate_refuses_mixed(cli, runs_csv):
    code, _, err = cli("calibrate", runs_csv)
    assert code == 2 and "--metric" in err


# ---------------------------------------------------------------- found by a new user


def test_reports_never_overwrite_inputs(cli, tmp_path):
    p = _write(tmp_path, "r.csv", HEADER + "A,300,i1,0,,,\nA,301,i2,1,,,\nB,302,i3,0,,,\n"
               "B,303,i4,1,,,\n")
    before = _digest(p)
    link = tmp_path / "link.md"
    link.symlink_to(p)
    for opt, target in (("--md", p), ("--html", p), ("--md", link)):
        code, out, err = cli("verdict", p, "--a", "A", "--b", "B", opt, target)
        assert code == 2 and "over an input" in err and opt in err
    assert _digest(p) == before
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B", "--md", tmp_path / "no" / "x.md")
    assert code == 2 and "folder does not exist" in err


def test_usage_errors_are_one_line_exit_2(cli):
    for args in (("foo",), ("verdict", "--bogus"), ("verdict", "--a", "1", "--b", "2",
                                                     "--seed", "-1")):
        code, out, err = cli(*args)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_quick_form_input_checks(cli, tmp_path):
    code, _, err = cli("verdict", "--a-runs", "309,,309", "--b-runs", "300")
    assert code == 2 and "empty value" in err
    code, _, err = cli("verdict", "--a-runs", "309,310", "--b-runs", "300", "--paired")
    assert code == 2 and "--paired" in err
    p = _write(tmp_path, "r.csv", HEADER + "A,300,i1,0,,,\nB,302,i3,0,,,\n")
    code, _, err = cli("verdict", p, "--a", "A", "--b", "B", "--a-runs", "1,2")
    assert code == 2 and "--a-runs" in err
    code, _, err = cli("verdict", "--a", "1e308", "--b", "1.7e308")
    assert code == 2 and "implausible TPS" in err


def test_rep_without_instance_is_not_cold(tmp_path):
    p = _write(tmp_path, "r.csv", "config,tps,rep\nA,300,0\nA,301,1\nB,302,0\nB,303,1\n")
    assert not read_runs(p).cold_flags().any()
    bad = _write(tmp_path, "b.csv", "config,tps,rep\nA,300,1.5\n")
    from planner.errors import InputError

    with pytest.raises(InputError) as e:
        read_runs(bad)
    assert e.value.field == "rep" and e.value.line == 2


def test_platform_aliases_filter(runs_csv):
    t = read_runs(runs_csv)
    assert len(t.filter(platform="hf-a10g-small")) == len(t.filter(platform="hf-job-a10g-small"))
    assert len(t.filter(platform="hf-a10g-small")) == 14


def test_ingest_refuses_to_write_into_its_input_through_a_link(cli, tmp_path):
    root = _harness(tmp_path)
    target = root / "subA" / "j1" / "summary.json"
    before = _digest(target)
    link = tmp_path / "x.csv"
    link.symlink_to(target)
    code, _, err = cli("ingest", root, "-o", link)
    assert code == 2 and "--output" in err
    assert _digest(target) == before


def test_ingest_same_job_twice(cli, tmp_path):
    root = _harness(tmp_path)
    d = root / "subB" / "again"
    d.mkdir()
    (d / "summary.json").write_text(json.dumps({"tps": 301.0, "job_id": "j1"}))
    code, _, err = cli("ingest", root, "-o", tmp_path / "o.csv")
    assert code == 2 and "counted twice" in err


def _no_platform_table(tmp_path):
    return _write(tmp_path, "T.csv", "config,tps\n" + "".join(
        f"{c},{v}\n" for c, v in [("base", 300), ("base", 301), ("base", 302), ("cand", 303),
                                  ("cand", 304), ("cand", 305)]))


def test_repeats_keeps_rows_without_a_platform(cli, tmp_path):
    p = _no_platform_table(tmp_path)
    base = ("repeats", "--runs", p, "--a", "base", "--b", "cand", "--sims", "100", "--json")
    code, out, err = cli(*base)
    assert code == 0, err
    res = json.loads(out)
    assert "platform" not in res["inputs"]["options"]  # unknown platform: its own prior
    code, out, err = cli(*base, "--platform", "local-a10g")
    assert code == 0, err
    # what 'planner ingest' writes from tools' files: a platform column left blank
    q = _write(tmp_path, "I.csv", HEADER + "".join(
        f"{c},{v},,{k},,,\n" for k, (c, v) in enumerate(
            [("base", 300), ("base", 301), ("cand", 303), ("cand", 305)])))
    code, out, err = cli("repeats", "--runs", q, "--a", "base", "--b", "cand", "--sims", "100")
    assert code == 0, err


def test_a_platform_filter_that_drops_every_row_names_it(cli, tmp_path):
    p = _write(tmp_path, "P.csv", "config,tps,platform\nbase,300,local-a10g\n"
               "cand,301,local-a10g\n")
    code, _, err = cli("repeats", "--runs", p, "--a", "base", "--b", "cand", "--sims", "100",
                       "--platform", "hf-a10g-small")
    assert code == 2
    assert "no row with platform 'hf-a10g-small'; the file's platforms: 'local-a10g'" in err
    # verdict and calibrate still keep only the rows of the platform asked for
    code, _, err = cli("verdict", p, "--a", "base", "--b", "cand", "--platform", "hf-a10g-small")
    assert code == 2 and "no row with platform 'hf-a10g-small'" in err
    mixed = read_runs(_write(tmp_path, "M.csv", "config,tps,platform\nA,300,local-a10g\nA,301,\n"))
    assert len(mixed.filter(platform="local-a10g")) == 1
    assert len(mixed.filter(platform="local-a10g", blank_platform=True)) == 2


def test_equal_values_without_run_ids_are_two_runs(tmp_path):
    t = read_runs(_write(tmp_path, "eq.csv", "config,tps\nA,80\nA,80\nB,81\n"))
    assert [r.tps for r in t.runs] == [80, 80, 81]
    # the same rep on the same instance is the same run written twice
    with pytest.raises(Exception, match="duplicate row"):
        read_runs(_write(tmp_path, "dup2.csv", "config,tps,rep\nA,80,0\nA,80,0\n"))
