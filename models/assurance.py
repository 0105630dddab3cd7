r"""Assurance of a TPS A/B design: the probability that the experiment ends in the right call.

For a design :math:`d` (runs per arm, how runs share instances) and a decision rule, the
*assurance* is

.. math::

    \mathcal A(d) = \int P\big(\text{rule met by } p(\Delta\mid y)\ \big|\ \tau,\sigma,\Delta\big)
                    \,p(\tau)\,p(\sigma)\,p(\Delta)\;d\tau\,d\sigma\,d\Delta ,

averaged over the noise prior (or the posterior of runs already bought) and over the effect
(a fixed :math:`\Delta` or draws of it). It is computed by simulation: draw
:math:`(\tau,\sigma,\Delta)`, simulate the log TPS of every run of the design under the
hierarchical model of :mod:`models.tps_model`, and analyse each simulated data set with the
*exact* engine (:mod:`models.tps_exact`), exactly as ``planner verdict`` would.

Speed comes from three exact reductions, none an approximation:

1. **Typed sufficient statistics.** A design is a list of *instance types* (``count``
   instances, each holding ``a`` runs of A and ``b`` runs of B). Within a type every instance
   has the same :math:`g_i = \tau^2/(\sigma^2 + n_i\tau^2)` and :math:`x_i`, so the data enter
   the exact posterior (``design/exact_posterior.md``) only through
   :math:`z = (1, S_A, S_B, \sum_{i\in k} T_i)` and :math:`(\sum y^2, \sum_{i\in k} T_i^2)`.
2. **Quadratic forms.** For each grid point :math:`g` the log posterior weight is a quadratic
   form in :math:`z` plus a linear form in the sums of squares, and the conditional mean of
   :math:`\Delta` is linear in :math:`z`. So all datasets × all grid points are two matrix
   products (``features @ theta``, ``z @ W``) — the ``conditional_posterior`` algebra of
   :mod:`models.tps_exact`, regrouped (checked against it to 1e-9 in the tests).
3. **HDI labels from CDF values.** For a unimodal density the shortest 95 % interval
   :math:`[L, U]` lies above :math:`r` iff :math:`F(r) < 0.05` and
   :math:`f(Q(F(r)+0.95)) > f(r)` (the width :math:`Q(a+0.95)-Q(a)` is quasi-convex in
   :math:`a`, with derivative :math:`1/f(Q(a+0.95)) - 1/f(Q(a))`); similarly below
   :math:`-r` and inside :math:`(-r, r)`. One mixture quantile per candidate dataset (Newton
   with a bisection safeguard, numba), no HDI search. Labels agree with
   :func:`models.tps_exact.mixture_summary` + :func:`planner.verdict.label_from`.
   In the simulations (``exact_probs=False``) every one of these comparisons is first made
   on linearly interpolated tables of Φ and φ with a rigorous error bound (Newton steps on
   the interpolated CDF, stopped as soon as the density comparison clears its bound); only
   a comparison inside its margin is redone exactly, so the labels are the exact ones.

Sequential plans label every look at all per-look HDI masses in one pass
(:func:`evaluate_sequential_levels`); :class:`GridAnalysis` objects are reused across
designs with the same layout, prior and grid.

The analysis grid over :math:`(\tau,\sigma)` is *fixed* per design (log-spaced between the
prior's 1e-4 and 1 - 1e-4 quantiles, finer for more runs) instead of the two-pass adaptive
grid of :func:`models.tps_exact.fit_exact`; the tests check the resulting labels against
``fit_exact`` on simulated datasets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from models.noise import NoisePrior
from models.tps_model import MU_PRIOR_SD

try:  # numba is a hard dependency of the project, but keep import errors readable
    import numba as _nb
except ImportError:  # pragma: no cover
    _nb = None

_LOG2PI = math.log(2.0 * math.pi)

#: Label codes returned by :func:`decide` (same meaning as ``planner.verdict.LABELS``).
UNDECIDED, B_BETTER, A_BETTER, EQUIVALENT = 0, 1, 2, 3
LABEL_NAMES = {UNDECIDED: "undecided", B_BETTER: "B better", A_BETTER: "A better",
               EQUIVALENT: "equivalent"}
RULES = ("verdict", "superiority", "equivalence")


# --------------------------------------------------------------------------------------------
# designs as instance types
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class InstanceType:
    """``count`` instances (allocations / sessions), each with ``a`` runs of A, ``b`` of B."""

    count: int
    a: int
    b: int

    @property
    def n(self) -> int:
        return self.a + self.b


@dataclass(frozen=True)
class Layout:
    """A fixed design: how the runs of A and B are spread over instances.

    Attributes
    ----------
    types : tuple of InstanceType
        Instances of the same composition are grouped; order is the simulation order.
    """

    types: tuple

    @property
    def n_a(self) -> int:
        return sum(t.count * t.a for t in self.types)

    @property
    def n_b(self) -> int:
        return sum(t.count * t.b for t in self.types)

    @property
    def n_runs(self) -> int:
        return self.n_a + self.n_b

    @property
    def n_instances(self) -> int:
        return sum(t.count for t in self.types)

    def prefix(self, counts: Sequence[int]) -> "Layout":
        """The layout made of the first ``counts[k]`` instances of each type."""
        return Layout(tuple(InstanceType(int(c), t.a, t.b) for c, t in zip(counts, self.types)))

    def design_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Design matrix X (N, 2) and instance index (N,) in the order of :func:`flatten`."""
        cols, inst = [], []
        i0 = 0
        for t in self.types:
            for i in range(t.count):
                cols += [0] * t.a + [1] * t.b
                inst += [i0 + i] * t.n
            i0 += t.count
        X = np.zeros((len(cols), 2))
        X[np.arange(len(cols)), cols] = 1.0
        return X, np.asarray(inst, int)

    def instances_per_arm(self) -> list[int]:
        """Runs per instance, one entry per instance (for the cost model)."""
        out = []
        for t in self.types:
            out += [t.n] * t.count
        return out


