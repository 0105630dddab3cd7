"""What a result-file format declares (:class:`Format`), the parsed file it is given
(:class:`Document`), and the helpers its reader shares: numbers, labels and metric choice."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from planner.errors import InputError
from planner.io._parse import too_large
from planner.io.limits import value_limit
from planner.io.rows import Run, metric_lower_is_better, validate_run

__all__ = ["Document", "Format", "value", "pick_metric", "refuse_metric", "fallback_config",
           "make_run", "text_field"]


@dataclass(frozen=True)
class Document:
    """A result file parsed as JSON.

    Attributes
    ----------
    data : object
        The JSON value of a file holding one document (None for JSON Lines).
    lines : list of (int, object) or None
        The (line number, value) of each non-blank line of a JSON Lines file (None for one
        document).
    """

    data: object = None
    lines: list | None = None

    @property
    def records(self) -> list[tuple[int, dict]] | None:
        """(line, object) pairs of a file of one or more records: one object is line 1, JSON
        Lines give their line numbers; None when some value is not an object (or a JSON
        list)."""
        if isinstance(self.data, dict):
            return [(1, self.data)]
        if self.lines and all(isinstance(d, dict) for _, d in self.lines):
            return list(self.lines)
        return None


@dataclass(frozen=True)
class Format:
    """One input format: what :mod:`planner.io.formats` needs to detect, read, name and list
    it.

    Parameters
    ----------
    name : str
        The ``--format`` name (lower case).
    help : str
        One line naming the tool and its output (``--format`` help, docs).
    sniff : callable
        ``sniff(doc: Document) -> bool``: True when the parsed file is of this format (content
        detection; never the file name).
    read : callable
        ``read(doc: Document, *, path, metric, config, instance) -> list[Run]``: the runs of a
        file of this format (see :func:`planner.io.formats.read_results` for the arguments).
    aliases : tuple of str
        Other names ``--format`` accepts.
    family : str, optional
        A shared name (``vllm``) that picks the family's member by content.
    refines : str, optional
        The format this one is a special case of (SGLang's serving records are vLLM's with
        more fields): detection tries it just before that one.
    accepts : callable, optional
        ``accepts(doc) -> bool`` when this format is forced: a looser test than ``sniff``
        (default: ``sniff``).
    refusal : tuple of (str, str), optional
        (reason, field) of the error when a forced file fails ``accepts`` (default: the
        format the file reads as, field ``format``).
    """

    name: str
    help: str
    sniff: Callable[[Document], bool]
    read: Callable[..., list]
    aliases: tuple[str, ...] = ()
    family: str | None = None
    refines: str | None = None
    accepts: Callable[[Document], bool] | None = None
    refusal: tuple[str, str] | None = None


def value(v, *, path: str, line: int | None, field: str, metric: str | None = None) -> float:
    """A number from a result file within the plausible range of its metric, or an error
    naming ``field``.

    Parameters
    ----------
    v : any
        The raw JSON value.
    path, line, field :
        Where it came from.
    metric : str, optional
        The metric the value measures (default ``field``): a rate must be in
        :data:`planner.io.limits.TPS`, a latency or duration in :data:`planner.io.limits.DURATION`,
        a size in :data:`planner.io.limits.BYTES` (:func:`planner.io.limits.value_limit`).

    Raises
    ------
    planner.errors.InputError
        Not a number, not finite, <= 0 (the model works on the log scale) or outside the range.
    """
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        shown = "null" if v is None else repr(v)  # as the JSON file spells it
        raise InputError(f"not a number: {shown}", file=path, line=line, field=field)
    try:
        x = float(v)
    except OverflowError:  # a JSON integer of hundreds of digits (1e400 written out)
        raise InputError(too_large(v), file=path, line=line, field=field) from None
    if not math.isfinite(x):
        raise InputError(f"not a finite number: {v!r}", file=path, line=line, field=field)
    if x <= 0:
        raise InputError(f"must be > 0 (the model works on the log scale), got {v!r}",
                         file=path, line=line, field=field)
    m = metric or field
    return value_limit(m, metric_lower_is_better(m)).check(x, field=field, file=path,
                                                            line=line)


def pick_metric(record: dict, metric: str | None, default: str, *, path: str,
                line: int | None, what: str) -> tuple[str, float]:
    """The chosen metric's name and value in one result record.

    ``metric`` (the user's choice) or ``default`` must be a top-level numeric field; the error
    for a missing one lists the numeric fields the record has.
    """
    name = metric or default
    if name not in record:
        have = sorted(k for k, v in record.items()
                      if isinstance(v, (int, float)) and not isinstance(v, bool))
        raise InputError(f"no field '{name}' in this {what} result (numeric fields: "
                         f"{', '.join(have) or 'none'})", file=path, line=line, field=name)
    return name, value(record[name], path=path, line=line, field=name)


def refuse_metric(metric: str, path: str, have: tuple[str, ...], what: str) -> None:
    """Refuse a metric this format does not record (the error names the metric)."""
    raise InputError(f"a {what} file records only {', '.join(have)}; no '{metric}'",
                     file=path, field=metric)


def text_field(record: dict, key: str) -> str:
    """A non-empty string field of a record, else ''."""
    v = record.get(key)
    # only spaces are trimmed: a tab, newline or other control character stays in the name so
    # that planner.io.rows.validate_run refuses it (str.strip() would drop a trailing one and
    # silently make the name another config's)
    return v.strip(" ") if isinstance(v, str) and v.strip() else ""


def fallback_config(path: str, config: str | None) -> str:
    """The config label when the file does not name one: the caller's (folder) or the stem."""
    if config:
        return config
    name = Path(path).name
    for suffix in (".jsonl", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)] or name
    return name


def make_run(*, config: str, tps: float, metric: str, path: str, line: int, rep: int,
             instance: str = "", workload: str = "", cold: bool | None = False,
             timestamp: str = "", extra: dict | None = None) -> Run:
    """A :class:`planner.io.rows.Run` from a result file, its direction set by its metric,
    checked by :func:`planner.io.rows.validate_run` (control characters in names, the value's
    range).

    ``cold`` is False (warm) by default: a tool's result file does not say which run was the
    first of a fresh server (its ``rep`` is the order of the file's records, not a server
    session's), and hyperfine and pyperf warm up themselves; a rep invented from that order
    is never read as a cold first run (:meth:`planner.io.table.RunsTable.cold_flags`).

    Raises
    ------
    planner.errors.InputError
        Naming the file, line and field.
    """
    run = Run(config=config, tps=tps, instance=instance, rep=rep, metric=metric,
              workload=workload, phase="measure", timestamp=timestamp, cold=cold, line=line,
              extra={"source": path, **(extra or {})},
              lower_is_better=metric_lower_is_better(metric))
    return validate_run(run, file=path, value_field=metric)
