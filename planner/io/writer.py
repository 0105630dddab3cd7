"""Writing a runs table (``planner ingest`` output)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

from planner.io.rows import KNOWN_COLUMNS, Run, validate_run

__all__ = ["FORMULA_STARTS", "cell", "write_runs_csv"]

#: First characters that make a spreadsheet read a cell as a formula (``=cmd|...``,
#: ``+1+2``, ``-2+3``, ``@SUM(...)``; OWASP "CSV injection"). Tab and carriage return, also
#: on that list, cannot start a name (:func:`planner.io.rows.validate_run` refuses control
#: characters).
FORMULA_STARTS = ("=", "+", "-", "@")


def cell(name: str) -> str:
    """A text cell as written: a name starting (after any spaces) with one of
    :data:`FORMULA_STARTS` gets a leading ``'`` so that a spreadsheet shows it as text
    (OWASP's advice for CSV injection); a ``+`` or ``-`` that starts a plain number
    (``-1``, ``+0.5``: a spreadsheet reads it as that number, no formula) is left as it is.
    Read back by :func:`planner.io.runs.read_runs`, the quote is part of the name.

    Examples
    --------
    >>> cell("=cmd|' /C calc'!A0"), cell("-O2"), cell("-1"), cell("plain")
    ("'=cmd|' /C calc'!A0", "'-O2", '-1', 'plain')
    """
    head = name.lstrip(" ")
    if not head.startswith(FORMULA_STARTS):
        return name
    if head[0] in "+-":
        from planner.io._parse import NUMBER

        if NUMBER.fullmatch(head[1:]) and head[1:2] not in "+-":
            return name  # a signed number, no formula
    return "'" + name


def write_runs_csv(runs: Sequence[Run], path: str | Path, *, field: str | None = None) -> None:
    """Write runs to a CSV with the :data:`KNOWN_COLUMNS` header (``planner ingest`` output),
    and a last ``requests`` column when some run completed fewer requests than it sent
    (:func:`planner.io.formats.vllm.requests_done`; read back into each run's ``extra``).

    Every run is checked first (:func:`validate_run`, the check every reader makes), so the
    file is written only when :func:`planner.io.runs.read_runs` will read it back. Text cells
    that a spreadsheet would run as a formula are written as text (:func:`cell`); numbers
    are written as numbers (a warm-up's ``rep`` -1 stays -1).

    The file is written atomically (:func:`planner.io.files.write_atomic`); ``field`` is the
    option that named it, for a write error.

    Raises
    ------
    planner.errors.InputError
        A run that no reader would accept (naming its source file and field), or the file
        cannot be written (full disk, read-only folder); nothing is written.
    """
    import io

    from planner.io.files import write_atomic

    for r in runs:
        validate_run(r, file=str(r.extra.get("source") or path))
    fh = io.StringIO(newline="")
    w = csv.writer(fh)
    short = any(r.extra.get("requests") for r in runs)
    w.writerow(list(KNOWN_COLUMNS) + (["requests"] if short else []))
    for r in runs:
        row = [cell(r.config), repr(r.tps), cell(r.instance), cell(r.session),
               "" if r.rep is None else r.rep, cell(r.platform), cell(r.metric),
               cell(r.workload), cell(r.phase), cell(r.server),
               "" if r.ppl is None else r.ppl, cell(r.timestamp), cell(r.run_group),
               "" if r.cold is None else int(r.cold)]
        w.writerow(row + ([r.extra.get("requests") or ""] if short else []))
    # temp file + fsync + rename: a full disk never leaves a truncated table
    write_atomic(path, fh.getvalue(), field=field)
