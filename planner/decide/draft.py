"""``planner draft``: is this drafting idea worth a run?

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
with a ``cv``, e.g. :data:`planner.decide.defaults.ZTEST_CV`, the published N = 4 repeats' 0.378 %)
to fix it instead.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from planner.decide.defaults import (DEFAULT_ASSURANCE, DEFAULT_PLATFORM, DEFAULT_ROPE,
                              DEFAULT_RULE)
from planner.errors import InputError
from planner.io._parse import LIST_GRAMMAR, split_items  # the one list grammar (shared)
from planner.io import limits
from planner.io.limits import Limit

__all__ = ["PolicySpec", "parse_policy", "POLICY_HELP", "POLICY_KEYS", "NoiseSpec",
           "worth_a_run", "run_draft", "run_sweep", "DraftResult", "SweepResult",
           "DRAFT_SCHEMA", "SWEEP_SCHEMA", "default_capture_path", "DEFAULT_POLICIES",
           "POLICY_NAMES", "POLICY_GRAMMAR", "LIST_GRAMMAR", "split_items", "EVIDENCE_FLOORS",
           "capture_evidence", "N_WINDOW", "DRAFT_DEPTH", "MTP_K", "LOOKUP_THRESHOLD",
           "COST_FIELD_LIMITS", "check_cost_field"]

POLICY_NAMES = ("ar", "pld", "hf-pld", "ngram", "suffix", "mtp", "hybrid-max", "suffix-first",
                "tree")
_ALIASES = {"hybrid-suffix-first": "suffix-first", "hybrid-tree": "tree", "max": "hybrid-max",
            "autoregressive": "ar", "prompt-lookup": "pld", "eagle": "mtp",
            "hf-prompt-lookup": "hf-pld", "spec-bench-pld": "hf-pld"}
#: What each policy is, one line (``--help`` and docs).
POLICY_HELP = {
    "ar": "no drafting, one token per forward",
    "pld": "the reference replay's prompt lookup: last n tokens, MOST RECENT earlier match, "
           "draft depth tokens (n, depth)",
    "hf-pld": "Hugging Face / Spec-Bench prompt lookup: windows from max_matching_ngram_size "
              "down to 1, FIRST match, draft prompt_lookup_num_tokens (max_n, depth)",
    "ngram": "vLLM method=ngram (min_n, max_n, k = prompt_lookup_min, prompt_lookup_max, "
             "num_speculative_tokens)",
    "suffix": "vLLM method=suffix, SuffixDecoding (depth = num_speculative_tokens, ...)",
    "mtp": "MTP / EAGLE chain of depth k (num_speculative_tokens)",
    "hybrid-max": "upper bound: the better of MTP and a lookup each step",
    "suffix-first": "lookup when its match is long enough, else MTP",
    "tree": "MTP chain plus a lookup branch verified together",
}
_SUFFIX_KEYS = ("depth", "max_tree_depth", "max_spec_tokens", "max_spec_factor",
                "max_spec_offset", "min_token_prob", "cache", "max_cached_requests")
_LOOKUP_KEYS = {"pld": ("n", "depth"), "hf-pld": ("max_n", "depth"),
                "ngram": ("min_n", "max_n", "k"), "suffix": _SUFFIX_KEYS}
_HYBRID_KEYS = ("k", "lookup", "threshold", "tree_depth", "easy_threshold", "lookup_k", "n",
                "depth", "min_n", "max_n") + _SUFFIX_KEYS
#: Parameters each policy takes (anything else is refused).
POLICY_KEYS = {"ar": (), **_LOOKUP_KEYS, "mtp": ("k",), "hybrid-max": _HYBRID_KEYS,
               "suffix-first": _HYBRID_KEYS, "tree": _HYBRID_KEYS}
#: Other spellings of parameter names: the field's short names (D, K), vLLM's
#: ``speculative_config`` names and Hugging Face ``generate`` names, per policy.
_KEY_ALIASES = {"D": "depth", "K": "k"}
_VLLM_ALIASES = {
    "pld": {"num_speculative_tokens": "depth"},
    "hf-pld": {"max_matching_ngram_size": "max_n", "prompt_lookup_num_tokens": "depth",
               "num_speculative_tokens": "depth"},
    "ngram": {"prompt_lookup_min": "min_n", "prompt_lookup_max": "max_n",
              "num_speculative_tokens": "k"},
    "suffix": {"num_speculative_tokens": "depth", "suffix_decoding_max_tree_depth":
               "max_tree_depth", "suffix_decoding_max_cached_requests": "max_cached_requests",
               "suffix_decoding_max_spec_factor": "max_spec_factor",
               "suffix_decoding_min_token_prob": "min_token_prob"},
    "mtp": {"num_speculative_tokens": "k"},
}
for _h in ("hybrid-max", "suffix-first", "tree"):
    _VLLM_ALIASES[_h] = {"num_speculative_tokens": "k", "prompt_lookup_min": "min_n",
                         "prompt_lookup_max": "max_n"}
DEFAULT_POLICIES = ("ar", "pld", "ngram", "suffix", "mtp")
STOCHASTIC = ("mtp", "hybrid-max", "suffix-first", "tree")
#: Ranges of the policy parameters (``-p pld:n=..``, ``--n``, ``--depth``, ``--k``, the
#: draft-sweep lists). The lookup window n: 16 tokens already matches only verbatim repeats
#: (vLLM's prompt_lookup_max is typically 4-8); the draft depth: 64 draft tokens is twice the
#: longest run the shipped captures accept (the verify step's staircase makes deeper drafts
#: costlier than any acceptance they could gain); the MTP chain K: the embedded stack-F curve
#: is measured to K=7, 16 leaves room for other curves; a suffix-first threshold is a match
#: length, bounded like the depth.
N_WINDOW = Limit("match window n", "tokens", 1, 16, integer=True,
                 why="16 tokens matches only verbatim repeats")
DRAFT_DEPTH = Limit("draft depth", "tokens", 1, 64, integer=True,
                    why="twice the longest accepted run of the shipped captures")
MTP_K = Limit("MTP chain depth K", "tokens", 1, 16, integer=True,
              why="the stack-F curve is measured to K=7; 16 leaves room for other curves")
LOOKUP_THRESHOLD = Limit("lookup threshold", "tokens", 1, 64, integer=True,
                         why="a match length, bounded like the draft depth")
D_RANGE = (int(DRAFT_DEPTH.low), int(DRAFT_DEPTH.high))
N_RANGE = (int(N_WINDOW.low), int(N_WINDOW.high))


# ----------------------------------------------------------------------------- noise
@dataclass
class NoiseSpec:
    """Run-to-run TPS noise of one real run.

    Attributes
    ----------
    sigma_tps : float or None
        Absolute sd (TPS) of one run; when None, ``cv * baseline TPS``.
    cv : float or None
        Coefficient of variation; None (default) with ``sigma_tps`` None: the platform noise
        prior's predictive noise of one run on a new allocation (:func:`predictive_run_sd`),
        the noise the runs/arm sizing uses. :data:`planner.decide.defaults.ZTEST_CV` (1.16 / 307.08 =
        0.378 %, the published N = 4 repeats) was the default before.
    source : str or None
        Where the figure comes from (None: worded by :func:`run_draft`).
    """

    sigma_tps: float | None = None
    cv: float | None = None
    source: str | None = None

    @property
    def from_prior(self) -> bool:
        """True when neither ``sigma_tps`` nor ``cv`` is given: the platform prior decides."""
        return self.sigma_tps is None and self.cv is None

    def sigma_at(self, tps: float) -> float:
        """Sigma (TPS) of one run at the given TPS level (``sigma_tps``, else ``cv * tps``).

        Raises
        ------
        ValueError
            Neither is set (:attr:`from_prior`: use :func:`predictive_run_sd`).
        """
        if self.sigma_tps is not None:
            return float(self.sigma_tps)
        if self.cv is None:
            raise ValueError("no cv: the noise comes from the platform prior")
        return float(self.cv * tps)


#: Draws of the platform prior's scales behind P(one run beats the baseline) (seeded, 0).
NOISE_PRIOR_DRAWS = 256


def predictive_run_sd(prior, n: int = NOISE_PRIOR_DRAWS,
                      total: np.ndarray | None = None) -> np.ndarray:
    """Relative sd of one run on a new allocation, drawn from a platform noise prior.

    ``sqrt(tau^2 + sigma^2)`` with ``tau`` (between allocations) and ``sigma`` (within one)
    drawn independently from ``prior`` (:class:`models.stats.noise.NoisePrior`): the 20,000 seeded
    draws of :meth:`~models.stats.noise.NoisePrior.total_sd_median` (whose median is the figure
    shown), summarised by their ``n`` quantiles at ``(j + 0.5) / n`` so few points integrate
    over the whole distribution, tails included. Each arm of a one-run-per-arm comparison is its own allocation,
    so the difference has sd ``sqrt(2)`` times this, given the scales.

    Parameters
    ----------
    prior : models.stats.noise.NoisePrior
    n : int
        Number of draws (:data:`NOISE_PRIOR_DRAWS`).
    total : ndarray, optional
        ``prior.total_sd_draws()`` when the caller already holds them.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Relative sds (fractions of the TPS level), > 0.
    """
    total = prior.total_sd_draws() if total is None else total
    # sorted first: the same order statistics, so the same quantiles bit for bit, but
    # np.quantile's partition for 2n kth values took 12-30 ms on 20,000 draws, a sort 1 ms
    return np.quantile(np.sort(total), (np.arange(n) + 0.5) / n)


#: Simulated experiments per design when ``draft`` sizes a run (the assurance planner's
#: minimum is 100; 200 keeps ``planner draft`` within a second of its old run time, Monte
#: Carlo SE of an assurance near 0.8 about 0.03).
SIZING_SIMS = 200


def _as_dict(res) -> dict:
    """A repeat plan as its JSON object (a dict, or a typed result with ``to_dict()``)."""
    return res if isinstance(res, dict) else res.to_dict()


def worth_a_run(gain: np.ndarray, sigma: float, *, baseline_tps: float, prior,
                cost, point: float | None = None, target: float = DEFAULT_ASSURANCE,
                cap: int = 40, sims: int = SIZING_SIMS, seed: int = 0,
                rope: str = DEFAULT_ROPE, rule: str = DEFAULT_RULE,
                model_spread: dict | None = None,
                noise_draws: np.ndarray | None = None) -> dict:
    """Worth-a-run decision from a projected TPS gain distribution, sized by the assurance
    planner (:func:`planner.decide.repeats.plan_repeats`), the one sizing rule of every command.

    Parameters
    ----------
    gain : array, shape (B,)
        Bootstrap draws of the projected TPS gain (policy - baseline, TPS); the effect the
        planner simulates from (resampled).
    sigma : float
        Run-to-run sd of one run's TPS (TPS), for P(one run beats the baseline) only (with
        ``noise_draws``: the figure shown, their median times ``baseline_tps``).
    baseline_tps : float
        TPS level of the baseline (converts TPS to the log scale).
    prior : models.stats.noise.NoisePrior
        Noise prior of the platform (simulation and analysis).
    cost : planner.decide.costs.CostModel
        The platform's cost model (:func:`planner.decide.costs.cost_model`).
    point : float, optional
        Point projection of the gain (default: mean of ``gain``).
    target : float
        Assurance to reach: P(the planned experiment ends with the right call), averaged over
        the noise prior and the projection's uncertainty.
    cap : int
        Most runs per arm considered.
    sims : int
        Simulated experiments per design (:data:`SIZING_SIMS`).
    seed : int
    rope, rule : str
        Decision rule of the planned experiment (default the verdict's HDI + ROPE labels).
    model_spread : dict, optional
        For a row projected by the content acceptance model on prompts it was not calibrated
        on: ``tps_pi_low``, ``tps_pi_high`` (its 90 % TPS prediction interval),
        ``gain_pi_low``, ``gain_pi_high`` (the same less the baseline's TPS) and ``sd_tps``
        (the model's predictive sd of the row's TPS). ``gain`` must then already carry that
        spread (:func:`model_spread_draws`); it only words the verdict, and says when the
        model's uncertainty, not run noise, dominates (``sd_tps`` > the run-noise sd of a
        one-run-per-arm difference, ``sigma * sqrt(2)``). Stored as ``model_uncertainty``.

    noise_draws : array, optional
        Relative sds of one run drawn from the platform prior (:func:`predictive_run_sd`):
        P(one run beats the baseline) then integrates over them instead of using ``sigma``.

    Returns
    -------
    dict
        ``gain_tps`` (point/mean/ci), ``sigma_tps``, ``p_gain_positive``,
        ``p_run_beats_baseline`` (one run per arm), ``runs_per_arm`` (None when over the cap
        or no gain), ``assurance_at_n``, ``assurance`` (the target), ``rule``, ``rope``,
        ``run_cap``, ``over_run_cap``, the cost model, ``cost_usd`` (both arms, $),
        ``worth``, ``code`` (``worth``, ``no_gain``, ``over_cap``) and ``verdict`` (one line).

    Raises
    ------
    InputError
        Non-positive sigma or cap < 1.
    """
    g = np.asarray(gain, float)
    if not (sigma > 0 and np.isfinite(sigma)):
        raise InputError(f"TPS noise sigma must be > 0, got {sigma}", field="sigma_tps")
    if cap < 1:
        raise InputError("run cap must be >= 1", field="run_cap")
    pt = float(g.mean() if point is None else point)
    p_pos = float((g > 0).mean())
    # the Normal CDF on the stdlib's erfc (models.stats.special; within 1e-14 of scipy.special.ndtr,
    # whose import alone was a fifth of a warm planner draft)
    from models.stats.special import mean_ndtr_ratio, ndtr

    if noise_draws is None:
        p_one = float(ndtr(g / (sigma * math.sqrt(2))).mean())
    else:
        sd = baseline_tps * math.sqrt(2) * np.asarray(noise_draws, float)
        p_one = mean_ndtr_ratio(g, sd)  # = mean over sd of ndtr(g / s).mean(), bit for bit
    n_needed = assurance = cost_usd = None
    if pt > 0:
        from planner.decide.repeats import plan_repeats

        plan = _as_dict(plan_repeats(
            g, baseline_tps=baseline_tps, prior=prior, rule=rule, rope=rope, target=target,
            designs=("separate",), max_runs=cap, price_per_hour=cost.price_per_hour,
            minutes_per_run=cost.minutes_per_run, startup_minutes=cost.startup_minutes,
            billed_per_minute=cost.billed_per_minute, sims=sims, seed=seed,
            search_beyond_cap=False))
        rec = plan["recommended"]
        if rec is not None:
            n_needed, assurance, cost_usd = (int(rec["runs_per_arm"]), float(rec["assurance"]),
                                             float(rec["cost_usd"]))
    worth = pt > 0 and n_needed is not None
    if pt <= 0:
        code, verdict = "no_gain", f"not worth a run: projected gain {pt:+.1f} TPS <= 0"
    elif n_needed is None:
        code = "over_cap"
        verdict = (f"not worth a run: confirming {pt:+.1f} TPS needs more than {cap} runs per "
                   f"arm (P(gain > 0) = {p_pos:.2f})")
    else:
        code = "worth"
        if model_spread is None:
            verdict = (f"worth a run: {pt:+.1f} TPS projected, P(one run beats baseline) = "
                       f"{p_one:.2f}; {n_needed} run(s) per arm confirm it with assurance "
                       f"{assurance:.2f} (${cost_usd:.2f})")
        else:
            verdict = (f"worth a run: {pt:+.1f} TPS projected (90 % PI "
                       f"[{model_spread['gain_pi_low']:+.1f}, {model_spread['gain_pi_high']:+.1f}]"
                       " on a new prompt set), "
                       f"P(the run beats the baseline, over that PI) = {p_one:.2f}; "
                       f"{n_needed} run(s) per arm confirm it with assurance {assurance:.2f} "
                       f"(${cost_usd:.2f})")
    if model_spread is not None:
        model_spread = {**model_spread,
                        "dominates_run_noise": bool(model_spread["sd_tps"]
                                                    > sigma * math.sqrt(2))}
        if model_spread["dominates_run_noise"] and code != "no_gain":
            verdict += ("; the acceptance model's uncertainty on these prompts, not run "
                        "noise, dominates")
    lo, hi = np.quantile(g, [0.025, 0.975]) if g.size > 1 else (pt, pt)
    return {"gain_tps": {"point": pt, "mean": float(g.mean()), "ci_low": float(lo),
                         "ci_high": float(hi)},
            "sigma_tps": float(sigma), "p_gain_positive": p_pos, "p_run_beats_baseline": p_one,
            "runs_per_arm": n_needed, "assurance_at_n": assurance, "assurance": target,
            "rule": rule, "rope": rope, "sims": sims, "run_cap": cap,
            "over_run_cap": n_needed is None and pt > 0,
            "minutes_per_run": cost.minutes_per_run, "startup_minutes": cost.startup_minutes,
            "price_per_hour": cost.price_per_hour, "cost_usd": cost_usd, "worth": bool(worth),
            "code": code, "verdict": verdict,
            **({} if model_spread is None else {"model_uncertainty": model_spread})}


#: Level of the "new prompt set" prediction interval: the content model's (its
#: :func:`models.drafting.acceptance_model.for_capture` default ``level``), and the level of
#: the bootstrap interval combined with it.
_PI_LEVEL = 0.90
#: Two-sided 90 % Normal quantile (:data:`_PI_LEVEL`).
_Z90 = 1.6448536269514722


def model_spread_draws(prediction, tps_draws: np.ndarray, tps_point: float, tpf: dict,
                       rng: np.random.Generator) -> tuple:
    """TPS prediction interval of a content-model row, and its bootstrap TPS draws widened by
    the model's own uncertainty.

    The row's tokens/forward 90 % prediction interval (``tpf['pi_low']``, ``tpf['pi_high']``,
    :func:`models.drafting.acceptance_model.interval_fields`: model and bootstrap error
    combined) is mapped through the same cost model as the point value: at the row's step
    time TPS is proportional to tokens/forward (``ForwardCostModel.tps`` and the
    ``--baseline-tps`` scaling both are), so ``tps_pi = tps_point * pi / tpf_point``. For the
    draws, the model-only part (``prediction.ratio_low``, ``ratio_high``: coefficient error,
    prompt residuals, set effect) is taken as Normal on the log scale with sd
    ``-log(ratio_low) / z90`` below the point and ``log(ratio_high) / z90`` above (a split
    Normal that reproduces the 90 % bounds), and one independent factor multiplies each
    bootstrap draw, so sampling and model error both spread the gain.

    Parameters
    ----------
    prediction : models.drafting.acceptance_model.CapturePrediction
    tps_draws : array, shape (B,)
        Bootstrap draws of the row's projected TPS.
    tps_point : float
        Point projection (TPS).
    tpf : dict
        The row's tokens/forward summary (``point``, ``pi_low``, ``pi_high``).
    rng : numpy.random.Generator

    Returns
    -------
    tuple
        (draws, shape (B,), TPS; ``{"tps_pi_low", "tps_pi_high", "sd_tps", "log_sd_low",
        "log_sd_high", "note"}``).
    """
    s_lo = max(-math.log(prediction.ratio_low), 0.0) / _Z90
    s_hi = max(math.log(prediction.ratio_high), 0.0) / _Z90
    z = rng.standard_normal(np.shape(tps_draws))
    draws = np.asarray(tps_draws, float) * np.exp(np.where(z < 0, s_lo, s_hi) * z)
    scale = tps_point / tpf["point"]
    return draws, {
        "tps_pi_low": float(tpf["pi_low"] * scale), "tps_pi_high": float(tpf["pi_high"] * scale),
        "sd_tps": float(tps_point * 0.5 * (s_lo + s_hi)), "log_sd_low": s_lo,
        "log_sd_high": s_hi,
        "note": ("P(the run beats the baseline) and the assurance integrate over the content "
                 "model's prediction interval (Normal on the log scale, split at the point)")}


# ----------------------------------------------------------------------------- cost model
#: Harness efficiency of a cost file (measured TPS / modelled TPS): above 0, at most 2 (the
#: calibrated stack-F value is 0.9485; a harness twice as fast as its own step time is a
#: wrong unit, not a measurement).
HARNESS_EFFICIENCY = Limit("harness efficiency", "", 0.0, 2.0, low_open=True,
                           why="calibrated 0.9485; above 2 the step times are wrong")
#: A staircase step (``staircase_rel`` values): a fraction of the M=1 verify time, 0 to 10
#: (measured +6.75 % to +24.7 % on the A10G).
STAIRCASE_REL = Limit("staircase step", "x the M=1 verify", 0.0, 10.0,
                      why="measured 0.07-0.25 on the A10G")
#: The verify rows at which a staircase step starts (``staircase_rel`` keys): 1 to 10,000
#: (the deepest tree verifies 1 + 16 + 64 rows).
STAIRCASE_ROWS = Limit("staircase rows", "rows", 1, 10_000, integer=True,
                       why="the deepest draft verifies 81 rows")
#: The limit of each number of the step-time model (a ``--cost-file``'s fields,
#: ``--sync-factor``, ``--drafter-ms``); ``staircase_rel`` is checked item by item.
COST_FIELD_LIMITS = {
    "verify_base_ms": limits.STEP_MS, "verify_per_row_ms": limits.STEP_MS,
    "drafter_per_token_ms": limits.STEP_MS, "host_ms": limits.STEP_MS,
    "sync_add_ms": limits.STEP_MS, "sync_factor": limits.SYNC_FACTOR,
    "harness_efficiency": HARNESS_EFFICIENCY}


def check_cost_field(name: str, value, file: str | None = None) -> None:
    """Range-check one field of the step-time model before it is built
    (:func:`models.drafting.cost.load_cost_model`'s ``check`` hook).

    Parameters
    ----------
    name : str
        Field of :class:`models.drafting.cost.ForwardCostModel` (``verify_base_ms``...).
    value : any
        Its value as the cost file or the option gives it.
    file : str, optional
        The cost file (None for an option such as ``--sync-factor``).

    Raises
    ------
    InputError
        Outside :data:`COST_FIELD_LIMITS` (``*_ms``: :data:`planner.io.limits.STEP_MS`,
        ``sync_factor``: :data:`planner.io.limits.SYNC_FACTOR`), or a ``staircase_rel`` that is not
        an object of rows (:data:`STAIRCASE_ROWS`) to steps (:data:`STAIRCASE_REL`).
    """
    if name == "staircase_rel":
        if not isinstance(value, dict):
            raise InputError(f"expected an object {{rows: relative step}}, got {value!r}",
                             file=file, field=name)
        for k, v in value.items():
            STAIRCASE_ROWS.check(k, field=f"{name}.{k}", file=file)
            STAIRCASE_REL.check(v, field=f"{name}.{k}", file=file)
        return
    lim = COST_FIELD_LIMITS.get(name)
    if lim is not None:
        lim.check(value, field=name, file=file)


# ----------------------------------------------------------------------------- evidence
#: How much capture a projection needs. ``refuse``: below any of these ``planner draft`` and
#: ``planner draft-sweep`` exit 2; ``limited``: below any of these the result carries
#: ``evidence.level = "limited"`` and worth-a-run says "too little evidence" instead of a
#: label. Walked tokens are completion tokens from the walk's start (``--convention``); one
#: AR step (forward) per walked token.
#:
#: Source: 95 % percentile-bootstrap intervals of pld(n=2, depth=24) tokens/forward on
#: random subsets of the shipped captures (150 subsets x 400 replicates each,
#: docs/drafting.md "How much capture a projection needs"): with full-length completions the
#: interval covers the whole capture's value in 44-45 % of subsets of 2 prompts, 66-74 % of
#: 3, 79-81 % of 4, 83-91 % of 8 and 90-95 % from 12 prompts on (ar_reference_bf16 and
#: ar_longform_aime_int4); with completions cut to 4 tokens or fewer pld's tokens/forward is
#: exactly 1.000 with a zero-width interval (nothing to learn), at 8 tokens the interval
#: covers the same-length value in 59-78 % of subsets of 8-16 prompts, at 16 tokens 94 % with
#: 16 prompts; below 512 walked tokens coverage stays under 0.90 whatever the split.
EVIDENCE_FLOORS = {
    "refuse": {"prompts": 3, "tokens_per_prompt": 4, "tokens": 32},
    "limited": {"prompts": 12, "tokens_per_prompt": 16, "tokens": 512},
}
_EVIDENCE_WORDS = {"prompts": "prompts", "tokens_per_prompt": "walked tokens per prompt "
                   "(median)", "tokens": "walked tokens (AR steps)"}


def capture_evidence(n_prompts: int, walked: np.ndarray, *, file: str | None = None) -> dict:
    """How far a capture supports a projection (:data:`EVIDENCE_FLOORS`).

    Parameters
    ----------
    n_prompts : int
        Prompts in the capture.
    walked : array of int, shape (P,)
        Walked completion tokens per prompt (completion length minus the walk's start).
    file : str, optional
        Capture name for the error message.

    Returns
    -------
    dict
        ``level`` (``"ok"`` or ``"limited"``), ``prompts``, ``tokens``,
        ``tokens_per_prompt`` (median), ``floors`` (the limited floors), ``reasons`` (one
        phrase per floor not met) and ``note`` (one sentence, None when ok).

    Raises
    ------
    InputError
        Below a refuse floor, naming the capture and the quantity.
    """
    w = np.asarray(walked, np.int64)
    have = {"prompts": int(n_prompts), "tokens_per_prompt": float(np.median(w)) if w.size else 0.0,
            "tokens": int(w.sum())}

    def short(floors):
        return [f"{have[k]:g} {_EVIDENCE_WORDS[k]} < {v}" for k, v in floors.items()
                if have[k] < v]

    bad = short(EVIDENCE_FLOORS["refuse"])
    if bad:
        raise InputError(f"too little capture to project from: {'; '.join(bad)} (see "
                         "docs/drafting.md, How much capture a projection needs)",
                         file=file, field="completion_token_ids")
    reasons = short(EVIDENCE_FLOORS["limited"])
    return {"level": "limited" if reasons else "ok", **have,
            "floors": dict(EVIDENCE_FLOORS["limited"]), "reasons": reasons,
            "note": ("too little evidence: " + "; ".join(reasons) + ". Bootstrap intervals "
                     "on a capture this small cover a full capture's value less often than "
                     "they claim, so no projection here is a basis for a run") if reasons
            else None}


def _withhold(war: dict, evidence: dict) -> dict:
    """A worth-a-run dict relabelled "too little evidence" (numbers kept, label withheld)."""
    g = war["gain_tps"]
    return {**war, "worth": False, "code": "too_little_evidence",
            "verdict": (f"too little evidence ({'; '.join(evidence['reasons'])}): the "
                        f"projected {g['point']:+.1f} TPS [{g['ci_low']:+.1f}, "
                        f"{g['ci_high']:+.1f}] is no basis for a run; capture more prompts "
                        "or longer completions")}


# ----------------------------------------------------------------------------- results
#: ``schema`` of a saved ``planner draft`` / ``planner draft sweep`` result.
DRAFT_SCHEMA = "spec-planner/draft/1"
SWEEP_SCHEMA = "spec-planner/draft-sweep/1"

@dataclass(frozen=True)
class DraftResult:
    """Result of :func:`run_draft` (``command`` ``draft``).

    One field per key of the JSON object, in its order; nested objects stay plain dicts and
    lists (see docs/drafting.md "JSON"). :meth:`to_dict` writes the JSON object,
    :meth:`from_dict` reads a saved one back (without ``samples``).

    Attributes
    ----------
    capture : dict
        ``path``, ``n_prompts``, ``n_tokens``, ``stop_at_eos``, ``eos_tokens_removed``,
        ``stratified_groups``, ``walk_start``.
    settings : dict
        Bootstrap, seed, baseline, TPS anchor, noise (``sigma_tps`` in TPS per run), run cap,
        cost model.
    acceptance : dict
        MTP acceptance curve used.
    correlation : dict
        Lookup/MTP easiness correlation mode and calibrations.
    policies : list of dict
        Per policy: tokens/forward, projected TPS, speed-up (each ``{point, ci_low, ci_high,
        ...}``), ``worth_a_run`` (None for the baseline), ...
    worth_a_run : dict or None
        Best runnable policy and its one-line verdict (None when there is no candidate);
        ``headline_policy`` leads the verdict and ``basis`` (``capture``/``model``) says whether
        its numbers come from the capture's tokens (:func:`_headline_row`).
    evidence : dict or None
        How far the capture supports a projection (:func:`capture_evidence`); None in
        results saved before it existed.
    inputs : dict or None
        What the result was computed from (files with their SHA-256, options, version), as
        recorded by the command layer (:func:`planner.report.output.emit`).
    samples : dict of str to ndarray, shape (B,)
        Bootstrap draws of tokens/forward per policy label (for the plot); not serialised,
        empty after :meth:`from_dict`.
    """

    capture: dict
    settings: dict
    acceptance: dict
    correlation: dict
    policies: list
    worth_a_run: dict | None
    evidence: dict | None = None
    inputs: dict | None = None
    samples: dict = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict:
        """The JSON object (``samples`` left out; ``inputs`` only when recorded)."""
        head = {"schema": DRAFT_SCHEMA, "command": "draft"}
        if self.inputs is not None:
            head["inputs"] = self.inputs
        return {**head, "capture": self.capture, "evidence": self.evidence,
                "settings": self.settings, "acceptance": self.acceptance,
                "correlation": self.correlation, "policies": self.policies,
                "worth_a_run": self.worth_a_run}

    @classmethod
    def from_dict(cls, d: dict) -> "DraftResult":
        """Read a saved ``planner draft --json`` object.

        Raises
        ------
        InputError
            Not a draft result, or a key missing.
        """
        _check_saved(d, "draft", ("capture", "settings", "acceptance", "correlation",
                                  "policies", "worth_a_run"))
        return cls(d["capture"], d["settings"], d["acceptance"], d["correlation"],
                   d["policies"], d["worth_a_run"], evidence=d.get("evidence"),
                   inputs=d.get("inputs"))


@dataclass(frozen=True)
class SweepResult:
    """Result of :func:`run_sweep` (``command`` ``draft-sweep``).

    Attributes
    ----------
    capture : str
        Capture path.
    n_prompts : int
    baseline_tps : float or None
        Measured baseline TPS the projections are anchored to (None: the cost model's).
    cost_model : str
        Cost-model name.
    seed, mc_replicates : int
    acceptance : str
        Source of the MTP acceptance curve.
    rows : list of dict
        ``policy``, ``params``, ``tokens_per_forward``, ``step_ms`` (ms), ``speedup_vs_ar``,
        ``projected_tps`` (TPS), ``from_capture`` (False: the numbers come from the MTP
        acceptance curve, the capture gives only lengths), sorted by projected TPS,
        descending.
    evidence : dict or None
        :func:`capture_evidence` of the capture.
    inputs : dict or None
        Files, options and version, as recorded by the command layer.
    """

    capture: str
    n_prompts: int
    baseline_tps: float | None
    cost_model: str
    seed: int
    mc_replicates: int
    acceptance: str
    rows: list
    evidence: dict | None = None
    inputs: dict | None = None

    def to_dict(self) -> dict:
        """The JSON object (``inputs`` only when recorded)."""
        head = {"schema": SWEEP_SCHEMA, "command": "draft-sweep"}
        if self.inputs is not None:
            head["inputs"] = self.inputs
        return {**head, "capture": self.capture, "n_prompts": self.n_prompts,
                "evidence": self.evidence,
                "baseline_tps": self.baseline_tps, "cost_model": self.cost_model,
                "seed": self.seed, "mc_replicates": self.mc_replicates,
                "acceptance": self.acceptance, "rows": self.rows}

    @classmethod
    def from_dict(cls, d: dict) -> "SweepResult":
        """Read a saved ``planner draft-sweep --json`` object.

        Raises
        ------
        InputError
            Not a sweep result, or a key missing.
        """
        keys = ("capture", "n_prompts", "baseline_tps", "cost_model", "seed", "mc_replicates",
                "acceptance", "rows")
        _check_saved(d, "draft-sweep", keys)
        return cls(**{k: d[k] for k in keys}, evidence=d.get("evidence"),
                   inputs=d.get("inputs"))


def _check_saved(d: dict, command: str, keys: Sequence[str]) -> None:
    if d.get("command") != command:
        raise InputError(f"not a {command} result (command {d.get('command')!r})",
                         field="command")
    missing = [k for k in keys if k not in d]
    if missing:
        raise InputError(f"{command} result lacks {', '.join(missing)}", field=missing[0])


# ----------------------------------------------------------------------------- policies
@dataclass
class PolicySpec:
    """A drafting policy and its parameters.

    ``name`` in :data:`POLICY_NAMES`; ``params`` as accepted by the lookup drafter
    (``n``/``depth`` for pld; ``min_n``/``max_n``/``k`` for ngram; suffix options) and
    ``k`` for mtp; hybrids take ``k``, ``lookup`` (pld/ngram/suffix), ``threshold``,
    ``tree_depth`` plus the lookup's parameters.
    """

    name: str
    params: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        if not self.params:
            return self.name
        return self.name + "(" + ",".join(f"{k}={v}" for k, v in self.params.items()) + ")"


_INT_RE = re.compile(r"^-?\d+$")


def _num(v: str):
    """A policy parameter's value: an int, a float by the one number grammar
    (:func:`planner.io._parse.to_float`; ``3_00`` and ``0x10`` stay text and are refused by the
    range checks), or the text itself (``lookup=pld``)."""
    from planner.io._parse import to_float

    if _INT_RE.match(v):
        return int(v)
    try:
        return to_float(v)
    except ValueError:
        return v


#: The one grammar of a policy spec (``--policy``, plan files), for ``--help`` and errors.
POLICY_GRAMMAR = ("NAME or NAME:KEY=VALUE,KEY=VALUE,... (a ':' needs at least one pair; "
                  "no space, no empty item)")


def parse_policy(text: str, defaults: dict | None = None) -> PolicySpec:
    """Parse ``name`` or ``name:key=val,key=val`` (e.g. ``pld:n=3,depth=16``), the one grammar
    :data:`POLICY_GRAMMAR`: ``pld:`` and ``pld:,`` are both refused.

    The draft depth of a lookup policy is ``depth`` in every output (labels, JSON); ``D``,
    vLLM's ``num_speculative_tokens`` and (hf-pld) ``prompt_lookup_num_tokens`` are its
    aliases. ``K`` is an alias of ``k``; vLLM's ``speculative_config`` names
    (``prompt_lookup_min``, ``prompt_lookup_max``, ``num_speculative_tokens``, the
    ``suffix_decoding_*`` options) and Hugging Face's (``max_matching_ngram_size``,
    ``prompt_lookup_num_tokens`` for ``hf-pld``) are accepted and stored under the canonical
    names of :data:`POLICY_KEYS`.

    Raises
    ------
    InputError
        Unknown policy, malformed parameters, a parameter the policy does not take, or one
        given twice (also under two spellings).
    """
    bad = next((i for i, c in enumerate(text) if c.isspace()), None)
    if bad is not None:
        raise InputError(f"policy {text!r}: whitespace {text[bad]!r} at position {bad + 1} "
                         f"(grammar {POLICY_GRAMMAR})", field="policy")
    name, sep, rest = text.partition(":")
    name = _ALIASES.get(name.lower(), name.lower())
    if name not in POLICY_NAMES:
        raise InputError(f"unknown policy {text!r} (one of {', '.join(POLICY_NAMES)})",
                         field="policy")
    params = dict(defaults or {})
    given: dict = {}
    if sep and not rest:
        raise InputError(f"policy {text!r}: ':' with no parameters (write {name}, or "
                         f"{name}:key=value; grammar {POLICY_GRAMMAR})", field="policy")
    if rest:
        for kv in rest.split(","):
            if "=" not in kv or not kv.split("=", 1)[0] or not kv.split("=", 1)[1]:
                raise InputError(f"policy {text!r}: parameter {kv!r} is not key=value "
                                 f"(grammar {POLICY_GRAMMAR})", field="policy")
            k, v = kv.split("=", 1)
            raw = k
            k = raw.replace("-", "_")
            k = _KEY_ALIASES.get(k, k)
            k = _VLLM_ALIASES.get(name, {}).get(k, k)
            if k not in POLICY_KEYS[name]:
                takes = ", ".join(POLICY_KEYS[name]) or "no parameters"
                raise InputError(f"policy {name} does not take {raw!r} (takes: {takes})",
                                 field="policy")
            if k in given:
                raise InputError(f"policy {name}: {k} given twice ({given[k]!r} and {raw!r})",
                                 field="policy")
            given[k] = raw
            params[k] = _num(v)
    return PolicySpec(name, params)


def _check_range(v, lim: Limit, fld: str) -> None:
    """``v`` (a policy parameter, None when not set) is a whole number in ``lim``."""
    if v is None:
        return
    if not isinstance(v, int) or isinstance(v, bool):
        raise InputError(f"must be a whole number in {lim.describe()}, got {v!r}", field=fld)
    lim.check(v, field=fld)


def validate_policy(spec: PolicySpec) -> None:
    """Range checks: K 1..16, D 1..64, n 1..16, thresholds >= 1.

    Raises
    ------
    InputError
    """
    p = spec.params
    for kk in ("k", "lookup_k"):
        _check_range(p.get(kk), MTP_K, kk)
    for d in ("depth", "tree_depth", "max_spec"):
        _check_range(p.get(d), DRAFT_DEPTH, d)
    for n in ("n", "min_n", "max_n"):
        _check_range(p.get(n), N_WINDOW, n)
    if p.get("min_n") is not None and p.get("max_n") is not None and p["min_n"] > p["max_n"]:
        raise InputError(f"min_n {p['min_n']} > max_n {p['max_n']}", field="min_n")
    _check_range(p.get("threshold"), LOOKUP_THRESHOLD, "threshold")
    if spec.name in ("hybrid-max", "suffix-first", "tree"):
        lk = p.get("lookup", "suffix")
        if lk not in _LOOKUP_KEYS:
            raise InputError(f"hybrid lookup must be pld, hf-pld, ngram or suffix, got {lk!r}",
                             field="lookup")


# ----------------------------------------------------------------------------- capture
def default_capture_path() -> Path:
    """The shipped example capture ``examples/captures/ar_reference_bf16.jsonl.gz`` (repo
    checkout), else the package copy ``planner/data/draft_default_capture.jsonl.gz``.

    Raises
    ------
    InputError
        Neither exists.
    """
    repo = Path(__file__).resolve().parents[2] / "examples" / "captures" / \
        "ar_reference_bf16.jsonl.gz"
    if repo.is_file():
        return repo
    pkg = Path(str(resources.files("planner").joinpath("data", "draft_default_capture.jsonl.gz")))
    if pkg.is_file():
        return pkg
    raise InputError("no CAPTURE given and the shipped example capture was not found",
                     field="CAPTURE")


#: Name of the shipped example capture in results (never a machine path).
EMBEDDED_CAPTURE = "embedded:draft_default_capture.jsonl.gz"


def capture_name(capture_path) -> str:
    """The capture as results name it: the path as given, or :data:`EMBEDDED_CAPTURE` for
    the shipped example (whose location differs between a checkout and an install)."""
    return EMBEDDED_CAPTURE if capture_path is None else str(capture_path)


_NON_LOOKUP = ("lookup", "threshold", "tree_depth", "easy_threshold", "gamma", "k")


def lookup_policy(name: str, params: dict):
    """The :mod:`models.drafting.lookup` policy object for ``pld`` / ``hf-pld`` / ``ngram`` /
    ``suffix``.

    Parameter names: pld ``n`` (2), ``depth`` (D, 24); hf-pld ``max_n``
    (``max_matching_ngram_size``, 2), ``depth`` (``prompt_lookup_num_tokens``, 10); ngram ``min_n`` (2), ``max_n`` (6),
    ``k`` (5; ``lookup_k`` inside a hybrid); suffix ``depth`` (max_spec_tokens, 24),
    ``max_tree_depth`` (24), ``max_spec_factor`` (1.0), ``min_token_prob`` (0.1), ``cache``
    (fifo/loo/none), ``max_cached_requests`` (10000). Defaults are the lookup module's
    (vLLM defaults, see docs/drafting_lookup.md).

    Raises
    ------
    InputError
        Unknown parameter or invalid value.
    """
    from models.drafting import lookup as lk

    p = dict(params)
    try:
        if name == "pld":
            kw = {"n": p.pop("n", 2), "D": p.pop("depth", 24)}
            cls = lk.PLD
        elif name == "hf-pld":
            kw = {"max_matching_ngram_size": p.pop("max_n", 2),
                  "prompt_lookup_num_tokens": p.pop("depth", 10)}
            cls = lk.HFPromptLookup
        elif name == "ngram":
            kw = {"prompt_lookup_min": p.pop("min_n", 2), "prompt_lookup_max": p.pop("max_n", 6),
                  "k": p.pop("lookup_k", p.pop("k", 5))}
            cls = lk.NGram
        elif name == "suffix":
            kw = {}
            if "depth" in p:
                kw["max_spec_tokens"] = p.pop("depth")
            for key in ("max_tree_depth", "max_spec_tokens", "max_spec_factor",
                        "max_spec_offset", "min_token_prob", "cache", "max_cached_requests"):
                if key in p:
                    kw[key] = p.pop(key)
            cls = lk.Suffix
        else:
            raise InputError(f"{name} is not a lookup policy", field="policy")
        for key in _NON_LOOKUP:
            p.pop(key, None)
        if p:
            raise InputError(f"unknown parameter(s) for {name}: {', '.join(sorted(p))}",
                             field="policy")
        return cls(**kw)
    except (ValueError, TypeError) as exc:
        raise InputError(f"bad parameters for {name}: {exc}", field="policy") from None


def _lookup_profile(capture, name: str, params: dict):
    """The capture's :class:`models.drafting.lookup.ProfileBatch` for a lookup policy (what
    :func:`models.drafting.walk.walk` takes as is)."""
    from models.drafting import lookup as lk

    return lk.draft_profiles(capture, policy=lookup_policy(name, params))


def _profile_lists(batch):
    """Per-prompt (accept_len, match_len, proposed) lists of a profile batch (views), as the
    hybrids take them."""
    profs = batch.profiles()
    return ([p.accept_len for p in profs], [p.match_len for p in profs],
            [p.proposed for p in profs])


# ----------------------------------------------------------------------------- main
@dataclass
class _Run:
    spec: PolicySpec
    res: object  # WalkResult
    extra: dict = field(default_factory=dict)


def _acceptance_for(capture, k: int, curve: Sequence[float] | None, acceptance: str | None,
                    per_prompt: str | None):
    from models.drafting.acceptance import load_acceptance, per_prompt_counters

    model = load_acceptance(acceptance, curve=curve)
    note = None
    if model.prompt_curves is not None:  # a per-prompt file given: must match the capture
        cur = model.curves_for(capture.ids, file=str(acceptance))
    elif per_prompt and per_prompt.lower() != "none" and curve is None and acceptance is None:
        from models.drafting.acceptance import calibration_ids

        rows = per_prompt_counters(per_prompt)
        ids = {r["id"] for r in rows}
        # matched by prompt tokens, not ids: a capture of some calibration prompts (any ids,
        # any order) reads their measured counters; prompts outside them, the content model
        cal = calibration_ids(capture.prompts)
        matched = [i for i, c in enumerate(cal) if c is not None and c in ids]
        if matched and len(matched) < len(cal):
            model, cur, note = _mixed_acceptance(capture, k, per_prompt, cal, matched,
                                                 len(ids), model.curve)
        elif len(matched) == len(cal):
            model = load_acceptance(per_prompt=per_prompt)
            n_cal = len(set(cal))
            model.meta["model"] = (
                "measured per-prompt counters (calibration prompts)" if n_cal == len(ids) else
                f"measured per-prompt counters ({n_cal} of the {len(ids)} calibration "
                "prompts, matched by prompt tokens)")
            cur = model.curves_for(cal, subset=True)
        else:
            from models.drafting.acceptance_model import for_capture

            pred = for_capture(capture, model.curve, min(k, model.k))
            model.meta.update(content=pred, model=pred.model["model"])
            note = ("prompts are not the calibration prompts (prompt_set_hash 43df0c18b56abde3):"
                    " per-prompt curves predicted by the content model")
            cur = _to_depth(pred.curves, model.k)
    else:
        cur = model.curves_for(capture.ids)
    if k > model.k:
        raise InputError(f"K={k} exceeds the acceptance curve depth {model.k}; give a deeper "
                         "acceptance curve", field="k")
    return model, cur[:, :k], note


def _to_depth(curves: np.ndarray, k: int) -> np.ndarray:
    """Content-model curves (P, K') padded to depth ``k`` with a negligible survival (1e-9)
    beyond K' (the model predicts up to its calibration depth)."""
    return np.pad(curves, ((0, 0), (0, k - curves.shape[1])), constant_values=1e-9)


def _mixed_acceptance(capture, k: int, per_prompt: str, cal: list, matched: list,
                      n_cal: int, base_curve: np.ndarray):
    """(model, curves, note) of a capture holding some calibration prompts and some others.

    The matched prompts read their measured per-prompt curves, the others the content
    model's; the content model's relative prediction interval of the others' set figure
    ``r`` acts on the whole set through the set formula ``sum L / sum(L / tpf)``: with
    ``A`` and ``B`` the matched and the other prompts' ``sum L / tpf``, the whole set moves
    by ``(A + B) / (A + B / r)``, so a few foreign prompts widen the interval a little,
    not as if every prompt were predicted.
    """
    from dataclasses import replace

    from models.drafting.acceptance import load_acceptance
    from models.drafting.acceptance_model import for_capture

    model = load_acceptance(per_prompt=per_prompt)
    taken = set(matched)
    others = [i for i in range(len(cal)) if i not in taken]
    kk = min(k, model.k)
    pred = for_capture(capture.subset(others), base_curve, kk)
    cur = np.empty((len(cal), model.k))
    cur[matched] = model.curves_for([cal[i] for i in matched], subset=True)
    cur[others] = _to_depth(pred.curves, model.k)
    ln = np.array([len(c) for c in capture.completions], float)
    per = ln / (1 + cur[:, :kk].sum(1))
    a, b = float(per[matched].sum()), float(per[others].sum())

    def whole(r: float) -> float:
        return (a + b) / (a + b / r)

    n_m = len(set(cal[i] for i in matched))
    label = (f"measured per-prompt counters for {n_m} of the {n_cal} calibration prompts "
             f"(matched by prompt tokens), {pred.model['model']} for the other {len(others)}")
    model.meta.update(content=replace(pred, ratio_low=whole(pred.ratio_low),
                                      ratio_high=whole(pred.ratio_high),
                                      model={**pred.model, "prompts_predicted": len(others)}),
                      model=label)
    note = (f"{len(others)} of the {len(cal)} prompts are not calibration prompts "
            "(prompt_set_hash 43df0c18b56abde3): their curves are predicted by the content "
            f"model; the other {len(matched)} read their measured counters")
    return model, cur, note


def _by_prompt(stats: dict, groups, cluster: np.ndarray) -> tuple[dict, list | None]:
    """Each statistic's per-record columns summed per distinct prompt (``cluster``, shape
    (P,), values 0..C-1 by first appearance); the group of each distinct prompt is its
    first record's. Returns (stats with shape (R, C) / (C,), groups of length C or None)."""
    order = np.argsort(cluster, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(cluster[order]) != 0])
    first = order[starts]

    def agg(a):
        a = np.asarray(a, float)
        return np.add.reduceat(a[..., order], starts, axis=-1)

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
        Default :data:`DEFAULT_POLICIES` (ar, pld n=2 D=24, ngram, suffix, mtp K=7).
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
    from models.drafting.hybrid import calibrate_gamma, easiness_state, run_hybrid
    from models.drafting.walk import walk

    from planner.io.limits import check_all  # plausible ranges (no 10^8 replicates, no 1e308)

    check_all([("bootstrap", n_boot, "bootstrap"), ("max_runs_per_arm", run_cap, "run_cap"),
               ("mc_reps", mc_reps, "mc_reps"), ("baseline_tps", baseline_tps, "baseline_tps"),
               ("sigma_tps", (noise or NoiseSpec()).sigma_tps, "sigma_tps")])
    if not isinstance(correlation, str):
        check_all([("correlation", correlation, "correlation")])
    policies = list(policies) if policies else [parse_policy(p) for p in DEFAULT_POLICIES]
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
        raise InputError(f"every completion needs more than {start} token(s)", file=str(path),
                         field="completion_token_ids")
    evidence = capture_evidence(len(cap), lengths - start, file=capture_name(capture_path))
    mtp_ks = [sp.params.get("k", 7) for sp in [*policies, baseline] if sp.name in STOCHASTIC]
    kmax = max(mtp_ks) if mtp_ks else 7
    model, curves_all, pp_note = _acceptance_for(cap, kmax, curve, acceptance, per_prompt)

    prof_cache: dict = {}

    def profile(name, params):
        key = (name, repr(lookup_policy(name, params)))
        if key not in prof_cache:
            prof_cache[key] = _lookup_profile(cap, name, params)
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
        acc, ml, prop = _profile_lists(profile(lk_name, lk_params))
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
    try:
        for sp, ss in zip(all_specs, child):
            prm = sp.params
            rng = np.random.default_rng(ss)
            extra: dict = {}
            if sp.name == "ar":
                res = walk(lengths, mode="ar", cost=cost.step_ms, start=start, trace=False)
            elif sp.name in _LOOKUP_KEYS:
                res = walk(lengths, mode="lookup", lookup=profile(sp.name, prm),
                           cost=cost.step_ms, start=start, trace=False)
            elif sp.name == "mtp":
                k = prm.get("k", 7)
                res = walk(lengths, mode="mtp", n_rep=mc_reps, seed=rng,
                           curves=curves_all[:, :k], cost=cost.step_ms, start=start)
            else:
                k = prm.get("k", 7)
                lk_name = prm.get("lookup", "suffix")
                lk_params = {kk: v for kk, v in prm.items() if kk not in _NON_LOOKUP}
                dflt = lk_params.get("n", 2) if lk_name == "pld" else 3
                thr = prm.get("threshold", dflt)
                easy_thr = prm.get("easy_threshold", dflt)
                g, gnote = gamma_for(lk_name, lk_params, easy_thr)
                kind = {"hybrid-max": "max"}.get(sp.name, sp.name)
                res = run_hybrid(kind, lengths, curves_all[:, :k],
                                 _profile_lists(profile(lk_name, lk_params)),
                                 n_rep=mc_reps, seed=rng, threshold=thr,
                                 tree_depth=prm.get("tree_depth"), gamma=g,
                                 easy_threshold=easy_thr, cost=cost.step_ms, start=start)
                extra = {"gamma": g, "easy_threshold": easy_thr, "threshold": thr}
                if gnote:
                    extra["correlation_note"] = gnote
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
    out_pols = []
    samples = {}
    for i, r in enumerate(runs):
        res = r.res
        tpf_pt = res.tokens_per_forward()
        tpf = summarize_samples(boot[f"tpf{i}"], tpf_pt)
        if r.spec.name in STOCHASTIC:
            from models.drafting.acceptance_model import interval_fields
            # the 90 % PI combines the content model's 90 % interval with the bootstrap's
            # 90 % interval (not its 95 % CI: one level on both sides)
            b90 = summarize_samples(boot[f"tpf{i}"], tpf_pt, level=_PI_LEVEL)
            tpf.update(interval_fields(model.meta.get("content"), tpf["point"], b90["ci_low"],
                                       b90["ci_high"]))
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
        pred = model.meta.get("content") if r.spec.name in STOCHASTIC else None
        if pred is not None and not is_base:
            # projected on prompts the content model was not calibrated on: the TPS row and
            # the worth-a-run statement carry the model's prediction interval too
            wide, spread = model_spread_draws(pred, tps_s, float(tps_pt), tpf,
                                              np.random.default_rng(child[i].spawn(1)[0]))
            tps_sum.update(pi_low=spread["tps_pi_low"], pi_high=spread["tps_pi_high"])
            if baseline.name in STOCHASTIC:
                spread = None  # the baseline shares the model's error: the gain does not
            else:
                gain_s = wide - base_s
                spread.update(gain_pi_low=spread["tps_pi_low"] - anchor,
                              gain_pi_high=spread["tps_pi_high"] - anchor)
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
            "stochastic": r.spec.name in STOCHASTIC,
            "from_capture": r.spec.name not in STOCHASTIC,
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
                                      if "content" in model.meta else None)},
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
    )


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
    if name not in STOCHASTIC:
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


