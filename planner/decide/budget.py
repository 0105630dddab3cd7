"""How to spend a GPU budget across several comparisons: size each comparison of a plan,
then allocate the budget.

The plan is read by :mod:`planner.io.plan_file`. Each comparison is sized by
:func:`planner.decide.repeats.plan_repeats` with its expected Δ (:func:`expected_delta`), the noise
prior and the cost model of its platform (:func:`planner.decide.costs.cost_model`, with the plan's
price and minutes as overrides): for every design (separate allocations, paired, sequential)
the assurance (probability that the planned runs end in a *correct decisive* verdict,
averaged over the expected-Δ distribution and the noise prior), the false-claim rate,
GPU-hours and dollars, and the cheapest design reaching the target.

Allocation rule
---------------
Each comparison has one *candidate purchase*: the row :func:`planner.decide.repeats.plan_repeats`
recommends (the cheapest design and runs per arm whose assurance reaches the target with a
false-claim rate ≤ 5 %, within ``max_runs_per_arm``). A comparison without such a design is
never bought (status ``unreachable``; ``reason`` says whether the target is out of reach or
only reachable by designs that claim falsely too often). Sequential purchases are costed at
their expected stop; ``worst_case_cost_usd`` (per purchase and in ``totals``, with
``worst_case_exceeds_budget``) is the cost if every look is needed. The purchases are then
chosen by :func:`planner.decide.knapsack.allocate`, an exact 0/1 knapsack that **maximises the
expected number of decisive, correct verdicts** (the sum of the bought assurances) subject to
total cost ≤ ``total_usd`` (or total runs ≤ ``max_runs``); ties go to the cheaper set. The
comparisons left out are *not worth buying at this budget*; ``value_per_usd`` (assurance per
dollar) shows how close each one came.
"""

from __future__ import annotations

import difflib
import json
import math
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from models.stats.special import gaussian_kde_1d
from planner.defaults import BASELINE_TPS, DEFAULT_PLATFORM, DEFAULT_ROPE, DEFAULT_RULE, \
    MAX_FALSE_CLAIM
from planner.errors import InputError
from planner.decide.knapsack import allocate, total_runs
from planner.io.plan_file import Budget, Comparison, Plan, read_plan
from planner.results.repeat_plan import RepeatPlan, design_label

__all__ = ["SCHEMA", "ALLOCATION_RULE", "BudgetPlan", "expected_delta", "plan_budget",
           "read_plan"]

SCHEMA = "spec-planner/budget/1"
#: Name of the sizing engine in the result.
_ENGINE = "planner.decide.repeats"

ALLOCATION_RULE = (
    "each comparison's candidate purchase is its cheapest design reaching the assurance "
    "target with a false-claim rate <= 5 % (P(decisive | Δ = 0), within 2 Monte Carlo "
    "SEs; the 'planner repeats' recommendation); an exact 0/1 knapsack then picks the purchases that maximise the expected number "
    "of decisive correct verdicts (sum of assurances) within the budget; ties go to the "
    "cheaper set")


