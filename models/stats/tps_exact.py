r"""Exact engine: the Normal hierarchical TPS model integrated analytically.

Given the noise scales :math:`(\tau, \sigma)` and one component of each cold group's prior
mixture (:mod:`models.stats.tps_cold`) every other unknown (config means, the cold
slowdowns, instance effects) is Gaussian, so it is integrated in closed form; only
:math:`(\tau, \sigma)` is integrated numerically, on a log-spaced grid.

Per instance :math:`i` with :math:`n_i` runs, :math:`\Sigma_i = \sigma^2 I + \tau^2 11^T` and
:math:`\Sigma_i^{-1} = \sigma^{-2}(I - g_i 11^T)`, :math:`g_i = \tau^2/(\sigma^2 + n_i\tau^2)`,
:math:`\log|\Sigma_i| = (n_i-1)\log\sigma^2 + \log(\sigma^2 + n_i\tau^2)`. With fixed-effect
design :math:`X` and prior :math:`\beta \sim N(m_0, V_0)`:

.. math::

    A = X^T\Sigma^{-1}X = \sigma^{-2}\Big(X^TX - \sum_i g_i\,x_i x_i^T\Big),\quad
    b = \sigma^{-2}\Big(X^Ty - \sum_i g_i\,x_i T_i\Big),\quad
    q = \sigma^{-2}\Big(\sum y^2 - \sum_i g_i T_i^2\Big)

with :math:`x_i = X_i^T 1` and :math:`T_i = \sum_{r\in i} y_r`. Then
:math:`P = V_0^{-1} + A`, :math:`\beta\mid y,\tau,\sigma \sim N(P^{-1}r, P^{-1})`,
:math:`r = V_0^{-1}m_0 + b`, and

.. math::

    \log p(y\mid\tau,\sigma) = -\tfrac12\big[N\log 2\pi + \log|\Sigma| + \log|V_0| + \log|P|
    + q + m_0^TV_0^{-1}m_0 - r^TP^{-1}r\big].

Grid weights :math:`w_g \propto p(y\mid\tau_g,\sigma_g)\,p(\tau_g,\sigma_g)\,\tau_g\sigma_g` (``NoisePrior.logpdf_joint``)
(the last two factors are the Jacobian of the log grid). A coarse pass over
:math:`10^{-5}..0.98` locates the posterior mass, a fine pass integrates it. Derivation checked
against the analytic Student-t posterior of the one-instance case (``tests/planner/decide/test_verdict.py``) and against PyMC (``tests/planner/decide/test_engines_agree.py``).

**Sessions.** When the runs name server sessions and some instance holds two or more of
them (:func:`has_sessions`), a session offset :math:`w_s \sim N(0, \omega^2)` is added
within each instance (the MCMC engine's ``sigma_session`` term, with the same
:data:`SESSION_PRIOR_SD` half-normal prior). Per instance
:math:`\Sigma_i = \Lambda_i + \tau^2 11^T` with :math:`\Lambda_i = \sigma^2 I +
\omega^2 \sum_s 1_s 1_s^T`; with :math:`c_s = 1/(\sigma^2 + n_s\omega^2)`,
:math:`h_s = \omega^2 c_s`, :math:`S_i = \sum_{s\in i} n_s c_s`,
:math:`k_i = \tau^2/(1 + \tau^2 S_i)`, :math:`u_i = \sum_{s\in i} c_s x_s` and
:math:`v_i = \sum_{s\in i} c_s T_s`:

.. math::

    A = \sigma^{-2}\Big(X^TX - \sum_s h_s x_s x_s^T\Big) - \sum_i k_i u_i u_i^T,\quad
    b = \sigma^{-2}\Big(X^Ty - \sum_s h_s x_s T_s\Big) - \sum_i k_i u_i v_i,

:math:`q = \sigma^{-2}(\sum y^2 - \sum_s h_s T_s^2) - \sum_i k_i v_i^2` and
:math:`\log|\Sigma| = \sum_s[(n_s - 1)\log\sigma^2 + \log(\sigma^2 + n_s\omega^2)]
+ \sum_i \log(1 + \tau^2 S_i)` (Woodbury twice; :math:`\omega = 0` gives the formulas
above). :math:`\omega` is integrated over :data:`SESSION_NODES` equal-mass quantiles of its
prior, each a mixture component like the cold prior's.

All arrays accept a leading batch of datasets (shape ``(D, ...)``) so the repeat planner can
evaluate thousands of simulated experiments at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from models.stats import special  # logsumexp, ndtri without importing scipy.special

from models.stats.noise import NoisePrior
from models.stats.mixture import _hdi_from_discrete, mixture_summary
from models.stats import tps_cold
from models.stats.tps_model import DeltaSummary, TPSData
from models.stats.tps_sessions import (SESSION_NODE_LO, SESSION_NODES,  # noqa: F401
                                       SESSION_PRIOR_SD, SessionStats, has_sessions,
                                       session_nodes, session_parts)

_LOG2PI = math.log(2.0 * math.pi)


@dataclass
class SuffStats:
    """Sufficient statistics of the Normal model for one design (optionally batched).

    Attributes
    ----------
    n_i : ndarray, shape (I,)
        Runs per instance.
    x_i : ndarray, shape (I, p)
        Column sums of X within each instance.
    XtX : ndarray, shape (p, p)
    Xty : ndarray, shape (..., p)
    T_i : ndarray, shape (..., I)
        Sum of y within each instance.
    Q : ndarray, shape (...)
        Sum of y**2.
    """

    n_i: np.ndarray
    x_i: np.ndarray
    XtX: np.ndarray
    Xty: np.ndarray
    T_i: np.ndarray
    Q: np.ndarray

    @property
    def N(self) -> int:
        return int(self.n_i.sum())

    @classmethod
    def from_design(cls, X: np.ndarray, inst: np.ndarray, y: np.ndarray) -> "SuffStats":
        """Reduce data to sufficient statistics.

        Parameters
        ----------
        X : ndarray, shape (n, p)
        inst : ndarray of int, shape (n,)
            Instance index 0..I-1.
        y : ndarray, shape (..., n)
            One or a batch of datasets (log TPS, centred or not).
        """
        inst = np.asarray(inst)
        I = int(inst.max()) + 1
        n = X.shape[0]
        if I <= _DENSE_MAX_INSTANCES and I * n <= _DENSE_MAX_CELLS:
            # the (I, n) indicator matrix, as before (bit-identical sums for small designs)
            H = np.zeros((I, n))
            H[inst, np.arange(n)] = 1.0
            return cls(n_i=H.sum(1), x_i=H @ X, XtX=X.T @ X, Xty=y @ X, T_i=y @ H.T,
                       Q=np.sum(y * y, axis=-1))
        # O(n) per-instance sums (a dense indicator of 4,000 instances x 20,000 runs is 640 MB)
        y = np.asarray(y, float)
        n_i = np.bincount(inst, minlength=I).astype(float)
        x_i = np.stack([np.bincount(inst, weights=X[:, j], minlength=I)
                        for j in range(X.shape[1])], axis=1)
        flat = y.reshape(-1, n)
        T_i = np.stack([np.bincount(inst, weights=r, minlength=I) for r in flat])
        return cls(n_i=n_i, x_i=x_i, XtX=X.T @ X, Xty=y @ X, T_i=T_i.reshape(y.shape[:-1] + (I,)),
                   Q=np.sum(y * y, axis=-1))

    def instance_types(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Instances grouped by design type (runs per instance and per fixed effect).

        Returns
        -------
        count : ndarray, shape (K,)
            Instances of each type.
        n_k : ndarray, shape (K,)
            Runs per instance of the type.
        x_k : ndarray, shape (K, p)
            Column sums of X within one instance of the type.
        S1, S2 : ndarray, shape (..., K)
            Sums over the type's instances of T_i and of T_i**2.
        """
        key = np.concatenate([self.n_i[:, None], self.x_i], axis=1)
        u, inv = np.unique(key, axis=0, return_inverse=True)
        inv = inv.ravel()
        K = u.shape[0]
        count = np.bincount(inv, minlength=K).astype(float)
        T = np.asarray(self.T_i, float)
        flat = T.reshape(-1, T.shape[-1])
        S1 = np.stack([np.bincount(inv, weights=r, minlength=K) for r in flat])
        S2 = np.stack([np.bincount(inv, weights=r * r, minlength=K) for r in flat])
        shape = T.shape[:-1] + (K,)
        return count, u[:, 0], u[:, 1:], S1.reshape(shape), S2.reshape(shape)


