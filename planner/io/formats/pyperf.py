"""pyperf JSON results (``benchmarks`` -> ``runs`` -> ``values``).

A pyperf worker process (one entry of a benchmark's ``runs``) is one run; all the workers of a
file ran on one machine, so they share an instance: the ``hostname`` metadata, else the file
name. A worker's ``values`` are timings within one process, averaged into the run's value (they
are not independent runs); calibration runs without ``values`` are skipped. A worker that did
warm-ups is not a cold run. The benchmark's ``name`` is the workload; the config is the
caller's folder label, else the benchmark name. Units: ``second`` gives metric ``time_s``,
``byte`` gives ``bytes``; both are lower-is-better.
"""

from __future__ import annotations

import math

from planner.errors import InputError
from planner.io.formats._common import Format, fallback_config, make_run, refuse_metric, value
from planner.io.rows import Run

__all__ = ["FORMATS", "looks_like", "read"]

_UNITS = {"second": "time_s", "byte": "bytes"}


def looks_like(data) -> bool:
    """A pyperf file: a ``benchmarks`` list of objects with ``runs``."""
    b = data.get("benchmarks") if isinstance(data, dict) else None
    return isinstance(b, list) and bool(b) and all(isinstance(x, dict) and "runs" in x
                                                   for x in b)


def _meta(*levels: dict, key: str):
    for m in levels:
        if isinstance(m, dict) and m.get(key) not in (None, ""):
            return m[key]
    return None


def read(data: dict, *, path: str, metric: str | None = None, config: str | None = None,
         instance: str | None = None) -> list[Run]:
    """One run per worker process with values; see the module docstring for the mapping."""
    top = data.get("metadata") or {}
    runs = []
    for k, bench in enumerate(data["benchmarks"], start=1):
        bmeta = bench.get("metadata") or {}
        name = _meta(bmeta, top, key="name")
        if not isinstance(name, str) or not name.strip():
            raise InputError("benchmark without a name", file=path, line=k, field="name")
        unit = _meta(bmeta, top, key="unit") or "second"
        if not isinstance(unit, str) or unit not in _UNITS:  # a list was a TypeError
            raise InputError(f"unit {unit!r} has no known direction (second or byte)",
                             file=path, line=k, field="unit")
        mname = _UNITS[unit]
        if metric not in (None, mname):
            refuse_metric(metric, path, (mname,), f"pyperf ({unit})")
        rep = 0
        for worker in bench.get("runs") or []:
            if not isinstance(worker, dict):
                raise InputError("expected a run object", file=path, line=k, field="runs")
            vals = worker.get("values")
            if not vals:
                continue  # calibration run: warm-ups only
            if not isinstance(vals, list):
                raise InputError("expected a list of values", file=path, line=k,
                                 field="values")
            xs = [value(v, path=path, line=k, field="values", metric=mname) for v in vals]
            rmeta = worker.get("metadata") or {}
            host = _meta(rmeta, bmeta, top, key="hostname")
            if host is not None and (isinstance(host, bool) or not isinstance(host, (str, int))):
                raise InputError(f"expected the machine's name as text, got {host!r}",
                                 file=path, line=k, field="hostname")
            inst = instance or (str(host) if host else fallback_config(path, None))
            runs.append(make_run(config=config or name.strip(" "),
                                 tps=math.fsum(xs) / len(xs), metric=mname, path=path,
                                 line=k, rep=rep, instance=inst, workload=name.strip(" "),
                                 cold=False,  # pyperf warms up each worker itself
                                 timestamp=str(_meta(rmeta, key="date") or ""),
                                 extra={"values": len(xs)}))
            rep += 1
    return runs


#: The format this module declares.
FORMATS = (Format("pyperf", "pyperf JSON results (each worker process a run)",
                  sniff=lambda doc: looks_like(doc.data),
                  read=lambda doc, **kw: read(doc.data, **kw)),)
