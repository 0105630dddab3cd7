"""What to buy next for an A/B comparison: each purchase's cost to a decision and P(decided).

The actions, for the platform of the runs:

* **stop** now: the current verdict (the label ``planner verdict`` gives), cost 0;
* **one more run of A** (or **of B**) **on the same allocation** as that config's last run,
  where runs share allocations (a named instance, and a platform whose runs are not each a
  fresh job): preposterior simulation under the current exact posterior
  (:func:`one_more_run`);
* **a new allocation per run** (``separate``, n runs per arm) and **a paired block** (n A/B
  pairs on one new allocation): the rows of :func:`planner.decide.repeats.plan_from`, the same
  call, data, seed and settings as the verdict's "to settle" advice
  (:func:`planner.decide.settle.to_settle`), so ``planner next`` and ``planner repeats
  --runs FILE --a A --b B --sims 200 --max-runs 100 --design separate,paired`` give the same
  recommendation (one sizing rule; nothing here sizes designs).

P(decided) after an action is the share of simulated outcomes with a decisive label (``B
better``, ``A better``, ``equivalent``). The expected cost to a decision of an action of cost
c is ``c + (1 - P(decided)) * C``, C the cost of the plan's recommended design (what you
would buy next if it leaves the verdict open); without a recommendation (nothing reaches the
target within the cap) C is ``c / P(decided)`` (the action bought again until it decides).
Costs are dollars on a priced platform, GPU-hours on owned hardware (price 0). Actions are
listed cheapest expected cost first.
"""

from __future__ import annotations

import math
import time

import numpy as np

from models.stats.decision import label_from
from models.stats.noise import WEAK
from models.stats.tps_model import pct
from planner.decide.rope import Rope
from planner.defaults import DEFAULT_ASSURANCE, DEFAULT_PLATFORM, DEFAULT_ROPE
from planner.errors import InputError
from planner.results.counts import count
from planner.results.rank import NextAdvice, describe_action

__all__ = ["NEXT_SIMS", "NEXT_MAX_RUNS", "FRESH_JOB_PLATFORMS", "one_more_run", "advise",
           "same_allocation_allowed"]

#: Simulated outcomes per action and the cap on runs per arm: the verdict's "to settle"
#: settings (:data:`planner.decide.settle.SETTLE_SIMS`, ``SETTLE_MAX_RUNS``), so the designs
#: are exactly its (and ``repeats --runs --sims 200 --max-runs 100``'s).
NEXT_SIMS = 200
NEXT_MAX_RUNS = 100
#: Platforms whose every run is a fresh allocation (an HF job): no "same allocation" action.
FRESH_JOB_PLATFORMS = ("hf-a10g-small", "published-n4")
#: Posterior mass of the lightest grid components dropped before the preposterior loop
#: (every simulated probability moves by less than this; the Monte-Carlo SE of a P(decided)
#: from 200 outcomes is up to 0.035).
_DROP_MASS = 1e-4


def same_allocation_allowed(comp) -> bool:
    """Whether one more run can join an allocation already used: the runs name their
    instance and the platform does not start a fresh job per run."""
    from planner.io.platforms import platform_key

    if comp.sessions:
        return False
    key = platform_key(comp.platform) if comp.platform else None
    if (key or comp.platform) in FRESH_JOB_PLATFORMS:
        return False
    return any(r.instance for r in comp.table.runs)


def _keep(w: np.ndarray) -> np.ndarray:
    order = np.argsort(w)[::-1]
    c = np.cumsum(w[order])
    k = int(np.searchsorted(c, (1.0 - _DROP_MASS) * c[-1])) + 1
    return np.sort(order[:k])