@dataclass
class BudgetPlan:
    """Result of :func:`plan_budget` (schema ``spec-planner/budget/1``).

    Parameters
    ----------
    plan, title : str
        The plan file and its title.
    budget : dict
        ``total_usd``, ``max_runs``, ``price_per_hour`` ($/h of the plan's platform),
        ``assurance_target``, ``minutes_per_run``, ``startup_minutes``, ``max_runs_per_arm``,
        ``unit`` of the knapsack (``cents`` / ``runs``), ``one_run_usd``.
    comparisons : list of dict
        Per comparison: ``name``, ``baseline``, ``candidate``, ``line``, ``platform``,
        ``prior``, ``rule``, ``rope``, ``rope_pct``, ``baseline_tps``, ``delta`` (``source``;
        the plan's own Δ as stated: ``given`` / ``given_sd`` in the unit of ``source``
        (``delta_tps``, ``delta_pct``), or ``policy``, ``speedup`` / ``speedup_sd`` of a
        projection; the simulated ``mean_tps``, ``sd_tps``, ``mean_pct``, ``sd_pct``),
        ``delta_curve`` (density of Δ in %), ``designs`` (one entry per design with its ``curve``,
        :meth:`planner.results.repeat_plan.RepeatPlan.design_curves`), ``recommended`` (that entry plus
        ``worst_case_cost_usd`` and ``worst_case_runs_per_arm``, or None),
        ``repeats_reason``, ``beyond_cap``, ``repeats_engine``, ``value_per_usd``, ``status``
        (``buy`` / ``over budget`` / ``unreachable``) and ``reason``.
    totals : dict
        ``comparisons`` and ``reachable`` (those with a candidate purchase); of the
        purchases: ``bought``, ``runs``, ``gpu_hours``, ``cost_usd``,
        ``expected_decisive``, ``expected_false_claims``, ``budget_left_usd``, the worst case
        (``worst_case_cost_usd``, ``worst_case_runs``, ``worst_case_gpu_hours``,
        ``worst_case_exceeds_budget``, ``worst_case_exceeds``) and ``cost_all_usd``.
    sims, seed : int
    elapsed_s : float or None
        Wall-clock seconds; not part of the JSON.
    """

    plan: str
    title: str
    budget: dict
    comparisons: list[dict]
    totals: dict
    sims: int
    seed: int
    repeats_engine: str = _ENGINE
    allocation_rule: str = ALLOCATION_RULE
    elapsed_s: float | None = field(default=None, compare=False)

    @property
    def not_worth_buying(self) -> list[str]:
        """Names of the comparisons not bought."""
        return [c["name"] for c in self.comparisons if c["status"] != "buy"]

    def to_dict(self) -> dict:
        """The JSON result; ``elapsed_s`` is left out (a seeded result is reproducible)."""
        return {"schema": SCHEMA, "command": "budget", "plan": self.plan, "title": self.title,
                "budget": self.budget, "allocation_rule": self.allocation_rule,
                "comparisons": self.comparisons, "totals": self.totals,
                "not_worth_buying": self.not_worth_buying,
                "repeats_engine": self.repeats_engine, "sims": self.sims, "seed": self.seed}

    @classmethod
    def from_dict(cls, d: dict) -> "BudgetPlan":
        """Read a saved ``planner budget --json`` result.

        Raises
        ------
        ValueError
            ``d`` is not a ``spec-planner/budget/1`` result.
        """
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} result: schema {d.get('schema')!r}")
        return cls(plan=d["plan"], title=d.get("title", ""), budget=d["budget"],
                   comparisons=d["comparisons"], totals=d["totals"], sims=d["sims"],
                   seed=d["seed"], repeats_engine=d.get("repeats_engine", _ENGINE),
                   allocation_rule=d.get("allocation_rule", ALLOCATION_RULE))


# --------------------------------------------------------------------------------------------
# expected delta
# --------------------------------------------------------------------------------------------

def draft_policies(draft: Any) -> list[dict]:
    """The policies of a ``planner draft`` result: a ``DraftResult`` (anything with
    ``to_dict()``) or the dict of a saved ``planner draft --json``.

    The budget reads of each policy only ``label`` (else ``policy``), ``policy``,
    ``is_baseline``, ``speedup_vs_baseline`` (``point``, ``sd``, or ``ci_low`` / ``ci_high``)
    and ``worth_a_run`` (``worth``).

    Raises
    ------
    ValueError
        No ``policies`` list.
    """
    doc = draft.to_dict() if hasattr(draft, "to_dict") else draft
    pols = doc.get("policies") if isinstance(doc, dict) else None
    if not isinstance(pols, list) or not all(isinstance(p, dict) for p in pols):
        raise ValueError("no 'policies' list")
    return pols


def _speedup(pol: dict) -> tuple[float | None, float]:
    """(point, sd) of a policy's speed-up over the projection's baseline (sd from the 95 %
    interval when not given; 0 for a point value)."""
    v = pol.get("speedup_vs_baseline")
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v), 0.0
    if not isinstance(v, dict) or v.get("point") is None:
        return None, 0.0
    sd = v.get("sd")
    if sd is None and v.get("ci_low") is not None and v.get("ci_high") is not None:
        sd = (float(v["ci_high"]) - float(v["ci_low"])) / (2 * 1.96)
    return float(v["point"]), float(sd or 0.0)


