"""``planner draft``: is this drafting idea worth a run? (:func:`run_draft`)

Pipeline (no statistics live in the CLI; this module makes the decision from the models):

1. load a capture (:func:`models.drafting.capture.load_capture`);
2. per policy, per-position draft profiles (:mod:`models.drafting.lookup`) and a step walk
   (:func:`models.drafting.walk.walk`), Monte-Carlo replicated for stochastic (MTP, hybrid)
   policies, with every step charged by the cost model (:mod:`models.drafting.cost`);
3. a paired bootstrap over prompts (:mod:`models.drafting.bootstrap`) of tokens/forward and of
   the TPS rate (tokens / modelled time) of each policy and the baseline on the same
   resampled prompts;
4. the projected TPS gain distribution gives :func:`worth_a_run`: P(one real run beats the
   baseline) and, from the assurance planner (:func:`planner.decide.repeats.plan_repeats`, the
   platform's noise prior and cost model, the verdict's rule), the runs per arm that confirm
   the gain and their cost.

Noise of one run (for P(one run beats the baseline) and the "noise sigma" shown): the
platform's noise prior (:func:`models.stats.noise.platform_prior`), the same one the runs/arm
sizing simulates: one run on a new allocation has sd ``sqrt(tau^2 + sigma^2)`` (between- and
within-allocation scales), integrated over the prior; the figure shown is its prior median
times the baseline TPS (hf-a10g-small: 0.863 %). Pass ``sigma_tps`` (or a :class:`NoiseSpec`
with a ``cv``, e.g. :data:`planner.defaults.ZTEST_CV`, the published N = 4 repeats' 0.378 %)
to fix it instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from planner.defaults import DEFAULT_ASSURANCE, DEFAULT_PLATFORM
from planner.decide.draft.acceptance import _acceptance_for
from planner.decide.draft.cost_fields import check_cost_field
from planner.decide.draft.evidence import (_withhold, capture_evidence, capture_name,
                                           default_capture_path)
from planner.decide.draft.noise import NoiseSpec, predictive_run_sd
from planner.decide.draft.policy import (PolicySpec, default_policies, is_stochastic,
                                         lookup_policy, lookup_profile, parse_policy,
                                         profile_lists, registry, validate_policy)
from planner.decide.draft.worth import (_PI_LEVEL, SIZING_SIMS, model_spread_draws,
                                        worth_a_run)
from planner.errors import InputError
from planner.results.counts import count
from planner.results.draft import DraftResult

__all__ = ["run_draft"]


@dataclass
class _Run:
    spec: PolicySpec
    res: object  # WalkResult
    extra: dict = field(default_factory=dict)


def _cluster_agg(cluster: np.ndarray):
    """(agg, first): ``agg(a)`` sums the last axis of ``a`` per distinct prompt
    (``cluster``, shape (P,), values 0..C-1 by first appearance); ``first`` the first record
    of each."""
    order = np.argsort(cluster, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(cluster[order]) != 0])

    def agg(a):
        a = np.asarray(a, float)
        return np.add.reduceat(a[..., order], starts, axis=-1)

    return agg, order[starts]


def _by_prompt(stats: dict, groups, cluster: np.ndarray) -> tuple[dict, list | None]:
    """Each statistic's per-record columns summed per distinct prompt (``cluster``, shape
    (P,), values 0..C-1 by first appearance); the group of each distinct prompt is its
    first record's. Returns (stats with shape (R, C) / (C,), groups of length C or None)."""
    agg, first = _cluster_agg(cluster)
    out = {k: (agg(n), agg(d)) for k, (n, d) in stats.items()}
    return out, ([groups[i] for i in first] if groups else None)


def _duplicates_entry(cap) -> dict:
    """The capture JSON's ``duplicates`` entry when records repeat, else nothing."""
    if cap.prompt_cluster is None:
        return {}
    distinct = int(cap.prompt_cluster.max()) + 1
    return {"duplicates": {
        "records": len(cap) - distinct, "distinct_prompts": distinct,
        "note": (f"{len(cap) - distinct} records repeat earlier ones (same id and prompt, "
                 f"or the same prompt and completion): every replay reads them all, and the "
                 f"bootstrap "
                 f"resamples the {distinct} distinct prompts with their copies, so the "
                 "intervals are those of the distinct prompts")}}


