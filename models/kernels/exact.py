r"""Kernels of the exact engine's session path (:mod:`models.stats.tps_exact`).

With sessions modelled the exact fit integrates the fixed effects once per grid point x
session-SD node x cold-component combination: about 2.3 million Gaussian integrals of
dimension p = configs + cold groups (p = 6 for two configs in four cold sessions). Each is
tiny, so NumPy's batched ``cholesky`` / ``solve`` on (..., p, p) stacks spend their time on
per-matrix overhead and on (K, G, p, p) temporaries; these loops do the same algebra one
matrix at a time:

* :func:`fixed_loglik`: for every prior k and point g, the Cholesky factor L of
  :math:`P = A_g + \mathrm{diag}(1/v_{0k})`, :math:`z = L^{-1} r` with
  :math:`r = b_g + m_{0k}/v_{0k}`, and
  :math:`\log p = -\tfrac12[c_k + \log|\Sigma|_g + 2\sum\log L_{ii} + q_g - z^Tz]`
  (:math:`r^TP^{-1}r = z^Tz`): no inverse, no mean, which the grid weights do not need;
* :func:`fixed_moments`: :math:`P^{-1} = L^{-T}L^{-1}` and the mean :math:`P^{-1}r` of
  the listed (point, prior) pairs only (the ones a fit keeps).

Values equal NumPy's (LAPACK's) to rounding (~1e-15 relative), not bit for bit.
Importing this module does not import numba (:mod:`models.kernels._jit`).
"""

from __future__ import annotations

import math

import numpy as np

from models.kernels._jit import KernelGroup

__all__ = ["density_grid", "fixed_loglik", "fixed_moments"]


def _py_chol(A, g, iv, k, L, dinv):  # pragma: no cover - numba
    """Cholesky factor of ``A[g] + diag(iv[k])`` into the lower triangle of ``L`` and the
    reciprocals of its diagonal into ``dinv``; returns the product of the diagonal, or 0.0
    when a pivot is not positive (not positive definite, or NaN)."""
    p = L.shape[0]
    prod = 1.0
    for i in range(p):
        for j in range(i):
            s = A[g, i, j]
            for m in range(j):
                s -= L[i, m] * L[j, m]
            L[i, j] = s * dinv[j]
        s = A[g, i, i] + iv[k, i]
        for m in range(i):
            s -= L[i, m] * L[i, m]
        if not s > 0.0:
            return 0.0
        d = math.sqrt(s)
        L[i, i] = d
        dinv[i] = 1.0 / d
        prod *= d
    return prod


def _py_fixed_loglik(A, b, q, logdetS, iv, r0, const, out):  # pragma: no cover - numba
    r"""``out[k, g]`` = log p(y | point g) under fixed-effect prior k (the module docstring).

    Parameters
    ----------
    A : (G, p, p); b : (G, p); q, logdetS : (G,)
        The Gaussian parts of each grid point.
    iv, r0 : (K, p)
        Prior precisions :math:`1/v_0` and :math:`m_0/v_0` of the fixed effects.
    const : (K,)
        :math:`N\log 2\pi + \sum\log v_0 + \sum m_0^2/v_0` of each prior.
    out : (K, G)

    Returns True, or False when some P was not positive definite (``out`` is then
    incomplete). :math:`\log|P|` is the log of the product of the factor's diagonal (one log
    per matrix; the product of p <= 18 pivots of 1e-3 .. 1e6 stays far inside the range
    of a double).
    """
    G, p = b.shape
    K = iv.shape[0]
    L = np.zeros((p, p))
    dinv = np.zeros(p)
    z = np.zeros(p)
    for k in range(K):
        for g in range(G):
            prod = _chol(A, g, iv, k, L, dinv)
            if prod == 0.0:
                return False
            quad = 0.0
            for i in range(p):
                s = b[g, i] + r0[k, i]
                for m in range(i):
                    s -= L[i, m] * z[m]
                z[i] = s * dinv[i]
                quad += z[i] * z[i]
            out[k, g] = -0.5 * (const[k] + logdetS[g] + 2.0 * math.log(prod) + q[g] - quad)
    return True


