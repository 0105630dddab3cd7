"""Is this delta real? The posterior verdict on config B vs config A.

The verdict fits the hierarchical TPS model (:mod:`models.stats.tps_model`) to the runs of A and B
with a noise prior, reads the posterior of Δ = μ_B − μ_A (log scale, reported in % and TPS)
against a region of practical equivalence (ROPE) and gives one of four labels:

* ``B better`` — the 95 % HDI of Δ lies wholly above +ROPE;
* ``A better`` — the 95 % HDI lies wholly below −ROPE;
* ``equivalent`` — the 95 % HDI lies inside (−ROPE, +ROPE);
* ``undecided`` — anything else, or an MCMC fit that failed its diagnostics.

A decisive label thus needs posterior probability ≥ 0.975 beyond the ROPE on that side, so a
calibrated model makes a wrong decisive call on an A/A comparison at most 5 % of the time
(checked on the shipped runs in ``tests/planner/decide/test_aa.py``).
"""

from __future__ import annotations

import math

import numpy as np

from models.stats.decision import label_from
from models.stats.noise import WEAK, NoisePrior
from models.stats.tps_cold import cold_prior_summary
from models.stats.tps_model import pct
from planner.decide.classical import classical_tests, paired_t
from planner.decide.comparison import (Comparison, check_identifiable, cold_only_notes,
                                       cold_runs, fit, grouping, grouping_note, runs_listing)
from planner.defaults import DEFAULT_ROPE
from planner.decide.direction import shown_label
from planner.decide.prior_conflict import prior_conflicts
from planner.decide.rope import Rope
from planner.io.runs import RunsTable
from planner.results.counts import count
from planner.results.verdict import Verdict

__all__ = ["WEAK_SIGMA_DF", "judge", "verdict"]


#: A run-to-run (sigma) prior with at most this many degrees of freedom is "weak": the
#: hf-a10g-small prior's sigma borrows the local A10G scale on 2 df (models/data/
#: noise_priors.json). A paired verdict with fewer than 3 runs beyond one per (instance,
#: config) leans on it for its interval's width, and says so.
WEAK_SIGMA_DF = 3.0


def verdict(table: RunsTable, a: str, b: str, *, rope: Rope | str = DEFAULT_ROPE,
            prior: NoisePrior | None = None, prior_label: str = "weak", engine: str = "exact",
            seed: int = 0, likelihood: str = "normal", use_cold: bool | None = None,
            hdi_prob: float = 0.95, prior_info: dict | None = None,
            platform: str | None = None, lower_is_better: bool | None = None,
            metric: str | None = None) -> Verdict:
    """Posterior verdict on B vs A (schema ``spec-planner/verdict/1``).

    Parameters
    ----------
    table : RunsTable
        Runs; only rows of ``a`` and ``b`` (non-warm-up) are used.
    a, b : str
        Config labels; Δ = B − A.
    rope : Rope or str
        ROPE half-width, ``"0.5%"`` (relative) or ``"1.5"`` (TPS at A's level).
    prior : NoisePrior, optional
        Noise prior; ``None`` means weakly informative (then each config's noise must be
        learnable from the data).
    prior_info : dict, optional
        Where the prior comes from (:meth:`planner.decide.priors.PriorChoice.to_dict` plus ``notes``):
        merged into the result's ``prior``; its ``notes`` are added to the verdict's notes.
    engine : {"exact", "mcmc"}
    seed : int
        MCMC seed (the exact engine is deterministic).
    likelihood : {"normal", "student-t"}
        ``student-t`` (MCMC only) for heavy cold-start tails.
    use_cold : bool, optional
        Include the cold-start indicator (default: when some run is flagged cold).
    platform : str, optional
        Platform of the runs (default: the table's): its cost model prices the "to settle"
        advice (:func:`planner.decide.settle.to_settle`).
    lower_is_better : bool, optional
        The metric's direction as given (``--lower-is-better`` / ``--higher-is-better``);
        None infers it from the rows' metric or column name
        (:func:`planner.io.runs.metric_lower_is_better`), and assumes higher is better, with a
        note, when they name none (a plain list of numbers). Only the shown ``label`` depends
        on it (:func:`planner.decide.direction.shown_label`); the decision rule and every number are the same.
    metric : str, optional
        The metric's name when the rows name none (a table's value column, ``--tps-column``);
        the result's ``metric`` is the rows' metric, else this.

    Returns
    -------
    Verdict
        ``label``, ``p_b_gt_a``, ``p_equivalent``, ``p_b_gt_a_beyond_rope``,
        ``p_a_gt_b_beyond_rope``, ``delta_tps`` / ``delta_pct`` (each ``{mean, hdi_low,
        hdi_high}``), ``sigma_instance`` / ``sigma_run`` (relative % and TPS), ``engine``,
        ``diagnostics``, ``more_runs_per_arm``, ``classical`` and the inputs;
        :meth:`Verdict.to_dict` is the JSON.

    Raises
    ------
    InputError
        Missing configs, mixed metrics/workloads, one run per config without a prior, bad ROPE.
    """
    rope = Rope.parse(rope) if not isinstance(rope, Rope) else rope
    comp = Comparison(table.select([a, b]), a, b, platform=platform, prior=prior,
                      prior_label=prior_label,
                      use_cold=use_cold, lower_is_better=lower_is_better,
                      plain=table.path == "<command line>", value_name=metric)
    return judge(comp, rope=rope, engine=engine, seed=seed, likelihood=likelihood,
                 hdi_prob=hdi_prob, prior_fields=dict(prior_info or {}))


