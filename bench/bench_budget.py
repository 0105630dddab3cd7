"""Benchmark: the budget report for the 10-comparison example plan, including the plots.

Target: <= 10 s wall for ``planner budget examples/plan.toml --html FILE --md FILE`` (the
whole CLI process: imports, sizing, 31 inline plots, writing the files).

Run:  python bench/bench_budget.py [--sims 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "examples" / "plan.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--plan", type=Path, default=PLAN)
    a = ap.parse_args()

    from planner.decide.budget import plan_budget
    from planner.io.plan_file import read_plan
    from planner.report.views.budget import render_markdown
    from planner.report.render import render_html

    plan = read_plan(a.plan)
    t_plan, t_html = [], []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        res = plan_budget(plan, sims=a.sims, seed=0).to_dict()
        t1 = time.perf_counter()
        render_html(res)
        render_markdown(res)
        t2 = time.perf_counter()
        t_plan.append(t1 - t0)
        t_html.append(t2 - t1)
    cli = []
    exe = Path(sys.executable).with_name("planner")
    with tempfile.TemporaryDirectory() as d:
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            subprocess.run([str(exe), "budget", str(a.plan), "--sims", str(a.sims), "--html",
                            f"{d}/b.html", "--md", f"{d}/b.md"], check=True,
                           stdout=subprocess.DEVNULL)
            cli.append(time.perf_counter() - t0)
        size = Path(f"{d}/b.html").stat().st_size
    med = statistics.median
    print(f"plan: {a.plan.name}, {len(plan.comparisons)} comparisons, sims {a.sims}, "
          f"sizing engine {res['repeats_engine']}")
    print(f"  sizing + allocation (in process): median {med(t_plan):.2f} s")
    print(f"  HTML (31 plots) + Markdown:       median {med(t_html):.2f} s")
    print(f"  whole CLI incl. imports:          median {med(cli):.2f} s  "
          f"(min {min(cli):.2f}, max {max(cli):.2f}); target <= 10 s "
          f"{'OK' if med(cli) <= 10 else 'MISSED'}")
    print(f"  HTML size: {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
