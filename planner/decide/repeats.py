"""How many runs to buy: designs, costs and the recommendation of ``planner repeats``.

For each candidate design (runs per arm, how runs share instances, fixed or sequential) the
assurance — the probability, over the noise prior (or the posterior of runs already bought)
and over the effect, that the experiment ends with the right call under the chosen rule — is
simulated with :mod:`models.stats.assurance` (exact engine inside the loop). Each design also gets
its false-claim rate (a decisive directional call when Δ = 0), its wrong-sign rate (the call
of the planned direction when Δ has the opposite sign) and its cost (:mod:`planner.decide.costs`).
The recommendation is the cheapest design reaching the target assurance with a false-claim
rate ≤ :data:`planner.defaults.MAX_FALSE_CLAIM` (5 %).

The result is a :class:`planner.results.repeat_plan.RepeatPlan` (``to_dict()``: schema
``spec-planner/repeats/1``); :func:`plan_repeats` also sizes every comparison of
``planner budget``. The design table itself is built by :mod:`planner.decide.sizing`;
runs already bought are read by :mod:`planner.decide.comparison`, as the verdict reads them.
Errors name plain fields (``rule``, ``delta``, ``max_runs``); the command
line adds the ``--``.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Sequence

import numpy as np

from models.stats.assurance import Truth, prior_truth
from models.stats.designs import Existing, units
from models.stats.noise import NoisePrior
from planner.results.counts import count
from planner.decide.costs import CostModel
from planner.defaults import (BASELINE_TPS, DEFAULT_ASSURANCE, DEFAULT_ROPE, DEFAULT_RULE,
                                     MAX_FALSE_CLAIM)
from planner.decide.rope import Rope
from planner.decide.sizing import (DESIGNS, FALSE_CLAIM_Z, Question, Sizer, Work, check_effect,
                                   ladder, pct, question, recommend, to_log)
from planner.errors import InputError
from planner.results.repeat_plan import PAIRED_NOTE, SCHEMA, DesignRow, RepeatPlan

__all__ = ["SCHEMA", "DESIGNS", "posterior_truth", "plan_repeats",
           "plan_more_runs", "plan_from", "plan_platform", "reanalysis_runs"]


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
    (μ_A, μ_B) | τ, σ is the conditional Normal of the grid point. With sessions modelled
    the τ drawn is sqrt(tau^2 + omega^2) of the point: each new instance is a new
    server session (:func:`models.stats.designs.units` reads the old sessions alike).
    """
    rng = np.random.default_rng([seed, 0])
    g = rng.choice(post.w.size, size=sims, p=post.w / post.w.sum())
    ut, us = np.unique(post.tau), np.unique(post.sigma)
    ht = 0.5 * math.log(ut[1] / ut[0]) if ut.size > 1 else 0.0
    hs = 0.5 * math.log(us[1] / us[0]) if us.size > 1 else 0.0
    tau = post.tau[g] * np.exp(rng.uniform(-ht, ht, sims))
    if getattr(post, "omega", None) is not None:
        # a new instance is a new server session too: its offset adds the session SD
        tau = np.hypot(tau, post.omega[g])
    sig = post.sigma[g] * np.exp(rng.uniform(-hs, hs, sims))
    L = np.linalg.cholesky(post.cov[g][:, :2, :2])
    beta = post.mean[g][:, :2] + np.einsum("dpq,dq->dp", L, rng.standard_normal((sims, 2)))
    return Truth(tau, sig, beta[:, 1] - beta[:, 0], beta[:, 0] - existing.centre)