def one_more_run(post, data, k: int, rope_log: float, *, sims: int, seed: int,
                 hdi_prob: float = 0.95) -> dict:
    """Preposterior of one more warm run of config ``k`` on the instance of its last run.

    Each simulated outcome draws a grid point by weight and the new run's log value from the
    exact predictive there (:meth:`models.stats.tps_exact.GridPosterior.predictive` on that
    instance: the instance effect conditioned on its runs); the posterior of Δ = μ_1 − μ_0 is
    then updated in closed form at every grid point (conjugate Normal update of the fixed
    effects, grid weights times the predictive density) and read by the verdict's rule with
    the equal-tailed ``hdi_prob`` interval in place of the HDI (the same for a symmetric
    posterior; the CDF costs one pass over the grid per outcome).

    Parameters
    ----------
    post : models.stats.tps_exact.GridPosterior
        Exact fit of the runs (configs 0 = A, 1 = B).
    data : models.stats.tps_model.TPSData
        Its data (the instance of config ``k``'s last run).
    k : int
        0 (A) or 1 (B).
    rope_log : float
        ROPE half-width, log scale.
    sims, seed : int

    Returns
    -------
    dict
        ``p_decided`` and ``labels`` (share of each label), over ``sims`` outcomes.
    """
    from scipy.special import ndtr  # the CDF over outcomes x grid points: SciPy's ufunc

    rng = np.random.default_rng([int(seed), 23, int(k)])
    inst = int(data.instance[data.config == k][-1])
    m, v = post.predictive(k, new_instance=False, instance=inst)
    p = post.mean.shape[-1]
    e = np.zeros(p)
    e[k] = 1.0
    if post.omega is None:
        st = post.stats
        t2, s2 = post.tau**2, post.sigma**2
        g = t2 / (s2 + st.n_i[inst] * t2)
        c = e[None, :] - g[:, None] * st.x_i[inst][None, :]          # (G, p)
    else:
        c = np.broadcast_to(e, (post.w.size, p))
    keep = _keep(post.w)
    w = post.w[keep] / post.w[keep].sum()
    m, v, c = m[keep], v[keep], c[keep]
    cov = post.cov[keep]
    cd = np.zeros(p)
    cd[1], cd[0] = 1.0, -1.0
    md = post.mean[keep] @ cd
    vd = np.einsum("p,gpq,q->g", cd, cov, cd)
    kd = np.einsum("p,gpq,gq->g", cd, cov, c)                        # Cov(Δ, y_new | g)
    gs = rng.choice(w.size, size=int(sims), p=w)
    y = m[gs] + np.sqrt(v[gs]) * rng.standard_normal(int(sims))      # (S,)
    r = (y[:, None] - m[None, :])                                    # (S, G)
    lw = np.log(w)[None, :] - 0.5 * r * r / v[None, :] - 0.5 * np.log(v)[None, :]
    lw -= lw.max(axis=1, keepdims=True)
    wn = np.exp(lw)
    wn /= wn.sum(axis=1, keepdims=True)
    mdn = md[None, :] + kd[None, :] * r / v[None, :]
    sdn = np.sqrt(np.maximum(vd - kd * kd / v, 1e-300))[None, :]
    tail = 0.5 * (1.0 - hdi_prob)

    def cdf(x):
        return np.sum(wn * ndtr((x - mdn) / sdn), axis=1)

    f_hi, f_lo = cdf(rope_log), cdf(-rope_log)
    b_better = f_hi < tail                 # the interval's lower end above +ROPE
    a_better = f_lo > 1.0 - tail           # its upper end below -ROPE
    equiv = (rope_log > 0) & (f_lo < tail) & (f_hi > 1.0 - tail)
    n = float(sims)
    labels = {"undecided": float(np.sum(~(b_better | a_better | equiv)) / n),
              "B better": float(np.sum(b_better) / n), "A better": float(np.sum(a_better) / n),
              "equivalent": float(np.sum(equiv & ~b_better & ~a_better) / n)}
    return {"p_decided": 1.0 - labels["undecided"], "labels": labels}


def _price(cm, gpu_hours: float, usd: float) -> float:
    """The cost an action is ranked by: $ on a priced platform, else GPU-hours."""
    return usd if cm.price_per_hour > 0 else gpu_hours


