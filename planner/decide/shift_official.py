"""``planner shift``: the official-pairs fit, the three modes side by side, the one recommended
answer and what it rests on.

* :func:`official_answer` -- the official mode (:mod:`models.drafting.official_shift`, fitted
  on the nine verifier pairs): ratio interval, exact ``P(invalid)`` and its interval over the
  fit's parameter uncertainty.
* :func:`fit_summary` -- the fit as the JSON shows it, with its leave-one-pair-out scores.
* :func:`recommend` -- which mode to act on, and why; the others become checks.
* :func:`shift_rests_on` -- the deciding constants (official ratio, allocation CV,
  drafter-tuned covariate, shift-SD prior, the mode itself; in capture mode the content
  model's error) with ranges, sources and where ``P`` crosses 0.5.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from planner.results.rests_on import RestsOn

__all__ = ["official_answer", "fit_summary", "recommend", "shift_rests_on", "official_lopo",
           "OFFICIAL_SOURCE", "resolve_drafter_tuned"]

OFFICIAL_SOURCE = ("models/data/official_private_pairs.csv (8 verifier re-runs, "
                   "official_private_pairs.md) + the official pair of "
                   "models/data/private_shift_evidence.json")


@lru_cache(maxsize=64)  # the main fit and the sensitivity refits of rests_on
def _fit(covariate: bool = True, fixed_cv: float | None = None, tau_scale: float | None = None):
    from models.drafting.official_shift import TAU_SCALE, fit_official
    return fit_official(covariate=covariate, fixed_allocation_cv=fixed_cv,
                        tau_scale=TAU_SCALE if tau_scale is None else tau_scale)


@lru_cache(maxsize=4)
def official_lopo(level: float = 0.90, covariate: bool = True) -> dict:
    """Leave-one-pair-out check of the official mode (cached: deterministic, ~1 s)."""
    from models.drafting.official_shift import leave_one_out
    return leave_one_out(covariate=covariate, level=level)


def resolve_drafter_tuned(submission: str | None, drafter_tuned: bool | None) -> tuple:
    """``(drafter_tuned, source)``: the flag when given, else read from the submission label
    (``drafterft``), else False ("not said")."""
    from models.drafting.official_shift import drafter_tuned_from_name

    if drafter_tuned is not None:
        return bool(drafter_tuned), "given (drafter_tuned)"
    from_name = drafter_tuned_from_name(submission)
    if from_name is not None:
        return from_name, (f"read from the submission label {submission!r} "
                           + ("('drafterft')" if from_name else "(no 'drafterft')"))
    return False, ("not said: taken as not tuned (set drafter_tuned if the drafter was "
                   "fine-tuned on public-like prompts)")


def official_answer(drafter_tuned: bool, threshold: float, level: float, *,
                    seed: int = 0) -> dict:
    """The official mode for one submission.

    Returns
    -------
    dict
        ``ratio`` (point = median, ``pi_low``, ``pi_high``), ``p_drop`` (exact mixture CDF at
        ``threshold``), ``p_drop_interval`` (``level`` interval of P over the parameters),
        ``mean_ratio`` (point, low, high).
    """
    f = _fit()
    med, lo, hi = f.interval(level, drafter_tuned)
    return {"ratio": {"point": med, "pi_low": lo, "pi_high": hi},
            "p_drop": f.cdf(threshold, drafter_tuned),
            "p_drop_interval": list(f.p_invalid_interval(level, drafter_tuned,
                                                         threshold=threshold, seed=seed)),
            "mean_ratio": list(f.mean_ratio_interval(level, drafter_tuned))}


def fit_summary(drafter_tuned: bool, dt_source: str, level: float) -> dict:
    """The official fit as the JSON and the views show it."""
    f = _fit()
    lo1, lo0 = official_lopo(level, True), official_lopo(level, False)
    a, t = f.posterior_sd("allocation"), f.posterior_sd("shift")
    keep = ("n", "covered", "coverage", "brier", "log_score", "base_rate_brier", "level")
    return {"pairs": f.n, "source": OFFICIAL_SOURCE, "covariates": list(f.covariates),
            "coefficients": {"intercept_log_ratio": float(f.beta[0]),
                             **({"drafter_tuned_log_ratio": float(f.beta[1])}
                                if len(f.beta) > 1 else {})},
            "drafter_tuned": drafter_tuned, "drafter_tuned_source": dt_source,
            "allocation_cv": {"mean": a[0], "low": a[1], "high": a[2],
                              "prior": "scaled-inv-chi2(3 df, 0.79 %), tps_runs.md"},
            "shift_sd": {"mean": t[0], "low": t[1], "high": t[2],
                         "prior": "half-normal(3 %)"},
            "lopo": {k: lo1[k] for k in keep},
            "lopo_without_covariate": {k: lo0[k] for k in keep}}


def recommend(official: dict, proxy: dict, capture: dict | None, level: float,
              asked: str = "official") -> tuple:
    """``(recommended, checks)``: one mode to act on, the others as checks.

    Rule: without a private capture the official fit (the only mode scored against verifier
    verdicts), unless the proxy pairs were asked for (``asked`` ``proxy``): the answer is
    then theirs, and the official fit a check, so the headline, the result's top level and
    its ``recommended`` block are one answer. With captures the per-submission capture projection when its point ratio lies
    inside the official fit's ``level`` predictive interval and its P is not withheld (it
    reads this submission's prompts and agrees with the official pairs); otherwise the
    official fit, and the capture projection is reported as a check that disagrees.
    """
    lvl = f"{100 * level:.4g} %"
    o = official["ratio"]
    checks = [proxy]
    if capture is None and asked == "proxy":
        rec = {**proxy, "why": (
            "the local private-proxy pairs, as asked; they are harsher prompt sets than the "
            "official private set, and the official fit (the only mode scored against "
            "verifier verdicts, the default) is shown as a check")}
        return rec, [official]
    if capture is None:
        rec = {**official, "why": (
            "the official fit is the only mode scored against verifier verdicts "
            "(leave-one-pair-out on the shipped official pairs); the local proxy pairs "
            "are harsher prompt sets than the official private set (shown as a check)")}
        return rec, checks
    inside = o["pi_low"] <= capture["ratio"]["point"] <= o["pi_high"]
    if inside and capture["p_drop"] is not None:
        rec = {**capture, "why": (
            f"per-submission projection from your captures; its ratio "
            f"{capture['ratio']['point']:.3f} lies inside the official fit's {lvl} interval "
            f"[{o['pi_low']:.3f}, {o['pi_high']:.3f}], so the two agree and the capture "
            "reads this submission's own prompts")}
        return rec, [official, proxy]
    why = ("capture P withheld (too little capture)" if capture["p_drop"] is None else
           f"your captures project a ratio of {capture['ratio']['point']:.3f}, outside the "
           f"official fit's {lvl} interval [{o['pi_low']:.3f}, {o['pi_high']:.3f}]: the "
           "private-proxy capture is likely not the official private prompt distribution "
           "(local proxies fell 11-25 % where official pairs fell 3-6 %)")
    rec = {**official, "why": "the official fit (scored against verifier verdicts) is "
           "recommended: " + why}
    return rec, [capture, proxy]


def _verdict(p: float, x_pct: float) -> str:
    what = "invalid" if abs(x_pct - 5.0) < 1e-12 else f"a drop of more than {x_pct:g} %"
    return f"{what} more likely than not" if p >= 0.5 else f"{what} less likely than not"


def _bisect(fn, lo: float, hi: float, it: int = 40) -> float | None:
    """Root of ``fn(x) - 0.5`` in [lo, hi] when the sign changes, else None."""
    flo, fhi = fn(lo) - 0.5, fn(hi) - 0.5
    if flo == 0:
        return lo
    if flo * fhi > 0:
        return None
    for _ in range(it):
        mid = 0.5 * (lo + hi)
        fm = fn(mid) - 0.5
        if (fm > 0) == (flo > 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return 0.5 * (lo + hi)


def shift_rests_on(drafter_tuned: bool, dt_source: str, threshold: float, x_pct: float,
                   level: float, modes: dict, capture_ratio_draws: np.ndarray | None = None,
                   content_errors: tuple | None = None,
                   recommended: str = "official") -> list[RestsOn]:
    """What the shift answer rests on (:class:`planner.results.rests_on.RestsOn` entries).

    Parameters
    ----------
    drafter_tuned, dt_source : bool, str
    threshold : float
        ``1 - X/100``.
    x_pct, level : float
    modes : dict
        Mode name -> P of that mode (None when withheld or not run).
    capture_ratio_draws : array, optional
        Capture mode's ratio draws (for the content-model error entry).
    content_errors : (float, float), optional
        Leave-one-group-out min and max set error of the content model, %.
    recommended : str
        The recommended mode (the value of the ``shift_mode`` entry).

    Returns
    -------
    list of RestsOn
    """
    from models.drafting.official_shift import ALLOCATION_CV, TAU_SCALE

    f = _fit()
    p0 = f.cdf(threshold, drafter_tuned)
    concl = _verdict(p0, x_pct)
    out = []
    # 1. the official mean ratio: P = 0.5 where the predictive median is the threshold
    pt, lo, hi = f.mean_ratio_interval(level, drafter_tuned)
    flip = threshold if lo <= threshold <= hi else None
    out.append(RestsOn(
        "official_ratio", round(pt, 6), round(lo, 6), round(hi, 6), "private/public",
        f"{OFFICIAL_SOURCE}; mean of the fit for a submission "
        f"{'with' if drafter_tuned else 'without'} a drafter tuned on public-like prompts, "
        f"{100 * level:.4g} % interval of the mean",
        flip, concl,
        (f"P crosses 0.5 if the mean ratio is {threshold:.3f} (inside its range: the pairs "
         "do not settle the verdict)" if flip is not None else
         f"P stays on one side of 0.5 over the range (crosses at a mean ratio of "
         f"{threshold:.3f})")))
    # 2. allocation CV: P with the CV held at each end of its posterior interval
    a = f.posterior_sd("allocation")
    alo, ahi = a[1], a[2]

    def p_at_cv(cv: float) -> float:
        return _fit(True, round(cv, 6)).cdf(threshold, drafter_tuned)

    plo, phi = p_at_cv(alo), p_at_cv(ahi)
    flip = _bisect(p_at_cv, alo, ahi, it=20) if (plo - 0.5) * (phi - 0.5) <= 0 else None
    out.append(RestsOn(
        "allocation_cv", round(a[0], 6), round(alo, 6), round(ahi, 6), "CV",
        f"posterior of the fit, prior {ALLOCATION_CV:.2%} pooled (df 3) from official "
        "same-submission re-runs (examples/runs/tps_runs.md)", flip, concl,
        f"P {plo:.2f} at {alo:.2%}, {phi:.2f} at {ahi:.2%} "
        + (f"(crosses 0.5 at {flip:.2%})" if flip is not None else "(no flip)")))
    # 3. the drafter-tuned covariate
    alt = {"not tuned": round(f.cdf(threshold, False), 4),
           "tuned": round(f.cdf(threshold, True), 4)}
    flips = (alt["tuned"] - 0.5) * (alt["not tuned"] - 0.5) < 0
    out.append(RestsOn(
        "drafter_tuned", "tuned" if drafter_tuned else "not tuned", None, None, "",
        f"{dt_source}; covariate fitted on the pairs ('drafterft' labels), kept by "
        "leave-one-pair-out (docs/drafting.md)", None, concl,
        f"P {alt['not tuned']:.2f} not tuned, {alt['tuned']:.2f} tuned"
        + (": the conclusion flips with it" if flips else ": same side of 0.5 either way"),
        alt))
    # 4. the prior scale of the between-submission shift SD
    ps = {s: _fit(True, None, s).cdf(threshold, drafter_tuned) for s in (0.01, 0.05)}
    flip = None
    if (ps[0.01] - 0.5) * (ps[0.05] - 0.5) < 0:
        flip = _bisect(lambda s: _fit(True, None, round(s, 5)).cdf(threshold, drafter_tuned),
                       0.01, 0.05, it=12)
    out.append(RestsOn(
        "shift_sd_prior", TAU_SCALE, 0.01, 0.05, "log ratio",
        "half-normal prior scale of the submission-to-submission prompt-set shift SD "
        "(weak; local proxy pairs spread about 4 %)", flip, concl,
        f"P {ps[0.01]:.2f} at 1 %, {ps[0.05]:.2f} at 5 %"
        + (f" (crosses 0.5 at {flip:.1%})" if flip is not None else " (no flip)")))
    # 5. the mode itself
    shown = {k: (None if v is None else round(v, 4)) for k, v in modes.items()}
    vals = [v for v in modes.values() if v is not None]
    out.append(RestsOn(
        "shift_mode", recommended, None,
        None, "", "official = verifier pairs; proxy = local private-proxy pairs "
        "(private_shift_evidence.json); capture = content model on your captures", None,
        concl, "the modes "
        + ("disagree on the side of 0.5" if vals and min(vals) < 0.5 <= max(vals)
           else "agree on the side of 0.5"), shown))
    # 6. capture mode: the content model's set error
    if capture_ratio_draws is not None and content_errors is not None:
        med = float(np.median(capture_ratio_draws))
        pc = float(np.mean(capture_ratio_draws < threshold))
        elo, ehi = content_errors
        need = 100 * (threshold / med - 1)
        flip = need if elo <= need <= ehi else None
        out.append(RestsOn(
            "content_model_error", 0.0, round(elo, 3), round(ehi, 3), "% tokens/forward",
            "leave-one-group-out set error of the content model "
            "(models/data/acceptance_validation.json)", None if flip is None else
            round(flip, 3), _verdict(pc, x_pct),
            f"the capture answer flips if the private tokens/forward are off by "
            f"{need:+.1f} %" + (" (inside the held-out error range)" if flip is not None
                                else " (outside the held-out error range)")))
    return out
