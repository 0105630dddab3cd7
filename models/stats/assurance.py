r"""Assurance of a TPS A/B design: the probability that the experiment ends in the right call.

For a design :math:`d` (runs per arm, how runs share instances; :mod:`models.stats.designs`) and
a decision rule (:mod:`models.stats.decision`), the *assurance* is

.. math::

    \mathcal A(d) = \int P\big(\text{rule met by } p(\Delta\mid y)\ \big|\ \tau,\sigma,\Delta\big)
                    \,p(\tau)\,p(\sigma)\,p(\Delta)\;d\tau\,d\sigma\,d\Delta ,

averaged over the noise prior (or the posterior of runs already bought) and over the effect
(a fixed :math:`\Delta` or draws of it). It is computed by simulation: draw
:math:`(\tau,\sigma,\Delta)`, simulate the log TPS of every run of the design under the
hierarchical model of :mod:`models.stats.tps_model`, and analyse each simulated data set with the
*exact* engine (:mod:`models.stats.tps_exact`), exactly as ``planner verdict`` would.

Speed comes from three exact reductions, none an approximation:

1. **Typed sufficient statistics.** A design is a list of *instance types* (``count``
   instances, each holding ``a`` runs of A and ``b`` runs of B). Within a type every instance
   has the same :math:`g_i = \tau^2/(\sigma^2 + n_i\tau^2)` and :math:`x_i`, so the data enter
   the exact posterior (:mod:`models.stats.tps_exact`) only through
   :math:`z = (1, S_A, S_B, \sum_{i\in k} T_i)` and :math:`(\sum y^2, \sum_{i\in k} T_i^2)`.
2. **Quadratic forms.** For each grid point :math:`g` the log posterior weight is a quadratic
   form in :math:`z` plus a linear form in the sums of squares, and the conditional mean of
   :math:`\Delta` is linear in :math:`z`. So all datasets × all grid points are two matrix
   products (``features @ theta``, ``z @ W``) — the ``conditional_posterior`` algebra of
   :mod:`models.stats.tps_exact`, regrouped (checked against it to 1e-9 in the tests).
3. **HDI labels from CDF values.** For a unimodal density the shortest 95 % interval
   :math:`[L, U]` lies above :math:`r` iff :math:`F(r) < 0.05` and
   :math:`f(Q(F(r)+0.95)) > f(r)`; similarly below :math:`-r` and inside :math:`(-r, r)`.
   One mixture quantile per candidate dataset, no HDI search (numba kernels of a private
   module; the derivation and the tabulated fast path are in its docstring). Labels agree
   with :func:`models.stats.tps_exact.mixture_summary` + :func:`models.stats.decision.label_code`.

:class:`GridAnalysis` objects are reused across designs with the same layout, prior and
grid (the looks of sequential plans, :mod:`models.stats.sequential`, share them).

The analysis grid over :math:`(\tau,\sigma)` is *fixed* per design (log-spaced between the
prior's 1e-4 and 1 - 1e-4 quantiles, finer for more runs) instead of the two-pass adaptive
grid of :func:`models.stats.tps_exact.fit_exact`; the tests check the resulting labels against
``fit_exact`` on simulated datasets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from models.kernels import assurance as _k
from models.stats.decision import A_BETTER, B_BETTER, EQUIVALENT, LABEL_NAMES, target_labels
from models.stats.designs import Existing, Layout
from models.stats.noise import NoisePrior
from models.stats.tps_model import MU_PRIOR_SD

__all__ = ["analysis_grid", "GridAnalysis", "Decisions", "decide", "decide_analysis",
           "decide_analysis_levels", "Truth", "prior_truth", "simulate", "planned_sign",
           "Adaptive", "FixedResult", "evaluate_fixed", "scenario_memo", "KNOWN_DF", "known_scales", "evaluate_known",
           "normal_assurance"]

_LOG2PI = math.log(2.0 * math.pi)


# --------------------------------------------------------------------------------------------
# the fixed analysis grid
# --------------------------------------------------------------------------------------------
def analysis_grid(prior: NoisePrior, n_runs: int, *, q: float = 1e-4, g_max: int = 600,
                  min_pts: int = 6) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Fixed log-spaced (tau, sigma) grid for analysing simulated datasets of one design.

    Parameters
    ----------
    prior : NoisePrior
    n_runs : int
        Runs in the analysed data (old + new): sets the resolution. The posterior SD of
        log sigma is about 1/sqrt(2 df); the spacing aims at that, bounded by ``g_max``.
    q : float
        Each axis spans the prior's q .. 1-q quantiles, widened by 10 % on the log scale.
    g_max : int
        Largest number of grid points. 600 (was 1,200): ≈ 29 % less CPU for the sizing;
        labels still agree with ``fit_exact`` (tests/models/stats/test_assurance.py) and the budget
        example's assurances move by ≤ 0.005 against 1,200 points (g_max = 400 moved one by
        0.035, so 600 is near the edge).

    Returns
    -------
    tau, sigma : ndarray, shape (G,)
        Product grid, flattened with tau varying slowest (relative scales); read-only
        (a grid is built once per prior and size, and shared).
    n_tau, n_sigma : int
    """
    key = (prior.tau, prior.sigma, int(n_runs), float(q), int(g_max), int(min_pts))
    got = _GRIDS.get(key)
    if got is None:
        if len(_GRIDS) >= 512:
            _GRIDS.clear()
        got = _GRIDS[key] = _analysis_grid(prior, n_runs, q, g_max, min_pts)
    return got


