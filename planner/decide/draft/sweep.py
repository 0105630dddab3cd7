"""``planner draft sweep``: a grid over every policy family, each row with its bootstrap
intervals and its worth-a-run verdict against the baseline, ranked by projected TPS.

The grid is run as one ``planner draft`` (:func:`planner.decide.draft.run.run_draft`): the
same walks, paired bootstrap, noise model and assurance sizing, so a sweep row and the
``planner draft`` row of the same policy say the same thing (at the sweep's bootstrap and
Monte-Carlo sizes), and the sweep carries the same ``rests_on``.

Default grid (:data:`DEFAULT_GRID`; 67 rows with plain decoding):

* ``pld`` n 1..5 x depth 4, 8, ..., 32 (40 rows);
* ``ngram`` (vLLM's) windows min_n-max_n 1-3, 2-4, 2-6, 3-6 x k 3, 5, 8 (12);
* ``suffix`` depth 24 x max_spec_factor 1, 2 (2; each is its own suffix-tree replay, about
  0.5-1.7 s; on the shipped captures a depth below 24 rarely binds: a draft is at most
  max_spec_factor x the match length);
* ``mtp`` K 1..7 (7);
* ``suffix-first`` (K = the largest MTP K, suffix lookup) thresholds 2, 4, 8 (3);
* ``tree`` (same) lookup-branch depth 4, 8, 24 (3).

The hybrids share one fit of their easiness curves (it depends on the lookup, not on the
threshold or the branch depth).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from planner.decide.draft.policy import (DRAFT_DEPTH, LOOKUP_THRESHOLD, MTP_K, N_WINDOW,
                                         PolicySpec, check_range)
from planner.errors import InputError
from planner.results.draft import SweepResult

__all__ = ["run_sweep", "DEFAULT_GRID", "FAMILIES", "grid_specs"]

#: Families a sweep covers, in display order.
FAMILIES = ("pld", "ngram", "suffix", "mtp", "suffix-first", "tree")

#: The default grid of every family.
DEFAULT_GRID = {
    "n_values": (1, 2, 3, 4, 5),
    "depth_values": (4, 8, 12, 16, 20, 24, 28, 32),
    "ngram_windows": ((1, 3), (2, 4), (2, 6), (3, 6)),
    "ngram_k": (3, 5, 8),
    "suffix_depths": (24,),
    "suffix_factors": (1.0, 2.0),
    "k_values": (1, 2, 3, 4, 5, 6, 7),
    "thresholds": (2, 4, 8),
    "tree_depths": (4, 8, 24),
}


def grid_specs(families: Sequence[str] = FAMILIES, **grid) -> list[PolicySpec]:
    """The policy specs of a grid (``grid``: the keys of :data:`DEFAULT_GRID`, each
    default when not given), family by family.

    Raises
    ------
    InputError
        A value out of its range, an unknown family, a window with min_n > max_n.
    """
    g = {**DEFAULT_GRID, **{k: v for k, v in grid.items() if v is not None}}
    bad = [f for f in families if f not in FAMILIES]
    if bad:
        raise InputError(f"unknown family {bad[0]!r} (one of {', '.join(FAMILIES)})",
                         field="families")
    for n in g["n_values"]:
        check_range(n, N_WINDOW, "n")
    for d in (*g["depth_values"], *g["suffix_depths"], *g["tree_depths"]):
        check_range(d, DRAFT_DEPTH, "depth")
    for k in (*g["k_values"], *g["ngram_k"]):
        check_range(k, MTP_K, "k")
    for t in g["thresholds"]:
        check_range(t, LOOKUP_THRESHOLD, "threshold")
    for f in g["suffix_factors"]:
        if not (isinstance(f, (int, float)) and 0 < f <= 16):
            raise InputError(f"max_spec_factor must be in (0, 16], got {f!r}",
                             field="suffix_factors")
    for lo, hi in g["ngram_windows"]:
        check_range(lo, N_WINDOW, "min_n")
        check_range(hi, N_WINDOW, "max_n")
        if lo > hi:
            raise InputError(f"ngram window {lo}-{hi}: min_n > max_n", field="ngram_windows")
    kh = max(g["k_values"]) if g["k_values"] else 7
    out: list[PolicySpec] = []
    for fam in FAMILIES:
        if fam not in families:
            continue
        if fam == "pld":
            out += [PolicySpec("pld", {"n": n, "depth": d}) for n in g["n_values"]
                    for d in g["depth_values"]]
        elif fam == "ngram":
            out += [PolicySpec("ngram", {"min_n": lo, "max_n": hi, "k": k})
                    for lo, hi in g["ngram_windows"] for k in g["ngram_k"]]
        elif fam == "suffix":
            out += [PolicySpec("suffix", {"depth": d, "max_spec_factor": f})
                    for d in g["suffix_depths"] for f in g["suffix_factors"]]
        elif fam == "mtp":
            out += [PolicySpec("mtp", {"k": k}) for k in g["k_values"]]
        elif fam == "suffix-first":
            out += [PolicySpec("suffix-first", {"k": kh, "lookup": "suffix", "threshold": t})
                    for t in g["thresholds"]]
        elif fam == "tree":
            out += [PolicySpec("tree", {"k": kh, "lookup": "suffix", "tree_depth": d})
                    for d in g["tree_depths"]]
    return out


def run_sweep(capture_path: str | Path | None = None, *, families: Sequence[str] = FAMILIES,
              baseline: PolicySpec | None = None, n_boot: int = 1000,
              stop_at_eos: bool = False, seed: int = 0, mc_reps: int = 50,
              cost_profile: str = "F", cost_file: str | None = None,
              cost_overrides: dict | None = None, baseline_tps: float | None = None,
              start: int = 0, progress: Callable | None = None, **grid) -> SweepResult:
    """Grid sweep over every policy family, ranked by projected TPS, each row with its
    bootstrap intervals and worth-a-run verdict against ``baseline`` (default ``ar``).

    Parameters
    ----------
    capture_path : path, optional
    families : sequence of str
        Subset of :data:`FAMILIES`.
    baseline : PolicySpec, optional
        Default plain decoding (``ar``).
    n_boot, seed, mc_reps, stop_at_eos, cost_profile, cost_file, cost_overrides,
    baseline_tps, start, progress
        As :func:`planner.decide.draft.run.run_draft` (``n_boot`` default 1,000, ``mc_reps``
        50: a grid of 67 rows).
    **grid
        Keys of :data:`DEFAULT_GRID` (``n_values``, ``depth_values`` for pld, ``k_values``
        ...).

    Returns
    -------
    SweepResult
        ``rows`` (see :class:`planner.results.draft.SweepResult`), best first.

    Raises
    ------
    InputError
        Grid values out of range; as ``run_draft``.
    """
    from planner.decide.draft.run import run_draft

    specs = grid_specs(families, **grid)
    base = baseline or PolicySpec("ar")
    if base.name != "ar" and not any(s.label == "ar" for s in specs):
        specs = [PolicySpec("ar")] + specs  # plain decoding stays a row (the 'x AR' column)
    res = run_draft(capture_path, specs, baseline=base, baseline_tps=baseline_tps,
                    n_boot=n_boot, seed=seed, mc_reps=mc_reps, stop_at_eos=stop_at_eos,
                    cost_profile=cost_profile, cost_file=cost_file,
                    cost_overrides=cost_overrides, start=start, progress=progress)
    pols = res.policies
    ar = next((p for p in pols if p["label"] == "ar"), None)
    ar_tps = ar["projected_tps"]["point"] if ar is not None else None
    rows = []
    for p in pols:
        t, f, w = p["projected_tps"], p["tokens_per_forward"], p["worth_a_run"]
        rows.append({
            "policy": p["policy"], "label": p["label"], "params": p["params"],
            "from_capture": p["from_capture"], "is_baseline": p["is_baseline"],
            "tokens_per_forward": f["point"], "tokens_per_forward_ci": [f["ci_low"],
                                                                        f["ci_high"]],
            "step_ms": p["step_ms"], "projected_tps": t["point"],
            "projected_tps_ci": [t["ci_low"], t["ci_high"]],
            "speedup_vs_ar": None if not ar_tps else t["point"] / ar_tps,
            "gain_tps": None if w is None else w["gain_tps"]["point"],
            "gain_ci": None if w is None else [w["gain_tps"]["ci_low"],
                                               w["gain_tps"]["ci_high"]],
            "worth": None if w is None else bool(w["worth"]),
            "verdict_code": None if w is None else w["code"],
            "runs_per_arm": None if w is None else w["runs_per_arm"],
            "cost_usd": None if w is None else w["cost_usd"]})
    rows.sort(key=lambda r: -r["projected_tps"])
    sizes = {fam: sum(s.name == fam for s in specs) for fam in FAMILIES if fam in families}
    acc = res.acceptance
    return SweepResult(
        capture=res.capture["path"], n_prompts=res.capture["n_prompts"],
        baseline_tps=baseline_tps, cost_model=res.settings["cost_model"]["name"], seed=seed,
        mc_replicates=mc_reps, acceptance=str(acc["source"]), rows=rows,
        evidence=res.evidence, baseline=base.label, bootstrap=n_boot,
        grid={"sizes": sizes, "rows": len(rows)}, rests_on=res.rests_on,
        worth_a_run=res.worth_a_run, acceptance_stack=acc.get("stack"))
