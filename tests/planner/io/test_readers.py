"""Benchmark tools' result files as runs: vLLM, SGLang, pyperf, hyperfine; CSV rate aliases."""

import csv
import hashlib
import json
import shutil

import pytest

from planner.errors import InputError
from planner.io.ingest import ingest
from planner.io.formats import detect_format
from planner.io.rows import metric_lower_is_better
from planner.io.runs import read_runs
from tests.conftest import FIXTURES

R = FIXTURES / "readers"
SERVE = sorted((R / "serve").rglob("vllm-*.json"))


@pytest.mark.parametrize("name, fmt", [
    ("serve/fa2/vllm-inf-qwen-20250612-101512.json", "vllm-serve"),
    ("vllm_throughput.json", "vllm-throughput"), ("vllm_latency.json", "vllm-latency"),
    ("sglang.jsonl", "sglang"), ("pyperf.json", "pyperf"), ("hyperfine.json", "hyperfine"),
    ("serve/fa2/server_args.json", "table"),
])
def test_formats_are_detected_by_content(name, fmt):
    assert detect_format((R / name).read_text()) == fmt


def test_vllm_serve_one_file_is_one_run_of_output_throughput():
    t = read_runs(R / "vllm_serve_named.json")
    (r,) = t.runs
    # the file names its config (--metadata config=...), which wins over the file name
    assert (r.config, r.tps, r.metric, r.instance) == ("fa2+precache", 309.02,
                                                       "output_throughput", "")
    assert not r.lower_is_better and not t.lower_is_better


def test_vllm_serve_latency_metric_is_lower_is_better():
    t = read_runs(R / "vllm_serve_named.json", metric="mean_tpot_ms")
    assert t.runs[0].tps == 3.225 and t.runs[0].metric == "mean_tpot_ms"
    assert t.lower_is_better


def test_vllm_serve_unknown_metric_lists_the_fields():
    with pytest.raises(InputError) as e:
        read_runs(R / "vllm_serve_named.json", metric="mean_tpot")
    assert e.value.field == "mean_tpot" and "mean_tpot_ms" in e.value.message


def test_vllm_throughput_and_latency():
    (r,) = read_runs(R / "vllm_throughput.json").runs
    assert (r.config, r.tps, r.metric) == ("vllm_throughput", 10409.549, "tokens_per_second")
    lat = read_runs(R / "vllm_latency.json")
    # each latency is a run of one process: one instance, lower is better, warmed up
    assert [r.tps for r in lat.runs] == [1.68431, 1.67902, 1.68190, 1.68533, 1.68004]
    assert {r.instance for r in lat.runs} == {"vllm_latency"}
    assert lat.lower_is_better and lat.cold_flags().sum() == 0


def test_sglang_lines_are_runs_tagged_by_config():
    t = read_runs(R / "sglang.jsonl")
    assert t.configs == ["triton", "fa3"]
    assert [r.tps for r in t.runs] == [980.6, 983.9, 1012.3, 1009.8]
    assert [r.line for r in t.runs] == [1, 2, 3, 4]
    e2e = read_runs(R / "sglang.jsonl", metric="mean_e2e_latency_ms")
    assert e2e.lower_is_better and e2e.runs[2].tps == 523.0


def test_pyperf_workers_are_runs_on_one_instance():
    t = read_runs(R / "pyperf.json")
    # the calibration run (warm-ups only) is skipped; each worker's values are averaged
    assert len(t) == 3
    assert t.runs[0].tps == pytest.approx((0.05121 + 0.05098 + 0.05133) / 3)
    assert {r.instance for r in t.runs} == {"bench-a10g-01"}
    assert {(r.config, r.workload, r.metric) for r in t.runs} == {
        ("decode_512_tokens", "decode_512_tokens", "time_s")}
    assert t.lower_is_better and t.cold_flags().sum() == 0


def test_hyperfine_commands_are_configs_and_times_are_runs():
    t = read_runs(R / "hyperfine.json")
    assert t.configs == ["python decode.py --attn fa2", "sdpa"]
    assert [r.tps for r in t.select(["sdpa"]).runs] == [1.7012, 1.6987, 1.7040, 1.6995, 1.7021]
    assert {r.metric for r in t.runs} == {"wall_time_s"} and t.lower_is_better
    assert {r.instance for r in t.runs} == {""}
    same = read_runs(R / "hyperfine.json", instance="laptop")
    assert {r.instance for r in same.runs} == {"laptop"}


def test_forced_format_that_does_not_match_is_refused():
    with pytest.raises(InputError) as e:
        read_runs(R / "hyperfine.json", format="pyperf")
    assert "not a pyperf result" in e.value.message