def advise(comp, *, rope: Rope | str = DEFAULT_ROPE, sims: int = NEXT_SIMS, seed: int = 0,
           max_runs: int = NEXT_MAX_RUNS, designs: tuple | None = None,
           target: float = DEFAULT_ASSURANCE, cost=None, hdi_prob: float = 0.95
           ) -> NextAdvice:
    """The value of the next purchase for the comparison ``comp`` (schema
    ``spec-planner/next/1``).

    Parameters
    ----------
    comp : planner.decide.comparison.Comparison
        The runs of A and B and their noise prior (the weak prior when None).
    rope : Rope or str
    sims, seed : int
        Simulated outcomes per action and the seed (the same seed gives the same advice).
    max_runs : int
        Cap on runs per arm of the designs (``repeats --max-runs``).
    designs : tuple of str, optional
        Designs of the plan (default :func:`planner.decide.settle.settle_designs`).
    target : float
        Assurance the plan's recommendation reaches.
    cost : planner.decide.costs.CostModel, optional
        Default: the platform's (the default platform's when it has none).

    Returns
    -------
    NextAdvice

    Raises
    ------
    InputError
        As :func:`planner.decide.repeats.plan_from`; a comparison whose noise no prior and
        no data give.
    """
    from dataclasses import replace

    from models.stats.tps_exact import fit_exact
    from planner.decide.comparison import check_identifiable
    from planner.decide.costs import cost_model
    from planner.decide.direction import shown_label
    from planner.decide.repeats import plan_from
    from planner.decide.settle import settle_designs

    t0 = time.perf_counter()
    rp = Rope.parse(rope) if not isinstance(rope, Rope) else rope
    if comp.prior is None:
        check_identifiable(comp.data(), WEAK, False, comp.table.path)
        comp = replace(comp, prior=WEAK, _data=comp._data)
    notes = list(comp.notes)
    if cost is None:
        try:
            cost = cost_model(comp.platform or DEFAULT_PLATFORM)
        except InputError:
            cost = cost_model(DEFAULT_PLATFORM)
            notes.append(f"no cost model for {comp.platform}: priced as {cost.flavor}")
    direction, _, dir_note = comp.direction()
    if dir_note:
        notes.append(dir_note)
    data = comp.data()
    post = fit_exact(data, comp.prior)
    level = post.level(0)
    rope_log = rp.log_halfwidth(level)
    d = post.delta(0, 1, rope_log, hdi_prob)
    rule = label_from(d)
    current = {"label": shown_label(rule, direction), "rule_label": rule,
               "decided": rule != "undecided",
               "delta_pct": {"mean": pct(d.mean), "hdi_low": pct(d.hdi_low),
                             "hdi_high": pct(d.hdi_high)},
               "p_b_gt_a": d.p_gt0, "n_a": int(np.sum(data.config == 0)),
               "n_b": int(np.sum(data.config == 1))}
    designs = settle_designs(comp) if designs is None else tuple(designs)
    plan = plan_from(comp, rope=rp, sims=int(sims), seed=seed, designs=designs,
                     max_runs=int(max_runs), target=target, cost=cost,
                     search_beyond_cap=False).to_dict()
    rec = plan["recommended"]
    unit = "usd" if cost.price_per_hour > 0 else "gpu_hours"
    follow = None if rec is None else _price(cost, rec["gpu_hours"], rec["cost_usd"])

    def expected(c: float, p_dec: float) -> float | None:
        if p_dec >= 1.0:
            return c
        if follow is not None:
            return c + (1.0 - p_dec) * follow
        return c / p_dec if p_dec > 0 else None

    actions = [{"action": "stop", "config": None, "runs_per_arm": 0, "runs": 0,
                "cost_usd": 0.0, "gpu_hours": 0.0,
                "p_decided": 1.0 if current["decided"] else 0.0, "p_right": None,
                "expected_cost": 0.0 if current["decided"] else None,
                "source": "current", "label": current["label"]}]
    if not current["decided"] and same_allocation_allowed(comp):
        mins = cost.minutes_per_run
        billed = math.ceil(mins - 1e-9) if cost.billed_per_minute else mins
        usd, gh = billed * cost.price_per_hour / 60.0, mins / 60.0
        for k, name in ((0, comp.a), (1, comp.b)):
            one = one_more_run(post, data, k, rope_log, sims=int(sims), seed=seed,
                               hdi_prob=hdi_prob)
            actions.append({"action": "one_more_a" if k == 0 else "one_more_b",
                            "config": name, "runs_per_arm": None, "runs": 1,
                            "cost_usd": usd, "gpu_hours": gh, "p_decided": one["p_decided"],
                            "p_right": None,
                            "expected_cost": expected(_price(cost, gh, usd), one["p_decided"]),
                            "source": "preposterior", "labels": one["labels"]})
    if not current["decided"]:
        for row in plan["designs"]:
            if row["design"] not in ("separate", "paired"):
                continue
            labels = row.get("labels") or {}
            p_dec = 1.0 - float(labels.get("undecided", 1.0))
            c = _price(cost, row["gpu_hours"], row["cost_usd"])
            actions.append({"action": row["design"], "config": None,
                            "runs_per_arm": row["runs_per_arm"],
                            "runs": row.get("runs_total") or 2 * row["runs_per_arm"],
                            "instances": row["instances"],
                            "cost_usd": row["cost_usd"], "gpu_hours": row["gpu_hours"],
                            "p_decided": p_dec, "p_right": row["assurance"],
                            "expected_cost": expected(c, p_dec), "source": "repeats",
                            "labels": labels,
                            "recommended_by_repeats": rec is not None and
                            row["design"] == rec["design"] and
                            row["runs_per_arm"] == rec["runs_per_arm"]})

    def key(a):
        e = a["expected_cost"]
        return (e is None, e if e is not None else 0.0, -a["p_decided"], a["runs"])

    actions.sort(key=key)
    first = actions[0] if actions and actions[0]["expected_cost"] is not None else None
    repeats = None if rec is None else {k: rec[k] for k in (
        "design", "runs_per_arm", "instances", "assurance", "cost_usd", "gpu_hours")}
    if rec is None and not current["decided"]:
        notes.append(f"no design of up to {max_runs} runs per arm reaches assurance "
                     f"{target:g}: planner repeats recommends none")
    return NextAdvice(
        a=comp.a, b=comp.b, actions=actions, current=current, recommended=first,
        repeats=repeats, sims=int(sims), seed=int(seed), platform=comp.platform,
        cost_model={**cost.to_dict(), "unit": unit},
        rope={"value": rp.value, "unit": "%" if rp.relative else "TPS", "pct": pct(rope_log)},
        notes=notes, elapsed_s=time.perf_counter() - t0)