def conditional_posterior(st: SuffStats, tau: np.ndarray, sigma: np.ndarray, m0: np.ndarray,
                          v0: np.ndarray):
    """Conditional posterior of the fixed effects and the marginal likelihood on a grid.

    Parameters
    ----------
    st : SuffStats
        Batch shape ``B`` (``()`` for one dataset).
    tau, sigma : ndarray, shape (G,)
        Grid of noise scales (log-TPS units).
    m0, v0 : ndarray, shape (p,)
        Prior means and variances of the fixed effects.

    Returns
    -------
    loglik : ndarray, shape B + (G,)
        log p(y | tau, sigma), fixed effects integrated out.
    mean : ndarray, shape B + (G, p)
        Conditional posterior means.
    cov : ndarray, shape (G, p, p)
        Conditional posterior covariance (data-independent given the design).
    """
    if st.n_i.size > _DENSE_MAX_INSTANCES:
        return _conditional_posterior_typed(st, tau, sigma, m0, v0)
    t2 = np.asarray(tau, float) ** 2
    s2 = np.asarray(sigma, float) ** 2
    n_i = st.n_i
    den = s2[:, None] + n_i[None, :] * t2[:, None]                  # (G, I)
    g = t2[:, None] / den                                            # (G, I)
    A = (st.XtX[None] - np.einsum("gi,ip,iq->gpq", g, st.x_i, st.x_i)) / s2[:, None, None]
    logdetS = ((n_i[None, :] - 1.0) * np.log(s2)[:, None] + np.log(den)).sum(-1)  # (G,)

    # data-dependent parts, batch B
    gT = np.einsum("gi,...i->...gi", g, st.T_i)                      # B+(G, I)
    b = (st.Xty[..., None, :] - np.einsum("...gi,ip->...gp", gT, st.x_i)) / s2[:, None]
    q = (st.Q[..., None] - np.einsum("...gi,...i->...g", gT, st.T_i)) / s2
    return _integrate_fixed(st, A, b, q, logdetS, m0, v0)


