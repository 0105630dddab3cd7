"""Emit a command's JSON result: to stdout as JSON, or rendered for the terminal / files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

__all__ = ["VOLATILE_KEYS", "to_json", "saved_form", "guard_outputs", "emit"]


def _clean(obj: Any) -> Any:
    """Make a result JSON-safe: numpy scalars to Python, NaN/inf to None."""
    import numpy as np

    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_clean(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


#: Keys left out of the JSON output: wall-clock timings differ between runs, and the JSON of a
#: seeded command must be byte-for-byte reproducible. The terminal view still shows them.
VOLATILE_KEYS = ("elapsed_s",)


def to_json(result: dict) -> str:
    """Serialise a result dict to stable, indented JSON text (timings left out)."""
    return json.dumps(_clean({k: v for k, v in result.items() if k not in VOLATILE_KEYS}),
                      indent=2, sort_keys=False)


def guard_outputs(outputs, inputs) -> None:
    """Refuse to write a report over an input (also through links) or into a missing folder.

    Parameters
    ----------
    outputs : iterable of (option name, path or None)
    inputs : iterable of path or None
        Input files, or input folders (then nothing may be written inside them).

    Raises
    ------
    InputError
        An output resolves to an input file or lies inside an input folder, is a directory,
        or its folder does not exist.
    """
    import os

    from planner.errors import InputError

    ins = [os.path.realpath(p) for p in inputs if p is not None]
    for opt, out in outputs:
        if out is None:
            continue
        real = os.path.realpath(out)
        for src in ins:
            if real == src or (os.path.isdir(src) and real.startswith(src.rstrip(os.sep) + os.sep)):
                raise InputError("refusing to write a report over an input" + (
                    "" if real == src else " folder's file"), file=str(out), field=opt)
        if os.path.isdir(real):
            raise InputError("is a directory (give a file name)", file=str(out), field=opt)
        parent = os.path.dirname(real) or "."
        if not os.path.isdir(parent):
            raise InputError("folder does not exist", file=str(out), field=opt)


def saved_form(result: dict) -> dict:
    """``result`` as a saved ``--json`` file reads back (JSON-safe, timings left out): what
    every file report is rendered from, so ``planner report`` re-renders it identically."""
    return json.loads(to_json(result))


def emit(result: dict, *, as_json: bool, terminal: Callable[[dict], None] | None = None,
         md: Path | None = None, html: Path | None = None,
         md_renderer: Callable[[dict], str] | None = None,
         html_renderer: Callable[[dict], str] | None = None, inputs=(),
         samples: dict | None = None) -> None:
    """Write ``result`` to stdout (JSON or terminal view) and optional Markdown / HTML files.

    The files are rendered from :func:`saved_form` of ``result``, by the given renderers or,
    when none is given, by :mod:`planner.report.render` (which knows every result); the
    terminal view likewise. ``samples`` (bootstrap draws of a live draft result) only feed
    the PNG next to a draft's Markdown. ``inputs`` are the command's input paths: a report
    never overwrites one (:func:`guard_outputs`).
    """
    from planner.report import render

    saved = saved_form(result)
    png = render.markdown_plot_path(saved, md) if md_renderer is None else None
    guard_outputs([("--md", md), ("--html", html), ("--md", png)], inputs)
    if md is not None:
        if md_renderer is not None:
            Path(md).write_text(md_renderer(saved), encoding="utf-8")
        else:
            render.write_markdown(saved, md, samples=samples)
    if html is not None:
        Path(html).write_text((html_renderer or render.render_html)(saved), encoding="utf-8")
    if as_json:
        print(to_json(result))
    else:
        (terminal or render.render_terminal)(result)