#: Exit codes of the watch loop: decided; the budget spent undecided; the timeout reached.
WATCH_DECIDED, WATCH_BUDGET, WATCH_TIMEOUT = 0, 3, 4


def _run_key(r) -> tuple:
    return (r.config, r.instance, r.session, r.rep, r.tps, r.timestamp,
            str((r.extra or {}).get("source", "")))


def spent(new_runs, seen_instances: set, cost) -> tuple[int, float, float]:
    """(runs, $, GPU-hours) of runs bought since the watch began: a run on an instance not
    seen before opens an allocation (start-up plus its runs), one on a known instance costs
    its own minutes (:meth:`planner.decide.costs.CostModel.cost`)."""
    per_new: dict = {}
    old = 0
    for r in new_runs:
        if r.instance and r.instance in seen_instances:
            old += 1
        else:
            key = r.instance or id(r)
            per_new[key] = per_new.get(key, 0) + 1
    c = cost.cost(list(per_new.values())) if per_new else {"cost_usd": 0.0, "gpu_hours": 0.0}
    mins = old * cost.minutes_per_run
    billed = math.ceil(mins - 1e-9) if cost.billed_per_minute else mins
    return (len(new_runs), c["cost_usd"] + billed * cost.price_per_hour / 60.0,
            c["gpu_hours"] + mins / 60.0)


