"""How many runs to buy: designs, costs and the recommendation of ``planner repeats``.

For each candidate design (runs per arm, how runs share instances, fixed or sequential) the
assurance — the probability, over the noise prior (or the posterior of runs already bought)
and over the effect, that the experiment ends with the right call under the chosen rule — is
simulated with :mod:`models.stats.assurance` (exact engine inside the loop). Each design also gets
its false-claim rate (a decisive directional call when Δ = 0), its wrong-sign rate (the call
of the planned direction when Δ has the opposite sign) and its cost (:mod:`planner.decide.costs`).
The recommendation is the cheapest design reaching the target assurance with a false-claim
rate ≤ :data:`planner.decide.defaults.MAX_FALSE_CLAIM` (5 %).

The result is a :class:`planner.results.repeat_plan.RepeatPlan` (``to_dict()``: schema
``spec-planner/repeats/1``); :func:`plan_repeats` also sizes every comparison of
``planner budget``. Errors name plain fields (``rule``, ``delta``, ``max_runs``); the command
line adds the ``--``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from models.stats.assurance import Adaptive, Truth, evaluate_fixed, prior_truth
from models.stats.assurance_known import evaluate_known, known_scales, normal_assurance
from models.stats.designs import Existing, Layout, paired_layout, separate_layout
from models.stats.sequential import evaluate_sequential_levels, sequential_plan
from models.stats.noise import NoisePrior
from planner.decide.costs import CostModel
from planner.decide.defaults import (BASELINE_TPS, DEFAULT_ASSURANCE, DEFAULT_ROPE, DEFAULT_RULE,
                              MAX_FALSE_CLAIM, check_assurance, check_sims)
from planner.errors import InputError
from planner.results.repeat_plan import SCHEMA, DesignRow, Reason, RepeatPlan
from planner.decide.verdict import Rope

__all__ = ["SCHEMA", "LADDER", "DESIGNS", "STRICTER_HDI", "FALSE_CLAIM_Z", "false_claim_ok",
           "optimal_runs_per_instance", "parse_rule", "ladder", "posterior_truth",
           "plan_repeats", "plan_more_runs"]

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
#: exceeds :data:`~planner.decide.defaults.MAX_FALSE_CLAIM` by more than this many standard errors
#: (a one-sided test at about 2.3 %; an exact rate, SE 0, is compared as it is).
FALSE_CLAIM_Z = 2.0


def false_claim_ok(rate: float | None, se: float | None) -> bool:
    """The false-claim constraint decided with its Monte-Carlo error.

    ``rate <= MAX_FALSE_CLAIM + FALSE_CLAIM_Z * se`` (5 % + 2 SE; SE 0 for an exact rate):
    a design whose true rate is 5 % passes in about 97.7 % of seeds instead of flipping with
    every seed (issue: a textbook-sized design failed in half the seeds). The price: a design
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


#: The one grammar of a decision rule (``--rule``, a plan's ``rule``), for errors.
RULE_GRAMMAR = "verdict | superiority[:LEVEL] | equivalence (no space, no empty part)"


def parse_rule(rule: str) -> tuple[str, float]:
    """``verdict`` | ``superiority[:LEVEL]`` | ``equivalence`` -> (name, level).

    One grammar (:data:`RULE_GRAMMAR`): a name, then at most one ``:`` followed by a level;
    no space, no empty part (``superiority:`` and ``superiority:0.95:`` are refused alike).

    Raises
    ------
    InputError
        A space, an empty or extra ``:`` part, an unknown rule or a level outside (0.5, 1)
        (field ``rule``).
    """
    from planner.io._parse import to_float

    s = str(rule)
    bad = next((i for i, c in enumerate(s) if c.isspace()), None)
    if bad is not None:
        raise InputError(f"rule {rule!r}: whitespace {s[bad]!r} at position {bad + 1} "
                         f"(grammar {RULE_GRAMMAR})", field="rule")
    parts = s.lower().split(":")
    if len(parts) > 2 or not all(parts):
        what = "an empty part" if len(parts) <= 2 else "more than one ':'"
        raise InputError(f"rule {rule!r}: {what} (grammar {RULE_GRAMMAR})", field="rule")
    name, lev = parts[0], (parts[1] if len(parts) == 2 else "")
    if name not in ("verdict", "superiority", "equivalence"):
        raise InputError(f"unknown rule {rule!r} (verdict, superiority:0.95, equivalence)",
                         field="rule")
    level = 0.95
    if lev:
        if name != "superiority":
            raise InputError(f"only superiority takes a level, got {rule!r}", field="rule")
        try:
            level = to_float(lev)
        except (ValueError, OverflowError):
            raise InputError(f"not a probability: {lev!r}", field="rule") from None
        if not (0.5 < level < 1.0):
            raise InputError(f"level must be in (0.5, 1), got {level:g}", field="rule")
    return name, level