_GRIDS: dict = {}


def _analysis_grid(prior: NoisePrior, n_runs: int, q: float, g_max: int, min_pts: int
                   ) -> tuple[np.ndarray, np.ndarray, int, int]:
    axes = []
    for sp in (prior.tau, prior.sigma):
        lo, hi = _quantiles(sp, q)
        llo, lhi = math.log(lo), math.log(hi)
        pad = 0.1 * (lhi - llo) + 1e-3
        axes.append((llo - pad, lhi + pad))
    rt, rs = (axes[0][1] - axes[0][0]), (axes[1][1] - axes[1][0])
    h = 1.0 / math.sqrt(2.0 * max(n_runs, 1))
    h = max(h, math.sqrt(rt * rs / g_max))
    nt = max(min_pts, int(math.ceil(rt / h)) + 1)
    ns = max(min_pts, int(math.ceil(rs / h)) + 1)
    t = np.exp(np.linspace(axes[0][0], axes[0][1], nt))
    s = np.exp(np.linspace(axes[1][0], axes[1][1], ns))
    T, S = np.meshgrid(t, s, indexing="ij")
    T, S = T.ravel(), S.ravel()
    T.setflags(write=False)
    S.setflags(write=False)
    return T, S, nt, ns


_QUANTILES: dict = {}


def _quantiles(sp, q: float) -> tuple[float, float]:
    """(q, 1 - q) quantiles of a scale prior, computed once per prior (``ScalePrior.ppf``
    costs ~0.2 ms; the planners build a grid for every design they simulate)."""
    key = (sp, float(q))
    got = _QUANTILES.get(key)
    if got is None:
        if len(_QUANTILES) >= 256:
            _QUANTILES.clear()
        got = _QUANTILES[key] = (float(sp.ppf(q)), float(sp.ppf(1.0 - q)))
    return got


