"""One report layer: any saved result, rendered from its JSON object alone.

A result says what it is by its ``schema`` (``spec-planner/<kind>/<version>``) or, for
files written before every result had one, its ``command``. :func:`kind_of` reads that;
the renderers dispatch on it to the view of each command (``*_view.py``, :mod:`.html`):

========== ==================================== ==========================
kind       terminal / Markdown                  HTML
========== ==================================== ==========================
verdict    :mod:`.verdict_view`                 :func:`.html.render_verdict`
repeats    :mod:`.repeats_view`                 :func:`.html.render_repeats`
budget     :mod:`.budget_view`                  :func:`.html.render_budget`
draft      :mod:`.draft_view`                   :func:`.html.render_draft`
draft-sweep :mod:`.draft_view` (``sweep``)       :func:`.html.render_sweep`
calibrate  :mod:`.calibrate_view`               :func:`.html.render_calibrate`
========== ==================================== ==========================

A draft result's Markdown refers to a PNG written next to it (``report.md`` ->
``report.png``): :func:`markdown_plot_path`, :func:`write_markdown`.
"""

from __future__ import annotations

import json
from pathlib import Path

from planner.errors import InputError

__all__ = ["KINDS", "kind_of", "render_terminal", "render_markdown", "render_html",
           "markdown_plot_path", "write_markdown", "read_result"]

KINDS = ("verdict", "repeats", "budget", "draft", "draft-sweep", "calibrate")
_SCHEMA_KIND = {"noise-prior": "calibrate"}


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
    if cmd in KINDS:
        return cmd
    schema = str(result.get("schema") or "")
    parts = schema.split("/")
    if len(parts) == 3 and parts[0] == "spec-planner":
        kind = _SCHEMA_KIND.get(parts[1], parts[1])
        if kind in KINDS:
            return kind
    raise InputError(f"not a spec-planner result (schema {schema or '?'!r}, command "
                     f"{cmd or '?'!r}; one of {', '.join(KINDS)})", field="schema")


def _view(kind: str):
    import importlib

    mod = {"draft-sweep": "draft"}.get(kind, kind)
    return importlib.import_module(f"planner.report.{mod}_view")


def render_terminal(result: dict) -> None:
    """Print ``result`` as its command does."""
    kind = kind_of(result)
    view = _view(kind)
    (view.render_sweep_terminal if kind == "draft-sweep" else view.render_terminal)(result)


def render_markdown(result: dict, plot_name: str | None = None) -> str:
    """``result`` as Markdown; ``plot_name``: the PNG a draft report refers to."""
    kind = kind_of(result)
    view = _view(kind)
    if kind == "draft":
        return view.render_markdown(result, plot_name)
    if kind == "draft-sweep":
        return view.render_sweep_markdown(result)
    return view.render_markdown(result)


def render_html(result: dict) -> str:
    """``result`` as one self-contained HTML page (:func:`planner.report.html.render_html`)."""
    from planner.report.html import render_html as page

    return page(result)


def markdown_plot_path(result: dict, md: Path | str | None) -> Path | None:
    """The PNG written next to the Markdown report ``md`` (draft results only)."""
    if md is None or kind_of(result) != "draft":
        return None
    return Path(md).with_suffix(".png")


def write_markdown(result: dict, md: Path | str, samples: dict | None = None) -> None:
    """Write the Markdown report ``md`` (and, for a draft result, its PNG: histograms of the
    bootstrap ``samples`` of a live result, else the intervals of the JSON)."""
    png = markdown_plot_path(result, md)
    if png is not None:
        from planner.report.plots import tpf_plot

        png.write_bytes(tpf_plot(result["policies"], samples))
    Path(md).write_text(render_markdown(result, png.name if png else None), encoding="utf-8")


def read_result(path: Path | str) -> dict:
    """Read a saved result (``--json`` output) and check it is one.

    Raises
    ------
    InputError
        Not JSON, or not a spec-planner result (naming the file).
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    try:
        kind_of(obj)
    except InputError as exc:
        raise InputError(exc.message, file=str(path), field=exc.field) from None
    return obj