def _projection_delta(c: Comparison, plan: Plan, baseline_tps: float, sims: int,
                      rng: np.random.Generator) -> tuple[np.ndarray | float, dict]:
    """Δ (TPS) from a saved ``planner draft --json`` output and a policy name: the policy's
    speed-up over the projection's baseline applied to ``baseline_tps``."""
    pp = Path(c.projection)
    if not pp.is_absolute():
        pp = Path(plan.path).parent / pp
    line = c.lines.get("projection", c.line)

    def err(msg: str, fld: str = "projection", at: int | None = line) -> InputError:
        return InputError(f"comparison '{c.name}': {msg}", file=plan.path, line=at, field=fld)

    if not pp.exists():
        raise err(f"projection file not found: {c.projection}")
    try:
        from planner.io.files import read_text  # bounded: /dev/zero, a sparse file refused

        from models.files import loads_json

        pols = draft_policies(loads_json(read_text(pp, str(pp)), str(pp), InputError))
    except InputError:  # the file's own one line (binary, too large, 5,000-digit integer)
        raise
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise err(f"projection is not JSON ({exc})") from None
    except ValueError:
        raise err(f"{c.projection} has no 'policies' (is it 'planner draft --json' "
                  "output?)") from None
    names = [str(p.get("label") or p.get("policy") or "") for p in pols]
    short = [str(p.get("policy") or "") for p in pols]
    pline = c.lines.get("policy", c.line)
    if c.policy in names:
        k = names.index(c.policy)
    elif c.policy in short and short.count(c.policy) == 1:
        k = short.index(c.policy)
    else:
        near = difflib.get_close_matches(c.policy, names, n=1)
        raise err(f"policy '{c.policy}' is not in {c.projection} (has {', '.join(names[:8])})"
                  + (f"; did you mean '{near[0]}'?" if near else ""), "policy", pline)
    pol = pols[k]
    war = pol.get("worth_a_run")
    info: dict = {"source": "projection", "projection": c.projection, "policy": names[k],
                  "worth_a_run": war.get("worth") if isinstance(war, dict) else war}
    if pol.get("is_baseline"):
        raise err(f"policy '{c.policy}' is the projection's baseline (Δ = 0)", "policy", pline)
    try:
        mean, sd = _speedup(pol)
    except (TypeError, ValueError):
        raise err(f"policy '{c.policy}': speedup_vs_baseline holds a value that is not a "
                  "number") from None
    if mean is None:
        raise err(f"policy '{c.policy}' has no speedup_vs_baseline")
    # an edited or corrupt projection: a speed-up is a positive ratio, its sd a spread
    if not (math.isfinite(mean) and 0.0 < mean <= 100.0):
        raise err(f"policy '{c.policy}': speedup_vs_baseline.point {mean!r} is not a ratio "
                  "in (0, 100]")
    if not (math.isfinite(sd) and 0.0 <= sd <= 100.0):
        raise err(f"policy '{c.policy}': speedup_vs_baseline.sd {sd!r} is not in [0, 100]")
    info["speedup"], info["speedup_sd"] = mean, sd  # the plan's own Δ, as the file states it
    info["note"] = f"speedup vs the projection's baseline applied to {baseline_tps:g} TPS"
    if sd > 0:
        return rng.normal((mean - 1.0) * baseline_tps, sd * baseline_tps, sims), info
    return float((mean - 1.0) * baseline_tps), info


def expected_delta(c: Comparison, plan: Plan, baseline_tps: float, *, sims: int,
                   rng: np.random.Generator) -> tuple[np.ndarray | float, dict]:
    """Δ in TPS (a number, or draws when uncertain) and a description of where it came from.

    Parameters
    ----------
    c : Comparison
    plan : Plan
    baseline_tps : float
        TPS level of the baseline (converts ``delta_pct`` and a projection's speed-up to TPS).
    sims : int
        Draws of an uncertain Δ (``delta_sd`` > 0, or a projection with an sd).
    rng : numpy.random.Generator

    Returns
    -------
    delta : float or ndarray of shape (sims,)
        Δ = candidate − baseline in TPS.
    info : dict
        ``source`` (``delta_tps``, ``delta_pct`` or ``projection``) and the given values.

    Raises
    ------
    InputError
        A projection file that is missing, not a ``planner draft --json`` result, or without
        the policy.
    """
    if c.projection is not None:
        return _projection_delta(c, plan, baseline_tps, sims, rng)
    if c.delta_tps is not None:
        mean, sd, unit = c.delta_tps, c.delta_sd or 0.0, "tps"
        to_tps = 1.0
    else:
        mean, sd, unit = c.delta_pct, c.delta_sd or 0.0, "pct"
        to_tps = baseline_tps / 100.0
    info = {"source": f"delta_{unit}", "given": mean, "given_sd": c.delta_sd}
    if sd > 0:
        return rng.normal(mean * to_tps, sd * to_tps, sims), info
    return float(mean * to_tps), info