# --------------------------------------------------------------------------------------------
# the exact posterior of Δ for a batch of datasets of one layout
# --------------------------------------------------------------------------------------------
def _reduce_columns(types) -> tuple[np.ndarray, np.ndarray]:
    """Independent columns of z = (1, S_A, S_B, ST_1..ST_K) for a layout's instance types.

    Every column is a sum of the per-type arm sums s_kA, s_kB (S_A = sum_k s_kA, S_B =
    sum_k s_kB, ST_k = s_kA + s_kB). Returns ``keep`` (column indices, 0 first) and ``L``
    (J, len(keep)) with z = z[:, keep] @ L.T exactly (integer coefficients).
    """
    K = len(types)
    groups = [(k, arm) for k, t in enumerate(types) for arm in (0, 1)
              if (t.a if arm == 0 else t.b) > 0]
    C = np.zeros((3 + K, 1 + len(groups)))
    C[0, 0] = 1.0
    for gi, (k, arm) in enumerate(groups):
        C[1 + arm, 1 + gi] = 1.0
        C[3 + k, 1 + gi] = 1.0
    keep: list[int] = []
    for j in range(C.shape[0]):
        if np.linalg.matrix_rank(C[keep + [j]]) > len(keep):
            keep.append(j)
    B = C[keep]                                                    # (Jr, groups + 1)
    L = np.linalg.lstsq(B.T, C.T, rcond=None)[0].T                  # C = L @ B
    Lr = np.round(L)
    if not np.allclose(Lr @ B, C):  # pragma: no cover - integer by construction
        raise AssertionError("column reduction is not exact")
    return np.asarray(keep, int), Lr