def _to_log(delta, relative: bool, baseline: float) -> np.ndarray:
    d = np.asarray(delta, float)
    if not np.all(np.isfinite(d)):
        raise InputError("Δ must be finite", field="delta")
    ratio = d / 100.0 if relative else d / baseline
    if np.any(ratio <= -1.0):
        raise InputError("Δ would make TPS <= 0", field="delta")
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


def posterior_truth(post, existing: Existing, sims: int, seed: int) -> Truth:
    """Draws of (τ, σ, Δ, μ_A) from the exact posterior of runs already bought.

    Parameters
    ----------
    post : models.stats.tps_exact.GridPosterior
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



@dataclass
class _Question:
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


def _question(*, rule, rope, target, baseline_tps, max_runs, sims, runs_per_instance,
              pairs_per_instance, designs, max_cost, cm: CostModel) -> _Question:
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
    return _Question(rule_name, level, rp, rp.log_halfwidth(baseline_tps), float(target),
                     int(max_runs), max_cost, tuple(designs),
                     None if runs_per_instance is None else int(runs_per_instance),
                     pairs_per_instance, cm)


def _check_effect(q: _Question, dl: np.ndarray) -> bool:
    """Step 2: refuse an effect no decisive call of the rule can get right; return whether
    the effect is one fixed value."""
    fixed_effect = bool(np.ptp(dl) == 0)
    dmean = float(np.mean(dl))
    if q.rule == "superiority" and (dmean <= 0 if not fixed_effect else dl[0] <= 0):
        raise InputError("a one-sided (superiority) rule needs Δ > 0 (B faster than A); swap "
                         "A and B for a slowdown", field="delta")
    if q.rule == "superiority" and fixed_effect and dl[0] <= q.rope_log:
        raise InputError(f"Δ = {_pct(dl[0]):.3f}% is inside the ROPE (±{_pct(q.rope_log):.3f}%): "
                         "a superiority claim beyond the ROPE cannot be right", field="delta")
    if q.rule == "verdict" and fixed_effect and dl[0] == 0 and q.rope_log == 0:
        raise InputError("Δ = 0 with a zero ROPE: no decisive verdict can be right; give a ROPE "
                         "(equivalence) or a non-zero Δ", field="delta")
    if q.rule == "equivalence" and q.rope_log <= 0:
        raise InputError("the equivalence rule needs a ROPE > 0", field="rope")
    return fixed_effect


class _Sizer:
    """Evaluates designs of one question (cached) and turns them into :class:`DesignRow`."""

    def __init__(self, q: _Question, prior: NoisePrior, truth: Truth, seed: int,
                 existing: Existing | None, work: _Work, adaptive: bool = False):
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
        approximation of :func:`models.stats.assurance.normal_assurance` (noise known per draw),
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
                  "on the means (models.stats.assurance.normal_assurance)")
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
            why = (f"cheapest of {len(cands)} candidate(s): {best['runs_per_arm']} runs per arm "
                   f"reach assurance {q.target:g} for "
                   + _cost_words(self._cost("separate", best["runs_per_arm"],
                                            best["runs_per_instance"]), cm))
        else:
            best = min(results, key=lambda e: (abs(e["runs_per_instance"] - rstar),
                                               e["runs_per_instance"]))
            why = f"no candidate reaches assurance {q.target:g} within {q.max_runs} runs per arm"
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
    along ``grid``: :func:`models.stats.assurance.normal_assurance` is, draw by draw, since every
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


def _recommend(rows: list[DesignRow], q: _Question) -> tuple[DesignRow | None, Reason]:
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


def _inputs(q: _Question, *, delta, relative, baseline_tps, sims, seed, prior, prior_label,
            cost_source, existing, platform) -> dict:
    cm = q.cm
    cost = {"price_per_hour": cm.price_per_hour, "minutes_per_run": cm.minutes_per_run,
            "startup_minutes": cm.startup_minutes, "billed_per_minute": cm.billed_per_minute}
    if cost_source is not None:
        cost["source"] = cost_source
    out = {
        "delta": (None if delta is None else
                  (float(np.asarray(delta)) if np.ndim(delta) == 0 else
                   {"draws": int(np.size(delta)), "mean": float(np.mean(delta))})),
        "relative": relative, "baseline_tps": baseline_tps,
        "rule": q.rule, "level": q.level if q.rule == "superiority" else None,
        "rope": {"value": q.rope.value, "unit": "%" if q.rope.relative else "TPS",
                 "pct": _pct(q.rope_log), "tps": baseline_tps * math.expm1(q.rope_log),
                 "log": q.rope_log},
        "target": q.target, "max_runs": q.max_runs, "max_cost_usd": q.max_cost,
        "sims": int(sims), "seed": seed,
        "prior": {"label": prior_label or prior.name, **prior.to_dict()},
        "cost_model": cost,
        "runs_per_instance": q.rpi, "pairs_per_instance": q.ppi,
        "existing_runs": existing.n_runs if existing is not None else 0,
    }
    if platform is not None:
        out["platform"] = platform
    return out


def _effect_summary(dl: np.ndarray, fixed_effect: bool, baseline_tps: float) -> dict:
    dmean = float(np.mean(dl))
    return {"kind": "fixed" if fixed_effect else "distribution",
            "mean_pct": _pct(dmean), "mean_tps": baseline_tps * math.expm1(dmean),
            "sd_pct": 100 * float(np.std(dl)),
            "p_positive": float(np.mean(dl > 0)),
            "delta_log": dmean}


def plan_repeats(delta: float | np.ndarray | None, *, relative: bool = False,
                 baseline_tps: float = BASELINE_TPS, prior: NoisePrior,
                 rule: str = DEFAULT_RULE, rope: str | Rope = DEFAULT_ROPE,
                 target: float = DEFAULT_ASSURANCE, designs: Sequence[str] = DESIGNS,
                 max_runs: int = 40, max_cost: float | None = None,
                 price_per_hour: float = 1.0, minutes_per_run: float = 3.0,
                 startup_minutes: float = 5.0, billed_per_minute: bool = True,
                 sims: int = 2000, seed: int = 0,
                 progress: Callable[[str, int], None] | None = None,
                 runs_per_instance: int | None = 1, pairs_per_instance: int | None = None,
                 batch: int | None = None, existing: Existing | None = None,
                 truth: Truth | None = None, prior_label: str | None = None,
                 search_beyond_cap: bool = True, cost: CostModel | None = None,
                 platform: str | None = None, adaptive: bool = True) -> RepeatPlan:
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
        TPS level of A (converts TPS to the log scale; default
        :data:`planner.decide.defaults.BASELINE_TPS`, 307.08, the published N = 4 official repeats).
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
        Cost model ($/h, min, min; see :mod:`planner.decide.costs`); ignored when ``cost`` is given.
    sims : int
        Simulated experiments per design and scenario, in
        [:data:`~planner.decide.defaults.MIN_SIMS`, :data:`~planner.decide.defaults.MAX_SIMS`].
    seed : int
        Seed; the same inputs and seed give the same result.
    progress : callable(stage: str, advance: int), optional
        Called with the number of simulated experiments done.
    runs_per_instance : int or None
        Runs of one config per allocation in separate designs (1 = every run a new HF job);
        None: chosen from the noise and the cost model (``_Sizer.choose_rpi``:
        :func:`optimal_runs_per_instance`, then its neighbouring integers sized by assurance;
        the result's ``allocation`` says which and why).
    pairs_per_instance : int, optional
        A/B pairs per allocation in paired designs (None = all on one allocation).
    batch : int, optional
        Runs per arm per look of sequential designs (default: max_runs / 10, at least 1).
    existing : Existing, optional
        Runs already bought; designs are then the runs to *add* (on new instances).
    truth : Truth, optional
        Draws of (τ, σ, Δ, μ_A) to simulate from (e.g. :func:`posterior_truth`).
    prior_label : str, optional
        Name of the prior in the result (default ``prior.name``).
    search_beyond_cap : bool
        When nothing reaches the target, search fixed designs beyond ``max_runs`` (slow).
    cost : CostModel, optional
        The platform's cost model (:func:`planner.decide.costs.cost_model`); its ``source`` goes into
        ``inputs.cost_model``.
    platform : str, optional
        Platform name recorded in ``inputs.platform``.
    adaptive : bool
        Stop simulating a design's scenario once its rate is decided against ``target`` and
        the false-claim limit, on a prefix of the same ``sims`` experiments
        (:class:`models.stats.assurance.Adaptive`: decisions agree with the full simulation except
        with a probability of about 0.1 % each; a rate from k < sims experiments is within
        its reported SE of the full one, SD sqrt(p(1-p)(1/k - 1/sims))). Sequential plans
        simulate their assurance scenario (expected runs, costs) in full unless it is surely
        below the target (such a plan is never chosen); the recommended design (a sequential
        one: its base's plans) is simulated again in full, so the recommendation is shown
        with the full simulation's numbers. False: every
        scenario uses all ``sims`` experiments.

    Returns
    -------
    RepeatPlan
        ``designs`` (:class:`~planner.results.repeat_plan.DesignRow`), ``recommended`` (one of them or
        None), ``reason`` (code and text), ``beyond_cap``, ``inputs``, ``effect``, ``notes``;
        ``to_dict()`` is the JSON (schema ``spec-planner/repeats/1``).

    Raises
    ------
    InputError
        Naming the plain field (``delta``, ``rule``, ``rope``, ``target``, ``max_runs``,
        ``max_cost``, ``sims``, ``designs``, ``batch``, ...): Δ ≤ 0 with a one-sided rule,
        Δ = 0 with the verdict rule and a zero ROPE, target outside (0, 1), a budget smaller
        than one run, bad sizes.
    """
    t0 = time.perf_counter()
    cm = cost if cost is not None else CostModel(
        "custom", float(price_per_hour), float(minutes_per_run), float(startup_minutes),
        billed_per_minute)
    q = _question(rule=rule, rope=rope, target=target, baseline_tps=baseline_tps,
                  max_runs=max_runs, sims=sims, runs_per_instance=runs_per_instance,
                  pairs_per_instance=pairs_per_instance, designs=designs, max_cost=max_cost,
                  cm=cm)
    if truth is None:
        if delta is None:
            raise InputError("no effect: give delta (or the posterior of existing runs as "
                             "truth)", field="delta")
        dlog = _to_log(delta, relative, baseline_tps)
        truth = prior_truth(prior, dlog if dlog.ndim else float(dlog), int(sims),
                            np.random.default_rng([seed, 0]))
    else:
        sims = truth.size
    fixed_effect = _check_effect(q, truth.delta)

    work = _Work(progress)
    sizer = _Sizer(q, prior, truth, seed, existing, work, adaptive=adaptive)
    fixed_kinds = [k for k in ("separate", "paired") if k in q.designs]
    lad = ladder(q.max_runs)
    allocation = None
    if q.rpi is None:
        if "separate" in fixed_kinds:
            allocation = sizer.choose_rpi(lad)
            q.rpi = allocation["runs_per_instance"]
        else:
            q.rpi = 1
    rows: list[DesignRow] = []
    for kind in fixed_kinds:
        rows += sizer.fixed_rows(kind, lad)
    if allocation is not None:
        # the minimal designs of the other candidates, beside the chosen split's ladder
        for e in allocation["candidates"]:
            if e["runs_per_instance"] != q.rpi and e["runs_per_arm"] is not None:
                rows.append(sizer.row_fixed("separate", e["runs_per_arm"], minimal=True,
                                            rpi=e["runs_per_instance"]))
    if "sequential" in q.designs:
        b = int(batch) if batch else max(1, int(round(q.max_runs / 10)))
        if b > q.max_runs:
            raise InputError(f"batch {b} exceeds max_runs {q.max_runs}", field="batch")
        for base in fixed_kinds or ["separate"]:
            rows += sizer.sequential_rows(base, b, lad)

    rec, reason = _recommend(rows, q)
    if sizer.adaptive is not None and not sizer.exact:
        # the recommended fixed design is shown with its full simulation (adaptive sizes only
        # decide the others); should it then fail, the next candidate gets the same
        full_ids: set = set()
        while rec is not None and id(rec) not in full_ids:
            if rec.design == "sequential":      # its base's plans, every mass, in full
                idx = [k for k, r in enumerate(rows)
                       if r.design == "sequential" and r.layout == rec.layout]
                new = sizer.full_sequential_rows(rec.layout, int(rec.batch), lad)
                rows[idx[0]:idx[-1] + 1] = new
                full_ids.update(id(r) for r in new)
            else:
                i = next(k for k, r in enumerate(rows) if r is rec)
                rows[i] = sizer.full_row(rec)
                full_ids.add(id(rows[i]))
            rec, reason = _recommend(rows, q)
    beyond = None
    if rec is None and search_beyond_cap and fixed_kinds and \
            not any(r.meets_target for r in rows):
        beyond = sizer.beyond_cap(fixed_kinds[0])

    return RepeatPlan(
        inputs=_inputs(q, delta=delta, relative=relative, baseline_tps=baseline_tps,
                       sims=sims, seed=seed, prior=prior, prior_label=prior_label,
                       cost_source=cost.source if cost is not None else None,
                       existing=existing, platform=platform),
        effect=_effect_summary(truth.delta, fixed_effect, baseline_tps),
        designs=rows, recommended=rec, reason=reason, beyond_cap=beyond,
        notes=_notes(q.rpi, fixed_kinds, existing, allocation, sizer.exact),
        simulated_experiments=work.n, allocation=allocation,
        elapsed_s=time.perf_counter() - t0)


