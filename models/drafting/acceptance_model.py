"""Content-aware MTP acceptance: predict a prompt's tokens/forward from its capture alone.

Why
    Measured MTP counters belong to one prompt set. On other prompts the calibration curve is
    wrong by tens of percent (F7 on P128: 3.85 tokens/forward; same stack on a private
    ShareGPT-style proxy: 3.07, record ``F7_PRIV128``). The lookup replays read the tokens
    themselves; MTP acceptance has to be *predicted* from what the tokens look like.

Model ``content-v2`` (per prompt p, calibration stack F, K=7)
    ``z_p = log(tpf_p - 1) = b0 + b . x_p + u_set + e_p``,
    ``e_p ~ N(0, s2)`` (prompt residual, includes the counters' own step noise),
    ``u_set ~ tau * t_nu`` (a prompt-set effect shared by every prompt of a set that the
    features do not explain).

Features ``x_p`` (:data:`FEATURES`, all from the capture's tokens, set-size independent):
``own_hit1`` / ``own_easy3`` / ``pld_hit1`` (own-context matchability along the completion:
suffix drafter on prompt + output so far with >= 1 accepted token / match >= 3, PLD n=2 with
>= 1 accepted), ``xng_top1`` (share of completion tokens a backoff 3/2/1-gram model fitted
on OTHER requests' completions predicts top-1; the reference is the 128 calibration
completions, ``models/data/acceptance_reference_P128.npz``, each calibration prompt left out
of its own reference), ``ttr128`` (windowed type/token ratio), ``eos_tail`` (post-EOS
share), ``log_prompt_len``.

Fit (:func:`fit`): ridge regression of ``z`` on the standardised features (unpenalised
intercept), the penalty chosen from :data:`PENALTIES` by leave-one-group-out prompt MSE over
the fitted groups; ``xng_top1`` is recomputed in every such fold (the calibration table
stores it for every set of left-out groups), so a left-out group meets a reference without
its own domain, as a new user's prompts do. Set effect: ``tau^2 = (nu tau_hat^2 + tau0^2) /
(nu + 1)`` with ``tau_hat`` from the same leave-one-group-out set errors (minus their
prompt-residual part), ``tau0`` the raw between-group SD of mean ``z`` and ``nu`` the number
of groups; the draws use a Student-t with ``nu + 1`` degrees of freedom. Features, penalty
grid and pooling were pre-registered (``models/data/acceptance_model_prereg.json``) before
their held-out errors were computed.

Honest validation (leave one group out, the penalty and tau chosen inside each fold;
``bench/bench_shift_acceptance.py``; docs/drafting.md "Prompt-set shift"): set tokens/forward
-10.6 % on AIME-2026 (outside its 90 % interval), +4.8 % on GPQA-Diamond, -0.8 % on
MMLU-Pro. The +-5 % target is missed on AIME.

Set level: a set's tokens/forward is ``sum_p L_p / sum_p (L_p / tpf_p)``. The prediction
draws ``b ~ N(b_hat, s2 V)``, ``e_p`` and ``u_set`` and returns quantiles of that ratio, so
the interval carries the coefficient error, the prompt residuals and the set effect.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Sequence

import numpy as np

from models.errors import ModelInputError

__all__ = ["FEATURES", "ContentModel", "capture_features", "calibration_table", "fit",
           "load_calibration", "default_content_model", "set_tpf", "leave_one_group_out",
           "MODEL_NAME", "CALIBRATION_FILE", "CapturePrediction", "for_capture",
           "interval_fields", "NgramReference", "static_features", "load_reference",
           "PENALTIES"]

#: Feature names, in design-matrix order (after the intercept).
FEATURES = ("own_hit1", "own_easy3", "pld_hit1", "xng_top1", "ttr128", "eos_tail",
            "log_prompt_len")
MODEL_NAME = ("content-v2 (ridge on own-context matchability, n-gram predictability under "
              "other requests, ttr128, eos_tail, prompt length; stack F K=7 counters, P128)")
CALIBRATION_FILE = "acceptance_features_P128.json"
REFERENCE_FILE = "acceptance_reference_P128.npz"
#: Ridge penalties (x number of training prompts, on standardised features); pre-registered.
PENALTIES = (0.3, 1, 3, 10, 30, 100, 300)
_EOS = (1, 106)  # Gemma <eos>, <end_of_turn> (decode/README.md)
_WINDOW = 128
_EASY_MATCH = 3  # same threshold as the hybrid easiness state (suffix default)
_XNG = FEATURES.index("xng_top1")
_TPF_MAX = 8 - 1e-6  # K=7: at most 7 accepted drafts + 1 token per forward


def _ttr(c: np.ndarray, w: int = _WINDOW) -> float:
    n = max(1, len(c) // w)
    vals = [len(np.unique(c[i * w:(i + 1) * w])) / max(1, len(c[i * w:(i + 1) * w]))
            for i in range(n)]
    return float(np.mean(vals))


def _v1_features(capture) -> np.ndarray:
    from models.drafting.lookup import Suffix, draft_profiles

    profs = draft_profiles(capture, Suffix(cache="none")).profiles()
    easy = [float(((p.match_len >= _EASY_MATCH) & (p.proposed > 0)).mean()) for p in profs]
    ttr = [_ttr(np.asarray(c)) for c in capture.completions]
    tail = []
    for c in capture.completions:
        hit = np.isin(np.asarray(c), _EOS)
        tail.append(float(1 - hit.argmax() / len(c)) if hit.any() else 0.0)
    return np.column_stack([easy, ttr, tail]).astype(float)


def _check(capture) -> None:
    for i, c in enumerate(capture.completions):
        if len(c) < 2:
            raise ModelInputError("acceptance model needs completions of >= 2 tokens",
                                  file=getattr(capture, "path", None), line=i + 1,
                                  field="completion_token_ids")


def static_features(capture) -> dict:
    """Per-prompt features that need no reference corpus.

    Parameters
    ----------
    capture : models.drafting.capture.Capture

    Returns
    -------
    dict of str -> numpy.ndarray, shape (P,)
        ``own_hit1`` share of completion positions where the suffix drafter on the request's
        own context (``Suffix(cache="none")``, vLLM defaults otherwise) gets >= 1 draft token
        accepted; ``own_easy3`` share with match length >= 3 and a proposal (the hybrid
        easiness state); ``pld_hit1`` as ``own_hit1`` for ``PLD(n=2)``; ``ttr128`` mean
        type/token ratio over 128-token windows; ``eos_tail`` share of tokens at or after the
        first EOS (ids 1, 106); ``log_prompt_len``.

    Raises
    ------
    ModelInputError
        A completion shorter than 2 tokens.
    """
    from models.drafting.lookup import PLD, Suffix, draft_profiles

    _check(capture)
    suf = draft_profiles(capture, Suffix(cache="none")).profiles()
    pld = draft_profiles(capture, PLD()).profiles()
    v1 = _v1_features(capture)
    return {"own_hit1": np.array([float((p.accept_len >= 1).mean()) for p in suf]),
            "own_easy3": v1[:, 0],
            "pld_hit1": np.array([float((p.accept_len >= 1).mean()) for p in pld]),
            "ttr128": v1[:, 1], "eos_tail": v1[:, 2],
            "log_prompt_len": np.log([max(len(q), 1) for q in capture.prompts])}


def _prompt_key(prompt) -> str:
    return hashlib.sha256(np.asarray(prompt, np.int64).tobytes()).hexdigest()[:16]


@lru_cache(maxsize=1)
def load_reference() -> dict:
    """The shipped n-gram reference: the 128 calibration completions (stack F spec-on K=7,
    P128), ``models/data/acceptance_reference_P128.npz``.

    Returns
    -------
    dict
        ``completions`` (list of int32 arrays), ``prompt_keys`` (list of str, sha256 of the
        int64 prompt tokens, first 16 hex), ``reference`` (:class:`NgramReference` on all).
    """
    with resources.files("models").joinpath("data", REFERENCE_FILE).open("rb") as fh:
        z = np.load(fh)
        tok, off = z["tokens"], z["offsets"]
        keys = [str(k) for k in z["prompt_keys"]]
    comps = [tok[off[i]:off[i + 1]] for i in range(len(off) - 1)]
    return {"completions": comps, "prompt_keys": keys, "reference": NgramReference(comps)}


def xng_feature(capture) -> np.ndarray:
    """``xng_top1`` of every prompt of a capture against the shipped reference, shape (P,).
    A prompt that is itself a calibration prompt (same prompt tokens) is scored against the
    reference without its own calibration completion."""
    ref = load_reference()
    where = {k: i for i, k in enumerate(ref["prompt_keys"])}
    out = np.empty(len(capture))
    for i, (p, c) in enumerate(zip(capture.prompts, capture.completions)):
        j = where.get(_prompt_key(p))
        r = ref["reference"] if j is None else NgramReference(
            [c2 for n, c2 in enumerate(ref["completions"]) if n != j])
        out[i] = r.top1_share(p, c)
    return out


def capture_features(capture) -> np.ndarray:
    """Per-prompt features of a capture (:data:`FEATURES` order).

    Parameters
    ----------
    capture : models.drafting.capture.Capture

    Returns
    -------
    numpy.ndarray, float64, shape (P, 7)

    Raises
    ------
    ModelInputError
        A completion shorter than 2 tokens.
    """
    st = static_features(capture)
    st["xng_top1"] = xng_feature(capture)
    return np.column_stack([st[f] for f in FEATURES]).astype(float)


def _xkey(excluded: Sequence[str]) -> str:
    ex = sorted(set(str(e) for e in excluded))
    return "all" if not ex else "-" + "-".join(ex)


def calibration_table(capture, rows: Sequence[dict]) -> dict:
    """Join a capture's features with per-prompt counters (the shipped calibration file).

    ``xng_top1`` is stored for every set of left-out groups (key ``"all"`` or
    ``"-g1-g2..."``): with groups E left out, a prompt outside E is scored against the
    completions of every prompt outside E except itself, a prompt inside E against the
    completions outside E. That is what nested leave-one-group-out needs.

    Parameters
    ----------
    capture : Capture
        The calibration capture (P128 stack-F spec-on K=7).
    rows : sequence of dict
        Counter rows ``id``, ``num_drafts``, ``num_accepted`` (runs pooled by id).

    Returns
    -------
    dict
        ``{"features", "prompt_set_hash", "rows": [{id, group, length, num_drafts,
        num_accepted, x, xng}]}`` (``x`` in :data:`FEATURES` order, its ``xng_top1`` entry
        the ``"all"`` value).
    """
    from itertools import combinations

    acc: dict[str, list[float]] = {}
    for r in rows:
        a = acc.setdefault(str(r["id"]), [0.0, 0.0])
        a[0] += float(r["num_drafts"])
        a[1] += float(r["num_accepted"])
    st = static_features(capture)
    groups = np.array([str(g) for g in (capture.groups or [None] * len(capture))])
    names = sorted(set(groups))
    comps, prompts = capture.completions, capture.prompts
    xng: dict[str, np.ndarray] = {}
    for r_ in range(0, len(names)):
        for ex in combinations(names, r_):
            inside = np.isin(groups, ex)
            ref_idx = np.flatnonzero(~inside)
            full = NgramReference([comps[i] for i in ref_idx])
            v = np.empty(len(capture))
            for i in range(len(capture)):
                r = full if inside[i] else NgramReference(
                    [comps[j] for j in ref_idx if j != i])
                v[i] = r.top1_share(prompts[i], comps[i])
            xng[_xkey(ex)] = v
    out = []
    for i, pid in enumerate(capture.ids):
        if pid not in acc:
            continue
        x = [float(st[f][i]) if f != "xng_top1" else float(xng["all"][i]) for f in FEATURES]
        out.append({"id": pid, "group": str(groups[i]), "length": int(len(comps[i])),
                    "num_drafts": acc[pid][0], "num_accepted": acc[pid][1],
                    "x": [round(v, 6) for v in x],
                    "xng": {k: round(float(v[i]), 6) for k, v in xng.items()}})
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
        Intercept and raw-feature coefficients on ``log(tpf - 1)``.
    cov_unscaled : numpy.ndarray, shape (1 + F, 1 + F)
        Coefficient covariance / ``s2`` (ridge sandwich, raw feature scale).
    s2 : float
        Prompt residual variance on the log scale.
    tau : float
        Prompt-set effect scale on the log scale.
    nu : int
        Degrees of freedom of the set effect's Student-t (groups + 1).
    n_prompts : int
    groups : list of str
        Groups the model was fitted on.
    penalty : float
        Chosen ridge penalty (x n_prompts).
    """

    coef: np.ndarray
    cov_unscaled: np.ndarray
    s2: float
    tau: float
    nu: int
    n_prompts: int
    groups: list
    penalty: float = 0.0

    def design(self, x: np.ndarray) -> np.ndarray:
        return np.column_stack([np.ones(len(x)), np.asarray(x, float)])

    def predict_prompts(self, x: np.ndarray) -> np.ndarray:
        """Per-prompt expected tokens/forward ``1 + exp(x b + s2 / 2)``, capped below the
        calibration depth's maximum 8 (K=7 drafts all accepted), shape (P,)."""
        return np.minimum(1 + np.exp(self.design(x) @ self.coef + self.s2 / 2), _TPF_MAX)

    def draw_prompts(self, x: np.ndarray, n: int, rng: np.random.Generator, *,
                     set_effect: bool = True) -> np.ndarray:
        """Predictive draws of every prompt's tokens/forward, shape (n, P): coefficient
        error, prompt residuals and (``set_effect``) one shared set effect per draw."""
        X = self.design(x)
        C = self.cov_unscaled * self.s2
        L = np.linalg.cholesky(C + 1e-12 * np.trace(C) * np.eye(X.shape[1]))
        b = self.coef + rng.standard_normal((n, X.shape[1])) @ L.T
        z = b @ X.T + rng.standard_normal((n, X.shape[0])) * np.sqrt(self.s2)
        if set_effect and self.tau > 0:
            z += (self.tau * rng.standard_t(self.nu, size=n))[:, None]
        return np.minimum(1 + np.exp(z), _TPF_MAX)

    def to_dict(self) -> dict:
        return {"model": MODEL_NAME, "features": list(FEATURES),
                "coef": [float(v) for v in self.coef], "s2": self.s2, "tau": self.tau,
                "nu": self.nu, "penalty": self.penalty, "n_prompts": self.n_prompts,
                "groups": list(self.groups)}