def run_draft(capture_path: str | Path | None = None, policies: Sequence[PolicySpec] | None = None,
              *, baseline: PolicySpec | None = None, baseline_tps: float | None = None,
              n_boot: int = 2000, seed: int = 0, mc_reps: int = 200, stop_at_eos: bool = False,
              curve: Sequence[float] | None = None, acceptance: str | None = None,
              per_prompt: str | None = "B", correlation: str = "calibrated",
              cost_profile: str = "F", cost_file: str | None = None,
              cost_overrides: dict | None = None, noise: NoiseSpec | None = None,
              platform: str = DEFAULT_PLATFORM, run_cap: int = 40,
              minutes_per_run: float | None = None, price_per_hour: float | None = None,
              start: int = 0, progress: Callable | None = None) -> DraftResult:
    """Simulate drafting policies on a capture and decide which are worth a run.

    Parameters
    ----------
    capture_path : path, optional
        Capture (.jsonl / .jsonl.gz); default :func:`default_capture_path`.
    policies : sequence of PolicySpec, optional
        Default the registry's default policies (:func:`planner.decide.draft.policy.default_policies`:
        ar, pld, ngram, suffix, mtp).
    baseline : PolicySpec, optional
        Default ``ar``.
    baseline_tps : float, optional
        Measured TPS of the baseline; projections become ``baseline_tps * rate_policy /
        rate_baseline`` (paired per bootstrap replicate). Without it the cost model's absolute
        TPS is used (tokens / modelled step time x harness efficiency).
    n_boot : int
        Bootstrap replicates over prompts (default 2,000).
    seed : int
        Seeds everything (MC walks and bootstrap).
    mc_reps : int
        Monte-Carlo replicates of stochastic policies (default 200).
    stop_at_eos : bool
        Cut completions at the first EOS (ids 1, 106).
    curve, acceptance, per_prompt
        MTP acceptance: explicit curve, record id / file, and the embedded per-prompt counters
        run (``B`` default; only used when the capture has exactly the P128 prompts).
    correlation : {"calibrated", "independent"} or float
        MTP/lookup easiness strength gamma for hybrids.
    cost_profile, cost_file, cost_overrides
        Cost model (:func:`models.drafting.cost.load_cost_model`).
    noise : NoiseSpec, optional
        TPS noise of one run (default: the platform noise prior's predictive sd of one run on
        a new allocation, :func:`predictive_run_sd`, the noise the runs/arm sizing uses).
    platform : str
        Platform the real runs would go to: its noise prior and its cost model
        (:func:`planner.decide.costs.cost_model`) size the worth-a-run experiment.
    run_cap : int
        Most runs per arm the sizing considers.
    minutes_per_run, price_per_hour : float, optional
        Overrides of the platform cost model (minutes of one run, $ per hour).
    start : int
        First walked completion position. 0 (default): the reference replay's convention,
        in which the forward that yields the first token counts and may verify a draft built
        from the prompt (reproduces the published PLD figures exactly); 1: vLLM's counters,
        which leave the first (prefill) token out.
    progress : callable(description, total) -> context manager with ``advance()``, optional

    Returns
    -------
    DraftResult
        :meth:`DraftResult.to_dict` is the JSON (see docs/drafting.md "JSON").

    Raises
    ------
    InputError
        Bad capture, parameters out of range, acceptance prompt set not matching the capture.
    """
    from models.drafting.bootstrap import bootstrap_ratios, summarize_samples
    from models.drafting.capture import load_capture
    from models.drafting.cost import load_cost_model
    from models.drafting.hybrid import calibrate_gamma, easiness_state
    from models.drafting.policies import WalkContext

    from planner.io.limits import check_all  # plausible ranges (no 10^8 replicates, no 1e308)

    check_all([("bootstrap", n_boot, "bootstrap"), ("max_runs_per_arm", run_cap, "run_cap"),
               ("mc_reps", mc_reps, "mc_reps"), ("baseline_tps", baseline_tps, "baseline_tps"),
               ("sigma_tps", (noise or NoiseSpec()).sigma_tps, "sigma_tps")])
    if not isinstance(correlation, str):
        check_all([("correlation", correlation, "correlation")])
    policies = list(policies) if policies else [parse_policy(p) for p in default_policies()]
    baseline = baseline or PolicySpec("ar")
    for sp in [*policies, baseline]:
        validate_policy(sp)
    noise = noise or NoiseSpec()
    from planner.io.platforms import platform_key, platform_prior
    from planner.decide.costs import cost_model

    run_cost = cost_model(platform, price_per_hour=price_per_hour,
                          minutes_per_run=minutes_per_run)
    try:
        run_prior = platform_prior(platform)
    except KeyError:
        raise InputError(f"platform {platform!r} has no noise prior", field="platform") from None
    cost = load_cost_model(cost_profile, cost_file, check=check_cost_field,
                           **(cost_overrides or {}))
    path = Path(capture_path) if capture_path is not None else default_capture_path()
    cap = load_capture(path, stop_at_eos=stop_at_eos)
    lengths = np.array([len(c) for c in cap.completions], dtype=np.int64)
    if np.any(lengths <= start):
        raise InputError(f"every completion needs more than {count(start, 'token')}", file=str(path),
                         field="completion_token_ids")
    evidence = capture_evidence(len(cap), lengths - start, file=capture_name(capture_path))
    mtp_ks = [sp.params.get("k", 7) for sp in [*policies, baseline] if is_stochastic(sp.name)]
    kmax = max(mtp_ks) if mtp_ks else 7
    model, curves_all, pp_note = _acceptance_for(cap, kmax, curve, acceptance, per_prompt)

    prof_cache: dict = {}

    def profile(name, params):
        key = (name, repr(lookup_policy(name, params)))
        if key not in prof_cache:
            prof_cache[key] = lookup_profile(cap, name, params)
        return prof_cache[key]

    # correlation calibration (prompt-level slope of measured MTP tpf on easy fraction)
    corr_info: dict = {"mode": str(correlation)}

    def gamma_for(lk_name, lk_params, easy_thr):
        if correlation == "independent":
            return 0.0, None
        if not isinstance(correlation, str):
            return float(correlation), None
        from models.drafting.acceptance import per_prompt_counters
        rows = per_prompt_counters(per_prompt or "B") if per_prompt and \
            str(per_prompt).lower() != "none" else []
        tpf = {r["id"]: r["tokens_per_forward"] for r in rows}
        if set(tpf) != set(cap.ids):
            return 0.0, "no per-prompt MTP counters for this capture's prompts: independence"
        acc, ml, prop = profile_lists(profile(lk_name, lk_params))
        st = easiness_state(ml, prop, easy_thr)
        f = np.array([s[start:l].mean() for s, l in zip(st, lengths)])
        y = np.array([tpf[i] for i in cap.ids])
        info = calibrate_gamma(y, f, model.curve[:kmax])
        entry = {"lookup": lk_name, "easy_threshold": easy_thr, **info}
        if entry not in corr_info.setdefault("calibrations", []):
            corr_info["calibrations"].append(entry)
        return info["gamma"], None

    runs: list[_Run] = []
    rng_root = np.random.SeedSequence(seed)
    all_specs = [baseline] + [p for p in policies if p.label != baseline.label]
    child = rng_root.spawn(len(all_specs) + 1)
    ctx = progress("simulating policies", len(all_specs)) if progress else None
    walk_cache: dict = {}
    try:
        for sp, ss in zip(all_specs, child):
            # the policy's own walk (its declaration in models.drafting.policies)
            wctx = WalkContext(lengths=lengths, step_ms=cost.step_ms, start=start,
                               mc_reps=mc_reps, rng=np.random.default_rng(ss),
                               curves=curves_all, profile=profile, gamma_for=gamma_for,
                               cache=walk_cache)
            res, extra = registry()[sp.name].walk(wctx, dict(sp.params))
            runs.append(_Run(sp, res, extra))
            if ctx:
                ctx.advance()
    finally:
        if ctx:
            ctx.close()

    groups = cap.groups
    stats = {}
    for i, r in enumerate(runs):
        stats[f"tpf{i}"] = (r.res.tokens, r.res.forwards)
        stats[f"rate{i}"] = (r.res.tokens, r.res.time_ms)
    boot_groups = groups
    if cap.prompt_cluster is not None:
        # repeated records: resample distinct prompts with all their copies (a cluster
        # bootstrap), so a capture repeated k times keeps the intervals of its prompts
        stats, boot_groups = _by_prompt(stats, groups, cap.prompt_cluster)
    stat_shapes = [(k, np.atleast_2d(n).shape[0]) for k, (n, _) in stats.items()]
    boot = bootstrap_ratios(stats, n_boot=n_boot, seed=np.random.default_rng(child[-1]),
                            groups=boot_groups)
    base_rate = boot["rate0"]
    base_rate_pt = runs[0].res.tokens.sum() / runs[0].res.time_ms.sum()
    base_model_tps = float(cost.tps(base_rate_pt, 1.0))
    anchor = baseline_tps if baseline_tps is not None else base_model_tps
    if noise.from_prior:
        # one noise model: the platform prior the runs/arm sizing simulates from
        total = run_prior.total_sd_draws()   # the draws of total_sd_median
        noise_draws = predictive_run_sd(run_prior, total=total)
        noise_cv = float(np.median(total))
        noise_source = (f"platform noise prior {run_prior.name}: one run on a new allocation, "
                        f"sqrt(tau^2 + sigma^2) with tau {run_prior.tau.describe()}, sigma "
                        f"{run_prior.sigma.describe()}; median {100 * noise_cv:.3f} % shown, "
                        "P(one run beats) integrates over the prior (the runs/arm sizing's "
                        "noise)")
        sigma = noise_cv * anchor
        noise_label = f"{run_prior.name} prior, one run on a new allocation"
    else:
        noise_draws, noise_cv = None, noise.cv
        noise_source = noise.source or ("stated sigma" if noise.sigma_tps is not None else
                                        f"CV {100 * noise.cv:.3f} %")
        sigma = noise.sigma_at(anchor)
        noise_label = ("stated sigma" if noise.sigma_tps is not None
                       else f"CV {100 * noise_cv:.3f} %")
        # one noise everywhere: the runs/arm sizing simulates the stated sd too (it used the
        # platform prior, so P(one run beats) and the runs needed contradicted each other)
        from planner.decide.priors import known_run_prior

        run_prior = known_run_prior(
            sigma / anchor, field=(f"sigma_tps ({sigma:.4g} TPS at the baseline's "
                                   f"{anchor:.4g} TPS)" if noise.sigma_tps is not None
                                   else "cv"),
            what=(f"stated sd {sigma:.4g} TPS at {anchor:.4g} TPS"
                  if noise.sigma_tps is not None else "stated CV"))
    out_pols = []
    samples = {}
    widen: dict = {}
    stack = model.meta.get("stack") or {}
    spread_k = (stack.get("spread") or {}) if stack.get("borrowed") else {}
    for i, r in enumerate(runs):
        res = r.res
        tpf_pt = res.tokens_per_forward()
        tpf = summarize_samples(boot[f"tpf{i}"], tpf_pt)
        if is_stochastic(r.spec.name):
            from models.drafting.content_prediction import interval_fields
            # the 90 % PI combines the content model's 90 % interval with the bootstrap's
            # 90 % interval (not its 95 % CI: one level on both sides)
            b90 = summarize_samples(boot[f"tpf{i}"], tpf_pt, level=_PI_LEVEL)
            tpf.update(interval_fields(model.meta.get("content"), tpf["point"], b90["ci_low"],
                                       b90["ci_high"]))
            if model.meta.get("content") is not None:
                # a prediction for new prompts holds these prompts' sampling error too: never
                # narrower than the bootstrap interval shown beside it (on a few prompts the
                # 95 % bootstrap quantile can pass the combined 90 % bound)
                tpf["pi_low"] = min(tpf["pi_low"], tpf["ci_low"])
                tpf["pi_high"] = max(tpf["pi_high"], tpf["ci_high"])
        rate_pt = res.tokens.sum() / res.time_ms.sum()
        ratio = boot[f"rate{i}"] / base_rate
        ratio_pt = rate_pt / base_rate_pt
        if baseline_tps is not None:
            tps_s, tps_pt = baseline_tps * ratio, baseline_tps * ratio_pt
        else:
            tps_s, tps_pt = cost.tps(boot[f"rate{i}"], 1.0), float(cost.tps(rate_pt, 1.0))
        base_s = baseline_tps if baseline_tps is not None else cost.tps(base_rate, 1.0)
        gain_s = tps_s - base_s
        gain_pt = tps_pt - anchor
        is_base = i == 0
        tps_sum = summarize_samples(tps_s, float(tps_pt))
        spread = None
        pred = model.meta.get("content") if is_stochastic(r.spec.name) else None
        if pred is not None and not is_base:
            # projected on prompts the content model was not calibrated on: the TPS row and
            # the worth-a-run statement carry the model's prediction interval too
            wide, spread = model_spread_draws(pred, tps_s, float(tps_pt), tpf,
                                              np.random.default_rng(child[i].spawn(1)[0]))
            tps_sum.update(pi_low=spread["tps_pi_low"], pi_high=spread["tps_pi_high"])
            if is_stochastic(baseline.name):
                spread = None  # the baseline shares the model's error: the gain does not
            else:
                widen[i] = wide / tps_s
                gain_s = wide - base_s
                spread.update(gain_pi_low=spread["tps_pi_low"] - anchor,
                              gain_pi_high=spread["tps_pi_high"] - anchor)
        if spread_k and is_stochastic(r.spec.name):
            _borrowed_widening(tpf, None if is_base or is_stochastic(baseline.name)
                               else tps_sum, float(tps_pt), spread_k,
                               res.frac_tokens_from_lookup())
        war = None if is_base else worth_a_run(
            gain_s, sigma, point=gain_pt, baseline_tps=anchor, prior=run_prior, cost=run_cost,
            cap=run_cap, seed=seed, model_spread=spread, noise_draws=noise_draws)
        if war is not None and evidence["level"] != "ok":
            war = _withhold(war, evidence)
        if war is not None and r.spec.name == "hybrid-max":
            war["worth"] = False
            war["code"] = "upper_bound"
            war["verdict"] = ("upper bound only (both drafts verified at MTP cost), not a "
                              f"runnable policy: ceiling {gain_pt:+.1f} TPS")
        pol = {
            "policy": r.spec.name, "label": r.spec.label, "params": dict(r.spec.params),
            "is_baseline": is_base,
            "stochastic": is_stochastic(r.spec.name),
            "from_capture": not is_stochastic(r.spec.name),
            "numbers_from": _numbers_from(r.spec.name, model),
            "upper_bound": r.spec.name == "hybrid-max",
            "mc_replicates": res.n_rep,
            "tokens_per_forward": tpf,
            "mean_acceptance_length": res.mean_acceptance_length(),
            "frac_tokens_from_lookup": res.frac_tokens_from_lookup(),
            "runs_over_cap": _runs_over_cap(res),
            "step_ms": float(res.time_ms.sum() / res.forwards.sum()),
            "mean_verify_rows": float(res.rows.sum() / res.forwards.sum()),
            "speedup_vs_baseline": summarize_samples(ratio, float(ratio_pt)),
            "projected_tps": tps_sum,
            "worth_a_run": war,
            "vllm_counters": _vllm_counters(res),
            **r.extra,
        }
        out_pols.append(pol)
        samples[r.spec.label] = boot[f"tpf{i}"]
    # the best policy is the one with the highest projected gain, an upper bound included
    # (the headline then says it is only a ceiling and names the best runnable policy too)
    def gain(p):
        return p["projected_tps"]["point"]

    cands = [p for p in out_pols if not p["is_baseline"] and not p["upper_bound"]]
    others = [p for p in out_pols if not p["is_baseline"]]
    best = max(others, key=gain) if others else None
    runnable = max(cands, key=gain) if cands else None
    head, basis, verdict = _headline_row(cands)
    if best is not None and best["upper_bound"]:
        mark = "" if best["from_capture"] else " \N{DAGGER}"
        verdict = (f"best projected: {best['label']}{mark}, {best['worth_a_run']['verdict']}; "
                   + (_headline_row(cands, runnable_form=True)[2] if head is not None
                      else "no runnable policy given"))
    rests = _rests_on(runs, out_pols, cost, stat_shapes, n_boot, child[-1], boot_groups,
                      cap, baseline_tps, noise, noise_cv, noise_draws, run_prior, run_cost,
                      run_cap, seed, widen, evidence, model)
    return DraftResult(
        capture={"path": capture_name(capture_path), "n_prompts": len(cap), "n_tokens": int(lengths.sum()),
                 "stop_at_eos": stop_at_eos, "eos_tokens_removed": cap.eos_tokens_removed,
                 # records without a group (None) are a stratum of their own, listed last
                 "stratified_groups": (sorted(set(groups), key=lambda g: (g is None, g or ""))
                                       if groups else None),
                 "walk_start": start, **_duplicates_entry(cap)},
        evidence=evidence,
        settings={"bootstrap": n_boot, "seed": seed, "mc_replicates": mc_reps,
                  "baseline": baseline.label, "baseline_tps": baseline_tps,
                  "baseline_tps_model": base_model_tps,
                  "tps_anchor": "baseline_tps" if baseline_tps is not None else "cost model",
                  "noise": {"sigma_tps": sigma, "cv": noise_cv, "source": noise_source,
                            "label": noise_label},
                  "platform": platform_key(platform) or platform, "run_cap": run_cap, "assurance": DEFAULT_ASSURANCE,
                  "sizing_sims": SIZING_SIMS, "run_cost_model": run_cost.to_dict(),
                  "cost_model": cost.to_dict()},
        acceptance={"source": model.source, "k": model.k, "curve": model.curve,
                    "tokens_per_forward_curve": model.tokens_per_forward,
                    "per_prompt": model.meta.get("per_prompt"), "note": pp_note,
                    "model": model.meta.get("model", "curve (no per-prompt model)"),
                    "content_model": (model.meta["content"].model
                                      if "content" in model.meta else None),
                    "stack": model.meta.get("stack")},
        correlation=corr_info,
        policies=out_pols,
        worth_a_run=None if best is None else {
            "best_policy": best["label"],
            "best_runnable": None if runnable is None else runnable["label"],
            "worth": bool(runnable is not None and runnable["worth_a_run"]["worth"]),
            "verdict": verdict,
            "worth_policies": [p["label"] for p in cands if p["worth_a_run"]["worth"]],
            "headline_policy": None if head is None else head["label"],
            "basis": basis},
        samples=samples,
        rests_on=[e.to_dict() for e in rests],
    )


