"""``planner ingest``: build a runs table from benchmark-harness result folders.

Walks ``DIR`` for ``summary.json`` files (fields ``tps``, ``job_id``, ``ppl``, ``duration_s``,
``completed``, ``model``). The config of a run is the ``name`` of the nearest
``manifest.json`` (the submission's) in the summary's folder or above it (up to ``DIR``);
without one, the first folder under ``DIR`` (``DIR/<config>/.../summary.json``), or the
summary's own folder when it sits directly in ``DIR``. Each HF job (``job_id``) is its own
instance; without a job id the run's folder is. Runs with ``completed: false`` are skipped
and counted.
"""

from __future__ import annotations

import json
from pathlib import Path

from planner.errors import InputError
from planner.runs import Run


def _read_json(path: Path) -> dict:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", file=str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"unreadable JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    except OSError as exc:
        raise InputError(f"unreadable: {exc.strerror}", file=str(path)) from None
    if not isinstance(d, dict):
        raise InputError("expected a JSON object", file=str(path))
    return d


def _config_for(summary: Path, root: Path) -> str:
    d = summary.parent
    while True:
        m = d / "manifest.json"
        if m.is_file():
            man = _read_json(m)
            name = man.get("name")
            if not isinstance(name, str) or not name.strip():
                raise InputError("manifest has no 'name'", file=str(m), field="name")
            return name.strip()
        if d == root or root not in d.parents:
            break
        d = d.parent
    rel = summary.parent.relative_to(root)
    return rel.parts[0] if rel.parts else root.name


def ingest(root: str | Path, *, platform: str = "hf-job-a10g-small",
           metric: str = "bench_serving", workload: str = "128x512") -> tuple[list[Run], dict]:
    """Collect runs from harness result folders.

    Parameters
    ----------
    root : str or Path
        Folder to walk.
    platform, metric, workload : str
        Values for the columns of every run (the harness's ``tps`` is the benchmark client's
        output throughput, i.e. ``bench_serving``).

    Returns
    -------
    runs : list of Run
    stats : dict
        ``found``, ``skipped_incomplete``.

    Raises
    ------
    InputError
        ``root`` is not a folder, holds no ``summary.json``, or one is unreadable / lacks a
        valid ``tps``.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError("not a folder", file=str(root))
    files = sorted(root.rglob("summary.json"))
    if not files:
        raise InputError("no summary.json found below this folder", file=str(root))
    runs, skipped = [], 0
    seen_jobs: dict[str, str] = {}
    counts: dict[str, int] = {}
    for f in files:
        d = _read_json(f)
        if d.get("completed") is False:
            skipped += 1
            continue
        tps = d.get("tps")
        if isinstance(tps, bool) or not isinstance(tps, (int, float)) or not tps > 0 \
                or tps != tps or tps == float("inf"):
            raise InputError(f"missing or invalid tps: {tps!r}", file=str(f), field="tps")
        ppl = d.get("ppl")
        ppl = float(ppl) if isinstance(ppl, (int, float)) and not isinstance(ppl, bool) else None
        cfg = _config_for(f, root)
        job = d.get("job_id")
        inst = str(job) if job else str(f.parent.relative_to(root))
        if job and job in seen_jobs:
            raise InputError(f"job_id {job!r} also in {seen_jobs[job]}: the same HF job "
                             "counted twice", file=str(f), field="job_id")
        if job:
            seen_jobs[job] = str(f)
        rep = counts.get(cfg, 0)
        counts[cfg] = rep + 1
        runs.append(Run(config=cfg, tps=float(tps), instance=inst, rep=rep, platform=platform,
                        metric=metric, workload=workload, phase="measure", ppl=ppl,
                        timestamp=str(d.get("timestamp", "") or ""),
                        run_group=str(root.name), line=0,
                        extra={"source": str(f), "model": d.get("model", "")}))
    return runs, {"found": len(files), "skipped_incomplete": skipped}
