"""One report layer: any saved result, rendered from its JSON object alone.

A result says what it is by its ``schema`` (``spec-planner/<kind>/<version>``) or, for
files written before every result had one, its ``command``. :func:`kind_of` reads that;
the renderers dispatch on it to the view of each command (``*_view.py``, :mod:`.html`);
Markdown and HTML end with the result's ``inputs`` block (files with their SHA-256,
options, version: :func:`inputs_lines`), the terminal view with one dim line of it
(:func:`inputs_terminal`):

========== ==================================== ==========================
kind       terminal / Markdown                  HTML
========== ==================================== ==========================
verdict    :mod:`.verdict_view`                 :func:`.html.render_verdict`
repeats    :mod:`.repeats_view`                 :func:`.html.render_repeats`
budget     :mod:`.budget_view`                  :func:`.html.render_budget`
draft      :mod:`.draft_view`                   :func:`.html.render_draft`
draft-sweep :mod:`.draft_view` (``sweep``)       :func:`.html.render_sweep`
calibrate  :mod:`.calibrate_view`               :func:`.html.render_calibrate`
shift      :mod:`.shift_view`                   :func:`.shift_view.render_html`
========== ==================================== ==========================

A draft result's Markdown refers to a PNG written next to it (``report.md`` ->
``report.png``): :func:`markdown_plot_path`, :func:`write_markdown`.
"""

from __future__ import annotations

import json
from pathlib import Path

from planner.errors import InputError

__all__ = ["KINDS", "kind_of", "render_terminal", "render_markdown", "render_html",
           "markdown_plot_path", "write_markdown", "read_result", "inputs_lines",
           "inputs_terminal", "print_inputs", "inputs_markdown", "inputs_html", "add_inputs_html",
           "check_result", "guarded"]

KINDS = ("verdict", "repeats", "budget", "draft", "draft-sweep", "calibrate", "shift")
_SCHEMA_KIND = {"noise-prior": "calibrate"}


#: The result schema versions this planner writes and reads (``spec-planner/<kind>/<v>``).
SCHEMA_VERSIONS = frozenset({"1"})


def kind_of(result: dict) -> str:
    """The kind of a result (one of :data:`KINDS`), from ``command``, else ``schema``.

    Raises
    ------
    InputError
        Not a spec-planner result.
    """
    if not isinstance(result, dict):
        raise InputError("not a spec-planner result (a JSON object)", field="schema")
    cmd = result.get("command")
    schema = str(result.get("schema") or "")
    parts = schema.split("/")
    if len(parts) == 3 and parts[0] == "spec-planner" and parts[2] not in SCHEMA_VERSIONS:
        raise InputError(f"schema {schema!r}: this planner reads version "
                         f"{', '.join(sorted(SCHEMA_VERSIONS))} of its results", field="schema")
    if cmd in KINDS:
        return cmd
    if len(parts) == 3 and parts[0] == "spec-planner":
        kind = _SCHEMA_KIND.get(parts[1], parts[1])
        if kind in KINDS:
            return kind
    raise InputError(f"not a spec-planner result (schema {schema or '?'!r}, command "
                     f"{cmd or '?'!r}; one of {', '.join(KINDS)})", field="schema")


def inputs_lines(r: dict, *, settings: bool = True) -> list[str]:
    """What a result was computed from, one ``name: value`` phrase each (files with their
    SHA-256 prefix, options, version); empty for results saved without ``inputs``.
    ``settings=False`` leaves out the result's own scalar settings kept in the same block
    (a repeats result's ``rule``, ``baseline_tps``, ...: its view shows them already)."""
    inp = r.get("inputs")
    if not isinstance(inp, dict):
        return []
    out = []
    for f in inp.get("files") or []:
        sha = f.get("sha256")
        out.append(f"{f.get('role', 'file')}: {f.get('name')}"
                   + (f" (sha256 {sha[:12]})" if sha else ""))
    opts = inp.get("options") or {}
    if opts:
        out.append("options: " + ", ".join(f"{k}={v}" for k, v in opts.items()))
    for k, v in inp.items():
        if k in ("files", "options", "version") or not settings:
            continue
        if isinstance(v, (str, int, float, bool)) or v is None:
            out.append(f"{k}: {v}")
    if inp.get("version"):
        out.append(f"spec-planner {inp['version']}")
    return out


