r"""The session level of the exact engine (:mod:`models.stats.tps_exact`, "Sessions").

When the runs name server sessions and some instance holds two or more of them
(:func:`has_sessions`), a session offset :math:`w_s \sim N(0, \omega^2)` is added within
each instance; this module holds its prior's quadrature (:func:`session_nodes`), the
per-session sufficient statistics (:class:`SessionStats`) and the Gaussian parts of the
conditional posterior (:func:`session_parts`; the formulas are in
:mod:`models.stats.tps_exact`'s docstring). :mod:`models.stats.tps_exact` integrates them
and re-exports these names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from models.stats import special
from models.stats.tps_model import TPSData

__all__ = ["SESSION_NODE_LO", "SESSION_NODE_HI", "SESSION_NODES", "SESSION_PRIOR_SD", "SessionStats",
           "has_sessions", "session_nodes", "session_parts"]


#: Half-normal scale of the session-to-session SD (relative; 0.5 % of TPS), as the MCMC
#: engine's ``sigma_session`` prior (:data:`models.stats.tps_mcmc.SESSION_PRIOR_SD`; the
#: measured session-to-session SD on one local A10G was 0.11 %, 0.90 % with cold-start
#: contaminated sessions, ``examples/runs/tps_runs.md``).
SESSION_PRIOR_SD = 0.005
#: Log-spaced nodes of the session-SD quadrature (a mixture component each), from
#: ``SESSION_NODE_LO * SESSION_PRIOR_SD`` (0.015 %: below it an offset is lost in any run
#: noise) to 5 x the prior scale. On simulated two-machine tables (bench/bench_sessions.py)
#: 12 nodes put the 95 % HDI ends within 0.002 percentage points of 64 nodes.
SESSION_NODES = 20
SESSION_NODE_LO = 0.03
#: Top node of the session-SD quadrature: 97 %, the top of the (tau, sigma) grid
#: (``models.stats.tps_exact``'s ``_GRID_HI``). The population prior's session SD scales
#: with the run noise (``NoisePrior.session_logw``): stopping at 5 x SESSION_PRIOR_SD (2.5 %)
#: cut it off on noisy platforms (a 4 % run CV wants session SDs about 5 %), so a gap the
#: sessions could explain was read as the configs' (a withdrawn llama.cpp claim, 5 runs per
#: arm at 2.5-6.5 % spread, was called "A better"). 20 nodes keep the spacing of the 12
#: that stopped at 2.5 % (0.46 in log).
SESSION_NODE_HI = 0.97


def has_sessions(data: TPSData) -> bool:
    """True when ``data.session`` puts two or more sessions on one instance (the session
    offset is then separable from the instance effect and modelled)."""
    if data.session is None:
        return False
    pairs = set(zip(data.instance.tolist(), data.session.tolist()))
    return len(pairs) > data.n_instances


def session_nodes(n: int = SESSION_NODES, scale: float = SESSION_PRIOR_SD
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature of the HalfNormal(``scale``) session-SD prior: log-spaced nodes.

    Nodes from ``SESSION_NODE_LO * scale`` to :data:`SESSION_NODE_HI` (the half-normal's
    mass beyond 5 scale is 6e-7; the population prior's ratio to sigma reaches further),
    weights the half-normal density times the log-grid Jacobian, normalised: the same rule
    as the (tau, sigma) grid; the mass below the first node is folded into it.

    Returns
    -------
    nodes : ndarray, shape (n,)
        Session SDs (relative, log-TPS).
    log_w : ndarray, shape (n,)
        Log weights (they sum to 1).
    """
    x = np.exp(np.linspace(math.log(scale * SESSION_NODE_LO), math.log(SESSION_NODE_HI), n))
    lw = -0.5 * (x / scale) ** 2 + np.log(x)
    lw -= special.logsumexp(lw)
    return x, lw