def _py_fixed_moments(A, b, iv, r0, gi, ki, mean, cov):  # pragma: no cover - numba
    """Posterior mean ``mean[n]`` (p,) and covariance ``cov[n]`` (p, p) of the fixed effects
    at point ``gi[n]`` under prior ``ki[n]``: :math:`P^{-1}r` and :math:`P^{-1} =
    L^{-T}L^{-1}`. Arguments as :func:`_py_fixed_loglik`; ``gi``, ``ki`` (n,) int64.
    Returns False when some P was not positive definite."""
    p = b.shape[1]
    L = np.zeros((p, p))
    Li = np.zeros((p, p))
    dinv = np.zeros(p)
    r = np.zeros(p)
    for n in range(gi.shape[0]):
        g, k = gi[n], ki[n]
        if _chol(A, g, iv, k, L, dinv) == 0.0:
            return False
        for c in range(p):      # L^-1, column by column (lower triangular)
            Li[c, c] = dinv[c]
            for i in range(c + 1, p):
                s = 0.0
                for m in range(c, i):
                    s -= L[i, m] * Li[m, c]
                Li[i, c] = s * dinv[i]
        for i in range(p):
            r[i] = b[g, i] + r0[k, i]
        for i in range(p):
            for j in range(i + 1):
                s = 0.0
                for m in range(i, p):   # Li[m, i] = 0 for m < i
                    s += Li[m, i] * Li[m, j]
                cov[n, i, j] = s
                cov[n, j, i] = s
        for i in range(p):
            s = 0.0
            for j in range(p):
                s += cov[n, i, j] * r[j]
            mean[n, i] = s
    return True


_GROUP = KernelGroup(globals(), callees={"_chol": (_py_chol, {"nogil": True})})
_chol = _py_chol  # rebound to the compiled callee before the kernels are compiled
#: :func:`_py_fixed_loglik` compiled by numba on its first call.
fixed_loglik = _GROUP.kernel(_py_fixed_loglik, nogil=True, sig=(
    "f8[:,:,::1]", "f8[:,::1]", "f8[::1]", "f8[::1]", "f8[:,::1]", "f8[:,::1]", "f8[::1]",
    "f8[:,::1]"))
#: :func:`_py_fixed_moments` compiled by numba on its first call.
fixed_moments = _GROUP.kernel(_py_fixed_moments, nogil=True, sig=(
    "f8[:,:,::1]", "f8[:,::1]", "f8[:,::1]", "f8[:,::1]", "i8[::1]", "i8[::1]",
    "f8[:,::1]", "f8[:,:,::1]"))


#: Steps walked from a directly computed point before the next one is computed directly
#: again (:func:`_py_density_grid`): bounds the recurrence's rounding to ~64^2/2 ulp.
_WALK = 64


def _py_density_grid(w, m, sd, x0, h, n, out):  # pragma: no cover - numba
    r"""``out[i] = sum_k w[k] N(x0 + i h; m[k], sd[k]^2)`` for i < n (``out`` zeroed here).

    The Normal mixture's density on a uniform grid without an ``exp`` per (point,
    component): from the grid point nearest a component's mean, outwards both ways,
    :math:`e_{i\pm1} = e_i\rho_i`, :math:`\rho_{i\pm1} = \rho_i\kappa` with
    :math:`e_i = \exp(-z_i^2/2)`, :math:`\rho_i = \exp(\mp z_i\delta - \delta^2/2)`,
    :math:`\kappa = \exp(-\delta^2)`, :math:`\delta = h/\mathrm{sd}`; :math:`e` and
    :math:`\rho` are computed directly again every :data:`_WALK` steps. Walking away from
    the mean every factor is below 1 (no overflow) and a walk stops once its terms are
    below 1e-300 of the component's peak. Within ~1e-13 relative of the direct sum.
    """
    c = 1.0 / math.sqrt(2.0 * math.pi)
    for i in range(n):
        out[i] = 0.0
    for k in range(m.shape[0]):
        isd = 1.0 / sd[k]
        peak = w[k] * isd * c
        d = h * isd
        kap = math.exp(-d * d)
        a = int(round((m[k] - x0) / h))
        a = min(max(a, 0), n - 1)
        for sgn in (1, -1):
            i = a if sgn == 1 else a - 1
            step = 0
            e = 0.0
            rho = 0.0
            while 0 <= i < n:
                if step % _WALK == 0:
                    z = (x0 + i * h - m[k]) * isd
                    e = math.exp(-0.5 * z * z)
                    rho = math.exp(-sgn * z * d - 0.5 * d * d)
                if e < 1e-300:
                    break
                out[i] += peak * e
                e *= rho
                rho *= kap
                i += sgn
                step += 1


#: :func:`_py_density_grid` compiled by numba on its first call.
density_grid = _GROUP.kernel(_py_density_grid, nogil=True, sig=(
    "f8[::1]", "f8[::1]", "f8[::1]", "f8", "f8", "i8", "f8[::1]"))
