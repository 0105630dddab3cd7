"""Checks of the verdict on real repeated runs: A/A splits and leave-one-out prediction.

* :func:`aa_study` splits the repeated runs of one config at random into two pseudo-configs
  (keeping their ``instance``, ``rep`` and ``server`` columns) many times and counts how often
  each rule calls a difference: our verdict (decisive "better" labels), the reference z-test
  (σ = 1.16 TPS) and Welch's t. A calibrated rule calls at most 5 %.
* :func:`loo_coverage` leaves one run out of each repeated cell, predicts it from the rest
  and counts how often it falls inside the 90 % predictive interval.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from models.stats.noise import NoisePrior
from models.stats.mixture import mixture_cdf
from models.stats.tps_exact import fit_exact
from models.stats.tps_model import TPSData
from planner.io.runs import RunsTable
from planner.io.rows import instance_key
from models.stats.decision import label_from
from planner.decide.classical import classical_tests
from planner.decide.comparison import build_data, fit
from planner.decide.rope import Rope


def repeated_cells(table: RunsTable, min_runs: int = 6) -> list[RunsTable]:
    """Groups of runs of one config in one run_group, metric and workload (>= min_runs)."""
    cells: dict[tuple, list] = {}
    for r in table.measured().runs:
        cells.setdefault((r.run_group, r.config, r.metric, r.workload, r.platform), []).append(r)
    return [RunsTable(v, table.path) for k, v in sorted(cells.items(), key=lambda kv: kv[0])
            if len(v) >= min_runs]


def aa_study(cells: list[RunsTable], prior: NoisePrior, *, splits: int = 40, seed: int = 0,
             rope: str = "0.1%", engine: str = "exact") -> dict:
    """False-decisive rates of three rules on random A/A splits of real repeated runs.

    Parameters
    ----------
    cells : list of RunsTable
        Each holds repeated runs of one config (see :func:`repeated_cells`).
    prior : NoisePrior
    splits : int
        Random splits per cell (half the runs to each pseudo-config).

    Returns
    -------
    dict
        ``n`` comparisons and the rate of decisive calls for ``verdict``, ``z_test``,
        ``welch`` (two-sided p < 0.05), plus per-cell counts.
    """
    rng = np.random.default_rng(seed)
    rope_obj = Rope.parse(rope)
    calls = {"verdict": 0, "z_test": 0, "welch": 0}
    # splits where one pseudo-config holds only first (rep 0) runs: the verdict treats a lone
    # first run as warm (a lone cold first run), counted apart to separate the causes
    lone_first = {"n": 0, "verdict": 0}
    n = 0
    per_cell = []
    for cell in cells:
        runs = cell.runs
        k = len(runs)
        c_calls = 0
        for _ in range(splits):
            perm = rng.permutation(k)
            a_idx = set(perm[: k // 2].tolist())
            relab = [replace(r, config="A" if j in a_idx else "B") for j, r in enumerate(runs)]
            t = RunsTable(relab, cell.path)
            data = build_data(t, "A", "B")
            post, diag = fit(data, prior, engine)
            d = post.delta(0, 1, rope_obj.log_halfwidth(post.level(0)))
            lab = label_from(d, diag.get("ok", True))
            tps = np.exp(data.y)
            cl = classical_tests(tps[data.config == 0], tps[data.config == 1])
            v_call = lab in ("A better", "B better")
            arms = [[r.rep for r in relab if r.config == c] for c in ("A", "B")]
            if any(all(x == 0 for x in arm) for arm in arms):
                lone_first["n"] += 1
                lone_first["verdict"] += v_call
            calls["verdict"] += v_call
            calls["z_test"] += bool(cl["z_test"]["significant"])
            calls["welch"] += bool(cl["welch"]["significant"])
            c_calls += v_call
            n += 1
        per_cell.append({"run_group": runs[0].run_group, "config": runs[0].config,
                         "runs": k, "verdict_calls": c_calls, "splits": splits})
    return {"n": n, "rates": {k: v / n for k, v in calls.items()}, "cells": per_cell,
            "lone_first": lone_first}


def loo_coverage(cells: list[RunsTable], prior: NoisePrior, *, prob: float = 0.90) -> dict:
    """Leave-one-out coverage of the ``prob`` predictive interval of the next run.

    For each run of each cell: fit the exact model to the other runs of that cell (one config,
    the cold coefficient when flagged) and predict the left-out run on the same instance
    (the run's instance effect is shared; a new instance otherwise).

    Returns
    -------
    dict
        ``n``, ``coverage`` (fraction inside), ``below`` / ``above`` (fractions outside on each
        side), ``cold_excluded``.
    """
    inside = below = above = 0
    n = 0
    cold_skipped = 0
    lo_q, hi_q = (1 - prob) / 2, 1 - (1 - prob) / 2
    for cell in cells:
        cold = cell.cold_flags()
        for j, r in enumerate(cell.runs):
            if cold[j]:
                cold_skipped += 1  # a cold run is predicted by the cold term, not the noise
                continue
            rest = RunsTable([x for i, x in enumerate(cell.runs) if i != j], cell.path)
            rest_cold = cold[[i for i in range(len(cell.runs)) if i != j]]
            inst = [instance_key(x, i) for i, x in enumerate(rest.runs)]
            data = TPSData.from_arrays([x.tps for x in rest.runs], [x.config for x in rest.runs],
                                       inst, rest_cold)
            post = fit_exact(data, prior)
            key = instance_key(r, -1)  # a run without an instance is a new one
            if key in inst:
                m, v = post.predictive(0, instance=int(data.instance[inst.index(key)]))
            else:
                m, v = post.predictive(0, new_instance=True)
            # inside the central interval <=> its predictive CDF lies in [lo_q, hi_q]: one CDF
            # evaluation instead of two quantiles (a table of 1,025 CDFs over the mixture)
            F = float(mixture_cdf(np.log(r.tps), post.w, m, v))
            n += 1
            if F < lo_q:
                below += 1
            elif F > hi_q:
                above += 1
            else:
                inside += 1
    return {"n": n, "coverage": inside / n, "below": below / n, "above": above / n,
            "cold_excluded": cold_skipped, "prob": prob}


def logo_study(table: RunsTable, *, splits: int = 4, seed: int = 0, min_runs: int = 3,
               rope: str = "0.1%", prob: float = 0.90, engine: str = "exact") -> dict:
    """Leave-one-run-group-out calibration of the verdict on every shipped (platform, family).

    For each run group G holding a config with ``min_runs`` or more runs: the noise hierarchy
    is fitted on every other run group (:func:`planner.decide.priors.build_hierarchy` with G
    excluded), the prior of G's cell is chosen from it, and G's repeated configs are checked
    with it -- ``splits`` random A/A splits each (:func:`aa_study`: verdict, z-test with the
    0.378 % CV, Welch) and the leave-one-run-out ``prob`` predictive coverage
    (:func:`loo_coverage`). A group's splits never see a prior fitted on that group.

    Returns
    -------
    dict
        ``families``: per ``platform/family``, ``splits`` (A/A comparisons), ``rates``
        (``verdict``, ``z_test``, ``welch`` false-decisive / significant rates), ``coverage``
        and ``coverage_n`` (predicted runs), ``groups``, ``levels`` (prior levels used);
        ``total`` the same over all families.
    """
    from models.stats.noise_hierarchy import metric_family
    from planner.decide.priors import build_hierarchy
    from planner.io.platforms import canonical_platform

    t = table.measured()
    cells = repeated_cells(t, min_runs)
    by_group: dict[str, list[RunsTable]] = {}
    for c in cells:
        by_group.setdefault(c.runs[0].run_group, []).append(c)
    fam: dict[str, dict] = {}
    rng_seed = seed
    for g in sorted(by_group):
        h = build_hierarchy(t, exclude_groups=[g])
        for cell in by_group[g]:
            r0 = cell.runs[0]
            plat = canonical_platform(r0.platform)
            choice = h.choose(plat, r0.metric, r0.workload)
            key = f"{plat}/{metric_family(r0.metric)}"
            f = fam.setdefault(key, {"splits": 0, "calls": {"verdict": 0, "z_test": 0,
                                                            "welch": 0},
                                     "inside": 0, "coverage_n": 0, "groups": set(),
                                     "levels": {}, "lone_n": 0, "lone_calls": 0})
            rng_seed += 1
            aa = aa_study([cell], choice.prior, splits=splits, seed=rng_seed, rope=rope,
                          engine=engine)
            f["splits"] += aa["n"]
            f["lone_n"] += aa["lone_first"]["n"]
            f["lone_calls"] += aa["lone_first"]["verdict"]
            for k, v in aa["rates"].items():
                f["calls"][k] += round(v * aa["n"])
            lo = loo_coverage([cell], choice.prior, prob=prob)
            f["inside"] += round(lo["coverage"] * lo["n"])
            f["coverage_n"] += lo["n"]
            f["groups"].add(g)
            f["levels"][choice.level] = f["levels"].get(choice.level, 0) + 1
    out = {}
    tot = {"splits": 0, "calls": {"verdict": 0, "z_test": 0, "welch": 0}, "inside": 0,
           "coverage_n": 0, "groups": set(), "levels": {}, "lone_n": 0, "lone_calls": 0}
    for key in sorted(fam) + ["total"]:
        f = fam[key] if key != "total" else tot
        if key != "total":
            tot["splits"] += f["splits"]
            tot["inside"] += f["inside"]
            tot["coverage_n"] += f["coverage_n"]
            tot["lone_n"] += f["lone_n"]
            tot["lone_calls"] += f["lone_calls"]
            tot["groups"] |= f["groups"]
            for k in tot["calls"]:
                tot["calls"][k] += f["calls"][k]
            for k, v in f["levels"].items():
                tot["levels"][k] = tot["levels"].get(k, 0) + v
        out[key] = {"splits": f["splits"],
                    "rates": {k: v / f["splits"] for k, v in f["calls"].items()},
                    "coverage": f["inside"] / f["coverage_n"] if f["coverage_n"] else None,
                    "coverage_n": f["coverage_n"], "groups": len(f["groups"]),
                    "verdict_without_lone_first": (
                        (f["calls"]["verdict"] - f["lone_calls"]) / (f["splits"] - f["lone_n"])
                        if f["splits"] > f["lone_n"] else None),
                    "lone_first_splits": f["lone_n"],
                    "levels": dict(f["levels"])}
    total = out.pop("total")
    return {"families": out, "total": total, "splits_per_cell": splits, "min_runs": min_runs,
            "rope": rope, "prob": prob}