def conditional_posterior_sessions(ss: SessionStats, tau, sigma, omega, m0, v0):
    """:func:`conditional_posterior` with a session level nested in the instances.

    Parameters
    ----------
    ss : SessionStats
    tau, sigma, omega : ndarray, shape (G,)
        Instance, run and session SDs (log-TPS units), one triple per grid point.
    m0, v0 : ndarray, shape (p,), or None
        None: the Gaussian parts ``(A, b, q, logdetS)`` only
        (:func:`models.stats.tps_sessions.session_parts`).

    Returns
    -------
    loglik : ndarray, shape (G,)
    mean : ndarray, shape (G, p)
    cov : ndarray, shape (G, p, p)
    """
    parts = session_parts(ss, tau, sigma, omega)
    if m0 is None:  # the Gaussian parts only, for several fixed-effect priors
        return parts
    return _integrate_fixed(ss, *parts, m0, v0)


def _integrate_fixed(st: SuffStats, A, b, q, logdetS, m0, v0):
    """The Gaussian integral over the fixed effects shared by both grid-sum paths.

    With prior precision :math:`V_0^{-1}`, :math:`P = A + V_0^{-1}` (Cholesky per grid
    point), :math:`r = b + V_0^{-1} m_0`; returns ``(loglik, mean, Pinv)`` as
    :func:`conditional_posterior` documents. ``A``: (G, p, p); ``b``: B+(G, p); ``q``, B+(G,);
    ``logdetS``: (G,).
    """
    P = A + np.diag(1.0 / v0)[None]
    L = np.linalg.cholesky(P)                # (G, p, p); raises when P is not PD
    Pinv = np.linalg.inv(P)                  # as _integrate_fixed_many
    logdetP = 2.0 * np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1)   # (G,)
    r = b + (m0 / v0)
    mean = np.einsum("gpq,...gq->...gp", Pinv, r)
    quad = np.einsum("...gp,...gp->...g", r, mean)
    const = st.N * _LOG2PI + np.sum(np.log(v0)) + np.sum(m0 * m0 / v0)
    loglik = -0.5 * (const + logdetS + logdetP + q - quad)
    return loglik, mean, Pinv


def _integrate_fixed_many(N: int, A, b, q, logdetS, m0s, v0s):
    """:func:`_integrate_fixed` for K fixed-effect priors at once (one dataset).

    ``A`` (G, p, p), ``b`` (G, p), ``q`` and ``logdetS`` (G,); ``m0s``, ``v0s`` (K, p).
    Returns loglik (K, G), mean (K, G, p) and Pinv (K, G, p, p).
    """
    P = A[None] + np.einsum("kp,pq->kpq", 1.0 / v0s, np.eye(A.shape[-1]))[:, None]
    L = np.linalg.cholesky(P)                # (K, G, p, p); raises when P is not PD
    # P^-1 by LAPACK's batched inverse: one factorisation per matrix, where solve(L, I) then
    # L^-T L^-1 took a second pass (30 % of a cold fit's time, 7 x 7 systems at 21,600 points)
    Pinv = np.linalg.inv(P)
    logdetP = 2.0 * np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1)   # (K, G)
    r = b[None] + (m0s / v0s)[:, None, :]
    mean = np.einsum("kgpq,kgq->kgp", Pinv, r)
    quad = np.einsum("kgp,kgp->kg", r, mean)
    const = N * _LOG2PI + np.sum(np.log(v0s), -1) + np.sum(m0s * m0s / v0s, -1)   # (K,)
    loglik = -0.5 * (const[:, None] + logdetS[None] + logdetP + q[None] - quad)
    return loglik, mean, Pinv


def _conditional_posterior_typed(st: SuffStats, tau, sigma, m0, v0):
    """:func:`conditional_posterior` with the instances summed by type first.

    :math:`g_i` depends on an instance only through :math:`n_i`, so every sum over instances
    is a sum over the K design types (:meth:`SuffStats.instance_types`): cost O(G K p^2)
    instead of O(G I p^2), the same value up to rounding. Used above
    :data:`_DENSE_MAX_INSTANCES` instances (below it the per-instance sums run as they always
    did, so small designs give bit-identical results).
    """
    count, n_k, x_k, S1, S2 = st.instance_types()
    t2 = np.asarray(tau, float) ** 2
    s2 = np.asarray(sigma, float) ** 2
    den = s2[:, None] + n_k[None, :] * t2[:, None]                  # (G, K)
    g = t2[:, None] / den                                            # (G, K)
    A = (st.XtX[None] - np.einsum("gk,k,kp,kq->gpq", g, count, x_k, x_k)) / s2[:, None, None]
    logdetS = (count[None, :] * ((n_k[None, :] - 1.0) * np.log(s2)[:, None]
                                 + np.log(den))).sum(-1)
    b = (st.Xty[..., None, :] - np.einsum("gk,...k,kp->...gp", g, S1, x_k)) / s2[:, None]
    q = (st.Q[..., None] - np.einsum("gk,...k->...g", g, S2)) / s2
    return _integrate_fixed(st, A, b, q, logdetS, m0, v0)