def inputs_terminal(result: dict) -> str:
    """The one line ending every terminal view: ``inputs: file (sha256 ...); options: ...;
    spec-planner X`` ("" without ``inputs``)."""
    lines = inputs_lines(result, settings=False)
    return "inputs: " + "; ".join(lines) if lines else ""


def print_inputs(result: dict) -> None:
    """Print :func:`inputs_terminal` dim (nothing without ``inputs``)."""
    line = inputs_terminal(result)
    if not line:
        return
    from rich.console import Console
    from rich.text import Text

    con = Console()
    if not con.is_terminal:
        con = Console(width=max(con.width, 130))
    con.print(Text(line, style="dim"))


def inputs_markdown(result: dict) -> str:
    """The ``## Inputs`` section of a Markdown report ("" without ``inputs``)."""
    lines = inputs_lines(result)
    if not lines:
        return ""
    return "\n## Inputs\n\n" + "\n".join(f"- {x.replace('|', '/')}" for x in lines) + "\n"


def inputs_html(result: dict) -> str:
    """The Inputs section of an HTML report ("" without ``inputs``)."""
    import html

    lines = inputs_lines(result)
    if not lines:
        return ""
    return ("<h2>Inputs</h2><ul class=\"inputs\">"
            + "".join(f"<li>{html.escape(x)}</li>" for x in lines) + "</ul>\n")


def add_inputs_html(page: str, result: dict) -> str:
    """``page`` with :func:`inputs_html` inserted before its closing ``</body>``."""
    sec = inputs_html(result)
    if not sec or "<h2>Inputs</h2>" in page:
        return page
    i = page.rfind("</body>")
    return page + sec if i < 0 else page[:i] + sec + page[i:]


def _view(kind: str):
    import importlib

    mod = {"draft-sweep": "draft"}.get(kind, kind)
    return importlib.import_module(f"planner.report.views.{mod}")


def render_terminal(result: dict, view=None) -> None:
    """Print ``result`` as its command does (``view``: the command's own terminal renderer,
    else the one of its kind), then the line of its recorded inputs (:func:`print_inputs`)."""
    if view is None:
        kind = kind_of(result)
        mod = _view(kind)
        view = mod.render_sweep_terminal if kind == "draft-sweep" else mod.render_terminal
    view(result)
    print_inputs(result)


def render_markdown(result: dict, plot_name: str | None = None) -> str:
    """``result`` as Markdown; ``plot_name``: the PNG a draft report refers to."""
    kind = kind_of(result)
    view = _view(kind)
    if kind == "draft":
        text = view.render_markdown(result, plot_name)
    elif kind == "draft-sweep":
        text = view.render_sweep_markdown(result)
    else:
        text = view.render_markdown(result)
    return text + inputs_markdown(result)


def render_html(result: dict) -> str:
    """``result`` as one self-contained HTML page (:func:`planner.report.html.render_html`)."""
    from planner.report.html import render_html as page

    return add_inputs_html(page(result), result)


def markdown_plot_path(result: dict, md: Path | str | None) -> Path | None:
    """The PNG written next to the Markdown report ``md`` (draft results only)."""
    if md is None or kind_of(result) != "draft" or not Path(md).name:
        return None  # (an empty name is refused as a directory by guard_outputs)
    return Path(md).with_suffix(".png")


def write_markdown(result: dict, md: Path | str, samples: dict | None = None) -> None:
    """Write the Markdown report ``md`` (and, for a draft result, its PNG: histograms of the
    bootstrap ``samples`` of a live result, else the intervals of the JSON)."""
    png = markdown_plot_path(result, md)
    if png is not None:
        from planner.report.plots import tpf_plot

        png.write_bytes(tpf_plot(result["policies"], samples))
    Path(md).write_text(render_markdown(result, png.name if png else None), encoding="utf-8",
                        errors="surrogateescape")  # a plot name not in UTF-8: its bytes