def _delta_curve(delta: np.ndarray | float, baseline_tps: float, points: int = 200) -> dict:
    """Density of the expected Δ on a grid (in % of baseline), for plots; a point mass gives
    an empty curve and the value in ``point_pct``."""
    d = np.atleast_1d(np.asarray(delta, float))
    pct = 100.0 * d / baseline_tps
    if d.size < 2 or np.std(pct) == 0:
        return {"delta_pct": [], "density": [], "point_pct": float(pct[0]), "interval_pct": None}
    lo, hi = np.percentile(pct, [0.1, 99.9])
    pad = 0.15 * (hi - lo)
    xs = np.linspace(lo - pad, hi + pad, points)
    return {"delta_pct": xs.tolist(), "density": gaussian_kde_1d(pct, xs).tolist(),
            "point_pct": None, "interval_pct": np.percentile(pct, [2.5, 97.5]).tolist()}


def _runs_mean(plan: Plan, cfg: str, cache: dict) -> float | None:
    if not plan.runs:
        return None
    if "table" not in cache:
        from planner.io.runs import read_runs

        rp = Path(plan.runs)
        cache["table"] = read_runs(rp if rp.is_absolute() else Path(plan.path).parent / rp)
    from planner.decide.comparison import measured_runs

    # the config's warm level: its runs as the verdict reads them, cold first runs left out
    # (all of them when every run is cold)
    sub, cold = measured_runs(cache["table"], cfg, cfg)
    vals = [r.tps for r, c in zip(sub.runs, cold) if not c] or [r.tps for r in sub.runs]
    return float(np.mean(vals)) if vals else None



# --------------------------------------------------------------------------------------------
# sizing one comparison
# --------------------------------------------------------------------------------------------

def _plan_loc(plan: Plan, c: Comparison, f: str) -> dict:
    """``InputError`` location of comparison field ``f``: the comparison's line of it, else the
    ``[plan]`` default's line, else the ``[[comparison]]`` header."""
    line = c.lines.get(f) or plan.lines.get(("plan", f)) or c.line
    return {"file": plan.path, "line": line, "field": f}


#: :func:`planner.decide.repeats.plan_repeats` parameters set from a ``[budget]`` field of another
#: name (the others are the plan field of the same name)
_BUDGET_FIELD = {"target": "assurance", "max_runs": "max_runs_per_arm"}


def _repeats_error_loc(plan: Plan, c: Comparison, fld: str | None) -> dict:
    """Where in the plan an error of :func:`planner.decide.repeats.plan_repeats` (naming its
    parameter) comes from: the comparison's Δ, a plan / comparison field, or the budget."""
    if fld == "delta":
        # Δ drawn with a stated sd: the sd is what reaches TPS <= 0 (1e6 blamed delta_tps)
        f = "delta_sd" if getattr(c, "delta_sd", None) is not None else next(
            (x for x in ("delta_tps", "delta_pct", "projection") if getattr(c, x) is not None),
            "delta_tps")
        return {"file": plan.path, "line": c.lines.get(f, c.line), "field": f}
    if fld in ("rule", "rope", "baseline_tps", "designs"):
        return _plan_loc(plan, c, fld)
    if fld in ("target", "max_runs", "price_per_hour", "minutes_per_run", "startup_minutes"):
        return plan.budget.where(_BUDGET_FIELD.get(fld, fld))
    if fld == "sims":
        return {"field": fld}
    return {"file": plan.path, "line": c.line, "field": fld}


def _cost_model(plan: Plan, platform: str):
    """The platform's cost model with the budget's price and minutes as overrides."""
    from planner.decide.costs import cost_model

    b = plan.budget
    try:
        return cost_model(platform, price_per_hour=b.price_per_hour,
                          minutes_per_run=b.minutes_per_run, startup_minutes=b.startup_minutes)
    except InputError as exc:
        raise InputError(exc.message, **b.where(exc.field)) from None


