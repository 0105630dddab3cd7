"""Speed of ``planner rank`` and ``planner next``, whole process, and the ranking's
calibration (A/A false "fastest" calls and power).

Usage::

    python bench/bench_rank.py [--runs 5]            # speed
    python bench/bench_rank.py --calibration [--sims 200] [--splits 3]
    python bench/bench_rank.py --sweeps              # rank vs the pairwise verdicts

Speed rows (each a separate process, next to its baseline in the same run, so a loaded
machine slows both alike; medians of ``--runs`` runs after one warm-up):

* ``floor``: ``python -c "import numpy"``;
* ``verdict``: ``planner verdict`` on two of the configs (the baseline of one fit);
* ``rank-10x5``: ``planner rank`` over 10 configs x 5 warm runs on one machine (target
  <= 1 s whole process);
* ``rank-10x5-cold``: the same with rep 0 of each config a cold first run (the cold
  coefficient multiplies the exact engine's grid by its prior's components);
* ``next``: ``planner next --a --b`` on an undecided pair of them (default 200 simulated
  outcomes per action; target <= 3 s per evaluation).

``--calibration`` prints the decisive-"fastest" rate of N = 3..8 identical configs in
simulation (noise drawn from the local-a10g prior, 3 runs per config on one machine) and
on A/A splits of the shipped runs (``examples/runs/tps_runs.csv``: every (run group,
config, metric, workload) cell with at least max(N, 4) runs split at random into N
pseudo-configs, ``--splits`` times), and the power to name a config 1 % faster than the
others (simulated). docs/rank.md reports these figures.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _table(path: Path, cold: bool) -> None:
    rng = np.random.default_rng(0)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["config", "run_group", "instance", "rep", "platform", "tps", "metric",
                    "workload", "cold"])
        for c in range(10):
            level = 300.0 * (1 + 0.0015 * c)
            for j in range(5):
                x = level * np.exp(rng.normal(0, 0.003)) * (0.98 if cold and j == 0 else 1)
                w.writerow([f"k{c}", "sweep", "gpu0", j, "local-a10g", f"{x:.3f}",
                            "decode_wall", "128x512", int(cold and j == 0)])


def _time(cmd: list[str], runs: int) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds (user + system) of the child."""
    import resource

    env = dict(os.environ)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    ts, cs = [], []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        ts.append(time.perf_counter() - t)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cs.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        if p.returncode not in (0,):
            raise SystemExit(f"{' '.join(cmd)} failed: {p.stderr.decode()[-400:]}")
    return statistics.median(ts), statistics.median(cs)


def speed(runs: int) -> None:
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        warm, cold = Path(tmp, "warm.csv"), Path(tmp, "cold.csv")
        _table(warm, False)
        _table(cold, True)
        rows = [
            ("floor", [py, "-c", "import numpy"], None),
            ("verdict", [py, "-m", "planner", "verdict", str(warm), "--a", "k8", "--b", "k9",
                         "--json"], None),
            ("rank-10x5", [py, "-m", "planner", "rank", str(warm), "--json"], 1.0),
            ("rank-10x5-cold", [py, "-m", "planner", "rank", str(cold), "--json"], None),
            ("next", [py, "-m", "planner", "next", str(warm), "--a", "k8", "--b", "k9",
                      "--json"], 3.0),
        ]
        out = {}
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
        print(f"{'row':<16} {'wall s':>8} {'CPU s':>7} {'x floor':>8} {'target':>8}")
        for name, cmd, target in rows:
            t, c = _time(cmd, runs)
            out[name] = t
            ratio = t / out["floor"]
            tgt = f"<= {target:g} s" if target else ""
            print(f"{name:<16} {t:8.3f} {c:7.3f} {ratio:8.1f} {tgt:>8}"
                  + ("" if target is None or t <= target else "  (wall over)"))


def calibration(sims: int, splits: int) -> None:
    from planner.decide.rank_check import real_splits, simulate
    from planner.io.runs import read_runs

    table = read_runs(ROOT / "examples" / "runs" / "tps_runs.csv")
    print(f"{'N':>2} {'sim A/A':>16} {'real A/A splits':>22} {'cells':>6} {'sim power 1%':>14}")
    for n in range(3, 9):
        t0 = time.perf_counter()
        aa = simulate(n, sims, seed=1)
        real, cells = real_splits(table, n, splits, seed=2, min_runs=max(n, 4))
        pw = simulate(n, max(sims // 2, 20), effect=0.01, seed=3)
        print(f"{n:>2} {aa.k:>4}/{aa.n:<4} {100 * aa.rate:5.1f} % "
              f"{real.k:>6}/{real.n:<5} {100 * real.rate:5.1f} % {cells:>6} "
              f"{100 * pw.rate:9.1f} % ({pw.wrong} wrong)  [{time.perf_counter() - t0:.0f} s]",
              flush=True)


def sweeps() -> None:
    """Every shipped sweep (run group x metric x workload with >= 3 configs): is the ranking
    decisive, and does it name the config every pairwise verdict prefers?"""
    from planner.decide import comparison
    from planner.decide.comparison import Selection
    from planner.decide.rank import from_table, rank
    from planner.decide.verdict import judge
    from planner.io.runs import read_runs

    tb = read_runs(ROOT / "examples" / "runs" / "tps_runs.csv")
    groups: dict = {}
    for r in tb.measured().runs:
        groups.setdefault((r.run_group, r.metric, r.workload), set()).add(r.config)
    n = dec = exists = agree = 0
    for (g, m, w), cs in sorted(groups.items()):
        if len(cs) < 3:
            continue
        sel = Selection(run_group=g, metric=m or None, workload=w or None)
        r = rank(from_table(tb, None, selection=sel), draws=4000)
        names = [x["config"] for x in r.configs]
        best = next((c for c in names if all(
            judge(comparison.from_table(tb, o, c, selection=sel)).rule_label == "B better"
            for o in names if o != c)), None)
        n += 1
        dec += r.label == "fastest"
        exists += best is not None
        agree += best is not None and r.best == best and r.label == "fastest"
        if (best is not None) != (r.label == "fastest"):
            print(f"differs: {g} ({m}): rank {r.label} {r.best}; pairwise best {best}")
    print(f"{n} sweeps, {dec} decisive; a pairwise best in {exists}, named by rank in {agree}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calibration", action="store_true")
    ap.add_argument("--sweeps", action="store_true", help="rank against the pairwise "
                    "verdicts on every shipped sweep")
    ap.add_argument("--sims", type=int, default=200)
    ap.add_argument("--splits", type=int, default=3)
    a = ap.parse_args()
    if a.sweeps:
        sweeps()
    elif a.calibration:
        calibration(a.sims, a.splits)
    else:
        speed(a.runs)


if __name__ == "__main__":
    main()
