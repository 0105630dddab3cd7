r"""Kernels of the assurance simulations: decision labels of Normal-mixture posteriors.

Private module: the public, documented interface is :func:`models.stats.assurance.decide` and
:func:`models.stats.assurance.decide_analysis_levels`. The kernels label, for a batch of D
datasets, the posterior of Δ given as a mixture of Normals over the analysis grid,

.. math::

    p(\Delta \mid y) = \sum_g w_g\, \mathcal N(\Delta;\, m_g, s_g^2),
    \qquad w_g \propto e^{\ell_g},

with the rule of :mod:`models.stats.decision` (codes 0 undecided, 1 B better, 2 A better,
3 equivalent; rule code 0 = the HDI rules ``verdict`` / ``equivalence``, 1 = ``superiority``).
Components with :math:`\ell_g < \max \ell - \text{cut}` are dropped.

**HDI labels from CDF values.** For a unimodal density :math:`f` with CDF :math:`F` and
quantile :math:`Q`, the shortest interval of mass :math:`h` is
:math:`[Q(a^*), Q(a^* + h)]` where the width :math:`Q(a+h) - Q(a)` is quasi-convex in
:math:`a` with derivative :math:`1/f(Q(a+h)) - 1/f(Q(a))`. So its lower end lies above
:math:`r` iff :math:`F(r) < 1 - h` and :math:`f(Q(F(r) + h)) > f(r)` (B better); its upper
end lies below :math:`-r` iff :math:`F(-r) > h` and :math:`f(Q(F(-r) - h)) > f(-r)`
(A better); it lies inside :math:`(-r, r)` iff :math:`F(r) - F(-r) > h`,
:math:`f(Q(F(-r) + h)) > f(-r)` and :math:`f(Q(F(r) - h)) > f(r)` (equivalent). One mixture
quantile per comparison (Newton from the moment-matched Normal, with a bisection
safeguard), no HDI search. Superiority compares :math:`1 - F(r)` with the level.

**Tabulated fast path.** In the simulations every comparison is first made on linearly
interpolated tables of Φ and φ (step 1/64 on [-9, 9]) with rigorous error bounds (Newton
steps on the interpolated CDF, stopped as soon as the density comparison clears its
bound); only a comparison inside its margin is redone with exact ``erfc`` / ``exp``, so the
labels are always those of the exact path.

Output layout: ``out[l, :, d]`` = (label, P(Δ > r), P(Δ < −r), mean, SD) of dataset ``d``
at HDI mass ``hps[l]``; inactive entries are left as the caller initialised them.
"""

from __future__ import annotations

import math

import numpy as np

from models.kernels._jit import KernelGroup


__all__ = ["PHI_TAB", "label_mixtures", "label_mixtures_fused", "rule_code"]


def rule_code(rule: str) -> int:
    """The kernels' rule code: 1 for ``superiority``, 0 for the HDI rules (``verdict``,
    ``equivalence``; any other name is read as ``verdict``)."""
    return 1 if rule == "superiority" else 0


