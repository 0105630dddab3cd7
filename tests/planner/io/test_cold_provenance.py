"""A run is cold only when the data say it is the first run of a server session: a real
``rep`` / ``phase`` / ``timestamp`` of a runs table, never the order a reader found files or
records in, never for tools that warm up themselves. Equal values are two runs unless a rep
or timestamp shows the same run twice."""

import csv
import json
from pathlib import Path

import pytest

from planner.io.ingest import ingest
from planner.io.runs import read_runs
from planner.io.table import RunsTable

R = Path(__file__).resolve().parents[2] / "fixtures" / "readers"


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_a_folder_of_vllm_results_has_no_cold_run_even_on_one_instance(tmp_path):
    """ingest numbers a config's files 0, 1, 2 in file-name order: that is not a server
    session's order, so run0.json is not a cold first run (with or without an instance)."""
    runs, _ = ingest(R / "serve", instance="box1")
    assert [r.rep for r in runs] == [0, 1, 2, 0, 1, 2]
    assert all(r.cold is False for r in runs)
    t = RunsTable(runs, "serve")
    assert not t.cold_flags().any()


def test_ingested_csv_keeps_them_warm(cli, tmp_path):
    out = tmp_path / "runs.csv"
    code, _, err = cli("ingest", R / "serve", "-o", out, "--instance", "box1")
    assert code == 0, err
    rows = list(csv.DictReader(out.open()))
    assert {r["cold"] for r in rows} == {"0"}
    code, js, err = cli("verdict", out, "--a", "fa2", "--b", "sdpa", "--json")
    assert code == 0, err
    res = json.loads(js)
    assert res["cold_runs"] == []
    assert "cold column" in res["grouping"]["cold_source"]


@pytest.mark.parametrize("name", ["hyperfine.json", "pyperf.json", "vllm_serve_named.json",
                                  "sglang.jsonl", "vllm_latency.json"])
def test_tools_result_files_are_warm(name):
    t = read_runs(R / name, instance="box1")
    assert not t.cold_flags().any()
    assert t.cold_source().startswith("none: a ")


def test_timestamp_order_names_the_first_run_when_there_is_no_rep(tmp_path):
    p = _write(tmp_path, "ts.csv", "config,instance,session,timestamp,tps\n"
               "A,g,s,2026-01-01T10:05:00,300.2\nA,g,s,2026-01-01T10:00:00,295.0\n"
               "A,g,s,2026-01-01T10:10:00,300.1\nB,g,s,2026-01-01T10:20:00,301.0\n"
               "B,g,s,2026-01-01T10:15:00,296.0\n")
    t = read_runs(p)
    assert t.cold_flags().tolist() == [False, True, False, False, True]
    # without a parseable order nothing is flagged
    q = _write(tmp_path, "ts2.csv", "config,instance,session,timestamp,tps\n"
               "A,g,s,monday,300.2\nA,g,s,tuesday,295.0\n")
    assert not read_runs(q).cold_flags().any()


def test_equal_values_on_one_instance_without_a_rep_are_two_runs(tmp_path):
    t = read_runs(_write(tmp_path, "eq.csv", "config,instance,tps\nA,i1,80.0\nA,i1,80.0\n"
                                             "B,i1,81.0\nB,i1,81.2\n"))
    assert [r.tps for r in t.runs] == [80.0, 80.0, 81.0, 81.2]
    t = read_runs(_write(tmp_path, "eq2.csv", "config,session,tps\nA,s1,80\nA,s1,80\n"))
    assert len(t) == 2
    # a rep (or a timestamp) that repeats with the value is the same run written twice
    with pytest.raises(Exception, match="duplicate row"):
        read_runs(_write(tmp_path, "dup.csv", "config,instance,rep,tps\nA,i1,0,80\nA,i1,0,80\n"))
    with pytest.raises(Exception, match="duplicate row"):
        read_runs(_write(tmp_path, "dup2.csv", "config,timestamp,tps\nA,2026-01-01T10:00,80\n"
                                               "A,2026-01-01T10:00,80\n"))