def separate_layout(n: int, runs_per_instance: int = 1) -> Layout:
    """n runs of A and n of B, never sharing an instance; ``runs_per_instance`` runs of one
    config per instance (1 = every run its own allocation, the HF Jobs default)."""
    if n < 1 or runs_per_instance < 1:
        raise ValueError("need n >= 1 and runs_per_instance >= 1")
    r = min(runs_per_instance, n)
    full, rem = divmod(n, r)
    types = [InstanceType(full, r, 0)] + ([InstanceType(1, rem, 0)] if rem else [])
    types += [InstanceType(full, 0, r)] + ([InstanceType(1, 0, rem)] if rem else [])
    return Layout(tuple(types))


def paired_layout(n: int, pairs_per_instance: int | None = None) -> Layout:
    """n runs of A and n of B interleaved on shared instances (A and B share the instance
    effect u); ``pairs_per_instance`` pairs per instance (None = all on one instance)."""
    if n < 1:
        raise ValueError("need n >= 1")
    k = n if not pairs_per_instance else min(pairs_per_instance, n)
    full, rem = divmod(n, k)
    types = [InstanceType(full, k, k)] + ([InstanceType(1, rem, rem)] if rem else [])
    return Layout(tuple(types))


def flatten(layout: Layout, ys: list[np.ndarray]) -> np.ndarray:
    """Concatenate per-type simulated arrays (D, count, a+b) into y (D, N) (order of
    :meth:`Layout.design_arrays`)."""
    return np.concatenate([y.reshape(y.shape[0], -1) for y in ys], axis=1)


