r"""Cold first runs: a one-sided, heavy-tailed slowdown per instance (or server session).

A cold run (the first run of a fresh server after a config change, see
:meth:`planner.io.table.RunsTable.cold_flags`) is modelled as

.. math::

    \log y_r = \mu_{c(r)} + u_{i(r)} + \ldots - \mathrm{sign}\, s_{j(r)}\,\mathrm{cold}_r
    + \varepsilon_r,\qquad s_j \ge 0,

with one slowdown :math:`s_j` per *cold group* :math:`j`: the server session of the run when
the runs name sessions, else its instance (box 1's first runs may be 1.6 % slow and box 2's
0.2 %: one shared coefficient would read the difference as run-to-run noise). The
:math:`s_j` are independent draws from one population prior, a mixture of Normals fitted on
every shipped cold cell (:data:`COLD_WEIGHTS`):

* a spike "not slow" (SD :data:`COLD_NONE_SD`, 0.01 %), and
* :data:`COLD_SLOW_MEANS` slow components on a geometric ladder 0.3 % .. 11.7 % (ratio 2.5),
  each of SD :data:`COLD_SLOW_CV` times its mean (so each lies on the slow side: the whole
  mixture puts 5e-6 of its mass on a cold run *faster* than warm by 0.1 %, and a 4 % faster
  first run is never absorbed: the widest component is 5.4 SD from it).

The ladder makes the prior heavy-tailed (its 11.7 % component holds the shipped -24 %
first run) while every component stays Gaussian, so given the noise scales the model is
conjugate: with :math:`J` cold groups of :math:`K` components the posterior is a mixture over
the :math:`K^J` component combinations, each a fixed-effect prior of the Gaussian conditional
(:func:`combo_priors`). Up to :data:`MAX_COMBOS` combinations are integrated exactly; beyond,
a screen keeps each group's components of non-negligible mass and approximates the least
ambiguous groups by one Normal (:func:`cold_mixture`; ``bench/bench_cold.py`` measures the
error against the full enumeration and MCMC).

The fit (:func:`fit_cold_weights`): d = log(first run) − mean log(later runs of the same
cell) for every cell of ``examples/runs/tps_runs.csv`` with a rep-0 run and >= 1 later run on a
named instance, not after a warm-up pass (177 cells of 81 run groups, probe metrics
excluded), each d with the
measurement SD of its cell's warm mean, the weights by EM with a Dirichlet(0.5) smoothing.
Held out by whole run groups (5 folds): the central 90 % predictive interval covers 92.1 %
of the left-out cells (2.8 % below, 5.1 % above: cells whose warm mean is noisier than its
SD says), the 98 % interval 94.9 %; the held-out predicted share of first runs more than 3 %
slow is 11.1 % (observed 8.5 %; the old zero-inflated exponential left 6.6 % of the cells
below its 5 % point).
``tests/planner/decide/test_cold.py`` repeats the fit and the check.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from models.stats import special

#: Means (relative slowdown, log scale) of the slow components: 0.3 % x 2.5^k, k = 0..4.
COLD_SLOW_MEANS = (0.003, 0.0075, 0.01875, 0.046875, 0.1171875)
#: SD of each slow component as a fraction of its mean (a cold run is never modelled faster:
#: P(beta > +0.1 %) = 5e-6 under the fitted mixture; 0.35 fitted the cells slightly better
#: but let the 11.7 % component absorb a 4 % *faster* first run).
COLD_SLOW_CV = 0.25
#: SD (log scale) of the "not slow" spike: 0.01 %, below the median run-to-run SD of warm
#: runs (0.038 %, ``examples/runs/tps_runs.md``).
COLD_NONE_SD = 1e-4
#: Fitted weights: not slow, then the slow components (sum 1); see the module docstring.
COLD_WEIGHTS = (0.4880, 0.0648, 0.1746, 0.1587, 0.0947, 0.0191)
#: Most component combinations integrated exactly (K^J; K = 6 gives J <= 2 exactly).
MAX_COMBOS = 64
#: Posterior mass of a group's components the screen may drop (beyond :data:`MAX_COMBOS`).
SCREEN_DROP = 1e-6
#: Largest (combinations x fixed effects^2) of a fit's fine pass: bounds its memory (about
#: 2304 x 3600 grid points x 8 bytes = 66 MB per array) and time.
CELL_BUDGET = 2304
#: Most cold groups with a slowdown each; a table with more reads one shared slowdown
#: (:meth:`models.stats.tps_model.TPSData.from_arrays`, with a note).
MAX_COLD_GROUPS = 16


def cold_prior_components(weights=COLD_WEIGHTS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The population prior of one cold group's coefficient ``beta = -s`` as Normals.

    Parameters
    ----------
    weights : sequence of float, length K = 1 + len(COLD_SLOW_MEANS)
        Mixture weights (not slow first).

    Returns
    -------
    weights, means, sds : ndarray, shape (K,)
        Weights (sum 1), means (<= 0) and SDs of beta (log scale).
    """
    w = np.asarray(weights, float)
    slow = np.asarray(COLD_SLOW_MEANS, float)
    return (w / w.sum(), np.concatenate([[0.0], -slow]),
            np.concatenate([[COLD_NONE_SD], COLD_SLOW_CV * slow]))