def _inputs(q: Question, *, delta, relative, baseline_tps, sims, seed, prior, prior_label,
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
                 "pct": pct(q.rope_log), "tps": baseline_tps * math.expm1(q.rope_log),
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
            "mean_pct": pct(dmean), "mean_tps": baseline_tps * math.expm1(dmean),
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
        :data:`planner.defaults.BASELINE_TPS`, 307.08, the published N = 4 official repeats).
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
        [:data:`~planner.defaults.MIN_SIMS`, :data:`~planner.defaults.MAX_SIMS`].
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
    q = question(rule=rule, rope=rope, target=target, baseline_tps=baseline_tps,
                  max_runs=max_runs, sims=sims, runs_per_instance=runs_per_instance,
                  pairs_per_instance=pairs_per_instance, designs=designs, max_cost=max_cost,
                  cm=cm)
    if truth is None:
        if delta is None:
            raise InputError("no effect: give delta (or the posterior of existing runs as "
                             "truth)", field="delta")
        dlog = to_log(delta, relative, baseline_tps)
        truth = prior_truth(prior, dlog if dlog.ndim else float(dlog), int(sims),
                            np.random.default_rng([seed, 0]))
    else:
        sims = truth.size
    fixed_effect = check_effect(q, truth.delta)

    work = Work(progress)
    sizer = Sizer(q, prior, truth, seed, existing, work, adaptive=adaptive)
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

    rec, reason = recommend(rows, q)
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
            rec, reason = recommend(rows, q)
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
            + "; the noise and the effect are the verdict's posterior (cold first runs "
            "modelled, each instance or session its own slowdown); "
            "false claim = a decisive B/A-better call the "
            "drawn true Δ contradicts (Δ = 0 is not a coherent truth once runs exist)")




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




def plan_platform(platform: str | None, table=None, a: str | None = None, b: str | None = None,
                  selection=None, *, prior_given: bool = False, stated: bool = False
                  ) -> tuple[str, str | None]:
    """The platform of a plan: (the platform whose cost model prices it, the platform of the
    rows and of the noise prior, None when unknown).

    Runs without a platform (no column, or what ``planner ingest`` writes from tools' files)
    take ``platform``; without it, and none in A's and B's rows, the unknown-platform prior
    and the default cost model (:data:`planner.defaults.DEFAULT_PLATFORM`), as the
    verdict reads them. Letter case and aliases are folded (a flavor's platform name too).

    Raises
    ------
    InputError
        An unknown platform, or a known one without a noise prior when no prior and no noise
        are given (field ``platform``).
    """
    from planner.decide.costs import PLATFORM_FLAVOR
    from planner.io.platforms import PLATFORM_ALIASES, known_platforms, platform_key
    from planner.defaults import DEFAULT_PLATFORM

    unknown = False
    if platform is None and table is not None:
        sel = selection
        rows = table.filter(metric=getattr(sel, "metric", None),
                            workload=getattr(sel, "workload", None),
                            run_group=getattr(sel, "run_group", None))
        platform = rows.select([a, b]).platform() or None
        unknown = platform is None
    platform = platform or DEFAULT_PLATFORM
    low = platform.strip().lower()
    platform = platform_key(platform) or (low if low in PLATFORM_FLAVOR else platform)
    if not unknown and platform not in PLATFORM_ALIASES and platform not in PLATFORM_FLAVOR:
        raise InputError(f"unknown platform {platform!r} (known: "
                         f"{', '.join(known_platforms())})", field="platform")
    if not unknown and platform not in PLATFORM_ALIASES and not prior_given and not stated:
        raise InputError(f"platform {platform!r} has no noise prior: give a prior (a "
                         "platform or a calibrate file) or a CV", field="platform")
    return platform, (None if unknown else platform)


def plan_more_runs(table, a: str, b: str, *, prior: NoisePrior, rope: str | Rope = DEFAULT_ROPE,
                   delta: float | None = None, relative: bool = False, sims: int = 2000,
                   seed: int = 0, lower_is_better: bool | None = None,
                   value_name: str | None = None, use_cold: bool | None = None,
                   **kw) -> RepeatPlan:
    """How many more runs, starting from the runs already bought in ``table``.

    The comparison of ``a`` and ``b`` in ``table`` as given (no platform reading, the prior
    as given): :func:`plan_from` of :class:`planner.decide.comparison.Comparison`.

    Parameters
    ----------
    table : planner.io.runs.RunsTable
    a, b : str
        Config labels (Δ = B − A).
    prior : NoisePrior
        Prior of the analysis of old + new runs.
    lower_is_better, value_name, use_cold
        As :class:`planner.decide.comparison.Comparison`.
    rope, delta, relative, sims, seed, **kw
        As :func:`plan_from`.

    Raises
    ------
    InputError
        As :func:`planner.decide.comparison.build_data` and :func:`plan_repeats`.
    """
    from planner.decide.comparison import Comparison

    comp = Comparison(table.select([a, b]), a, b, prior=prior,
                      prior_label=kw.pop("prior_label", None) or prior.name,
                      use_cold=use_cold, lower_is_better=lower_is_better, value_name=value_name)
    return plan_from(comp, rope=rope, delta=delta, relative=relative, sims=sims, seed=seed,
                     **kw)


