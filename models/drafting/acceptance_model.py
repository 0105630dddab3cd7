"""Content-aware MTP acceptance: predict a prompt's tokens/forward from its capture alone.

Why
    Measured MTP counters belong to one prompt set. On other prompts the calibration curve is
    wrong by tens of percent (F7 on P128: 3.85 tokens/forward; same stack on a private
    ShareGPT-style proxy: 3.07, record ``F7_PRIV128``). The lookup replays read the tokens
    themselves; MTP acceptance has to be *predicted* from what the tokens look like.

Model ``content-walk-v8`` (per token t of a completion, calibration stack F, K=7)
    ``p_t = sigmoid(c0 + c1 own_hit_t + c2 xng_hit_t + c3 eos_t + c4 match16_t / 16 + c5
    recur128_t)``: the chance the MTP draft of token t is right, from drafter-free states
    (:data:`STATES`; v3 was the same without ``recur128``):
    ``own_hit`` the suffix drafter on the request's own prompt + output so far
    (``Suffix(cache="none")``, vLLM defaults) gets >= 1 token accepted at t; ``xng_hit`` a
    backoff 3/2/1-gram model fitted on OTHER requests' completions predicts token t top-1
    (reference: the 128 calibration completions, ``models/data/acceptance_reference_P128.npz``,
    a calibration prompt scored without its own completion); ``eos`` t is at or after the
    first EOS; ``match16`` the own-context suffix match length at t, capped at 16;
    ``recur128`` token t's id occurs among the previous 128 completion tokens
    (:func:`recur_mask`: the completion's working vocabulary, the per-token ``ttr128``).
    A K=7 chain is walked over the completion exactly (:func:`walk_tpf`), so runs of easy
    tokens, position in the completion and the rising conditional acceptance come from the
    sequence. The prompt's ``z_p = log(tpf_p - 1)`` is the walk's plus ``e_p ~ N(0, s2)``
    (prompt residual, includes the counters' step noise) plus ``u_set ~ tau t_nu`` (a
    prompt-set effect shared by every prompt of a set that the states do not explain).

Fit (:func:`fit`): posterior mode of the counters' ``z_p`` (runs A + B pooled) on the walk's,
fixed start, a weakly-informative ``N(0, 10^2)`` prior on every slope per unit of its state
(:data:`PRIOR_SD`; intercept flat). Unpenalised, the own-hit slope is not identified (the
counters say a token the own-context suffix drafter gets right is accepted: separation, the
optimum runs to +inf) and the shipped coefficients were wherever the optimiser stopped, 1 %
apart between installs; the prior pins that slope near 3.8 and moves the set-level
leave-one-group-out errors by < 0.05 points. Set effect: ``tau^2 = (G tau_hat^2 + tau0^2) /
(G + 1)`` with ``tau_hat`` from leave-one-group-out set errors inside the fitted groups
(minus their prompt-residual part; ``xng_hit`` re-scored without the left-out group),
``tau0`` the raw between-group SD of mean ``z`` and G the number of groups; Student-t with
``G + 1`` df. Model, states and pooling were pre-registered
(``models/data/acceptance_model_prereg.json``) before their held-out errors were computed.

Honest validation (leave one group out; nothing of the left-out group, not even n-gram
statistics, reaches its fold; docs/drafting.md "Content model: reproducible fit and
validation on 11 prompt subsets"): v8 set tokens/forward -3.0 % on AIME-2026, +2.3 % on
GPQA-Diamond, +1.3 % on MMLU-Pro, all inside their 90 % intervals; 11/11 prompt-subset
folds within +-5 % (``content_validation.py``). v3 gave -6.2 / +4.5 / -4.4 %: a reasoning
completion works in a small vocabulary (distinct-token share 0.235 AIME vs 0.29-0.31),
which neither own-context suffix matches nor other requests' n-grams see (addenda 6-7 of
the pre-registration; v7, the same state with the prompt in the window, failed the fold
criterion: prompt-length Q1 +7.8 %).
Three further candidates pre-registered with their decision rule (addendum 4: n-gram state of
training prompts scored cross-group; plus local-window states; addendum 5: every prompt
scored against the other prompts of its own set) gave -5.1 / +12.8 / +4.2 %,
-7.8 / +17.6 / +5.7 % and -5.1 / +9.3 / -3.8 %: none passed (v3 stayed until v8).
Calibration completions are 512 tokens long: states further into a completion (long-form
captures) are an extrapolation no shipped measurement checks.

Set level: a set's tokens/forward is ``sum_p L_p / sum_p (L_p / tpf_p)``. The prediction
draws the coefficient error (delta method through the walk), ``e_p`` and ``u_set`` and returns
quantiles of that ratio, so the interval carries all three.

The prompt-level features (:data:`FEATURES`, :func:`static_features`,
:func:`capture_features`) are kept for the validation record of the earlier models
(``bench/bench_shift_acceptance.py``: v1, v2 a priori, nested selection, nested ridge).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Sequence

import numpy as np

from models.drafting.ngram_reference import NgramReference
from models.errors import ModelInputError

__all__ = ["FEATURES", "ContentModel", "capture_features", "calibration_table", "fit",
           "load_calibration", "default_content_model", "set_tpf", "leave_one_group_out",
           "MODEL_NAME", "CALIBRATION_FILE", "static_features", "load_reference",
           "PENALTIES", "STATES", "calibration_token_arrays", "walk_tpf", "token_states", "capture_states",
           "calibration_states", "recur_mask"]

#: Feature names, in design-matrix order (after the intercept).
FEATURES = ("own_hit1", "own_easy3", "pld_hit1", "xng_top1", "ttr128", "eos_tail",
            "log_prompt_len")
#: Per-token states of the walk model (after the intercept).
STATES = ("own_hit", "xng_hit", "eos", "match16", "recur128")
MODEL_NAME = ("content-walk-v8 (per-token acceptance from own-context suffix match, n-gram "
              "predictability under other requests, post-EOS, recurrence of the token in the "
              "completion's previous 128 tokens; K=7 chain walked over the completion; stack F "
              "K=7 counters, P128)")
CALIBRATION_FILE = "acceptance_features_P128.json"
REFERENCE_FILE = "acceptance_reference_P128.npz"
#: Ridge penalties (x number of training prompts, on standardised features); pre-registered.
PENALTIES = (0.3, 1, 3, 10, 30, 100, 300)
_EOS = (1, 106)  # Gemma <eos>, <end_of_turn> (decode/README.md)
_WINDOW = 128
_EASY_MATCH = 3  # same threshold as the hybrid easiness state (suffix default)
_XNG = FEATURES.index("xng_top1")
#: Completion positions the calibration covers (P128: 512 tokens per prompt).
CALIBRATED_POSITIONS = 512
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
    for i, (p, c) in enumerate(zip(capture.prompts, capture.completions, strict=True)):
        out[i] = ref["reference"].top1_share(p, c, without=where.get(_prompt_key(p)))
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


def calibration_token_arrays(capture) -> dict:
    """Per-token states of the calibration capture for the shipped reference file.

    ``xng_<key>`` is stored for every set of left-out groups (key ``all`` or
    ``-g1-g2...``): with groups E left out, a prompt outside E is scored against the
    completions of every prompt outside E except itself, a prompt inside E against the
    completions outside E. That is what nested leave-one-group-out needs.

    Returns
    -------
    dict of str -> numpy.ndarray (uint8, shape (N,)) plus ``offsets`` (int64, (P + 1,))
        ``own_hit``, ``match16``, ``eos``, ``xng_<key>``.
    """
    from itertools import combinations

    from models.drafting.lookup import Suffix, draft_profiles

    prof = draft_profiles(capture, Suffix(cache="none"))
    groups = np.array([str(g) for g in (capture.groups or [None] * len(capture))])
    names = sorted(set(groups))
    comps, prompts = capture.completions, capture.prompts
    out = {"offsets": np.asarray(prof.offsets, np.int64),
           "own_hit": (prof.accept_len >= 1).astype(np.uint8),
           "match16": np.minimum(prof.match_len, 16).astype(np.uint8),
           "eos": np.concatenate([_eos_mask(c) for c in comps]).astype(np.uint8)}
    for r_ in range(0, len(names)):
        for ex in combinations(names, r_):
            inside = np.isin(groups, ex)
            ref_idx = np.flatnonzero(~inside)
            full = NgramReference([comps[i] for i in ref_idx])
            where = {int(i): k for k, i in enumerate(ref_idx)}
            hits = [full.top1_hits(prompts[i], comps[i], without=where.get(i))
                    for i in range(len(capture))]
            out["xng_" + _xkey(ex)] = np.concatenate(hits).astype(np.uint8)
    return out


def calibration_table(capture, rows: Sequence[dict], arrays: dict | None = None) -> dict:
    """Join a capture's prompt-level features with per-prompt counters (the shipped
    calibration file).

    Parameters
    ----------
    capture : Capture
        The calibration capture (P128 stack-F spec-on K=7).
    rows : sequence of dict
        Counter rows ``id``, ``num_drafts``, ``num_accepted`` (runs pooled by id).
    arrays : dict, optional
        :func:`calibration_token_arrays` of the capture (computed when omitted).

    Returns
    -------
    dict
        ``{"features", "prompt_set_hash", "rows": [{id, group, length, num_drafts,
        num_accepted, x, xng}]}`` (``x`` in :data:`FEATURES` order, its ``xng_top1`` entry
        the ``"all"`` share; ``xng`` the share per set of left-out groups).
    """
    arrays = arrays or calibration_token_arrays(capture)
    off = arrays["offsets"]
    acc: dict[str, list[float]] = {}
    for r in rows:
        a = acc.setdefault(str(r["id"]), [0.0, 0.0])
        a[0] += float(r["num_drafts"])
        a[1] += float(r["num_accepted"])
    st = static_features(capture)
    groups = [str(g) for g in (capture.groups or [None] * len(capture))]
    xng = {k[4:]: np.array([arrays[k][off[i]:off[i + 1]].mean() for i in range(len(capture))])
           for k in arrays if k.startswith("xng_")}
    out = []
    for i, pid in enumerate(capture.ids):
        if pid not in acc:
            continue
        x = [float(st[f][i]) if f != "xng_top1" else float(xng["all"][i]) for f in FEATURES]
        out.append({"id": pid, "group": groups[i], "length": int(off[i + 1] - off[i]),
                    "num_drafts": acc[pid][0], "num_accepted": acc[pid][1],
                    "x": [round(v, 6) for v in x],
                    "xng": {k: round(float(v[i]), 6) for k, v in xng.items()}})
    return {"features": list(FEATURES), "prompt_set_hash": capture.prompt_set_hash(),
            "rows": out}


def load_calibration() -> dict:
    """The shipped calibration table (``models/data/acceptance_features_P128.json``)."""
    return json.loads(resources.files("models").joinpath("data", CALIBRATION_FILE)
                      .read_text(encoding="utf-8"))


from models.kernels.mtp import walk_tpf as _walk_kernel  # noqa: E402


def walk_tpf(p: np.ndarray, offsets: np.ndarray, k: int = 7) -> np.ndarray:
    """Expected tokens/forward of a K-deep MTP chain walked over each completion.

    Position t of a completion is drafted right with probability ``p[t]`` (independently);
    a forward at t (t tokens committed) accepts ``j`` drafts with probability
    ``prod(p[t:t+j]) (1 - p[t+j])`` and emits ``j + 1`` tokens; the first token comes from
    prefill (vLLM's counters: start 1). Expected forwards by dynamic programming from the
    end, so ``tpf = (L - 1) / E[forwards]``.

    Parameters
    ----------
    p : numpy.ndarray, float64, shape (N,)
        Per-token acceptance probabilities, all completions concatenated.
    offsets : numpy.ndarray, int64, shape (R + 1,)
    k : int
        Chain depth.

    Returns
    -------
    numpy.ndarray, shape (R,)
    """
    return _walk_kernel(np.ascontiguousarray(p, np.float64),
                        np.ascontiguousarray(offsets, np.int64), int(k))


def token_states(own_hit, xng_hit, eos, match16, recur128) -> np.ndarray:
    """Design matrix of the walk model: intercept and :data:`STATES`, shape (N, 6)."""
    return np.column_stack([np.ones(len(own_hit)), own_hit, xng_hit, eos,
                            np.asarray(match16, float) / 16.0, recur128]).astype(float)


def recur_mask(completion, window: int = _WINDOW) -> np.ndarray:
    """``recur128`` state of one completion: token t's id occurs among the previous
    ``window`` COMPLETION tokens (prompt tokens do not count; False at t = 0), shape (L,)
    bool. The per-token form of ``ttr128`` (1 - type/token ratio over 128-token windows):
    the completion's working vocabulary. Window 128 is :data:`_WINDOW`, not tuned
    (``acceptance_model_prereg.json`` addenda 6-7)."""
    c = np.asarray(completion, np.int64)
    n = len(c)
    out = np.zeros(n, bool)
    if n < 2:
        return out
    order = np.argsort(c, kind="stable")  # same ids adjacent, in position order
    cs = c[order]
    same = cs[1:] == cs[:-1]
    gap = order[1:] - order[:-1]
    out[order[1:][same & (gap <= window)]] = True
    return out


def capture_states(capture):
    """Per-token states of a capture: ``(X, offsets)`` with ``X`` from :func:`token_states`
    (``xng_hit`` against the shipped reference, a calibration prompt without its own
    completion) and ``offsets`` int64 (P + 1,).

    Raises
    ------
    ModelInputError
        A completion shorter than 2 tokens.
    """
    from models.drafting.lookup import Suffix, draft_profiles

    _check(capture)
    prof = draft_profiles(capture, Suffix(cache="none"))
    ref = load_reference()
    where = {k: i for i, k in enumerate(ref["prompt_keys"])}
    xh, eos, rc = [], [], []
    for p, c in zip(capture.prompts, capture.completions, strict=True):
        xh.append(ref["reference"].top1_hits(p, c, without=where.get(_prompt_key(p))))
        eos.append(_eos_mask(c))
        rc.append(recur_mask(c))
    X = token_states((prof.accept_len >= 1).astype(float), np.concatenate(xh).astype(float),
                     np.concatenate(eos).astype(float), np.minimum(prof.match_len, 16),
                     np.concatenate(rc).astype(float))
    return X, np.asarray(prof.offsets, np.int64)


def _eos_mask(c) -> np.ndarray:
    c = np.asarray(c)
    hit = np.isin(c, _EOS)
    e = np.zeros(len(c), bool)
    if hit.any():
        e[int(hit.argmax()):] = True
    return e


def calibration_states(excluded: Sequence[str] = ()):
    """Shipped per-token states of the 128 calibration prompts, ``xng_hit`` scored as a
    fold that leaves ``excluded`` groups out (see :func:`calibration_table`): ``(X,
    offsets)``."""
    with resources.files("models").joinpath("data", REFERENCE_FILE).open("rb") as fh:
        z = np.load(fh)
        off = z["offsets"]
        X = token_states(z["own_hit"], z["xng_" + _xkey(excluded)], z["eos"], z["match16"],
                         _calibration_recur())
    return X, off


@lru_cache(maxsize=1)
def _calibration_recur() -> np.ndarray:
    """``recur128`` of the 128 shipped calibration completions, concatenated (N,) float."""
    ref = load_reference()
    return np.concatenate([recur_mask(c) for c in ref["completions"]]).astype(float)


def _subset(X, off, idx):
    parts = [X[off[i]:off[i + 1]] for i in idx]
    return (np.concatenate(parts) if parts else X[:0],
            np.r_[0, np.cumsum([len(q) for q in parts])].astype(np.int64))


def _z(c, X, off, k=7):
    p = 1.0 / (1.0 + np.exp(-np.clip(X @ c, -50, 50)))
    return np.log(np.maximum(walk_tpf(p, off, k) - 1, 1e-9))


def _jac(c, X, off, eps=1e-6):
    z0 = _z(c, X, off)
    return np.column_stack([(_z(c + eps * e, X, off) - z0) / eps for e in np.eye(len(c))])


#: v3's fixed start (pre-registered: no tuning); v8 adds 0 for the recur128 slope.
_C0_V3 = np.array([0.5, 1.0, 0.5, 2.0, 0.5])
_C0 = np.r_[_C0_V3, 0.0]
#: Prior standard deviation of every slope, per unit of its state (one hit, one matched
#: token: ``match16`` enters the design as ``match16 / 16``, so its prior SD there is
#: ``16 x``): ``N(0, 10^2)`` on the logit scale, an odds ratio of e^10 per unit, weakly
#: informative. It pins the own-hit slope, which the counters leave unidentified (every
#: token with ``own_hit`` is accepted in the limit: separation, the unpenalised optimum
#: runs off along a flat ridge and lands wherever the optimiser stops), and leaves the
#: identified slopes within a few hundredths of their unpenalised values. Intercept flat.
PRIOR_SD = 10.0
_PRIOR_PREC = np.array([0.0, 1.0, 1.0, 1.0, 1.0 / 16 ** 2, 1.0]) / PRIOR_SD ** 2
#: Step scale of the coefficients (one unit of each state; see PRIOR_SD).
_X_SCALE = np.array([1.0, 1.0, 1.0, 1.0, 16.0, 1.0])


def _fit_c(X, off, z):
    """Posterior mode of the coefficients under :data:`PRIOR_SD` and its Laplace covariance
    divided by ``s2``: ``(coef, cov_unscaled, s2)``.

    Penalised least squares of ``z`` weighted by the prompt residual variance ``s2``, which
    the mode itself gives: two cheap passes settle ``s2`` (from ``var(z)``; it moves by
    < 1e-6 relative after the second), a third and a fourth with a central-difference
    Jacobian and tight tolerances (1e-10, then 1e-12) fix the mode to ~1e-5 of each
    coefficient's standard error. v8's recur128 state is collinear with own_hit and match16
    (correlation matrix of the coefficients of condition number 2.3e4, v3's 1.9e3): with
    three passes the mode stopped up to 8e-5 SE from its limit, the fourth pass removes that.
    """
    from scipy.optimize import least_squares

    root = np.sqrt(_PRIOR_PREC)
    c, s2 = _C0, float(np.var(z))
    for jac, tol in (("2-point", 1e-8), ("2-point", 1e-8), ("3-point", 1e-10), ("3-point", 1e-12)):
        w = 1.0 / np.sqrt(s2)
        r = least_squares(lambda c_, w=w: np.r_[(_z(c_, X, off) - z) * w, root * c_], c,
                          method="lm", jac=jac, x_scale=_X_SCALE, xtol=tol, ftol=tol, gtol=tol)
        c = r.x
        res = _z(c, X, off) - z
        s2 = float(res @ res / max(len(z) - len(c), 1))
    J = r.jac[:len(z)] / w
    return c, np.linalg.inv(J.T @ J + s2 * np.diag(_PRIOR_PREC)), s2


@dataclass
class ContentModel:
    """A fitted content-walk model (see module docstring).

    Attributes
    ----------
    coef : numpy.ndarray, shape (6,)
        Logit coefficients of the per-token acceptance: intercept and :data:`STATES`.
    cov_unscaled : numpy.ndarray, shape (6, 6)
        ``(J'J + s2 P)^-1`` of the fit, ``P`` the prior precision (times ``s2``: the
        coefficients' Laplace posterior covariance).
    s2 : float
        Prompt residual variance of ``log(tpf - 1)``.
    tau : float
        Prompt-set effect scale on the same scale.
    nu : int
        Degrees of freedom of the set effect's Student-t (groups + 1).
    n_prompts : int
    groups : list of str
    """

    coef: np.ndarray
    cov_unscaled: np.ndarray
    s2: float
    tau: float
    nu: int
    n_prompts: int
    groups: list

    def predict_z(self, X: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Per-prompt ``log(tpf - 1)`` of the walk, shape (P,)."""
        return _z(self.coef, X, offsets)

    def predict_prompts(self, X: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Per-prompt expected tokens/forward ``1 + exp(z + s2 / 2)``, capped at 8 (K=7),
        shape (P,)."""
        return np.minimum(1 + np.exp(self.predict_z(X, offsets) + self.s2 / 2), _TPF_MAX)

    def draw_prompts(self, X: np.ndarray, offsets: np.ndarray, n: int,
                     rng: np.random.Generator, *, set_effect: bool = True) -> np.ndarray:
        """Predictive draws of every prompt's tokens/forward, shape (n, P): coefficient error
        (delta method through the walk), prompt residuals and one shared set effect."""
        z = self.predict_z(X, offsets)
        G = _jac(self.coef, X, offsets)
        C = self.cov_unscaled * self.s2
        L = np.linalg.cholesky(C + 1e-12 * max(np.trace(C), 1e-12) * np.eye(len(self.coef)))
        dz = (rng.standard_normal((n, len(self.coef))) @ L.T) @ G.T
        d = z + dz + rng.standard_normal((n, len(z))) * np.sqrt(self.s2)
        if set_effect and self.tau > 0:
            d += (self.tau * rng.standard_t(self.nu, size=n))[:, None]
        return np.minimum(1 + np.exp(d), _TPF_MAX)

    def to_dict(self) -> dict:
        return {"model": MODEL_NAME, "states": list(STATES),
                "coef": [float(v) for v in self.coef], "s2": self.s2, "tau": self.tau,
                "nu": self.nu, "n_prompts": self.n_prompts, "groups": list(self.groups)}


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


def _counters(table):
    _, nd, na, g, L = _arrays(table)
    return nd, na, g, L


def _inner_errors(table: dict, excluded: list) -> list:
    """Leave-one-group-out inside the groups left after ``excluded``: per group h, the set
    error of ``log(tpf - 1)`` and its prompt-residual variance ``s2 / n_h``."""
    nd, na, g, L = _counters(table)
    groups = sorted(set(g[~np.isin(g, excluded)]))
    errs = []
    for h in groups:
        X, off = calibration_states(excluded + [h])
        tr = np.flatnonzero(~np.isin(g, excluded + [h]))
        te = np.flatnonzero(g == h)
        c, _, s2 = _fit_c(*_subset(X, off, tr), np.log(na[tr] / nd[tr]))
        zp = _z(c, *_subset(X, off, te))
        pred = set_tpf(1 + np.exp(zp + s2 / 2), L[te])
        meas = (nd[te] + na[te]).sum() / nd[te].sum()
        errs.append((float(np.log(pred - 1) - np.log(meas - 1)), s2 / len(te)))
    return errs


def fit(table: dict | None = None, *, exclude_groups: Sequence[str] = ()) -> ContentModel:
    """Fit the content-walk model on the calibration prompts.

    Coefficients: posterior mode of ``log(tpf_p - 1)`` (pooled counters) on the walk's
    ``log(tpf - 1)`` over the kept prompts, fixed start, slopes ``N(0, PRIOR_SD^2)`` per
    unit of their state (:func:`_fit_c`). Set effect: for each
    kept group h the out-of-group set error ``d_h`` (model fitted without h, ``xng_hit``
    scored without h) and its prompt-residual part ``v_h``; ``tau_hat^2 = max(mean(d_h^2 -
    v_h), 0)``; ``tau0`` = SD of the kept groups' mean ``log(tpf - 1)``; ``tau^2 = (G
    tau_hat^2 + tau0^2) / (G + 1)``, Student-t with ``G + 1`` df (G kept groups).

    Parameters
    ----------
    table : dict, optional
        Calibration table (counters, groups); default :func:`load_calibration`. Per-token
        states come from the shipped reference file.
    exclude_groups : sequence of str
        Groups left out (leave-one-group-out validation): neither their counters nor any
        state scored with them in the reference is read.

    Returns
    -------
    ContentModel

    Raises
    ------
    ModelInputError
        Fewer than 2 groups or 10 prompts left.
    """
    table = table or load_calibration()
    ex = sorted(set(str(e) for e in exclude_groups))
    nd, na, g, L = _counters(table)
    keep = np.flatnonzero(~np.isin(g, ex))
    groups = [str(h) for h in sorted(set(g[keep]))]
    if len(groups) < 2:
        raise ModelInputError("the set effect needs at least 2 prompt groups", field="group")
    if len(keep) < 10:
        raise ModelInputError("too few calibration prompts for the content model",
                              field="rows")
    X, off = calibration_states(ex)
    z = np.log(na[keep] / nd[keep])
    c, cov, s2 = _fit_c(*_subset(X, off, keep), z)
    errs = _inner_errors(table, ex)
    tau_hat2 = max(float(np.mean([d * d - v for d, v in errs])), 0.0)
    tau0 = float(np.std([z[g[keep] == h].mean() for h in groups], ddof=1))
    G = len(groups)
    tau = float(np.sqrt((G * tau_hat2 + tau0 ** 2) / (G + 1)))
    return ContentModel(c, cov, s2, tau, G + 1, int(len(keep)), groups)


def default_content_model() -> ContentModel:
    """The content model fitted on every calibration prompt, as shipped in the calibration
    file (``walk_fit``; :func:`fit` reproduces it, tested)."""
    w = load_calibration()["walk_fit"]
    return ContentModel(np.array(w["coef"]), np.array(w["cov_unscaled"]), w["s2"], w["tau"],
                        w["nu"], w["n_prompts"], list(w["groups"]))


def leave_one_group_out(table: dict | None = None, *, level: float = 0.90, n_draws: int = 4000,
                        seed: int = 0) -> list[dict]:
    """Leave-one-group-out validation of set-level tokens/forward.

    For every group k: fit without k (set effect from leave-one-group-out inside the other
    groups, see :func:`fit`), predict the k prompts' set tokens/forward from their states
    (``xng_hit`` against the other groups' completions only), compare with the measured
    counters (``sum(drafts + accepted) / sum(drafts)``).

    Returns
    -------
    list of dict
        ``group, n, predicted, measured, error_pct, pi_low, pi_high, covered, tau, nu``.
    """
    table = table or load_calibration()
    nd, na, g, L = _counters(table)
    rng = np.random.default_rng(seed)
    out = []
    for k in sorted(set(g)):
        m = fit(table, exclude_groups=[k])
        te = np.flatnonzero(g == k)
        Xt, ot = _subset(*calibration_states([k]), te)
        pt = float(set_tpf(m.predict_prompts(Xt, ot), L[te]))
        draws = set_tpf(m.draw_prompts(Xt, ot, n_draws, rng), L[te])
        lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
        meas = float((nd[te] + na[te]).sum() / nd[te].sum())
        out.append({"group": str(k), "n": int(len(te)), "predicted": pt, "measured": meas,
                    "error_pct": 100 * (pt / meas - 1), "pi_low": float(lo),
                    "pi_high": float(hi), "covered": bool(lo <= meas <= hi),
                    "tau": m.tau, "nu": m.nu})
    return out
