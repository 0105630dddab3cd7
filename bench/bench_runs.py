"""Time and peak memory of reading a large runs table (:func:`planner.io.runs.read_runs`) and of a
quick-form verdict as the runs grow.

Run: ``.venv/bin/python bench/bench_runs.py [--mb 50] [--verdict 1000,3000,10000]
[--table-rows 2000,20000]``

Generates a CSV (and the same rows as JSONL) shaped like ``examples/runs/tps_runs.csv``
(15 columns, ~170 bytes a row: 200 configs x 50 instances x reps, a ``source`` and a
``notes`` column kept as extras) into a temporary folder, then in a fresh process per
measurement reads it and reports wall time and the process's peak RSS (``ru_maxrss``; the
import floor, ~100 MB, is included and printed separately), then times ``planner verdict
TABLE --a config-000:variant --b config-001:variant`` on it (CPU s and own peak RSS, MiB).
The verdict rows time ``planner verdict --a-runs ... --b-runs ...`` (exact engine, JSON) with
N values per arm, both
without a platform (each arm one session) and with ``--platform hf-a10g-small`` (every run its
own instance: 2N instances), and ``planner verdict TABLE --a A --b B`` on a two-config table of
R rows over R/5 instances (the issue-10 shape: 20,000 rows, 4,000 instances); each as a whole
process, with its CPU seconds above the ``import numpy`` floor and its own peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADER = ("config,run_group,instance,rep,platform,tps,ppl,timestamp,source,metric,workload,"
          "phase,server,commit_date,notes")


def make_table(folder: Path, mb: float) -> tuple[Path, Path, int]:
    """Write ``runs.csv`` and ``runs.jsonl`` of about ``mb`` MB; return paths and row count."""
    import random

    rnd = random.Random(0)
    csv_p, jsonl_p = folder / "runs.csv", folder / "runs.jsonl"
    target = int(mb * 1e6)
    n = 0
    size = 0
    cols = HEADER.split(",")
    with open(csv_p, "w") as fc, open(jsonl_p, "w") as fj:
        fc.write(HEADER + "\n")
        while size < target:
            cfg = f"config-{n % 200:03d}:variant"
            inst = f"local-gpu-{(n // 200) % 50:02d}"
            rep = n // 10_000
            row = [cfg, "grp", inst, str(rep), "local-a10g", f"{250 + rnd.random() * 10:.4f}",
                   "2.00279", "", f"agent/research/{cfg}/rep{rep}/decode_summary.json",
                   "decode_wall", "128x512", "measure", "", "2026-06-20T15:32:09",
                   "submission=int4_mtp"]
            line = ",".join(row) + "\n"
            fc.write(line)
            fj.write(json.dumps(dict(zip(cols, row))) + "\n")
            size += len(line)
            n += 1
    return csv_p, jsonl_p, n


def measure(code: str) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of ``python -c code`` in a fresh process."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return dt, rss


def child(cmd: list[str]) -> tuple[float, float, float, int]:
    """Wall s, CPU s (user + system), peak RSS (MiB) and exit code of one child process
    (``os.wait4``: this child's own peak, not the running maximum of all children)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    if rc:
        sys.stderr.write(err.decode(errors="replace")[-400:])
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, rc


def make_scale_table(folder: Path, rows: int, instances: int) -> Path:
    """A runs CSV of ``rows`` runs of two configs spread over ``instances`` instances (each
    instance runs both configs; reps counted per instance and config; no cold first runs:
    ``cold`` = 0), the issue-10 shape (20,000 rows, 4,000 instances)."""
    import random

    rnd = random.Random(2)
    p = folder / f"scale_{rows}.csv"
    off = [rnd.gauss(0, 1.2) for _ in range(instances)]
    reps: dict = {}
    with open(p, "w") as fh:
        fh.write("config,instance,rep,platform,tps,metric,workload,run_group,cold\n")
        for k in range(rows):
            cfg = "A" if k % 2 == 0 else "B"
            i = (k // 2) % instances
            rep = reps[(i, cfg)] = reps.get((i, cfg), -1) + 1
            tps = 300 + (0.9 if cfg == "B" else 0.0) + off[i] + rnd.gauss(0, 0.6)
            fh.write(f"{cfg},gpu-{i:05d},{rep},local-a10g,{tps:.4f},decode_wall,128x512,"
                     f"scale,0\n")
    return p


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50.0, help="size of the read-only table (0: skip)")
    ap.add_argument("--verdict", default="", help="comma-separated runs per arm of the quick "
                    "form, e.g. 1000,3000,10000")
    ap.add_argument("--table-rows", default="", help="comma-separated rows of a two-config "
                    "table with rows/5 instances, e.g. 2000,20000")
    args = ap.parse_args()
    floor_t, floor_rss = measure("import planner.io.runs")
    print(f"import floor: {floor_t:.2f} s, {floor_rss:.0f} MB")
    if args.mb > 0:
        with tempfile.TemporaryDirectory() as tmp:
            csv_p, jsonl_p, n = make_table(Path(tmp), args.mb)
            for p in (csv_p, jsonl_p):
                # each measurement in its own process: ru_maxrss of children is a running
                # maximum, so run the larger reads after the floor, one per interpreter
                code = ("import time; from planner.io.runs import read_runs; "
                        "t=time.perf_counter(); "
                        f"r=read_runs({str(p)!r}); print(f'  {p.suffix}: {{len(r)}} rows, "
                        "{time.perf_counter()-t:.2f} s read', end=' ')")
                dt, rss = measure(code)
                print(f"{p.stat().st_size / 1e6:.1f} MB, peak RSS {rss:.0f} MB")
            # the verdict on that table: only A's and B's runs are kept (read_runs configs=)
            py = sys.executable
            fl = child([py, "-c", "import numpy"])
            for p in (csv_p, jsonl_p):
                w, c, m, rc = child([py, "-m", "planner", "verdict", str(p), "--a",
                                     "config-000:variant", "--b", "config-001:variant",
                                     "--json", "--seed", "1"])
                print(f"  verdict {p.suffix} (2 of 200 configs): {w:.2f} s wall, {c:.2f} s CPU "
                      f"({c - fl[1]:.2f} above 'import numpy'), {m:.0f} MiB"
                      + (f"  exit {rc}" if rc else ""))
    py = sys.executable
    fl = child([py, "-c", "import numpy"])
    print(f"floor (python -c 'import numpy'): {fl[0]:.2f} s wall, {fl[1]:.2f} s CPU, "
          f"{fl[2]:.0f} MiB")
    print(f"{'verdict':34s} {'wall s':>7s} {'cpu s':>6s} {'MiB':>6s} {'cpu-floor':>9s}")
    for k in [int(x) for x in args.verdict.split(",") if x]:
        import random

        rnd = random.Random(1)
        a = ",".join(f"{300 + rnd.gauss(0, 1):.3f}" for _ in range(k))
        b = ",".join(f"{301 + rnd.gauss(0, 1):.3f}" for _ in range(k))
        for plat in ([], ["--platform", "hf-a10g-small"]):
            w, c, m, rc = child([py, "-m", "planner", "verdict", "--a-runs", a, "--b-runs", b,
                                 "--json", *plat])
            name = f"--a-runs {k}/arm" + (" (hf: own instances)" if plat else " (2 sessions)")
            print(f"{name:34s} {w:7.2f} {c:6.2f} {m:6.0f} {c - fl[1]:9.2f}"
                  + (f"  exit {rc}" if rc else ""))
    rows = [int(x) for x in args.table_rows.split(",") if x]
    if rows:
        with tempfile.TemporaryDirectory() as tmp:
            for r in rows:
                p = make_scale_table(Path(tmp), r, max(r // 5, 1))
                w, c, m, rc = child([py, "-m", "planner", "verdict", str(p), "--a", "A", "--b",
                                     "B", "--json"])
                name = f"table {r} rows, {max(r // 5, 1)} instances"
                print(f"{name:34s} {w:7.2f} {c:6.2f} {m:6.0f} {c - fl[1]:9.2f}"
                      + (f"  exit {rc}" if rc else ""))


if __name__ == "__main__":
    main()