#: Up to this many instances (and indicator cells, instances x runs) the sufficient statistics
#: and the grid sums run per instance, exactly as before (bit-identical verdicts); larger
#: designs take the O(n) / per-type path (issue 10: 20,000 runs on 4,000 instances).
_DENSE_MAX_INSTANCES = 256
_DENSE_MAX_CELLS = 1 << 22


def _grid_axes(lo_t, hi_t, lo_s, hi_s, n):
    t = np.exp(np.linspace(math.log(lo_t), math.log(hi_t), n))
    s = np.exp(np.linspace(math.log(lo_s), math.log(hi_s), n))
    T, S = np.meshgrid(t, s, indexing="ij")
    return t, s, T.ravel(), S.ravel()


def _log_weights(st, T, S, m0, v0, prior: NoisePrior):
    ll, mean, cov = conditional_posterior(st, T, S, m0, v0)
    lw = ll + prior.logpdf_joint(T, S) + np.log(T) + np.log(S)
    return lw, ll, mean, cov


def _normalise(lw):
    m = np.max(lw, axis=-1, keepdims=True)
    w = np.exp(lw - m)
    return w / w.sum(-1, keepdims=True)


def _mass_range(axis, marg, tail=1e-6):
    c = np.cumsum(marg)
    lo = np.searchsorted(c, tail)
    hi = np.searchsorted(c, 1.0 - tail)
    lo = max(lo - 1, 0)
    hi = min(hi + 1, axis.size - 1)
    return axis[lo], axis[hi]