def judge(comp: Comparison, *, rope: Rope | str = DEFAULT_ROPE, engine: str = "exact",
          seed: int = 0, likelihood: str = "normal", hdi_prob: float = 0.95,
          prior_fields: dict | None = None, extra_notes: list | None = None) -> Verdict:
    """The posterior verdict on a comparison (:func:`verdict` of its runs and prior).

    Parameters
    ----------
    comp : planner.decide.comparison.Comparison
        The runs of A and B, their reading and their noise prior.
    rope, engine, seed, likelihood, hdi_prob
        As :func:`verdict`.
    prior_fields : dict, optional
        Fields added to the result's ``prior``, its ``notes`` first among the verdict's
        (default: :meth:`~planner.decide.comparison.Comparison.prior_info`).
    extra_notes : list of str, optional
        Notes placed after the comparison's own (e.g. on summaries).

    Returns
    -------
    Verdict

    Raises
    ------
    InputError
        As :func:`verdict`.
    """
    from planner.decide.settle import to_settle
    from planner.io.limits import metric_unit

    rope = Rope.parse(rope) if not isinstance(rope, Rope) else rope
    a, b = comp.a, comp.b
    direction, dir_source, dir_note = comp.direction()
    data = comp.data()
    prior = comp.prior
    check_identifiable(data, prior or WEAK, prior is not None, comp.table.path)
    prior = prior or WEAK
    post, diag = fit(data, prior, engine, seed=seed, likelihood=likelihood)
    alone = cold_only_notes(comp.table, a, b) if data.use_cold else []
    tps = np.exp(data.y)
    tps_a, tps_b = tps[data.config == 0], tps[data.config == 1]
    level_a = post.level(0)
    metric_name = comp.metric()
    vunit = metric_unit(metric_name, direction == "lower_is_better")
    rope.check_level(level_a, vunit)
    rope_log = rope.log_halfwidth(level_a)
    d = post.delta(0, 1, rope_log, hdi_prob)
    # every arm of two or more runs holds one value (rounded or copied runs) and no noise is
    # stated: equal values pull the run noise to the grid's floor, so any gap would read as
    # decisive (308,308 vs 309,309 was "B better"); the label is held
    flat = [(who, v) for who, v in ((a, tps_a), (b, tps_b)) if len(v) >= 2 and np.ptp(v) == 0]
    held = (bool(flat) and all(len(v) < 2 or np.ptp(v) == 0 for v in (tps_a, tps_b))
            and comp.prior_label != "stated")
    rule_label = label_from(d, ok=diag.get("ok", True) and not held)
    label = shown_label(rule_label, direction)
    tau = post.scale_summary("tau")
    sig = post.scale_summary("sigma")
    more, more_code, more_note = None, None, None
    if held:
        more_code = "no_spread"
        more_note = ("the runs show no spread at all (each arm one value), so they cannot "
                     "measure the noise and no label is given: give the values at full "
                     "precision, or state your run-to-run noise (a CV), before buying runs")
    elif not diag.get("ok", True):
        # a failed fit (an outlier, a wrong unit, a prior too wide for the data) is no basis
        # for buying runs: say what to fix instead of pricing more of the same
        more_code = "fit_failed"
        more_note = ("the fit failed its diagnostics: check the runs for an outlier or a "
                     "wrong unit, or state your noise (a CV), before buying more runs")
    elif rule_label == "undecided":
        if engine == "exact":
            post0 = post
        else:
            from models.stats.tps_exact import fit_exact

            post0 = fit_exact(data, prior)
        settle_comp = comp if comp.prior is not None else _with_prior(comp, prior)
        # a config whose only runs are cold needs warm runs (new runs are simulated warm)
        more, more_code, more_note = to_settle(settle_comp, rope, seed, post0,
                                               run_word="warm run" if alone else "run")
        from planner.decide.advice import session_advice

        # each run its own session (a stated per-run layout): no "same sessions" to add to
        adv = None if comp.layout == "per-run" else session_advice(post0, data)
        if adv:
            more_note = more_note + "; " + adv

    def scale_out(s):
        return {"pct": {k: 100 * v for k, v in s.items()},
                "tps": {k: level_a * v for k, v in s.items()}}

    pinfo = comp.prior_info() if prior_fields is None else prior_fields
    notes = list(pinfo.get("notes", [])) + list(extra_notes or [])
    if data.one_run_per_instance():
        notes.append("every run is on its own instance: the data learn only "
                     "sqrt(sigma_instance^2 + sigma_run^2); the split comes from the prior")
    if dir_note:
        notes.append(dir_note)
    if flat:
        # no spread at all: rounded values or one run copied, not a measurement of the noise
        notes.append(" and ".join(f"{who}'s {count(len(v), 'run')} are all equal ({v[0]:g})"
                                  for who, v in flat)
                     + ": a spread below the values' printed precision, or one run copied; "
                     "the run-to-run noise then rests on the prior, so check these are "
                     "separate measurements (or give more digits)")
    if not rope.relative and 0 < rope.value < 1e-3 * level_a:
        # a bare number is read in the metric's unit: '--rope 0.1' on ~300 TPS is 0.03 %
        notes.append(f"the ROPE {rope.value:g} (no %) is read in {vunit}: "
                     f"{100 * rope.value / level_a:.3g} % of A's level; for a relative "
                     f"margin give the ROPE as {rope.value:g}%")
    shared = set(data.instance[data.config == 0]) & set(data.instance[data.config == 1])
    sp = prior.sigma
    # runs beyond one per (instance, config) cell: the data's own evidence on sigma
    within_df = len(data.y) - len(set(zip(data.instance.tolist(), data.config.tolist())))
    # (not when A's and B's runs lie in sessions of their own: their offset, not sigma alone,
    # sets the interval then)
    if shared and not comp.arm_sessions and within_df < 3 and sp.kind == "inv_chi2" and \
            sp.df <= WEAK_SIGMA_DF:
        # paired runs cancel the instance effect, so Δ's precision is sigma's: say when that
        # rests on a prior that was not measured (e.g. HF, where sigma borrows 2 df locally)
        notes.append(f"A and B share {count(len(shared), 'instance')}, so the instance effect cancels "
                     f"and the interval rests on the run-to-run scale sigma, whose prior here "
                     f"has only {sp.df:.2g} df ({100 * sp.scale:.2g} %): with few runs it sets "
                     "the interval's width; state your noise (a CV or A/A runs)")
    if prior is not WEAK:
        notes += prior_conflicts(comp.data(False), prior, comp.prior_label)
    colds = cold_runs(comp.table, a, b) if data.use_cold else []
    if data.use_cold:
        which = ", ".join(f"{c['config']} rep {c['rep']}" for c in colds[:6]) + \
            (f" and {len(colds) - 6} more" if len(colds) > 6 else "")
        cp = cold_prior_summary(data.cold_weights)
        J = data.n_cold
        per = "server session" if any(r.session for r in comp.table.runs) else "instance"
        notes.append(f"{count(len(colds), 'cold first run')} ({which}) modelled with a one-sided "
                     f"cold-start slowdown per {per} ({count(J, 'group')}, each its own slowdown; "
                     "prior fitted on the shipped cold "
                     f"runs: {100 * cp['p_not_slow']:.0f} % of first runs not slow, "
                     f"{100 * cp['p_slower_than_3pct']:.0f} % slower than 3 %, "
                     f"{100 * cp['p_slower_than_10pct']:.1f} % slower than 10 %; never faster)")
        notes += alone
        if alone and more_note is not None:
            more_note = ("; ".join(alone) + " (its warm level rests on the cold-start prior); "
                         + more_note)
    if not diag.get("ok", True):
        notes.append("the fit failed its diagnostics: no decisive label is given")
    groups = grouping(comp, data)
    notes.append(grouping_note(groups))
    listing, truncated, run_notes = runs_listing(comp, data)
    notes += run_notes
    curve = None
    x = np.linspace(d.hdi_low - 0.6 * (d.hdi_high - d.hdi_low),
                    d.hdi_high + 0.6 * (d.hdi_high - d.hdi_low), 200)
    dens = post.delta_density(0, 1, x)  # None: the engine has draws only (MCMC)
    if dens is not None:
        # change of variables to percent: p_pct(100(e^x - 1)) = p(x) / (100 e^x)
        curve = {"delta_pct": [pct(v) for v in x],
                 "density": (dens / (100.0 * np.exp(x))).tolist()}
    return Verdict(
        a=a, b=b,
        n_a=int(len(tps_a)), n_b=int(len(tps_b)),
        mean_tps_a=float(np.mean(tps_a)), mean_tps_b=float(np.mean(tps_b)),
        label=label,
        p_b_gt_a=d.p_gt0,
        p_equivalent=d.p_in_rope,
        p_b_gt_a_beyond_rope=d.p_gt_rope,
        p_a_gt_b_beyond_rope=d.p_lt_neg_rope,
        delta_pct=_interval(d.mean, d.hdi_low, d.hdi_high, pct),
        delta_tps=_interval(d.mean, d.hdi_low, d.hdi_high, lambda x: level_a * math.expm1(x)),
        delta_log={"mean": d.mean, "sd": d.sd, "hdi_low": d.hdi_low, "hdi_high": d.hdi_high},
        hdi_prob=hdi_prob,
        rope={"value": rope.value, "unit": "%" if rope.relative else vunit,
              "pct": pct(rope_log), "tps": level_a * math.expm1(rope_log)},
        level_tps_a=level_a,
        sigma_instance=scale_out(tau),
        sigma_run=scale_out(sig),
        engine=engine,
        likelihood=likelihood,
        prior={"label": comp.prior_label, **prior.to_dict(), **pinfo},
        diagnostics=diag,
        more_runs_per_arm=more,
        more_runs_note=more_note,
        more_runs_code=more_code,
        classical={**classical_tests(tps_a, tps_b, platform=comp.table.platform()),
                   **paired_t(data)},
        delta_curve=curve,
        notes=notes,
        seed=seed,
        direction=direction,
        direction_source=dir_source,
        rule_label=rule_label,
        cold_runs=colds,
        metric=metric_name,
        runs=listing,
        runs_truncated=truncated,
        grouping=groups,
    )


def _with_prior(comp: Comparison, prior: NoisePrior) -> Comparison:
    """``comp`` with the prior the fit used (the weak one when it had none)."""
    from dataclasses import replace

    return replace(comp, prior=prior, _data=comp._data)


def _interval(mean: float, lo: float, hi: float, f) -> dict:
    return {"mean": f(mean), "hdi_low": f(lo), "hdi_high": f(hi)}
