"""Timing of ``planner verdict``: exact engine, MCMC engine (nutpie vs PyMC NUTS), z-test.

Run: ``python bench/bench_verdict.py [--repeats N] [--settle-grid]``

Everything runs in one warm process (imports done, one untimed call first). Measured:

* ``planner verdict`` through the CLI layer (typer ``CliRunner``, JSON output) with the exact
  engine — target <= 1 s;
* the same with ``--engine mcmc`` (``sampler="auto"``) — target <= 8 s on 2 cores;
* :func:`models.stats.tps_mcmc.fit_mcmc` with ``sampler="nutpie"`` and ``"pymc"`` on the same
  data: a new design in a warm process (nutpie: numba compile + sampling; PyMC: first fit,
  C compile) and a refit (nutpie reuses its compiled model for the same design; PyMC
  recompiles from its on-disk C cache), each the verdict's default 2 chains x (1,000 tune +
  1,000 draws);
* the reference rule: z = Δ / (σ √2), σ = 1.16 TPS (:func:`planner.decide.verdict.classical_tests`).

``--settle-grid`` instead compares the verdict's "to settle" screen with the simulation it
skips, on 336 undecided cases (:func:`settle_grid`; the figures in ``docs/speed.md``).

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


def settle_grid(seed: int = 11, out=sys.stdout) -> list[tuple[str, float, int | None]]:
    """The "to settle" screen against the simulation it skips (``docs/speed.md``).

    Undecided cases: quick forms of 1-6 runs per arm (true Δ 0-1.5 %, run noise 0.6 TPS)
    under four priors (none, ``hf-a10g-small``, ``--cv 0.3%``, ``--cv 1%``), paired and not,
    ROPE 0.1 % and 0.5 %; and up to three pairs of configs of every run group of the shipped
    table at ROPE 0.1 %, 0.5 % and 1.5 TPS. For each: the screen's approximate assurance of
    100 more runs per arm and the simulated advice (:func:`planner.decide.settle.to_settle`
    without the screen). Returns ``(case, approximation, simulated runs per arm or None)``.
    """
    import itertools
    from dataclasses import replace

    import numpy as np

    from models.stats.tps_exact import fit_exact
    from planner.decide.priors import resolve_prior
    from planner.io.runs import RunsTable, read_runs, runs_from_values
    from models.stats.decision import label_from
    from planner.decide.comparison import Comparison, build_data
    from planner.decide.rope import Rope
    from planner.decide.settle import SETTLE_MAX_RUNS, settle_screen, to_settle

    def _to_settle(table, a, b, prior, rope, platform, seed):
        return to_settle(Comparison(table, a, b, platform=platform, prior=prior), rope, seed,
                         designs=("separate",))

    def quick(va, vb, plat, paired):
        t = runs_from_values(va, vb, platform=plat, paired=paired)
        if not plat and not paired:
            t = RunsTable([replace(r, instance=f"{r.config}-session") for r in t.runs], t.path)
        return t

    rng = np.random.default_rng(seed)
    cases = []
    for n in (1, 2, 3, 4, 6):
        for d in (0.0, 0.15, 0.4, 0.8, 1.5):
            for plat, cv in (("", None), ("hf-a10g-small", None), ("", "0.3%"), ("", "1%")):
                for paired in (False, True):
                    if paired and n == 1:
                        continue
                    for rope in ("0.1%", "0.5%"):
                        va = list(308 + rng.normal(0, 0.6, n))
                        vb = list(308 * (1 + d / 100) + rng.normal(0, 0.6, n))
                        cases.append((f"quick n={n} d={d}% {plat or '-'} cv={cv} "
                                      f"{'paired' if paired else 'separate'} rope={rope}",
                                      quick(va, vb, plat, paired), "A", "B", plat or None, cv,
                                      rope))
    t = read_runs(RUNS)
    groups: dict = {}
    for r in t.runs:
        groups.setdefault(r.run_group, []).append(r.config)
    for g, cfgs in groups.items():
        for a, b in list(itertools.combinations(list(dict.fromkeys(cfgs)), 2))[:3]:
            sub = t.filter(run_group=g)
            plat = sub.select([a, b]).platform() or None
            for rope in ("0.1%", "0.5%", "1.5"):
                cases.append((f"table {g}: {a} vs {b} rope={rope}", sub, a, b, plat, None, rope))
    from planner.errors import InputError

    rows = []
    for name, tb, a, b, plat, cv, rope in cases:
        cell = tb.select([a, b]).runs[0]
        try:  # pairs the verdict refuses (mixed workloads, one run and no prior) are left out
            prior, _ = resolve_prior(None, plat, cell.metric or None, cell.workload or None,
                                     cv=cv)
            rp = Rope.parse(rope)
            post = fit_exact(build_data(tb, a, b, use_cold=False), prior)
        except InputError:
            continue
        rl = rp.log_halfwidth(post.level(0))
        if label_from(post.delta(0, 1, rl)) != "undecided":
            continue
        ap = float(settle_screen(post, rl, [SETTLE_MAX_RUNS], nodes=48)[0])
        sim = _to_settle(tb, a, b, prior, rp, plat, 0)[0]
        rows.append((name, ap, sim))
        print(f"{name[:88]:88s} approx {ap:.3f} simulated {sim}"
              f"{'  (screen fires)' if ap < 0.8 else ''}", file=out, flush=True)
    fired = [r for r in rows if r[1] < 0.8]
    print(f"{len(rows)} undecided cases; screen fires in {len(fired)}: simulated over_cap in "
          f"{sum(r[2] is None for r in fired)}, else {sorted(r[2] for r in fired if r[2])}",
          file=out)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--settle-grid", action="store_true",
                    help="only the to-settle screen against the simulation (settle_grid)")
    args = ap.parse_args(argv)
    n = max(1, args.repeats)
    if args.settle_grid:
        settle_grid()
        return 0

    t0 = time.perf_counter()
    import numpy as np
    from typer.testing import CliRunner

    from models.stats.noise import platform_prior
    from planner.cli import app
    from planner.io.runs import RunsTable, read_runs
    from planner.io.writer import write_runs_csv
    from planner.decide.classical import classical_tests
    from planner.decide.comparison import build_data
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

    import models.stats.tps_mcmc as tm

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
