"""The fit behind the cold-start prior (:mod:`models.stats.tps_cold`) and its held-out check.

:func:`cold_cells` reads every cold cell of a runs table: a cell (run group, config,
instance, metric, workload, server mode) holding one first run (``rep`` 0) and at least one
later run on a named instance, probe metrics excluded (their first runs show no cold effect,
:meth:`planner.io.table.RunsTable.cold_flags`). Its deviation is
d = log(first run) − mean log(later runs), measured with SD
se = s sqrt(1 + 1/n) (s: the later runs' SD, floored at 0.02 %; with one later run, the
median s of the cells). :func:`held_out` refits the prior's weights with whole run groups
left out and reads the left-out cells' predictive coverage.
"""

from __future__ import annotations

import numpy as np

from models.stats.tps_cold import fit_cold_weights, predictive_cdf
from planner.io.table import RunsTable

__all__ = ["cold_cells", "held_out"]

#: Floor of a cell's warm SD (log scale): 0.02 %, half the median warm run-to-run SD.
SE_FLOOR = 2e-4


def cold_cells(table: RunsTable) -> dict:
    """The cold cells of ``table``: ``group`` (run group per cell), ``d``, ``se`` (arrays,
    shape (n,)) and ``key`` (the cells' keys)."""
    cells: dict = {}
    # a first run after an explicit warm-up pass in its session is not a cold start (the
    # verdict's rule too: planner.decide.comparison.measured_runs)
    from planner.decide.comparison import warmed_sessions

    warmed = warmed_sessions(table)
    for r in table.measured().runs:
        if r.metric.startswith("probe") or not r.instance:
            continue
        cells.setdefault((r.run_group, r.config, r.instance, r.metric, r.workload, r.server),
                         []).append(r)
    rows = []
    for key, rs in cells.items():
        first = [r for r in rs if r.rep == 0 and r.cold is not False
                 and (r.config, r.instance, r.session or r.run_group) not in warmed]
        warm = np.log([r.tps for r in rs if r.rep is not None and r.rep > 0])
        if len(first) == 1 and warm.size >= 1:
            sd = float(np.std(warm, ddof=1)) if warm.size >= 2 else np.nan
            rows.append((key, float(np.log(first[0].tps) - warm.mean()), sd, warm.size))
    sd = np.array([r[2] for r in rows])
    n = np.array([r[3] for r in rows], float)
    med = float(np.nanmedian(sd)) if np.isfinite(sd).any() else SE_FLOOR
    s = np.where(np.isfinite(sd), np.maximum(np.nan_to_num(sd, nan=med), SE_FLOOR), med)
    return {"group": np.array([r[0][0] for r in rows]), "d": np.array([r[1] for r in rows]),
            "se": s * np.sqrt(1.0 + 1.0 / n), "key": [r[0] for r in rows]}


def held_out(cells: dict, folds: int = 5, seed: int = 0) -> dict:
    """Predictive checks of the cold prior with whole run groups held out.

    Run groups are dealt at random (``seed``) into ``folds`` folds; each fold's cells are
    judged by weights fitted on the other folds (:func:`models.stats.tps_cold.fit_cold_weights`).

    Returns
    -------
    dict
        ``n`` cells, ``groups``; ``cover90`` / ``below90`` / ``above90`` (the central 90 %
        predictive interval), ``cover98``, ``p_below_3pct`` (predicted share of d < -3 %)
        beside ``obs_below_3pct``; ``pit`` (each cell's predictive CDF at its d) and
        ``fold_weights``.
    """
    g, d, se = cells["group"], cells["d"], cells["se"]
    groups = np.unique(g)
    fold = dict(zip(groups, np.random.default_rng(seed).permutation(groups.size) % folds))
    f = np.array([fold[x] for x in g])
    pit = np.empty(d.size)
    below3 = np.empty(d.size)
    ws = []
    for k in range(folds):
        w = fit_cold_weights(d[f != k], se[f != k])
        ws.append(w.tolist())
        pit[f == k] = predictive_cdf(d[f == k], se[f == k], w)
        below3[f == k] = predictive_cdf(np.full((f == k).sum(), -0.03), se[f == k], w)
    return {"n": int(d.size), "groups": int(groups.size),
            "cover90": float(np.mean((pit > 0.05) & (pit < 0.95))),
            "below90": float(np.mean(pit <= 0.05)), "above90": float(np.mean(pit >= 0.95)),
            "cover98": float(np.mean((pit > 0.01) & (pit < 0.99))),
            "p_below_3pct": float(np.mean(below3)), "obs_below_3pct": float(np.mean(d < -0.03)),
            "pit": pit, "fold": f, "fold_weights": ws}
