"""Escaping in every medium: a saved result whose names, notes and settings hold markup,
rich markup, escape sequences, bidi overrides, pipes and backticks renders them as text --
HTML runs no script and gains no element, Markdown renders no raw HTML and keeps its table
cells, the terminal prints the text literally with control characters made visible."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

HOSTILE = ["<script>window.pwned=1</script>", "<img src=x onerror=alert(1)>",
           "[link=javascript:alert(1)]click[/link]", "[blink]B[/blink]", "A[/]", "pipe|cell",
           "`tick`", "\x1b]0;title\x07", "\x1b[2J", "\u202eevil\u202c", "\u2066iso\u2069",
           "[x](javascript:alert(1))", "**bold**", "&lt;b&gt;"]

#: Fields that hold names or text a user (or an edit of the saved file) chose.
NAME_KEYS = {"a", "b", "config", "name", "baseline", "candidate", "plan", "title", "path",
             "label", "note", "notes", "reason", "metric", "workload", "platform", "instance",
             "session", "trust", "source", "verdict", "allocation_rule", "repeats_engine",
             "cost_model", "acceptance", "capture", "role", "rope", "prior", "best_policy",
             "sigma_method", "sigma_note", "private_capture"}
#: Numbers a view only prints: edited into markup they must be escaped too.
PRINTED_NUMBERS = {"budget": ("seed", "sims"), "draft_sweep": ("seed", "n_prompts")}

CASES = ["verdict_readme", "verdict_unknown", "repeats_delta", "repeats_runs", "budget",
         "draft_mtp", "draft_default", "draft_sweep", "shift", "calibrate", "verdict_with_runs"]


def poison(obj, kind: str) -> dict:
    """``obj`` with every name-like string field given one of :data:`HOSTILE` (in turn)."""
    n = [0]

    def bad() -> str:
        n[0] += 1
        return HOSTILE[n[0] % len(HOSTILE)]

    def walk(x, key=None):
        if isinstance(x, dict):
            return {k: walk(v, k) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v, key) for v in x]
        if isinstance(x, str) and key in NAME_KEYS and not (kind.startswith("verdict")
                                                            and key == "label"):
            return x + HOSTILE[0] + bad()
        return x

    out = walk(obj)
    if kind.startswith("verdict"):
        out["a"], out["b"] = HOSTILE[0] + HOSTILE[7], HOSTILE[2] + HOSTILE[4] + HOSTILE[9]
        out["label"] = "undecided"
    for k in PRINTED_NUMBERS.get(kind, ()):
        out[k] = HOSTILE[0]
    return out


@pytest.fixture(params=CASES)
def hostile(request, golden):
    name = request.param
    if name == "verdict_with_runs":  # its runs' config, instance and session names too
        import json
        from pathlib import Path

        saved = json.loads((Path(__file__).parent / "fixtures" / f"{name}.json").read_text())
        return name, poison(saved, name)
    return name, poison(golden(name), name)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data):
        self.text.append(data)


def _parse(page: str) -> _Tags:
    p = _Tags()
    p.feed(page)
    return p


PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "span",
             "code", "div", "img", "table", "thead", "tbody", "tr", "th", "td", "ul", "li",
             "b", "br", "a", "section"}


def test_html_escapes_every_value(hostile):
    from planner.report.render import render_html

    name, r = hostile
    page = render_html(r)
    p = _parse(page)
    assert set(p.tags) <= PAGE_TAGS, set(p.tags) - PAGE_TAGS
    assert "script" not in p.tags
    for k, v in p.attrs:
        assert not k.startswith("on"), (k, v)
        assert not (v or "").lower().startswith("javascript:"), (k, v)
        if k == "src":
            assert v.startswith("data:image/png;base64,"), v
    text = "".join(p.text)
    assert "<script>window.pwned=1</script>" in text  # shown as text, not run
    assert "\x1b" not in page and "\u202e" not in page and "\u2066" not in page
    if name.startswith("verdict"):  # its A and B names hold an OSC sequence and a bidi override
        assert "\\x1b]0;title\\x07" in text and "\\u202e" in text


_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def test_markdown_escapes_every_value(hostile):
    from markdown_it import MarkdownIt

    from planner.report.render import render_markdown

    name, r = hostile
    text = render_markdown(r)
    assert "\x1b" not in text and "\u202e" not in text
    # every table row has as many cells as its header (a pipe in a name ends no cell)
    width = None
    for line in text.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        cells = len(_CELL_SPLIT.split(line.strip())) - 2
        width = width or cells
        assert cells == width, line
    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    p = _parse(page)
    assert "script" not in p.tags and "img" not in p.tags, page[:2000]
    for k, v in p.attrs:
        assert not k.startswith("on") and not (v or "").lower().startswith("javascript:")
    shown = "".join(p.text)
    assert "<script>window.pwned=1</script>" in shown
    code = [c for c in re.findall(r"<code>(.*?)</code>", page, re.S)]
    assert not any("tick" in c or "pwned" in c for c in code), code  # a backtick opens none


def _flat(s: str) -> str:
    return re.sub(r"[\s│┃|─━┌┐└┘├┤┬┴┼╇╈┡┩┏┓┗┛]", "", s)


def test_terminal_prints_every_value_literally(hostile, capsys, monkeypatch):
    from planner.report.escape import visible
    from planner.report.render import render_terminal

    monkeypatch.setenv("COLUMNS", "400")
    name, r = hostile
    render_terminal(r)  # no MarkupError from 'A[/]'
    out = capsys.readouterr().out
    for c in ("\x1b", "\x07", "\u202e", "\u202c", "\u2066", "\u2069"):
        assert c not in out, (name, repr(c))
    flat = _flat(out)
    seen = [h for h in HOSTILE if _flat(visible(h)) in flat]
    assert "[link=javascript:alert(1)]click[/link]" in seen or "[blink]B[/blink]" in seen \
        or "A[/]" in seen, out[:3000]
    if name.startswith("verdict"):
        assert all(_flat(visible(h)) in flat for h in (HOSTILE[0], HOSTILE[2], HOSTILE[4],
                                                        HOSTILE[9], HOSTILE[7]))


def test_the_escape_helpers():
    from planner.report.escape import html, md, term, visible

    assert visible("\x1b]0;t\x07\u202eX\n") == "\\x1b]0;t\\x07\\u202eX\\n"
    assert html('<a href="x">&') == "&lt;a href=&quot;x&quot;&gt;&amp;"
    assert md("<b>|`*</b>") == "&lt;b>\\|\\`\\*&lt;/b>"
    assert md("[x](javascript:1)") == "[x\\](javascript:1)"
    assert md("P(|Δ| < ROPE) [0.2, 0.3] <= 1") == "P(\\|Δ\\| < ROPE) [0.2, 0.3] <= 1"
    t = term("[blink]A[/]")
    assert t.plain == "[blink]A[/]" and not t.spans


def _numeric_paths(x, path=()):
    """Paths of the numbers of a result (the first item of each list)."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _numeric_paths(v, path + (k,))
    elif isinstance(x, list):
        if x:
            yield from _numeric_paths(x[0], path + (0,))
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield path


@pytest.mark.parametrize("name", ["verdict_readme", "repeats_runs", "repeats_delta", "budget",
                                  "calibrate"])
def test_every_number_edited_into_text_is_refused_by_name(name, golden):
    """A saved result with any of its numbers edited into text (markup, here) is refused
    before rendering, by its schema, naming the field (``inputs``, which records what was
    given, aside)."""
    from planner.errors import InputError
    from planner.report.render import check_result, check_schema

    r = golden(name)
    for path in _numeric_paths(r):
        if path[0] == "inputs":
            continue
        bad = golden(name)
        x = bad
        for k in path[:-1]:
            x = x[k]
        x[path[-1]] = "<b>x</b>"
        with pytest.raises(InputError) as exc:
            check_schema(bad)
            check_result(bad)
        assert exc.value.field, path
