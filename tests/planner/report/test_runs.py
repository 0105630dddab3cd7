"""The runs in a report: a verdict or ``repeats --runs`` result with ``runs`` shows each
config's runs per instance in every medium (terminal strips, a Markdown table, an HTML plot
and table), cold first runs and outliers marked; without ``runs`` nothing is added.
``fixtures/verdict_with_runs.json`` is a golden verdict with twelve hand-written runs (two
instances per config, one cold first run on each config's first instance, one outlier)."""

from __future__ import annotations

import json
import re
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "verdict_with_runs.json"


def _saved() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_runs_in_every_medium(cli, tmp_path, monkeypatch):
    r = _saved()
    monkeypatch.setenv("COLUMNS", "120")
    code, out, err = cli("report", FIXTURE)
    assert code == 0, err
    tail = out[out.index("runs per instance"):]
    assert "(3 more runs not saved in the result)" in " ".join(tail.split())
    a_lines = [ln for ln in tail.splitlines() if ln.startswith("    gpu-")]
    assert len(a_lines) == 4
    assert re.search(r"gpu-0  \S{3}  n=3  mean 454\.03  cold 453\.67$", a_lines[0])
    assert a_lines[1].endswith("outlier 447.20")

    md, html = tmp_path / "r.md", tmp_path / "r.html"
    code, _, err = cli("report", FIXTURE, "--md", md, "--html", html)
    assert code == 0, err
    text = md.read_text()
    assert "## Runs" in text
    assert f"| A | {r['a']} | gpu-1 | 453.90, 454.02, 447.20 (outlier) | 451.71 |" in text
    assert "| 453.67 (cold), 454.10, 454.31 |" in text
    page = html.read_text()
    assert "<h2>Runs</h2>" in page and page.count("data:image/png;base64,") == 2
    assert "447.20 (outlier)" in page


def test_runs_plot_marks_cold_runs_and_outliers():
    from planner.report.plots import runs_plot

    png = runs_plot([("A x", "gpu-0", [(1.0, True, False), (1.1, False, False)]),
                     ("B y", "gpu-0", [(1.2, False, True)])], unit="TPS")
    assert png[:4] == b"\x89PNG" and len(png) > 5000


def test_no_runs_no_runs_section(golden, tmp_path):
    from planner.report.render import render_html, render_markdown

    for name in ("verdict_readme", "repeats_runs"):
        r = golden(name)
        assert "runs" not in r
        assert "## Runs" not in render_markdown(r)
        assert "<h2>Runs</h2>" not in render_html(r)
    r = golden("repeats_runs")
    r["runs"] = _saved()["runs"]
    assert "## Runs" in render_markdown(r) and "<h2>Runs</h2>" in render_html(r)


def test_a_run_of_the_wrong_type_is_refused(cli, tmp_path):
    r = _saved()
    r["runs"][2]["cold"] = "yes"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(r))
    code, _, err = cli("report", bad)
    assert code == 2 and "field 'runs[2].cold'" in err and err.count("\n") == 1


def test_an_edited_run_list_is_refused_in_the_file_s_words(cli, tmp_path):
    """A run value of -1e308 reached the plot (matplotlib's overflow warning, exit 0) and a
    negative runs_truncated passed; type errors spoke Python ("holds None (NoneType);
    expected str")."""
    cases = [(lambda r: r["runs"][0].update(value=-1e308), "runs[0].value",
              "it holds -1e+308 (number); expected number > 0.0"),
             (lambda r: r.update(runs_truncated=-5), "runs_truncated",
              "it holds -5 (number); expected integer >= 0"),
             (lambda r: r["runs"][0].update(config=None), "runs[0].config",
              "it holds null; expected string, got null")]
    for edit, field, says in cases:
        r = _saved()
        edit(r)
        p = tmp_path / "edited.json"
        p.write_text(json.dumps(r))
        code, _, err = cli("report", p, "--html", tmp_path / "r.html")
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert f"field '{field}'" in err and says in err, err
        assert not (tmp_path / "r.html").exists()


def test_quick_form_configs_named_as_their_arms_are_not_said_twice(cli, monkeypatch):
    """--a-runs/--b-runs name the configs "A" and "B": the strips' headings read "A A"."""
    monkeypatch.setenv("COLUMNS", "120")
    code, out, err = cli("verdict", "--a-runs", "35.73,35.76,35.94", "--b-runs",
                         "35.8,35.9,36.0")
    assert code == 0, err
    lines = out[out.index("runs per instance"):].splitlines()
    assert "  A" in lines and "  B" in lines and "  A A" not in lines
    # the 3-run groups carry no outlier mark (35.94 had one: robust z 4.0 on a MAD of 0.03)
    assert "outlier 35.94" not in out and "in groups of at least 5 warm runs" in out