def _rests_on(runs, out_pols, cost, stat_shapes, n_boot, boot_seed, boot_groups, cap,
              baseline_tps, noise, noise_cv, noise_draws, run_prior, run_cost, run_cap, seed,
              widen, evidence, model) -> list:
    """The result's ``rests_on`` entries (:func:`planner.decide.draft.sensitivity.rests_on`):
    the run re-priced at the ends of each constant's range on the same bootstrap draws."""
    from planner.decide.draft.reprice import Repricer, policy_sums
    from planner.decide.draft.sensitivity import SIZED, Projection, rests_on

    sums = [policy_sums(r.res, cost, registry()[r.spec.name].synchronous,
                        is_stochastic(r.spec.name)) for r in runs]
    agg = _cluster_agg(cap.prompt_cluster)[0] if cap.prompt_cluster is not None else None
    rep = Repricer(sums, stat_shapes, n_boot, boot_seed, boot_groups, agg)
    cands = [i for i, p in enumerate(out_pols) if not p["is_baseline"] and not p["upper_bound"]]
    sigma_at = (lambda a: noise_cv * a) if noise.from_prior else noise.sigma_at
    proj = Projection(rep, cost, [p["label"] for p in out_pols], [r.spec.name for r in runs],
                      cands, baseline_tps, sigma_at, noise_draws, run_prior, run_cost,
                      run_cap, seed, widen=widen, withheld=evidence["level"] != "ok",
                      ks={i: r.spec.params.get("k", 7) for i, r in enumerate(runs)
                          if is_stochastic(r.spec.name)},
                      curve=model.curve, content=model.meta.get("content"))
    # the run's own conclusion, as the re-evaluations form it (best positive gains first)
    def gain(i):
        return out_pols[i]["worth_a_run"]["gain_tps"]["point"]

    proj.at_value = {i: (bool(out_pols[i]["worth_a_run"]["worth"]), gain(i)) for i in cands}
    pos = sorted((i for i in cands if gain(i) > 0), key=lambda i: -gain(i))[:SIZED]
    worth_i = next((i for i in pos if out_pols[i]["worth_a_run"]["worth"]), None)
    at_v = (worth_i is not None, None if worth_i is None else out_pols[worth_i]["label"])
    anchor_source = ("the measured TPS of the baseline (baseline_tps)" if baseline_tps
                     is not None else "the cost model's absolute TPS (harness efficiency "
                     f"{cost.harness_efficiency} = 455.3 / 480, forward_cost.md s3/s6)")
    acc = {"stack": model.meta.get("stack"), "source": model.source,
           "model": model.meta.get("model", "curve (no per-prompt model)")}
    return rests_on(proj, at_v=at_v, acceptance=acc, cost_name=cost.name,
                    anchor_source=anchor_source)


