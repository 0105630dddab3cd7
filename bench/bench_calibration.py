"""Leave-one-run-group-out calibration table of the verdict on the shipped runs.

For every (platform, metric family) of ``examples/runs/tps_runs.csv``: the false-decisive rate
of the verdict on random A/A splits of one config's repeated runs, beside the z-test (sigma =
0.378 % of TPS) and Welch's t on the same splits, and the 90 % posterior-predictive coverage of
a left-out run. Each run group is checked with a noise hierarchy fitted without it
(:func:`planner.decide.validation.logo_study`). Targets: verdict <= 5 %, coverage 85-95 %.

Usage: ``python bench/bench_calibration.py [--splits 4] [--min-runs 3] [--json]``

``--write-hierarchy`` instead refits the shipped noise hierarchy on every shipped run and
writes ``models/data/noise_hierarchy.json`` (how that file is regenerated).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=4)
    ap.add_argument("--min-runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--write-hierarchy", action="store_true")
    a = ap.parse_args()
    from planner.io.runs import read_runs
    from planner.decide.validation import logo_study

    if a.write_hierarchy:
        from planner.decide.priors import build_hierarchy

        h = build_hierarchy(read_runs(ROOT / "examples/runs/tps_runs.csv"),
                            source="examples/runs/tps_runs.csv")
        out = ROOT / "models/data/noise_hierarchy.json"
        out.write_text(json.dumps(h.to_dict(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out.relative_to(ROOT)} ({len(h.nodes)} nodes)")
        return

    t0 = time.perf_counter()
    r = logo_study(read_runs(ROOT / "examples/runs/tps_runs.csv"), splits=a.splits,
                   seed=a.seed, min_runs=a.min_runs)
    if a.json:
        print(json.dumps(r, indent=1))
        return
    print(f"leave-one-run-group-out, {a.splits} A/A splits per config with >= {a.min_runs} "
          f"runs, ROPE {r['rope']}, {time.perf_counter() - t0:.0f} s")
    head = (f"{'platform/family':28s} {'groups':>6s} {'splits':>6s} {'verdict':>8s} "
            f"{'(no lone 1st)':>13s} {'z-test':>7s} {'Welch':>6s} {'cover90':>8s} {'n':>4s}")
    print(head)
    for k, v in list(r["families"].items()) + [("total", r["total"])]:
        wl = v["verdict_without_lone_first"]
        cov = v["coverage"]
        print(f"{k:28s} {v['groups']:6d} {v['splits']:6d} {v['rates']['verdict']:8.3f} "
              f"{'-' if wl is None else f'{wl:.3f}':>13s} {v['rates']['z_test']:7.3f} "
              f"{v['rates']['welch']:6.3f} {'-' if cov is None else f'{cov:.3f}':>8s} "
              f"{v['coverage_n']:4d}")


if __name__ == "__main__":
    main()