def cold_prior_summary(weights=COLD_WEIGHTS) -> dict:
    """Readings of the prior for notes: P(not slow), mean slowdown of the slow ones, and the
    probabilities of a slowdown beyond 1 %, 3 % and 10 %."""
    w, m, s = cold_prior_components(weights)
    slow_w = w[1:].sum()
    tail = {f"p_slower_than_{k}pct": float(np.sum(w * special.ndtr((-k / 100 - m) / s)))
            for k in (1, 3, 10)}
    return {"p_not_slow": float(w[0]), "mean_slow": float(-np.sum(w[1:] * m[1:]) / slow_w),
            **tail}


def moment_normal(weights=COLD_WEIGHTS) -> tuple[float, float]:
    """Mean and SD of the moment-matched single Normal of the prior (log scale)."""
    w, m, s = cold_prior_components(weights)
    mean = float(np.sum(w * m))
    return mean, math.sqrt(float(np.sum(w * (s * s + m * m))) - mean * mean)


def fit_cold_weights(d, se, *, alpha: float = 0.5, iters: int = 3000) -> np.ndarray:
    """Maximum a-posteriori mixture weights of the cold prior from first-run deviations.

    Parameters
    ----------
    d : array_like, shape (n,)
        log(first run) − mean log(warm runs of the same cell).
    se : array_like, shape (n,)
        Measurement SD of each d (the warm mean's and a warm run's spread).
    alpha : float
        Dirichlet smoothing added to every component's count.

    Returns
    -------
    ndarray, shape (K,)
        Weights (sum 1), in the order of :func:`cold_prior_components`.
    """
    _, m, s = cold_prior_components()
    ll = component_loglik(d, se)
    w = np.full(m.size, 1.0 / m.size)
    for _ in range(int(iters)):
        lr = ll + np.log(w)
        r = np.exp(lr - special.logsumexp(lr, axis=1)[:, None])
        w = (r.sum(0) + alpha) / (r.sum() + alpha * m.size)
    return w


def component_loglik(d, se) -> np.ndarray:
    """log N(d; m_k, s_k^2 + se^2), shape (n, K): each d under each prior component."""
    _, m, s = cold_prior_components()
    d = np.asarray(d, float)[:, None]
    v = s[None, :] ** 2 + np.asarray(se, float)[:, None] ** 2
    return -0.5 * np.log(2 * np.pi * v) - 0.5 * (d - m[None, :]) ** 2 / v


def predictive_cdf(x, se, weights=COLD_WEIGHTS) -> np.ndarray:
    """P(d <= x) of a first-run deviation measured with SD ``se`` (shape of x)."""
    w, m, s = cold_prior_components(weights)
    x = np.asarray(x, float)[..., None]
    sd = np.sqrt(s ** 2 + np.asarray(se, float)[..., None] ** 2)
    return np.sum(w * special.ndtr((x - m) / sd), axis=-1)


# --------------------------------------------------------------------- the exact integral