def watch(read, evaluate, *, a: str, b: str, interval: float, timeout: float | None,
          max_runs: int | None, max_usd: float | None, cost, out=print, clock=time.monotonic,
          sleep=time.sleep) -> int:
    """Re-evaluate a comparison as runs land, until it is decided or the budget is spent.

    Parameters
    ----------
    read : callable() -> list of Run
        Every run so far (the harness folder read again, the runs table prepended); an
        :class:`~planner.errors.InputError` (a file still being written) is retried at the
        next poll.
    evaluate : callable(list of Run) -> NextAdvice
        The advice on those runs (:func:`advise` of their comparison); an
        :class:`~planner.errors.InputError` (too few runs yet) is shown and waited out.
    a, b : str
        The configs; runs of other configs are ignored.
    interval : float
        Seconds between polls (> 0).
    timeout : float, optional
        Seconds after which the loop gives up (exit :data:`WATCH_TIMEOUT`); the last sleep
        is cut to it, so the loop never overruns the timeout by a whole interval.
    max_runs, max_usd : optional
        The budget of runs bought since the start (of A and B) and of dollars
        (:func:`spent`); when it is spent undecided the loop exits :data:`WATCH_BUDGET`.
    cost : planner.decide.costs.CostModel
    out : callable(str)
        Where each line goes: one per new run, then one when it stops.
    clock, sleep : callables
        ``time.monotonic`` and ``time.sleep`` (a test passes its own).

    Returns
    -------
    int
        :data:`WATCH_DECIDED`, :data:`WATCH_BUDGET` or :data:`WATCH_TIMEOUT`.
    """
    t0 = clock()
    seen: set = set()
    first = True
    start_instances: set = set()
    new_runs: list = []
    last_error = None
    n_total = 0
    while True:
        try:
            runs = [r for r in read() if r.config in (a, b)]
            last_error = None
        except InputError as exc:
            runs, last_error = None, exc
        if runs is not None:
            fresh = [r for r in runs if _run_key(r) not in seen]
            if fresh:
                seen.update(_run_key(r) for r in fresh)
                if first:
                    start_instances = {r.instance for r in fresh if r.instance}
                    n_total = len(fresh)
                    steps = [(None, runs)]
                else:
                    steps = []
                    done = [r for r in runs if _run_key(r) not in {_run_key(x) for x in fresh}]
                    for k, r in enumerate(fresh):
                        steps.append((r, done + fresh[: k + 1]))
                for r, upto in steps:
                    if r is not None:
                        new_runs.append(r)
                        n_total += 1
                    line, decided = _evaluate_line(evaluate, upto, r, n_total, first)
                    out(line)
                    if decided:
                        out(f"decided after {count(len(new_runs), 'new run')}: stop")
                        return WATCH_DECIDED
                    n_new, usd, gh = spent(new_runs, start_instances, cost)
                    if (max_runs is not None and n_new >= max_runs) or \
                            (max_usd is not None and usd >= max_usd):
                        out(f"budget spent undecided: {count(n_new, 'new run')}, ${usd:.2f}, "
                            f"{gh:.2f} GPU-h")
                        return WATCH_BUDGET
        first = False  # later runs are new runs, one line each
        left = None if timeout is None else timeout - (clock() - t0)
        if left is not None and left <= 0:
            why = f" (last read error: {last_error.one_line()})" if last_error else ""
            out(f"timeout after {timeout:g} s undecided{why}")
            return WATCH_TIMEOUT
        sleep(interval if left is None else min(interval, left))  # the timeout is kept


def _evaluate_line(evaluate, runs, run, n_total: int, first: bool) -> tuple[str, bool]:
    """One line of the watch: the run (or the runs already there) and the advice after it."""
    head = (f"{count(n_total, 'run')} already there" if run is None else
            f"run {n_total}: {run.config} {run.tps:g}" + (f" on {run.instance}" if run.instance
                                                          else ""))
    try:
        adv = evaluate(runs).to_dict()
    except InputError as exc:
        return f"{head} -> waiting ({exc.message})", False
    cur = adv["current"]
    d = cur["delta_pct"]
    line = (f"{head} -> {cur['label']} (Δ {d['mean']:+.2f} %, HDI {d['hdi_low']:+.2f} .. "
            f"{d['hdi_high']:+.2f})")
    if not cur["decided"]:
        rec = adv["recommended"]
        if rec is not None:
            line += f"; next: {describe_action(rec)}"
    return line, bool(cur["decided"])