# --------------------------------------------------------------------------------------------
# existing runs (planning more runs after some were bought)
# --------------------------------------------------------------------------------------------
@dataclass
class Existing:
    """Runs already measured, on the log scale and *centred* by ``centre``.

    New runs are always on new instances. ``X`` (n, 2) one-hot A/B, ``inst`` (n,) instance
    index, ``y`` (n,) log TPS minus ``centre``.
    """

    X: np.ndarray
    inst: np.ndarray
    y: np.ndarray
    centre: float

    @classmethod
    def from_tpsdata(cls, data) -> "Existing":
        """From :class:`models.tps_model.TPSData` with configs 0 = A, 1 = B (no cold column)."""
        X = np.zeros((data.n_runs, 2))
        X[np.arange(data.n_runs), data.config] = 1.0
        c = float(np.mean(data.y))
        return cls(X, np.asarray(data.instance, int), data.y - c, c)

    @property
    def n_runs(self) -> int:
        return int(self.y.size)


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
        labels still agree with ``fit_exact`` (tests/test_assurance.py) and the budget
        example's assurances move by ≤ 0.005 against 1,200 points (g_max = 400 moved one by
        0.035, so 600 is near the edge).

    Returns
    -------
    tau, sigma : ndarray, shape (G,)
        Product grid, flattened with tau varying slowest (relative scales).
    n_tau, n_sigma : int
    """
    axes = []
    for sp in (prior.tau, prior.sigma):
        lo, hi = float(sp.ppf(q)), float(sp.ppf(1.0 - q))
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
    return T.ravel(), S.ravel(), nt, ns


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
    Same model and priors as :func:`models.tps_exact.fit_exact` with two configs and no cold
    column: μ ~ N(ȳ 1, v0 I) with ȳ the mean log TPS of all analysed runs and v0 =
    ``MU_PRIOR_SD``² (:mod:`models.tps_model`, SD 1.0 on the log scale), grid weights
    ∝ p(y|τ,σ) p(τ) p(σ) τ σ. The data enter through :meth:`stats`; ``theta`` (F, G) turns
    the features of :meth:`features` into log weights, ``W`` (J, G) turns z into the
    conditional means of Δ, ``delta_sd`` (G,) are the conditional SDs (log scale).
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
        Asum = XtX[None] - np.einsum("gk,k,kp,kq->gpq", gk, cnt, xk, xk)
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
            Asum = Asum + (ex.X.T @ ex.X)[None] - np.einsum("gi,ip,iq->gpq", gi, xi, xi)
            logdetS = logdetS + ((ni[None, :] - 1.0) * np.log(s2)[:, None]
                                 + np.log(s2[:, None] + ni[None, :] * t2[:, None])).sum(1)
            b_old = ((ex.X.T @ ex.y)[None, :] - (gi * Ti[None, :]) @ xi) / s2[:, None]
            q_old = (float(ex.y @ ex.y) - gi @ (Ti ** 2)) / s2
            S_old = float(ex.y.sum())
            N += ex.n_runs
        self.N = N
        P = Asum / s2[:, None, None] + np.eye(2)[None] / v0
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
        Mq = 0.5 * np.einsum("gpj,gpq,gqk->gjk", R, Pinv, R) - np.outer(u, u)[None] / (v0 * N * N)
        const = -0.5 * (N * _LOG2PI + 2.0 * math.log(v0) + logdetS + logdetP + q_old)
        const = const + prior.tau.logpdf(self.tau) + prior.sigma.logpdf(self.sigma) \
            + np.log(self.tau) + np.log(self.sigma)
        # exact reduction of redundant statistics: z = z[:, keep] @ L.T for every dataset of
        # this layout (e.g. one run per instance: the instance totals are the arm sums), so
        # the quadratic form shrinks to the independent columns (fewer features per point)
        keep, L = _reduce_columns(types)
        self._keep = keep
        Jr = keep.size
        Mr = np.einsum("ia,gij,jb->gab", L, Mq, L)                              # (G, Jr, Jr)
        iu, ju = np.triu_indices(Jr)
        self._iu, self._ju = iu, ju
        th = Mr[:, iu, ju] * np.where(iu == ju, 1.0, 2.0)[None, :]              # (G, Jr(Jr+1)/2)
        th[:, 0] += const                                                     # z0*z0 = 1
        thq = np.concatenate([(-0.5 / s2)[:, None], 0.5 * gk / s2[:, None]], axis=1)  # (G, 1+K)
        # all instances single-run: sum y^2 = sum over types of the squared instance totals
        self._fold_q = bool(all(t.n == 1 for t in types))
        if self._fold_q:
            thq = thq[:, 1:] + thq[:, :1]
        self.theta = np.ascontiguousarray(np.concatenate([th, thq], axis=1).T)  # (F, G)
        c = np.array([-1.0, 1.0])
        self.W = np.ascontiguousarray(np.einsum("gpj,gpq,q->jg", R, Pinv, c))   # (J, G)
        self.WT = np.ascontiguousarray((L.T @ self.W).T)                        # (G, Jr)
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
# labels from the mixture: numba kernel
# --------------------------------------------------------------------------------------------
#: Normal CDF and density tables for the fast path of :func:`_py_label`: Phi and phi at
#: z = -9 + k / 64 (row 0: Phi, row 1: phi), linearly interpolated.
_PHI_STEP = 64.0
_PHI_Z0 = 9.0
_PHI_TAB = np.array([[0.5 * math.erfc(-(-_PHI_Z0 + k / _PHI_STEP) / math.sqrt(2.0)),
                      math.exp(-0.5 * (-_PHI_Z0 + k / _PHI_STEP) ** 2) / math.sqrt(2.0 * math.pi)]
                     for k in range(int(2 * _PHI_Z0 * _PHI_STEP) + 2)]).T.copy()
#: Error bounds of linear interpolation on the 1/64 grid (h^2/8 max|g''|): Phi'' = -z phi,
#: max phi(1) = 0.242 -> 7.4e-6; phi'' = (z^2 - 1) phi, max phi(0) = 0.399 -> 1.22e-5 (and
#: Phi(-9) = 1.1e-19, phi(9) = 1.0e-18 outside the table). A mixture's CDF is then within
#: _PHI_ERR, its density within _DEN_ERR * sum_j w_j / s_j.
_PHI_ERR = 7.4e-6
_DEN_ERR = 1.22e-5
#: Safety margin on the CDF comparisons of the fast path (> _PHI_ERR).
_PHI_MARGIN = 2e-5


def _py_phi_tab(z, tab):
    """Normal CDF by linear interpolation in ``_PHI_TAB`` (abs. error <= 7.4e-6)."""
    if z <= -9.0:
        return 0.0
    if z >= 9.0:
        return 1.0
    t = (z + 9.0) * 64.0
    i = int(t)
    return tab[0, i] + (t - i) * (tab[0, i + 1] - tab[0, i])


def _py_tab_cmp(p, ftgt, w, mm, iss, na, mu, sdv, lo, hi, S1, S2, S3, tab):
    """Is f(Q(p)) > f_target for the exact mixture, judged from interpolated values?

    ``p`` and ``ftgt`` are interpolated values (errors <= _PHI_ERR and _DEN_ERR * S1).
    Returns 1 (surely yes), 2 (surely no) or 0 (too close to call: use the exact path).

    Safeguarded Newton for the quantile x~ of the *interpolated* CDF, checking the decision
    at every iterate. With x* the exact path's quantile (F(x*) = exact p):
    |F(x~) - F(x*)| <= dF = 2 _PHI_ERR + |F~(x~) - p|. Let f_lo = f~(x~) - _DEN_ERR S1 <= f(x~),
    dx = 2 dF / f_lo and c = |f'~(x~)| + 9 _DEN_ERR S2 + 0.4 S3 dx (a bound of |f'| within dx
    of x~: |phi''| <= 0.4). If c dx <= f_lo / 2 then f >= f_lo / 2 on that interval, so
    |x* - x~| <= dx and |f(x*) - f(x~)| <= c dx. The decision is taken when
    |f~(x~) - f_target| exceeds twice that plus both density errors.
    """
    if not (p > 0.0 and p < 1.0):
        return 0
    x = mu
    if sdv > 0:
        pp = p if p < 0.5 else 1.0 - p
        t = math.sqrt(-2.0 * math.log(max(pp, 1e-300)))
        zq = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / \
            (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t)
        x = mu + (zq if p >= 0.5 else -zq) * sdv
    a, b = lo, hi
    ef = _DEN_ERR * S1
    for _ in range(80):
        F = 0.0
        f = 0.0
        fd = 0.0
        for j in range(na):
            z = (x - mm[j]) * iss[j]
            if z >= 9.0:
                F += w[j]
            elif z > -9.0:
                t = (z + 9.0) * 64.0
                i = int(t)
                u = t - i
                F += w[j] * (tab[0, i] + u * (tab[0, i + 1] - tab[0, i]))
                ph = w[j] * iss[j] * (tab[1, i] + u * (tab[1, i + 1] - tab[1, i]))
                f += ph
                fd -= ph * z * iss[j]
        resid = abs(F - p)
        flo = f - ef
        if flo > 0.0:
            dx = 2.0 * (2.0 * _PHI_ERR + resid) / flo
            c = abs(fd) + 9.0 * _DEN_ERR * S2 + 0.4 * S3 * dx
            if c * dx <= 0.5 * flo:
                bound = 2.0 * ef + 2.0 * c * dx + 1e-12 * (f + ftgt)
                diff = f - ftgt
                if diff > bound:
                    return 1
                if diff < -bound:
                    return 2
        if resid <= 1e-11:
            return 0
        if F < p:
            a = x if x > a else a
        else:
            b = x if x < b else b
        if (b - a) <= 1e-14 * (1.0 + abs(x)):
            return 0
        xn = x - (F - p) / f if f > 0 else 0.5 * (a + b)
        if not (xn > a and xn < b):
            xn = 0.5 * (a + b)
        x = xn
    return 0


def _py_tab_label(r, hdi_prob, level, rule, Fp, Fm, fp, fm, w, mm, iss, na, mu, sdv, lo, hi,
                  S1, S2, S3, tab):
    """The exact path's label decided from interpolated CDF / density values with error
    bounds: the label (0-3), or -1 when some comparison is within its margin."""
    M = _PHI_MARGIN
    if rule == 1:
        if 1.0 - Fp >= level + M:
            return 1
        if 1.0 - Fp <= level - M:
            return 0
        return -1
    h = hdi_prob
    if Fp < 1.0 - h - M:                          # B better candidate
        c = _tab_cmp(Fp + h, fp, w, mm, iss, na, mu, sdv, lo, hi, S1, S2, S3, tab)
        if c == 0:
            return -1
        if c == 1:
            return 1
    elif Fp < 1.0 - h + M:
        return -1
    if Fm > h + M:                                # A better candidate
        c = _tab_cmp(Fm - h, fm, w, mm, iss, na, mu, sdv, lo, hi, S1, S2, S3, tab)
        if c == 0:
            return -1
        if c == 1:
            return 2
    elif Fm > h - M:
        return -1
    if r > 0:
        if Fp - Fm > h + 2.0 * M:                 # equivalence candidate
            c = _tab_cmp(Fm + h, fm, w, mm, iss, na, mu, sdv, lo, hi, S1, S2, S3, tab)
            if c == 0:
                return -1
            if c == 2:
                return 0
            c = _tab_cmp(Fp - h, fp, w, mm, iss, na, mu, sdv, lo, hi, S1, S2, S3, tab)
            if c == 0:
                return -1
            return 3 if c == 1 else 0
        elif Fp - Fm > h - 2.0 * M:
            return -1
    return 0


def _py_exact_label(w, mm, ss, na, r, hdi_prob, level, rule, Fp, Fm, fp, fm, mu, sdv, lo,
                    hi):
    """The exact path's label from exact CDF / density values at +-r."""
    lab = 0
    if rule == 1:  # superiority: P(Δ > r) >= level
        if 1.0 - Fp >= level:
            lab = 1
    else:
        if Fp < 1.0 - hdi_prob:
            x = _mix_quantile(Fp + hdi_prob, w, mm, ss, na, mu, sdv, lo, hi)
            if _mix_pdf(x, w, mm, ss, na) > fp:
                lab = 1
        if lab == 0 and Fm > hdi_prob:
            x = _mix_quantile(Fm - hdi_prob, w, mm, ss, na, mu, sdv, lo, hi)
            if _mix_pdf(x, w, mm, ss, na) > fm:
                lab = 2
        if lab == 0 and r > 0 and Fp - Fm > hdi_prob:
            x1 = _mix_quantile(Fm + hdi_prob, w, mm, ss, na, mu, sdv, lo, hi)
            if _mix_pdf(x1, w, mm, ss, na) > fm:
                x2 = _mix_quantile(Fp - hdi_prob, w, mm, ss, na, mu, sdv, lo, hi)
                if _mix_pdf(x2, w, mm, ss, na) > fp:
                    lab = 3
    return lab


