r"""Assurance analysis: the exact posterior of Δ and its label for batches of simulated datasets.

The analysis half of the assurance simulation (:mod:`models.stats.assurance`, which draws
the datasets and turns labels into rates).

For a design :math:`d` (runs per arm, how runs share instances; :mod:`models.stats.designs`) and
a decision rule (:mod:`models.stats.decision`), the *assurance* is

.. math::

    \mathcal A(d) = \int P\big(\text{rule met by } p(\Delta\mid y)\ \big|\ \tau,\sigma,\Delta\big)
                    \,p(\tau,\sigma)\,p(\Delta)\;d\tau\,d\sigma\,d\Delta ,

averaged over the noise prior (:math:`p(\tau)\,p(\sigma)`, or the joint population prior of
an unknown platform; or the posterior of runs already bought) and over the effect
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
   with :func:`models.stats.mixture.mixture_summary` + :func:`models.stats.decision.label_code`.

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
from models.stats.designs import Existing, Layout
from models.stats.noise import POP_RANGE, NoisePrior
from models.stats.tps_model import MU_PRIOR_SD

__all__ = ["analysis_grid", "GridAnalysis", "Decisions", "decide", "decide_analysis",
           "decide_analysis_levels"]

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
        With a ``joint`` prior (the population prior of an unknown platform) both axes span
        that prior's support (:data:`models.stats.noise.POP_RANGE`, where its 1e-4
        quantiles lie), not its Scaled-Inv-chi2 marginals' quantiles: the marginals of the
        shipped population prior, matched on the 5-50-95 % quantiles, put their 1e-4
        quantiles at 0.05 % and 1.7e5 (relative), and the padded grid on them ran from
        0.007 % to 1.2e6, below 2 % of the joint draws of tau and with most of its points
        on scales no platform has.
    n_runs : int
        Runs in the analysed data (old + new): sets the resolution. The posterior SD of
        log sigma is about 1/sqrt(2 df); the spacing aims at that, bounded by ``g_max``.
    q : float
        Each axis spans the prior's q .. 1-q quantiles, widened by 10 % on the log scale.
    g_max : int
        Largest number of grid points. 600 costs ≈ 29 % less CPU than 1,200; labels agree with ``fit_exact`` (tests/models/stats/test_assurance.py) and the budget
        example's assurances move by ≤ 0.005 against 1,200 points (g_max = 400 moved one by
        0.035, so 600 is near the edge).

    Returns
    -------
    tau, sigma : ndarray, shape (G,)
        Product grid, flattened with tau varying slowest (relative scales); read-only
        (a grid is built once per prior and size, and shared).
    n_tau, n_sigma : int
    """
    key = (prior.tau, prior.sigma, prior.joint, int(n_runs), float(q), int(g_max),
           int(min_pts))
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
    if prior.joint is not None:
        # the joint prior's support, where its draws are truncated: its 1e-4 quantiles lie
        # at the ends (tau 1.0e-5 .. 0.965, sigma 1.3e-5 .. 0.960 for the shipped fit)
        axes = [(math.log(POP_RANGE[0]), math.log(POP_RANGE[1]))] * 2
    for sp in (() if prior.joint is not None else (prior.tau, prior.sigma)):
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
    ∝ p(y|τ,σ) p(τ, σ) τ σ (``NoisePrior.logpdf_joint``: the joint population prior when the
    prior carries one, else p(τ) p(σ)). The data enter through :meth:`stats`; ``theta`` (F, G) turns
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
        # the verdict's prior of the scale pair (models.stats.tps_exact): the joint one when
        # the prior has it (the population prior), else the independent tau and sigma
        const = const + prior.logpdf_joint(self.tau, self.sigma) \
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
    key = (layout, prior.tau, prior.sigma, prior.joint, tau.tobytes(), sigma.tobytes())
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