def set_tpf(tpf: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Set-level tokens/forward ``sum L / sum (L / tpf)`` over the last axis."""
    L = np.asarray(lengths, float)
    return L.sum() / (L / np.asarray(tpf, float)).sum(-1)


def _arrays(table: dict, excluded: Sequence[str] = ()):
    rows = table["rows"]
    key = _xkey(excluded)
    x = np.array([r["x"] for r in rows], float)
    if "xng" in rows[0]:
        x[:, _XNG] = [r["xng"][key] for r in rows]
    nd = np.array([r["num_drafts"] for r in rows], float)
    na = np.array([r["num_accepted"] for r in rows], float)
    g = np.array([str(r["group"]) for r in rows])
    L = np.array([r["length"] for r in rows], float)
    return x, nd, na, g, L


def _ridge(x: np.ndarray, z: np.ndarray, lam: float):
    """Ridge on standardised columns, unpenalised intercept; returned on the raw scale:
    ``(coef, cov_unscaled, s2)``."""
    mu, sd = x.mean(0), x.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    A = np.column_stack([np.ones(len(z)), (x - mu) / sd])
    P = np.eye(A.shape[1]) * lam * len(z)
    P[0, 0] = 0.0
    inv = np.linalg.inv(A.T @ A + P)
    b = inv @ A.T @ z
    r = z - A @ b
    s2 = float(r @ r / max(len(z) - np.trace(A @ inv @ A.T), 1.0))
    T = np.eye(A.shape[1])
    T[0, 1:] = -mu / sd
    T[1:, 1:] = np.diag(1 / sd)
    return T @ b, T @ (inv @ A.T @ A @ inv) @ T.T, s2


def _inner(table: dict, excluded: list, lam: float):
    """Leave-one-group-out over the groups left after ``excluded``: prompt squared error sum,
    count, and per group (set error of log(tpf - 1), its prompt-residual variance)."""
    _, _, _, g, _ = _arrays(table, excluded)
    groups = sorted(set(g[~np.isin(g, excluded)]))
    se, n, errs = 0.0, 0, []
    for h in groups:
        x, nd, na, g, L = _arrays(table, excluded + [h])
        tr = ~np.isin(g, excluded + [h])
        te = g == h
        coef, _, s2 = _ridge(x[tr], np.log(na[tr] / nd[tr]), lam)
        zp = np.column_stack([np.ones(te.sum()), x[te]]) @ coef
        se += float(((zp - np.log(na[te] / nd[te])) ** 2).sum())
        n += int(te.sum())
        pred = set_tpf(1 + np.exp(zp + s2 / 2), L[te])
        meas = (nd[te] + na[te]).sum() / nd[te].sum()
        errs.append((float(np.log(pred - 1) - np.log(meas - 1)), s2 / te.sum()))
    return se, n, errs


def fit(table: dict, *, exclude_groups: Sequence[str] = ()) -> ContentModel:
    """Fit the content model on a calibration table.

    Penalty: the one of :data:`PENALTIES` with the smallest leave-one-group-out prompt MSE of
    ``z`` over the kept groups (``xng_top1`` recomputed per fold). Coefficients: ridge on all
    kept prompts. Set effect: for each kept group h the out-of-group set error
    ``d_h = log(pred_h - 1) - log(meas_h - 1)`` and its prompt-residual part ``v_h``;
    ``tau_hat^2 = max(mean(d_h^2 - v_h), 0)``; ``tau0`` = SD of the kept groups' mean ``z``;
    ``tau^2 = (G tau_hat^2 + tau0^2) / (G + 1)``, Student-t with ``G + 1`` df (G kept
    groups). With three groups this is an estimate from three numbers: the t keeps that
    visible.

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
    ex = sorted(set(str(e) for e in exclude_groups))
    x, nd, na, g, L = _arrays(table, ex)
    keep = ~np.isin(g, ex)
    if keep.sum() < 2 * (x.shape[1] + 1):
        raise ModelInputError("too few calibration prompts for the content model",
                              field="rows")
    groups = [str(h) for h in sorted(set(g[keep]))]
    if len(groups) < 2:
        raise ModelInputError("the set effect needs at least 2 prompt groups", field="group")
    scores = []
    for lam in PENALTIES:
        se, n, errs = _inner(table, ex, lam)
        scores.append((se / n, lam, errs))
    _, lam, errs = min(scores, key=lambda s: (s[0], s[1]))
    z = np.log(na[keep] / nd[keep])
    coef, cov, s2 = _ridge(x[keep], z, lam)
    tau_hat2 = max(float(np.mean([d * d - v for d, v in errs])), 0.0)
    tau0 = float(np.std([z[g[keep] == h].mean() for h in groups], ddof=1))
    G = len(groups)
    tau = float(np.sqrt((G * tau_hat2 + tau0 ** 2) / (G + 1)))
    return ContentModel(coef, cov, s2, tau, G + 1, int(keep.sum()), groups, float(lam))


@lru_cache(maxsize=1)
def _default() -> ContentModel:
    return fit(load_calibration())


def default_content_model() -> ContentModel:
    """The content model fitted on every shipped calibration prompt (cached)."""
    return _default()


def leave_one_group_out(table: dict | None = None, *, level: float = 0.90, n_draws: int = 4000,
                        seed: int = 0) -> list[dict]:
    """Leave-one-group-out validation of set-level tokens/forward.

    For every group k: fit on the other groups (penalty and set effect chosen inside, see
    :func:`fit`), predict the k prompts' set tokens/forward from their features (``xng_top1``
    against the other groups' completions only), compare with the measured counters
    (``sum(drafts + accepted) / sum(drafts)``).

    Returns
    -------
    list of dict
        ``group, n, predicted, measured, error_pct, pi_low, pi_high, covered, tau, nu,
        penalty``.
    """
    table = table or load_calibration()
    rng = np.random.default_rng(seed)
    out = []
    for k in sorted(set(str(r["group"]) for r in table["rows"])):
        m = fit(table, exclude_groups=[k])
        x, nd, na, g, L = _arrays(table, [k])
        te = g == k
        pt = float(set_tpf(m.predict_prompts(x[te]), L[te]))
        draws = set_tpf(m.draw_prompts(x[te], n_draws, rng), L[te])
        lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
        meas = float((nd[te] + na[te]).sum() / nd[te].sum())
        out.append({"group": str(k), "n": int(te.sum()), "predicted": pt, "measured": meas,
                    "error_pct": 100 * (pt / meas - 1), "pi_low": float(lo),
                    "pi_high": float(hi), "covered": bool(lo <= meas <= hi),
                    "tau": m.tau, "nu": m.nu, "penalty": m.penalty})
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
    x = capture_features(capture)
    L = np.array([len(c) for c in capture.completions], float)
    base = np.clip(np.asarray(base_curve, float), 1e-9, 1.0)
    ref = default_model().curve
    tpf = m.predict_prompts(x)
    curves = base[None, :k] ** _theta(ref, tpf)[:, None]
    point = float(set_tpf(1 + curves.sum(1), L))
    rng = np.random.default_rng(seed)
    dr = m.draw_prompts(x, n_draws, rng)
    grid = np.linspace(1 + 1e-6, len(ref) + 1 - 1e-6, 4001)  # theta(tpf) is monotone
    th = np.interp(dr, grid, _theta(ref, grid))
    set_draws = set_tpf(1 + (base[None, None, :k] ** th[..., None]).sum(-1), L)
    lo, hi = np.quantile(set_draws, [(1 - level) / 2, (1 + level) / 2])
    return CapturePrediction(tpf, curves, point, float(lo / point), float(hi / point),
                             set_draws, m.to_dict())


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


# ---------------------------------------------------------------------------
# v2 features: own-context and cross-request predictability (issue 12)
# ---------------------------------------------------------------------------

_BITS = 18  # token ids < 2**18 (Gemma vocabulary 262,144)
_ORDERS = (3, 2, 1)


def _ctx_keys(seqs, n):
    """(ctx key, next token) of every position t >= n of every sequence."""
    ks, nx = [], []
    for s in seqs:
        s = np.asarray(s, np.int64)
        if len(s) <= n:
            continue
        k = np.zeros(len(s) - n, np.int64)
        for j in range(n):
            k = (k << _BITS) | s[j:len(s) - n + j]
        ks.append(k)
        nx.append(s[n:])
    if not ks:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(ks), np.concatenate(nx)


class NgramReference:
    """Backoff n-gram top-1 predictor (orders 3, 2, 1) fitted on reference completions.

    For every context of ``n`` tokens seen in the references the most frequent next token
    (ties: smallest id) is kept; a target token is predicted from its longest context found
    (stupid backoff, no smoothing: only the top-1 matters). Token ids must be < 2**18.

    Parameters
    ----------
    completions : sequence of int arrays
        Reference completions (only completions: prompts are benchmark text, outputs are
        what the drafter has to predict).
    """

    def __init__(self, completions):
        self.tables = {}
        for n in _ORDERS:
            k, nx = _ctx_keys(completions, n)
            uk, inv = np.unique(k, return_inverse=True)
            pair = (inv.astype(np.int64) << _BITS) | nx
            up, cnt = np.unique(pair, return_counts=True)
            ci = up >> _BITS
            tok = up & ((1 << _BITS) - 1)
            order = np.lexsort((tok, -cnt, ci))
            ci, tok = ci[order], tok[order]
            first = np.r_[True, ci[1:] != ci[:-1]]
            self.tables[n] = (uk, tok[first])

    def top1_share(self, prompt, completion) -> float:
        """Share of ``completion`` tokens the reference predicts top-1 (context may reach
        into the last 3 prompt tokens). Returns a float in [0, 1]."""
        c = np.asarray(completion, np.int64)
        s = np.concatenate([np.asarray(prompt, np.int64)[-max(_ORDERS):], c])
        off = len(s) - len(c)
        pred = np.full(len(c), -1, np.int64)
        for n in sorted(_ORDERS):  # low orders first, higher orders overwrite
            uk, best = self.tables[n]
            if len(uk) == 0:
                continue
            t = np.arange(off, len(s))
            ok = t >= n
            k = np.zeros(ok.sum(), np.int64)
            tt = t[ok]
            for j in range(n):
                k = (k << _BITS) | s[tt - n + j]
            pos = np.searchsorted(uk, k)
            pos = np.minimum(pos, len(uk) - 1)
            hit = uk[pos] == k
            idx = np.flatnonzero(ok)[hit]
            pred[idx] = best[pos[hit]]
        return float((pred == c).mean())