@pytest.mark.parametrize("metric, lower", [
    ("output_throughput", False), ("tokens_per_s", False), ("tok/s", False), ("tps", False),
    ("decode_wall", False), ("bench_serving", False), ("mean_tpot_ms", True),
    ("median_itl_ms", True), ("wall_time_s", True), ("latency_s", True),
    ("mean_e2e_latency_ms", True), ("", False),
])
def test_metric_direction(metric, lower):
    assert metric_lower_is_better(metric) is lower


@pytest.mark.parametrize("col", ["throughput", "output_throughput", "tokens_per_s", "tok/s"])
def test_csv_rate_aliases_read_as_tps(tmp_path, col):
    p = tmp_path / "r.csv"
    p.write_text(f"config,{col},instance\nA,300.5,i1\nB,301.5,i2\n")
    assert [r.tps for r in read_runs(p).runs] == [300.5, 301.5]


def test_csv_two_aliases_are_ambiguous(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("config,throughput,tokens_per_s\nA,300,300\n")
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert "'throughput'" in e.value.message and "'tokens_per_s'" in e.value.message


def test_csv_tps_column_names_any_column(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("config,gen_rate,mean_tpot_ms\nA,300,3.3\nB,302,3.2\n")
    assert [r.tps for r in read_runs(p, tps_column="gen_rate").runs] == [300.0, 302.0]
    t = read_runs(p, tps_column="mean_tpot_ms")
    assert [r.tps for r in t.runs] == [3.3, 3.2] and t.lower_is_better
    with pytest.raises(InputError) as e:
        read_runs(p, tps_column="rate")
    assert e.value.field == "tps" and e.value.remedy == "tps_column"
    assert "no column 'rate'" in e.value.message


def test_ingest_folder_of_vllm_results(tmp_path):
    runs, stats = ingest(R / "serve")
    assert stats == {"found": 7, "skipped_unrecognised": 1,
                     "skipped_files": ["fa2/server_args.json"], "merged": {}}
    by = {}
    for r in runs:
        by.setdefault(r.config, []).append(r.tps)
    assert by == {"fa2": [307.41, 308.12, 307.85], "sdpa": [301.20, 300.64, 301.77]}
    assert [r.rep for r in runs] == [0, 1, 2, 0, 1, 2]
    assert {(r.instance, r.platform, r.metric) for r in runs} == {("", "", "output_throughput")}


def test_cli_ingest_then_verdict(cli, tmp_path):
    out = tmp_path / "runs.csv"
    code, _, err = cli("ingest", R / "serve", "-o", out, "--platform", "hf-job-a10g-small")
    assert code == 0, err
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 6 and {r["platform"] for r in rows} == {"hf-a10g-small"}
    code, js, err = cli("verdict", out, "--a", "fa2", "--b", "sdpa", "--json")
    assert code == 0, err
    res = json.loads(js)
    assert (res["n_a"], res["n_b"]) == (3, 3)
    assert res["mean_tps_a"] == pytest.approx((307.41 + 308.12 + 307.85) / 3)
    assert res["p_b_gt_a"] < 0.05  # sdpa's ~2 % lower output throughput is not noise


def test_cli_verdict_on_a_hyperfine_export(cli):
    code, js, err = cli("verdict", R / "hyperfine.json", "--a", "python decode.py --attn fa2",
                        "--b", "sdpa", "--prior", "weak", "--json", "--seed", "1")
    assert code == 0, err
    res = json.loads(js)
    assert (res["n_a"], res["n_b"]) == (5, 5)
    assert res["mean_tps_a"] == pytest.approx(1.66116)
    # B's times are ~2.4 % longer; the numbers are read as given, never inverted (the
    # lower-is-better direction travels on the runs)
    assert 1.5 < res["delta_pct"]["mean"] < 3.5


def test_cli_bad_result_file_exit_2_names_file_and_field(cli, tmp_path):
    src = json.loads((R / "vllm_serve_named.json").read_text())
    src["output_throughput"] = "n/a"
    p = tmp_path / "bad_serve.json"
    p.write_text(json.dumps(src))
    before = hashlib.sha256(p.read_bytes()).hexdigest()
    code, _, err = cli("calibrate", p)
    assert code == 2 and "Traceback" not in err
    (line,) = [ln for ln in err.splitlines() if ln.strip()]
    assert str(p) in line and "field 'output_throughput'" in line
    assert hashlib.sha256(p.read_bytes()).hexdigest() == before


def test_cli_ingest_folder_without_results_exit_2(cli, tmp_path):
    d = tmp_path / "res" / "cfg"
    d.mkdir(parents=True)
    shutil.copy(R / "serve" / "fa2" / "server_args.json", d)
    code, _, err = cli("ingest", tmp_path / "res", "-o", tmp_path / "o.csv")
    assert code == 2 and "no benchmark result files" in err


def test_calibrate_keeps_instance_less_runs_apart():
    from planner.decide.calibrate import calibrate

    # SGLang lines name no machine: each run is its own instance, so the two configs are two
    # unlinked groups (before, every run without an instance shared one)
    res = calibrate(read_runs(R / "sglang.jsonl"))
    assert (res["runs_used"], res["groups"]) == (4, 2)
    assert res["metric"] == "output_throughput"


def test_ingest_corrupt_result_file_is_an_error_naming_file_and_line(cli, tmp_path):
    root = tmp_path / "res"
    shutil.copytree(R / "serve", root)
    cfg = sorted(p for p in root.iterdir() if p.is_dir())[0]
    (cfg / "zz-truncated.json").write_text('{"output_throughput": 300.0,\n{bad json')
    code, _, err = cli("ingest", root, "-o", tmp_path / "o.csv")
    assert code == 2 and "zz-truncated.json:2" in err, err
    # JSON lines: the first bad line is named
    (cfg / "zz-truncated.json").unlink()
    (cfg / "zz.jsonl").write_text('{"a": 1}\n{"a": 2}\n{bad\n')
    code, _, err = cli("ingest", root, "-o", tmp_path / "o.csv")
    assert code == 2 and "zz.jsonl:3" in err, err


def test_ingest_names_the_files_it_skips(cli, tmp_path):
    root = tmp_path / "res"
    shutil.copytree(R / "serve", root)
    for k in range(7):
        (root / f"notes{k}.json").write_text('{"comment": "not a result"}')
    code, _, err = cli("ingest", root, "-o", tmp_path / "o.csv")
    assert code == 0, err
    assert ("8 unrecognised files skipped: fa2/server_args.json, notes0.json, notes1.json, "
            "notes2.json, notes3.json and 3 more") in err


def test_unknown_config_of_a_tool_file_names_the_configs_present(tmp_path):
    p = tmp_path / "mystem.json"
    shutil.copy(R / "vllm_latency.json", p)
    t = read_runs(p)
    with pytest.raises(InputError) as e:
        t.select(["xx"])
    msg = e.value.one_line()
    assert "the file's configs: " in msg and all(f"'{c}'" in msg for c in t.configs), msg


def test_ingest_refuses_a_byte_identical_copy_of_a_result_file(tmp_path):
    """Two copies of one vLLM result under one config were two runs (rep 0 and 1) of the
    same value, and the verdict took them as independent."""
    import shutil

    from planner.io.ingest import ingest

    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "fixtures" / "readers" / "vllm_throughput.json"
    d = tmp_path / "res" / "cfg"
    d.mkdir(parents=True)
    shutil.copy(src, d / "r1.json")
    shutil.copy(src, d / "r2.json")
    with pytest.raises(InputError) as e:
        ingest(tmp_path / "res")
    assert "a byte-identical copy of" in e.value.message and e.value.file.endswith("r2.json")


@pytest.mark.parametrize("raw, says", [
    # a 401-digit integer: float() raised OverflowError, a traceback out of planner ingest
    ("1" + "0" * 400, "not a finite number: an integer of 401 digits"),
    # JSON's null was shown as Python's None
    ("null", "not a number: null"),
])
def test_ingest_a_result_value_that_is_no_rate(cli, tmp_path, raw, says):
    src = json.loads((R / "vllm_serve_named.json").read_text())
    d = tmp_path / "res" / "fa2"
    d.mkdir(parents=True)
    p = d / "serve.json"
    p.write_text(json.dumps(src).replace(f'"output_throughput": {src["output_throughput"]}',
                                         f'"output_throughput": {raw}'))
    before = hashlib.sha256(p.read_bytes()).hexdigest()
    code, _, err = cli("ingest", tmp_path / "res", "-o", tmp_path / "runs.csv")
    assert code == 2 and "Traceback" not in err
    (line,) = [ln for ln in err.splitlines() if ln.strip()]
    assert "serve.json:1 field 'output_throughput': " + says in line
    assert hashlib.sha256(p.read_bytes()).hexdigest() == before
    assert not (tmp_path / "runs.csv").exists()


@pytest.mark.parametrize("name, text, where", [
    ("runs.json", '[{"config": "A", "tps": %s}, {"config": "B", "tps": 300}]',
     "runs.json field 'tps': record 1 of the list: "),
    ("runs.jsonl", '{"config": "A", "tps": 300, "rep": %s}\n{"config": "B", "tps": 3}\n',
     "runs.jsonl:1 field 'rep': "),
])
def test_a_runs_table_number_of_hundreds_of_digits_is_counted_not_printed(cli, tmp_path, name,
                                                                          text, where):
    """The line printed all 401 digits ('not a number: 1000...000')."""
    p = tmp_path / name
    p.write_text(text % ("1" + "0" * 400))
    code, _, err = cli("verdict", p, "--a", "A", "--b", "B")
    assert code == 2 and len(err) < 200, err
    assert where + "not a finite number: an integer of 401 digits" in err


@pytest.mark.parametrize("where, bad, says", [
    ("unit", ["second"], "field 'unit': unit ['second'] has no known direction"),  # TypeError
    ("hostname", {"a": 1}, "field 'hostname': expected the machine's name as text"),
])
def test_pyperf_metadata_of_the_wrong_type_is_one_line(cli, tmp_path, where, bad, says):
    d = json.loads((R / "pyperf.json").read_text())
    d["metadata"][where] = bad
    p = tmp_path / "bench.json"
    p.write_text(json.dumps(d))
    code, _, err = cli("calibrate", p)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "bench.json:1 " + says in err


def test_requests_done_reads_completed_against_sent():
    from planner.io.formats.vllm import requests_done

    assert requests_done({"completed": 190, "num_prompts": 200}) == "190/200"
    assert requests_done({"completed": 200, "num_prompts": 200}) == ""
    assert requests_done({"completed": 120, "failed": 8}) == "120/128"   # no num_prompts
    assert requests_done({"completed": 120, "failed": 0}) == ""
    # only whole JSON counts: a float, a bool or a string says nothing
    assert requests_done({"completed": 190.0, "num_prompts": 200}) == ""
    assert requests_done({"completed": True, "num_prompts": 200}) == ""
    assert requests_done({"completed": 190, "num_prompts": "200"}) == ""


def test_a_run_with_failed_requests_is_noted_through_ingest(cli, tmp_path):
    """A serve run that completed 190 of its 200 requests keeps its value (the verdict keeps
    it) and is named in a note, read from the file directly and from ingest's CSV."""
    root = tmp_path / "serve"
    shutil.copytree(R / "serve", root)
    p = root / "sdpa" / "vllm-inf-qwen-20250612-111004.json"
    src = json.loads(p.read_text())
    src["completed"] = 190
    p.write_text(json.dumps(src))
    out = tmp_path / "runs.csv"
    code, _, err = cli("ingest", root, "-o", out)
    assert code == 0, err
    rows = list(csv.DictReader(out.open()))
    assert [r["requests"] for r in rows].count("190/200") == 1
    assert sum(1 for r in rows if r["requests"]) == 1
    code, js, err = cli("verdict", out, "--a", "fa2", "--b", "sdpa", "--json")
    assert code == 0, err
    res = json.loads(js)
    assert res["n_b"] == 3
    hits = [n for n in res["notes"] if "fewer requests" in n]
    assert len(hits) == 1 and "sdpa 301.2: 190 of 200 requests" in hits[0]
    # the complete folder gets no such note, and writes no requests column
    code, _, _ = cli("ingest", R / "serve", "-o", tmp_path / "all.csv")
    assert "requests" not in (tmp_path / "all.csv").read_text().splitlines()[0]


def test_ingest_notes_a_config_gathered_from_two_folders_and_mixed_metrics(cli, tmp_path):
    """New-user report: a hyperfine command named like another folder's config merged into
    it (reps 0-4 of wall_time_s beside reps 5-7 of output_throughput) without a word."""
    root = tmp_path / "res"
    shutil.copytree(R / "serve", root)
    (root / "other").mkdir()
    shutil.copy(R / "hyperfine.json", root / "other" / "h.json")
    runs, stats = ingest(root)
    assert stats["merged"] == {"sdpa": ["other", "sdpa"]}
    code, _, err = cli("ingest", root, "-o", tmp_path / "o.csv")
    assert code == 0, err
    assert "note: config 'sdpa' gathers runs from 2 folders (other/, sdpa/)" in err
    assert "runs of 2 metrics in one table (output_throughput: 6, wall_time_s: " in err


def _summary(d, job, tps=300.0):
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"tps": tps, "job_id": job, "completed": True}))


def test_harness_folders_sharing_a_manifest_name_and_other_results_are_noted(cli, tmp_path):
    root = tmp_path / "h"
    for sub, jobs in (("subA", ("j1", "j2")), ("subB", ("j3", "j4"))):
        (root / sub).mkdir(parents=True)
        (root / sub / "manifest.json").write_text('{"name": "X"}')
        for j in jobs:
            _summary(root / sub / j, j)
    shutil.copy(R / "vllm_serve_named.json", root / "subA" / "serve.json")
    runs, stats = ingest(root)
    assert {r.config for r in runs} == {"X"} and len(runs) == 4
    assert stats["merged"] == {"X": ["subA", "subB"]}
    assert stats["other_results"] == ["subA/serve.json"]
    code, _, err = cli("ingest", root, "-o", tmp_path / "o.csv")
    assert code == 0, err
    assert "config 'X' gathers runs from 2 folders (subA/, subB/)" in err
    assert "1 benchmark result file beside the summary.json files not read: subA/serve.json" \
        in err
