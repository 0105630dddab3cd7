r"""Assurance when the noise scales are known: exact label rates without simulation, and the
Normal approximation of large designs.

With both scales known (a Scaled-Inv-χ² prior of very large df) the posterior of Δ is
Normal with a known SD, and its mean is Normal given the truth, so each label's
probability is a Normal CDF: no datasets need be simulated (:func:`evaluate_known`).
:func:`normal_assurance` applies the same algebra to designs too large to simulate.
"""

from __future__ import annotations

import math

import numpy as np

from models.stats.assurance import FixedResult, Truth, planned_sign
from models.stats.assurance_analysis import _analysis
from models.stats.decision import A_BETTER, B_BETTER, EQUIVALENT, LABEL_NAMES, target_labels
from models.stats.designs import Layout
from models.stats.noise import NoisePrior


__all__ = ["KNOWN_DF", "known_scales", "evaluate_known", "normal_assurance"]

# --------------------------------------------------------------------------------------------
# known noise: exact rates without simulation; the Normal approximation of large designs
# --------------------------------------------------------------------------------------------
#: Degrees of freedom from which a Scaled-Inv-χ² prior is read as a *known* scale: the SD of
#: log s is then 1/sqrt(2 df) <= 0.07 % of the scale (``planner repeats --known-noise`` states
#: df = 1e9).
KNOWN_DF = 1e6


def known_scales(prior: NoisePrior, min_df: float = KNOWN_DF) -> tuple[float, float] | None:
    """(τ, σ) when both scales of ``prior`` are known (Scaled-Inv-χ² with df >= ``min_df``),
    else None."""
    sp = (prior.tau, prior.sigma)
    if all(s.kind == "inv_chi2" and s.df >= min_df for s in sp):
        return float(prior.tau.scale), float(prior.sigma.scale)
    return None


def _label_probs(mu: np.ndarray, sd_m: np.ndarray, s: float, rope: float, rule: str,
                 level: float, hdi_prob: float) -> dict:
    """P(each label) when the posterior of Δ is N(m, s²) and m ~ N(mu, sd_m²) (per draw)."""
    from scipy.special import ndtr, ndtri

    if rule == "superiority":
        zl = float(ndtri(level))
        pb = ndtr((mu - rope - zl * s) / sd_m)
        zero = np.zeros_like(pb)
        return {B_BETTER: pb, A_BETTER: zero, EQUIVALENT: zero}
    z = float(ndtri(0.5 + 0.5 * hdi_prob))
    pb = ndtr((mu - rope - z * s) / sd_m)
    pa = ndtr((-rope - z * s - mu) / sd_m)
    pe = np.zeros_like(pb)
    if rope > 0:
        pe = np.maximum(ndtr((rope - z * s - mu) / sd_m) - ndtr((-rope + z * s - mu) / sd_m), 0.0)
    return {B_BETTER: pb, A_BETTER: pa, EQUIVALENT: pe}


def _mean_se(p: np.ndarray) -> tuple[float, float]:
    """Mean of per-draw probabilities and its Monte-Carlo SE (0 when all draws agree)."""
    return float(np.mean(p)), float(np.std(p) / math.sqrt(max(p.size, 1)))


