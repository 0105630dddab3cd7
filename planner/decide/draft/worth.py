"""Worth a run? P(one real run beats the baseline), the runs per arm that confirm the gain and
their cost, and the content model's spread carried onto the projected TPS."""

from __future__ import annotations

import math

import numpy as np

from planner.defaults import DEFAULT_ASSURANCE, DEFAULT_ROPE, DEFAULT_RULE
from planner.errors import InputError

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
        # "1 run per arm confirms it", not "1 run(s) per arm confirm it"
        runs, confirm = ("run", "confirms") if n_needed == 1 else ("runs", "confirm")
        if model_spread is None:
            verdict = (f"worth a run: {pt:+.1f} TPS projected, P(one run beats baseline) = "
                       f"{p_one:.2f}; {n_needed} {runs} per arm {confirm} it with assurance "
                       f"{assurance:.2f} (${cost_usd:.2f})")
        else:
            verdict = (f"worth a run: {pt:+.1f} TPS projected (90 % PI "
                       f"[{model_spread['gain_pi_low']:+.1f}, {model_spread['gain_pi_high']:+.1f}]"
                       " on a new prompt set), "
                       f"P(the run beats the baseline, over that PI) = {p_one:.2f}; "
                       f"{n_needed} {runs} per arm {confirm} it with assurance {assurance:.2f} "
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
#: :func:`models.drafting.content_prediction.for_capture` default ``level``), and the level of
#: the bootstrap interval combined with it.
_PI_LEVEL = 0.90
#: Two-sided 90 % Normal quantile (:data:`_PI_LEVEL`).
_Z90 = 1.6448536269514722


def model_spread_draws(prediction, tps_draws: np.ndarray, tps_point: float, tpf: dict,
                       rng: np.random.Generator) -> tuple:
    """TPS prediction interval of a content-model row, and its bootstrap TPS draws widened by
    the model's own uncertainty.

    The row's tokens/forward 90 % prediction interval (``tpf['pi_low']``, ``tpf['pi_high']``,
    :func:`models.drafting.content_prediction.interval_fields`: model and bootstrap error
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
    prediction : models.drafting.content_prediction.CapturePrediction
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
