"""Reading a runs table (one row per benchmark execution) or a benchmark tool's result file
into a :class:`planner.io.table.RunsTable`.

CSV, JSON (a list of objects, or ``{"runs": [...]}``) and JSONL runs tables are read by
:mod:`planner.io.table_readers`; the rate column may also be named by one of
:data:`planner.io.columns.RATE_ALIASES` and the config column by one of
:data:`planner.io.columns.CONFIG_ALIASES` (or any name the caller gives). Column names match
ignoring case and surrounding spaces (``Config``, `` TPS ``); a CSV file may be ``,``-,
``;``- or tab-separated (sniffed from its header line; a ``;`` file may write decimal commas).
A row may give summary statistics in place of its value (``mean``, ``sd``, ``n`` or
``median``, ``min``, ``max``, ``n``, the value blank): it is read as ``n`` pseudo-runs with
that log-scale mean and sd (:mod:`planner.io.summaries`). Benchmark tools' own result files
(vLLM, SGLang, pyperf, hyperfine, ...) are detected by content and read through the formats
registry (:mod:`planner.io.formats`).

Validation is strict: every problem is an :class:`planner.errors.InputError` naming the file,
the row (1-based line number in the file for CSV/JSONL, element index + 1 for JSON) and the
field. Input files are only ever opened for reading.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Iterable, Sequence

from planner.errors import InputError
from planner.io.files import (
    MAX_LINE_CHARS,
    bounded_lines,
    check_encoding,
    check_size,
    read_text,
)
from planner.io.formats import detect_format, read_results, resolve
from planner.io.rows import Run, validate_run
from planner.io.table import RunsTable
from planner.io.table_readers import (
    Census,
    check_duplicates,
    parse_float,
    read_csv,
    read_json,
    read_jsonl,
)

__all__ = ["read_runs", "runs_from_values"]


def read_runs(path: str | Path, *, format: str | None = None, metric: str | None = None,
              tps_column: str | None = None, instance: str | None = None,
              configs: Iterable[str] | None = None,
              config_column: str | None = None) -> RunsTable:
    """Read a runs table (CSV, JSON or JSONL) or a benchmark tool's result file.

    Parameters
    ----------
    path : str or Path
        ``.csv`` (header row), ``.json`` (list of objects or ``{"runs": [...]}``) or
        ``.jsonl`` (one object per line). Other suffixes are sniffed from the first byte.
        A result file of a registered format (vLLM, SGLang, pyperf, hyperfine, ...) is
        recognised by its content and read by :mod:`planner.io.formats`.
    format : str, optional
        Force a format (a name of :func:`planner.io.formats.format_names`) instead of
        detecting it.
    metric : str, optional
        For a tool's result file, the field to read (default: its output-token throughput).
        Ignored for a runs table, whose ``metric`` column callers filter on.
    tps_column : str, optional
        For a runs table, the column holding the values (default ``tps``, else one of
        :data:`RATE_ALIASES`). Column names are matched ignoring case and surrounding
        spaces (``TPS``, `` Throughput ``).
    instance : str, optional
        For a tool's result file, the instance of every run (the files cannot say which
        machine ran them; without it each run is its own instance).
    configs : iterable of str, optional
        Keep the runs of these configs only (a verdict's A and B): every row is still
        validated and duplicate-checked, with the same errors, but the other rows are only
        counted in the table's census (:attr:`RunsTable.census`), so a large CSV/JSONL table
        costs the memory of the kept runs, and a plain row of another config is checked by a
        fast path (:mod:`planner.io.table_readers`). Other formats read every run (``census``
        None).
    config_column : str, optional
        For a runs table, the column holding the config labels (default ``config``, else
        one of :data:`CONFIG_ALIASES`).

    Returns
    -------
    RunsTable
        Validated runs (``tps`` > 0 and finite, ``config`` non-empty).

    Raises
    ------
    InputError
        Empty file, missing ``config``/``tps`` column, non-numeric / NaN / non-positive TPS,
        duplicate rows (same config, instance, session, rep, TPS, metric, workload, on rows
        that carry a rep or a timestamp: equal values without one are two runs), or a
        syntax error; the message names the file, line and field.
    """
    if format is not None:  # checked before the file is read
        format = resolve(format)
    p = Path(path)
    name = str(path)
    if p.is_dir():
        raise InputError("is a directory (expected a runs CSV/JSON/JSONL file; "
                         "use 'planner ingest DIR' to build one)", file=name)
    suffix = p.suffix.lower()
    regular = check_size(p, name)  # also: not found, over the bound of a file
    size = p.stat().st_size if regular else 0
    streamed = regular and suffix in (".csv", ".jsonl") and format in (None, "table")
    if configs is not None and streamed:
        sink = Census(frozenset(configs))
        if _read_streamed(p, name, suffix, tps_column, instance, size, format, sink,
                          config_column) is not None:
            if not sink.rows:
                raise InputError("no runs in file (header only?)", file=name)
            if not sink.summary and not sink.maybe_duplicate():
                return RunsTable(sink.runs, name, sink.census, sink.kept)
            # summary rows, or two rows whose duplicate keys hash alike: the whole table,
            # read again, gives the exact answer (the pseudo-runs, or the duplicate's message)
        else:
            configs = None  # a tool's result file: read whole below
    if streamed:
        runs = _read_streamed(p, name, suffix, tps_column, instance, size, format,
                              config_column=config_column)
        if runs is not None:
            if not runs:
                raise InputError("no runs in file (header only?)", file=name)
            runs = _expand_summaries(runs, name)
            check_duplicates(runs, name)
            return RunsTable(runs, name)
    text = read_text(p, name)  # bounded; binary, UTF-16 and non-UTF-8 refused
    if not text.strip():
        raise InputError("empty file", file=name)
    first = text.lstrip()[:1]
    fmt = format or ("table" if suffix == ".csv" else detect_format(text, name))
    if fmt != "table":
        if tps_column or config_column:
            raise InputError(f"a {fmt} result has no columns to name (its configs are its "
                             "commands or runs; the value read is chosen with metric)",
                             file=name, field="tps_column" if tps_column else "config_column",
                             remedy="metric")
        runs = read_results(text, path=name, format=fmt, metric=metric, instance=instance)
    elif instance:
        raise InputError("a runs table names its instances in its 'instance' column",
                         file=name, field="instance")
    elif suffix == ".jsonl" or (suffix not in (".csv", ".json") and first == "{"
                                and "\n{" in text.strip()):
        runs = read_jsonl(text.splitlines(), name, tps_column, config_column=config_column)
    elif suffix == ".json" or (suffix != ".csv" and first in "[{"):
        runs = read_json(text, name, tps_column, config_column)
    else:
        runs = read_csv(io.StringIO(text, newline=""), name, tps_column,
                         config_column=config_column)
    if not runs:
        raise InputError("no runs in file (header only?)", file=name)
    runs = _expand_summaries(runs, name)
    check_duplicates(runs, name)
    return RunsTable(runs, name, reader=fmt)


def _expand_summaries(runs: list[Run], path: str) -> list[Run]:
    """Summary rows (``mean``, ``sd``, ``n`` or ``median``, ``min``, ``max``, ``n`` in place
    of the value) replaced by their pseudo-runs (:func:`planner.io.summaries.expand_runs`)."""
    from planner.io.summaries import expand_runs

    return expand_runs(runs, path)


def _read_streamed(p: Path, name: str, suffix: str, tps_column: str | None,
                   instance: str | None, size: int, format: str | None,
                   sink: Census | None = None,
                   config_column: str | None = None) -> list[Run] | Census | None:
    """A ``.csv`` or ``.jsonl`` runs table read line by line from the open file (no copy of
    the whole text); None when a ``.jsonl`` file's first record is a tool's result (the caller
    then reads the whole file). With ``sink``, the rows go to it (and it is returned)."""
    with open(p, "rb") as raw:
        check_encoding(raw.read(1 << 16), name)
    with open(p, encoding="utf-8-sig", newline="" if suffix == ".csv" else None) as fh:
        try:
            head = fh.read(1 << 16)
            if not head.strip() and size <= len(head.encode("utf-8")) + 3:
                raise InputError("empty file", file=name)
            fh.seek(0)
            if suffix == ".jsonl" and format is None:
                first = ""
                while not first.strip():
                    first = fh.readline(MAX_LINE_CHARS)
                    if not first:
                        break
                if detect_format(first, name) != "table":
                    return None
                fh.seek(0)
            if instance:
                raise InputError("a runs table names its instances in its 'instance' column",
                                 file=name, field="instance")
            if suffix == ".csv":
                return read_csv(fh, name, tps_column, sink, config_column)
            return read_jsonl(bounded_lines(fh, name), name, tps_column, sink, config_column)
        except UnicodeDecodeError:
            # the streamed decoder's offsets are its chunk's: the whole file (bounded by
            # check_size) decoded once names the line and byte
            read_text(p, name)
            raise InputError("not UTF-8 text", file=name) from None


def runs_from_values(a: Sequence[float], b: Sequence[float], *, a_name: str = "A",
                     b_name: str = "B", platform: str = "", paired: bool = False) -> RunsTable:
    """Build a runs table from two lists of TPS values (the quick ``--a-runs`` form).

    Each value is a separate instance (a fresh allocation), unless ``paired`` is true, in
    which case the k-th runs of A and B share instance ``k``.

    Raises
    ------
    InputError
        A non-positive or non-finite TPS value (field ``a`` or ``b``, the arm).
    """
    runs = []
    for name, vals, opt in ((a_name, a, "a"), (b_name, b, "b")):
        if len(vals) == 0:
            raise InputError("no TPS values given", field=opt)
        for k, v in enumerate(vals):
            x = parse_float(v, path=None, line=None, fld=opt, positive=True)
            inst = f"pair-{k}" if paired else f"{name}-run-{k}"
            # a plain list says nothing about cold starts: its runs are taken as warm
            runs.append(validate_run(
                Run(config=name, tps=x, instance=inst, rep=0 if paired else k,
                    platform=platform, line=k + 1, cold=False), file=None, value_field=opt))
    return RunsTable(runs, "<command line>")


