r"""Assurance of a TPS A/B design by simulation: the probability that the experiment ends in
the right call.

For a design :math:`d` (runs per arm, how runs share instances; :mod:`models.stats.designs`)
and a decision rule (:mod:`models.stats.decision`), the *assurance* is

.. math::

    \mathcal A(d) = \int P\big(\text{rule met by } p(\Delta\mid y)\ \big|\ \tau,\sigma,\Delta\big)
                    \,p(\tau,\sigma)\,p(\Delta)\;d\tau\,d\sigma\,d\Delta ,

averaged over the noise prior (:math:`p(\tau)\,p(\sigma)`, or the joint population prior of
an unknown platform; or the posterior of runs already bought) and over the effect
(a fixed :math:`\Delta` or draws of it). This module draws :math:`(\tau,\sigma,\Delta)`
(:class:`Truth`), simulates the log TPS of every run of the design under the hierarchical
model of :mod:`models.stats.tps_model` (:func:`simulate`), has each simulated dataset
labelled exactly as ``planner verdict`` would (:mod:`models.stats.assurance_analysis`), and
turns the labels into rates with their Monte-Carlo errors (:func:`evaluate_fixed`,
:class:`Adaptive` sizes). Known noise scales have closed forms instead
(:mod:`models.stats.assurance_known`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from models.stats.assurance_analysis import (Decisions, GridAnalysis, _analysis, analysis_grid,
                                             decide_analysis)
from models.stats.decision import A_BETTER, B_BETTER, EQUIVALENT, LABEL_NAMES, target_labels
from models.stats.designs import Existing, Layout
from models.stats.noise import NoisePrior


__all__ = ["Truth", "prior_truth", "simulate", "planned_sign", "Adaptive", "FixedResult",
           "evaluate_fixed", "scenario_memo"]

# --------------------------------------------------------------------------------------------
# simulation
# --------------------------------------------------------------------------------------------
@dataclass
class Truth:
    """Draws of the unknowns a simulated experiment is generated from (all log scale).

    Attributes
    ----------
    tau, sigma : ndarray, shape (D,)
        Instance and run noise scales (relative).
    delta : ndarray, shape (D,)
        True Δ = μ_B − μ_A.
    mu_a : ndarray, shape (D,)
        True μ_A in the analysis' centred units (0 without existing runs).
    """

    tau: np.ndarray
    sigma: np.ndarray
    delta: np.ndarray
    mu_a: np.ndarray

    def with_delta(self, delta: np.ndarray | float) -> "Truth":
        d = np.broadcast_to(np.asarray(delta, float), self.tau.shape).copy()
        return Truth(self.tau, self.sigma, d, self.mu_a)

    def take(self, sl) -> "Truth":
        return Truth(self.tau[sl], self.sigma[sl], self.delta[sl], self.mu_a[sl])

    @property
    def size(self) -> int:
        return int(self.tau.size)


def prior_truth(prior: NoisePrior, delta: float | np.ndarray, sims: int,
                rng: np.random.Generator) -> Truth:
    """Draw (tau, sigma) from the noise prior; Δ fixed or resampled from the given draws.

    The scale pair is drawn jointly from the prior's ``joint`` prior when it has one (the
    population prior of an unknown platform: :meth:`models.stats.noise.PopulationPrior.rvs`,
    the prior the verdict's engine weighs), else tau and sigma independently.

    Parameters
    ----------
    delta : float or ndarray of shape (M,)
        Δ on the log scale; an array is a sample of the effect distribution (resampled with
        replacement to ``sims`` draws).
    """
    if prior.joint is not None:
        tau, sigma = prior.joint.rvs(sims, rng)
    else:
        tau = prior.tau.rvs(sims, rng)
        sigma = prior.sigma.rvs(sims, rng)
    d = np.asarray(delta, float)
    if d.ndim == 0:
        dd = np.full(sims, float(d))
    else:
        dd = d[rng.integers(0, d.size, sims)]
    return Truth(tau, sigma, dd, np.zeros(sims))


def simulate(layout: Layout, truth: Truth, rng: np.random.Generator) -> list[np.ndarray]:
    """Simulate the centred log TPS of every run of ``layout`` for each draw of ``truth``.

    Returns
    -------
    list of ndarray, one per instance type, shape (D, count, a + b)
        Run r of config c on instance i: μ_c + u_i + ε_r, u_i ~ N(0, τ²), ε_r ~ N(0, σ²).
    """
    return _build(layout, truth, _draws(layout, truth.size, rng))


def _draws(layout: Layout, D: int, rng: np.random.Generator) -> list:
    """The standard Normal draws of :func:`simulate` (per type: instance effects (D, count,
    1), run noise (D, count, a + b)), in its order of the random stream."""
    return [(rng.standard_normal((D, t.count, 1)), rng.standard_normal((D, t.count, t.n)))
            for t in layout.types]


class _Draws:
    """:func:`_draws` for D experiments, drawn only as far as the rows used so far need.

    The random stream is the same: every array of the stream but the last is drawn whole
    when first needed, the last (the run noise of the last instance type) row block by row
    block in order (``Generator.standard_normal`` continues its stream exactly across
    calls). A scenario stopped on a prefix of 250 of 2,000 experiments then skips most of
    that array's draws: all of them for a paired design (one instance type, whose instance
    effects are one number per experiment), a quarter for a separate one.
    """

    def __init__(self, layout: Layout, D: int, rng: np.random.Generator):
        self.D, self.rng = D, rng
        self.shapes = [s for t in layout.types for s in ((D, t.count, 1), (D, t.count, t.n))]
        self.arrays: list = []
        self.rows = 0                  # rows of the last array drawn so far

    def upto(self, e: int) -> list:
        """The (instance effects, run noise) pairs with at least rows [0, e) drawn."""
        if not self.arrays:
            self.arrays = [self.rng.standard_normal(s) for s in self.shapes[:-1]]
            self.arrays.append(np.empty(self.shapes[-1]))
        e = min(int(e), self.D)
        if e > self.rows:
            self.rng.standard_normal(out=self.arrays[-1][self.rows:e])
            self.rows = e
        a = self.arrays
        return [(a[i], a[i + 1]) for i in range(0, len(a), 2)]

    def finish(self) -> None:
        """Draw the rest (the stream then stands where :func:`_draws` leaves it)."""
        self.upto(self.D)


def _build(layout: Layout, truth: Truth, draws: list, sl: slice = slice(None)
           ) -> list[np.ndarray]:
    """:func:`simulate`'s arrays for the draws ``sl`` of ``truth`` (same values as slicing
    the full arrays; only those rows are computed)."""
    tau, sig, dl, mua = truth.tau[sl], truth.sigma[sl], truth.delta[sl], truth.mu_a[sl]
    out = []
    for t, (zu, ze) in zip(layout.types, draws):
        u = zu[sl] * tau[:, None, None]
        e = ze[sl] * sig[:, None, None]
        mu = np.concatenate([np.zeros(t.a), np.ones(t.b)])[None, None, :] * \
            dl[:, None, None] + mua[:, None, None]
        out.append(mu + u + e)
    return out


def _batched(layout, analysis: GridAnalysis, truth: Truth, rng, rope, rule, level, hdi_prob,
             chunk, progress=None, stop=None, first: int = 0, memo: dict | None = None
             ) -> Decisions:
    """Labels of ``truth.size`` simulated experiments, simulated ``chunk`` at a time.

    ``stop(labels) -> bool`` (with ``first`` > 0): the experiments are labelled in the
    prefixes ``first``, ``2 first``, ``4 first``, ... of the same simulated data, and the
    labelling ends at the first prefix for which ``stop`` is true (the result then holds that
    prefix only; chunks past it are not simulated). Every experiment gets the label it gets
    without ``stop``.

    ``memo`` (a dict kept by the caller for this scenario: the same layout, analysis,
    truth, random stream and rule): the labels of the experiments labelled by earlier calls
    are read from it instead of being simulated again, and new ones are added to it. Each
    experiment's label depends only on its own simulated data, so the result is the one
    without ``memo``; ``progress`` counts only the experiments simulated by this call.
    """
    parts = memo.setdefault("parts", []) if memo is not None else []
    done = sum(p.labels.size for p in parts)
    ends = _prefix_ends(truth.size, first) if stop is not None else [truth.size]
    for e in ends:                      # prefixes already labelled
        if e > done:
            break
        if e >= truth.size:
            return _take(_concat(parts), truth.size)
        if stop is not None and stop(_labels(parts)[:e]):
            return _take(_concat(parts), e)
    for s in range(0, truth.size, chunk):
        tr = truth.take(slice(s, s + chunk))
        draws = _Draws(layout, tr.size, rng)
        if s + tr.size <= done:        # labelled before: keep the random stream in step
            draws.finish()
            continue
        lo = max(done - s, 0)
        for e in [x - s for x in ends if s < x <= s + tr.size] + [tr.size]:
            if e <= lo:
                continue
            z, zq = analysis.stats(_build(layout, tr, draws.upto(e), slice(lo, e)))
            parts.append(decide_analysis(analysis, z, zq, rope, rule=rule,
                                         level=level, hdi_prob=hdi_prob, exact_probs=False))
            if progress is not None:
                progress(e - lo)
            lo = e
            if stop is not None and s + e < truth.size and s + e in ends and \
                    stop(_labels(parts)):
                return _concat(parts)
        draws.finish()
    return _concat(parts)


def _labels(parts: list) -> np.ndarray:
    return parts[0].labels if len(parts) == 1 else np.concatenate([p.labels for p in parts])


def _take(dec: Decisions, k: int) -> Decisions:
    """The first ``k`` experiments of ``dec``."""
    if dec.labels.size == k:
        return dec
    return Decisions(*(getattr(dec, f)[:k] for f in ("labels", "p_gt", "p_lt", "mean", "sd")))


def _concat(parts: list) -> Decisions:
    if len(parts) == 1:
        return parts[0]
    return Decisions(*(np.concatenate([getattr(p, f) for p in parts])
                       for f in ("labels", "p_gt", "p_lt", "mean", "sd")))


def _prefix_ends(n: int, first: int) -> list[int]:
    """Ends of the prefixes ``first``, ``2 first``, ``4 first``, ... below ``n``, then n."""
    out = []
    k = int(first)
    while 0 < k < n:
        out.append(k)
        k *= 2
    return out + [n]


@dataclass(frozen=True)
class Adaptive:
    r"""Adaptive Monte-Carlo size of :func:`evaluate_fixed`: stop simulating a scenario once
    its rate is decided, on a prefix of the same simulated experiments.

    Each scenario is labelled on the prefixes ``first``, ``2 first``, ``4 first``, ... of
    its ``truth.size`` experiments (the same random numbers as without stopping: a scenario
    that runs to the end gives exactly the non-adaptive result) and stops at the first
    prefix of :math:`k` experiments where its rate :math:`\hat p` is decided, with the
    smoothed standard error :math:`\tilde s = \sqrt{\tilde p(1-\tilde p)/k}`,
    :math:`\tilde p = (x+2)/(k+4)` (Agresti & Coull, 1998: never 0, so 0 of 250 is not read
    as an exact 0):

    * the assurance, when :math:`|\hat p - g| > z\,\tilde s` for every goal :math:`g` of
      ``goals``;
    * the false-claim rate, when it is surely under the limit,
      :math:`\hat p + z\,\tilde s \le L + z_L\,\tilde s_N` (:math:`\tilde s_N`: the SE at the
      full size :math:`N`, the tolerance the full simulation would be judged with), or
      surely over it, :math:`\hat p - z\,\tilde s > L + z_L \max(\tilde s, s_k)`; so the
      reported rate and binomial SE of :math:`k` experiments pass the limit rule
      (:math:`\hat p \le L + z_L s_k`) exactly when the full simulation would be expected to;
    * the wrong-sign rate (only reported, never compared) at the first prefix.

    Tolerance (tested in ``tests/models/stats/test_assurance_adaptive.py`` and
    ``tests/planner/decide/test_repeats_adaptive.py``): a rate from :math:`k < N` experiments
    differs from the rate :math:`p` of all :math:`N` by a Monte-Carlo error of SD
    :math:`\sqrt{p(1-p)(1/k - 1/N)} < \sqrt{p(1-p)/k}`; the tests require 4 of those SDs
    (plus :math:`1/k`). A rate is compared with its goals at more than ``z`` = 3 smoothed
    SEs, so the decisions built on it (meets the target, passes the false-claim limit, the
    recommended design and its runs per arm) agree with the full simulation except with a
    probability of the order of 0.1 % per decision.

    Attributes
    ----------
    goals : tuple of float
        Assurance thresholds the result will be compared with (e.g. the target).
    false_claim_limit : float or None
        The false-claim limit :math:`L` (None: the false-claim scenario is not stopped early).
    false_claim_z : float
        :math:`z_L`, the SEs of Monte-Carlo tolerance of the limit rule.
    z : float
        SEs a rate must clear its thresholds by.
    first : int
        Smallest prefix (experiments).
    """

    goals: tuple = ()
    false_claim_limit: float | None = None
    false_claim_z: float = 0.0
    z: float = 3.0
    first: int = 250

    @staticmethod
    def _se(x: float, k: int) -> float:
        p = (x + 2.0) / (k + 4.0)
        return math.sqrt(p * (1.0 - p) / k)

    def rate_decided(self, hits: np.ndarray) -> bool:
        """Is the rate of ``hits`` (bool, one per experiment) beyond ``z`` SEs of every goal?"""
        k = hits.size
        x = float(np.count_nonzero(hits))
        s = self._se(x, k)
        return all(abs(x / k - g) > self.z * s for g in self.goals)

    def false_claim_side(self, hits: np.ndarray, n_full: int) -> int:
        """-1 when the false-claim rate of ``hits`` (bool, one per experiment) is surely under
        the limit, +1 when surely over it, 0 when not yet decided (or no limit)."""
        if self.false_claim_limit is None:
            return 0
        k = hits.size
        x = float(np.count_nonzero(hits))
        p, s = x / k, self._se(x, k)
        sk = math.sqrt(max(p * (1.0 - p), 0.0) / k)
        sn = self._se(x * n_full / k, n_full)
        lim = self.false_claim_limit
        if p + self.z * s <= lim + self.false_claim_z * sn:
            return -1
        if p - self.z * s > lim + self.false_claim_z * max(s, sk):
            return 1
        return 0

    def false_claim_decided(self, hits: np.ndarray, n_full: int) -> bool:
        """Is the false-claim rate of ``hits`` surely under or surely over the limit?"""
        return self.false_claim_side(hits, n_full) != 0


def _chunk_for(G: int, N: int) -> int:
    return int(max(64, min(4000, 6_000_000 // max(G, N, 1))))


@dataclass
class FixedResult:
    """Assurance and error rates of one fixed design (fractions of simulated experiments).

    ``assurance``: label == the label the true Δ deserves; ``false_claim_rate``: a decisive
    directional label when Δ = 0 (equivalence rule: "equivalent" when Δ = +ROPE);
    ``wrong_sign_rate``: the label of the planned direction when the true Δ is the opposite
    (None for the equivalence rule). With existing runs both are posterior-predictive: the
    rate of decisive directional calls the drawn true Δ contradicts (not the label it
    deserves), and of calls of the wrong sign. ``*_se``: binomial Monte-Carlo standard errors.
    """

    assurance: float
    assurance_se: float
    false_claim_rate: float
    false_claim_se: float
    wrong_sign_rate: float | None
    label_fractions: dict
    sims: int
    grid_points: int
    mean_posterior_sd: float


def _rate(x: np.ndarray) -> tuple[float, float]:
    p = float(np.mean(x)) if x.size else float("nan")
    return p, math.sqrt(max(p * (1 - p), 0.0) / max(x.size, 1))


def _coherent_errors(labels: np.ndarray, delta: np.ndarray, tgt: np.ndarray):
    """(false-claim rate, its SE, wrong-sign rate) when the truth is drawn from a posterior:
    decisive directional calls other than the deserved label, and calls of the wrong sign."""
    directional = (labels == B_BETTER) | (labels == A_BETTER)
    fc, fse = _rate(directional & (labels != tgt))
    ws = float(np.mean(((labels == B_BETTER) & (delta < 0)) | ((labels == A_BETTER) & (delta > 0))))
    return fc, fse, ws


def planned_sign(truth: Truth) -> int:
    """+1 when most draws of Δ are >= 0, else −1."""
    return 1 if np.mean(truth.delta >= 0) >= 0.5 else -1


def scenario_memo(memo: dict, truth: Truth, prior: NoisePrior,
                  existing: Existing | None = None) -> dict:
    """``memo`` (a dict of :func:`evaluate_fixed` / :func:`models.stats.sequential.
    evaluate_sequential_levels` labels) emptied when it was filled for another ``truth``,
    ``prior`` or ``existing`` (its labels only hold for those); returns it."""
    owner = (id(truth), prior, prior.joint, id(existing))
    if memo.get("__owner__") != owner:
        memo.clear()
        memo["__owner__"] = owner
        memo["__keep__"] = (truth, existing)     # ids stay valid while the memo lives
    return memo


def _memo_key(memo: dict, truth: Truth, prior: NoisePrior, existing, layout: Layout,
              tg: np.ndarray, sg: np.ndarray, *rest) -> tuple:
    """Key of a design's scenarios in ``memo`` (reset for another truth / prior)."""
    scenario_memo(memo, truth, prior, existing)
    return (layout, tg.tobytes(), sg.tobytes()) + tuple(
        float(x) if isinstance(x, (float, np.floating)) else x for x in rest)