def _borrowed_widening(tpf: dict, tps: dict | None, tps_pt: float, spread: dict,
                       frac_lookup: float) -> None:
    """Widen a row's new-prompt-set 90 % interval (in place) when its MTP curve is borrowed
    from another stack: the MTP share of its tokens/forward (1 - the lookup share) moves by
    the spread between the shipped stacks' curves at its K (``spread['ratio_low']`` ..
    ``spread['ratio_high']``, :func:`models.drafting.acceptance_stacks.stack_spread`); the
    TPS interval (``tps``, None for the baseline or an MTP baseline sharing the curve)
    follows through the same cost model."""
    share = max(0.0, 1.0 - float(frac_lookup))
    lo = 1.0 + (spread["ratio_low"] - 1.0) * share
    hi = 1.0 + (spread["ratio_high"] - 1.0) * share
    pl = tpf["pi_low"] if tpf.get("pi_low") is not None else tpf["ci_low"]
    ph = tpf["pi_high"] if tpf.get("pi_high") is not None else tpf["ci_high"]
    tpf.update(pi_low=float(pl * lo), pi_high=float(ph * hi),
               stack_spread={"ratio_low": lo, "ratio_high": hi})
    if tps is not None and tpf["point"] > 0:
        tl = tps["pi_low"] if tps.get("pi_low") is not None else tps["ci_low"]
        th = tps["pi_high"] if tps.get("pi_high") is not None else tps["ci_high"]
        tps.update(pi_low=float(tl * lo), pi_high=float(th * hi))


