"""Timing of ``planner verdict``: exact engine, MCMC engine (nutpie vs PyMC NUTS), z-test.

Run: ``python bench/bench_verdict.py [--repeats N]``

Everything runs in one warm process (imports done, one untimed call first). Measured:

* ``planner verdict`` through the CLI layer (typer ``CliRunner``, JSON output) with the exact
  engine — target <= 1 s;
* the same with ``--engine mcmc`` (``sampler="auto"``) — target <= 8 s on 2 cores;
* :func:`models.tps_mcmc.fit_mcmc` with ``sampler="nutpie"`` and ``"pymc"`` on the same
  data: a new design in a warm process (nutpie: numba compile + sampling; PyMC: first fit,
  C compile) and a refit (nutpie reuses its compiled model for the same design; PyMC
  recompiles from its on-disk C cache), each the verdict's default 2 chains x (1,000 tune +
  1,000 draws);
* the reference rule: z = Δ / (σ √2), σ = 1.16 TPS (:func:`planner.verdict.classical_tests`).

Data: the paired local A/B ``validity/free_ceiling_wallclock_realize/ab_out`` from the shipped
runs (6 fresh-server runs per arm on one GPU, two cold first runs), ``local-a10g`` prior.
Numbers are recorded in ``docs/mcmc.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore")

RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
GROUP = "validity/free_ceiling_wallclock_realize/ab_out"
A = "fa2sw_precache_agentI"
B = "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"


def _time(fn, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    n = max(1, args.repeats)

    t0 = time.perf_counter()
    import numpy as np
    from typer.testing import CliRunner

    from models.noise import platform_prior
    from planner.cli import app
    from planner.runs import RunsTable, read_runs, write_runs_csv
    from planner.verdict import build_data, classical_tests
    t_import = time.perf_counter() - t0

    table = read_runs(RUNS).filter(run_group=GROUP)
    sub = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_verdict_runs.csv"
    write_runs_csv(RunsTable(table.runs, str(sub)).runs, sub)
    runner = CliRunner()
    base = ["verdict", str(sub), "--a", A, "--b", B, "--prior", "local-a10g", "--json"]

    def cli(engine):
        res = runner.invoke(app, base + ["--engine", engine])
        if res.exit_code != 0:
            raise RuntimeError(res.output)
        return json.loads(res.output[res.output.index("{"):])

    rows = {}
    cli("exact")                                          # warm-up
    rows["exact (CLI, warm)"], _ = _time(lambda: cli("exact"), max(n, 5))
    t0 = time.perf_counter()
    first = cli("mcmc")
    rows["mcmc auto (CLI, first call in process)"] = time.perf_counter() - t0
    rows["mcmc auto (CLI, warm, same comparison)"], _ = _time(lambda: cli("mcmc"), n)

    import models.tps_mcmc as tm

    data = build_data(table, A, B)
    prior = platform_prior("local-a10g")

    def nutpie_new_design():
        tm._NUTPIE_CACHE.clear()          # as for a comparison not seen in this process
        tm.fit_mcmc(data, prior, sampler="nutpie", seed=2)

    rows["fit_mcmc nutpie (new design: compile+sample)"], _ = _time(nutpie_new_design, n)
    rows["fit_mcmc nutpie (same design, cached)"], _ = _time(
        lambda: tm.fit_mcmc(data, prior, sampler="nutpie", seed=3), n)
    t0 = time.perf_counter()
    tm.fit_mcmc(data, prior, sampler="pymc", seed=1)
    rows["fit_mcmc pymc (first fit in process)"] = time.perf_counter() - t0
    rows["fit_mcmc pymc (warm refit)"], _ = _time(
        lambda: tm.fit_mcmc(data, prior, sampler="pymc", seed=2), n)

    tps = np.exp(data.y)
    ta, tb = tps[data.config == 0], tps[data.config == 1]
    rows["z-test rule (classical_tests)"], _ = _time(lambda: classical_tests(ta, tb), 200)

    z = rows["z-test rule (classical_tests)"]
    print(f"python imports (numpy, typer, planner): {t_import:.2f} s; cores: {os.cpu_count()}")
    print(f"data: {GROUP}: {len(ta)} vs {len(tb)} runs; MCMC label '{first['label']}', "
          f"diagnostics ok={first['diagnostics']['ok']} sampler={first['diagnostics']['sampler']}")
    print(f"{'path':44s} {'seconds':>9s} {'x z-test':>10s} {'x exact':>9s}")
    ex = rows["exact (CLI, warm)"]
    for k, v in rows.items():
        print(f"{k:44s} {v:9.4f} {v / z:10.0f} {v / ex:9.1f}")
    ok_exact = ex <= 1.0
    ok_mcmc = max(rows["mcmc auto (CLI, warm, same comparison)"],
                  rows["fit_mcmc nutpie (new design: compile+sample)"]) <= 8.0
    print(f"targets: exact warm <= 1 s: {'met' if ok_exact else 'MISSED'}; "
          f"mcmc warm <= 8 s: {'met' if ok_mcmc else 'MISSED'}")
    return 0 if (ok_exact and ok_mcmc) else 1


if __name__ == "__main__":
    raise SystemExit(main())