def read_result(path: Path | str) -> dict:
    """Read a saved result (``--json`` output) and check it is one.

    Raises
    ------
    InputError
        Not JSON, or not a spec-planner result (naming the file).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", file=str(path)) from None
    except OSError as exc:
        raise InputError(f"unreadable: {exc.strerror}", file=str(path)) from None
    try:
        obj = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    except ValueError as exc:
        raise InputError(str(exc), file=str(path)) from None
    try:
        kind_of(obj)
        check_result(obj)
    except InputError as exc:
        raise InputError(exc.message, file=str(path), field=exc.field) from None
    return obj


def _refuse_constant(name: str):
    """``NaN``/``Infinity`` in a saved result: the writers never write them (``--json`` output
    is strict JSON), so the file was altered."""
    raise ValueError(f"{name} is not a value a saved result holds (strict JSON)")


#: Fields of a saved result that are probabilities or rates (their name, or its prefix/suffix).
_PROB_KEYS = ("assurance", "false_claim_rate", "wrong_sign_rate", "hdi_prob", "level",
              "p_stop_early")


def _is_prob_key(key: str) -> bool:
    return key.startswith("p_") or key in _PROB_KEYS or key.startswith("prob_")


def check_result(obj: dict) -> None:
    """Check the values of a saved result before rendering it: every probability or rate
    (``p_*``, ``prob_*``, ``assurance``, ``false_claim_rate``, ``hdi_prob``...) in [0, 1], every
    TPS mean or level (``mean_tps_*``, ``level_tps_*``, ``baseline_tps``) in the plausible
    range of :data:`planner.io.limits.TPS` (of a duration or size for a lower-is-better result) -- the rules the commands apply to what they write --
    and every name ``a``/``b``/``label`` free of control characters.

    Raises
    ------
    InputError
        Naming the field (its JSON path, ``policies[2].assurance``).
    """
    from planner.io.limits import BYTES, DURATION, TPS, has_control

    # a TPS result's means are rates; a lower-is-better one (latency, duration, size) takes
    # the widest of their ranges (the saved result does not always name its unit)
    lower = obj.get("direction") == "lower_is_better"
    level = TPS if not lower else type(TPS)("value", "", DURATION.low, BYTES.high)

    def walk(x, path: str) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                here = f"{path}.{k}" if path else str(k)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    if _is_prob_key(str(k)) and not 0.0 <= v <= 1.0:
                        raise InputError(f"a probability outside [0, 1]: {v!r}", field=here)
                    if (str(k).startswith(("mean_tps_", "level_tps_"))
                            or k == "baseline_tps"):
                        level.check(v, field=here)
                elif isinstance(v, str) and k in ("a", "b", "label", "config", "name") \
                        and has_control(v):
                    raise InputError(f"control character in {v!r}", field=here)
                walk(v, here)
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, f"{path}[{i}]")

    walk(obj, "")


#: Errors a view raises on a result that lacks a field it renders or holds one of another
#: type (a saved file edited by hand or cut short): reported as one line by
#: :func:`guarded`.
RENDER_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError)


def guarded(path: Path | str, fn, *args, **kwargs):
    """Call ``fn`` (a renderer) on a saved result read from ``path``; a missing or mistyped
    field becomes one :class:`InputError` naming the file and the field instead of a
    traceback (the commands' own results always hold every field their views read)."""
    try:
        return fn(*args, **kwargs)
    except InputError:
        raise
    except KeyError as exc:
        raise InputError(f"a saved {kind_of(args[0]) if args else ''} result without this "
                         f"field (edited or cut short?)", file=str(path),
                         field=str(exc.args[0]) if exc.args else None) from None
    except RENDER_ERRORS as exc:
        raise InputError(f"a saved result with a field of the wrong type or value "
                         f"(edited?): {type(exc).__name__}: {exc}", file=str(path)) from None
