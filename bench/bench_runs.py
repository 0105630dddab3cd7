"""Time and peak memory of reading a large runs table (:func:`planner.runs.read_runs`) and of a
quick-form verdict as the runs grow.

Run: ``.venv/bin/python bench/bench_runs.py [--mb 50] [--verdict 1000,3000,10000]``

Generates a CSV (and the same rows as JSONL) shaped like ``examples/runs/tps_runs.csv``
(15 columns, ~170 bytes a row: 200 configs x 50 instances x reps, a ``source`` and a
``notes`` column kept as extras) into a temporary folder, then in a fresh process per
measurement reads it and reports wall time and the process's peak RSS (``ru_maxrss``; the
import floor, ~100 MB, is included and printed separately). The verdict rows time
``planner verdict --a-runs ... --b-runs ...`` (exact engine, JSON) with N values per arm.
"""

from __future__ import annotations

import argparse
import json
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--verdict", default="", help="comma-separated runs per arm, e.g. 1000,3000")
    args = ap.parse_args()
    floor_t, floor_rss = measure("import planner.runs")
    print(f"import floor: {floor_t:.2f} s, {floor_rss:.0f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        csv_p, jsonl_p, n = make_table(Path(tmp), args.mb)
        for p in (csv_p, jsonl_p):
            # each measurement in its own process: ru_maxrss of children is a running maximum,
            # so run the larger reads after the floor, one per interpreter
            code = ("import time; from planner.runs import read_runs; t=time.perf_counter(); "
                    f"r=read_runs({str(p)!r}); print(f'  {p.suffix}: {{len(r)}} rows, "
                    "{time.perf_counter()-t:.2f} s read', end=' ')")
            dt, rss = measure(code)
            print(f"{p.stat().st_size / 1e6:.1f} MB, peak RSS {rss:.0f} MB")
    for k in [int(x) for x in args.verdict.split(",") if x]:
        import random

        rnd = random.Random(1)
        a = ",".join(f"{300 + rnd.gauss(0, 1):.3f}" for _ in range(k))
        b = ",".join(f"{301 + rnd.gauss(0, 1):.3f}" for _ in range(k))
        t0 = time.perf_counter()
        r = subprocess.run([str(ROOT / ".venv" / "bin" / "planner"), "verdict", "--a-runs", a,
                            "--b-runs", b, "--json"], cwd=ROOT, capture_output=True)
        dt = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"verdict {k} runs per arm: {dt:.2f} s, peak RSS (max so far) {rss:.0f} MB, "
              f"exit {r.returncode}")


if __name__ == "__main__":
    main()