def _existing_note(given: str | None = None) -> str:
    """The note of a plan that adds to existing runs (``given``: the Δ that replaced the
    posterior of Δ, e.g. ``"40 TPS"``)."""
    effect = "the effect is the current posterior of Δ" if given is None else \
        (f"the effect is the given Δ = {given} (the noise comes from the posterior of the "
         "existing runs)")
    return ("designs are the runs to ADD to the existing ones (on new instances); " + effect
            + "; cold-start flags are ignored; false claim = a decisive B/A-better call the "
            "drawn true Δ contradicts (Δ = 0 is not a coherent truth once runs exist)")


#: What a paired design assumes (repeats' notes, budget's views).
PAIRED_NOTE = ("paired designs run A and B interleaved on the same allocation, so the "
               "instance effect cancels; their assurance rests on the prior of the "
               "within-allocation scale sigma (a weak one where it is not measured, as on "
               "hf-a10g-small) — and they estimate Δ on that one allocation")


def _notes(rpi: int, kinds: Sequence[str], existing: Existing | None,
           allocation: dict | None = None, exact: bool = False) -> list[str]:
    n = []
    if allocation is not None:
        n.append(allocation["reason"])
    if exact:
        n.append("noise known (both scales stated exactly): the assurance and false-claim "
                 "rates of fixed designs are exact Normal probabilities, not simulated")
    if "paired" in kinds:
        n.append(PAIRED_NOTE)
    if rpi > 1:
        n.append(f"separate designs put {rpi} runs of one config on each allocation; those "
                 "runs share the instance effect")
    if existing is not None:
        n.append(_existing_note())
    n.append("assurance averages over the noise prior: it is not frequentist power at one "
             "assumed sigma (see docs/planning.md)")
    if not exact:
        n.append(f"a simulated false-claim rate fails the {MAX_FALSE_CLAIM:g} limit only when it "
                 f"exceeds it by more than {FALSE_CLAIM_Z:g} Monte-Carlo standard errors "
                 "(false_claim_rate_se)")
    return n


