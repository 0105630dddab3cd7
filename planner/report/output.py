"""Emit a command's JSON result: to stdout as JSON, or rendered for the terminal / files."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

__all__ = ["VOLATILE_KEYS", "OUTPUT_PARAMS", "to_json", "saved_form", "guard_outputs",
           "NamedFile", "input_record", "with_record", "emit"]


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


#: File suffixes a report option overwrites when the file exists (option -> suffixes).
_REPORT_SUFFIXES = {"--md": (".md", ".markdown", ".png"), "--html": (".html", ".htm")}


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
        An output resolves to an input file or lies inside an input folder, two outputs (or
        a Markdown report and its plot) resolve to one file, an output is a directory, an
        existing file a report would replace is not a report of that kind (``--md`` over a
        ``.toml``), or its folder does not exist.
    """
    import os

    from planner.errors import InputError

    ins = [os.path.realpath(p) for p in inputs if p is not None]
    seen: dict = {}
    for opt, out in outputs:
        if out is None:
            continue
        real = os.path.realpath(out)
        if real in seen:  # --md y.md --html y.md, or --md x.png (its plot is x.png)
            raise InputError(f"written twice: also the {seen[real]} output (give each report "
                             "its own file)", file=str(out), field=opt)
        seen[real] = opt
        for src in ins:
            if real == src or (os.path.isdir(src) and real.startswith(src.rstrip(os.sep) + os.sep)):
                raise InputError("refusing to write a report over an input" + (
                    "" if real == src else " folder's file"), file=str(out), field=opt)
        if os.path.isdir(real):
            raise InputError("is a directory (give a file name)", file=str(out), field=opt)
        kinds = _REPORT_SUFFIXES.get(opt.split()[0])
        if kinds and os.path.exists(real) and os.path.splitext(real)[1].lower() not in kinds:
            # '--md examples/plan.toml' replaced a plan with Markdown: an existing file is
            # overwritten only when it is a report of that kind
            raise InputError(f"exists and is not a {kinds[0]} file: refusing to overwrite it "
                             f"(give a {kinds[0]} name, or remove the file first)",
                             file=str(out), field=opt)
        parent = os.path.dirname(real) or "."
        if not os.path.isdir(parent):
            raise InputError("folder does not exist", file=str(out), field=opt)


#: Parameters of a command that name where or how it writes, not what it computed from:
#: left out of the recorded inputs.
OUTPUT_PARAMS = frozenset({"as_json", "md", "html", "output", "idata", "top"})


def _sha256(path) -> str | None:
    import hashlib

    try:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    except OSError:
        return None


def _plain(v: Any) -> Any:
    if isinstance(v, Path):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


@dataclass(frozen=True)
class NamedFile:
    """An input file recorded under a name of its own rather than its path: a file shipped
    inside the package is recorded as ``embedded:NAME``, never as a machine's path.

    Attributes
    ----------
    name : str
        The name the record shows.
    path : Path
        The file whose content is hashed.
    """

    name: str
    path: Path


def input_record(params: Mapping[str, Any]) -> dict:
    """What a command computed from: its input files (name as given, role = parameter name,
    SHA-256 of the content), every other parameter's value (filters such as ``run_group``,
    ``platform``, ``metric``, ``workload``; ``prior``; ``seed``; ...) and the spec-planner
    version.

    Parameters
    ----------
    params : mapping
        Parameter name -> value, in the order the record lists them (the CLI passes its
        command's parameters: :func:`planner.cli._options.command_params`, with the defaults
        the command decides filled in). A ``Path`` (or a list of them) or a
        :class:`NamedFile` is a file.

    Returns
    -------
    dict
        ``files`` (list of ``{role, name, sha256}``; sha256 None when the file cannot be
        read), ``options`` ({name: value}; outputs (:data:`OUTPUT_PARAMS`) and options left
        unset (None, empty) left out) and ``version``.
    """
    from planner import __version__

    files, options = [], {}
    for name, value in params.items():
        if name in OUTPUT_PARAMS:
            continue
        if isinstance(value, NamedFile):
            files.append({"role": name, "name": value.name, "sha256": _sha256(value.path)})
            continue
        paths = value if isinstance(value, (list, tuple)) else [value]
        if paths and all(isinstance(v, Path) for v in paths):
            for v in paths:
                files.append({"role": name, "name": str(v),
                              "sha256": _sha256(v) if v.is_file() else None})
            continue
        if value is None or value == [] or value == ():
            continue  # not given, and its default is decided downstream (in the result)
        options[name] = _plain(value)
    return {"files": files, "options": options, "version": __version__}


def with_record(result: dict, record: dict | None) -> dict:
    """``result`` with ``record`` merged into its ``inputs`` block (created after
    ``command``; keys the result already has win)."""
    if not record:
        return result
    merged = {**record, **(result.get("inputs") or {})}
    out: dict = {}
    for k, v in result.items():
        if k == "inputs":
            continue
        out[k] = v
        if k == "command":
            out["inputs"] = merged
    if "inputs" not in out:
        out = {"inputs": merged, **out}
    return out


def saved_form(result: dict) -> dict:
    """``result`` as a saved ``--json`` file reads back (JSON-safe, timings left out): what
    every file report is rendered from, so ``planner report`` re-renders it identically."""
    return json.loads(to_json(result))


def emit(result: dict, *, as_json: bool,
         terminal: Callable[[dict], None] | None | bool = None,
         md: Path | None = None, html: Path | None = None,
         md_renderer: Callable[[dict], str] | None = None,
         html_renderer: Callable[[dict], str] | None = None, inputs=(),
         samples: dict | None = None, record: dict | None = None) -> None:
    """Write ``result`` to stdout (JSON or terminal view) and optional Markdown / HTML files.

    The files are rendered from :func:`saved_form` of ``result``, by the given renderers or,
    when none is given, by :mod:`planner.report.render` (which knows every result); the
    terminal view likewise (``terminal=False``: none), followed by one line of the recorded
    inputs. ``samples`` (bootstrap draws of a live draft result) only feed
    the PNG next to a draft's Markdown. ``inputs`` are the command's input paths: a report
    never overwrites one (:func:`guard_outputs`). ``record`` (the command's
    :func:`input_record`) is merged into the result's ``inputs`` block (JSON, Markdown and
    HTML all show it); ``planner report`` gives none, keeping the saved one.
    """
    from planner.report import render

    if record:
        result = with_record(result, record)
    saved = saved_form(result)
    png = render.markdown_plot_path(saved, md) if md_renderer is None else None
    guard_outputs([("--md", md), ("--html", html), ("--md (its plot)", png)], inputs)
    if md is not None:
        if md_renderer is not None:
            Path(md).write_text(md_renderer(saved) + render.inputs_markdown(saved),
                                encoding="utf-8", errors="surrogateescape")
        else:
            render.write_markdown(saved, md, samples=samples)
    if html is not None:
        page = (render.add_inputs_html(html_renderer(saved), saved) if html_renderer
                else render.render_html(saved))
        # file names not in UTF-8 (os.fsdecode's surrogates) go back out as their bytes
        Path(html).write_text(page, encoding="utf-8", errors="surrogateescape")
    if as_json:
        print(to_json(result))
    elif terminal is not False:
        render.render_terminal(result, view=terminal)  # ends with the inputs line
