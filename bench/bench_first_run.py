"""First-run cost of the main commands on a fresh install (cold numba cache).

A new user's first command, and every command of a CI job or a fresh clone until numba's
cache is warm, compiles the kernels it calls (:mod:`models.kernels._jit`). For each row
this script runs, in child processes of the same process tree:

* the floor, ``python -c "import numpy"``;
* the command with a fresh, empty ``NUMBA_CACHE_DIR`` (cold: every kernel it calls is
  compiled and written to the cache);
* the same command again on that cache (warm: loaded).

and prints wall and CPU seconds (user + system of the child: what a loaded machine
inflates least), the cold / floor and cold / warm CPU ratios, and what the cold run wrote
to the cache: the numba functions compiled (kernels and their callees) and how many
specialisations of each. A function compiled more than once in one command is a
specialisation the command did not need (``Literal[int](0)`` and ``int64`` arguments of one
callee, int32 / int64 arrays): the ``spec`` column flags it and the exit code is 1.

Usage: ``python bench/bench_first_run.py [--runs 3] [--only verdict-runs draft] [--list]``.
The user's own cache (``~/.cache/spec-planner/numba``) is neither read nor touched.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable

FLOOR = [PY, "-c", "import numpy"]

sys.path.insert(0, str(ROOT / "bench"))
from bench_process import run_once as _run_child  # noqa: E402


def planner(*args: str) -> list:
    return [PY, "-m", "planner", *args]


#: (row name, command, target: the cold run's CPU seconds at most this many times the floor's).
#: The targets are the 2026-12-02 figures with room for a loaded machine (docs/speed.md,
#: "First run on a fresh install"): they catch a regression (a kernel compiled that the
#: command does not call, a second specialisation), not a slow compile of what it needs.
ROWS = [
    ("verdict-readme", planner(
        "verdict", "examples/runs/tps_runs.csv", "--a", "fa2sw_precache_agentI",
        "--b", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2", "--run-group",
        "validity/free_ceiling_wallclock_realize/ab_out"), 6),
    ("verdict-quick", planner("verdict", "--a", "308.49", "--b", "308.05"), 6),
    ("verdict-runs", planner("verdict", "--a-runs", "35.73,35.76,35.94",
                             "--b-runs", "34.43,34.47,35.23"), 80),
    ("repeats", planner("repeats", "--delta", "0.44", "--platform", "hf-a10g-small"), 80),
    ("draft", planner("draft"), 130),
]


def run_once(cmd: list, env: dict) -> tuple:
    """Wall seconds, CPU seconds (user + system) and exit code of one child (bench_process's
    measurement of a child, without its peak RSS)."""
    dt, _, code, cpu = _run_child(cmd, env)
    return dt, cpu, code


def compiled(folder: Path) -> dict:
    """``module.function -> number of specialisations`` numba wrote under ``folder``."""
    out: dict = {}
    for f in folder.glob("*/*.nbc"):
        # <module>.<function>-<line>.py311.<k>.nbc
        stem = f.name.split("-", 1)[0]
        out[stem] = out.get(stem, 0) + 1
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3,
                    help="cold runs per command, each on its own empty cache (median)")
    ap.add_argument("--only", nargs="*", default=None, help="row names to run")
    ap.add_argument("--list", action="store_true",
                    help="print every function each command compiled")
    args = ap.parse_args(argv)

    import compileall

    for pkg in ("models", "planner"):  # bytecode as installed: not part of the first run
        compileall.compile_dir(str(ROOT / pkg), quiet=1)
    rows = [r for r in ROWS if not args.only or any(r[0].startswith(o) for o in args.only)]
    tmp = Path(tempfile.mkdtemp(prefix="planner-first-run-"))
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    print(f"cold numba cache: median of {args.runs} cold runs (each on a fresh empty "
          f"NUMBA_CACHE_DIR), one warm run after each; {platform.machine()} "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}, {date.today().isoformat()}")
    head = (f"{'command':15s} {'cold s':>7s} {'cold cpu':>8s} {'warm cpu':>8s} "
            f"{'floor cpu':>9s} {'cold/floor':>10s} {'cold/warm':>9s} {'fns':>4s} "
            f"{'spec':>4s}  target (cold cpu / floor)")
    print(head)
    print("-" * len(head))
    bad = 0
    try:
        for name, cmd, target in rows:
            walls, cpus, warms, floors, fns = [], [], [], [], {}
            for i in range(args.runs):
                floors.append(run_once(FLOOR, env)[1])
                d = tmp / f"{name}-{i}"
                d.mkdir()
                e = dict(env, NUMBA_CACHE_DIR=str(d))
                w, c, _ = run_once(cmd, e)
                walls.append(w)
                cpus.append(c)
                warms.append(run_once(cmd, e)[1])
                fns = compiled(d)
                shutil.rmtree(d, ignore_errors=True)
            c, fl = statistics.median(cpus), statistics.median(floors)
            extra = sum(v - 1 for v in fns.values())
            ok = c / fl <= target and extra == 0
            bad += not ok
            print(f"{name:15s} {statistics.median(walls):7.2f} {c:8.2f} "
                  f"{statistics.median(warms):8.2f} {fl:9.2f} {c / fl:9.1f}x "
                  f"{c / statistics.median(warms):8.1f}x {len(fns):4d} {extra:4d}  "
                  f"<= {target}x {'met' if ok else 'NOT met'}")
            if args.list and fns:
                for f, n in sorted(fns.items()):
                    print(f"    {f}{'' if n == 1 else f'  x{n}'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("fns: numba functions the cold run compiled (kernels and callees); spec: extra "
          "specialisations (a function compiled for more than one argument-type tuple)")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
