"""Content-aware MTP acceptance: predict a prompt's tokens/forward from its capture alone.

Why
    Measured MTP counters belong to one prompt set. On other prompts the calibration curve is
    wrong by tens of percent (F7 on P128: 3.85 tokens/forward; same stack on a private
    ShareGPT-style proxy: 3.07, record ``F7_PRIV128``). The lookup replays read the tokens
    themselves; MTP acceptance has to be *predicted* from what the tokens look like.

Model (per prompt p, calibration stack F, K=7)
    ``z_p = log(tpf_p - 1) = b0 + b . x_p + u_set + e_p``,
    ``e_p ~ N(0, s2)`` (prompt residual, includes the counters' own step noise),
    ``u_set ~ tau * t_nu`` (a prompt-set effect shared by every prompt of a set that the
    features do not explain; ``nu`` = number of groups it was estimated from).

Features ``x_p`` (all computed from the capture's tokens, set-size independent):

``suffix_easy``
    Share of completion positions where the suffix drafter with only the request's own
    prompt + output (``Suffix(cache="none")``, vLLM defaults otherwise) has match length >= 3
    and proposes: the lookup matchability the hybrid easiness state also uses.
``ttr128``
    Mean type/token ratio of the completion over consecutive 128-token windows (lower = more
    repetitive, more predictable vocabulary; windowed so it does not fall mechanically with
    completion length).
``eos_tail``
    Share of completion tokens at or after the first EOS (ids 1, 106): the degenerate
    post-EOS tails of ``ignore_eos`` captures are nearly free to draft
    (1.3-4.5 % of the public 128 prompts' tokens in the measured captures).

Fit: ordinary least squares of ``z_p`` on ``x_p`` over the 128 P128 prompts, the target being
the pooled run A + run B counters of stack F (``tpf_p = 1 + accepted / drafts``), features
computed on the stack-F spec-on K=7 capture (``mtp_spec_on_k7_int4_frontier``; the
counters' own streams are not in the source repository). Shipped as
``models/data/acceptance_features_P128.json`` (regenerate with :func:`calibration_table`).

Set level: a set's tokens/forward is ``sum_p L_p / sum_p (L_p / tpf_p)`` (every prompt's
forwards are its length over its tokens/forward). The prediction draws
``b ~ N(b_hat, s2 (X'X)^-1)``, ``e_p`` and ``u_set`` and returns quantiles of that ratio,
so the interval carries the coefficient error, the prompt residuals and the set effect.

``tau`` (set effect) comes from leave-one-group-out inside the fitted groups: the mean
squared out-of-group error of set-level ``log(tpf - 1)`` minus its prompt-residual part
(see :func:`fit`); with three groups (MMLU-Pro, GPQA, AIME) it is a thin
estimate, hence the Student-t with ``nu`` = number of groups. Validation (leave one group out, docs/drafting.md "Prompt-set shift"): see
:func:`leave_one_group_out`.

The features were chosen among about 20 candidates (suffix/PLD matchability, own-text
n-gram predictability, n-gram predictability under the other requests, distinct n-gram
ratios, unigram entropy, prompt length) by their leave-one-group-out error, so the
held-out figures are somewhat optimistic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Sequence

import numpy as np

from models.errors import ModelInputError

__all__ = ["FEATURES", "ContentModel", "capture_features", "calibration_table", "fit",
           "load_calibration", "default_content_model", "set_tpf", "leave_one_group_out",
           "MODEL_NAME", "CALIBRATION_FILE", "CapturePrediction", "for_capture",
           "interval_fields"]

#: Feature names, in design-matrix order (after the intercept).
FEATURES = ("suffix_easy", "ttr128", "eos_tail")
MODEL_NAME = "content-v1 (suffix_easy, ttr128, eos_tail; stack F K=7 counters, P128)"
CALIBRATION_FILE = "acceptance_features_P128.json"
_EOS = (1, 106)  # Gemma <eos>, <end_of_turn> (decode/README.md)
_WINDOW = 128
_EASY_MATCH = 3  # same threshold as the hybrid easiness state (suffix default)


def _ttr(c: np.ndarray, w: int = _WINDOW) -> float:
    n = max(1, len(c) // w)
    vals = [len(np.unique(c[i * w:(i + 1) * w])) / max(1, len(c[i * w:(i + 1) * w]))
            for i in range(n)]
    return float(np.mean(vals))


def capture_features(capture) -> np.ndarray:
    """Per-prompt features of a capture.

    Parameters
    ----------
    capture : models.drafting.capture.Capture

    Returns
    -------
    numpy.ndarray, float64, shape (P, 3)
        Columns :data:`FEATURES`.

    Raises
    ------
    ModelInputError
        A completion shorter than 2 tokens.
    """
    from models.drafting.lookup import Suffix, draft_profiles

    for i, c in enumerate(capture.completions):
        if len(c) < 2:
            raise ModelInputError("acceptance model needs completions of >= 2 tokens",
                                  file=getattr(capture, "path", None), line=i + 1,
                                  field="completion_token_ids")
    profs = draft_profiles(capture, Suffix(cache="none")).profiles()
    easy = [float(((p.match_len >= _EASY_MATCH) & (p.proposed > 0)).mean()) for p in profs]
    ttr = [_ttr(np.asarray(c)) for c in capture.completions]
    tail = []
    for c in capture.completions:
        hit = np.isin(np.asarray(c), _EOS)
        tail.append(float(1 - hit.argmax() / len(c)) if hit.any() else 0.0)
    return np.column_stack([easy, ttr, tail]).astype(float)


def calibration_table(capture, rows: Sequence[dict]) -> dict:
    """Join a capture's features with per-prompt counters (the shipped calibration file).

    Parameters
    ----------
    capture : Capture
        The calibration capture (P128 stack-F spec-on K=7).
    rows : sequence of dict
        Counter rows ``id``, ``num_drafts``, ``num_accepted`` (runs pooled by id).

    Returns
    -------
    dict
        ``{"features": [...], "prompt_set_hash", "rows": [{id, group, length, num_drafts,
        num_accepted, x}]}``.
    """
    acc: dict[str, list[float]] = {}
    for r in rows:
        a = acc.setdefault(str(r["id"]), [0.0, 0.0])
        a[0] += float(r["num_drafts"])
        a[1] += float(r["num_accepted"])
    x = capture_features(capture)
    groups = capture.groups or [None] * len(capture)
    out = []
    for i, pid in enumerate(capture.ids):
        if pid not in acc:
            continue
        out.append({"id": pid, "group": groups[i], "length": int(len(capture.completions[i])),
                    "num_drafts": acc[pid][0], "num_accepted": acc[pid][1],
                    "x": [round(float(v), 6) for v in x[i]]})
    return {"features": list(FEATURES), "prompt_set_hash": capture.prompt_set_hash(),
            "rows": out}


def load_calibration() -> dict:
    """The shipped calibration table (``models/data/acceptance_features_P128.json``)."""
    return json.loads(resources.files("models").joinpath("data", CALIBRATION_FILE)
                      .read_text(encoding="utf-8"))


@dataclass
class ContentModel:
    """A fitted content model (see module docstring).

    Attributes
    ----------
    coef : numpy.ndarray, shape (1 + F,)
        Intercept and feature coefficients on ``log(tpf - 1)``.
    cov_unscaled : numpy.ndarray, shape (1 + F, 1 + F)
        ``(X'X)^-1``.
    s2 : float
        Prompt residual variance on the log scale.
    tau : float
        Prompt-set effect SD on the log scale.
    nu : int
        Degrees of freedom of the set effect (number of groups behind ``tau``).
    n_prompts : int
    groups : list of str
        Groups the model was fitted on.
    """

    coef: np.ndarray
    cov_unscaled: np.ndarray
    s2: float
    tau: float
    nu: int
    n_prompts: int
    groups: list

    def design(self, x: np.ndarray) -> np.ndarray:
        return np.column_stack([np.ones(len(x)), np.asarray(x, float)])

    def predict_prompts(self, x: np.ndarray) -> np.ndarray:
        """Per-prompt expected tokens/forward ``1 + exp(x b + s2 / 2)``, shape (P,)."""
        return 1 + np.exp(self.design(x) @ self.coef + self.s2 / 2)

    def draw_prompts(self, x: np.ndarray, n: int, rng: np.random.Generator, *,
                     set_effect: bool = True) -> np.ndarray:
        """Predictive draws of every prompt's tokens/forward, shape (n, P): coefficient
        error, prompt residuals and (``set_effect``) one shared set effect per draw."""
        X = self.design(x)
        L = np.linalg.cholesky(self.cov_unscaled * self.s2 + 1e-15 * np.eye(X.shape[1]))
        b = self.coef + rng.standard_normal((n, X.shape[1])) @ L.T
        z = b @ X.T + rng.standard_normal((n, X.shape[0])) * np.sqrt(self.s2)
        if set_effect and self.tau > 0:
            z += (self.tau * rng.standard_t(self.nu, size=n))[:, None]
        return 1 + np.exp(z)

    def to_dict(self) -> dict:
        return {"model": MODEL_NAME, "features": list(FEATURES),
                "coef": [float(v) for v in self.coef], "s2": self.s2, "tau": self.tau,
                "nu": self.nu, "n_prompts": self.n_prompts, "groups": list(self.groups)}


def set_tpf(tpf: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Set-level tokens/forward ``sum L / sum (L / tpf)`` over the last axis."""
    L = np.asarray(lengths, float)
    return L.sum() / (L / np.asarray(tpf, float)).sum(-1)


def _arrays(table: dict, mask=None):
    rows = table["rows"]
    x = np.array([r["x"] for r in rows], float)
    nd = np.array([r["num_drafts"] for r in rows], float)
    na = np.array([r["num_accepted"] for r in rows], float)
    g = np.array([str(r["group"]) for r in rows])
    L = np.array([r["length"] for r in rows], float)
    return x, nd, na, g, L


def _ols(x: np.ndarray, z: np.ndarray):
    X = np.column_stack([np.ones(len(z)), x])
    xtx_inv = np.linalg.pinv(X.T @ X)  # pinv: a feature constant within one group
    coef = xtx_inv @ X.T @ z
    res = z - X @ coef
    s2 = float(res @ res / max(len(z) - X.shape[1], 1))
    return coef, xtx_inv, s2


def _set_error(x, nd, na, L, g, held: str) -> tuple[float, float]:
    """Out-of-group error of set-level ``log(tpf - 1)`` for group ``held`` and the prompt
    residuals' share of its variance, ``s2 / n_held``."""
    tr, te = g != held, g == held
    coef, cov, s2 = _ols(x[tr], np.log(na[tr] / nd[tr]))
    m = ContentModel(coef, cov, s2, 0.0, 1, int(tr.sum()), [])
    meas = (nd[te] + na[te]).sum() / nd[te].sum()
    pred = set_tpf(m.predict_prompts(x[te]), L[te])
    return float(np.log(pred - 1) - np.log(meas - 1)), float(s2 / te.sum())


def fit(table: dict, *, exclude_groups: Sequence[str] = ()) -> ContentModel:
    """Fit the content model on a calibration table.

    Coefficients and ``s2``: OLS of ``log(tpf_p - 1)`` on the features over the kept
    prompts. Set effect: leave-one-group-out *inside* the kept groups G; for each h in G the
    set-level error ``d_h = log(pred_h - 1) - log(meas_h - 1)`` and its prompt-residual part
    ``v_h = s2 / n_h``; ``tau^2 = max(mean_h(d_h^2 - v_h), 0)``, ``nu = |G|``. The
    out-of-group coefficient error is deliberately *not* subtracted: with three groups a
    set effect and an extrapolation error cannot be told apart, so both are charged to
    ``tau`` (conservative; the draws add the coefficient error once more). With the three
    shipped groups this is an estimate from three numbers: the Student-t keeps that visible.

    Parameters
    ----------
    table : dict
        :func:`calibration_table` / :func:`load_calibration` output.
    exclude_groups : sequence of str
        Groups left out (leave-one-group-out validation).

    Returns
    -------
    ContentModel

    Raises
    ------
    ModelInputError
        Fewer prompts than 2 x (features + 1) left, or fewer than 2 groups.
    """
    x, nd, na, g, L = _arrays(table)
    keep = ~np.isin(g, list(exclude_groups))
    x, nd, na, g, L = x[keep], nd[keep], na[keep], g[keep], L[keep]
    if keep.sum() < 2 * (x.shape[1] + 1):
        raise ModelInputError("too few calibration prompts for the content model",
                              field="rows")
    groups = sorted(set(g))
    if len(groups) < 2:
        raise ModelInputError("the set effect needs at least 2 prompt groups", field="group")
    coef, xtx_inv, s2 = _ols(x, np.log(na / nd))
    errs = [_set_error(x, nd, na, L, g, h) for h in groups]
    tau = float(np.sqrt(max(np.mean([d * d - v for d, v in errs]), 0.0)))
    return ContentModel(coef, xtx_inv, s2, tau, len(groups), int(len(x)),
                        [str(k) for k in groups])


def default_content_model() -> ContentModel:
    """The content model fitted on every shipped calibration prompt."""
    return fit(load_calibration())


def leave_one_group_out(table: dict | None = None, *, level: float = 0.90, n_draws: int = 4000,
                        seed: int = 0) -> list[dict]:
    """Leave-one-group-out validation of set-level tokens/forward.

    For every group g: fit on the other groups, predict the g prompts' set tokens/forward
    from their features, compare with the measured counters (``sum(drafts + accepted) /
    sum(drafts)``).

    Returns
    -------
    list of dict
        ``group, n, predicted, measured, error_pct, pi_low, pi_high, covered``.
    """
    table = table or load_calibration()
    x, nd, na, g, L = _arrays(table)
    rng = np.random.default_rng(seed)
    out = []
    for k in sorted(set(g)):
        m = fit(table, exclude_groups=[k])
        te = g == k
        pt = float(set_tpf(m.predict_prompts(x[te]), L[te]))
        draws = set_tpf(m.draw_prompts(x[te], n_draws, rng), L[te])
        lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
        meas = float((nd[te] + na[te]).sum() / nd[te].sum())
        out.append({"group": str(k), "n": int(te.sum()), "predicted": pt, "measured": meas,
                    "error_pct": 100 * (pt / meas - 1), "pi_low": float(lo),
                    "pi_high": float(hi), "covered": bool(lo <= meas <= hi),
                    "tau": m.tau, "nu": m.nu})
    return out



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
    """

    tpf: np.ndarray
    curves: np.ndarray
    set_point: float
    ratio_low: float
    ratio_high: float
    draws: np.ndarray
    model: dict


def for_capture(capture, base_curve: np.ndarray, k: int, *, level: float = 0.90,
                n_draws: int = 2000, seed: int = 0,
                model: ContentModel | None = None) -> CapturePrediction:
    """Predict every prompt's MTP curve of a capture and a set-level prediction interval.

    Parameters
    ----------
    capture : Capture
    base_curve : array, shape (7,)
        Curve shape of the calibration stack (``F7_P128_calib``).
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
    """
    from models.drafting.acceptance import scale_curve

    m = model or default_content_model()
    x = capture_features(capture)
    L = np.array([len(c) for c in capture.completions], float)
    tpf = m.predict_prompts(x)
    curves = scale_curve(base_curve, tpf)[:, :k]
    point = float(set_tpf(1 + curves.sum(1), L))
    rng = np.random.default_rng(seed)
    dr = m.draw_prompts(x, n_draws, rng)
    # depth K from each drawn prompt tpf: scale the base curve, keep the first K positions
    flat = scale_curve(base_curve, dr.reshape(-1))[:, :k]
    set_draws = set_tpf((1 + flat.sum(1)).reshape(dr.shape), L)
    lo, hi = np.quantile(set_draws, [(1 - level) / 2, (1 + level) / 2])
    return CapturePrediction(tpf, curves, point, float(lo / point), float(hi / point),
                             set_draws, m.to_dict())


def interval_fields(prediction: CapturePrediction | None, point: float, ci_low: float,
                    ci_high: float) -> dict:
    """``pi_low`` / ``pi_high`` for a walked tokens/forward figure.

    With a content prediction the interval is ``point x [ratio_low, ratio_high]`` (the
    relative 90 % prediction interval of the set figure; for hybrids this carries the MTP
    side's uncertainty to the whole figure, an approximation). Without one (measured
    counters on their own prompts, or a user curve) it is the bootstrap interval: no set
    shift is predicted.
    """
    if prediction is None:
        return {"pi_low": ci_low, "pi_high": ci_high}
    return {"pi_low": float(point * prediction.ratio_low),
            "pi_high": float(point * prediction.ratio_high)}