@dataclass
class GridPosterior:
    """Posterior of the Normal hierarchical model on a (tau, sigma) grid.

    Attributes
    ----------
    tau, sigma : ndarray, shape (G,)
        Grid points (log-TPS units, i.e. relative SDs).
    w : ndarray, shape (G,)
        Normalised posterior weights.
    mean : ndarray, shape (G, p)
        Conditional posterior means of the fixed effects.
    cov : ndarray, shape (G, p, p)
        Conditional posterior covariances.
    names : list of str
        Fixed-effect names (configs, then ``cold`` if present).
    log_evidence : float
        log p(y) (up to the grid quadrature), for model comparison.
    edge_mass : float
        Posterior mass in the outermost upper grid cells beyond the prior's own mass there
        (should be ~0: the data push the noise scale towards the grid's end, a CV of 166 %).

    Satisfies :class:`models.stats.posterior.Posterior` (with a closed-form
    :meth:`delta_density`).
    """

    tau: np.ndarray
    sigma: np.ndarray
    w: np.ndarray
    mean: np.ndarray
    cov: np.ndarray
    names: list[str]
    log_evidence: float
    edge_mass: float
    n_grid: int
    stats: SuffStats | None = None
    centre: np.ndarray | None = None
    n_configs: int = 0
    #: Session SD of each grid point (relative) when sessions are modelled, else None.
    omega: np.ndarray | None = None
    #: :meth:`delta`'s summaries by (a, b, rope, hdi_prob): a verdict and its "to settle"
    #: advice read the same one (1.5 s each on the 532,607 points of a table with sessions
    #: and four cold groups). A posterior is not modified after its fit.
    _deltas: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def contrast(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mixture components of a linear contrast c @ beta: means and variances, shape (G,)."""
        c = np.asarray(c, float)
        return self.mean @ c, np.einsum("p,gpq,q->g", c, self.cov, c)

    def delta(self, a: int, b: int, rope: float, hdi_prob: float = 0.95) -> DeltaSummary:
        """Posterior of mu_b - mu_a (log scale) with ROPE readings.

        Parameters
        ----------
        a, b : int
            Fixed-effect indices of configs A and B.
        rope : float
            Half-width of the region of practical equivalence, log scale (>= 0).
        """
        key = (int(a), int(b), float(rope), float(hdi_prob))
        if key not in self._deltas:
            c = np.zeros(self.mean.shape[-1])
            c[b], c[a] = 1.0, -1.0
            m, v = self.contrast(c)
            self._deltas[key] = mixture_summary(self.w, m, v, rope, hdi_prob)
        return replace(self._deltas[key])   # a copy: the caller may change its own

    def level(self, k: int) -> float:
        """Posterior mean TPS level of config ``k``, :math:`\\exp E[\\mu_k]` (TPS).

        The exp of the posterior mean (the MCMC engine's E[exp mu] differs by a factor
        exp(var/2), under 1e-5 relative at any realistic posterior width).
        """
        return float(np.exp(np.sum(self.w * self.mean[:, k])))

    def delta_density(self, a: int, b: int, x: np.ndarray) -> np.ndarray:
        """Posterior density of mu_b - mu_a (log scale, per log unit) at points x, shape of x:
        the Normal mixture over the grid (:meth:`models.stats.posterior.Posterior.delta_density`)."""
        c = np.zeros(self.mean.shape[-1])
        c[b], c[a] = 1.0, -1.0
        m, v = self.contrast(c)
        x = np.asarray(x, float)
        sd, norm = np.sqrt(v), np.sqrt(2 * np.pi * v)
        if x.ndim == 1 and x.size > 2 and x.size * m.size >= _DENSITY_COMPILED_MIN:
            h = (x[-1] - x[0]) / (x.size - 1)
            if h > 0 and np.allclose(np.diff(x), h, rtol=1e-9, atol=0.0):  # a linspace
                from models.kernels.exact import density_grid

                out = np.empty(x.size)
                density_grid(np.ascontiguousarray(self.w, float), np.ascontiguousarray(m),
                             np.ascontiguousarray(sd), float(x[0]), float(h), x.size, out)
                return out
        flat = x.reshape(-1)
        out = np.empty(flat.shape)
        # a block of points at a time (each point's sum is the same either way): 200 points
        # of a 532,607-point posterior were 0.85 GB per temporary
        step = max(1, (1 << 20) // max(m.size, 1))
        for i in range(0, flat.size, step):
            z = (flat[i:i + step, None] - m) / sd
            out[i:i + step] = np.sum(self.w * np.exp(-0.5 * z * z) / norm, axis=-1)
        return out.reshape(x.shape)

    def scale_summary(self, which: str, hdi_prob: float = 0.95) -> dict:
        """Posterior mean, median and HDI of ``tau``, ``sigma`` or (when sessions are
        modelled) ``sigma_session`` (relative)."""
        x = {"tau": self.tau, "sigma": self.sigma, "sigma_session": self.omega}[which]
        if x is None:
            raise ValueError("no session term in this posterior")
        order = np.argsort(x)
        xs, ws = x[order], self.w[order]
        # collapse duplicates (grid is a product)
        ux, inv = np.unique(xs, return_inverse=True)
        uw = np.bincount(inv, weights=ws)
        # each grid value is the centre of its cell (on the log scale): the CDF reaches the
        # cumulative mass minus half the cell's own mass at the value itself
        cdf = np.cumsum(uw) - 0.5 * uw
        med = float(np.exp(np.interp(0.5, cdf, np.log(ux))))
        lo, hi = _hdi_from_discrete(ux, uw, hdi_prob)
        return {"mean": float(np.sum(self.w * x)), "median": med, "hdi_low": lo, "hdi_high": hi}

    def predictive(self, k: int, new_instance: bool = True,
                   instance: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Mixture components (means, variances), shape (G,), of the next warm run's log TPS.

        Parameters
        ----------
        k : int
            Config (fixed-effect) index.
        new_instance : bool
            A run on a fresh instance (adds tau^2).
        instance : int, optional
            Predict on this already-seen instance instead: its effect is conditioned on the
            runs it holds, u_i | y, beta ~ N(g_i (T_i - x_i^T beta), sigma^2 g_i).
        """
        om2 = 0.0 if self.omega is None else self.omega**2
        if instance is None or self.omega is not None:
            # with sessions modelled a next run is in a new session (adds omega^2); on a seen
            # instance its effect is not conditioned on (wider, never narrower, than exact)
            m = self.mean[:, k]
            v = (self.cov[:, k, k] + self.sigma**2 + om2
                 + (self.tau**2 if new_instance or instance is not None else 0.0))
            return m, v
        st = self.stats
        t2, s2 = self.tau**2, self.sigma**2
        g = t2 / (s2 + st.n_i[instance] * t2)                       # (G,)
        e = np.zeros(self.mean.shape[-1])
        e[k] = 1.0
        c = e[None, :] - g[:, None] * st.x_i[instance][None, :]     # (G, p)
        beta_c = self.mean.copy()
        beta_c[:, : self.n_configs] -= self.centre
        m = np.einsum("gp,gp->g", c, beta_c) + g * st.T_i[instance] + self.centre[k]
        v = np.einsum("gp,gpq,gq->g", c, self.cov, c) + s2 * g + s2
        return m, v


#: Points x components from which :meth:`GridPosterior.delta_density` on a uniform grid sums
#: by :func:`models.kernels.exact.density_grid` (numba; ~1e-13 of the direct sum): the
#: verdict's 200-point curve of a 532,607-point posterior took 1.4 s of exp, the kernel
#: 0.1-0.3 s; a plain table's (~1e4 points) stays in NumPy and imports no numba.
_DENSITY_COMPILED_MIN = 1 << 22


#: Coarse noise grid: the first 36 points are the former 1e-5..0.3 grid (so fits whose mass lies
#: below 0.3 are unchanged); 4 more steps of the same size reach ~0.98, so stated CVs up to 50 %
#: and more keep their mass inside the grid (issue 8).
_OLD = np.exp(np.linspace(math.log(1e-5), math.log(0.3), 36))
_STEP = math.log(0.3 / 1e-5) / 35
_COARSE = np.concatenate([_OLD, 0.3 * np.exp(_STEP * np.arange(1, 5))])
_GRID_HI = float(_COARSE[-1])


def _two_pass(loglik_fn, prior: NoisePrior, n_grid: int):
    """Coarse grid over 1e-5.._GRID_HI (~0.98 log-SD, a CV of 166 %) to find the mass, then a
    fine n_grid x n_grid grid on it.

    ``loglik_fn(T, S)`` returns (loglik (G,), extras...) for flattened grids T, S.
    Returns (T, S, w, log_evidence, edge_mass, extras).
    """
    t = s = _COARSE
    T, S = (g.ravel() for g in np.meshgrid(t, s, indexing="ij"))
    ll, *_ = loglik_fn(T, S)
    lw = ll + prior.logpdf_joint(T, S) + np.log(T) + np.log(S)
    w = _normalise(lw).reshape(t.size, s.size)
    lt, ht = _mass_range(t, w.sum(1))
    ls, hs = _mass_range(s, w.sum(0))
    t, s, T, S = _grid_axes(lt, ht, ls, hs, n_grid)
    ll, *extras = loglik_fn(T, S)
    lw = ll + prior.logpdf_joint(T, S) + np.log(T) + np.log(S)
    w = _normalise(lw)
    mx = np.max(lw)
    dlog = (math.log(ht / lt) / (n_grid - 1)) * (math.log(hs / ls) / (n_grid - 1))
    log_ev = float(mx + math.log(np.sum(np.exp(lw - mx)) * dlog))
    # Edge check: the posterior mass in the outermost upper cells of the grid *beyond what the
    # prior alone puts there*. A scale the data leave unidentified (tau with one instance) follows
    # its prior to the end of the grid; that is the prior's tail (cut at _GRID_HI, a CV of
    # 166 %), not a misfit. Only mass the likelihood pushes to the edge is reported.
    lp = prior.logpdf_joint(T, S) + np.log(T) + np.log(S)
    edge = _edge_mass(w.reshape(n_grid, n_grid), ht, hs) - _edge_mass(
        _normalise(lp).reshape(n_grid, n_grid), ht, hs)
    return T, S, w, log_ev, max(edge, 0.0), extras


def _edge_mass(wg: np.ndarray, ht: float, hs: float) -> float:
    """Mass of the (n, n) grid weights ``wg`` in its last row / column, counted only where the
    grid reaches the coarse grid's upper end (``_GRID_HI``)."""
    return float(wg[-1, :].sum() * (ht >= _GRID_HI * 0.999)
                 + wg[:, -1].sum() * (hs >= _GRID_HI * 0.999))


def _two_pass_cold(st, m0c, v0, data: TPSData, prior: NoisePrior, n_grid: int):
    """:func:`_two_pass` with one cold slowdown per cold group (:mod:`models.stats.tps_cold`):
    a mixture over grid points x the groups' component combinations, the Gaussian parts
    computed once per grid point.

    Returns
    -------
    T, S, w : ndarray, shape (G M,)
    log_ev, edge : float
    mean (G M, p), cov (G M, p, p)
    info : dict
        How the combinations were chosen (:func:`models.stats.tps_cold.cold_mixture`).
    """
    def many(T, S, m0s, v0s):
        return _integrate_fixed_many(st.N, *tps_cold.gauss_parts(st, T, S), m0s, v0s)

    lwc, m0s, v0s, info = tps_cold.cold_mixture(many, _COARSE, m0c, v0, data)
    T, S, w, log_ev, edge, (resp, mean, cov) = _two_pass(
        tps_cold.mixture_loglik(many, lwc, m0s, v0s), prior, n_grid)
    T, S, w, mean, cov = tps_cold.split_points(T, S, w, resp, mean, cov)
    return T, S, w, log_ev, edge, mean, cov, info


def _two_pass_sessions(ss, m0c, v0, data: TPSData, prior: NoisePrior, n_grid: int):
    """:func:`_two_pass` with the session SD integrated over :func:`session_nodes` (and, with
    cold runs, the cold groups' component combinations, :mod:`models.stats.tps_cold`): a
    mixture over grid points x components, as :func:`_two_pass_cold`, without the lightest
    points holding :data:`_SESSION_DROP_MASS` of the mass (:func:`_lightest_dropped`).

    Both passes compute the marginal likelihoods only (:func:`_loglik_many`); the means and
    covariances are computed afterwards for the points kept (:func:`_moments_at`; a third of
    the 60 x 60 x 12 x 36 points of four cold sessions): the same numbers as integrating
    every point and dropping afterwards, up to rounding.

    Returns
    -------
    T, S, Om : ndarray, shape (n,)
        Instance, run and session SDs of each point kept.
    w (n,), log_ev, edge, mean (n, p), cov (n, p, p)
    """
    nodes, lwn = session_nodes()
    if data.use_cold:   # the cold groups' component combinations (models.stats.tps_cold)
        def many(T, S, m0s, v0s):
            parts = conditional_posterior_sessions(ss, T, S, np.full(T.shape, nodes[
                nodes.size // 2]), None, None)
            return (_loglik_many(ss.N, *parts, m0s, v0s),)
        lwc, m0s, v0s, _ = tps_cold.cold_mixture(many, _COARSE, m0c, v0, data)
    else:
        lwc, m0s, v0s = np.zeros(1), m0c[None, :], v0[None, :]
    parts = {}

    def ll(T, S):
        lls, lwn_s = [], prior.session_logw(nodes, lwn, S)                    # (n, G)
        parts["A"], parts["b"] = [], []
        for j, om in enumerate(nodes):  # the Gaussian parts depend on omega, not on the cold prior
            A, b, q, logdetS = conditional_posterior_sessions(ss, T, S, np.full(T.shape, om),
                                                              None, None)
            lls.append(_loglik_many(ss.N, A, b, q, logdetS, m0s, v0s) + lwc[:, None]
                       + lwn_s[j][None, :])                                 # (Kc, G)
            parts["A"].append(A)
            parts["b"].append(b)
        lk = np.concatenate(lls, axis=0).T                            # (G, K)
        tot = special.logsumexp(lk, axis=-1)
        return tot, lk - tot[:, None]

    T, S, w, log_ev, edge, (resp,) = _two_pass(ll, prior, n_grid)
    Kc = lwc.size
    K = nodes.size * Kc
    wk = (w[:, None] * np.exp(resp)).ravel()
    wk = wk / wk.sum()
    keep = _lightest_dropped(wk, _SESSION_DROP_MASS)
    g, c = np.divmod(keep, K)
    j, k = np.divmod(c, Kc)
    # the fine pass's Gaussian parts, node after node: point g of node j is row j G + g
    mean, cov = _moments_at(np.concatenate(parts["A"]), np.concatenate(parts["b"]), m0s, v0s,
                            j * T.size + g, k)
    return T[g], S[g], nodes[j], wk[keep] / wk[keep].sum(), log_ev, edge, mean, cov


def _loglik_many(N: int, A, b, q, logdetS, m0s, v0s) -> np.ndarray:
    """The marginal likelihoods of :func:`_integrate_fixed_many`, shape (K, G), without its
    means and covariances: one Cholesky factor and one triangular solve per (prior, point)
    (:func:`models.kernels.exact.fixed_loglik`; numba, compiled on first use).

    Raises
    ------
    numpy.linalg.LinAlgError
        Some P = A + V0^-1 is not positive definite (as ``np.linalg.cholesky``).
    """
    from models.kernels.exact import fixed_loglik

    m0s, v0s = np.asarray(m0s, float), np.asarray(v0s, float)
    const = N * _LOG2PI + np.sum(np.log(v0s), -1) + np.sum(m0s * m0s / v0s, -1)   # (K,)
    out = np.empty((m0s.shape[0], b.shape[0]))
    if not fixed_loglik(np.ascontiguousarray(A, float), np.ascontiguousarray(b, float),
                        np.ascontiguousarray(q, float), np.ascontiguousarray(logdetS, float),
                        np.ascontiguousarray(1.0 / v0s), np.ascontiguousarray(m0s / v0s),
                        const, out):
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    return out


def _moments_at(A, b, m0s, v0s, gi, ki) -> tuple[np.ndarray, np.ndarray]:
    """Conditional posterior means (n, p) and covariances (n, p, p) of the fixed effects at
    rows ``gi`` (n,) of the Gaussian parts ``A`` (G, p, p), ``b`` (G, p) under priors ``ki``
    (n,) of ``m0s``, ``v0s`` (K, p): :func:`_integrate_fixed_many`'s ``mean`` and ``Pinv`` of
    those pairs only (:func:`models.kernels.exact.fixed_moments`).

    Raises
    ------
    numpy.linalg.LinAlgError
        As :func:`_loglik_many`.
    """
    from models.kernels.exact import fixed_moments

    n, p = np.asarray(gi).size, b.shape[-1]
    mean, cov = np.empty((n, p)), np.empty((n, p, p))
    m0s, v0s = np.asarray(m0s, float), np.asarray(v0s, float)
    if not fixed_moments(np.ascontiguousarray(A, float), np.ascontiguousarray(b, float),
                         np.ascontiguousarray(1.0 / v0s), np.ascontiguousarray(m0s / v0s),
                         np.ascontiguousarray(gi, np.int64), np.ascontiguousarray(ki, np.int64),
                         mean, cov):
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    return mean, cov


#: Posterior mass of the lightest grid x cold-component points dropped from a cold fit.
_COLD_DROP_MASS = 1e-7
#: The same for a fit with sessions (grid x session-SD node x cold component): 1e-4, so every
#: probability moves by < 1e-4, under half the last digit a verdict prints (0.001). The 12-node
#: session quadrature is itself good to ~1e-3 of the HDI's width (64 nodes moved the HDI ends by
#: up to 0.002 points, docs/model.md), so the cut costs nothing that matters while cutting the
#: points kept to less than a third (SESSIONS of bench/bench_process.py: 532,584 at 1e-7,
#: 265,138 at 1e-5, 161,250 at 1e-4; its probabilities moved by 1.4e-5, its HDI ends by 6e-5
#: percentage points) and with them the work of every summary after the fit (the fixed
#: effects' moments, the Δ mixture's HDI and density, the settle screen): 5.2 -> 4.3 -> 3.8 s
#: CPU for that verdict (with the settle screen's own cut, planner.decide.settle).
_SESSION_DROP_MASS = 1e-4


def _lightest_dropped(w: np.ndarray, mass: float) -> np.ndarray:
    """Indices (ascending) of the heaviest weights that hold all but ``mass`` of ``w``.

    The heaviest first (ties: the later index first) until their running sum reaches
    ``(1 - mass)`` of the total, that point included. Only the weights of the binary order of
    magnitude where the sum crosses it are sorted (the heavier ones are all kept, the
    lighter all dropped): sorting all 1.55 million points of a fit with sessions and four
    cold groups took 0.3 s. The same points as sorting everything, unless a weight lies
    within rounding (~1e-16 of the total) of the cut.
    """
    w = np.asarray(w, float)
    _, e = np.frexp(w)
    pos = w > 0
    if not pos.all():   # zero weights are the lightest
        e = np.where(pos, e, (e[pos].min() if pos.any() else 0) - 1)
    E = e.max() - e                                                  # 0: the heaviest bin
    cum = np.cumsum(np.bincount(E, weights=w))
    target = (1.0 - mass) * cum[-1]
    b = min(int(np.searchsorted(cum, target)), cum.size - 1)
    inside = np.flatnonzero(E == b)
    order = inside[np.argsort(w[inside], kind="stable")[::-1]]
    c = (cum[b - 1] if b > 0 else 0.0) + np.cumsum(w[order])
    n = int(np.searchsorted(c, target)) + 1
    return np.sort(np.concatenate([np.flatnonzero(E < b), order[:n]]))


def fit_exact(data: TPSData, prior: NoisePrior, *, n_grid: int = 60) -> GridPosterior:
    """Fit the Normal hierarchical model exactly (grid over the two noise scales).

    Parameters
    ----------
    data : TPSData
    prior : NoisePrior
        Priors on tau (between instances) and sigma (run to run), relative scales.
    n_grid : int
        Points per axis of the fine grid (G = n_grid**2).

    Returns
    -------
    GridPosterior

    Notes
    -----
    Cost: two passes of G small p x p Cholesky factorisations (p = configs + cold);
    milliseconds for a two-config verdict.
    """
    X = data.design_matrix()
    m0, sd0 = data.prior_mean_sd()
    # centre each config on its own mean: the sufficient statistics then hold residuals, so
    # q - r'P^-1 r does not cancel catastrophically when configs are far apart and sigma is
    # tiny (configs 5x apart with sigma 0.01 % collapsed sigma onto the grid floor before)
    centre = np.array([float(np.mean(data.y[data.config == k])) for k in range(data.n_configs)])
    st = SuffStats.from_design(X, data.instance, data.y - centre[data.config])
    m0c = m0.copy()
    m0c[: data.n_configs] -= centre
    v0 = sd0**2
    omega, cold_info = None, None
    if has_sessions(data):
        ss = SessionStats.from_design(X, data.instance, data.session, data.y - centre[data.config])
        T, S, omega, w, log_ev, edge, mean, cov = _two_pass_sessions(ss, m0c, v0, data, prior,
                                                                    n_grid)
    elif data.use_cold:
        T, S, w, log_ev, edge, mean, cov, cold_info = _two_pass_cold(st, m0c, v0, data, prior,
                                                                     n_grid)
        # the cold combinations multiply the grid (60 x 60 x M points); drop the lightest
        # points holding 1e-7 of the mass (every probability moves by < 1e-7)
        keep = _lightest_dropped(w, _COLD_DROP_MASS)
        T, S, w, mean, cov = T[keep], S[keep], w[keep] / w[keep].sum(), mean[keep], cov[keep]
    else:
        T, S, w, log_ev, edge, (mean, cov) = _two_pass(
            lambda T, S: conditional_posterior(st, T, S, m0c, v0), prior, n_grid)
    mean = mean.copy()
    mean[:, : data.n_configs] += centre
    names = list(data.config_names) + tps_cold.cold_names(data)
    post = GridPosterior(T, S, w, mean, cov, names, log_ev, edge, n_grid, st, centre,
                         data.n_configs, omega)
    post.cold_info = cold_info if data.use_cold and omega is None else None
    return post


def noise_posterior(datasets: list[TPSData], prior: NoisePrior, *, n_grid: int = 60):
    """Posterior of the shared noise scales (tau, sigma) from independent groups of runs.

    Each dataset has its own config means (fixed effects, integrated out under the weak
    N(mean, 0.1^2) prior); all share tau and sigma. Log-likelihoods add across datasets.

    Parameters
    ----------
    datasets : list of TPSData
        Independent components (no instance shared between two of them).
    prior : NoisePrior

    Returns
    -------
    tau, sigma, w : ndarray, shape (G,)
        Grid points and posterior weights.
    edge_mass : float
    """
    prepared = []
    for d in datasets:
        X = d.design_matrix()
        m0, sd0 = d.prior_mean_sd()
        c = np.array([float(np.mean(d.y[d.config == k])) for k in range(d.n_configs)])
        m0 = m0.copy()
        m0[: d.n_configs] -= c
        prepared.append((SuffStats.from_design(X, d.instance, d.y - c[d.config]), m0, sd0**2))

    def ll(T, S):
        tot = np.zeros(T.size)
        for st, m0, v0 in prepared:
            tot += conditional_posterior(st, T, S, m0, v0)[0]
        return (tot,)

    T, S, w, _, edge, _ = _two_pass(ll, prior, n_grid)
    return T, S, w, edge
