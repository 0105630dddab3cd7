"""``planner draft-sweep``: a grid of prompt lookup (n x depth) and MTP K, ranked by projected
TPS (point estimates)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from planner.decide.draft.acceptance import _acceptance_for
from planner.decide.draft.cost_fields import check_cost_field
from planner.decide.draft.evidence import capture_evidence, capture_name, default_capture_path
from planner.decide.draft.policy import (DRAFT_DEPTH, MTP_K, N_WINDOW, check_range,
                                         lookup_profile)
from planner.errors import InputError
from planner.results.draft import SweepResult

__all__ = ["run_sweep"]


def run_sweep(capture_path: str | Path | None = None, *, n_values=range(1, 6),
              depth_values=range(4, 33, 4), k_values=range(1, 9), stop_at_eos: bool = False,
              seed: int = 0, mc_reps: int = 50, cost_profile: str = "F",
              cost_file: str | None = None, cost_overrides: dict | None = None,
              baseline_tps: float | None = None, start: int = 0,
              progress: Callable | None = None) -> SweepResult:
    """Grid sweep: pld over n x depth and mtp over K, ranked by projected TPS (point
    estimates); ``depth_values`` are the pld draft depths (tokens).

    Returns
    -------
    SweepResult
        ``rows``: list of {policy, params, tokens_per_forward, step_ms, projected_tps,
        speedup_vs_ar}, sorted by projected TPS (descending).

    Raises
    ------
    InputError
        Grid values out of range.
    """
    from models.drafting.capture import load_capture
    from models.drafting.cost import load_cost_model
    from models.drafting.walk import walk

    from planner.io.limits import check_all  # plausible ranges (no 10^8 replicates, no 1e308)

    check_all([("mc_reps", mc_reps, "mc_reps"), ("baseline_tps", baseline_tps, "baseline_tps")])
    n_values, depth_values, k_values = list(n_values), list(depth_values), list(k_values)
    for n in n_values:
        check_range(n, N_WINDOW, "n")
    for d in depth_values:
        check_range(d, DRAFT_DEPTH, "depth")
    for k in k_values:
        check_range(k, MTP_K, "k")
    cost = load_cost_model(cost_profile, cost_file, check=check_cost_field,
                           **(cost_overrides or {}))
    path = Path(capture_path) if capture_path is not None else default_capture_path()
    cap = load_capture(path, stop_at_eos=stop_at_eos)
    lengths = np.array([len(c) for c in cap.completions], dtype=np.int64)
    if np.any(lengths <= start):
        raise InputError(f"every completion needs more than {start} token(s)",
                         file=capture_name(capture_path), field="completion_token_ids")
    evidence = capture_evidence(len(cap), lengths - start, file=capture_name(capture_path))
    model, curves_all, _ = _acceptance_for(cap, max(k_values) if k_values else 7, None, None, "B")
    jobs = [("ar", {})] + [("pld", {"n": n, "depth": d}) for n in n_values for d in depth_values] \
        + [("mtp", {"k": k}) for k in k_values]
    rows = []
    ctx = progress("sweeping", len(jobs)) if progress else None
    rng = np.random.default_rng(seed)
    try:
        for name, prm in jobs:
            if name == "ar":
                res = walk(lengths, mode="ar", cost=cost.step_ms, start=start, trace=False)
            elif name == "pld":
                res = walk(lengths, mode="lookup", lookup=lookup_profile(cap, "pld", prm),
                           cost=cost.step_ms, start=start, trace=False)
            else:
                res = walk(lengths, mode="mtp", n_rep=mc_reps, seed=rng,
                           curves=curves_all[:, :prm["k"]], cost=cost.step_ms, start=start)
            rate = res.tokens.sum() / res.time_ms.sum()
            rows.append({"policy": name, "params": prm, "from_capture": name != "mtp",
                         "tokens_per_forward": res.tokens_per_forward(),
                         "step_ms": float(res.time_ms.sum() / res.forwards.sum()),
                         "rate": float(rate)})
            if ctx:
                ctx.advance()
    finally:
        if ctx:
            ctx.close()
    ar_rate = rows[0]["rate"]
    for r in rows:
        r["speedup_vs_ar"] = r["rate"] / ar_rate
        r["projected_tps"] = (baseline_tps * r["speedup_vs_ar"] if baseline_tps is not None
                              else float(cost.tps(r.pop("rate"), 1.0)))
        r.pop("rate", None)
    rows.sort(key=lambda r: -r["projected_tps"])
    return SweepResult(capture=capture_name(capture_path), n_prompts=len(cap),
                       baseline_tps=baseline_tps, cost_model=cost.name, seed=seed,
                       mc_replicates=mc_reps, acceptance=model.source, rows=rows,
                       evidence=evidence)
