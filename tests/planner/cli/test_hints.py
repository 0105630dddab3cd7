"""Hints for tired users: a percent where a fraction goes (``--assurance 80``, ``--cv 2``), a
near miss of every choice-like option and policy name (``-p hybrid_max``, ``--engine MCMC``),
a UTF-16 export (how to convert it); and error lines that stay one line whatever a name holds
(control characters shown escaped), and ``planner ingest`` cells that cannot run as a
spreadsheet formula."""

from __future__ import annotations

import csv
import json

import pytest

from planner.io.hints import choice_hint
from planner.io.rows import Run
from planner.io.writer import cell, write_runs_csv

QUICK = ["verdict", "--a", "308.49", "--b", "308.05", "--platform", "hf-a10g-small"]


def _one(code, err, *words):
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err


@pytest.mark.parametrize("args", [["repeats", "--delta", "0.4", "--assurance", "80"],
                                  ["budget", "examples/plan.toml", "--assurance", "80"]])
def test_a_percent_for_an_assurance(cli, monkeypatch, args):
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    code, _, err = cli(*args)
    _one(code, err, "--assurance", "did you mean 0.8?")


def test_a_percent_for_a_cv(cli):
    code, _, err = cli(*QUICK, "--cv", "2")
    _one(code, err, "--cv", "did you mean 0.02 (2%)?")


@pytest.mark.parametrize("args,near", [
    (["draft", "-p", "hybrid_max"], "'hybrid-max'"),
    (["draft", "-p", "suffix_first"], "'suffix-first'"),
    (["draft", "-p", "mtp", "--baseline", "hybrid_max"], "'hybrid-max'"),
    (["draft", "-p", "pld:n=2,dept=24"], "'depth'"),
    (["draft", "-p", "pld", "--convention", "vlm"], "'vllm'"),
    (["draft", "-p", "pld", "--correlation", "calibrate"], "'calibrated'"),
    ([*QUICK, "--engine", "MCMC"], "'mcmc'"),
    ([*QUICK, "--likelihood", "student"], "'student-t'"),
    (["verdict", "--a", "308", "--b", "309", "--prior", "hf-a10g-smal"], "'hf-a10g-small'"),
    (["repeats", "--delta", "0.4", "--design", "separat"], "'separate'"),
    (["repeats", "--delta", "0.4", "--rule", "verdit"], "'verdict'"),
    (["repeats", "--delta", "0.4", "--flavor", "a10g-smal"], "'a10g-small'"),
    (["verdict", "examples/runs/tps_runs.csv", "--a", "x", "--b", "y", "--format",
      "hyperfin"], "'hyperfine'"),
])
def test_a_near_miss_gets_did_you_mean(cli, monkeypatch, args, near):
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    code, _, err = cli(*args)
    _one(code, err, f"did you mean {near}?")


def test_choice_hint_forms():
    assert choice_hint("unknown policy 'hybrid_max' (one of ar, pld, hybrid-max)") == \
        "; did you mean 'hybrid-max'?"
    assert choice_hint("unknown engine 'MCMC' (exact or mcmc)") == "; did you mean 'mcmc'?"
    assert choice_hint("unknown engine 'zzz' (exact or mcmc)") == ""  # nothing near
    assert choice_hint("unknown x 'a'; did you mean 'b'? (a, b)") == ""  # already hinted
    assert choice_hint("not a platform (hf-a10g-small, weak) nor an existing file",
                       value="weakk") == "; did you mean 'weak'?"


def test_a_utf16_export_says_how_to_convert(cli, tmp_path):
    for enc, bom in (("utf-16", True), ("utf-16-le", False)):
        p = tmp_path / f"{enc}.csv"
        p.write_bytes("config,tps\nA,300.5\nB,301.5\n".encode(enc))
        code, _, err = cli("verdict", p, "--a", "A", "--b", "B")
        _one(code, err, "iconv -f UTF-16 -t UTF-8")


@pytest.mark.parametrize("name", ["no\nfile.csv", "no\rfile.csv", "a\x1b]0;pwned\x07.csv",
                                  "rtl\u202efile.csv", "tab\tfile.csv"])
def test_a_name_with_control_characters_is_one_visible_line(cli, tmp_path, name):
    for args in (["verdict", tmp_path / name, "--a", "A", "--b", "B"],
                 ["draft", tmp_path / name], ["budget", tmp_path / name],
                 ["report", tmp_path / name], [*QUICK, "--prior", name],
                 ["ingest", tmp_path / name, "-o", tmp_path / "o.csv"]):
        code, _, err = cli(*args)
        _one(code, err)
        assert "\x1b" not in err and "\u202e" not in err and "\r" not in err, err
        assert "\\n" in err or "\\r" in err or "\\x1b" in err or "\\u202e" in err \
            or "\\t" in err, err


def test_a_config_with_a_newline_is_not_shown_as_a_space(cli):
    from tests.conftest import RUNS_CSV

    code, _, err = cli("verdict", RUNS_CSV, "--a", "x\ny", "--b", "y")
    _one(code, err, "'x\\ny'")


def test_ingest_cells_cannot_run_as_formulas(tmp_path):
    names = ["=1+1", "@SUM(A1)", "+1+2", "-O2", " =cmd", "-1", "+0.5", "-1e3", "plain"]
    assert [cell(n) for n in names] == ["'=1+1", "'@SUM(A1)", "'+1+2", "'-O2", "' =cmd", "-1",
                                        "+0.5", "-1e3", "plain"]
    runs = [Run(config=n, tps=300.0 + k, instance=f"h{k}", rep=k, line=k + 1)
            for k, n in enumerate(names)]
    out = tmp_path / "runs.csv"
    write_runs_csv(runs, out)
    first = [r[0] for r in list(csv.reader(out.open()))[1:]]
    assert not any(c.lstrip(" ").startswith(("=", "@")) for c in first)
    assert not any(c.startswith(("+", "-")) and not c[1:].replace(".", "").replace("e", "")
                   .isdigit() for c in first), first


def test_ingest_of_a_hostile_folder_writes_quoted_cells(cli, tmp_path):
    res = tmp_path / "results"
    for k, cfg in enumerate(("=HYPERLINK(x)", "@cmd", "ok")):
        d = res / cfg
        d.mkdir(parents=True)
        (d / "r.json").write_text(json.dumps({"output_throughput": 300.0 + k, "completed": 10,
                                              "duration": 2.0}))
    out = tmp_path / "runs.csv"
    code, _, err = cli("ingest", res, "-o", out)
    assert code == 0, err
    first = sorted(r[0] for r in list(csv.reader(out.open()))[1:])
    assert first == ["'=HYPERLINK(x)", "'@cmd", "ok"]


def test_an_unknown_prior_names_the_option_and_the_nearest_platform(cli):
    # it said "nope field 'prior': not a platform ..." (the value taken for a file name)
    code, _, err = cli("verdict", "--a", "1", "--b", "2", "--prior", "hf-a10g-smal")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("planner: error: field '--prior': unknown prior 'hf-a10g-smal'")
    assert "did you mean 'hf-a10g-small'?" in err