def combo_priors(m0c: np.ndarray, v0: np.ndarray, data, options: list | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fixed-effect priors of the cold groups' component combinations.

    Parameters
    ----------
    m0c, v0 : ndarray, shape (p,)
        Prior means and variances of the fixed effects (configs, then one cold column per
        group, :attr:`models.stats.tps_model.TPSData.n_cold`).
    data : TPSData
    options : list of (log_w, mean, var) arrays, one triple per group, optional
        The Normal components each group's coefficient may take (default: every component
        of the prior, :meth:`models.stats.tps_model.TPSData.cold_prior`).

    Returns
    -------
    log_w : ndarray, shape (M,)
        log prior weight of each combination (normalised over the M = prod K_j).
    m0s, v0s : ndarray, shape (M, p)
    """
    cw, cm, cs = data.cold_prior()
    J = data.n_cold
    C = m0c.size - J
    if options is None:
        options = [(np.log(cw), cm, cs ** 2)] * J
    combos = np.array(list(itertools.product(*[range(o[0].size) for o in options])),
                      int).reshape(-1, J)
    M = combos.shape[0]
    m0s = np.repeat(m0c[None, :], M, axis=0)
    v0s = np.repeat(v0[None, :], M, axis=0)
    lw = np.zeros(M)
    for j, (lwj, mj, vj) in enumerate(options):
        m0s[:, C + j] = mj[combos[:, j]]
        v0s[:, C + j] = vj[combos[:, j]]
        lw += lwj[combos[:, j]]
    return lw - special.logsumexp(lw), m0s, v0s


def screen_components(ll_many, coarse: np.ndarray, m0c, v0, data) -> list:
    """Per cold group, the screened posterior mass of each prior component, shape (K,).

    Each group's K components are tried with the other groups' priors replaced by their
    moment-matched Normal, on the coarse noise grid (weights: the marginal likelihood,
    a log-uniform prior over the grid: a screen only), one group at a time.

    Parameters
    ----------
    ll_many : callable(T, S, m0s, v0s) -> (loglik (M, G), ...)
        The marginal likelihood of each fixed-effect prior on flattened grids
        (``models.stats.tps_exact._integrate_fixed_many`` of the Gaussian parts).
    coarse : ndarray
        Axis of the coarse noise grid (both scales).

    Returns
    -------
    list of ndarray, shape (K,) each
    """
    cw, cm, cs = data.cold_prior()
    J, K = data.n_cold, cw.size
    C = m0c.size - J
    mm, sm = moment_normal(data.cold_weights)
    T, S = (g.ravel() for g in np.meshgrid(coarse, coarse, indexing="ij"))
    base_m, base_v = m0c.copy(), v0.copy()
    base_m[C:], base_v[C:] = mm, sm * sm
    out = []
    for j in range(J):
        m0s = np.repeat(base_m[None, :], K, axis=0)
        v0s = np.repeat(base_v[None, :], K, axis=0)
        m0s[:, C + j], v0s[:, C + j] = cm, cs ** 2
        ll = ll_many(T, S, m0s, v0s)[0] + np.log(cw)[:, None]               # (K, G)
        lk = special.logsumexp(ll, axis=1)
        out.append(np.exp(lk - special.logsumexp(lk)))
    return out


def gauss_parts(st, T, S):
    """(A, b, q, logdetS) of the instance-level Gaussian conditional
    (:func:`models.stats.tps_exact.conditional_posterior` without the fixed-effect prior),
    one dataset: A (G, p, p), b (G, p), q and logdetS (G,)."""
    t2 = np.asarray(T, float) ** 2
    s2 = np.asarray(S, float) ** 2
    if st.n_i.size > 256:   # by design type (tps_exact._conditional_posterior_typed)
        count, n_k, x_k, S1, S2 = st.instance_types()
        S1, S2 = np.asarray(S1).reshape(-1), np.asarray(S2).reshape(-1)
        den = s2[:, None] + n_k[None, :] * t2[:, None]
        g = t2[:, None] / den
        A = (st.XtX[None] - np.einsum("gk,k,kp,kq->gpq", g, count, x_k, x_k)) / s2[:, None, None]
        logdetS = (count[None, :] * ((n_k[None, :] - 1.0) * np.log(s2)[:, None]
                                     + np.log(den))).sum(-1)
        b = (st.Xty[None, :] - np.einsum("gk,k,kp->gp", g, S1, x_k)) / s2[:, None]
        q = (float(st.Q) - g @ S2) / s2
        return A, b, q, logdetS
    n_i = st.n_i
    den = s2[:, None] + n_i[None, :] * t2[:, None]
    g = t2[:, None] / den
    A = (st.XtX[None] - np.einsum("gi,ip,iq->gpq", g, st.x_i, st.x_i)) / s2[:, None, None]
    logdetS = ((n_i[None, :] - 1.0) * np.log(s2)[:, None] + np.log(den)).sum(-1)
    T_i = np.asarray(st.T_i, float).reshape(-1)
    gT = g * T_i[None, :]
    b = (st.Xty[None, :] - gT @ st.x_i) / s2[:, None]
    q = (float(st.Q) - gT @ T_i) / s2
    return A, b, q, logdetS


def cold_mixture(ll_many, coarse, m0c, v0, data):
    """The cold combinations of one fit: ``(log_w, m0s, v0s, info)``.

    Every combination is integrated when there are at most :data:`MAX_COMBOS` and their
    fine pass stays within :data:`CELL_BUDGET` (combinations x fixed effects squared): two
    groups of 6 components, exactly. Otherwise a screen (:func:`screen_components`) keeps
    each group's components holding all but :data:`SCREEN_DROP` of its mass; the groups
    left with the most components are enumerated while the product fits the budget, and
    each remaining group keeps its components' moment-matched Normal (prior weights,
    restricted to the kept components), an approximation (``bench/bench_cold.py`` measures
    it against the full enumeration and MCMC). ``info``: ``combinations``, ``screened``,
    ``approximated`` (groups given one Normal), ``dropped`` (screened mass left out).
    """
    cw, cm, cs = data.cold_prior()
    K, J, p = cw.size, data.n_cold, m0c.size
    cap = max(1, min(MAX_COMBOS, CELL_BUDGET // (p * p)))
    info = {"combinations": K ** J, "screened": False, "approximated": 0, "dropped": 0.0}
    if K ** J <= cap:
        return (*combo_priors(m0c, v0, data), info)
    masses = screen_components(ll_many, coarse, m0c, v0, data)
    kept = []
    for pk in masses:
        order = np.argsort(-pk, kind="stable")
        n = int(np.searchsorted(np.cumsum(pk[order]), 1.0 - SCREEN_DROP)) + 1
        kept.append(np.sort(order[:min(n, K)]))
    info["screened"] = True
    info["dropped"] = float(sum(1.0 - masses[j][kept[j]].sum() for j in range(J)))
    lcw = np.log(cw)
    # enumerate the most ambiguous groups first while the product fits
    order = sorted(range(J), key=lambda j: -kept[j].size)
    total, exact = 1, set()
    for j in order:
        if kept[j].size == 1 or total * kept[j].size <= cap:
            total *= kept[j].size
            exact.add(j)
    options = []
    for j in range(J):
        k = kept[j]
        if j in exact:
            options.append((lcw[k], cm[k], cs[k] ** 2))
            continue
        w = cw[k] / cw[k].sum()
        mean = float(np.sum(w * cm[k]))
        var = float(np.sum(w * (cs[k] ** 2 + cm[k] ** 2))) - mean * mean
        options.append((np.zeros(1), np.array([mean]), np.array([var])))
        info["approximated"] += 1
    lw, m0s, v0s = combo_priors(m0c, v0, data, options)
    info["combinations"] = int(lw.size)
    return lw, m0s, v0s, info


def mixture_loglik(ll_many, lwc, m0s, v0s):
    """The ``loglik_fn`` of the grid passes for a mixture of fixed-effect priors: for
    flattened grids T, S it returns (log-sum over the M priors (G,), responsibilities
    (G, M) on the log scale, means (G, M, p), covariances (G, M, p, p))."""
    def ll(T, S):
        l, m, c = ll_many(T, S, m0s, v0s)                                  # (M, G), ...
        lk = (l + lwc[:, None]).T                                          # (G, M)
        tot = special.logsumexp(lk, axis=-1)
        return tot, lk - tot[:, None], m.transpose(1, 0, 2), c.transpose(1, 0, 2, 3)
    return ll


def split_points(T, S, w, resp, mean, cov):
    """Grid points x mixture components as one flat mixture: (T, S, w, mean, cov) of shape
    (G M, ...), each grid weight split by the components' responsibilities."""
    M = resp.shape[-1]
    wk = (w[:, None] * np.exp(resp)).ravel()
    p = mean.shape[-1]
    return (np.repeat(T, M), np.repeat(S, M), wk / wk.sum(), mean.reshape(-1, p),
            cov.reshape(-1, p, p))


def cold_names(data) -> list[str]:
    """Fixed-effect names of the cold columns: ``cold`` for one group, else
    ``cold[<group>]`` per group (:attr:`models.stats.tps_model.TPSData.cold_group_names`)."""
    J = data.n_cold
    if J == 0:
        return []
    if J == 1:
        return ["cold"]
    return [f"cold[{g}]" for g in data.cold_group_names]
