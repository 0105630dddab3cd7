"""Public-to-private prompt-set shift of a speculative-decoding score.

A submission is scored on a public prompt set and re-run by the organiser on a private one.
For an MTP chain of fixed depth K the verify step costs the same on both sets
(:class:`models.drafting.cost.ForwardCostModel`: ``step_ms(K+1, K)``), so the modelled TPS
ratio is the tokens/forward ratio: ``TPS_priv / TPS_pub = (tpf_priv / step) / (tpf_pub /
step)``; prefill and client overheads are not modelled (they dilute the shift slightly).

Two sources for the private tokens/forward:

``capture``
    A capture of the private-proxy prompts: the content model
    (:mod:`models.drafting.acceptance_model`) predicts its set tokens/forward with a
    prediction interval (coefficient error, prompt residuals, prompt-set effect). A side
    whose capture holds the calibration prompts reads the measured calibration figure
    instead; when both sides are predicted, :func:`paired_capture_draws` draws the terms
    they share once (coefficient error always, a prompt's residual when both hold it, the
    set effect when both hold the same prompt set).
``evidence``
    No private capture. ``official``: the fit of :mod:`models.drafting.official_shift` on
    the nine official verifier pairs (ratio, allocation noise and prompt-set shift
    separated, drafter-tuned covariate; its predictive distribution already holds the
    allocation noise of the two runs). ``proxy``: predictive distribution of a new local
    proxy pair from the local proxy pairs of ``models/data/private_shift_evidence.json``
    (mean, SD x sqrt(1 + 1/n), t with n - 1 df), times the official allocation-to-allocation
    noise of two runs, ``exp(N(0, (0.0079 sqrt 2)^2))`` (tps_runs.md, pooled 0.79 %, df 3).
    The proxy prompt sets are harsher than the official private set (-11..-25 % against
    -2.7..-6.4 % on the official pairs): a check, not the answer.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Sequence

import numpy as np

from models.errors import ModelInputError

__all__ = ["load_evidence", "evidence_log_ratios", "evidence_draws", "allocation_noise",
           "validate_pairs", "paired_capture_draws", "EVIDENCE_MODES"]

EVIDENCE_MODES = ("official", "proxy")


def load_evidence() -> dict:
    """The shipped public/private evidence (``models/data/private_shift_evidence.json``)."""
    return json.loads(resources.files("models").joinpath("data", "private_shift_evidence.json")
                      .read_text(encoding="utf-8"))


def evidence_log_ratios(ev: dict | None = None, kind: str = "proxy") -> np.ndarray:
    """``log(private / public)`` of the shipped pairs of one kind, shape (n,)."""
    ev = ev or load_evidence()
    return np.array([np.log(p["private"] / p["public"]) for p in ev["pairs"]
                     if p["kind"] == kind])


def allocation_noise(n: int, rng: np.random.Generator, cv: float) -> np.ndarray:
    """Multiplicative noise of the private/public ratio of two official allocations."""
    return np.exp(rng.standard_normal(n) * cv * np.sqrt(2))


def _t_draws(center: float, scale: float, df: int, n: int, rng) -> np.ndarray:
    return center + scale * rng.standard_t(df, size=n)


def evidence_draws(mode: str, n: int, rng: np.random.Generator, *,
                   exclude: Sequence[int] = (), ev: dict | None = None,
                   drafter_tuned: bool = False) -> np.ndarray:
    """Draws of the private/public TPS ratio from the shipped pairs (no private capture).

    Parameters
    ----------
    mode : {"official", "proxy"}
    n : int
    rng : numpy.random.Generator
    exclude : sequence of int
        Indices into ``ev["pairs"]`` left out of the proxy pairs (leave-one-pair-out).
    drafter_tuned : bool
        ``official`` only: the covariate of :func:`models.drafting.official_shift.fit_official`.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Ratio draws (allocation noise included).

    Raises
    ------
    ModelInputError
        Unknown mode, or fewer than 2 proxy pairs left.
    """
    ev = ev or load_evidence()
    if mode not in EVIDENCE_MODES:
        raise ModelInputError(f"unknown evidence {mode!r} ({', '.join(EVIDENCE_MODES)})",
                              field="evidence")
    if mode == "official":
        from models.drafting.official_shift import fit_official
        return fit_official().draws(n, rng, drafter_tuned)
    pairs = [p for i, p in enumerate(ev["pairs"]) if i not in set(exclude)]
    prox = np.array([np.log(p["private"] / p["public"]) for p in pairs if p["kind"] == "proxy"])
    if prox.size < 2:
        raise ModelInputError("need at least 2 proxy pairs for the spread", field="evidence")
    sd = float(prox.std(ddof=1))
    z = _t_draws(float(prox.mean()), sd * np.sqrt(1 + 1 / prox.size), prox.size - 1, n, rng)
    return np.exp(z) * allocation_noise(n, rng, ev["official_allocation_cv"])


def validate_pairs(*, level: float = 0.90, n: int = 20000, seed: int = 0) -> list[dict]:
    """Leave-one-pair-out check of the ``proxy`` mode on the pairs of
    ``private_shift_evidence.json``.

    Each local proxy pair is predicted by ``proxy`` from the other proxy pairs, and the
    official pair of that file by ``proxy`` from all of them (out of sample: how far the
    proxies are from the official private set). The official mode's own leave-one-pair-out
    check is :func:`models.drafting.official_shift.leave_one_out`.

    Returns
    -------
    list of dict
        ``config, kind, mode, observed_drop_pct, predicted_drop_pct (median),
        pi_low_pct, pi_high_pct, covered, in_sample`` (always False); drops in % (positive
        = private below public).
    """
    ev = load_evidence()
    rng = np.random.default_rng(seed)
    out = []
    for i, p in enumerate(ev["pairs"]):
        obs = 100 * (1 - p["private"] / p["public"])
        for mode, excl, ins in [("proxy", [i], False)]:
            r = evidence_draws(mode, n, rng, exclude=excl, ev=ev)
            lo, med, hi = np.quantile(100 * (1 - r), [(1 - level) / 2, 0.5, (1 + level) / 2])
            out.append({"config": p["config"], "kind": p["kind"], "mode": mode,
                        "observed_drop_pct": obs, "predicted_drop_pct": float(med),
                        "pi_low_pct": float(lo),
                        "pi_high_pct": float(hi), "covered": bool(lo <= obs <= hi),
                        "in_sample": ins})
    return out


def paired_capture_draws(private, public, base_curve: np.ndarray, k: int, *, n: int,
                         seed: int = 0, model=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Joint predictive draws of the set tokens/forward of two captures, with the content
    model's error terms shared where they are shared.

    The content model's error on a set is three terms (:meth:`models.drafting.
    acceptance_model.ContentModel.draw_prompts`): coefficient error, one prompt residual per
    prompt and one prompt-set effect. In the private/public ratio they are drawn as follows:

    * coefficient error: one draw for both sides (one fitted model predicts both), so only
      its effect on the *difference* between the captures' states reaches the ratio;
    * prompt residual: one draw per distinct prompt (prompts matched by their token ids),
      shared by a prompt present in both captures, independent otherwise;
    * set effect: shared when both captures hold the same prompt set (equal
      ``prompt_set_hash``), independent (two draws) when the sets differ.

    Two captures of the same prompts therefore differ only by what the model reads in their
    texts (identical captures: ratio exactly 1); two different sets keep both set effects and
    their own prompt residuals (the leave-one-group-out check of the model validates one such
    side against measured counters).

    Parameters
    ----------
    private, public : Capture
    base_curve : array, shape (K0,)
        Survival curve of the stack (see :func:`models.drafting.content_prediction.for_capture`).
    k : int
        Chain depth (<= K0).
    n : int
        Draws.
    seed : int
    model : ContentModel, optional
        Default :func:`models.drafting.acceptance_model.default_content_model`.

    Returns
    -------
    private_draws, public_draws : numpy.ndarray, shape (n,)
        Set tokens/forward at depth ``k`` (same draw index = same shared terms).
    info : dict
        ``same_prompt_set`` (bool), ``shared_prompts`` (int), ``private_point``,
        ``public_point`` (set tokens/forward from the per-prompt point predictions).

    Raises
    ------
    ModelInputError
        A completion shorter than 2 tokens.
    """
    from models.drafting import acceptance_model as am
    from models.drafting import content_prediction as cp
    from models.drafting.acceptance import default_model

    m = model or am.default_content_model()
    rng = np.random.default_rng(seed)
    same = private.prompt_set_hash() == public.prompt_set_hash()
    keys = {}
    sides = []
    for cap in (private, public):
        X, off = am.capture_states(cap)
        idx = np.array([keys.setdefault(am._prompt_key(p), len(keys)) for p in cap.prompts])
        sides.append((cap, X, off, idx))
    n_coef = len(m.coef)
    C = m.cov_unscaled * m.s2
    L = np.linalg.cholesky(C + 1e-12 * max(np.trace(C), 1e-12) * np.eye(n_coef))
    dc = rng.standard_normal((n, n_coef)) @ L.T               # shared coefficient error
    resid = rng.standard_normal((n, len(keys))) * np.sqrt(m.s2)  # one per distinct prompt
    n_set = 1 if same else 2
    tset = (m.tau * rng.standard_t(m.nu, size=(n, n_set)) if m.tau > 0
            else np.zeros((n, n_set)))
    ref = default_model().curve
    base = np.clip(np.asarray(base_curve, float), 1e-9, 1.0)
    grid = np.linspace(1 + 1e-6, len(ref) + 1 - 1e-6, 4001)  # theta(tpf) is monotone
    tgrid = cp._theta(ref, grid)
    out, points = [], []
    for j, (cap, X, off, idx) in enumerate(sides):
        z = m.predict_z(X, off)
        G = am._jac(m.coef, X, off)
        d = z + dc @ G.T + resid[:, idx] + tset[:, [0 if same else j]]
        dr = np.minimum(1 + np.exp(d), am._TPF_MAX)
        Ls = np.array([len(c) for c in cap.completions], float)
        th = np.interp(dr, grid, tgrid)
        out.append(am.set_tpf(1 + (base[None, None, :k] ** th[..., None]).sum(-1), Ls))
        tp = m.predict_prompts(X, off)
        points.append(float(am.set_tpf(1 + (base[None, :k] ** cp._theta(ref, tp)[:, None])
                                       .sum(1), Ls)))
    shared = len(sides[0][3]) + len(sides[1][3]) - len(keys)
    return out[0], out[1], {"same_prompt_set": bool(same), "shared_prompts": int(shared),
                            "private_point": points[0], "public_point": points[1]}
