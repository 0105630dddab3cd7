"""How much capture a draft projection needs: coverage of the percentile bootstrap on
subsets of a shipped capture (the source of ``planner.decide.draft.EVIDENCE_FLOORS``).

For pld(n=2, depth=24), per-prompt (tokens, forwards) of the whole capture and of the
capture with every completion cut to t tokens; then, for m prompts drawn without
replacement (150 subsets), the 95 % bootstrap interval of tokens/forward (400 replicates)
and whether it covers the same-length value of the whole capture (``cover(V_t)``) and the
full-length value (``cover(V)``).

Usage: ``python bench/bench_evidence.py examples/captures/ar_reference_bf16.jsonl.gz``
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np

from models.drafting import lookup as lk
from models.drafting.bootstrap import bootstrap_ratios
from models.drafting.capture import load_capture
from models.drafting.walk import walk


def _per_prompt(cap, policy):
    prof = lk.draft_profiles(cap, policy=policy).profiles()
    lengths = np.array([len(x) for x in cap.completions])
    res = walk(lengths, mode="lookup", lookup=([p.accept_len for p in prof],
                                               [p.match_len for p in prof],
                                               [p.proposed for p in prof]))
    return res.tokens[0].astype(float), res.forwards[0].astype(float)


def main(path: str, lengths=(2, 4, 8, 16, 32, 64, None), prompts=(2, 3, 4, 6, 8, 12, 16, 32),
         subsets: int = 150, n_boot: int = 400, seed: int = 0) -> None:
    cap = load_capture(path)
    policy = lk.PLD(n=2, D=24)
    full = {}
    for t in lengths:
        c = cap if t is None else replace(cap, completions=[x[:t] for x in cap.completions])
        tok, fw = _per_prompt(c, policy)
        full[t] = (tok, fw, tok.sum() / fw.sum())
    v_full = _per_prompt(cap, policy)
    v_full = v_full[0].sum() / v_full[1].sum()
    rng = np.random.default_rng(seed)
    print("tokens/prompt  prompts  cover(V_t)  cover(V)  median width")
    for t in lengths:
        tok, fw, v_t = full[t]
        for m in prompts:
            if m > len(cap):
                continue
            hit_t = hit = 0
            widths = []
            for _ in range(subsets):
                idx = rng.choice(len(cap), m, replace=False)
                b = bootstrap_ratios({"x": (tok[idx], fw[idx])}, n_boot=n_boot, seed=rng)["x"]
                lo, hi = np.quantile(b, [0.025, 0.975])
                hit_t += lo <= v_t <= hi
                hit += lo <= v_full <= hi
                widths.append(hi - lo)
            print(f"{t or 'full':>13}  {m:>7}  {hit_t / subsets:>10.2f}  {hit / subsets:>8.2f}"
                  f"  {np.median(widths):>12.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
