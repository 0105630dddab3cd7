"""How many runs to buy: designs, costs and the recommendation of ``planner repeats``.

For each candidate design (runs per arm, how runs share instances, fixed or sequential) the
assurance — the probability, over the noise prior (or the posterior of runs already bought)
and over the effect, that the experiment ends with the right call under the chosen rule — is
simulated with :mod:`models.assurance` (exact engine inside the loop). Each design also gets
its false-claim rate (a decisive directional call when Δ = 0), its wrong-sign rate (the call
of the planned direction when Δ has the opposite sign) and its cost (:mod:`planner.costs`).
The recommendation is the cheapest design reaching the target assurance with a false-claim
rate ≤ 5 %.

The result is a JSON-ready dict (schema ``spec-planner/repeats/1``); :func:`plan_repeats` is
also the entry point of ``planner budget``.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Sequence

import numpy as np

from models.assurance import (Existing, Layout, Truth, evaluate_fixed,
                              evaluate_sequential_levels, paired_layout, prior_truth,
                              separate_layout, sequential_plan)
from models.noise import NoisePrior
from planner.costs import CostModel
from planner.errors import InputError
from planner.verdict import DEFAULT_ROPE, Rope

SCHEMA = "spec-planner/repeats/1"

#: Baseline TPS of the official-hardware noise measurement (N = 4 repeats of one submission on
#: HF a10g-small: mean 307.08, sd 1.16 TPS).
BASELINE_TPS = 307.08
#: Largest acceptable false-claim rate of a recommended design.
MAX_FALSE_CLAIM = 0.05
#: Runs-per-arm ladder of the design table.
LADDER = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 100, 128, 160, 200)
DESIGNS = ("separate", "paired", "sequential")
#: Stricter per-look HDI masses tried when a sequential plan's false-claim rate exceeds 5 %.
STRICTER_HDI = (0.975, 0.99, 0.995)


def parse_rule(rule: str) -> tuple[str, float]:
    """``verdict`` | ``superiority[:LEVEL]`` | ``equivalence`` -> (name, level).

    Raises
    ------
    InputError
        Unknown rule or a level outside (0.5, 1).
    """
    s = str(rule).strip().lower()
    name, _, lev = s.partition(":")
    if name not in ("verdict", "superiority", "equivalence"):
        raise InputError(f"unknown rule {rule!r} (verdict, superiority:0.95, equivalence)",
                         field="--rule")
    level = 0.95
    if lev:
        if name != "superiority":
            raise InputError(f"only superiority takes a level, got {rule!r}", field="--rule")
        try:
            level = float(lev)
        except ValueError:
            raise InputError(f"not a probability: {lev!r}", field="--rule") from None
        if not (0.5 < level < 1.0):
            raise InputError(f"level must be in (0.5, 1), got {level:g}", field="--rule")
    return name, level


def _to_log(delta, relative: bool, baseline: float) -> np.ndarray:
    d = np.asarray(delta, float)
    if not np.all(np.isfinite(d)):
        raise InputError("Δ must be finite", field="--delta")
    ratio = d / 100.0 if relative else d / baseline
    if np.any(ratio <= -1.0):
        raise InputError("Δ would make TPS <= 0", field="--delta")
    return np.log1p(ratio)


def _pct(x: float) -> float:
    return 100.0 * math.expm1(x)


def ladder(max_runs: int) -> list[int]:
    """Runs per arm shown in the table: the ladder up to ``max_runs``, plus ``max_runs``."""
    return sorted({n for n in LADDER if n <= max_runs} | {max_runs})


class _Work:
    """Counts simulated experiments for a progress callback."""

    def __init__(self, cb: Callable[[str, int], None] | None):
        self.cb = cb
        self.stage = ""
        self.n = 0

    def __call__(self, k: int) -> None:
        self.n += k
        if self.cb is not None:
            self.cb(self.stage, k)


def _layout(kind: str, n: int, rpi: int, ppi: int | None) -> Layout:
    return separate_layout(n, rpi) if kind == "separate" else paired_layout(n, ppi)


def _row_fixed(kind, n, lay: Layout, res, cm: CostModel, target, max_cost, rpi, ppi) -> dict:
    c = cm.cost(lay.instances_per_arm())
    row = {"design": kind, "runs_per_arm": n,
           "runs_per_instance": rpi if kind == "separate" else None,
           "pairs_per_instance": (ppi or n) if kind == "paired" else None,
           "instances": lay.n_instances,
           "assurance": res.assurance, "assurance_se": res.assurance_se,
           "false_claim_rate": res.false_claim_rate, "false_claim_se": res.false_claim_se,
           "wrong_sign_rate": res.wrong_sign_rate,
           "labels": res.label_fractions,
           "gpu_hours": c["gpu_hours"], "cost_usd": c["cost_usd"],
           "allocations": c["allocations"], "runs_total": c["runs"]}
    return _flags(row, target, max_cost)


def _flags(row: dict, target: float, max_cost: float | None) -> dict:
    row["meets_target"] = bool(row["assurance"] >= target)
    fc = row["false_claim_rate"]
    row["false_claim_ok"] = bool(fc is not None and np.isfinite(fc) and fc <= MAX_FALSE_CLAIM)
    row["within_budget"] = bool(max_cost is None or row.get("max_cost_usd", row["cost_usd"])
                                <= max_cost + 1e-9)
    return row


def _effect_truth(delta_log, prior: NoisePrior, sims: int, seed: int) -> Truth:
    return prior_truth(prior, delta_log, sims, np.random.default_rng([seed, 0]))


def posterior_truth(post, existing: Existing, sims: int, seed: int) -> Truth:
    """Draws of (τ, σ, Δ, μ_A) from the exact posterior of runs already bought.

    Parameters
    ----------
    post : models.tps_exact.GridPosterior
        Fit of the existing runs (configs 0 = A, 1 = B, no cold column).
    existing : Existing
        The same runs, for the centring of μ_A.

    Notes
    -----
    Grid points are drawn by weight and jittered uniformly within their log-grid cell;
    (μ_A, μ_B) | τ, σ is the conditional Normal of the grid point.
    """
    rng = np.random.default_rng([seed, 0])
    g = rng.choice(post.w.size, size=sims, p=post.w / post.w.sum())
    ut, us = np.unique(post.tau), np.unique(post.sigma)
    ht = 0.5 * math.log(ut[1] / ut[0]) if ut.size > 1 else 0.0
    hs = 0.5 * math.log(us[1] / us[0]) if us.size > 1 else 0.0
    tau = post.tau[g] * np.exp(rng.uniform(-ht, ht, sims))
    sig = post.sigma[g] * np.exp(rng.uniform(-hs, hs, sims))
    L = np.linalg.cholesky(post.cov[g][:, :2, :2])
    beta = post.mean[g][:, :2] + np.einsum("dpq,dq->dp", L, rng.standard_normal((sims, 2)))
    return Truth(tau, sig, beta[:, 1] - beta[:, 0], beta[:, 0] - existing.centre)


def plan_repeats(delta: float | np.ndarray | None, *, relative: bool = False,
                 baseline_tps: float = BASELINE_TPS, prior: NoisePrior, rule: str = "verdict",
                 rope: str | Rope = DEFAULT_ROPE, target: float = 0.8,
                 designs: Sequence[str] = DESIGNS, max_runs: int = 40,
                 max_cost: float | None = None, price_per_hour: float = 1.0,
                 minutes_per_run: float = 3.0, startup_minutes: float = 5.0,
                 billed_per_minute: bool = True, sims: int = 2000, seed: int = 0,
                 progress: Callable[[str, int], None] | None = None,
                 runs_per_instance: int = 1, pairs_per_instance: int | None = None,
                 batch: int | None = None, existing: Existing | None = None,
                 truth: Truth | None = None, prior_label: str | None = None,
                 search_beyond_cap: bool = True) -> dict:
    """Plan the number of runs of an A/B TPS comparison.

    Parameters
    ----------
    delta : float or ndarray of shape (M,) or None
        Effect B − A: TPS at ``baseline_tps`` (or % with ``relative``); an array is a sample
        of its distribution (e.g. draws from ``planner budget``). ``None`` only with
        ``truth`` (the posterior of existing runs).
    relative : bool
        ``delta`` in % of TPS.
    baseline_tps : float
        TPS level of A (converts TPS to the log scale; default 307.08, the published N = 4
        official repeats).
    prior : NoisePrior
        Noise prior of the analysis (and of the simulation unless ``truth`` is given).
    rule : str
        ``verdict`` (the 95 % HDI vs ROPE labels of ``planner verdict``),
        ``superiority[:LEVEL]`` (P(Δ > ROPE) ≥ LEVEL, default 0.95) or ``equivalence``
        (95 % HDI inside the ROPE).
    rope : str or Rope
        ROPE half-width, ``"0.1%"`` or TPS.
    target : float
        Assurance to reach, in (0, 1).
    designs : sequence of {"separate", "paired", "sequential"}
    max_runs : int
        Cap on runs per arm (the table's largest design; the sequential cap).
    max_cost : float, optional
        Cap in $; dearer designs are shown but never recommended.
    price_per_hour, minutes_per_run, startup_minutes, billed_per_minute
        Cost model ($/h, min, min; see :mod:`planner.costs`).
    sims : int
        Simulated experiments per design and scenario (>= 100).
    seed : int
        Seed; the same inputs and seed give the same result.
    progress : callable(stage: str, advance: int), optional
        Called with the number of simulated experiments done.
    runs_per_instance : int
        Runs of one config per allocation in separate designs (1 = every run a new HF job).
    pairs_per_instance : int, optional
        A/B pairs per allocation in paired designs (None = all on one allocation).
    batch : int, optional
        Runs per arm per look of sequential designs (default: max_runs / 10, at least 1).
    existing : Existing, optional
        Runs already bought; designs are then the runs to *add* (on new instances).
    truth : Truth, optional
        Draws of (τ, σ, Δ, μ_A) to simulate from (e.g. :func:`posterior_truth`).

    Returns
    -------
    dict
        ``designs`` (rows with ``design``, ``runs_per_arm``, ``assurance``,
        ``false_claim_rate``, ``wrong_sign_rate``, ``gpu_hours``, ``cost_usd``, ...),
        ``recommended`` (a row or None), ``reason``, ``beyond_cap``, inputs and notes.

    Raises
    ------
    InputError
        Δ ≤ 0 with a one-sided rule, Δ = 0 with the verdict rule and a zero ROPE, target
        outside (0, 1), a budget smaller than one run, bad sizes.
    """
    t0 = time.perf_counter()
    rule_name, level = parse_rule(rule)
    rp = rope if isinstance(rope, Rope) else Rope.parse(rope)
    if not (isinstance(target, (int, float)) and 0.0 < float(target) < 1.0):
        raise InputError(f"assurance target must be in (0, 1), got {target!r}",
                         field="--assurance")
    if not (math.isfinite(baseline_tps) and baseline_tps > 0):
        raise InputError(f"must be > 0, got {baseline_tps!r}", field="--baseline-tps")
    if int(max_runs) < 1:
        raise InputError(f"the budget must allow at least one run per arm, got --max-runs "
                         f"{max_runs}", field="--max-runs")
    max_runs = int(max_runs)
    if int(sims) < 100:
        raise InputError(f"need at least 100 simulations, got {sims}", field="--sims")
    if runs_per_instance < 1 or (pairs_per_instance is not None and pairs_per_instance < 1):
        raise InputError("runs / pairs per instance must be >= 1", field="--runs-per-instance")
    bad = [d for d in designs if d not in DESIGNS]
    if bad or not designs:
        raise InputError(f"unknown design {bad[0] if bad else ''!r} ({', '.join(DESIGNS)})",
                         field="--design")
    cm = CostModel("custom", float(price_per_hour), float(minutes_per_run),
                   float(startup_minutes), billed_per_minute)
    if max_cost is not None:
        one = cm.cost([1])["cost_usd"]
        if not (math.isfinite(max_cost) and max_cost >= one and max_cost > 0):
            raise InputError(f"budget ${max_cost:g} is smaller than one run "
                             f"(${one:.2f}: {cm.startup_minutes:g} min start-up + "
                             f"{cm.minutes_per_run:g} min at ${cm.price_per_hour:g}/h)",
                             field="--max-cost")
    rope_log = rp.log_halfwidth(baseline_tps)

    # --- the effect -------------------------------------------------------------------
    if truth is None:
        if delta is None:
            raise InputError("give --delta (or --runs with --a/--b)", field="--delta")
        dlog = _to_log(delta, relative, baseline_tps)
        truth = _effect_truth(dlog if dlog.ndim else float(dlog), prior, int(sims), seed)
    else:
        sims = truth.size
    dl = truth.delta
    dmean = float(np.mean(dl))
    fixed_effect = bool(np.ptp(dl) == 0)
    if rule_name == "superiority" and (dmean <= 0 if not fixed_effect else dl[0] <= 0):
        raise InputError("a one-sided (superiority) rule needs Δ > 0 (B faster than A); swap "
                         "A and B for a slowdown", field="--delta")
    if rule_name == "superiority" and fixed_effect and dl[0] <= rope_log:
        raise InputError(f"Δ = {_pct(dl[0]):.3f}% is inside the ROPE (±{_pct(rope_log):.3f}%): "
                         "a superiority claim beyond the ROPE cannot be right", field="--delta")
    if rule_name == "verdict" and fixed_effect and dl[0] == 0 and rope_log == 0:
        raise InputError("Δ = 0 with a zero ROPE: no decisive verdict can be right; give a ROPE "
                         "(equivalence) or a non-zero Δ", field="--delta")
    if rule_name == "equivalence" and rope_log <= 0:
        raise InputError("the equivalence rule needs a ROPE > 0", field="--rope")

    work = _Work(progress)
    common = dict(rule=rule_name, level=level, seed=seed, existing=existing)
    rpi, ppi = int(runs_per_instance), pairs_per_instance
    fixed_kinds = [k for k in ("separate", "paired") if k in designs]
    if "sequential" in designs and not fixed_kinds:
        fixed_kinds_for_seq = ["separate"]
    else:
        fixed_kinds_for_seq = fixed_kinds
    rows: list[dict] = []
    cache: dict[tuple, object] = {}

    def fixed(kind: str, n: int, errors: bool = True):
        key = (kind, n, errors)
        if key in cache:
            return cache[key]
        if not errors and (kind, n, True) in cache:
            return cache[(kind, n, True)]
        work.stage = f"{kind} n={n}"
        res = evaluate_fixed(_layout(kind, n, rpi, ppi), prior, truth, rope_log,
                             error_rates=errors, progress=work, **common)
        cache[key] = res
        return res

    def minimal_n(kind: str, goal: float, lo: int, hi: int) -> int:
        """Smallest n in (lo, hi] with assurance >= goal, given A(lo) < goal <= A(hi)."""
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fixed(kind, mid, False).assurance >= goal:
                hi = mid
            else:
                lo = mid
        return hi

    lad = ladder(max_runs)
    best_fixed: dict[str, dict] = {}
    for kind in fixed_kinds:
        prev = 0
        first_hit = None
        shown_after = 0
        for n in lad:
            res = fixed(kind, n)
            row = _row_fixed(kind, n, _layout(kind, n, rpi, ppi), res, cm, target, max_cost,
                             rpi, ppi)
            row["minimal"] = False
            rows.append(row)
            if res.assurance >= target and first_hit is None:
                first_hit = (prev, n)
            prev = n
            # past the target the table only needs to show the curve flattening
            if first_hit is not None:
                shown_after += 1
                if shown_after > 2 or res.assurance >= 0.995:
                    break
        if first_hit is not None:
            lo, hi = first_hit
            nmin = minimal_n(kind, target, lo, hi)
            res = fixed(kind, nmin)
            row = _row_fixed(kind, nmin, _layout(kind, nmin, rpi, ppi), res, cm, target,
                             max_cost, rpi, ppi)
            row["minimal"] = True
            if not any(r["design"] == kind and r["runs_per_arm"] == nmin for r in rows):
                rows.append(row)
            else:
                for r in rows:
                    if r["design"] == kind and r["runs_per_arm"] == nmin:
                        r["minimal"] = True
            best_fixed[kind] = row

    # --- sequential ---------------------------------------------------------------------
    if "sequential" in designs:
        b = int(batch) if batch else max(1, int(round(max_runs / 10)))
        if b > max_runs:
            raise InputError(f"batch {b} exceeds --max-runs {max_runs}", field="--batch")
        for base in fixed_kinds_for_seq:
            bb = b if base == "paired" else max(rpi, (b // rpi) * rpi) if b >= rpi else rpi
            full, looks = sequential_plan(base, bb, max_runs, rpi)
            # the per-look HDI masses are tried in order until the false-claim rate is <= 5 %;
            # all of them share one pass over the simulated data per scenario
            work.stage = f"sequential {base} b={bb}"
            srs = evaluate_sequential_levels(full, looks, prior, truth, rope_log,
                                             (0.95,) + STRICTER_HDI,
                                             until_false_claim=MAX_FALSE_CLAIM, progress=work,
                                             **common)
            for sr in srs:
                row = _row_sequential(base, bb, full, looks, sr, cm, target, max_cost, rpi)
                # the fixed plan of the same base with the same assurance
                row["fixed_equivalent"] = _fixed_equivalent(base, sr.assurance, lad, fixed,
                                                            minimal_n, cm, rpi, ppi)
                rows.append(row)

    # --- recommendation -----------------------------------------------------------------
    ok = [r for r in rows if r["meets_target"] and r["false_claim_ok"] and r["within_budget"]]
    rec, reason = None, ""
    if ok:
        rec = min(ok, key=lambda r: (r["cost_usd"], r["gpu_hours"], r["runs_per_arm"]))
        reason = (f"cheapest design with assurance >= {target:g} and false-claim rate <= "
                  f"{MAX_FALSE_CLAIM:g}")
    else:
        best = max(rows, key=lambda r: r["assurance"]) if rows else None
        why = []
        if not any(r["meets_target"] for r in rows):
            why.append(f"no design up to {max_runs} runs per arm reaches assurance {target:g}"
                       + (f" (best {best['assurance']:.3f}: {best['design']}, "
                          f"{best['runs_per_arm']:g} runs per arm)" if best else ""))
        elif not any(r["meets_target"] and r["false_claim_ok"] for r in rows):
            why.append(f"designs reaching {target:g} have false-claim rates above "
                       f"{MAX_FALSE_CLAIM:g}")
        else:
            why.append(f"designs reaching {target:g} exceed the budget ${max_cost:g}")
        reason = "; ".join(why)

    beyond = None
    if rec is None and search_beyond_cap and fixed_kinds and \
            not any(r["meets_target"] for r in rows):
        beyond = _beyond_cap(fixed_kinds[0], max_runs, target, fixed, minimal_n, cm, rpi, ppi,
                             work)

    notes = _notes(prior, rule_name, rpi, fixed_kinds, existing)
    res = {
        "schema": SCHEMA,
        "command": "repeats",
        "inputs": {
            "delta": (None if delta is None else
                      (float(np.asarray(delta)) if np.ndim(delta) == 0 else
                       {"draws": int(np.size(delta)), "mean": float(np.mean(delta))})),
            "relative": relative, "baseline_tps": baseline_tps,
            "rule": rule_name, "level": level if rule_name == "superiority" else None,
            "rope": {"value": rp.value, "unit": "%" if rp.relative else "TPS",
                     "pct": _pct(rope_log), "tps": baseline_tps * math.expm1(rope_log),
                     "log": rope_log},
            "target": float(target), "max_runs": max_runs, "max_cost_usd": max_cost,
            "sims": int(sims), "seed": seed,
            "prior": {"label": prior_label or prior.name, **prior.to_dict()},
            "cost_model": {"price_per_hour": cm.price_per_hour,
                           "minutes_per_run": cm.minutes_per_run,
                           "startup_minutes": cm.startup_minutes,
                           "billed_per_minute": cm.billed_per_minute},
            "runs_per_instance": rpi, "pairs_per_instance": ppi,
            "existing_runs": existing.n_runs if existing is not None else 0,
        },
        "effect": {"kind": "fixed" if fixed_effect else "distribution",
                   "mean_pct": _pct(dmean), "mean_tps": baseline_tps * math.expm1(dmean),
                   "sd_pct": 100 * float(np.std(dl)),
                   "p_positive": float(np.mean(dl > 0)),
                   "delta_log": dmean},
        "designs": rows,
        "recommended": rec,
        "reason": reason,
        "beyond_cap": beyond,
        "notes": notes,
        "simulated_experiments": work.n,
        "elapsed_s": time.perf_counter() - t0,
    }
    return res


def _row_sequential(base, bb, full: Layout, looks, sr, cm: CostModel, target, max_cost, rpi):
    # cost of stopping at each look, then expectations over the stop distribution
    costs, hours = {}, {}
    for j, c in enumerate(looks):
        lay = full.prefix(c)
        cc = cm.cost(lay.instances_per_arm())
        costs[lay.n_a], hours[lay.n_a] = cc["cost_usd"], cc["gpu_hours"]
    runs = sr.runs_per_arm_at_stop
    exp_cost = float(np.mean([costs[int(n)] for n in runs]))
    exp_hours = float(np.mean([hours[int(n)] for n in runs]))
    cap = full.n_a
    row = {"design": "sequential", "layout": base, "batch": bb,
           "runs_per_arm": sr.expected_runs_per_arm, "max_runs_per_arm": cap,
           "runs_per_instance": rpi if base == "separate" else None,
           "pairs_per_instance": bb if base == "paired" else None,
           "instances": sr.expected_instances,
           "assurance": sr.assurance, "assurance_se": sr.assurance_se,
           "false_claim_rate": sr.false_claim_rate, "false_claim_se": sr.false_claim_se,
           "wrong_sign_rate": sr.wrong_sign_rate,
           "per_look_hdi_prob": sr.hdi_prob, "futility_threshold": sr.futility,
           "looks": len(looks),
           "gpu_hours": exp_hours, "cost_usd": exp_cost,
           "max_gpu_hours": hours[cap], "max_cost_usd": costs[cap],
           "expected_runs_per_arm": sr.expected_runs_per_arm,
           "p_stop_early": float(np.mean(runs < cap)),
           "minimal": False}
    _flags(row, target, max_cost)
    row["within_budget"] = bool(max_cost is None or costs[cap] <= max_cost + 1e-9)
    return row


def _fixed_equivalent(base, goal, lad, fixed, minimal_n, cm, rpi, ppi) -> dict | None:
    prev = 0
    for n in lad:
        if fixed(base, n, False).assurance >= goal:
            nmin = minimal_n(base, goal, prev, n)
            lay = _layout(base, nmin, rpi, ppi)
            c = cm.cost(lay.instances_per_arm())
            return {"design": base, "runs_per_arm": nmin,
                    "assurance": fixed(base, nmin, False).assurance,
                    "gpu_hours": c["gpu_hours"], "cost_usd": c["cost_usd"]}
        prev = n
    return None


def _beyond_cap(kind, max_runs, target, fixed, minimal_n, cm, rpi, ppi, work,
                limit: int = 5000) -> dict | None:
    """Smallest fixed design beyond the cap that reaches the target (doubling search)."""
    lo, n = max_runs, max_runs
    while n < limit:
        n = min(limit, 2 * n)
        if fixed(kind, n, False).assurance >= target:
            nmin = minimal_n(kind, target, lo, n)
            lay = _layout(kind, nmin, rpi, ppi)
            c = cm.cost(lay.instances_per_arm())
            r = fixed(kind, nmin, False)
            return {"design": kind, "runs_per_arm": nmin, "assurance": r.assurance,
                    "assurance_se": r.assurance_se, "gpu_hours": c["gpu_hours"],
                    "cost_usd": c["cost_usd"]}
        lo = n
    return {"design": kind, "runs_per_arm": None, "assurance": fixed(kind, limit, False).assurance,
            "note": f"not reached with {limit} runs per arm"}


def _notes(prior, rule, rpi, kinds, existing) -> list[str]:
    n = []
    if "paired" in kinds:
        n.append("paired designs run A and B interleaved on the same allocation, so the "
                 "instance effect cancels; their assurance rests on the prior of the "
                 "within-allocation scale sigma, which is not measured on HF (weak prior) — "
                 "and they estimate Δ on that one allocation")
    if rpi > 1:
        n.append(f"separate designs put {rpi} runs of one config on each allocation; those "
                 "runs share the instance effect")
    if existing is not None:
        n.append("designs are the runs to ADD to the existing ones (on new instances); the "
                 "effect is the current posterior of Δ; cold-start flags are ignored; false "
                 "claim = a decisive B/A-better call the drawn true Δ contradicts (Δ = 0 is not "
                 "a coherent truth once runs exist)")
    n.append("assurance averages over the noise prior: it is not frequentist power at one "
             "assumed sigma (see docs/planning.md)")
    return n


def plan_more_runs(table, a: str, b: str, *, prior: NoisePrior, rope: str | Rope = DEFAULT_ROPE,
                   delta: float | None = None, relative: bool = False, sims: int = 2000,
                   seed: int = 0, **kw) -> dict:
    """How many more runs, starting from the runs already bought.

    The noise and the effect are drawn from the exact posterior of the existing runs of A and
    B (cold-start flags ignored); the simulated new runs (on new instances) are analysed
    together with the old ones. A given ``delta`` replaces the posterior of Δ by that fixed
    effect (the noise still comes from the posterior).

    Parameters
    ----------
    table : planner.runs.RunsTable
    a, b : str
        Config labels (Δ = B − A).
    prior : NoisePrior
        Prior of the analysis of old + new runs.
    **kw
        Passed to :func:`plan_repeats` (rule, target, designs, max_runs, cost model, ...).

    Returns
    -------
    dict
        :func:`plan_repeats`'s result plus ``existing`` (the current verdict) and
        ``more_runs_per_arm`` (runs per arm to add under the recommended design, or None).

    Raises
    ------
    InputError
        As :func:`planner.verdict.build_data` and :func:`plan_repeats`.
    """
    from models.tps_exact import fit_exact
    from planner.verdict import build_data, label_from

    data = build_data(table, a, b, use_cold=False)
    post = fit_exact(data, prior)
    existing = Existing.from_tpsdata(data)
    level = post.level(0)
    rp = rope if isinstance(rope, Rope) else Rope.parse(rope)
    rope_log = rp.log_halfwidth(level)
    d = post.delta(0, 1, rope_log)
    truth = posterior_truth(post, existing, int(sims), seed)
    if delta is not None:
        truth = truth.with_delta(float(_to_log(delta, relative, level)))
    res = plan_repeats(None, relative=relative, baseline_tps=level, prior=prior, rope=rp,
                       sims=sims, seed=seed, existing=existing, truth=truth, **kw)
    n_a = int(np.sum(data.config == 0))
    res["existing"] = {"a": a, "b": b, "n_a": n_a, "n_b": int(data.n_runs - n_a),
                       "level_tps_a": level, "label": label_from(d),
                       "delta_pct": {"mean": _pct(d.mean), "hdi_low": _pct(d.hdi_low),
                                     "hdi_high": _pct(d.hdi_high)},
                       "p_b_gt_a": d.p_gt0}
    res["inputs"]["delta"] = delta
    rec = res["recommended"]
    res["more_runs_per_arm"] = None if rec is None else rec["runs_per_arm"]
    if res["existing"]["label"] != "undecided":
        res["notes"].insert(0, f"the runs already bought give '{res['existing']['label']}': no "
                               "more runs are needed for that call; the table shows how likely "
                               "it is to survive (assurance) if you add runs")
    return res
