"""Held-out validation of the shipped content model on 11 prompt subsets (issue 21 item 4).

Usage: python bench/bench_content_folds.py [--json models/data/content_validation_folds.json]

Folds (models.drafting.content_validation.subset_folds): the three benchmark groups (domain),
four prompt-length quartiles and four repetitiveness quartiles (own-context suffix hit share)
of the 128 P128 calibration prompts. Each fold is fitted without its prompts (coefficients,
residual variance, set effect; n-gram states re-scored without the held-out completions) and
its set tokens/forward predicted with a 90 % interval. About 4 minutes on one core.
"""

from __future__ import annotations

import argparse
import json
import time

from models.drafting import content_validation as cv


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    t = time.time()
    rows = cv.validate_subsets()
    out = {"_source": "bench/bench_content_folds.py: models.drafting.content_validation."
                      "validate_subsets() (seed 0, 4000 draws, level 0.90)",
           "rows": rows, "summary": cv.summarise(rows)}
    for r in rows:
        print(f"{r['fold']:28s} n={r['n']:3d} predicted {r['predicted']:.3f} measured "
              f"{r['measured']:.3f} error {r['error_pct']:+.2f} % 90 % PI [{r['pi_low']:.3f}, "
              f"{r['pi_high']:.3f}] {'covered' if r['covered'] else 'MISSED'}, 50 %: "
              f"{'in' if r['covered_50'] else 'out'}, PIT {r['pit']:.2f}")
    print(json.dumps(out["summary"], indent=1))
    print(f"{time.time() - t:.0f} s")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