def _size(plan: Plan, c: Comparison, *, sims: int, seed: int, cache: dict,
          stated: dict | None = None) -> tuple[dict, RepeatPlan]:
    """Step 2: the settings of one comparison (plan defaults filled in), its expected Δ and
    its repeat plan; returns the comparison's result entry (without status) and the plan."""
    from planner.decide.priors import resolve_prior
    from planner.decide.repeats import plan_repeats
    from planner.decide.settle import paired_allowed
    from planner.decide.rope import Rope

    b = plan.budget
    label = f"comparison #{c.index + 1} '{c.name}'"
    rng = np.random.default_rng(seed + 7919 * (c.index + 1))
    base = c.baseline_tps or plan.baseline_tps or _runs_mean(plan, c.baseline, cache) \
        or BASELINE_TPS
    platform = c.platform or plan.platform or DEFAULT_PLATFORM
    rule = c.rule or plan.rule or DEFAULT_RULE
    rope = c.rope or plan.rope or DEFAULT_ROPE
    try:
        rope_log = Rope.parse(rope).log_halfwidth(base)
    except InputError as exc:
        raise InputError(f"{label}: {exc.message}", **_plan_loc(plan, c, "rope")) from None
    prior_spec = c.prior or plan.prior
    try:
        prior, prior_label = resolve_prior(prior_spec or "auto", platform, **(stated or {}))
    except InputError as exc:
        raise InputError(f"{label}: {exc.message}", **_plan_loc(
            plan, c, "prior" if prior_spec else "platform")) from None
    if prior is None:  # read_plan refuses unknown platforms and 'weak'
        raise InputError(f"{label}: sizing needs a noise prior (a platform or a calibrate "
                         "file)", **_plan_loc(plan, c, "prior"))
    delta, dinfo = expected_delta(c, plan, base, sims=sims, rng=rng)
    designs = c.designs or plan.designs
    explicit = c.designs is not None or ("plan", "designs") in plan.lines
    if not explicit and not paired_allowed(platform, prior_spec is not None, prior):
        # the one rule of 'planner repeats' and the verdict's advice
        # (planner.decide.settle.paired_allowed): the published-n4 prior pins the
        # within-allocation sigma near 0 (it only knows the total), so a paired design would
        # look free of noise
        designs = tuple(x for x in designs if x != "paired")
    try:
        rp = plan_repeats(delta, relative=False, baseline_tps=base, prior=prior, rule=rule,
                          rope=rope, target=b.assurance, designs=designs,
                          max_runs=b.max_runs_per_arm, cost=_cost_model(plan, platform),
                          sims=sims, seed=seed + c.index, prior_label=prior_label,
                          search_beyond_cap=False)  # the doubling search to 5000 runs is slow
    except InputError as exc:
        raise InputError(f"{label}: {exc.message}",
                         **_repeats_error_loc(plan, c, exc.field)) from None
    entries, rec = rp.design_curves()
    if rec is not None:
        rec = {**rec, "worst_case_cost_usd": float(rec.get("max_cost_usd") or rec["cost_usd"]),
               "worst_case_runs_per_arm": rec.get("max_runs_per_arm") or rec["runs_per_arm"]}
    d = np.atleast_1d(np.asarray(delta, float))
    item = {
        "name": c.name, "baseline": c.baseline, "candidate": c.candidate,
        "line": c.line, "platform": platform, "prior": prior_label,
        "prior_source": getattr(prior, "source", "") or "", "rule": rule,
        "rope": rope, "rope_pct": 100 * math.expm1(rope_log), "baseline_tps": base,
        "delta": {**dinfo, "mean_tps": float(d.mean()),
                  "sd_tps": float(d.std()) if d.size > 1 else 0.0,
                  "mean_pct": float(100 * d.mean() / base),
                  "sd_pct": float(100 * d.std() / base) if d.size > 1 else 0.0},
        "delta_curve": _delta_curve(delta, base),
        "designs": entries,
        "recommended": rec,
        "repeats_reason": rp.reason.text,
        "beyond_cap": rp.beyond_cap,
        "repeats_engine": _ENGINE,
    }
    return item, rp