def _py_label(w, mm, ss, iss, na, r, hps, act, level, rule, out, d, fast, tab):
    """Labels and readings of one normalised mixture (components 0..na-1) into out[l, :, d]
    for every HDI mass ``hps[l]`` with ``act[l, d]`` set (the mixture is shared). ``iss``
    holds 1 / ss (filled by the caller).

    ``fast``: first decide from interpolated Normal CDF and density values (tables of Phi
    and phi, errors <= 7.4e-6 and 1.22e-5): every comparison the exact path makes (CDF at
    +-r against the HDI mass, density at a quantile against the density at +-r, with the
    quantile solved on the interpolated CDF) is made with a rigorous error margin, and a
    level where any comparison falls inside its margin goes through the exact path.
    So the labels are those of the exact path; P(Δ > r), P(Δ < -r) of the levels decided
    fast are the interpolated values (within 7.4e-6).
    """
    _SQ2 = math.sqrt(2.0)
    _ISQ2PI = 1.0 / math.sqrt(2.0 * math.pi)
    L = hps.shape[0]
    tdone = False
    if fast:
        mu = 0.0
        m2 = 0.0
        Fp = 0.0
        Fm = 0.0
        fp = 0.0
        fm = 0.0
        S1 = 0.0
        S2 = 0.0
        S3 = 0.0
        lo = np.inf
        hi = -np.inf
        for j in range(na):
            wj = w[j]
            mj = mm[j]
            sj = ss[j]
            mu += wj * mj
            m2 += wj * (sj * sj + mj * mj)
            isj = iss[j]
            S1 += wj * isj
            S2 += wj * isj * isj
            S3 += wj * isj * isj * isj
            if mj - 12.0 * sj < lo:
                lo = mj - 12.0 * sj
            if mj + 12.0 * sj > hi:
                hi = mj + 12.0 * sj
            z = (r - mj) * isj
            if z >= 9.0:
                Fp += wj
            elif z > -9.0:
                t = (z + 9.0) * 64.0
                i = int(t)
                u = t - i
                Fp += wj * (tab[0, i] + u * (tab[0, i + 1] - tab[0, i]))
                fp += wj * isj * (tab[1, i] + u * (tab[1, i + 1] - tab[1, i]))
            z = (-r - mj) * isj
            if z >= 9.0:
                Fm += wj
            elif z > -9.0:
                t = (z + 9.0) * 64.0
                i = int(t)
                u = t - i
                Fm += wj * (tab[0, i] + u * (tab[0, i + 1] - tab[0, i]))
                fm += wj * isj * (tab[1, i] + u * (tab[1, i + 1] - tab[1, i]))
        var = m2 - mu * mu
        sdv = math.sqrt(var) if var > 0 else 0.0
        tdone = True
        for l in range(L):
            if act[l, d]:
                lab = _tab_label(r, hps[l], level, rule, Fp, Fm, fp, fm, w, mm, iss, na, mu,
                                 sdv, lo, hi, S1, S2, S3, tab)
                if lab >= 0:
                    out[l, 0, d] = lab
                    out[l, 1, d] = 1.0 - Fp
                    out[l, 2, d] = Fm
                    out[l, 3, d] = mu
                    out[l, 4, d] = sdv
                else:
                    tdone = False
        if tdone:
            return
    mu = 0.0
    m2 = 0.0
    lo = np.inf
    hi = -np.inf
    Fp = 0.0
    Fm = 0.0
    fp = 0.0
    fm = 0.0
    for j in range(na):
        mu += w[j] * mm[j]
        m2 += w[j] * (ss[j] * ss[j] + mm[j] * mm[j])
        if mm[j] - 12.0 * ss[j] < lo:
            lo = mm[j] - 12.0 * ss[j]
        if mm[j] + 12.0 * ss[j] > hi:
            hi = mm[j] + 12.0 * ss[j]
        zp = (r - mm[j]) / ss[j]
        zm = (-r - mm[j]) / ss[j]
        Fp += w[j] * 0.5 * math.erfc(-zp / _SQ2)
        Fm += w[j] * 0.5 * math.erfc(-zm / _SQ2)
        fp += w[j] * math.exp(-0.5 * zp * zp) / ss[j]
        fm += w[j] * math.exp(-0.5 * zm * zm) / ss[j]
    var = m2 - mu * mu
    sdv = math.sqrt(var) if var > 0 else 0.0
    fp *= _ISQ2PI
    fm *= _ISQ2PI
    for l in range(L):
        if not act[l, d]:
            continue
        if fast and out[l, 0, d] >= 0:          # decided on the tables
            continue
        out[l, 0, d] = _exact_label(w, mm, ss, na, r, hps[l], level, rule, Fp, Fm, fp, fm,
                                    mu, sdv, lo, hi)
        out[l, 1, d] = 1.0 - Fp
        out[l, 2, d] = Fm
        out[l, 3, d] = mu
        out[l, 4, d] = sdv