def _headline_row(cands: list, runnable_form: bool = False) -> tuple:
    """The runnable policy that leads the worth-a-run summary, its basis and the summary line.

    The headline row is the runnable policy with the highest projected gain among the rows
    whose numbers come from the capture's own tokens (``from_capture``); a row projected from
    the MTP acceptance curve (a dagger row) never leads while a capture row exists: the best of
    those is named after it with its dagger, its projected gain and its new-prompt-set 90 %
    prediction interval of tokens/forward, as projected, not measured. Without capture rows the
    best model row leads, labelled so in the same sentence (its assurance integrates over the
    content model's prediction interval when the row has one, ``model_uncertainty``, else treats
    the projected gain as exact; the line says which).

    Parameters
    ----------
    cands : list of dict
        Runnable non-baseline policy rows (``label``, ``from_capture``, ``projected_tps``,
        ``tokens_per_forward``, ``worth_a_run``).
    runnable_form : bool
        Word the line as the "best runnable: LABEL: verdict" part of an upper-bound headline.

    Returns
    -------
    tuple
        (headline row or None, ``"capture"`` / ``"model"`` / None, summary line or None).
    """
    def gain(p):
        return p["projected_tps"]["point"]

    measured = [p for p in cands if p["from_capture"]]
    modelled = [p for p in cands if not p["from_capture"]]
    if not cands:
        return None, None, None
    mark = "\N{DAGGER}"
    if measured:
        head = max(measured, key=gain)
        line = (f"best runnable: {head['label']}: {head['worth_a_run']['verdict']}"
                if runnable_form else
                f"{head['worth_a_run']['verdict']} (best measured on this capture's tokens: "
                f"{head['label']})")
        best_m = max(modelled, key=gain) if modelled else None
        if best_m is not None and gain(best_m) > gain(head):
            line += (f"; model-based best: {best_m['label']} {mark}, "
                     f"{best_m['worth_a_run']['gain_tps']['point']:+.1f} TPS "
                     f"{_projection_note(best_m)}")
        return head, "capture", line
    head = max(modelled, key=gain)
    if (head["worth_a_run"] or {}).get("model_uncertainty"):
        how = "; its assurance integrates over that prediction interval"
    elif "measured per-prompt counters" in head.get("numbers_from", ""):
        # the capture's prompts are calibration prompts: no prompt-set shift to predict
        how = ("; its assurance rests on the measured counters of these prompts (their "
               "bootstrap spread; no prompt-set shift)")
    else:
        how = "; its assurance treats that projection as exact"
    note = _projection_note(head) + how
    if runnable_form:
        return head, "model", (f"best runnable: {head['label']} {mark}: "
                               f"{head['worth_a_run']['verdict']} ({note})")
    return head, "model", (f"{head['worth_a_run']['verdict']} (best: {head['label']} {mark}, "
                           f"{note})")


