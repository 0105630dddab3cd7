"""Benchmark: assurance of >= 10 designs x 2,000 simulated experiments (target <= 3 s on 2 cores),
against the naive loop (one fit_exact per simulated dataset) measured in the same run.

Usage: python bench/bench_assurance.py [--sims 2000] [--naive 40] [--prior hf-a10g-small]
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from models.stats.assurance import evaluate_fixed, prior_truth, simulate
from models.stats.decision import label_from
from models.stats.designs import flatten, paired_layout, separate_layout
from models.stats.noise import platform_prior
from models.stats.tps_exact import fit_exact
from models.stats.tps_model import TPSData


def designs():
    return ([("separate", n, separate_layout(n)) for n in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)]
            + [("paired", n, paired_layout(n)) for n in (2, 4, 8)])


def naive_seconds_per_dataset(layout, prior, dl, rope, k, seed=0):
    rng = np.random.default_rng(seed)
    tr = prior_truth(prior, dl, k, rng)
    y = flatten(layout, simulate(layout, tr, rng))
    X, inst = layout.design_arrays()
    cfg = ["A" if x[0] else "B" for x in X]
    ins = [f"i{i}" for i in inst]
    t0 = time.perf_counter()
    for d in range(k):
        label_from(fit_exact(TPSData.from_arrays(np.exp(5.7 + y[d]), cfg, ins), prior)
                   .delta(0, 1, rope))
    return (time.perf_counter() - t0) / k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--naive", type=int, default=40, help="datasets per design for the naive loop")
    ap.add_argument("--prior", default="hf-a10g-small")
    a = ap.parse_args()
    prior = platform_prior(a.prior)
    dl, rope = math.log1p(2.0 / 307.08), math.log1p(0.001)
    tr = prior_truth(prior, dl, a.sims, np.random.default_rng(0))
    # warm-up: numba JIT / cache load, not timed
    evaluate_fixed(separate_layout(2), prior, prior_truth(prior, dl, 200,
                   np.random.default_rng(1)), rope, error_rates=True)
    ds = designs()
    print(f"cores: {os.cpu_count()}, prior {a.prior}, {a.sims} simulated experiments per design, "
          f"{len(ds)} designs")
    t0 = time.perf_counter()
    res = [evaluate_fixed(lay, prior, tr, rope, error_rates=False) for _, _, lay in ds]
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _, _, lay in ds:
        evaluate_fixed(lay, prior, tr, rope, error_rates=True)
    t_err = time.perf_counter() - t0
    naive = [naive_seconds_per_dataset(lay, prior, dl, rope, a.naive) for _, _, lay in ds]
    t_naive = sum(naive) * a.sims
    print(f"{'design':<10}{'n/arm':>6}{'grid':>7}{'assurance':>11}{'naive ms/dataset':>18}")
    for (kind, n, _), r, nv in zip(ds, res, naive):
        print(f"{kind:<10}{n:>6}{r.grid_points:>7}{r.assurance:>11.3f}{1000 * nv:>18.1f}")
    print(f"\nassurance only      : {t_fast:6.2f} s for {len(ds)} designs x {a.sims} "
          f"({'PASS' if t_fast <= 3.0 and len(ds) >= 10 else 'FAIL'} <= 3 s)")
    print(f"+ false-claim (Δ=0) and wrong-sign (−Δ) scenarios: {t_err:6.2f} s "
          f"({3 * len(ds) * a.sims:,} simulated experiments)")
    print(f"naive fit_exact loop: {t_naive:8.1f} s (extrapolated from {a.naive} datasets per "
          f"design, measured in this run)")
    print(f"speed-up            : {t_naive / t_fast:8.0f} x (assurance only), "
          f"{3 * t_naive / t_err:8.0f} x (with error rates)")


if __name__ == "__main__":
    main()