def _py_any_active(act, d):
    """Whether dataset d still needs a label at any HDI level."""
    for l in range(act.shape[0]):
        if act[l, d]:
            return True
    return False


def _py_active(lw, cut, w, idx):
    """Normalised weights of the grid points within ``cut`` of the best log weight.

    Fills ``w[:na]`` and their grid indices ``idx[:na]``; returns ``na``.
    """
    G = lw.shape[0]
    mx = -np.inf
    for g in range(G):
        if lw[g] > mx:
            mx = lw[g]
    na = 0
    tot = 0.0
    for g in range(G):
        x = lw[g] - mx
        if x > -cut:
            e = math.exp(x)
            w[na] = e
            idx[na] = g
            tot += e
            na += 1
    for j in range(na):
        w[j] /= tot
    return na


def _py_kernel(lw, m, sd, r, hps, act, level, rule, cut, out, fast, tab):
    """Labels of D mixtures given their log weights and component means, each (D, G)."""
    D, G = lw.shape
    isd = 1.0 / sd
    nblk = min(D, 256)
    bs = (D + nblk - 1) // nblk if D > 0 else 1
    for bk in _prange(nblk):
        w = np.empty(G)
        idx = np.empty(G, np.int64)
        mm = np.empty(G)
        ss = np.empty(G)
        iss = np.empty(G)
        for d in range(bk * bs, min(D, (bk + 1) * bs)):
            if not _any_active(act, d):
                continue
            na = _active(lw[d], cut, w, idx)
            for j in range(na):
                g = idx[j]
                mm[j] = m[d, g]
                ss[j] = sd[g]
                iss[j] = isd[g]
            _label(w, mm, ss, iss, na, r, hps, act, level, rule, out, d, fast, tab)


def _py_kernel_fused(phi, theta, z, WT, sd, r, hps, act, level, rule, cut, out, fast, tab):
    """As :func:`_py_kernel`, computing log weights (phi @ theta) and means (z @ WT.T) on the
    fly, one dataset at a time (no (D, G) temporaries; work buffers per block of datasets;
    means only for the active grid points)."""
    D, F = phi.shape
    G = theta.shape[1]
    J = z.shape[1]
    isd = 1.0 / sd
    nblk = min(D, 256)
    bs = (D + nblk - 1) // nblk if D > 0 else 1
    for bk in _prange(nblk):
        lw = np.empty(G)
        w = np.empty(G)
        idx = np.empty(G, np.int64)
        mm = np.empty(G)
        ss = np.empty(G)
        iss = np.empty(G)
        for d in range(bk * bs, min(D, (bk + 1) * bs)):
            if not _any_active(act, d):
                continue
            for g in range(G):
                lw[g] = 0.0
            for f in range(F):
                a = phi[d, f]
                for g in range(G):
                    lw[g] += a * theta[f, g]
            na = _active(lw, cut, w, idx)
            for j in range(na):
                g = idx[j]
                acc = 0.0
                for k in range(J):
                    acc += z[d, k] * WT[g, k]
                mm[j] = acc
                ss[j] = sd[g]
                iss[j] = isd[g]
            _label(w, mm, ss, iss, na, r, hps, act, level, rule, out, d, fast, tab)


def _py_mix_pdf(x, w, mm, ss, na):
    f = 0.0
    for j in range(na):
        z = (x - mm[j]) / ss[j]
        f += w[j] * math.exp(-0.5 * z * z) / ss[j]
    return f / math.sqrt(2.0 * math.pi)


