"""Readers of benchmark tools' result files: each file becomes rows of the runs table.

Formats (``format`` names):

``table``
    A runs table (CSV, JSON, JSONL; :func:`planner.io.runs.read_runs` reads it itself).
``vllm-serve``, ``vllm-throughput``, ``vllm-latency``
    :mod:`planner.io.formats.vllm` (``vllm`` picks one of the three by content).
``sglang``
    :mod:`planner.io.formats.sglang`.
``pyperf``
    :mod:`planner.io.formats.pyperf`.
``hyperfine``
    :mod:`planner.io.formats.hyperfine`.

Detection is by content (:func:`detect_format`), never by file name, and the caller can
override it. Each reader sets every run's ``metric`` to the field it read and the run's
direction (``lower_is_better``) from that metric; a file that cannot say which machine it ran
on leaves ``instance`` unset (each run its own instance) unless the caller passes one.
"""

from __future__ import annotations

import json

from planner.errors import InputError
from planner.io.formats import hyperfine, pyperf, sglang, vllm
from planner.io.rows import Run

__all__ = ["FORMATS", "detect_format", "read_results"]

#: Accepted ``format`` names.
FORMATS = ("table", "vllm", "vllm-serve", "vllm-throughput", "vllm-latency", "sglang",
           "pyperf", "hyperfine")


def _parse(text: str):
    """A JSON document (dict/list), a list of (line, object) of JSONL, or None."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    lines = []
    for k, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            return None
        lines.append((k, d))
    return lines


def _records(doc) -> list[tuple[int, dict]] | None:
    """(line, record) pairs of a serving-benchmark file (one object, or JSONL lines)."""
    if isinstance(doc, dict):
        return [(1, doc)]
    if isinstance(doc, list) and doc and all(isinstance(x, tuple) for x in doc):
        if all(isinstance(d, dict) for _, d in doc):
            return list(doc)
    return None


def _detect(doc) -> str:
    if isinstance(doc, dict):
        if pyperf.looks_like(doc):
            return "pyperf"
        if hyperfine.looks_like(doc):
            return "hyperfine"
        if vllm.looks_like_latency(doc):
            return "vllm-latency"
        if vllm.looks_like_throughput(doc):
            return "vllm-throughput"
    recs = _records(doc)
    if recs and all(vllm.looks_like_serve(r) for _, r in recs):
        return "sglang" if all(sglang.looks_like(r) for _, r in recs) else "vllm-serve"
    return "table"


def detect_format(text: str) -> str:
    """The format of a file's text (one of :data:`FORMATS` except ``vllm``).

    Anything that is not recognisably a tool's result (including unreadable JSON, which the
    runs-table reader reports with its line) is ``table``.
    """
    doc = _parse(text)
    return "table" if doc is None else _detect(doc)


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
        One of :data:`FORMATS` other than ``table``.
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
    if format not in FORMATS or format == "table":
        raise InputError(f"unknown result format {format!r} (known: "
                         f"{', '.join(f for f in FORMATS if f != 'table')})", field="format")
    doc = _parse(text)
    if doc is None:
        raise InputError(f"not a {format} result (expected JSON)", file=path, field="format")
    kind = _detect(doc)
    if format == "vllm" and kind.startswith("vllm-"):
        format = kind
    kw = dict(path=path, metric=metric, config=config, instance=instance)
    if format in ("vllm-serve", "sglang"):
        recs = _records(doc)
        if not recs or not all(vllm.looks_like_serve(r) for _, r in recs):
            raise InputError(f"not a {format} result (no output_throughput)", file=path,
                             field="output_throughput")
        return (sglang.read if format == "sglang" else vllm.read_serve)(recs, **kw)
    if format != kind:
        raise InputError(f"not a {format} result (it reads as {kind})", file=path,
                         field="format")
    if format == "vllm-throughput":
        return vllm.read_throughput(doc, **kw)
    if format == "vllm-latency":
        return vllm.read_latency(doc, **kw)
    if format == "pyperf":
        return pyperf.read(doc, **kw)
    return hyperfine.read(doc, **kw)
