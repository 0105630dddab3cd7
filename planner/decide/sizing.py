"""The sizer of ``planner repeats``: the design table of one question, the choice of runs per
allocation (Kalibera & Jones) and the recommendation.

:class:`Sizer` evaluates fixed designs (separate, paired) on the runs-per-arm ladder and
sequential designs, caches each design's simulated (or, with known noise, exact) result and
turns it into a :class:`planner.results.repeat_plan.DesignRow`; :func:`recommend` picks the
cheapest design meeting the target assurance with a false-claim rate within
:data:`planner.defaults.MAX_FALSE_CLAIM`. :func:`planner.decide.repeats.plan_repeats`
drives them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from models.stats.assurance import Adaptive, Truth, evaluate_fixed
from models.stats.assurance_known import evaluate_known, known_scales, normal_assurance
from models.stats.designs import Existing, Layout, paired_layout, separate_layout
from models.stats.noise import NoisePrior
from models.stats.sequential import evaluate_sequential_levels, sequential_plan
from planner.results.counts import count
from planner.decide.costs import CostModel
from planner.defaults import MAX_FALSE_CLAIM, check_assurance, check_sims
from planner.decide.rope import Rope
from planner.decide.rule import parse_rule
from planner.errors import InputError
from planner.results.repeat_plan import DesignRow, Reason

__all__ = ["LADDER", "DESIGNS", "STRICTER_HDI", "FALSE_CLAIM_Z", "false_claim_ok",
           "optimal_runs_per_instance", "ladder", "Question", "question", "check_effect",
           "Sizer", "Work", "recommend", "to_log", "pct"]

#: Runs-per-arm ladder of the design table.
LADDER = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 100, 128, 160, 200)
DESIGNS = ("separate", "paired", "sequential")
#: Stricter per-look HDI masses tried when a sequential plan's false-claim rate exceeds 5 %.
STRICTER_HDI = (0.975, 0.99, 0.995)
#: Assurance from which the design table stops its ladder (the curve has flattened).
_FLAT = 0.995
#: Largest runs per arm of the search beyond the cap.
_BEYOND_LIMIT = 5000
#: Monte-Carlo tolerance of the false-claim constraint: a simulated rate fails only when it
#: exceeds :data:`~planner.defaults.MAX_FALSE_CLAIM` by more than this many standard errors
#: (a one-sided test at about 2.3 %; an exact rate, SE 0, is compared as it is).
FALSE_CLAIM_Z = 2.0


def false_claim_ok(rate: float | None, se: float | None) -> bool:
    """The false-claim constraint decided with its Monte-Carlo error.

    ``rate <= MAX_FALSE_CLAIM + FALSE_CLAIM_Z * se`` (5 % + 2 SE; SE 0 for an exact rate):
    a design whose true rate is 5 % passes in about 97.7 % of seeds instead of flipping with
    every seed (a textbook-sized design would fail in half the seeds). The price: a design
    whose true rate is above 5 % but within about 2 SE (1 % at 2,000 simulations) can pass.
    A missing or NaN rate fails.
    """
    if rate is None or not np.isfinite(rate):
        return False
    tol = FALSE_CLAIM_Z * se if se is not None and np.isfinite(se) else 0.0
    return bool(rate <= MAX_FALSE_CLAIM + tol + 1e-12)


def optimal_runs_per_instance(tau: float, sigma: float, startup_minutes: float,
                              minutes_per_run: float) -> float:
    r"""Cost-optimal runs of one config per allocation (unrounded).

    Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time" (ISMM 2013), two-level
    experiment: with :math:`r` runs per allocation and :math:`m` allocations, the variance
    of an arm's mean is :math:`\tau^2/m + \sigma^2/(m r)` and its cost
    :math:`m\,(c_\mathrm{alloc} + r\,c_\mathrm{run})`; minimising the variance at a fixed cost
    (their optimal repetition count of the lower level, also Cochran, *Sampling Techniques*,
    1977, two-stage sampling) gives

    .. math:: r^* = \sqrt{\frac{c_\mathrm{alloc}\,\sigma^2}{c_\mathrm{run}\,\tau^2}},

    with :math:`c_\mathrm{alloc}` the cost of one allocation beyond its runs (start-up
    minutes) and :math:`c_\mathrm{run}` the cost of one run (benchmark minutes).

    Parameters
    ----------
    tau, sigma : float
        Between-allocation and run-to-run SDs (log scale, relative).
    startup_minutes, minutes_per_run : float
        Minutes (the price per minute cancels).

    Returns
    -------
    float
        :math:`r^*` (inf when τ = 0 or a run is free; 0 when an allocation is free).
    """
    if startup_minutes <= 0:
        return 0.0
    if tau <= 0 or minutes_per_run <= 0:
        return math.inf
    return math.sqrt(startup_minutes * sigma ** 2 / (minutes_per_run * tau ** 2))


def to_log(delta, relative: bool, baseline: float) -> np.ndarray:
    d = np.asarray(delta, float)
    if not np.all(np.isfinite(d)):
        raise InputError("Δ must be finite", field="delta")
    ratio = d / 100.0 if relative else d / baseline
    if np.any(ratio <= -1.0):
        raise InputError("Δ would make TPS <= 0", field="delta")
    return np.log1p(ratio)


def pct(x: float) -> float:
    return 100.0 * math.expm1(x)


def ladder(max_runs: int) -> list[int]:
    """Runs per arm shown in the table: the ladder up to ``max_runs``, plus ``max_runs``."""
    return sorted({n for n in LADDER if n <= max_runs} | {max_runs})


class Work:
    """Counts simulated experiments for a progress callback."""

    def __init__(self, cb: Callable[[str, int], None] | None):
        self.cb = cb
        self.stage = ""
        self.n = 0

    def __call__(self, k: int) -> None:
        self.n += k
        if self.cb is not None:
            self.cb(self.stage, k)



@dataclass
class Question:
    """The validated inputs of one plan."""

    rule: str
    level: float
    rope: Rope
    rope_log: float
    target: float
    max_runs: int
    max_cost: float | None
    designs: tuple[str, ...]
    rpi: int | None
    ppi: int | None
    cm: CostModel


def question(*, rule, rope, target, baseline_tps, max_runs, sims, runs_per_instance,
              pairs_per_instance, designs, max_cost, cm: CostModel) -> Question:
    """Step 1: validate the inputs that need no simulation (errors name plain fields)."""
    rule_name, level = parse_rule(rule)
    rp = rope if isinstance(rope, Rope) else Rope.parse(rope)
    check_assurance(target, field="target")
    if not (math.isfinite(baseline_tps) and baseline_tps > 0):
        raise InputError(f"must be > 0, got {baseline_tps!r}", field="baseline_tps")
    if int(max_runs) < 1:
        raise InputError(f"the budget must allow at least one run per arm, got {max_runs}",
                         field="max_runs")
    check_sims(int(sims), field="sims")
    if runs_per_instance is not None and runs_per_instance < 1:
        raise InputError(f"must be >= 1, got {runs_per_instance}", field="runs_per_instance")
    if pairs_per_instance is not None and pairs_per_instance < 1:
        raise InputError(f"must be >= 1, got {pairs_per_instance}", field="pairs_per_instance")
    bad = [d for d in designs if d not in DESIGNS]
    if bad or not designs:
        raise InputError(f"unknown design {bad[0] if bad else ''!r} ({', '.join(DESIGNS)})",
                         field="designs")
    if max_cost is not None:
        one = cm.cost([1])["cost_usd"]
        if not (math.isfinite(max_cost) and max_cost >= one and max_cost > 0):
            raise InputError(f"budget ${max_cost:g} is smaller than one run "
                             f"(${one:.2f}: {cm.startup_minutes:g} min start-up + "
                             f"{cm.minutes_per_run:g} min at ${cm.price_per_hour:g}/h)",
                             field="max_cost")
    return Question(rule_name, level, rp, rp.log_halfwidth(baseline_tps), float(target),
                     int(max_runs), max_cost, tuple(designs),
                     None if runs_per_instance is None else int(runs_per_instance),
                     pairs_per_instance, cm)


def check_effect(q: Question, dl: np.ndarray) -> bool:
    """Step 2: refuse an effect no decisive call of the rule can get right; return whether
    the effect is one fixed value."""
    fixed_effect = bool(np.ptp(dl) == 0)
    dmean = float(np.mean(dl))
    if q.rule == "superiority" and (dmean <= 0 if not fixed_effect else dl[0] <= 0):
        raise InputError("a one-sided (superiority) rule needs Δ > 0 (B faster than A); swap "
                         "A and B for a slowdown", field="delta")
    if q.rule == "superiority" and fixed_effect and dl[0] <= q.rope_log:
        raise InputError(f"Δ = {pct(dl[0]):.3f}% is inside the ROPE (±{pct(q.rope_log):.3f}%): "
                         "a superiority claim beyond the ROPE cannot be right", field="delta")
    if q.rule == "verdict" and fixed_effect and dl[0] == 0 and q.rope_log == 0:
        raise InputError("Δ = 0 with a zero ROPE: no decisive verdict can be right; give a ROPE "
                         "(equivalence) or a non-zero Δ", field="delta")
    if q.rule == "equivalence" and q.rope_log <= 0:
        raise InputError("the equivalence rule needs a ROPE > 0", field="rope")
    return fixed_effect


class Sizer:
    """Evaluates designs of one question (cached) and turns them into :class:`DesignRow`."""

    def __init__(self, q: Question, prior: NoisePrior, truth: Truth, seed: int,
                 existing: Existing | None, work: Work, adaptive: bool = False):
        self.q, self.prior, self.truth, self.work = q, prior, truth, work
        self.common = dict(rule=q.rule, level=q.level, seed=seed, existing=existing)
        # stop simulating a design once its rates are decided against the target and the
        # false-claim limit (models.stats.assurance.Adaptive states the tolerance)
        self.adaptive = Adaptive(goals=(q.target, _FLAT), false_claim_limit=MAX_FALSE_CLAIM,
                                 false_claim_z=FALSE_CLAIM_Z) if adaptive else None
        self.cache: dict[tuple, object] = {}
        # labels of every simulated scenario, continued rather than simulated again (the
        # full simulation of the recommended design after its adaptive prefix; the error
        # rates of a minimal design whose assurance the bisection computed alone)
        self.memo: dict = {}
        # noise known to the analysis and no runs bought yet: exact rates, no simulation
        self.exact = existing is None and known_scales(prior) is not None

    def layout(self, kind: str, n: int, rpi: int | None = None) -> Layout:
        return separate_layout(n, rpi or self.q.rpi) if kind == "separate" else \
            paired_layout(n, self.q.ppi)

    def fixed(self, kind: str, n: int, errors: bool = True, rpi: int | None = None):
        """Simulated (or, with known noise, exact) result of a fixed design (``errors``:
        also the false-claim and wrong-sign rates)."""
        r = (rpi or self.q.rpi) if kind == "separate" else None
        key = (kind, n, errors, r)
        if key in self.cache:
            return self.cache[key]
        if not errors and (kind, n, True, r) in self.cache:
            return self.cache[(kind, n, True, r)]
        self.work.stage = f"{kind} n={n}"
        lay = self.layout(kind, n, rpi)
        if self.exact:
            c = self.common
            res = evaluate_known(lay, self.prior, self.truth, self.q.rope_log, rule=c["rule"],
                                 level=c["level"], error_rates=errors)
        else:
            res = evaluate_fixed(lay, self.prior, self.truth, self.q.rope_log,
                                 error_rates=errors, progress=self.work,
                                 adaptive=self.adaptive, memo=self.memo, **self.common)
        self.cache[key] = res
        return res

    def minimal_n(self, kind: str, goal: float, lo: int, hi: int, rpi: int | None = None) -> int:
        """Smallest n in (lo, hi] with assurance >= goal, given A(lo) < goal <= A(hi)."""
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.fixed(kind, mid, False, rpi).assurance >= goal:
                hi = mid
            else:
                lo = mid
        return hi

    def _cost(self, kind: str, n: int, rpi: int | None = None) -> dict:
        return self.q.cm.cost(self.layout(kind, n, rpi).instances_per_arm())

    def _flags(self, row: DesignRow, worst_cost: float) -> DesignRow:
        q = self.q
        row.meets_target = bool(row.assurance >= q.target)
        row.false_claim_ok = false_claim_ok(row.false_claim_rate, row.false_claim_rate_se)
        row.within_budget = bool(q.max_cost is None or worst_cost <= q.max_cost + 1e-9)
        return row

    def row_fixed(self, kind: str, n: int, minimal: bool = False,
                  rpi: int | None = None) -> DesignRow:
        res, lay = self.fixed(kind, n, rpi=rpi), self.layout(kind, n, rpi)
        c = self._cost(kind, n, rpi)
        row = DesignRow(design=kind, runs_per_arm=n,
                        runs_per_instance=(rpi or self.q.rpi) if kind == "separate" else None,
                        pairs_per_instance=(self.q.ppi or n) if kind == "paired" else None,
                        instances=lay.n_instances, assurance=res.assurance,
                        assurance_se=res.assurance_se, false_claim_rate=res.false_claim_rate,
                        false_claim_rate_se=res.false_claim_se,
                        wrong_sign_rate=res.wrong_sign_rate,
                        labels=res.label_fractions, gpu_hours=c["gpu_hours"],
                        cost_usd=c["cost_usd"], allocations=c["allocations"],
                        runs_total=c["runs"], minimal=minimal)
        return self._flags(row, row.cost_usd)

    def full_row(self, row: DesignRow) -> DesignRow:
        """The fixed design of ``row`` simulated in full (all ``sims`` experiments of every
        scenario, no adaptive stopping): the numbers the recommended design is shown with."""
        kind, n = row.design, int(row.runs_per_arm)
        rpi = row.runs_per_instance if kind == "separate" else None
        saved, self.adaptive = self.adaptive, None
        try:
            self.cache.pop((kind, n, True, rpi or (self.q.rpi if kind == "separate" else None)),
                           None)
            return self.row_fixed(kind, n, minimal=row.minimal, rpi=rpi)
        finally:
            self.adaptive = saved

    def full_sequential_rows(self, base: str, batch: int, lad: list[int]) -> list[DesignRow]:
        """:meth:`sequential_rows` simulated in full (no adaptive stopping)."""
        saved, self.adaptive = self.adaptive, None
        try:
            return self.sequential_rows(base, batch, lad)
        finally:
            self.adaptive = saved

    def fixed_rows(self, kind: str, lad: list[int]) -> list[DesignRow]:
        """Step 3: the ladder of one fixed design, stopped two rungs past the target, plus
        the minimal design reaching the target (flagged ``minimal``)."""
        rows: list[DesignRow] = []
        prev, first_hit, shown_after = 0, None, 0
        for n in lad:
            rows.append(self.row_fixed(kind, n))
            if rows[-1].assurance >= self.q.target and first_hit is None:
                first_hit = (prev, n)
            prev = n
            # past the target the table only needs to show the curve flattening
            if first_hit is not None:
                shown_after += 1
                if shown_after > 2 or rows[-1].assurance >= _FLAT:
                    break
        if first_hit is not None:
            nmin = self.minimal_n(kind, self.q.target, *first_hit)
            same = [r for r in rows if r.runs_per_arm == nmin]
            if same:
                for r in same:
                    r.minimal = True
            else:
                rows.append(self.row_fixed(kind, nmin, minimal=True))
        return rows

    def sequential_rows(self, base: str, batch: int, lad: list[int]) -> list[DesignRow]:
        """Step 4: a sequential design on a fixed base; the per-look HDI masses are tried in
        order until the false-claim rate is <= 5 % (one pass over the simulated data)."""
        q = self.q
        bb = batch if base == "paired" else \
            max(q.rpi, (batch // q.rpi) * q.rpi) if batch >= q.rpi else q.rpi
        full, looks = sequential_plan(base, bb, q.max_runs, q.rpi)
        self.work.stage = f"sequential {base} b={bb}"
        srs = evaluate_sequential_levels(full, looks, self.prior, self.truth, q.rope_log,
                                         (0.95,) + STRICTER_HDI,
                                         until_false_claim=MAX_FALSE_CLAIM,
                                         until_false_claim_se=FALSE_CLAIM_Z, progress=self.work,
                                         adaptive=self.adaptive, memo=self.memo, **self.common)
        # cost of stopping at each look, then expectations over the stop distribution
        costs, hours = {}, {}
        for c in looks:
            lay = full.prefix(c)
            cc = q.cm.cost(lay.instances_per_arm())
            costs[lay.n_a], hours[lay.n_a] = cc["cost_usd"], cc["gpu_hours"]
        cap = full.n_a
        rows = []
        for sr in srs:
            runs = sr.runs_per_arm_at_stop
            row = DesignRow(design="sequential", layout=base, batch=bb,
                            runs_per_arm=sr.expected_runs_per_arm, max_runs_per_arm=cap,
                            runs_per_instance=q.rpi if base == "separate" else None,
                            pairs_per_instance=bb if base == "paired" else None,
                            instances=sr.expected_instances, assurance=sr.assurance,
                            assurance_se=sr.assurance_se,
                            false_claim_rate=sr.false_claim_rate,
                            false_claim_rate_se=sr.false_claim_se,
                            wrong_sign_rate=sr.wrong_sign_rate,
                            per_look_hdi_prob=sr.hdi_prob, futility_threshold=sr.futility,
                            looks=len(looks),
                            gpu_hours=float(np.mean([hours[int(n)] for n in runs])),
                            cost_usd=float(np.mean([costs[int(n)] for n in runs])),
                            max_gpu_hours=hours[cap], max_cost_usd=costs[cap],
                            expected_runs_per_arm=sr.expected_runs_per_arm,
                            p_stop_early=float(np.mean(runs < cap)))
            self._flags(row, costs[cap])
            # the fixed plan of the same base with the same assurance
            row.fixed_equivalent = self.fixed_equivalent(base, sr.assurance, lad)
            rows.append(row)
        return rows

    def fixed_equivalent(self, base: str, goal: float, lad: list[int]) -> dict | None:
        prev = 0
        for n in lad:
            if self.fixed(base, n, False).assurance >= goal:
                nmin = self.minimal_n(base, goal, prev, n)
                c = self._cost(base, nmin)
                return {"design": base, "runs_per_arm": nmin,
                        "assurance": self.fixed(base, nmin, False).assurance,
                        "gpu_hours": c["gpu_hours"], "cost_usd": c["cost_usd"]}
            prev = n
        return None

    def beyond_cap(self, kind: str, limit: int = _BEYOND_LIMIT) -> dict | None:
        """Step 6: the smallest fixed design beyond the cap reaching the target, by the Normal
        approximation of :func:`models.stats.assurance_known.normal_assurance` (noise known per draw),
        up to ``limit`` runs per arm: no simulation of designs of thousands of runs.

        The approximation is used for the separate layout (``kind`` paired is searched as
        separate with one run per allocation, which is what a paired design approaches when
        the instance effect cancels only partly); the result says ``method``.
        """
        q = self.q
        rpi = q.rpi if kind == "separate" else 1
        grid = np.unique(np.concatenate([
            np.arange(q.max_runs + 1, min(limit, 4 * q.max_runs) + 1),
            np.round(np.geomspace(max(4 * q.max_runs, q.max_runs + 1), limit, 400)),
            [limit]]).astype(int))
        grid = grid[grid > q.max_runs]
        method = ("Normal approximation: each draw of the noise taken as known, flat prior "
                  "on the means (models.stats.assurance_known.normal_assurance)")
        if grid.size == 0:
            return None
        k, a, se = _first_reaching(grid, q.target, lambda x: normal_assurance(
            x, rpi, self.truth, q.rope_log, rule=q.rule, level=q.level))
        if k is None:
            return {"design": kind, "runs_per_arm": None, "assurance": a,
                    "assurance_se": se, "method": method,
                    "note": f"not reached below {limit} runs per arm"}
        n = int(grid[k])
        c = self._cost(kind, n, rpi if kind == "separate" else None)
        return {"design": kind, "runs_per_arm": n, "assurance": a,
                "assurance_se": se, "gpu_hours": c["gpu_hours"],
                "cost_usd": c["cost_usd"], "method": method}

    def choose_rpi(self, lad: list[int]) -> dict:
        """Runs of one config per allocation for separate designs (``runs_per_instance``
        not given): :func:`optimal_runs_per_instance` from the noise (medians of the prior, or
        of the posterior draws with runs already bought) and the cost model, then the
        integers around it sized by assurance; the cheapest minimal design wins (ties: fewer
        runs per allocation). Returns the ``allocation`` entry of the result."""
        q = self.q
        if self.common["existing"] is None:
            tau, sig = float(self.prior.tau.median()), float(self.prior.sigma.median())
        else:
            tau, sig = float(np.median(self.truth.tau)), float(np.median(self.truth.sigma))
        cm = q.cm
        rstar = optimal_runs_per_instance(tau, sig, cm.startup_minutes, cm.minutes_per_run)
        r_hi = max(1, min(q.max_runs, math.ceil(rstar) if math.isfinite(rstar) else q.max_runs))
        r_lo = max(1, min(q.max_runs, math.floor(rstar) if math.isfinite(rstar) else q.max_runs))
        cands = sorted({r_lo, r_hi})
        results = []
        for r in cands:
            prev, found = 0, None
            for n in lad:
                if self.fixed("separate", n, False, r).assurance >= q.target:
                    found = self.minimal_n("separate", q.target, prev, n, r)
                    break
                prev = n
            if found is None:
                results.append({"runs_per_instance": r, "runs_per_arm": None, "cost_usd": None,
                                "assurance": self.fixed("separate", lad[-1], False,
                                                        r).assurance})
            else:
                results.append({"runs_per_instance": r, "runs_per_arm": found,
                                "cost_usd": self._cost("separate", found, r)["cost_usd"],
                                "assurance": self.fixed("separate", found, False, r).assurance})
        ok = [e for e in results if e["runs_per_arm"] is not None]
        if ok:
            best = min(ok, key=lambda e: (e["cost_usd"], e["runs_per_instance"]))
            why = (f"cheapest of {count(len(cands), 'candidate')}: {best['runs_per_arm']} runs per arm "
                   f"reach assurance {q.target:g} for "
                   + _cost_words(self._cost("separate", best["runs_per_arm"],
                                            best["runs_per_instance"]), cm))
        else:
            best = min(results, key=lambda e: (abs(e["runs_per_instance"] - rstar),
                                               e["runs_per_instance"]))
            why = (f"no separate design with {' or '.join(str(c) for c in cands)} runs per "
                   f"allocation reaches assurance {q.target:g} within {q.max_runs} runs per arm")
        chosen = int(best["runs_per_instance"])
        rs = "inf" if not math.isfinite(rstar) else f"{rstar:.2f}"
        text = (f"runs per allocation {chosen}: r* = sqrt(c_alloc sigma^2 / (c_run tau^2)) = "
                f"sqrt({cm.startup_minutes:g} min x ({100 * sig:.3g}%)^2 / "
                f"({cm.minutes_per_run:g} min x ({100 * tau:.3g}%)^2)) = {rs} "
                f"(Kalibera & Jones, ISMM 2013); {why}")
        return {"mode": "auto", "tau": tau, "sigma": sig,
                "startup_minutes": cm.startup_minutes, "minutes_per_run": cm.minutes_per_run,
                "r_star": None if not math.isfinite(rstar) else rstar,
                "candidates": results, "runs_per_instance": chosen, "reason": text}


def _first_reaching(grid: np.ndarray, target: float, assurance: Callable
                    ) -> tuple[int | None, float, float]:
    """The first index of ``grid`` whose assurance reaches ``target``, by bisection.

    ``assurance(n) -> (a, se)`` (arrays over the runs per arm ``n``) must be nondecreasing
    along ``grid``: :func:`models.stats.assurance_known.normal_assurance` is, draw by draw, since every
    label probability it averages grows as V = 2(τ²/m + σ²/n) shrinks (m = ⌈n/r⌉ and n
    both grow along the grid). About log2(len(grid)) + 1 values are computed instead of all
    of them (the whole ~600-point grid cost ~0.5 s of ``planner repeats``); each value is
    computed exactly as in a call on the whole grid (the same elementwise operations and a
    per-row mean over the draws), so the index, assurance and SE are those of the first
    grid point with ``a >= target`` in a full scan (``tests/planner/decide/test_repeats_speed.py``
    checks it).

    Returns
    -------
    (index or None, assurance, se)
        The first reaching index with its assurance and SE, or None with those of the
        last grid point when no point reaches ``target``.
    """
    def at(k: int) -> tuple[float, float]:
        a, se = assurance(grid[k:k + 1])
        return float(a[0]), float(se[0])

    last = at(grid.size - 1)
    if not last[0] >= target:
        return None, last[0], last[1]
    lo, hi, best = -1, grid.size - 1, last        # a(lo) < target <= a(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        v = at(mid)
        if v[0] >= target:
            hi, best = mid, v
        else:
            lo = mid
    return hi, best[0], best[1]


def _cost_words(c: dict, cm) -> str:
    """A design's cost in words: ``$1.23``, or on owned hardware (a price of $0/h) its
    GPU-hours, ``0.12 GPU-h``, as the designs table shows it (never ``$0.00`` beside non-zero
    GPU-hours). ``c`` is a ``_cost`` entry (``gpu_hours``, ``cost_usd``)."""
    if not cm.price_per_hour:
        return f"{c['gpu_hours']:.2f} GPU-h"
    return f"${c['cost_usd']:.2f}"


def recommend(rows: list[DesignRow], q: Question) -> tuple[DesignRow | None, Reason]:
    """Step 5: the cheapest design meeting the target with an acceptable false-claim rate
    within the $ cap, or the reason there is none."""
    ok = [r for r in rows if r.meets_target and r.false_claim_ok and r.within_budget]
    if ok:
        rec = min(ok, key=lambda r: (r.cost_usd, r.gpu_hours, r.runs_per_arm))
        return rec, Reason("recommended", f"cheapest design with assurance >= {q.target:g} "
                                          f"and false-claim rate <= {MAX_FALSE_CLAIM:g}")
    if not any(r.meets_target for r in rows):
        best = max(rows, key=lambda r: r.assurance) if rows else None
        return None, Reason(
            "target_unreachable",
            f"no design up to {q.max_runs} runs per arm reaches assurance {q.target:g}"
            + (f" (best {best.assurance:.3f}: {best.design}, {best.runs_per_arm:g} runs per "
               "arm)" if best else ""))
    if not any(r.meets_target and r.false_claim_ok for r in rows):
        return None, Reason("false_claims", f"designs reaching {q.target:g} have false-claim "
                                            f"rates above {MAX_FALSE_CLAIM:g}")
    return None, Reason("over_budget",
                        f"designs reaching {q.target:g} exceed the budget ${q.max_cost:g}")


