"""``planner repeats`` / ``planner budget`` with adaptive Monte-Carlo sizes
(models.stats.assurance.Adaptive) against the full simulation, same seeds: the same recommended
design and runs per arm (its row identical: it is simulated again in full), the same flags on
every row, and every rate within 4 Monte-Carlo SDs
(sqrt(p(1-p)/k), plus 1/k) of the full simulation's rate, on the shipped budget plan
and on a grid of effects and platforms (none of them used to choose the stopping rule)."""

from __future__ import annotations

import math

import pytest


def _tol(p_full: float, p: float, se: float, k_min: int = 250) -> float:
    """4 Monte-Carlo SDs of a rate of k experiments, sqrt(p(1-p)/k) at the full simulation's
    rate, plus 1/k (k from the reported rate and binomial SE; the smallest prefix when the
    SE is 0)."""
    k = round(p * (1 - p) / se ** 2) if se else k_min
    k = max(k, k_min)
    return 4 * math.sqrt(p_full * (1 - p_full) / k) + 1 / k


def _same_plan(full: dict, fast: dict, where: str) -> None:
    key = (lambda r: None if r is None else
           (r["design"], r["runs_per_arm"], r.get("layout"), r.get("per_look_hdi_prob")))
    assert key(full["recommended"]) == key(fast["recommended"]), where
    if full["recommended"] is not None:      # shown with the full simulation's numbers
        assert full["recommended"] == fast["recommended"], where
    # a sequential row's runs per arm is its expected stop: simulated in full when the plan
    # can be chosen (meets the target), else from a prefix (tolerance below)
    rows = lambda d: [(r["design"], None if r["design"] == "sequential" else r["runs_per_arm"],
                       r.get("runs_per_instance"), r.get("layout"), r.get("per_look_hdi_prob"))
                      for r in d["designs"]]
    assert rows(full) == rows(fast), where
    for x, y in zip(full["designs"], fast["designs"]):
        if x["design"] == "sequential":
            if x["meets_target"]:
                assert x["runs_per_arm"] == y["runs_per_arm"], where
                assert x["assurance"] == y["assurance"], where
            else:
                cap = x["max_runs_per_arm"]
                assert abs(x["runs_per_arm"] - y["runs_per_arm"]) <= 4 * cap / 2 / 250 ** 0.5
        for f in ("meets_target", "false_claim_ok", "within_budget", "minimal"):
            assert x.get(f) == y.get(f), (where, x["design"], x["runs_per_arm"], f)
        for f, s in (("assurance", "assurance_se"), ("false_claim_rate", "false_claim_rate_se")):
            if x.get(f) is None:
                continue
            assert abs(x[f] - y[f]) <= _tol(x[f], y[f], y[s]), (where, x["design"],
                                                                 x["runs_per_arm"], f)


CASES = [(0.44, "hf-a10g-small"), (1.0, "hf-a10g-small"), (2.0, "local-a10g"),
         (-1.0, "local-a10g"), (-5.82, "published-n4"), (3.0, "hf-a10g-small")]


@pytest.mark.parametrize("delta,platform", CASES)
def test_repeats_same_decisions_as_full_simulation(delta, platform):
    from planner.io.platforms import PLATFORM_ALIASES
    from planner.decide.costs import cost_model
    from planner.decide.priors import resolve_prior
    from planner.decide.repeats import plan_repeats

    prior, label = resolve_prior(None, platform)
    designs = ("separate", "sequential") if PLATFORM_ALIASES.get(platform) == "published-n4" \
        else ("separate", "paired", "sequential")
    kw = dict(prior=prior, designs=designs, cost=cost_model(platform), seed=1,
              prior_label=label)
    full = plan_repeats(delta, adaptive=False, **kw).to_dict()
    fast = plan_repeats(delta, **kw).to_dict()
    assert fast["simulated_experiments"] < full["simulated_experiments"]
    _same_plan(full, fast, f"{delta} {platform}")


@pytest.mark.slow
def test_shipped_budget_plan_same_purchases(monkeypatch):
    import functools
    from pathlib import Path

    import planner.decide.repeats as R
    from planner.decide.budget import plan_budget
    from planner.io.plan_file import read_plan

    plan = Path(__file__).resolve().parents[3] / "examples" / "plan.toml"
    fast = plan_budget(read_plan(plan), seed=1).to_dict()
    monkeypatch.setattr(R, "plan_repeats", functools.partial(R.plan_repeats, adaptive=False))
    full = plan_budget(read_plan(plan), seed=1).to_dict()
    assert full["not_worth_buying"] == fast["not_worth_buying"]
    assert full["totals"]["bought"] == fast["totals"]["bought"]
    for x, y in zip(full["comparisons"], fast["comparisons"]):
        assert x["status"] == y["status"], x["name"]
        rx, ry = x["recommended"], y["recommended"]
        assert (rx is None) == (ry is None), x["name"]
        if rx is not None:
            # the purchase itself is the full simulation's; its design's curve (the other
            # rows) is within the rates' tolerance
            drop = lambda r: {k: v for k, v in r.items() if k != "curve"}
            assert drop(rx) == drop(ry), x["name"]
    assert full["totals"] == fast["totals"]
