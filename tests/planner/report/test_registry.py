"""The report-kind registry: a kind is one view module and one line of
``planner.report.render.VIEWS``; ``planner report`` then validates a saved result of that
kind against its schema and renders it for the terminal, as Markdown and as HTML."""

from __future__ import annotations

import json
import textwrap

import pytest

TOY_VIEW = '''
"""A toy report kind: a name and a score."""
from typing import TypedDict

from planner.report import html as h
from planner.report.escape import md, term


class SCHEMA(TypedDict):
    name: str
    score: float


def headline(r):
    return [f"{r['name']} scores {r['score']:.2f}"]


def render_terminal(r):
    from rich.console import Console

    Console().print(term(headline(r)[0], "bold"))


def render_markdown(r):
    return "# Toy\\n\\n" + md(headline(r)[0]) + "\\n"


def render_html(r):
    return h.page("toy", h.lead(headline(r)))
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy kind registered: its module on the path, its line in ``VIEWS``."""
    from planner.report import render

    (tmp_path / "toy_view.py").write_text(textwrap.dedent(TOY_VIEW), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(render.VIEWS, "toy", "toy_view")
    saved = tmp_path / "toy.json"
    saved.write_text(json.dumps({"schema": "spec-planner/toy/1", "name": "<b>x</b>",
                                 "score": 0.5}), encoding="utf-8")
    return saved


def test_a_registered_kind_renders_in_every_format(toy, tmp_path, cli):
    md, html = tmp_path / "toy.md", tmp_path / "toy.html"
    code, out, err = cli("report", toy)
    assert code == 0, err
    assert out.startswith("<b>x</b> scores 0.50")
    code, out, err = cli("report", toy, "--md", md, "--html", html)
    assert code == 0, err
    assert md.read_text().startswith("# Toy\n\n&lt;b>x&lt;/b> scores 0.50\n")
    page = html.read_text()
    assert '<p class="lead">&lt;b&gt;x&lt;/b&gt; scores 0.50</p>' in page
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page


def test_a_registered_kind_is_checked_against_its_schema(toy, cli):
    obj = json.loads(toy.read_text())
    obj["score"] = "high"
    toy.write_text(json.dumps(obj))
    code, _, err = cli("report", toy)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "field 'score'" in err and 'holds "high" (string)' in err
    del obj["score"]
    toy.write_text(json.dumps(obj))
    code, _, err = cli("report", toy)
    assert code == 2 and "field 'score'" in err and "without this field" in err


def test_every_registered_kind_has_a_complete_view():
    """Each view module of ``VIEWS`` holds the schema, the headline and the three
    renderers (and nothing is found by guessing a module name)."""
    from planner.report import render

    assert set(render.VIEWS) >= {"verdict", "repeats", "budget", "draft", "draft-sweep",
                                 "calibrate", "shift"}
    for kind in render.VIEWS:
        view = render.view_of(kind)
        for name in ("SCHEMA", "headline", "render_terminal", "render_markdown",
                     "render_html"):
            assert callable(getattr(view, name)), (kind, name)
    from planner.errors import InputError

    with pytest.raises(InputError, match="no report view"):
        render.view_of("nope")


@pytest.mark.parametrize("path,value,field", [
    (("delta_pct", "mean"), "0.61", "delta_pct.mean"),
    (("n_a",), 6.5, "n_a"),
    (("classical", "welch", "significant"), "yes", "classical.welch.significant"),
    (("label",), "<script>alert(1)</script>", "label"),
])
def test_a_hand_edited_saved_result_is_refused_naming_the_field(path, value, field, tmp_path,
                                                                cli, golden):
    obj = golden("verdict_readme")
    d = obj
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(obj))
    for extra in ([], ["--html", tmp_path / "b.html"]):
        code, _, err = cli("report", bad, *extra)
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        assert f"field '{field}'" in err, err
        assert "<script>" not in err or 'holds "<script>' in err
    assert not (tmp_path / "b.html").exists()