def plan_more_runs(table, a: str, b: str, *, prior: NoisePrior, rope: str | Rope = DEFAULT_ROPE,
                   delta: float | None = None, relative: bool = False, sims: int = 2000,
                   seed: int = 0, lower_is_better: bool | None = None,
                   value_name: str | None = None, **kw) -> RepeatPlan:
    """How many more runs, starting from the runs already bought.

    The noise and the effect are drawn from the exact posterior of the existing runs of A and
    B (cold-start flags ignored); the simulated new runs (on new instances) are analysed
    together with the old ones. A given ``delta`` replaces the posterior of Δ by that fixed
    effect (the noise still comes from the posterior; ``effect.source`` is then ``delta``).

    Parameters
    ----------
    table : planner.io.runs.RunsTable
    a, b : str
        Config labels (Δ = B − A).
    prior : NoisePrior
        Prior of the analysis of old + new runs.
    lower_is_better : bool, optional
        The metric's direction, as in :func:`planner.decide.verdict.verdict` (default: inferred
        from the rows' metric or value column): the current verdict's label then reads
        "B faster" / "B slower" for a latency or duration, as the verdict's does, and
        ``existing`` records ``direction`` and ``metric``.
    value_name : str, optional
        Name of the value column the runs were read from (``mean_tpot_ms``): recorded as
        ``existing.metric`` when the rows carry no metric, so values show in its unit.
    **kw
        Passed to :func:`plan_repeats` (rule, target, designs, max_runs, cost model, ...).

    Returns
    -------
    RepeatPlan
        :func:`plan_repeats`'s result with ``existing`` (the current verdict); its
        ``more_runs_per_arm`` is the runs per arm to add under the recommended design.

    Raises
    ------
    InputError
        As :func:`planner.decide.verdict.build_data` and :func:`plan_repeats`.
    """
    from models.stats.tps_exact import fit_exact
    from planner.decide.verdict import _direction, build_data, label_from, shown_label

    sub = table.select([a, b])
    direction, _, dir_note = _direction(sub, lower_is_better)
    metrics = sorted({r.metric for r in sub.runs if r.metric})
    data = build_data(table, a, b, use_cold=False,
                      lower_is_better=direction == "lower_is_better")
    post = fit_exact(data, prior)
    existing = Existing.from_tpsdata(data)
    level = post.level(0)
    rp = rope if isinstance(rope, Rope) else Rope.parse(rope)
    rope_log = rp.log_halfwidth(level)
    d = post.delta(0, 1, rope_log)
    truth = posterior_truth(post, existing, int(sims), seed)
    if delta is not None:
        truth = truth.with_delta(float(_to_log(delta, relative, level)))
    kw.setdefault("adaptive", False)   # the verdict's advice: every design in full
    res = plan_repeats(None, relative=relative, baseline_tps=level, prior=prior, rope=rp,
                       sims=sims, seed=seed, existing=existing, truth=truth, **kw)
    n_a = int(np.sum(data.config == 0))
    res.existing = {"a": a, "b": b, "n_a": n_a, "n_b": int(data.n_runs - n_a),
                    "level_tps_a": level, "label": shown_label(label_from(d), direction),
                    "direction": direction,
                    # the rows' metric, else the value column's name (its unit: ms, s, TPS),
                    # as the verdict names it
                    "metric": metrics[0] if len(metrics) == 1 else (value_name or None),
                    "delta_pct": {"mean": _pct(d.mean), "hdi_low": _pct(d.hdi_low),
                                  "hdi_high": _pct(d.hdi_high)},
                    "p_b_gt_a": d.p_gt0}
    res.inputs["delta"] = delta
    if delta is not None:
        given = f"{delta:g}" + ("%" if relative else " TPS")
        res.notes = [_existing_note(given) if n == _existing_note() else n for n in res.notes]
        res.effect["source"] = "delta"
    if dir_note:
        res.notes.insert(0, dir_note)
    if res.existing["label"] != "undecided":
        res.notes.insert(0, f"the runs already bought give '{res.existing['label']}': no "
                            "more runs are needed for that call; the table shows how likely "
                            "it is to survive (assurance) if you add runs")
    return res