def _projection_note(p: dict) -> str:
    """'projected from the MTP acceptance curve, not measured on this capture' and the row's
    new-prompt-set 90 % prediction interval of tokens/forward when it has one."""
    tpf = p["tokens_per_forward"]
    pi = ("" if tpf.get("pi_low") is None or tpf.get("pi_high") is None else
          f", tokens/forward {tpf['point']:.3f}, new prompt set 90 % PI "
          f"[{tpf['pi_low']:.3f}, {tpf['pi_high']:.3f}]")
    mu = (p.get("worth_a_run") or {}).get("model_uncertainty")
    if mu:
        pi += f", TPS 90 % PI [{mu['tps_pi_low']:.1f}, {mu['tps_pi_high']:.1f}]"
    if "measured per-prompt counters" in p.get("numbers_from", ""):
        return ("projected from the MTP counters measured on these prompts (see "
                "\N{DAGGER}), not from this capture's own tokens" + pi)
    return ("projected from the MTP acceptance curve (see \N{DAGGER}), not measured on this "
            f"capture{pi}")


def _numbers_from(name: str, model) -> str:
    """Where a policy row's numbers come from, in words (table footnote and JSON)."""
    if not is_stochastic(name):
        return "the capture's own tokens"
    how = model.meta.get("model", "curve (no per-prompt model)")
    src = (f"the MTP acceptance curve {model.source} ({how}); the capture gives lengths"
           + (" and content features" if "content" in model.meta else ""))
    return src if name == "mtp" else "the capture's tokens (lookup) and " + src