#: Normal CDF and density tables for the fast path of :func:`_py_label`: Phi and phi at
#: z = -9 + k / 64 (row 0: Phi, row 1: phi), linearly interpolated.
_PHI_STEP = 64.0
_PHI_Z0 = 9.0
PHI_TAB = np.array([[0.5 * math.erfc(-(-_PHI_Z0 + k / _PHI_STEP) / math.sqrt(2.0)),
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


def _py_tab_rows(tab):
    """The tables as the kernels read them: one row per interpolation interval, padded.

    Row k + 1 (k = 0 .. n - 2, n = ``tab.shape[1]``) holds (Phi_k, Phi_{k+1} - Phi_k, phi_k,
    phi_{k+1} - phi_k) of :data:`PHI_TAB`; row 0 is zeros (z <= -9: no mass, no density) and
    row n is (1, 0, 0, 0) (z >= 9: all the mass). A lookup (:func:`_py_row`) then needs no
    branch, and its values are bit for bit those of interpolating ``tab`` directly
    (``Phi_k + u * (Phi_{k+1} - Phi_k)``, the same difference) and of adding ``w`` or nothing
    outside (-9, 9).
    """
    n = tab.shape[1]
    t4 = np.zeros((n + 1, 4))
    for k in range(n - 1):
        t4[k + 1, 0] = tab[0, k]
        t4[k + 1, 1] = tab[0, k + 1] - tab[0, k]
        t4[k + 1, 2] = tab[1, k]
        t4[k + 1, 3] = tab[1, k + 1] - tab[1, k]
    t4[n, 0] = 1.0
    return t4


def _py_row(z, last):
    """Row of :func:`_py_tab_rows`'s table and interpolation weight u for standardised z
    (``last`` = the table's last row): 0 for z <= -9 (and NaN), ``last`` for z >= 9."""
    t = (z + 9.0) * _PHI_STEP
    tc = t if t > 0.0 else 0.0
    tc = tc if tc < 2.0 * _PHI_Z0 * _PHI_STEP else 2.0 * _PHI_Z0 * _PHI_STEP
    i = int(tc)
    u = tc - i
    k = i + 1 if z > -_PHI_Z0 else 0
    k = last if z >= _PHI_Z0 else k
    return k, u


def _py_normal_start(p, mu, sdv):
    """Newton's start for the p-quantile of a mixture: the quantile of the moment-matched
    Normal N(mu, sdv^2), by the rational approximation of Abramowitz & Stegun 26.2.23
    (|error| < 4.5e-4 in z); ``mu`` when sdv is 0."""
    if not sdv > 0:
        return mu
    pp = p if p < 0.5 else 1.0 - p
    t = math.sqrt(-2.0 * math.log(max(pp, 1e-300)))
    zq = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / \
        (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t)
    return mu + (zq if p >= 0.5 else -zq) * sdv


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
    x = _normal_start(p, mu, sdv)
    a, b = lo, hi
    ef = _DEN_ERR * S1
    last = tab.shape[0] - 1
    for _ in range(80):
        F = 0.0
        f = 0.0
        fd = 0.0
        for j in range(na):
            z = (x - mm[j]) * iss[j]
            k, u = _row(z, last)
            F += w[j] * (tab[k, 0] + u * tab[k, 1])
            ph = w[j] * iss[j] * (tab[k, 2] + u * tab[k, 3])
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


def _py_spread(w, mm, ss, iss, na, sst):
    """``sst[:5]`` = (S1, S2, S3, lo, hi) of the mixture: sums of w/s, w/s², w/s³ and the
    range of m -+ 12 s, which only :func:`_py_tab_cmp` needs; computed at its first call for
    a mixture (``sst[5]`` = 1 once filled; :func:`_py_label` resets it)."""
    if sst[5] != 0.0:
        return
    S1 = 0.0
    S2 = 0.0
    S3 = 0.0
    lo = np.inf
    hi = -np.inf
    for j in range(na):
        wj = w[j]
        mj = mm[j]
        sj = ss[j]
        isj = iss[j]
        S1 += wj * isj
        S2 += wj * isj * isj
        S3 += wj * isj * isj * isj
        if mj - 12.0 * sj < lo:
            lo = mj - 12.0 * sj
        if mj + 12.0 * sj > hi:
            hi = mj + 12.0 * sj
    sst[0] = S1
    sst[1] = S2
    sst[2] = S3
    sst[3] = lo
    sst[4] = hi
    sst[5] = 1.0


def _py_tab_cmp_s(p, ftgt, w, mm, ss, iss, na, mu, sdv, sst, tab):
    """:func:`_py_tab_cmp` with the mixture's spread from (or first put into) ``sst``."""
    _spread(w, mm, ss, iss, na, sst)
    return _tab_cmp(p, ftgt, w, mm, iss, na, mu, sdv, sst[3], sst[4], sst[0], sst[1], sst[2],
                    tab)


def _py_tab_label(r, hdi_prob, level, rule, Fp, Fm, fp, fm, w, mm, ss, iss, na, mu, sdv, sst,
                  tab):
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
        c = _tab_cmp_s(Fp + h, fp, w, mm, ss, iss, na, mu, sdv, sst, tab)
        if c == 0:
            return -1
        if c == 1:
            return 1
    elif Fp < 1.0 - h + M:
        return -1
    if Fm > h + M:                                # A better candidate
        c = _tab_cmp_s(Fm - h, fm, w, mm, ss, iss, na, mu, sdv, sst, tab)
        if c == 0:
            return -1
        if c == 1:
            return 2
    elif Fm > h - M:
        return -1
    if r > 0:
        if Fp - Fm > h + 2.0 * M:                 # equivalence candidate
            c = _tab_cmp_s(Fm + h, fm, w, mm, ss, iss, na, mu, sdv, sst, tab)
            if c == 0:
                return -1
            if c == 2:
                return 0
            c = _tab_cmp_s(Fp - h, fp, w, mm, ss, iss, na, mu, sdv, sst, tab)
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


def _py_label(w, mm, ss, iss, na, r, hps, act, level, rule, out, d, fast, tab, sst):
    """Labels and readings of one normalised mixture (components 0..na-1) into out[l, :, d]
    for every HDI mass ``hps[l]`` with ``act[l, d]`` set (the mixture is shared). ``iss``
    holds 1 / ss (filled by the caller); ``tab`` is :func:`_py_tab_rows`'s table; ``sst``
    (6 floats) a work buffer.

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
        last = tab.shape[0] - 1
        for j in range(na):
            wj = w[j]
            mj = mm[j]
            sj = ss[j]
            mu += wj * mj
            m2 += wj * (sj * sj + mj * mj)
            isj = iss[j]
            k, u = _row((r - mj) * isj, last)
            Fp += wj * (tab[k, 0] + u * tab[k, 1])
            fp += wj * isj * (tab[k, 2] + u * tab[k, 3])
            k, u = _row((-r - mj) * isj, last)
            Fm += wj * (tab[k, 0] + u * tab[k, 1])
            fm += wj * isj * (tab[k, 2] + u * tab[k, 3])
        var = m2 - mu * mu
        sdv = math.sqrt(var) if var > 0 else 0.0
        sst[5] = 0.0                            # the spread is computed when first needed
        tdone = True
        for l in range(L):
            if act[l, d]:
                lab = _tab_label(r, hps[l], level, rule, Fp, Fm, fp, fm, w, mm, ss, iss, na,
                                 mu, sdv, sst, tab)
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
    t4 = _tab_rows(tab)
    nblk = min(D, 256)
    bs = (D + nblk - 1) // nblk if D > 0 else 1
    for bk in _prange(nblk):
        w = np.empty(G)
        idx = np.empty(G, np.int64)
        mm = np.empty(G)
        ss = np.empty(G)
        iss = np.empty(G)
        sst = np.zeros(6)
        for d in range(bk * bs, min(D, (bk + 1) * bs)):
            if not _any_active(act, d):
                continue
            na = _active(lw[d], cut, w, idx)
            for j in range(na):
                g = idx[j]
                mm[j] = m[d, g]
                ss[j] = sd[g]
                iss[j] = isd[g]
            _label(w, mm, ss, iss, na, r, hps, act, level, rule, out, d, fast, t4, sst)


def _py_kernel_fused(phi, theta, z, WT, sd, r, hps, act, level, rule, cut, out, fast, tab):
    """As :func:`_py_kernel`, computing log weights (phi @ theta) and means (z @ WT.T) on the
    fly, one dataset at a time (no (D, G) temporaries; work buffers per block of datasets;
    means only for the active grid points)."""
    D, F = phi.shape
    G = theta.shape[1]
    J = z.shape[1]
    isd = 1.0 / sd
    t4 = _tab_rows(tab)
    nblk = min(D, 256)
    bs = (D + nblk - 1) // nblk if D > 0 else 1
    for bk in _prange(nblk):
        lw = np.empty(G)
        w = np.empty(G)
        idx = np.empty(G, np.int64)
        mm = np.empty(G)
        ss = np.empty(G)
        iss = np.empty(G)
        sst = np.zeros(6)
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
            _label(w, mm, ss, iss, na, r, hps, act, level, rule, out, d, fast, t4, sst)


def _py_mix_pdf(x, w, mm, ss, na):
    f = 0.0
    for j in range(na):
        z = (x - mm[j]) / ss[j]
        f += w[j] * math.exp(-0.5 * z * z) / ss[j]
    return f / math.sqrt(2.0 * math.pi)


def _py_mix_quantile(p, w, mm, ss, na, mu, sdv, lo, hi):
    """Quantile of a Normal mixture: safeguarded Newton from the moment-matched Normal."""
    sq2 = math.sqrt(2.0)
    x = _normal_start(p, mu, sdv)
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


# ---------------------------------------------------------------------------------------
# Compilation by numba's JIT on the first call (models.kernels._jit): the callees' names
# below are the plain functions until then, when they are rebound to numba's compiled
# ones (the kernel bodies call them by these names) and ``_prange`` to ``numba.prange``.
# ---------------------------------------------------------------------------------------
_prange = range
#: The kernels' callees: every ``_py_<name>`` of this module but the two kernels, bound to
#: ``_<name>`` (plain Python until the first compile).
_CALLEES = tuple(n[3:] for n in list(globals())
                 if n.startswith("_py_") and n not in ("_py_kernel", "_py_kernel_fused"))
# named one by one (linters see them; the assert checks none is missing)
_tab_rows, _row, _normal_start = _py_tab_rows, _py_row, _py_normal_start
_tab_cmp, _spread, _tab_cmp_s = _py_tab_cmp, _py_spread, _py_tab_cmp_s
_tab_label, _exact_label, _label = _py_tab_label, _py_exact_label, _py_label
_any_active, _active = _py_any_active, _py_active
_mix_pdf, _mix_quantile = _py_mix_pdf, _py_mix_quantile
assert all(globals()[_n] is globals()["_py" + _n] for _n in _CALLEES), "a callee unbound"
_GROUP = KernelGroup(globals(), {n: (globals()["_py" + n], {}) for n in _CALLEES},
                     prange="_prange")

#: ``label_mixtures(lw, m, sd, r, hps, act, level, rule, cut, out, fast, tab)``: labels of D
#: mixtures from their log weights ``lw`` and component means ``m`` (D, G), SDs ``sd`` (G,).
label_mixtures = _GROUP.kernel(_py_kernel, parallel=True, nogil=True, sig=(
    "f8[:,::1]", "f8[:,::1]", "f8[::1]", "f8", "f8[::1]", "b1[:,::1]", "f8", "i8", "f8",
    "f8[:,:,::1]", "b1", "f8[:,::1]"))
#: ``label_mixtures_fused(phi, theta, z, WT, sd, r, hps, act, level, rule, cut, out, fast,
#: tab)``: the same with ``lw = phi @ theta`` and ``m = z @ WT.T`` computed per dataset.
label_mixtures_fused = _GROUP.kernel(_py_kernel_fused, parallel=True, nogil=True, sig=(
    "f8[:,::1]", "f8[:,::1]", "f8[:,::1]", "f8[:,::1]", "f8[::1]", "f8", "f8[::1]",
    "b1[:,::1]", "f8", "i8", "f8", "f8[:,:,::1]", "b1", "f8[:,::1]"))
