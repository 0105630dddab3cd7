"""Which purchases to make within a budget: an exact 0/1 knapsack over candidate purchases.

Each comparison of a budget plan offers at most one *purchase* (its recommended design: a
value, the assurance, and a cost in $ and runs). :func:`allocate` picks the set that
maximises the expected number of decisive, correct verdicts (the sum of the bought
assurances) subject to total cost ≤ ``total_usd`` (or total runs ≤ ``max_runs``); ties go to
the cheaper set. Costs are integer cents (runs for ``max_runs``), so the knapsack is exact;
its search is over the purchases, so its cost does not grow with the budget.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

__all__ = ["knapsack", "total_runs", "allocate"]


def knapsack(values: Sequence[float], weights: Sequence[int], capacity: int) -> list[int]:
    """Exact 0/1 knapsack: indices maximising total value with total weight ≤ capacity.

    The search walks the items, keeping the (weight, value) states no other state dominates
    (lighter or as light, and worth more): at most one state per weight and at most 2^n, so
    time and memory grow with the items and their distinct subset sums, never with the
    capacity (a $1,000,000 budget is 10^8 cents; the dense table over cents this replaces
    needed 745 GiB at $10^9).

    Parameters
    ----------
    values : sequence of float, shape (n,)
        Value of each item (items of value ≤ 0 are never taken); resolved to 1e-9.
    weights : sequence of int, shape (n,)
        Non-negative integer weight of each item.
    capacity : int
        Largest total weight.

    Returns
    -------
    list of int
        Sorted indices of the chosen items; ties in value go to the lighter set, and among
        sets of equal value and weight to the one found first in item order (as the dense
        table did).
    """
    n = len(values)
    cap = max(int(capacity), 0)
    if n == 0:
        return []
    w = [max(int(x), 0) for x in weights]
    # scale values to integers to make ties exact (1e-9 resolution)
    v = [int(round(x * 1e9)) for x in values]
    # non-dominated states: increasing weight, strictly increasing value; mask = chosen items
    states: list[tuple[int, int, int]] = [(0, 0, 0)]
    for i in range(n):
        if v[i] <= 0 or w[i] > cap:
            continue
        wi, vi, bit = w[i], v[i], 1 << i
        new = [(sw + wi, sv + vi, m | bit) for sw, sv, m in states if sw + wi <= cap]
        # same weight: the larger value; equal value: the old state (found first)
        merged = sorted([(sw, -sv, 0, m) for sw, sv, m in states]
                        + [(sw, -sv, 1, m) for sw, sv, m in new])
        states = []
        top = -1
        for sw, nsv, _, m in merged:
            if -nsv > top:
                states.append((sw, -nsv, m))
                top = -nsv
    mask = states[-1][2]
    return [i for i in range(n) if mask >> i & 1]


def total_runs(runs_per_arm: float) -> int:
    """Runs of both arms of a design (expected, rounded up, for sequential designs)."""
    return int(math.ceil(2 * float(runs_per_arm) - 1e-9))


def allocate(purchases: Sequence[Mapping | None], *, total_usd: float | None = None,
             max_runs: int | None = None) -> dict:
    """Choose which purchases to make (see the module docstring for the rule).

    Parameters
    ----------
    purchases : sequence of mapping or None
        Per comparison its candidate purchase, with ``assurance``, ``cost_usd`` ($) and
        ``runs_per_arm``; None when there is nothing to buy.
    total_usd : float, optional
        Budget in $ (knapsack over cents).
    max_runs : int, optional
        Budget in runs of both arms (knapsack over runs; with ``total_usd`` too, the dollar
        knapsack's choice loses its least valuable purchases per dollar until the runs fit).

    Returns
    -------
    dict
        ``bought`` (sorted indices into ``purchases``), ``capacity`` and ``unit``
        (``cents`` or ``runs``).
    """
    idx = [i for i, p in enumerate(purchases) if p]
    vals = [float(purchases[i]["assurance"] or 0.0) for i in idx]
    runs = {i: total_runs(purchases[i]["runs_per_arm"]) for i in idx}
    if total_usd is not None:
        wts = [int(math.ceil(float(purchases[i]["cost_usd"]) * 100 - 1e-6)) for i in idx]
        cap, unit = int(math.floor(total_usd * 100 + 1e-6)), "cents"
    else:
        wts = [runs[i] for i in idx]
        cap, unit = int(max_runs), "runs"
    chosen = [idx[j] for j in knapsack(vals, wts, cap)]
    if total_usd is not None and max_runs is not None:
        # both limits: knapsack on dollars, then drop the least valuable per dollar over runs
        while chosen and sum(runs[i] for i in chosen) > max_runs:
            worst = min(chosen, key=lambda i: purchases[i]["assurance"] /
                        max(purchases[i]["cost_usd"], 1e-9))
            chosen.remove(worst)
    return {"bought": sorted(chosen), "capacity": cap, "unit": unit}
