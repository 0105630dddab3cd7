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

from models.noise import NoisePrior
from models.tps_exact import fit_exact, mixture_quantile
from models.tps_model import TPSData
from planner.runs import RunsTable, instance_key
from planner.verdict import build_data, classical_tests, fit, label_from, Rope


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
            calls["verdict"] += v_call
            calls["z_test"] += bool(cl["z_test"]["significant"])
            calls["welch"] += bool(cl["welch"]["significant"])
            c_calls += v_call
            n += 1
        per_cell.append({"run_group": runs[0].run_group, "config": runs[0].config,
                         "runs": k, "verdict_calls": c_calls, "splits": splits})
    return {"n": n, "rates": {k: v / n for k, v in calls.items()}, "cells": per_cell}


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
            q = mixture_quantile([lo_q, hi_q], post.w, m, v)
            y = np.log(r.tps)
            n += 1
            if y < q[0]:
                below += 1
            elif y > q[1]:
                above += 1
            else:
                inside += 1
    return {"n": n, "coverage": inside / n, "below": below / n, "above": above / n,
            "cold_excluded": cold_skipped, "prob": prob}
