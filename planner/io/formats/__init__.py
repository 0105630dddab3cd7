"""The input-format registry: readers of benchmark tools' result files, each file becoming
rows of the runs table.

A format is one module of this package declaring ``FORMATS``, a tuple of
:class:`planner.io.formats._common.Format` (name, aliases, one-line help, a sniffer that
recognises the parsed file, a reader that returns its runs), and one entry in
:data:`REGISTRY`. Everything else is derived from the registry: content detection
(:func:`detect_format`), the names ``--format`` accepts (:func:`format_names`), its help
(:func:`format_help`) and the errors that list the formats. ``table`` (a runs table: CSV,
JSON, JSONL, read by :func:`planner.io.runs.read_runs` itself) is what any other file is.

Detection is by content, never by file name, in registry order (a format that ``refines``
another is tried just before it), and the caller can override it. Each reader sets every
run's ``metric`` to the field it read and the run's direction (``lower_is_better``) from that
metric; a file that cannot say which machine it ran on leaves ``instance`` unset (each run its
own instance) unless the caller passes one.
"""

from __future__ import annotations

import json

from planner.errors import InputError
from planner.io._parse import HUGE_INTEGER
from planner.io.formats import hyperfine, pyperf, sglang, vllm
from planner.io.formats._common import Document, Format
from planner.io.rows import Run

__all__ = ["REGISTRY", "TABLE", "Document", "Format", "detect_format", "format_help",
           "format_names", "format_table", "formats", "read_results", "resolve"]

#: The format modules, each declaring ``FORMATS``; their order is the detection order.
REGISTRY = (pyperf, hyperfine, vllm, sglang)

#: The name of a runs table (any file no registered format recognises).
TABLE = "table"


def formats() -> list[Format]:
    """The registered formats in listing order (:data:`REGISTRY`, each module's in its
    order)."""
    return [f for module in REGISTRY for f in module.FORMATS]


def _detection_order() -> list[Format]:
    """:func:`formats` with each format that refines another moved just before it."""
    out: list[Format] = []
    fs = formats()
    names = {f.name for f in fs}
    for f in fs:
        if f.refines in names:
            continue
        out.extend(g for g in fs if g.refines == f.name)
        out.append(f)
    return out


def format_names() -> list[str]:
    """Every name ``--format`` accepts: ``table``, then each format's family (once), name and
    aliases, in registry order."""
    out = [TABLE]
    for f in formats():
        for n in (f.family, f.name, *f.aliases):
            if n and n not in out:
                out.append(n)
    return out


def format_help() -> str:
    """The ``--format`` help: the names, a family with its members, aliases in brackets
    (``table, pyperf, hyperfine, vllm (vllm-latency, ...), sglang``)."""
    items: list[str] = []
    seen: set[str] = set()
    for f in formats():
        if f.family in seen:
            continue
        if f.family:
            seen.add(f.family)
            members = [g.name for g in formats() if g.family == f.family]
            items.append(f"{f.family} ({', '.join(members)})")
        else:
            items.append(f.name + (f" (or {', '.join(f.aliases)})" if f.aliases else ""))
    return f"Input format: {TABLE}, {', '.join(items)} (default: detected from the content)."


def format_table() -> str:
    """A Markdown table of the formats (name, other names, what it reads), for the docs."""
    rows = ["| format | also | reads |", "|---|---|---|",
            f"| {TABLE} | | a runs table (CSV, JSON, JSONL) |"]
    for f in formats():
        also = ", ".join(n for n in (f.family, *f.aliases) if n)
        rows.append(f"| {f.name} | {also} | {f.help} |")
    return "\n".join(rows)


def resolve(name: str) -> str:
    """The canonical name of a ``--format`` value: ``table``, a family, or a format (an alias
    read as its format); letter case and surrounding blanks ignored.

    Raises
    ------
    InputError
        Not a registered name (field ``format``; the message lists them).
    """
    key = name.strip().lower() if isinstance(name, str) else name
    if key == TABLE:
        return TABLE
    for f in formats():
        if key == f.name or key in f.aliases:
            return f.name
        if key == f.family:
            return key
    raise InputError(f"unknown format {name!r} (known: {', '.join(format_names())})",
                     field="format")


def _parse(text: str, path: str | None = None) -> Document | None:
    """The file as JSON (one document, or JSON Lines), or None when it is neither.

    Raises
    ------
    InputError
        An integer of thousands of digits (:data:`planner.io._parse.HUGE_INTEGER`).
    """
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        return Document(data=json.loads(stripped))
    except json.JSONDecodeError:
        pass
    except ValueError:
        raise InputError(HUGE_INTEGER, file=path) from None
    lines = []
    for k, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            return None
        except ValueError:
            raise InputError(HUGE_INTEGER, file=path, line=k) from None
        lines.append((k, d))
    return Document(lines=lines)


def _detect(doc: Document) -> str:
    for f in _detection_order():
        if f.sniff(doc):
            return f.name
    return TABLE


def detect_format(text: str, path: str | None = None) -> str:
    """The format of a file's text: a registered format's name, or ``table``.

    Anything that is not recognisably a tool's result (including unreadable JSON, which the
    runs-table reader reports with its line) is ``table``.

    Raises
    ------
    InputError
        An integer of thousands of digits (naming ``path``).
    """
    doc = _parse(text, path)
    return TABLE if doc is None else _detect(doc)


def read_results(text: str, *, path: str, format: str, metric: str | None = None,
                 config: str | None = None, instance: str | None = None) -> list[Run]:
    """Runs of one tool result file.

    Parameters
    ----------
    text : str
        The file's text.
    path : str
        The file (for messages and each run's ``source``).
    format : str
        A name of :func:`format_names` other than ``table``.
    metric : str, optional
        The field to read (default: the format's output-token throughput, or its only metric).
    config : str, optional
        The config label to use where the file names none (``planner ingest`` passes the
        sub-folder name).
    instance : str, optional
        Instance label of every run, for files that cannot say which machine they ran on.

    Raises
    ------
    InputError
        Unknown format, a file that is not of that format, a missing or non-positive metric;
        the message names the file, line and field.
    """
    known = [n for n in format_names() if n != TABLE]
    try:
        name = resolve(format)
    except InputError:
        name = TABLE
    if name == TABLE:
        raise InputError(f"unknown result format {format!r} (known: {', '.join(known)})",
                         field="format")
    doc = _parse(text, path)
    if doc is None:
        raise InputError(f"not a {format} result (expected JSON)", file=path, field="format")
    kind = _detect(doc)
    by_name = {f.name: f for f in formats()}
    if name not in by_name:  # a family: the member the content is
        member = by_name.get(kind)
        if member is None or member.family != name:
            raise InputError(f"not a {format} result (it reads as {kind})", file=path,
                             field="format")
        name = kind
    fmt = by_name[name]
    if not (fmt.accepts or fmt.sniff)(doc):
        if fmt.refusal is not None:
            reason, field = fmt.refusal
            raise InputError(f"not a {name} result ({reason})", file=path, field=field)
        raise InputError(f"not a {name} result (it reads as {kind})", file=path,
                         field="format")
    return fmt.read(doc, path=path, metric=metric, config=config, instance=instance)
