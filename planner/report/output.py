"""Emit a command's JSON result: to stdout as JSON, or rendered for the terminal / files."""

from __future__ import annotations

import json
import math
import os
import stat
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


#: What each output option writes: option -> kind (the first word of the option names it;
#: ``planner ingest -o``, ``planner calibrate -o`` and ``verdict --idata`` pass their kind
#: themselves).
_OPTION_KINDS = {"--md": "md", "--md (its plot)": "png", "--html": "html"}

#: Every kind of output file: (suffixes an existing file may have to be replaced, what it
#: is called in a message). A new file may have any name; an existing one is replaced only
#: when its suffix is one of these *and* its content is of the kind (:func:`_content_kind`).
_KINDS = {
    "md": ((".md", ".markdown"), "a Markdown report"),
    "png": ((".png",), "a PNG plot"),
    "html": ((".html", ".htm"), "an HTML report"),
    "csv": ((".csv", ".tsv", ".txt"), "a runs table (CSV)"),
    "json": ((".json",), "a noise prior (JSON)"),
    "netcdf": ((".nc", ".nc4", ".netcdf", ".h5"), "a NetCDF file"),
}

#: Saved-result schemas (``spec-planner/KIND/...``) a JSON output may replace, by kind.
_JSON_SCHEMAS = {"json": ("noise-prior",)}