def _unreachable_reason(item: dict, rp: RepeatPlan, b: Budget) -> str:
    """Why a comparison has nothing to buy, by the repeat plan's reason code."""
    if rp.reason.code == "false_claims":
        # the target is reachable, but only by designs that claim too often
        reach = [e for e in item["designs"] if e["reaches_target"]]
        low = min(reach, key=lambda e: e.get("false_claim_rate") or 0.0)
        text = (f"no design is both decisive and safe: the designs reaching assurance "
                f"{b.assurance:g} have false-claim rates above {MAX_FALSE_CLAIM:g} "
                f"(lowest: {design_label(low)} at {low['runs_per_arm']:.3g} runs/arm, "
                f"false-claim {low.get('false_claim_rate') or 0:.3f})")
    elif rp.reason.code == "over_budget":
        text = rp.reason.text
    else:
        # one statement of the best design (repeats' own reason names it too)
        best = max(item["designs"], key=lambda e: e.get("assurance") or 0, default=None)
        text = (f"no design reaches assurance {b.assurance:g} within {b.max_runs_per_arm} runs "
                "per arm")
        if best is not None and best.get("assurance") is not None:
            text += (f" (best: {design_label(best)} at {best['runs_per_arm']:.3g} runs/arm, "
                     f"assurance {best['assurance']:.2f}, ${best['cost_usd'] or 0:.2f})")
    bc = item.get("beyond_cap")
    if isinstance(bc, dict) and bc.get("runs_per_arm"):
        text += (f"; {bc['design']} would need {bc['runs_per_arm']} runs per arm "
                 f"(${bc.get('cost_usd', float('nan')):.2f})")
    return text


# --------------------------------------------------------------------------------------------
# the budget
# --------------------------------------------------------------------------------------------

def _one_run_usd(plan: Plan) -> float:
    """Step 1: $ of one run under the plan platform's cost model; the budget must buy it."""
    b = plan.budget
    cm = _cost_model(plan, plan.platform or DEFAULT_PLATFORM)
    one_run = cm.cost([1])["cost_usd"]
    if b.total_usd is not None and b.total_usd < one_run - 1e-9:
        raise InputError(f"budget ${b.total_usd:g} is smaller than one run (${one_run:.2f}: "
                         f"{cm.startup_minutes:g} min start-up + {cm.minutes_per_run:g} min "
                         f"at ${cm.price_per_hour:g}/h)", **b.where("total_usd"))
    if b.max_runs is not None and b.max_runs < 2:
        raise InputError(f"must allow at least one run per arm (>= 2), got {b.max_runs}",
                         **b.where("max_runs"))
    return one_run


def _left_out_reason(rec: dict, used_usd: float, used_runs: int, b: Budget) -> str:
    """Why the knapsack left a reachable comparison out, naming the limit that binds: the $
    budget, the run budget (``max_runs``), or both."""
    runs = total_runs(rec["runs_per_arm"])
    cost = float(rec["cost_usd"])
    if b.total_usd is not None and cost > b.total_usd + 1e-9:
        return (f"its recommended design alone costs ${cost:.2f}, more than the whole budget "
                f"(${b.total_usd:g})")
    if b.max_runs is not None and runs > b.max_runs:
        return (f"its recommended design alone takes {runs} runs, more than the run budget "
                f"({b.max_runs})")
    over = []
    if b.total_usd is not None and used_usd + cost > b.total_usd + 1e-9:
        over.append(f"the cost to ${used_usd + cost:.2f}, over the ${b.total_usd:g} budget")
    if b.max_runs is not None and used_runs + runs > b.max_runs:
        over.append(f"the runs to {used_runs + runs}, over the run budget of {b.max_runs}")
    if not over:
        return ("left out by the knapsack: the budget buys more decisive verdicts elsewhere")
    return ("left out by the knapsack: beside the purchases made it would take "
            + " and ".join(over) + "; those buy more decisive verdicts")


def _set_status(items: list[dict], plans: list[RepeatPlan], bought: set, b: Budget,
                totals: dict | None = None) -> None:
    """Step 4: ``value_per_usd``, ``status`` and ``reason`` of every comparison (``totals``:
    :func:`_totals` of the purchases, whose cost and runs the reasons measure against;
    computed when not given)."""
    t = _totals(items, bought, b) if totals is None else totals
    used_usd, used_runs = t["cost_usd"], t["runs"]
    for i, (it, rp) in enumerate(zip(items, plans)):
        rec = it["recommended"]
        if rec is None:
            it["status"] = "unreachable"
            it["reason"] = _unreachable_reason(it, rp, b)
            it["value_per_usd"] = None
            continue
        it["value_per_usd"] = (rec["assurance"] / rec["cost_usd"]) if rec["cost_usd"] else None
        if i in bought:
            it["status"], it["reason"] = "buy", ""
        else:
            it["status"] = "over budget"
            it["reason"] = _left_out_reason(rec, used_usd, used_runs, b)