def _py_mix_quantile(p, w, mm, ss, na, mu, sdv, lo, hi):
    """Quantile of a Normal mixture: safeguarded Newton from the moment-matched Normal."""
    sq2 = math.sqrt(2.0)
    # start: Normal approximation via the inverse of erfc (Acklam-free: bisection-free start)
    x = mu
    if sdv > 0:
        # rational approximation of the Normal quantile (Abramowitz & Stegun 26.2.23)
        pp = p if p < 0.5 else 1.0 - p
        t = math.sqrt(-2.0 * math.log(max(pp, 1e-300)))
        zq = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / \
            (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t)
        x = mu + (zq if p >= 0.5 else -zq) * sdv
    a, b = lo, hi
    for _ in range(100):
        F = 0.0
        f = 0.0
        for j in range(na):
            z = (x - mm[j]) / ss[j]
            F += w[j] * 0.5 * math.erfc(-z / sq2)
            f += w[j] * math.exp(-0.5 * z * z) / ss[j]
        f /= math.sqrt(2.0 * math.pi)
        if F < p:
            a = x if x > a else a
        else:
            b = x if x < b else b
        step = (F - p) / f if f > 0 else 0.0
        xn = x - step
        if not (xn > a and xn < b) or f <= 0:
            xn = 0.5 * (a + b)
        if abs(xn - x) <= 1e-13 * (1.0 + abs(x)) or (b - a) <= 1e-14 * (1.0 + abs(x)):
            return xn
        x = xn
    return x


if _nb is not None:
    _prange = _nb.prange
    _mix_pdf = _nb.njit(cache=True)(_py_mix_pdf)
    _mix_quantile = _nb.njit(cache=True)(_py_mix_quantile)
    _phi_tab = _nb.njit(cache=True)(_py_phi_tab)
    _tab_cmp = _nb.njit(cache=True)(_py_tab_cmp)
    _tab_label = _nb.njit(cache=True)(_py_tab_label)
    _exact_label = _nb.njit(cache=True)(_py_exact_label)
    _label = _nb.njit(cache=True)(_py_label)
    _any_active = _nb.njit(cache=True)(_py_any_active)
    _active = _nb.njit(cache=True)(_py_active)
    _kernel = _nb.njit(parallel=True, cache=True)(_py_kernel)
    _kernel_fused = _nb.njit(parallel=True, cache=True)(_py_kernel_fused)
else:  # pragma: no cover
    _prange = range
    _mix_pdf, _mix_quantile, _label = _py_mix_pdf, _py_mix_quantile, _py_label
    _phi_tab = _py_phi_tab
    _tab_cmp, _tab_label = _py_tab_cmp, _py_tab_label
    _exact_label = _py_exact_label
    _any_active, _active = _py_any_active, _py_active
    _kernel, _kernel_fused = _py_kernel, _py_kernel_fused


@dataclass
class Decisions:
    """Per-dataset readings of the Δ posterior (log scale, centred units for ``mean``).

    Attributes
    ----------
    labels : ndarray of int8, shape (D,)
        0 undecided, 1 B better, 2 A better, 3 equivalent (see ``LABEL_NAMES``).
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
        ``verdict`` and ``equivalence`` use the HDI labels of ``planner verdict``
        (``equivalence`` just reads label 3); ``superiority`` labels "B better" when
        P(Δ > rope) >= ``level``.
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
    _kernel(lw, m, np.ascontiguousarray(sd, float), float(rope), np.array([float(hdi_prob)]),
            np.ones((1, lw.shape[0]), np.bool_), float(level),
            1 if rule == "superiority" else 0, float(cut), out, not exact_probs, _PHI_TAB)
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
    _kernel_fused(np.ascontiguousarray(an.features(z, zq)), an.theta,
                  np.ascontiguousarray(z[:, an._keep]),
                  an.WT, an.delta_sd, float(rope), np.asarray(hdi_probs, float), act,
                  float(level), 1 if rule == "superiority" else 0, float(cut), out,
                  not exact_probs, _PHI_TAB)
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
    D = truth.size
    out = []
    for t in layout.types:
        u = rng.standard_normal((D, t.count, 1)) * truth.tau[:, None, None]
        e = rng.standard_normal((D, t.count, t.n)) * truth.sigma[:, None, None]
        mu = np.concatenate([np.zeros(t.a), np.ones(t.b)])[None, None, :] * \
            truth.delta[:, None, None] + truth.mu_a[:, None, None]
        out.append(mu + u + e)
    return out


def target_labels(delta: np.ndarray, rope: float, rule: str) -> np.ndarray:
    """The label each true Δ deserves: B better if Δ > rope, A better if Δ < −rope, else
    equivalent (superiority: B better iff Δ > rope; equivalence: equivalent iff |Δ| < rope)."""
    t = np.full(delta.shape, EQUIVALENT, np.int8)
    t[delta > rope] = B_BETTER
    t[delta < -rope] = A_BETTER
    if rule == "superiority":
        t[delta <= rope] = -1  # nothing to reach
    if rule == "equivalence":
        t[np.abs(delta) >= rope] = -1
    return t


def _batched(layout, analysis: GridAnalysis, truth: Truth, rng, rope, rule, level, hdi_prob,
             chunk, progress=None) -> Decisions:
    parts = []
    for s in range(0, truth.size, chunk):
        tr = truth.take(slice(s, s + chunk))
        ys = simulate(layout, tr, rng)
        z, zq = analysis.stats(ys)
        parts.append(decide_analysis(analysis, z, zq, rope, rule=rule, level=level,
                                     hdi_prob=hdi_prob, exact_probs=False))
        if progress is not None:
            progress(tr.size)
    return Decisions(*(np.concatenate([getattr(p, f) for p in parts])
                       for f in ("labels", "p_gt", "p_lt", "mean", "sd")))


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


def evaluate_fixed(layout: Layout, prior: NoisePrior, truth: Truth, rope: float, *,
                   rule: str = "verdict", level: float = 0.95, hdi_prob: float = 0.95,
                   seed: int = 0, existing: Existing | None = None, error_rates: bool = True,
                   progress: Callable[[int], None] | None = None,
                   grid: tuple[np.ndarray, np.ndarray] | None = None) -> FixedResult:
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

    Returns
    -------
    FixedResult
    """
    n_old = existing.n_runs if existing is not None else 0
    if grid is None:
        tg, sg, _, _ = analysis_grid(prior, layout.n_runs + n_old)
    else:
        tg, sg = grid
    an = _analysis(layout, prior, tg, sg, existing)
    chunk = _chunk_for(tg.size, layout.n_runs)
    rng = np.random.default_rng([seed, 1])
    dec = _batched(layout, an, truth, rng, rope, rule, level, hdi_prob, chunk, progress)
    tgt = target_labels(truth.delta, rope, rule)
    assur, ase = _rate(dec.labels == tgt)
    fr = {LABEL_NAMES[k]: float(np.mean(dec.labels == k)) for k in LABEL_NAMES}
    fc = fse = float("nan")
    ws = None
    if error_rates and existing is not None:
        # Δ = 0 is not a coherent truth for runs already measured: the wrong-call rates are
        # then posterior-predictive (decisive calls that the drawn true Δ contradicts)
        fc, fse, ws = _coherent_errors(dec.labels, truth.delta, tgt)
    elif error_rates:
        rng0 = np.random.default_rng([seed, 2])
        if rule == "equivalence":
            d0 = _batched(layout, an, truth.with_delta(rope), rng0, rope, rule, level, hdi_prob,
                          chunk, progress)
            fc, fse = _rate(d0.labels == EQUIVALENT)
        else:
            d0 = _batched(layout, an, truth.with_delta(0.0), rng0, rope, rule, level, hdi_prob,
                          chunk, progress)
            fc, fse = _rate((d0.labels == B_BETTER) | (d0.labels == A_BETTER))
            rng1 = np.random.default_rng([seed, 3])
            d1 = _batched(layout, an, truth.with_delta(-truth.delta), rng1, rope, rule, level,
                          hdi_prob, chunk, progress)
            sgn = planned_sign(truth)
            ws = float(np.mean(d1.labels == (B_BETTER if sgn > 0 else A_BETTER)))
    return FixedResult(assur, ase, fc, fse, ws, fr, truth.size, int(tg.size),
                       float(np.mean(dec.sd)))