def reanalysis_runs(warm_data, data, post) -> tuple[Existing, str | None]:
    """The runs already bought as the simulated re-analysis reads them (it has no cold
    column): every warm run; a cold run only when its config has no warm run, then its
    value corrected by the posterior mean of its group's slowdown.

    Parameters
    ----------
    warm_data : TPSData
        The runs without the cold column (``comp.data(False)``).
    data : TPSData
        The same runs as the verdict fits them (their cold flags and groups).
    post : models.stats.tps_exact.GridPosterior
        The verdict's exact fit of ``data``.

    Returns
    -------
    (Existing, str or None)
        The runs and, when cold runs were left out or corrected, a note saying so.
    """
    if not data.use_cold:
        return Existing.from_tpsdata(warm_data), None
    cold = np.asarray(data.cold, bool)
    y = warm_data.y.copy()
    keep = ~cold
    fixed = []
    for k in range(2):
        mine = warm_data.config == k
        if mine.any() and not (mine & ~cold).any():       # only cold runs: corrected
            beta = np.sum(post.w[:, None] * post.mean[:, data.n_configs:], axis=0)   # (J,)
            X = data.design_matrix()[:, data.n_configs:]
            y[mine] -= X[mine] @ beta
            keep |= mine
            fixed.append(warm_data.config_names[k])
    X2 = np.zeros((int(keep.sum()), 2))
    X2[np.arange(X2.shape[0]), warm_data.config[keep]] = 1.0
    _, inst = np.unique(units(warm_data)[keep], return_inverse=True)
    c = float(np.mean(y[keep]))
    ex = Existing(X2, inst.ravel().astype(int), y[keep] - c, c)
    left = int((cold & ~np.isin(warm_data.config, [warm_data.config_names.index(f)
                                                  for f in fixed])).sum())
    parts = []
    if left:
        parts.append(f"{count(left, 'cold first run')} left out (their configs' warm runs carry "
                     "the level)")
    if fixed:
        parts.append(f"the cold runs of {', '.join(fixed)} (no warm run) read at their "
                     "posterior warm level")
    return ex, ("the simulated re-analysis of old + new runs: " + "; ".join(parts)
                + "; the noise and the effect are still the cold-aware posterior")