class GridAnalysis:
    """Exact grid posterior of Δ = μ_B − μ_A for every simulated dataset of one layout.

    Parameters
    ----------
    layout : Layout
        New runs (each type's instances are new instances).
    prior : NoisePrior
        Analysis prior of (tau, sigma).
    tau, sigma : ndarray, shape (G,)
        Fixed analysis grid (from :func:`analysis_grid`).
    existing : Existing, optional
        Runs already bought (their own instances), analysed together with the new ones.

    Notes
    -----
    Same model and priors as :func:`models.stats.tps_exact.fit_exact` with two configs and no cold
    column: μ ~ N(ȳ 1, v0 I) with ȳ the mean log TPS of all analysed runs and v0 =
    ``MU_PRIOR_SD``² (:mod:`models.stats.tps_model`, SD 1.0 on the log scale), grid weights
    ∝ p(y|τ,σ) p(τ) p(σ) τ σ. The data enter through :meth:`stats`; ``theta`` (F, G) turns
    the features of :meth:`features` into log weights, ``W`` (J, G) turns z into the
    conditional means of Δ, ``delta_sd`` (G,) are the conditional SDs (log scale).

    Every 1/σ² coefficient of the quadratic forms is built as a design constant / σ² plus
    terms in f_k = 1/(n_k (σ² + n_k τ²)) (g_k = 1/n_k − σ² f_k), never as a difference of
    two O(1/σ²) terms. The plain algebra cancels terms of
    size z²/σ² down to z²/(σ² + nτ²): where τ/σ ≳ 1e4 (the unknown-platform prior's grid
    reaches τ/σ ~ 1e10) its rounding errors of up to thousands of nats gave those grid points
    all the mass, and a dataset of 10 % noise was analysed as if the noise were ~40
    (posterior SD of Δ ≈ the prior's 1.4; tests/models/stats/test_assurance_weak_prior.py).
    Instances running both configs keep one such cancellation, in the within-instance sum
    of squares (about 1e-3 nats at τ/σ = 100 with 40 runs on one instance).
    """

    def __init__(self, layout: Layout, prior: NoisePrior, tau: np.ndarray, sigma: np.ndarray,
                 existing: Existing | None = None, v0: float = MU_PRIOR_SD ** 2):
        self.layout = layout
        self.tau, self.sigma = np.asarray(tau, float), np.asarray(sigma, float)
        types = [t for t in layout.types]
        K = len(types)
        self.K = K
        J = 3 + K
        self.J = J
        t2, s2 = self.tau ** 2, self.sigma ** 2
        G = t2.size
        cnt = np.array([t.count for t in types], float)
        nk = np.array([t.n for t in types], float)
        xk = np.array([[t.a, t.b] for t in types], float).reshape(K, 2)
        gk = t2[:, None] / (s2[:, None] + nk[None, :] * t2[:, None])             # (G, K)
        XtX = np.diag([layout.n_a, layout.n_b]).astype(float)
        # g_k = 1/n_k - s^2 f_k with f_k = 1/(n_k (s^2 + n_k t^2)): every 1/s^2 coefficient
        # below is a design constant / s^2 plus terms in f_k, never a difference of two
        # O(1/s^2) terms (see the class notes)
        fk = 1.0 / (nk[None, :] * (s2[:, None] + nk[None, :] * t2[:, None]))   # (G, K)
        A_old = 0.0
        logdetS = (cnt[None, :] * ((nk[None, :] - 1.0) * np.log(s2)[:, None]
                                   + np.log(s2[:, None] + nk[None, :] * t2[:, None]))).sum(1)
        N = float(layout.n_runs)
        b_old = np.zeros((G, 2))
        q_old = np.zeros(G)
        S_old = 0.0
        if existing is not None and existing.n_runs:
            ex = existing
            I = int(ex.inst.max()) + 1
            H = np.zeros((I, ex.n_runs))
            H[ex.inst, np.arange(ex.n_runs)] = 1.0
            ni, xi, Ti = H.sum(1), H @ ex.X, H @ ex.y
            gi = t2[:, None] / (s2[:, None] + ni[None, :] * t2[:, None])         # (G, I)
            A_old = (ex.X.T @ ex.X)[None] - np.einsum("gi,ip,iq->gpq", gi, xi, xi)
            logdetS = logdetS + ((ni[None, :] - 1.0) * np.log(s2)[:, None]
                                 + np.log(s2[:, None] + ni[None, :] * t2[:, None])).sum(1)
            b_old = ((ex.X.T @ ex.y)[None, :] - (gi * Ti[None, :]) @ xi) / s2[:, None]
            q_old = (float(ex.y @ ex.y) - gi @ (Ti ** 2)) / s2
            S_old = float(ex.y.sum())
            N += ex.n_runs
        self.N = N
        # new runs: (XtX - sum_k count_k x_k x_k^T / n_k) / s^2 + sum_k count_k f_k x_k x_k^T
        Cw = XtX - np.einsum("k,kp,kq->pq", cnt / nk, xk, xk)                  # within-instance
        P = Cw[None] / s2[:, None, None] + np.einsum("gk,k,kp,kq->gpq", fk, cnt, xk, xk) \
            + A_old / s2[:, None, None] + np.eye(2)[None] / v0
        det = P[:, 0, 0] * P[:, 1, 1] - P[:, 0, 1] * P[:, 1, 0]
        Pinv = np.empty_like(P)
        Pinv[:, 0, 0], Pinv[:, 1, 1] = P[:, 1, 1] / det, P[:, 0, 0] / det
        Pinv[:, 0, 1] = Pinv[:, 1, 0] = -P[:, 0, 1] / det
        logdetP = np.log(det)
        # r = R z, z = (1, S_A, S_B, ST_1..ST_K)
        R = np.zeros((G, 2, J))
        R[:, :, 0] = b_old + (S_old / N) / v0
        R[:, 0, 1] = 1.0 / s2
        R[:, 1, 2] = 1.0 / s2
        R[:, :, 1:3] += 1.0 / (v0 * N)
        R[:, :, 3:] = -(gk[:, None, :] * xk.T[None, :, :]) / s2[:, None, None]
        u = np.zeros(J)
        u[0], u[1], u[2] = S_old, 1.0, 1.0
        const = -0.5 * (N * _LOG2PI + 2.0 * math.log(v0) + logdetS + logdetP + q_old)
        const = const + prior.tau.logpdf(self.tau) + prior.sigma.logpdf(self.sigma) \
            + np.log(self.tau) + np.log(self.sigma)
        # exact reduction of redundant statistics: z = z[:, keep] @ L.T for every dataset of
        # this layout (e.g. one run per instance: the instance totals are the arm sums), so
        # the quadratic form shrinks to the independent columns (fewer features per point)
        keep, L = _reduce_columns(types)
        self._keep = keep
        Jr = keep.size
        # r = Rr z[:, keep], Rr = R @ L with the 1/s^2 parts regrouped: (L[1+p] - sum_k x_kp
        # L[3+k] / n_k) / s^2 (a design constant, 0 when no instance runs both configs) +
        # sum_k f_k x_kp L[3+k]
        R0 = R.copy()
        R0[:, 0, 1] -= 1.0 / s2
        R0[:, 1, 2] -= 1.0 / s2
        R0[:, :, 3:] = 0.0
        Cr = L[1:3] - np.einsum("kp,kr->pr", xk / nk[:, None], L[3:])           # (2, Jr)
        Rr = np.einsum("gpj,jr->gpr", R0, L) + Cr[None] / s2[:, None, None] \
            + np.einsum("gk,kp,kr->gpr", fk, xk, L[3:])                        # (G, 2, Jr)
        uL = L.T @ u
        Mr = 0.5 * np.einsum("gpa,gpq,gqb->gab", Rr, Pinv, Rr) \
            - np.outer(uL, uL)[None] / (v0 * N * N)                            # (G, Jr, Jr)
        iu, ju = np.triu_indices(Jr)
        self._iu, self._ju = iu, ju
        th = Mr[:, iu, ju] * np.where(iu == ju, 1.0, 2.0)[None, :]              # (G, Jr(Jr+1)/2)
        th[:, 0] += const                                                     # z0*z0 = 1
        thq = np.concatenate([(-0.5 / s2)[:, None], 0.5 * gk / s2[:, None]], axis=1)  # (G, 1+K)
        # all instances single-run: sum y^2 = sum over types of the squared instance totals
        self._fold_q = bool(all(t.n == 1 for t in types))
        if self._fold_q:
            # -1/(2 s^2) + g_k/(2 s^2) = -f_k/2 for n_k = 1
            thq = -0.5 * fk
        self.theta = np.ascontiguousarray(np.concatenate([th, thq], axis=1).T)  # (F, G)
        c = np.array([-1.0, 1.0])
        self.W = np.ascontiguousarray(np.einsum("gpj,gpq,q->jg", R, Pinv, c))   # (J, G)
        self.WT = np.ascontiguousarray(np.einsum("gpr,gpq,q->gr", Rr, Pinv, c))  # (G, Jr)
        self.delta_sd = np.sqrt(np.einsum("p,gpq,q->g", c, Pinv, c))            # (G,)
        self.mu_mean_coef = np.einsum("gpj,gpq->gqj", R, Pinv)                 # (G, 2, J)

    # --- data -> statistics ------------------------------------------------------------
    def stats(self, ys: list[np.ndarray], counts: Sequence[int] | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """Typed sufficient statistics of simulated datasets.

        Parameters
        ----------
        ys : list of ndarray, one per type, shape (D, count_k', a_k + b_k)
            Centred log TPS (A runs first within an instance). ``count_k'`` may exceed the
            layout's count (a longer simulation); only the first ``counts[k]`` (default the
            layout's counts) instances are used.

        Returns
        -------
        z : ndarray, shape (D, 3 + K)
            (1, S_A, S_B, sum of instance totals per type).
        zq : ndarray, shape (D, 1 + K)
            (sum y², sum of squared instance totals per type).
        """
        D = ys[0].shape[0]
        z = np.zeros((D, self.J))
        zq = np.zeros((D, 1 + self.K))
        z[:, 0] = 1.0
        for k, (t, y) in enumerate(zip(self.layout.types, ys)):
            c = t.count if counts is None else int(counts[k])
            yy = y[:, :c, :]
            T = yy.sum(-1)
            z[:, 1] += yy[:, :, : t.a].sum((1, 2))
            z[:, 2] += yy[:, :, t.a:].sum((1, 2))
            z[:, 3 + k] = T.sum(1)
            zq[:, 0] += (yy * yy).sum((1, 2))
            zq[:, 1 + k] = (T * T).sum(1)
        return z, zq

    def features(self, z: np.ndarray, zq: np.ndarray) -> np.ndarray:
        """Features (D, F) whose product with ``theta`` gives the log weights."""
        zr = z[:, self._keep]
        return np.concatenate([zr[:, self._iu] * zr[:, self._ju],
                               zq[:, 1:] if self._fold_q else zq], axis=1)

    def log_weights(self, z: np.ndarray, zq: np.ndarray) -> np.ndarray:
        """Unnormalised log posterior weights, shape (D, G)."""
        return self.features(z, zq) @ self.theta

    def delta_means(self, z: np.ndarray) -> np.ndarray:
        """Conditional posterior means of Δ (log scale, centred units), shape (D, G)."""
        return z @ self.W


_ANALYSES: "dict[tuple, GridAnalysis]" = {}


def _analysis(layout: Layout, prior: NoisePrior, tau: np.ndarray, sigma: np.ndarray,
              existing: Existing | None = None) -> GridAnalysis:
    """:class:`GridAnalysis`, reused for the same layout, noise prior and grid without existing
    runs (the comparisons of a budget plan and the looks of sequential plans share them)."""
    if existing is not None:
        return GridAnalysis(layout, prior, tau, sigma, existing)
    key = (layout, prior.tau, prior.sigma, tau.tobytes(), sigma.tobytes())
    an = _ANALYSES.get(key)
    if an is None:
        if len(_ANALYSES) >= 512:
            _ANALYSES.clear()
        an = _ANALYSES[key] = GridAnalysis(layout, prior, tau, sigma)
    return an


# --------------------------------------------------------------------------------------------
# labels of a batch of posteriors
# --------------------------------------------------------------------------------------------
@dataclass
class Decisions:
    """Per-dataset readings of the Δ posterior (log scale, centred units for ``mean``).

    Attributes
    ----------
    labels : ndarray of int8, shape (D,)
        0 undecided, 1 B better, 2 A better, 3 equivalent (codes of :mod:`models.stats.decision`).
    p_gt, p_lt : ndarray, shape (D,)
        P(Δ > +ROPE), P(Δ < −ROPE).
    mean, sd : ndarray, shape (D,)
        Posterior mean and SD of Δ.
    """

    labels: np.ndarray
    p_gt: np.ndarray
    p_lt: np.ndarray
    mean: np.ndarray
    sd: np.ndarray


def decide(lw: np.ndarray, m: np.ndarray, sd: np.ndarray, rope: float, *, rule: str = "verdict",
           level: float = 0.95, hdi_prob: float = 0.95, cut: float = 20.0,
           exact_probs: bool = True) -> Decisions:
    """Labels of a batch of Normal-mixture posteriors of Δ.

    Parameters
    ----------
    lw : ndarray, shape (D, G)
        Unnormalised log weights of the mixture components.
    m : ndarray, shape (D, G)
        Component means (log scale).
    sd : ndarray, shape (G,)
        Component SDs.
    rope : float
        ROPE half-width (log scale, >= 0).
    rule : {"verdict", "superiority", "equivalence"}
        The rule of :mod:`models.stats.decision`: ``verdict`` and ``equivalence`` label by the
        HDI against the ROPE (``equivalence`` just reads label 3); ``superiority`` labels
        "B better" when P(Δ > rope) >= ``level``.
    hdi_prob : float
        HDI mass (0.95 by default; larger for a stricter per-look threshold).
    cut : float
        Components with log weight below max − cut are dropped (relative mass < e^-20 = 2e-9
        each; the probabilities move by less than G e^-20 ~ 3e-6).
    exact_probs : bool
        False: screen each mixture with interpolated Normal CDF values first (see
        :func:`_py_label`); the labels, means and SDs are unchanged, ``p_gt`` / ``p_lt`` of
        the screened (clearly undecided) mixtures are then within 7.4e-6 only.

    Returns
    -------
    Decisions
    """
    lw = np.ascontiguousarray(lw, float)
    m = np.ascontiguousarray(m, float)
    out = _new_out(1, lw.shape[0])
    _k.label_mixtures(lw, m, np.ascontiguousarray(sd, float), float(rope),
                      np.array([float(hdi_prob)]), np.ones((1, lw.shape[0]), np.bool_),
                      float(level), _k.rule_code(rule), float(cut), out, not exact_probs,
                      _k.PHI_TAB)
    return _unpack(out[0])


def _new_out(L: int, D: int) -> np.ndarray:
    out = np.zeros((L, 5, D))
    out[:, 0, :] = -1.0               # not decided yet (inactive levels stay -1)
    return out


def _unpack(out: np.ndarray) -> Decisions:
    return Decisions(out[0].astype(np.int8), out[1].copy(), out[2].copy(), out[3].copy(),
                     out[4].copy())


def decide_analysis(an: "GridAnalysis", z: np.ndarray, zq: np.ndarray, rope: float, *,
                    rule: str = "verdict", level: float = 0.95, hdi_prob: float = 0.95,
                    cut: float = 20.0, exact_probs: bool = True) -> Decisions:
    """:func:`decide` for datasets given by their statistics under ``an`` (fused kernel:
    log weights and means computed per dataset, identical results)."""
    return decide_analysis_levels(an, z, zq, rope, [hdi_prob], None, rule=rule, level=level,
                                  cut=cut, exact_probs=exact_probs)[0]


#: Called with no arguments before every launch of the labelling kernel (None: nothing), in
#: the launching thread. ``planner.decide.budget`` sets it while it sizes comparisons on several
#: threads, to give the last thread still working all of numba's threads
#: (:func:`numba.set_num_threads` is per thread). The labels do not depend on the number of
#: threads.
before_launch: Callable[[], None] | None = None


def decide_analysis_levels(an: "GridAnalysis", z: np.ndarray, zq: np.ndarray, rope: float,
                           hdi_probs: Sequence[float], active: np.ndarray | None = None, *,
                           rule: str = "verdict", level: float = 0.95, cut: float = 20.0,
                           exact_probs: bool = True) -> list[Decisions]:
    """:func:`decide_analysis` at several HDI masses in one pass over the datasets (the
    mixture of each dataset is built once and labelled at every mass).

    Parameters
    ----------
    hdi_probs : sequence of float, length L
    active : ndarray of bool, shape (L, D), optional
        Which datasets to label at which mass (default all); a dataset active at no mass is
        skipped. Inactive entries of the result have label -1 and zero readings.

    Returns
    -------
    list of Decisions, one per HDI mass (identical to separate :func:`decide_analysis` calls
    on the active datasets).
    """
    D = z.shape[0]
    L = len(hdi_probs)
    act = (np.ones((L, D), np.bool_) if active is None
           else np.ascontiguousarray(active, np.bool_).reshape(L, D))
    out = _new_out(L, D)
    hook = before_launch
    if hook is not None:
        hook()
    _k.label_mixtures_fused(np.ascontiguousarray(an.features(z, zq)), an.theta,
                            np.ascontiguousarray(z[:, an._keep]),
                            an.WT, an.delta_sd, float(rope), np.asarray(hdi_probs, float), act,
                            float(level), _k.rule_code(rule), float(cut), out,
                            not exact_probs, _k.PHI_TAB)
    return [_unpack(out[l]) for l in range(L)]


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

    Parameters
    ----------
    delta : float or ndarray of shape (M,)
        Δ on the log scale; an array is a sample of the effect distribution (resampled with
        replacement to ``sims`` draws).
    """
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
    owner = (id(truth), prior, id(existing))
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