def _vllm_counters(res) -> dict:
    """vLLM's spec-decode counters of a walk (means over Monte-Carlo replicates).

    ``num_drafts`` (steps verifying a draft), ``num_draft_tokens`` (drafted tokens verified:
    verify rows minus one per forward), ``num_accepted_tokens`` (the verifier's count ``a``),
    ``draft_acceptance_rate`` = accepted / draft tokens, ``mean_acceptance_length`` = 1 +
    accepted / drafts, ``acceptance_rate_per_position`` = steps accepting at least i draft
    tokens / drafts, i = 1.. up to the longest accepted draft. ``convention`` is the walk's
    start: ``vllm`` (start 1) counts as a server does (the prefill token left out);
    ``reference`` also counts the first forward.
    """
    R = res.n_rep
    hist = np.asarray(res.accept_hist, np.int64)
    nd = float(res.drafts.sum()) / R
    ndt = float((res.rows - res.forwards).sum()) / R
    na = float((np.arange(hist.size) * hist).sum()) / R
    tail = np.cumsum(hist[::-1])[::-1][1:] / R  # steps with a >= i, i = 1..
    return {"convention": "vllm" if res.start == 1 else "reference",
            "num_drafts": nd, "num_draft_tokens": ndt, "num_accepted_tokens": na,
            "draft_acceptance_rate": na / ndt if ndt else None,
            "mean_acceptance_length": 1 + na / nd if nd else None,
            "acceptance_rate_per_position": [float(x / nd) for x in tail] if nd else []}


def _runs_over_cap(res) -> float | None:
    """Steps with more than 8 accepted draft tokens (mean over MC replicates)."""
    return res.meta.get("runs_over_cap")
