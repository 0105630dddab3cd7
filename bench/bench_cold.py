"""Cold starts per instance: the held-out fit of the cold prior, simulated two-box tables
(false decisive calls on A/A and power on a real effect, one slowdown per box vs one shared
coefficient), the screen's approximation against the full enumeration, and the held-out A/A
rate on the shipped runs with the cold prior refitted without each run group's fold.

Simulated tables: ``boxes`` machines, on each one server session holding A's and B's runs
(``runs`` each, rep 0 cold), a box's first runs slowed by a draw of the fitted cold prior
(shared by the box's two first runs), run noise N(0, 0.03 %^2), box effects N(0, 0.1 %^2);
the local-a10g noise prior.

Usage: python bench/bench_cold.py [--reps 200] [--skip-aa]
"""
import argparse
import time

import numpy as np

from models.stats import tps_cold
from models.stats.decision import label_from
from models.stats.noise import platform_prior
from models.stats.tps_exact import fit_exact
from models.stats.tps_model import TPSData


def draw_slowdown(rng):
    w, m, s = tps_cold.cold_prior_components()
    k = rng.choice(w.size, p=w)
    return min(-(m[k] + s[k] * rng.standard_normal()), 0.5) if k else 0.0


def table(rng, delta, boxes, runs, shared=False):
    tps, cfg, inst, cold = [], [], [], []
    for b in range(boxes):
        u = rng.normal(0, 0.001)
        s = max(draw_slowdown(rng), 0.0)
        for c, d in (("A", 0.0), ("B", delta)):
            for r in range(runs):
                tps.append(300 * np.exp(u + d + rng.normal(0, 3e-4) - (s if r == 0 else 0.0)))
                cfg.append(c)
                inst.append(f"m{b}")
                cold.append(r == 0)
    grp = ["all"] * len(tps) if shared else inst
    return TPSData.from_arrays(tps, cfg, inst, cold, cold_group=grp)


def simulate(reps, boxes, runs, prior, rope=0.001):
    out = {}
    for delta in (0.0, 0.004):
        for shared in (False, True):
            rng = np.random.default_rng(2026)
            calls = right = 0
            for _ in range(reps):
                post = fit_exact(table(rng, delta, boxes, runs, shared), prior)
                lab = label_from(post.delta(0, 1, rope))
                calls += lab in ("A better", "B better")
                right += lab == "B better"
            out[(delta, "shared" if shared else "per box")] = (calls / reps, right / reps)
    return out


def enumeration_error(prior, reps=20):
    """Three boxes (216 combinations > the cap): the screened fit vs the full enumeration."""
    rng = np.random.default_rng(7)
    worst = {"hdi": 0.0, "p": 0.0}
    for _ in range(reps):
        d = table(rng, 0.004, 3, 3)
        a = fit_exact(d, prior).delta(0, 1, 0.001)
        saved = tps_cold.MAX_COMBOS, tps_cold.CELL_BUDGET
        tps_cold.MAX_COMBOS, tps_cold.CELL_BUDGET = 10**6, 10**9
        try:
            b = fit_exact(d, prior).delta(0, 1, 0.001)
        finally:
            tps_cold.MAX_COMBOS, tps_cold.CELL_BUDGET = saved
        worst["hdi"] = max(worst["hdi"], 100 * abs(a.hdi_low - b.hdi_low),
                           100 * abs(a.hdi_high - b.hdi_high))
        worst["p"] = max(worst["p"], abs(a.p_gt_rope - b.p_gt_rope))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--skip-aa", action="store_true")
    args = ap.parse_args()
    from pathlib import Path

    from planner.decide import validation
    from planner.decide.cold_fit import cold_cells, held_out
    from planner.io.runs import read_runs

    runs_csv = Path(__file__).resolve().parents[1] / "examples" / "runs" / "tps_runs.csv"
    table_ = read_runs(runs_csv)
    cells = cold_cells(table_)
    h = held_out(cells)
    print(f"cold prior, held out by run group (5 folds, {h['n']} cells, {h['groups']} groups): "
          f"90 % interval covers {100 * h['cover90']:.1f} % ({100 * h['below90']:.1f} % below, "
          f"{100 * h['above90']:.1f} % above); 98 % interval {100 * h['cover98']:.1f} %; "
          f"P(d < -3 %) predicted {100 * h['p_below_3pct']:.1f} %, observed "
          f"{100 * h['obs_below_3pct']:.1f} %")
    prior = platform_prior("local-a10g")
    t0 = time.perf_counter()
    for boxes, runs in ((2, 4), (2, 2)):
        res = simulate(args.reps, boxes, runs, prior)
        for (delta, how), (calls, right) in res.items():
            what = "false decisive (A/A)" if delta == 0 else "B better (Δ +0.4 %)"
            print(f"{boxes} boxes x {runs} runs/config, {how:8s}: {what} {100 * calls:.1f} %"
                  + (f" (right sign {100 * right:.1f} %)" if delta else ""))
    print(f"  [{time.perf_counter() - t0:.0f} s]")
    w = enumeration_error(prior)
    print(f"screen vs full enumeration (3 boxes, 20 tables): worst HDI end "
          f"{w['hdi']:.4f} points, worst P(beyond ROPE) {w['p']:.4f}")
    if args.skip_aa:
        return
    # held-out A/A on the shipped runs: each run group judged with cold weights fitted
    # without its fold (and the noise hierarchy without the group, as logo_study does)
    fold_of = dict(zip(cells["group"], h["fold"]))
    weights = h["fold_weights"]
    orig = validation.build_data

    def build(t, a, b, **kw):
        d = orig(t, a, b, **kw)
        g = t.runs[0].run_group
        if g in fold_of:
            d.cold_weights = tuple(weights[int(fold_of[g])])
        return d

    validation.build_data = build
    try:
        r = validation.logo_study(table_, splits=1, seed=0, min_runs=3)
    finally:
        validation.build_data = orig
    for fam, v in r["families"].items():
        print(f"held-out A/A {fam}: false decisive {100 * v['rates']['verdict']:.1f} % of "
              f"{v['splits']} (z-test {100 * v['rates']['z_test']:.1f} %, Welch "
              f"{100 * v['rates']['welch']:.1f} %); coverage {100 * v['coverage']:.1f} % of "
              f"{v['coverage_n']}; {v['lone_first_splits']} splits with an arm of cold first "
              f"runs only, false decisive without them "
              + ("-" if v["verdict_without_lone_first"] is None else
                 f"{100 * v['verdict_without_lone_first']:.1f} %"))


if __name__ == "__main__":
    main()
