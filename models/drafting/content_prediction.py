"""Content-model prediction for a capture: every prompt's MTP curve and a set-level
prediction interval (:func:`for_capture`), and how that interval combines with a walked
figure's bootstrap interval (:func:`interval_fields`). The model itself:
:mod:`models.drafting.acceptance_model`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.drafting.acceptance_model import (CALIBRATED_POSITIONS, ContentModel,
                                              capture_states, default_content_model, set_tpf)

__all__ = ["CapturePrediction", "for_capture", "interval_fields"]


@dataclass
class CapturePrediction:
    """Content-model prediction for one capture.

    Attributes
    ----------
    tpf : numpy.ndarray, shape (P,)
        Per-prompt expected tokens/forward at depth 7 (the calibration depth).
    curves : numpy.ndarray, shape (P, K)
        Per-prompt survival curves: the base curve power-scaled to ``tpf``
        (:func:`models.drafting.acceptance.scale_curve`), truncated to the requested K.
    set_point : float
        Set tokens/forward at depth K from the per-prompt point predictions (no truncation).
    ratio_low, ratio_high : float
        Prediction-interval bounds as multiples of ``set_point`` (coefficient error, prompt
        residuals and the set effect), used to put an interval on a walked figure.
    draws : numpy.ndarray, shape (n,)
        Predictive draws of the set tokens/forward at depth K.
    model : dict
        The model's description (:meth:`ContentModel.to_dict`) plus
        ``calibrated_positions`` and ``share_beyond_calibrated``.
    share_beyond : float
        Share of the capture's completion tokens past position 512, where the calibration
        has no data (an extrapolation).
    """

    tpf: np.ndarray
    curves: np.ndarray
    set_point: float
    ratio_low: float
    ratio_high: float
    draws: np.ndarray
    model: dict
    share_beyond: float = 0.0


def for_capture(capture, base_curve: np.ndarray, k: int, *, level: float = 0.90,
                n_draws: int = 2000, seed: int = 0,
                model: ContentModel | None = None) -> CapturePrediction:
    """Predict every prompt's MTP curve of a capture and a set-level prediction interval.

    Parameters
    ----------
    capture : Capture
    base_curve : array, shape (K0,)
        Survival curve of the stack being asked about, measured on the calibration prompts
        (default stack F, ``F7_P128_calib``). The content model predicts each prompt's
        stack-F tokens/forward at depth 7; that is turned into a per-prompt power
        ``theta_p`` of the stack-F curve (``1 + sum(F ** theta_p) = tpf_p``) and applied to
        ``base_curve`` (``base ** theta_p``): the prompt effect as a power on the survival
        curve, the stack (and its depth) in the base curve. For stack F this is exactly the
        predicted tokens/forward.
    k : int
        Chain depth (<= base curve depth).
    level : float
        Prediction-interval level (default 0.90).
    n_draws : int
        Predictive draws.
    seed : int
    model : ContentModel, optional
        Default :func:`default_content_model`.

    Returns
    -------
    CapturePrediction

    Raises
    ------
    ModelInputError
        A completion shorter than 2 tokens.
    """
    from models.drafting.acceptance import default_model

    m = model or default_content_model()
    X, off = capture_states(capture)
    L = np.array([len(c) for c in capture.completions], float)
    base = np.clip(np.asarray(base_curve, float), 1e-9, 1.0)
    ref = default_model().curve
    tpf = m.predict_prompts(X, off)
    curves = base[None, :k] ** _theta(ref, tpf)[:, None]
    point = float(set_tpf(1 + curves.sum(1), L))
    rng = np.random.default_rng(seed)
    dr = m.draw_prompts(X, off, n_draws, rng)
    grid = np.linspace(1 + 1e-6, len(ref) + 1 - 1e-6, 4001)  # theta(tpf) is monotone
    th = np.interp(dr, grid, _theta(ref, grid))
    set_draws = set_tpf(1 + (base[None, None, :k] ** th[..., None]).sum(-1), L)
    lo, hi = np.quantile(set_draws, [(1 - level) / 2, (1 + level) / 2])
    beyond = float(np.clip(L - CALIBRATED_POSITIONS, 0, None).sum() / L.sum())
    md = {**m.to_dict(), "calibrated_positions": CALIBRATED_POSITIONS,
          "share_beyond_calibrated": round(beyond, 4)}
    return CapturePrediction(tpf, curves, point, float(lo / point), float(hi / point),
                             set_draws, md, beyond)


def _theta(ref_curve: np.ndarray, tpf: np.ndarray) -> np.ndarray:
    """Power ``theta`` with ``1 + sum(ref ** theta) = tpf`` per element (bisection on
    log theta, monotone), shape of ``tpf``."""
    ref = np.clip(np.asarray(ref_curve, float), 1e-9, 1 - 1e-12)
    t = np.clip(np.asarray(tpf, float), 1 + 1e-6, len(ref) + 1 - 1e-6)
    lo, hi = np.full(t.shape, -12.0), np.full(t.shape, 12.0)
    lr = np.log(ref)
    for _ in range(60):
        mid = (lo + hi) / 2
        val = 1 + np.exp(np.exp(mid)[..., None] * lr).sum(-1)
        big = val > t  # too many tokens: raise theta
        lo = np.where(big, mid, lo)
        hi = np.where(big, hi, mid)
    return np.exp((lo + hi) / 2)


def interval_fields(prediction: CapturePrediction | None, point: float, ci_low: float,
                    ci_high: float) -> dict:
    """``pi_low`` / ``pi_high`` for a walked tokens/forward figure.

    With a content prediction the interval answers "what will this give on prompts like
    these?": the content model's relative 90 % prediction interval of the set figure
    (coefficient error, prompt residuals, prompt-set effect; ``ratio_low``, ``ratio_high``)
    and the bootstrap's sampling error of the capture's prompts (``ci_low``, ``ci_high``)
    are combined on the log scale, side by side: ``point x exp(-sqrt(log(ratio_low)^2 +
    log(ci_low / point)^2))`` and likewise above, so the interval is never narrower than
    either (the prompt residuals are in both: slightly conservative). For hybrids the MTP
    side's relative uncertainty is carried to the whole figure, an approximation. Without a
    prediction (measured counters on their own prompts, or a user curve) it is the
    bootstrap interval: no set shift is predicted.

    Parameters
    ----------
    prediction : CapturePrediction or None
    point, ci_low, ci_high : float
        Tokens/forward point and bootstrap interval (> 0).

    Returns
    -------
    dict
        ``{"pi_low": float, "pi_high": float}``.
    """
    if prediction is None:
        return {"pi_low": ci_low, "pi_high": ci_high}
    a_lo = np.log(prediction.ratio_low)
    a_hi = np.log(prediction.ratio_high)
    b_lo = np.log(ci_low / point) if ci_low and 0 < ci_low < point else 0.0
    b_hi = np.log(ci_high / point) if ci_high and ci_high > point > 0 else 0.0
    return {"pi_low": float(point * np.exp(-np.hypot(a_lo, b_lo))),
            "pi_high": float(point * np.exp(np.hypot(a_hi, b_hi)))}