# --------------------------------------------------------------------------------------------
# sequential designs
# --------------------------------------------------------------------------------------------
@dataclass
class SequentialResult:
    """A group-sequential plan: looks after every batch, stop when decisive or futile.

    ``expected_runs_per_arm``: mean runs per arm actually used; ``stop_fractions``: fraction
    of experiments stopped at each look (decisive or futile); ``false_claim_rate``: decisive
    directional claims at Δ = 0 under optional stopping (the honest rate of the plan).
    """

    assurance: float
    assurance_se: float
    false_claim_rate: float
    false_claim_se: float
    wrong_sign_rate: float | None
    expected_runs_per_arm: float
    expected_instances: float
    runs_per_arm_at_stop: np.ndarray = field(repr=False)
    instances_at_stop: np.ndarray = field(repr=False)
    hdi_prob: float = 0.95
    futility: float = 0.01
    sims: int = 0


def _futile(dec: Decisions, n_now: float, n_cap: float, rope: float, hdi_prob: float,
            rule: str, level: float, thresh: float) -> np.ndarray:
    """Predictive chance (Normal approximation) that the analysis at the cap is decisive is
    below ``thresh``: the remaining budget cannot change the verdict."""
    from scipy.special import ndtr, ndtri

    if n_now >= n_cap:
        return np.ones(dec.mean.shape, bool)
    s_now = dec.sd
    s_fin = s_now * math.sqrt(n_now / n_cap)
    om = np.sqrt(np.maximum(s_now ** 2 - s_fin ** 2, 1e-300))
    zq = float(ndtri(0.5 + hdi_prob / 2.0)) if rule != "superiority" else float(ndtri(level))
    m = dec.mean
    p = ndtr((m - rope - zq * s_fin) / om)
    if rule != "superiority":
        p = p + ndtr((-rope - zq * s_fin - m) / om)
        half = rope - zq * s_fin
        p = p + np.where(half > 0, ndtr((half - m) / om) - ndtr((-half - m) / om), 0.0)
    return p < thresh


def evaluate_sequential(full: Layout, looks: Sequence[Sequence[int]], prior: NoisePrior,
                        truth: Truth, rope: float, *, rule: str = "verdict", level: float = 0.95,
                        hdi_prob: float = 0.95, futility: float = 0.01, seed: int = 0,
                        existing: Existing | None = None, error_rates: bool = True,
                        progress: Callable[[int], None] | None = None) -> SequentialResult:
    """Simulate a sequential plan.

    Parameters
    ----------
    full : Layout
        The design at the cap.
    looks : sequence of sequences of int
        For each look, the number of instances of each type of ``full`` analysed so far
        (increasing; the last is ``full``'s counts).
    futility : float
        Stop (undecided) when the predictive chance of a decisive call at the cap is below
        this (Normal approximation of the future posterior).
    hdi_prob : float
        Per-look HDI mass (0.95 = the verdict rule at every look; larger is stricter).

    Returns
    -------
    SequentialResult
    """
    return evaluate_sequential_levels(full, looks, prior, truth, rope, (hdi_prob,), rule=rule,
                                      level=level, futility=futility, seed=seed,
                                      existing=existing, error_rates=error_rates,
                                      progress=progress)[0]