def run_sweep(capture_path: str | Path | None = None, *, n_values=range(1, 6),
              depth_values=range(4, 33, 4), k_values=range(1, 9), stop_at_eos: bool = False,
              seed: int = 0, mc_reps: int = 50, cost_profile: str = "F",
              cost_file: str | None = None, cost_overrides: dict | None = None,
              baseline_tps: float | None = None, start: int = 0,
              progress: Callable | None = None) -> SweepResult:
    """Grid sweep: pld over n x depth and mtp over K, ranked by projected TPS (point
    estimates); ``depth_values`` are the pld draft depths (tokens).

    Returns
    -------
    SweepResult
        ``rows``: list of {policy, params, tokens_per_forward, step_ms, projected_tps,
        speedup_vs_ar}, sorted by projected TPS (descending).

    Raises
    ------
    InputError
        Grid values out of range.
    """
    from models.drafting.capture import load_capture
    from models.drafting.cost import load_cost_model
    from models.drafting.walk import walk

    from planner.io.limits import check_all  # plausible ranges (no 10^8 replicates, no 1e308)

    check_all([("mc_reps", mc_reps, "mc_reps"), ("baseline_tps", baseline_tps, "baseline_tps")])
    n_values, depth_values, k_values = list(n_values), list(depth_values), list(k_values)
    for n in n_values:
        _check_range(n, N_WINDOW, "n")
    for d in depth_values:
        _check_range(d, DRAFT_DEPTH, "depth")
    for k in k_values:
        _check_range(k, MTP_K, "k")
    cost = load_cost_model(cost_profile, cost_file, check=check_cost_field,
                           **(cost_overrides or {}))
    path = Path(capture_path) if capture_path is not None else default_capture_path()
    cap = load_capture(path, stop_at_eos=stop_at_eos)
    lengths = np.array([len(c) for c in cap.completions], dtype=np.int64)
    if np.any(lengths <= start):
        raise InputError(f"every completion needs more than {start} token(s)",
                         file=capture_name(capture_path), field="completion_token_ids")
    evidence = capture_evidence(len(cap), lengths - start, file=capture_name(capture_path))
    model, curves_all, _ = _acceptance_for(cap, max(k_values) if k_values else 7, None, None, "B")
    jobs = [("ar", {})] + [("pld", {"n": n, "depth": d}) for n in n_values for d in depth_values] \
        + [("mtp", {"k": k}) for k in k_values]
    rows = []
    ctx = progress("sweeping", len(jobs)) if progress else None
    rng = np.random.default_rng(seed)
    try:
        for name, prm in jobs:
            if name == "ar":
                res = walk(lengths, mode="ar", cost=cost.step_ms, start=start, trace=False)
            elif name == "pld":
                res = walk(lengths, mode="lookup", lookup=_lookup_profile(cap, "pld", prm),
                           cost=cost.step_ms, start=start, trace=False)
            else:
                res = walk(lengths, mode="mtp", n_rep=mc_reps, seed=rng,
                           curves=curves_all[:, :prm["k"]], cost=cost.step_ms, start=start)
            rate = res.tokens.sum() / res.time_ms.sum()
            rows.append({"policy": name, "params": prm, "from_capture": name != "mtp",
                         "tokens_per_forward": res.tokens_per_forward(),
                         "step_ms": float(res.time_ms.sum() / res.forwards.sum()),
                         "rate": float(rate)})
            if ctx:
                ctx.advance()
    finally:
        if ctx:
            ctx.close()
    ar_rate = rows[0]["rate"]
    for r in rows:
        r["speedup_vs_ar"] = r["rate"] / ar_rate
        r["projected_tps"] = (baseline_tps * r["speedup_vs_ar"] if baseline_tps is not None
                              else float(cost.tps(r.pop("rate"), 1.0)))
        r.pop("rate", None)
    rows.sort(key=lambda r: -r["projected_tps"])
    return SweepResult(capture=capture_name(capture_path), n_prompts=len(cap),
                       baseline_tps=baseline_tps, cost_model=cost.name, seed=seed,
                       mc_replicates=mc_reps, acceptance=model.source, rows=rows,
                       evidence=evidence)