def _totals(items: list[dict], bought: set, b: Budget) -> dict:
    """Step 5: totals of the purchases, and their worst case (every sequential purchase run to
    its cap)."""
    buy = [items[i]["recommended"] for i in sorted(bought)]
    cost = sum(float(r["cost_usd"]) for r in buy)
    worst = sum(float(r["worst_case_cost_usd"]) for r in buy)
    worst_runs = sum(total_runs(r["worst_case_runs_per_arm"]) for r in buy)
    over = []
    if b.total_usd is not None and worst > b.total_usd + 1e-9:
        over.append("total_usd")
    if b.max_runs is not None and worst_runs > b.max_runs:
        over.append("max_runs")
    return {
        "comparisons": len(items),
        "reachable": sum(1 for it in items if it["recommended"] is not None),
        "bought": len(buy),
        "runs": sum(total_runs(r["runs_per_arm"]) for r in buy),
        "gpu_hours": sum(float(r["gpu_hours"] or 0.0) for r in buy),
        "cost_usd": cost,
        "expected_decisive": sum(float(r["assurance"]) for r in buy),
        "expected_false_claims": sum(float(r["false_claim_rate"] or 0.0) for r in buy),
        "budget_left_usd": (b.total_usd - cost) if b.total_usd is not None else None,
        "worst_case_cost_usd": worst,
        "worst_case_runs": worst_runs,
        "worst_case_gpu_hours": sum(float(r.get("max_gpu_hours") or r["gpu_hours"] or 0.0)
                                    for r in buy),
        "worst_case_exceeds_budget": bool(over),
        "worst_case_exceeds": over,
        "cost_all_usd": sum(float(it["recommended"]["cost_usd"]) for it in items
                            if it["recommended"]),
        "runs_all": sum(total_runs(it["recommended"]["runs_per_arm"]) for it in items
                        if it["recommended"]),
        "max_runs": b.max_runs,
    }