def evaluate_sequential_levels(full: Layout, looks: Sequence[Sequence[int]], prior: NoisePrior,
                               truth: Truth, rope: float, hdi_probs: Sequence[float], *,
                               rule: str = "verdict", level: float = 0.95,
                               futility: float = 0.01, seed: int = 0,
                               existing: Existing | None = None, error_rates: bool = True,
                               until_false_claim: float | None = None,
                               progress: Callable[[int], None] | None = None
                               ) -> list[SequentialResult]:
    """:func:`evaluate_sequential` at several per-look HDI masses, sharing the simulated data
    and each dataset's posterior between the masses (one pass per scenario).

    Every mass gets exactly the result of its own :func:`evaluate_sequential` call (same
    seeds, same data; each mass keeps its own set of experiments still running).

    Parameters
    ----------
    hdi_probs : sequence of float
        Per-look HDI masses, in the order they would be tried.
    until_false_claim : float, optional
        Only the masses up to the first whose false-claim rate is not above this are needed:
        the false-claim scenario is simulated for all masses, the others only for those.

    Returns
    -------
    list of SequentialResult, one per needed mass (all masses when ``until_false_claim`` is
    None).
    """
    hps = [float(h) for h in hdi_probs]
    n_old = existing.n_runs if existing is not None else 0
    tg, sg, _, _ = analysis_grid(prior, full.n_runs + n_old)
    analyses = [_analysis(full.prefix(c), prior, tg, sg, existing) for c in looks]
    n_arm = [full.prefix(c).n_a for c in looks]
    n_inst = [full.prefix(c).n_instances for c in looks]
    chunk = _chunk_for(tg.size, full.n_runs)
    nl = len(looks)

    def run(tr: Truth, rng, levels: list[float], report: bool = True
            ) -> tuple[np.ndarray, np.ndarray]:
        L = len(levels)
        labels = np.zeros((L, tr.size), np.int8)
        stop_look = np.full((L, tr.size), nl - 1)
        for s in range(0, tr.size, chunk):
            sl = slice(s, s + chunk)
            t = tr.take(sl)
            ys = simulate(full, t, rng)
            alive = np.ones((L, t.size), bool)          # per mass: experiment still running
            lab = np.zeros((L, t.size), np.int8)
            stp = np.full((L, t.size), nl - 1)
            for j, (an, c) in enumerate(zip(analyses, looks)):
                rows = np.flatnonzero(alive.any(0))
                if rows.size == 0:
                    break
                ysub = [y[rows] for y in ys]
                z, zq = an.stats(ysub, c)
                act = alive[:, rows]
                decs = decide_analysis_levels(an, z, zq, rope, levels, act, rule=rule,
                                              level=level, exact_probs=False)
                for li, (dec, hp) in enumerate(zip(decs, levels)):
                    a = act[li]
                    rl = rows[a]
                    labs = dec.labels[a]
                    done = labs != UNDECIDED
                    lab[li, rl[done]] = labs[done]
                    if j < nl - 1:
                        sub = Decisions(labs, dec.p_gt[a], dec.p_lt[a], dec.mean[a], dec.sd[a])
                        fut = ~done & _futile(sub, n_arm[j], n_arm[-1], rope, hp, rule,
                                              level, futility)
                        stop = done | fut
                    else:
                        stop = np.ones(rl.size, bool)
                    stp[li, rl[stop]] = j
                    alive[li, rl[stop]] = False
            labels[:, sl] = lab
            stop_look[:, sl] = stp
            if progress is not None and report:
                progress(t.size * L)
        return labels, stop_look

    tgt = target_labels(truth.delta, rope, rule)
    sgn = planned_sign(truth)
    fcs: list[tuple[float, float]] = []
    need = hps
    if error_rates and existing is None:
        if rule == "equivalence":
            l0, _ = run(truth.with_delta(rope), np.random.default_rng([seed, 12]), hps, False)
            fcs = [_rate(l == EQUIVALENT) for l in l0]
        else:
            l0, _ = run(truth.with_delta(0.0), np.random.default_rng([seed, 12]), hps, False)
            fcs = [_rate((l == B_BETTER) | (l == A_BETTER)) for l in l0]
        if until_false_claim is not None:
            k = next((i for i, (fc, _) in enumerate(fcs) if not fc > until_false_claim),
                     len(hps) - 1)
            need = hps[:k + 1]
        if progress is not None:       # count the experiments of the masses reported
            progress(truth.size * len(need))
    lab, stop = run(truth, np.random.default_rng([seed, 11]), need)
    wss: list = [None] * len(need)
    if error_rates and existing is None and rule != "equivalence":
        l1, _ = run(truth.with_delta(-truth.delta), np.random.default_rng([seed, 13]), need)
        wss = [float(np.mean(l == (B_BETTER if sgn > 0 else A_BETTER))) for l in l1]
    out = []
    for i, hp in enumerate(need):
        assur, ase = _rate(lab[i] == tgt)
        runs = np.asarray(n_arm)[stop[i]]
        inst = np.asarray(n_inst)[stop[i]]
        fc = fse = float("nan")
        ws = None
        if error_rates and existing is not None:
            fc, fse, ws = _coherent_errors(lab[i], truth.delta, tgt)
        elif error_rates:
            fc, fse = fcs[i]
            ws = wss[i]
        out.append(SequentialResult(assur, ase, fc, fse, ws, float(runs.mean()),
                                    float(inst.mean()), runs, inst, hp, futility, truth.size))
    if until_false_claim is not None and existing is not None and error_rates:
        k = next((i for i, r in enumerate(out) if not r.false_claim_rate > until_false_claim),
                 len(out) - 1)
        out = out[:k + 1]
    return out


def sequential_plan(base: str, batch: int, cap: int, runs_per_instance: int = 1
                    ) -> tuple[Layout, list[list[int]]]:
    """Layout at the cap and the per-look instance counts of a sequential plan.

    Parameters
    ----------
    base : {"separate", "paired"}
        ``separate``: each batch adds ``batch`` runs per arm on new instances
        (``runs_per_instance`` runs of one config each); ``paired``: each batch is one new
        instance with ``batch`` interleaved pairs.
    batch, cap : int
        Runs per arm per batch, and the cap on runs per arm (rounded down to whole batches).
    """
    nb = max(1, cap // batch)
    if base == "paired":
        full = Layout((InstanceType(nb, batch, batch),))
        return full, [[j] for j in range(1, nb + 1)]
    r = min(runs_per_instance, batch)
    if batch % r:
        raise ValueError("batch must be a multiple of runs_per_instance")
    per = batch // r
    full = Layout((InstanceType(nb * per, r, 0), InstanceType(nb * per, 0, r)))
    return full, [[j * per, j * per] for j in range(1, nb + 1)]