def evaluate_fixed(layout: Layout, prior: NoisePrior, truth: Truth, rope: float, *,
                   rule: str = "verdict", level: float = 0.95, hdi_prob: float = 0.95,
                   seed: int = 0, existing: Existing | None = None, error_rates: bool = True,
                   progress: Callable[[int], None] | None = None,
                   grid: tuple[np.ndarray, np.ndarray] | None = None,
                   adaptive: Adaptive | None = None, memo: dict | None = None
                   ) -> FixedResult:
    """Assurance of a fixed design, plus its false-claim and wrong-sign rates.

    Parameters
    ----------
    layout : Layout
    prior : NoisePrior
        Analysis prior (what ``planner verdict`` will use).
    truth : Truth
        Draws of (τ, σ, Δ, μ_A): from the prior (:func:`prior_truth`) or from the posterior of
        existing runs. The same draws (common random numbers) are used for Δ = 0 and −Δ.
    rope : float
        ROPE half-width, log scale.
    rule : {"verdict", "superiority", "equivalence"}
    seed : int
        Seeds the run-level noise; identical seeds give identical results.
    existing : Existing, optional
        Runs already bought, analysed together with the simulated new ones.
    error_rates : bool
        Also simulate Δ = 0 (and Δ = −Δ) for the error rates.
    adaptive : Adaptive, optional
        Stop each scenario once its rate is decided (:class:`Adaptive`: a prefix of the same
        simulated experiments, tolerance stated there); None simulates all of ``truth``.
    memo : dict, optional
        Labels of simulated experiments kept between calls with the same ``prior``,
        ``truth`` and ``existing`` (the caller's dict; :func:`scenario_memo` resets it for
        another truth): a scenario (design, rule, seed, Δ) labelled before, on a prefix
        or in full, is continued instead of simulated again (e.g. the recommended design
        simulated in full after its adaptive prefix, or the error rates of a design whose
        assurance was computed alone). The result is the one without ``memo``.

    Returns
    -------
    FixedResult
        ``sims``: experiments of the assurance scenario actually simulated.
    """
    n_old = existing.n_runs if existing is not None else 0
    if grid is None:
        tg, sg, _, _ = analysis_grid(prior, layout.n_runs + n_old)
    else:
        tg, sg = grid
    an = _analysis(layout, prior, tg, sg, existing)
    chunk = _chunk_for(tg.size, layout.n_runs)
    rng = np.random.default_rng([seed, 1])
    tgt_all = target_labels(truth.delta, rope, rule)
    ad = adaptive
    first = ad.first if ad is not None else 0
    stop = None
    if ad is not None and existing is not None and error_rates:
        def stop(lab):
            t = tgt_all[:lab.size]
            directional = (lab == B_BETTER) | (lab == A_BETTER)
            return ad.rate_decided(lab == t) and ad.false_claim_decided(
                directional & (lab != t), truth.size)
    elif ad is not None:
        def stop(lab):
            return ad.rate_decided(lab == tgt_all[:lab.size])
    mk = None if memo is None else _memo_key(memo, truth, prior, existing, layout, tg, sg, rope,
                                             rule, level, hdi_prob, seed, chunk)

    def sm(tag):                        # the memo of one scenario
        return None if mk is None else memo.setdefault(mk + (tag,), {})

    dec = _batched(layout, an, truth, rng, rope, rule, level, hdi_prob, chunk, progress,
                   stop, first, sm("assurance"))
    k = dec.labels.size
    tgt = tgt_all[:k]
    assur, ase = _rate(dec.labels == tgt)
    fr = {LABEL_NAMES[c]: float(np.mean(dec.labels == c)) for c in LABEL_NAMES}
    fc = fse = float("nan")
    ws = None
    if error_rates and existing is not None:
        # Δ = 0 is not a coherent truth for runs already measured: the wrong-call rates are
        # then posterior-predictive (decisive calls that the drawn true Δ contradicts)
        fc, fse, ws = _coherent_errors(dec.labels, truth.delta[:k], tgt)
    elif error_rates:
        rng0 = np.random.default_rng([seed, 2])
        fstop = None
        if ad is not None and ad.false_claim_limit is not None:
            claim = EQUIVALENT if rule == "equivalence" else None

            def fstop(lab):
                hits = (lab == claim) if claim is not None else \
                    (lab == B_BETTER) | (lab == A_BETTER)
                return ad.false_claim_decided(hits, truth.size)
        if rule == "equivalence":
            d0 = _batched(layout, an, truth.with_delta(rope), rng0, rope, rule, level, hdi_prob,
                          chunk, progress, fstop, first, sm("rope"))
            fc, fse = _rate(d0.labels == EQUIVALENT)
        else:
            d0 = _batched(layout, an, truth.with_delta(0.0), rng0, rope, rule, level, hdi_prob,
                          chunk, progress, fstop, first, sm("zero"))
            fc, fse = _rate((d0.labels == B_BETTER) | (d0.labels == A_BETTER))
            rng1 = np.random.default_rng([seed, 3])
            # the wrong-sign rate is only reported: with ``adaptive``, the first prefix
            d1 = _batched(layout, an, truth.with_delta(-truth.delta), rng1, rope, rule, level,
                          hdi_prob, chunk, progress, (lambda lab: True) if ad else None, first,
                          sm("minus"))
            sgn = planned_sign(truth)
            ws = float(np.mean(d1.labels == (B_BETTER if sgn > 0 else A_BETTER)))
    return FixedResult(assur, ase, fc, fse, ws, fr, k, int(tg.size),
                       float(np.mean(dec.sd)))