def evaluate_known(layout: Layout, prior: NoisePrior, truth: Truth, rope: float, *,
                   rule: str = "verdict", level: float = 0.95, hdi_prob: float = 0.95,
                   error_rates: bool = True) -> FixedResult:
    r""":func:`evaluate_fixed` in closed form when the analysis knows the noise.

    With (τ, σ) known (:func:`known_scales`), the exact posterior of Δ of
    :class:`GridAnalysis` has one grid point: Δ | y ~ N(m, s²) with s fixed and
    m = wᵀz linear in the typed statistics z = (1, S_A, S_B, ST_1..ST_K). Under a truth draw
    (τ_d, σ_d, Δ_d, μ_A), z is Gaussian: each instance of type k adds
    u_i (0, a_k, b_k, n_k e_k) and each run ε (0, 1, 0, e_k) (A) or (0, 0, 1, e_k) (B), so

    .. math::

        E[m] = w_A\,\mu_A + w_B\,(\mu_A + \Delta_d),\qquad
        \operatorname{Var}[m] = \tau_d^2\,\textstyle\sum_k c_k (w_1 a_k + w_2 b_k
        + w_{3+k} n_k)^2 + \sigma_d^2 \sum_k c_k\,[a_k (w_1 + w_{3+k})^2
        + b_k (w_2 + w_{3+k})^2],

    and every label has a Normal probability (the HDI is m ± z s; superiority needs
    (m − r)/s >= Φ⁻¹(level)). The rates are the means of these probabilities over the truth
    draws: exact for a fixed Δ and known noise (SE 0); for a distribution of Δ the SE is that
    of the mean over its draws (Rao-Blackwellised simulation).

    Parameters
    ----------
    layout, prior, truth, rope, rule, level, hdi_prob, error_rates
        As :func:`evaluate_fixed` (no existing runs).

    Returns
    -------
    FixedResult
        ``grid_points`` is 1.

    Raises
    ------
    ValueError
        ``prior`` does not know its noise (:func:`known_scales` is None).
    """
    ks = known_scales(prior)
    if ks is None:
        raise ValueError("evaluate_known needs a prior with known scales (df >= KNOWN_DF)")
    an = _analysis(layout, prior, np.array([ks[0]]), np.array([ks[1]]))
    w = an.W[:, 0]
    s = float(an.delta_sd[0])
    types = layout.types
    wa = w[1] * layout.n_a + sum(w[3 + k] * t.count * t.a for k, t in enumerate(types))
    wb = w[2] * layout.n_b + sum(w[3 + k] * t.count * t.b for k, t in enumerate(types))
    vt = sum(t.count * (w[1] * t.a + w[2] * t.b + w[3 + k] * t.n) ** 2
             for k, t in enumerate(types))
    vs = sum(t.count * (t.a * (w[1] + w[3 + k]) ** 2 + t.b * (w[2] + w[3 + k]) ** 2)
             for k, t in enumerate(types))
    sd_m = np.sqrt(truth.tau ** 2 * vt + truth.sigma ** 2 * vs)

    def probs(delta):
        mu = wa * truth.mu_a + wb * (truth.mu_a + delta)
        return _label_probs(mu, sd_m, s, rope, rule, level, hdi_prob)

    p = probs(truth.delta)
    tgt = target_labels(truth.delta, rope, rule)
    hit = np.zeros(truth.size)
    for k, pk in p.items():
        hit += np.where(tgt == k, pk, 0.0)
    assur, ase = _mean_se(hit)
    fr = {LABEL_NAMES[k]: float(np.mean(p[k])) if k in p else 0.0 for k in LABEL_NAMES}
    fr[LABEL_NAMES[0]] = max(0.0, 1.0 - sum(float(np.mean(v)) for v in p.values()))
    fc = fse = float("nan")
    ws = None
    if error_rates:
        if rule == "equivalence":
            fc, fse = _mean_se(probs(np.full(truth.size, rope))[EQUIVALENT])
        else:
            p0 = probs(np.zeros(truth.size))
            fc, fse = _mean_se(p0[B_BETTER] + p0[A_BETTER])
            p1 = probs(-truth.delta)
            ws = float(np.mean(p1[B_BETTER if planned_sign(truth) > 0 else A_BETTER]))
    return FixedResult(assur, ase, fc, fse, ws, fr, truth.size, 1, s)


def normal_assurance(n: np.ndarray, runs_per_instance: int, truth: Truth, rope: float, *,
                     rule: str = "verdict", level: float = 0.95,
                     hdi_prob: float = 0.95) -> np.ndarray:
    r"""Normal approximation of the assurance of separate designs of ``n`` runs per arm.

    Each truth draw is analysed as if its own (τ_d, σ_d) were known and the μ prior flat:
    with r runs of one config per instance and m = n / r instances per arm,
    :math:`\hat\Delta \sim N(\Delta_d, V)`, :math:`V = 2(\tau_d^2 / m + \sigma_d^2 / n)`, and
    the posterior is N(Δ̂, V); the label probabilities are those of :func:`evaluate_known`.
    It ignores the uncertainty about the noise, which the data of a large design pin down
    (its posterior SD of log σ is about 1/sqrt(2 df)): it is meant for designs of many runs
    (``planner repeats`` uses it beyond ``max_runs`` to say "not reached below N"; the tests
    check it against the simulation at 40-400 runs per arm).

    Parameters
    ----------
    n : ndarray of int, shape (M,)
        Runs per arm.
    runs_per_instance : int
    truth : Truth
        Draws of (τ, σ, Δ) (no existing runs).

    Returns
    -------
    assurance, se : ndarray, shape (M,)
        Approximate assurance of each n, and the Monte-Carlo SE of its mean over the draws.
    """
    n = np.asarray(n, float)[:, None]
    m = np.ceil(n / max(int(runs_per_instance), 1))
    sd = np.sqrt(2.0 * (truth.tau[None, :] ** 2 / m + truth.sigma[None, :] ** 2 / n))
    d = truth.delta[None, :]
    p = _label_probs(d, sd, sd, rope, rule, level, hdi_prob)
    tgt = target_labels(truth.delta, rope, rule)[None, :]
    hit = np.zeros(np.broadcast(d, sd).shape)
    for k, pk in p.items():
        hit += np.where(tgt == k, pk, 0.0)
    return hit.mean(axis=1), hit.std(axis=1) / math.sqrt(max(truth.size, 1))