_MAGIC = ((b"\x89PNG\r\n\x1a\n", "png"), (b"\x89HDF\r\n\x1a\n", "netcdf"),
          (b"CDF\x01", "netcdf"), (b"CDF\x02", "netcdf"), (b"%PDF", "a PDF document"),
          (b"PK\x03\x04", "a zip archive"), (b"\x1f\x8b", "a gzip file"),
          (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"))


def _content_kind(path: str) -> str:
    """What an existing file holds, from its first 8 KiB: a kind of :data:`_KINDS`, the
    name of another binary format, ``binary``, ``json:SCHEMA`` / ``json`` (a JSON document),
    ``html``, ``text`` or ``empty``."""
    import re

    try:
        with open(path, "rb") as fh:
            head = fh.read(8192)
    except OSError:
        return "unreadable"
    if not head:
        return "empty"
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if b"\0" in head:
        return "binary"
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut at the 8 KiB boundary
            return "binary"
        text = head[:exc.start].decode("utf-8-sig")
    t = text.lstrip()
    if t.startswith(("{", "[")):
        m = re.search(r'"schema"\s*:\s*"spec-planner/([A-Za-z0-9_-]+)/', t)
        return f"json:{m.group(1)}" if m else "json"
    if t[:15].lower().startswith(("<!doctype html", "<html")):
        return "html"
    return "text"


def _replaceable(kind: str, found: str) -> bool:
    """Whether an output of ``kind`` may replace an existing file holding ``found``."""
    if found == "empty":
        return True
    if kind in ("png", "netcdf"):
        return found == kind
    if kind == "html":
        return found == "html"
    if kind == "json":
        return found.startswith("json:") and found[5:] in _JSON_SCHEMAS["json"]
    return found == "text"  # md, csv: plain text that is not JSON or HTML


def _what(found: str) -> str:
    if found.startswith("json:"):
        return f"a saved '{found[5:]}' result"
    return {"json": "a JSON document", "html": "an HTML page", "text": "text of another kind",
            "binary": "binary data", "unreadable": "a file that cannot be read"}.get(
        found, _KINDS[found][1] if found in _KINDS else found)


def _identity(path: str):
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _in_folder(ident, folder: str, limit: int = 100_000) -> bool:
    """Whether a file of identity ``ident`` (device, inode) lies in ``folder`` (a hard link
    to one of its files); at most ``limit`` entries are looked at."""
    n = 0
    for root, _dirs, files in os.walk(folder):
        for f in files:
            n += 1
            if n > limit:
                return False
            if _identity(os.path.join(root, f)) == ident:
                return True
    return False


def guard_outputs(outputs, inputs) -> None:
    """Refuse to write a report over an input (also through links) or into a missing folder.

    Parameters
    ----------
    outputs : iterable of (option name, path or None) or (option name, path or None, kind)
        ``kind`` one of :data:`_KINDS` (default from the option: :data:`_OPTION_KINDS`).
    inputs : iterable of path or None
        Input files, or input folders (then nothing may be written inside them).

    Raises
    ------
    InputError
        An output is an input file (the same path, a symlink, or a hard link: the same
        device and inode) or lies inside an input folder, two outputs (or a Markdown
        report and its plot) are one file, an output is a directory, an existing file an
        output would replace is not of the kind written (``--md photo.png``, ``calibrate -o
        plan.toml``, a ``.md`` name holding a PNG: see :func:`_content_kind`), or its
        folder does not exist; a block device or a socket. A character device or a named
        pipe (``/dev/stdout``, ``/dev/null``) is a stream and passes.
    """
    from planner.errors import InputError

    ins = [os.path.realpath(p) for p in inputs if p is not None]
    in_ids = {i: p for p in ins if (i := _identity(p)) is not None}
    seen: dict = {}
    seen_ids: dict = {}
    for item in outputs:
        opt, out = item[0], item[1]
        if out is None:
            continue
        kind = item[2] if len(item) > 2 else _OPTION_KINDS.get(opt, _OPTION_KINDS.get(
            opt.split()[0]))
        try:
            mode = os.stat(out).st_mode
        except (OSError, ValueError):
            mode = None
        if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
            continue  # /dev/stdout, /dev/null, a named pipe: a stream, written in place
        if mode is not None and (stat.S_ISBLK(mode) or stat.S_ISSOCK(mode)):
            raise InputError("is a device or socket, not a file: refusing to write to it",
                             file=str(out), field=opt)
        real = os.path.realpath(out)
        ident = _identity(real)
        other = seen.get(real) or (seen_ids.get(ident) if ident is not None else None)
        if other is not None:  # --md y.md --html y.md, or --md x.png (its plot is x.png)
            raise InputError(f"written twice: also the {other} output (give each report "
                             "its own file)", file=str(out), field=opt)
        seen[real] = opt
        if ident is not None:
            seen_ids[ident] = opt
        for src in ins:
            if real == src or (os.path.isdir(src) and real.startswith(src.rstrip(os.sep) + os.sep)):
                raise InputError("refusing to write a report over an input" + (
                    "" if real == src else " folder's file"), file=str(out), field=opt)
        if ident is not None and ident in in_ids:
            raise InputError(f"is the input {in_ids[ident]} under another name (a hard "
                             "link): refusing to write over it", file=str(out), field=opt)
        if os.path.isdir(real):
            raise InputError("is a directory (give a file name)", file=str(out), field=opt)
        if ident is not None:
            try:
                links = os.stat(real).st_nlink
            except OSError:
                links = 1
            if links > 1:
                for src in ins:
                    if os.path.isdir(src) and _in_folder(ident, src):
                        raise InputError("is a hard link to a file of the input folder "
                                         f"{src}: refusing to write over it", file=str(out),
                                         field=opt)
        if kind in _KINDS and ident is not None:
            suffixes, name = _KINDS[kind]
            found = None
            if os.path.splitext(real)[1].lower() not in suffixes:
                found = "suffix"
            else:
                c = _content_kind(real)
                if not _replaceable(kind, c):
                    found = c
            if found is not None:
                # '--md examples/plan.toml' replaced a plan with Markdown: an existing file
                # is overwritten only when it is an output of that kind
                held = (f"is not a {suffixes[0]} file" if found == "suffix"
                        else f"holds {_what(found)}")
                raise InputError(f"exists and {held}, not {name}: refusing to overwrite it "
                                 f"(give a new {suffixes[0]} name, or remove the file first)",
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
    from planner.io.files import _stream

    png = render.markdown_plot_path(saved, md) if md_renderer is None else None
    if md is not None and _stream(md):
        png = None  # '--md /dev/stdout': no plot beside a stream (it would land in /dev)
    guard_outputs([("--md", md), ("--html", html), ("--md (its plot)", png)], inputs)
    # everything is rendered before anything is written: a renderer's error writes nothing
    files = []
    if md is not None:
        if md_renderer is not None:
            files.append((md, "--md", md_renderer(saved) + render.inputs_markdown(saved)))
        else:
            if png is not None:
                view = render.view_of(render.kind_of(saved))
                files.append((png, "--md", view.markdown_plot(saved, samples)))
            files.append((md, "--md", render.render_markdown(saved, png.name if png else None)))
    if html is not None:
        page = (render.add_inputs_html(html_renderer(saved), saved) if html_renderer
                else render.render_html(saved))
        files.append((html, "--html", page))
    from planner.io.files import write_atomic

    for path, opt, data in files:
        # temp file + fsync + rename: a full disk leaves an old report as it was
        write_atomic(path, data, field=opt)
    if as_json:
        print(to_json(result))
    elif terminal is not False:
        render.render_terminal(result, view=terminal)  # ends with the inputs line
