"""hyperfine ``--export-json`` results.

Each entry of ``results`` is one command: its ``command`` (the command string, or its
``--command-name`` when one was given) is the config, and each entry of ``times`` (wall-clock
seconds) is one run, metric ``wall_time_s``, lower is better. Runs whose ``exit_codes`` entry is
non-zero failed and are skipped. The export does not name the machine: the instance is left
unset (each run its own instance) unless the caller gives one; give one when all commands ran
on one machine in one export, which is how hyperfine works.
"""

from __future__ import annotations

from planner.errors import InputError
from planner.io.formats._common import Format, make_run, refuse_metric, value
from planner.io.rows import Run

__all__ = ["FORMATS", "METRIC", "looks_like", "read"]

#: The metric of hyperfine's ``times``.
METRIC = "wall_time_s"


def looks_like(data) -> bool:
    """A hyperfine export: ``results`` entries with ``command`` and ``times``."""
    res = data.get("results") if isinstance(data, dict) else None
    return (isinstance(res, list) and bool(res)
            and all(isinstance(r, dict) and "command" in r and "times" in r for r in res))


def read(data: dict, *, path: str, metric: str | None = None, config: str | None = None,
         instance: str | None = None) -> list[Run]:
    """One run per successful timing; configs are the commands (``config`` is unused)."""
    if metric not in (None, METRIC):
        refuse_metric(metric, path, (METRIC,), "hyperfine")
    runs = []
    seen: set[str] = set()
    for k, res in enumerate(data["results"], start=1):
        cmd = res.get("command")
        if not isinstance(cmd, str) or not cmd.strip():
            raise InputError("missing command", file=path, line=k, field="command")
        cmd = cmd.strip(" ")  # a control character stays: validate_run names it
        if cmd in seen:
            raise InputError(f"command {cmd!r} appears twice; name them apart with "
                             "--command-name", file=path, line=k, field="command")
        seen.add(cmd)
        times = res.get("times")
        if not isinstance(times, list) or not times:
            raise InputError("expected a non-empty list of times (seconds)", file=path, line=k,
                             field="times")
        codes = res.get("exit_codes")
        codes = codes if isinstance(codes, list) and len(codes) == len(times) else [0] * len(times)
        rep = 0
        for t, code in zip(times, codes):
            if code not in (0, None):
                continue
            runs.append(make_run(config=cmd, tps=value(t, path=path, line=k, field="times", metric=METRIC),
                                 metric=METRIC, path=path, line=k, rep=rep,
                                 instance=instance or "",
                                 extra={"parameters": res.get("parameters") or {}}))
            rep += 1
        if rep == 0:
            raise InputError("every run of this command failed (non-zero exit codes)",
                             file=path, line=k, field="exit_codes")
    return runs


#: The format this module declares.
FORMATS = (Format("hyperfine", "hyperfine JSON export (each command a config)",
                  sniff=lambda doc: looks_like(doc.data),
                  read=lambda doc, **kw: read(doc.data, **kw)),)