def plan_from(comp, *, rope: str | Rope = DEFAULT_ROPE, delta: float | None = None,
              relative: bool = False, sims: int = 2000, seed: int = 0, post=None,
              **kw) -> RepeatPlan:
    """How many more runs to add to the runs of a comparison (``planner repeats --runs`` and
    the verdict's "to settle" advice).

    The noise and the effect are drawn from the exact posterior of the existing runs of A and
    B, fitted as the verdict fits them (the same data, cold flags included:
    :meth:`planner.decide.comparison.Comparison.data`); the simulated new runs (on new
    instances) are analysed together with the old ones, read without cold flags
    (:class:`models.stats.designs.Existing` has no cold column). A given ``delta`` replaces
    the posterior of Δ by that fixed effect (the noise still comes from the posterior;
    ``effect.source`` is then ``delta``).

    Parameters
    ----------
    comp : planner.decide.comparison.Comparison
        The runs and their noise prior (which must not be None).
    rope : str or Rope
    delta : float, optional
        A fixed effect (TPS at A's level, or % with ``relative``).
    sims, seed : int
    post : models.stats.tps_exact.GridPosterior, optional
        The exact fit of ``comp.data()`` under ``comp.prior`` when the caller has it (the
        verdict's own fit): it is used instead of fitting the same runs again.
    **kw
        Passed to :func:`plan_repeats` (rule, target, designs, max_runs, cost model, ...).

    Returns
    -------
    RepeatPlan
        :func:`plan_repeats`'s result with ``existing`` (the current verdict: label, Δ and its
        HDI) and ``runs`` (:func:`planner.decide.comparison.runs_listing`); its
        ``more_runs_per_arm`` is the runs per arm to add under the recommended design.

    Raises
    ------
    InputError
        As :func:`planner.decide.comparison.build_data` and :func:`plan_repeats`.
    """
    from models.stats.decision import label_from
    from models.stats.tps_exact import fit_exact
    from planner.decide.comparison import runs_listing
    from planner.decide.direction import shown_label

    prior = comp.prior
    direction, _, dir_note = comp.direction()
    data = comp.data()
    post = fit_exact(data, prior) if post is None else post
    # the re-analysis of old + new runs has no cold column (models.stats.designs.Existing):
    # it reads the old warm runs, and a config's cold runs only where it has no warm one
    existing, reread = reanalysis_runs(comp.data(False), data, post)
    level = post.level(0)
    rp = rope if isinstance(rope, Rope) else Rope.parse(rope)
    rope_log = rp.log_halfwidth(level)
    d = post.delta(0, 1, rope_log)
    truth = posterior_truth(post, existing, int(sims), seed)
    if delta is not None:
        truth = truth.with_delta(float(to_log(delta, relative, level)))
    kw.setdefault("adaptive", False)   # the verdict's advice: every design in full
    unpaired = None
    if comp.arm_sessions:
        # A's and B's runs in sessions of their own: the offset between server sessions is
        # not cancelled by a pair (two sessions) (planner.decide.settle.settle_designs);
        # pairs are planned as separate runs
        if "paired" in tuple(kw.get("designs", ("paired",))):
            kept = tuple(d for d in kw.get("designs", DESIGNS) if d != "paired")
            kw["designs"] = kept if any(d in kept for d in ("separate",)) else \
                ("separate",) + kept
        unpaired = ("no paired design: each arm's runs are read as one session on a machine of "
                    "its own, so the offset between A's and B's sessions does not cancel in a "
                    "pair of new runs (each config its own server session); name the machines "
                    "(an instance and session column) to plan pairs") if comp.sessions else (
            "no paired design: A's and B's runs are in server sessions of their own, so a "
            "pair of new runs (two more sessions) does not cancel the offset between sessions; "
            "the new runs are planned on new instances, each its own session")
    kw.setdefault("prior_label", comp.prior_label)
    res = plan_repeats(None, relative=relative, baseline_tps=level, prior=prior, rope=rp,
                       sims=sims, seed=seed, existing=existing, truth=truth, **kw)
    n_a = int(np.sum(data.config == 0))
    res.existing = {"a": comp.a, "b": comp.b, "n_a": n_a, "n_b": int(data.n_runs - n_a),
                    "level_tps_a": level, "label": shown_label(label_from(d), direction),
                    "direction": direction,
                    # the rows' metric, else the value column's name (its unit: ms, s, TPS),
                    # as the verdict names it
                    "metric": comp.metric(),
                    "delta_pct": {"mean": pct(d.mean), "hdi_low": pct(d.hdi_low),
                                  "hdi_high": pct(d.hdi_high)},
                    "p_b_gt_a": d.p_gt0}
    res.runs, res.runs_truncated, run_notes = runs_listing(comp, data)
    res.inputs["delta"] = delta
    res.inputs["existing_runs"] = int(data.n_runs)
    if reread:
        res.notes.append(reread)
    if unpaired:
        res.notes.append(unpaired)
    from planner.decide.comparison import grouping

    res.existing["grouping"] = grouping(comp, data)
    from planner.decide.advice import session_advice

    adv = session_advice(post, data) if res.existing["label"] == "undecided" else None
    if adv:
        res.notes.append(adv)
    if delta is not None:
        given = f"{delta:g}" + ("%" if relative else " TPS")
        res.notes = [_existing_note(given) if n == _existing_note() else n for n in res.notes]
        res.effect["source"] = "delta"
    res.notes += run_notes
    if dir_note:
        res.notes.insert(0, dir_note)
    if res.existing["label"] != "undecided":
        res.notes.insert(0, f"the runs already bought give '{res.existing['label']}': no "
                            "more runs are needed for that call; the table shows how likely "
                            "it is to survive (assurance) if you add runs")
    if comp.sessions:
        from planner.decide.comparison import SESSION_NOTE

        res.notes.insert(0, SESSION_NOTE)
    return res