def _size_all(plan: Plan, *, sims: int, seed: int, stated: dict | None,
              progress: Callable[[str], None] | None) -> tuple[list[dict], list[RepeatPlan]]:
    """Step 2 for every comparison, in this process, two at a time on two threads.

    Each comparison's result depends only on the plan, its index and the seed (its own
    random generators), so the threads give the same result as sizing them one after
    another; results (and the first error, in plan order) are taken in plan order. The
    assurance kernels release the GIL (``nogil``) and run single-threaded inside a worker
    (:func:`numba.set_num_threads` is per thread), so two comparisons use the two cores
    of a small machine while the Python between kernel calls takes turns. Once no
    comparison is left to start and only one worker is still sizing, that worker's kernels
    run on all of numba's threads (:data:`models.stats.assurance.before_launch`): the last
    comparison no longer leaves a core idle. The labels do not depend on the thread count.

    Comparisons are not sized in forked worker processes: a child forked after the parent
    has started GNU OpenMP (numba's parallel kernels, or a cold numba cache compiling them)
    terminates ("fork() called from a process already using GNU OpenMP"), and a
    ``multiprocessing.Pool`` then waits forever for the lost task.
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    cache: dict = {}
    comps = list(plan.comparisons)
    workers = max(1, min(_SIZING_THREADS, os.cpu_count() or 1, len(comps)))
    numba_threads = workers > 1
    if numba_threads and not _threadsafe_kernels():
        workers = 1
        numba_threads = False

    lock = threading.Lock()
    count = {"started": 0, "finished": 0}
    local = threading.local()

    def threads_for_launch() -> None:
        # all of numba's threads for the last worker still sizing, else one
        with lock:
            alone = count["started"] == len(comps) and \
                count["started"] - count["finished"] == 1
        n = all_threads if alone else 1
        if getattr(local, "threads", 1) != n:
            import numba

            numba.set_num_threads(n)
            local.threads = n

    def one(c: Comparison) -> tuple[dict, RepeatPlan]:
        with lock:
            count["started"] += 1
        try:
            if numba_threads:
                import numba

                numba.set_num_threads(1)
                local.threads = 1
            return _size(plan, c, sims=sims, seed=seed, cache=cache, stated=stated)
        finally:
            with lock:
                count["finished"] += 1

    items, plans = [], []
    ex = ThreadPoolExecutor(max_workers=workers)
    hooked = False
    if numba_threads:
        import numba

        import models.stats.assurance_analysis as assurance

        all_threads = int(numba.config.NUMBA_NUM_THREADS)
        if all_threads > 1 and assurance.before_launch is None:
            assurance.before_launch = threads_for_launch
            hooked = True
    try:
        futures = [ex.submit(one, c) for c in comps]
        for c, fut in zip(comps, futures):
            item, rp = fut.result()
            items.append(item)
            plans.append(rp)
            if progress:
                progress(c.name)
    finally:
        ex.shutdown(wait=True, cancel_futures=True)
        if hooked:
            import models.stats.assurance_analysis as assurance

            assurance.before_launch = None
    return items, plans


#: Threads sizing the comparisons of a budget (at most the machine's cores).
_SIZING_THREADS = 2


def _threadsafe_kernels() -> bool:
    """Whether numba's threading layer accepts parallel kernels launched from several
    threads at once: OpenMP and TBB do; the ``workqueue`` fallback (no OpenMP or TBB
    library installed) aborts the process on concurrent launches, so the comparisons are
    then sized one after another."""
    from models.kernels._jit import prepare_numba

    prepare_numba()                         # OMP_WAIT_POLICY before OpenMP loads
    import numba

    numba.get_num_threads()                 # starts the threading layer
    try:
        return numba.threading_layer() in ("omp", "tbb")
    except ValueError:
        return False


def plan_budget(plan: Plan, *, sims: int = 2000, seed: int = 0,
                progress: Callable[[str], None] | None = None,
                stated: dict | None = None) -> BudgetPlan:
    """Size every comparison of ``plan`` and allocate the budget.

    Parameters
    ----------
    plan : Plan
        From :func:`planner.io.plan_file.read_plan`.
    sims : int
        Monte-Carlo simulations per design (passed to ``plan_repeats``).
    seed : int
        Base seed; comparison k uses ``seed + k``, so results do not depend on plan order
        of the other comparisons.
    progress : callable, optional
        Called with the comparison name after each comparison is sized.
    stated : dict, optional
        Noise the user states for every comparison: ``cv``, ``cv_instance``, ``aa_runs``
        (:func:`planner.decide.priors.resolve_prior`; with the platform's tau when only ``cv`` is
        given). A comparison or plan with its own ``prior`` is then an error (one statement
        of the noise). The metric and workload are not passed: the plan's runs table gives
        levels, often on another platform than the one sized.

    Returns
    -------
    BudgetPlan
        ``to_dict()`` is the JSON (schema ``spec-planner/budget/1``).

    Raises
    ------
    InputError
        Bad prior / ROPE / projection, or a budget smaller than the cost of one run; located
        at the plan line and field it comes from (a value the caller gave: its plain field).
    """
    t0 = time.perf_counter()
    b = plan.budget
    if b.path is None:
        b.path = plan.path
    one_run = _one_run_usd(plan)
    items, plans = _size_all(plan, sims=sims, seed=seed, stated=stated, progress=progress)
    alloc = allocate([it["recommended"] for it in items], total_usd=b.total_usd,
                     max_runs=b.max_runs)
    bought = set(alloc["bought"])
    totals = _totals(items, bought, b)   # reads only the purchases, not their status
    _set_status(items, plans, bought, b, totals)
    price = _cost_model(plan, plan.platform or DEFAULT_PLATFORM).price_per_hour
    budget = {"total_usd": b.total_usd, "max_runs": b.max_runs, "price_per_hour": price,
              "assurance_target": b.assurance, "minutes_per_run": b.minutes_per_run,
              "startup_minutes": b.startup_minutes, "max_runs_per_arm": b.max_runs_per_arm,
              "unit": alloc["unit"], "one_run_usd": one_run}
    return BudgetPlan(plan=plan.path, title=plan.title, budget=budget, comparisons=items,
                      totals=totals, sims=sims, seed=seed,
                      elapsed_s=time.perf_counter() - t0)