@dataclass
class SessionStats:
    """Sufficient statistics with sessions nested in instances.

    Attributes
    ----------
    n_s : ndarray, shape (S,)
        Runs per session.
    x_s : ndarray, shape (S, p)
        Column sums of X within each session.
    T_s : ndarray, shape (S,)
        Sum of y within each session.
    inst_of : ndarray of int, shape (S,)
        Instance of each session.
    n_inst : int
    XtX, Xty, Q : as :class:`SuffStats`.
    H : ndarray, shape (I, S)
        Session-in-instance indicator (built once; every grid pass sums through it).
    """

    n_s: np.ndarray
    x_s: np.ndarray
    T_s: np.ndarray
    inst_of: np.ndarray
    n_inst: int
    XtX: np.ndarray
    Xty: np.ndarray
    Q: float

    def __post_init__(self):
        self.H = np.zeros((self.n_inst, self.n_s.size))
        self.H[self.inst_of, np.arange(self.n_s.size)] = 1.0

    @property
    def N(self) -> int:
        return int(self.n_s.sum())

    @classmethod
    def from_design(cls, X, inst, sess, y) -> "SessionStats":
        """Reduce one dataset (``y`` shape (n,)) to per-session sums; a session is an
        (instance, session) pair."""
        inst = np.asarray(inst)
        pairs = list(dict.fromkeys(zip(inst.tolist(), np.asarray(sess).tolist())))
        pmap = {pr: k for k, pr in enumerate(pairs)}
        sid = np.array([pmap[pr] for pr in zip(inst.tolist(), np.asarray(sess).tolist())])
        S = len(pairs)
        n_s = np.bincount(sid, minlength=S).astype(float)
        x_s = np.stack([np.bincount(sid, weights=X[:, j], minlength=S)
                        for j in range(X.shape[1])], axis=1)
        T_s = np.bincount(sid, weights=y, minlength=S)
        inst_of = np.array([pr[0] for pr in pairs])
        return cls(n_s, x_s, T_s, inst_of, int(inst.max()) + 1, X.T @ X, y @ X,
                   float(np.sum(y * y)))


def session_parts(ss: SessionStats, tau, sigma, omega):
    """The Gaussian parts of the conditional posterior with a session level nested in the
    instances, before the fixed-effect prior (integrated by
    :func:`models.stats.tps_exact.conditional_posterior_sessions`).

    Parameters
    ----------
    ss : SessionStats
    tau, sigma, omega : ndarray, shape (G,)
        Instance, run and session SDs (log-TPS units), one triple per grid point.

    Returns
    -------
    A : ndarray, shape (G, p, p)
    b : ndarray, shape (G, p)
    q, logdetS : ndarray, shape (G,)
    """
    t2 = np.asarray(tau, float) ** 2
    s2 = np.asarray(sigma, float) ** 2
    o2 = np.broadcast_to(np.asarray(omega, float) ** 2, t2.shape)
    n_s = ss.n_s
    den = s2[:, None] + n_s[None, :] * o2[:, None]                   # (G, S)
    c = 1.0 / den
    h = o2[:, None] * c
    H = ss.H                                                         # (I, S)
    S_i = (c * n_s[None, :]) @ H.T                                   # (G, I)
    k = t2[:, None] / (1.0 + t2[:, None] * S_i)                      # (G, I)
    u = np.einsum("gs,sp,is->gip", c, ss.x_s, H)                     # (G, I, p)
    v = (c * ss.T_s[None, :]) @ H.T                                  # (G, I)
    A = ((ss.XtX[None] - np.einsum("gs,sp,sq->gpq", h, ss.x_s, ss.x_s)) / s2[:, None, None]
         - np.einsum("gi,gip,giq->gpq", k, u, u))
    b = ((ss.Xty[None, :] - np.einsum("gs,sp->gp", h * ss.T_s[None, :], ss.x_s)) / s2[:, None]
         - np.einsum("gi,gip->gp", k * v, u))
    q = (ss.Q - np.sum(h * ss.T_s[None, :] ** 2, axis=1)) / s2 - np.sum(k * v * v, axis=1)
    logdetS = (((n_s[None, :] - 1.0) * np.log(s2)[:, None] + np.log(den)).sum(-1)
               + np.log1p(t2[:, None] * S_i).sum(-1))
    return A, b, q, logdetS
