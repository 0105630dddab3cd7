"""Writing a runs table (``planner ingest`` output)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

from planner.io.rows import KNOWN_COLUMNS, Run, validate_run

__all__ = ["write_runs_csv"]


def write_runs_csv(runs: Sequence[Run], path: str | Path) -> None:
    """Write runs to a CSV with the :data:`KNOWN_COLUMNS` header (``planner ingest`` output).

    Every run is checked first (:func:`validate_run`, the check every reader makes), so the
    file is written only when :func:`read_runs` will read it back.

    Raises
    ------
    planner.errors.InputError
        A run that no reader would accept (naming its source file and field); nothing is
        written.
    """
    for r in runs:
        validate_run(r, file=str(r.extra.get("source") or path))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(KNOWN_COLUMNS)
        for r in runs:
            w.writerow([r.config, repr(r.tps), r.instance, r.session,
                        "" if r.rep is None else r.rep, r.platform, r.metric, r.workload,
                        r.phase, r.server, "" if r.ppl is None else r.ppl, r.timestamp,
                        r.run_group, "" if r.cold is None else int(r.cold)])
