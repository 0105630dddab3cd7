"""``planner calibrate``: learn a noise prior from a user's own repeated runs.

Run to run (sigma): experiments differ a lot in how noisy they are, so the prior for a new
experiment is the *population* distribution of per-cell scales (cell = one config on one
instance in one run_group), fitted by empirical Bayes
(:func:`models.stats.noise.fit_scale_population`). When fewer than 3 cells repeat, the pooled
posterior below is used instead.

Between instances (tau): the runs are split into independent components (configs linked by shared instances); each
component keeps its own config means, all share the noise scales tau (between instances) and
sigma (run to run). The exact engine gives the posterior of (tau, sigma) on a grid under the
weak HalfNormal(2 %) prior; each scale's posterior is summarised as a Scaled-Inv-chi2 by
matching the mean and variance of log(variance) (:func:`models.stats.noise.fit_inv_chi2_to_log_moments`)
with the degrees of freedom capped (``max_df``, default 10) so that a prior learned on one
set-up does not overrule a new user's own runs.

Cold first runs (see :meth:`planner.io.runs.RunsTable.cold_flags`) are dropped by default:
the Normal noise model is for warm runs; the verdict models cold runs with a coefficient.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from models.stats.noise import WEAK, NoisePrior, fit_inv_chi2_to_log_moments
from models.stats.tps_exact import noise_posterior
from models.stats.tps_model import TPSData
from planner.errors import InputError
from planner.io.limits import check_noise_prior
from planner.io.rows import instance_key
from planner.io.table import RunsTable

SCHEMA = "spec-planner/noise-prior/1"


def _components(runs) -> list[list[int]]:
    """Union-find over configs linked by a shared instance; returns row indices per component."""
    parent: dict = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r in runs:
        a, b = find(("c", r.config)), find(("i", r.instance))
        if a != b:
            parent[a] = b
    comp: dict = {}
    for k, r in enumerate(runs):
        comp.setdefault(find(("c", r.config)), []).append(k)
    return list(comp.values())


def _pct_summary(sp) -> dict:
    """Median and 95 % range of a scale prior, in % (the terms of the posterior summary)."""
    lo, med, hi = (100 * float(x) for x in sp.ppf(np.array([0.025, 0.5, 0.975])))
    return {"median": med, "low": lo, "high": hi}


def calibrate(table: RunsTable, *, drop_cold: bool = True, max_df: float = 10.0,
              n_grid: int = 60) -> dict:
    """Fit the noise prior (tau, sigma) from repeated runs.

    Parameters
    ----------
    table : RunsTable
        Runs of one platform, metric and workload (refused otherwise).
    drop_cold : bool
        Drop runs flagged cold (default true).
    max_df : float
        Cap on the degrees of freedom of each fitted Scaled-Inv-chi2.

    Returns
    -------
    dict
        ``prior`` (a :class:`models.stats.noise.NoisePrior` as dict, usable with ``--prior FILE``),
        ``posterior`` summaries (median and 95 % interval of tau and sigma, %), ``prior_pct``
        (the written prior in the same terms: median and 95 % range of each scale, %),
        ``sigma_note`` (why the population prior of sigma differs from the pooled
        posterior; None when the pooled posterior is the prior), counts.

    Raises
    ------
    InputError
        Mixed metric/workload/platform, or no config with two or more runs.
    """
    table = table.measured()
    table.check_homogeneous()
    platform = table.platform()
    cold = table.cold_flags()
    runs = [r for r, c in zip(table.runs, cold) if not (drop_cold and c)]
    # one instance rule with the verdict (runs.instance_key): an instance in another
    # experiment (run_group) is a new draw of the instance effect (local GPUs are re-used
    # across days and server builds), and a run without an instance is its own instance
    runs = [replace(r, instance=instance_key(r, k)) for k, r in enumerate(runs)]
    n_cold = int(cold.sum()) if drop_cold else 0
    # configs with a single run carry no information about noise beyond their instance: keep
    # them only when their instance holds other runs
    datasets = []
    used = 0
    for idx in _components(runs):
        rows = [runs[k] for k in idx]
        if len(rows) - len({r.config for r in rows}) <= 0:
            continue
        inst = [r.instance for r in rows]
        datasets.append(TPSData.from_arrays([r.tps for r in rows], [r.config for r in rows],
                                            inst, use_cold=False))
        used += len(rows)
    if not datasets:
        raise InputError("no config has two or more runs: nothing to learn the noise from",
                         file=table.path, field="config")
    by_config: dict = {}
    for r in runs:
        by_config.setdefault(r.config, set()).add(r.tps)
    if all(len(v) == 1 for v in by_config.values()):
        # the rule of --aa-runs: identical values say nothing about the noise (a copied
        # value, a rounded export), and a prior fitted to them would claim near-zero noise
        raise InputError("each config's runs are all equal: no spread to learn the noise from",
                         file=table.path, field="tps")
    by_cell: dict = {}
    for r in runs:
        by_cell.setdefault((r.config, r.instance), []).append(r.tps)
    repeated = [v for v in by_cell.values() if len(v) >= 2]
    if repeated and all(len(set(v)) == 1 for v in repeated):
        raise InputError("the runs of each config on each instance are all equal: no "
                         "run-to-run spread to learn sigma_run from (a copied or rounded "
                         "value?)", file=table.path, field="tps")
    shared = any(np.bincount(d.instance).max() >= 2 for d in datasets)
    split_note = None if shared else (
        "no instance holds two runs, so only the total noise sqrt(sigma_instance^2 + "
        "sigma_run^2) is learned: the two priors are the same posterior, not a split; "
        "give an instance column (or name the instance of a tool's result file) to "
        "separate them")
    # sigma_instance is learned only from a config run on two or more instances: with each
    # config on one instance, its instance effect and its mean are one number
    spans = any(len(set(zip(d.config.tolist(), d.instance.tolist()))) > len(set(d.config.tolist()))
                for d in datasets)
    tau_note = None if spans or not shared else (
        "no config ran on two or more instances, so the runs cannot tell an instance's "
        "effect from its config's mean: sigma_instance above is the weak starting prior, "
        "not learned, and the prior written for it is as uninformative; run a config on "
        "several instances (or keep the platform's prior for sigma_instance)")
    T, S, w, edge = noise_posterior(datasets, WEAK, n_grid=n_grid)

    def summarise(x):
        lv = np.log(x**2)
        m = float(np.sum(w * lv))
        v = float(np.sum(w * (lv - m) ** 2))
        order = np.argsort(x)
        c = np.cumsum(w[order])
        q = [float(np.interp(p, c, x[order])) for p in (0.025, 0.5, 0.975)]
        fitted = fit_inv_chi2_to_log_moments(m, v)
        return fitted, q

    tau_fit, tau_q = summarise(T)
    sig_fit, sig_q = summarise(S)
    from models.stats.noise import ScalePrior, fit_scale_population

    cap = lambda f: ScalePrior("inv_chi2", f.scale, min(f.df, max_df))  # noqa: E731
    cells: dict = {}
    for r in runs:
        cells.setdefault((r.config, r.instance), []).append(math.log(r.tps))
    s2 = np.array([np.var(v, ddof=1) for v in cells.values() if len(v) >= 2])
    dfc = np.array([len(v) - 1 for v in cells.values() if len(v) >= 2])
    sigma_method = "pooled posterior (fewer than 3 repeated cells)"
    # the data's own degrees of freedom for sigma: a df above them is the starting prior's
    # information, not the runs' (an outlier pulled far into its tail gave df 165)
    data_df = float(sum(d.residual_df() for d in datasets))
    sigma_prior = cap(sig_fit)
    if data_df > 0 and sigma_prior.df > data_df:
        sigma_prior = ScalePrior("inv_chi2", sigma_prior.scale, data_df)
    conflict_note = _conflict_note(s2, dfc, sig_q)
    eb_info = None
    if s2.size >= 3 and np.all(s2 > 0):
        sigma_prior, eb_info = fit_scale_population(s2, dfc)
        sigma_prior = cap(sigma_prior)
        sigma_method = "empirical Bayes over cells (population of per-cell scales)"
    sigma_note = None
    if eb_info is not None:
        sd = 100 * np.sqrt(s2)
        pooled = [100 * q for q in (sig_q[0], sig_q[2])]
        pop = [100 * float(x) for x in sigma_prior.ppf(np.array([0.025, 0.5, 0.975]))]
        sigma_note = (f"sigma_run's prior is the spread of run-to-run scales between "
                      f"experiments ({s2.size} repeated cells, cell SDs {sd.min():.3f}-"
                      f"{sd.max():.3f} %, median {float(np.median(sd)):.3f} %), not the "
                      f"pooled posterior of one scale: a new experiment draws its own scale, "
                      f"and its 95 % range [{pop[0]:.3f}, {pop[2]:.3f}] % "
                      f"{_compare_ranges(pop[0], pop[2], *pooled)} the "
                      f"pooled [{pooled[0]:.3f}, {pooled[1]:.3f}] %; its median "
                      f"{pop[1]:.3f} % is a typical experiment's scale, while the pooled "
                      f"median {100 * sig_q[1]:.3f} % weighs every run alike, so the few "
                      f"noisy experiments pull it "
                      f"{'up' if sig_q[1] > sigma_prior.ppf(np.array([0.5]))[0] else 'down'}")
    prior = NoisePrior(tau=cap(tau_fit), sigma=sigma_prior, name="calibrated",
                       source=f"planner calibrate on {table.path}: {used} runs in "
                              f"{len(datasets)} groups, platform '{platform or '?'}', "
                              f"{n_cold} cold runs dropped, df capped at {max_df:g}")
    # the writer applies the reader's rule (planner.io.limits.check_noise_prior): a prior
    # calibrate writes is one every --prior reader accepts
    check_noise_prior(prior.to_dict(), file=table.path)
    return {
        "schema": SCHEMA,
        "command": "calibrate",
        "prior": prior.to_dict(),
        "posterior": {
            "tau_pct": {"median": 100 * tau_q[1], "low": 100 * tau_q[0], "high": 100 * tau_q[2]},
            "sigma_pct": {"median": 100 * sig_q[1], "low": 100 * sig_q[0],
                          "high": 100 * sig_q[2]},
            "uncapped_df": {"tau": tau_fit.df, "sigma": sig_fit.df},
        },
        "prior_pct": {name: _pct_summary(sp) for name, sp in
                      (("tau_pct", prior.tau), ("sigma_pct", prior.sigma))},
        "sigma_method": sigma_method,
        "sigma_note": sigma_note,
        "split_note": split_note,
        "tau_note": tau_note,
        "conflict_note": conflict_note,
        "sigma_population": eb_info,
        "runs_used": used,
        # warm runs of a group with no repeated config (one run per config: no spread)
        "runs_left_out": len(runs) - used,
        "groups": len(datasets),
        "cold_dropped": n_cold,
        "platform": platform,
        "metric": table.runs[0].metric,
        "workload": table.runs[0].workload,
        "grid_edge_mass": edge,
        "ok": edge < 1e-3 and math.isfinite(tau_fit.scale),
    }


def _conflict_note(s2: np.ndarray, dfc: np.ndarray, sig_q: list[float]) -> str | None:
    """A note when the runs' own spread and the fitted sigma_run disagree.

    The data-only range is the pooled within-cell SD (log scale, cells = config x instance
    with >= 2 runs) with its chi-square 95 % interval,
    :math:`s\sqrt{d/\chi^2_{0.975,d}} .. s\sqrt{d/\chi^2_{0.025,d}}`; when it does not
    overlap the posterior's 95 % range the weak HalfNormal(2 %) starting prior
    (:data:`models.stats.noise.WEAK`) is deciding, which happens for spreads far beyond a few
    per cent: a typo'd or failed run, or runs of different workloads in one cell.
    """
    if s2.size == 0 or not np.all(np.isfinite(s2)):
        return None
    from scipy.stats import chi2

    d = float(dfc.sum())
    sp = math.sqrt(float(np.sum(dfc * s2)) / d)
    lo = sp * math.sqrt(d / float(chi2.ppf(0.975, d)))
    hi = sp * math.sqrt(d / float(chi2.ppf(0.025, d)))
    if lo <= sig_q[2] and hi >= sig_q[0]:
        return None
    side = "above" if lo > sig_q[2] else "below"
    return (f"prior conflict: the runs' own spread is {100 * sp:.3g} % [{100 * lo:.3g}, "
            f"{100 * hi:.3g}] (pooled within config and instance, df {d:g}), {side} the fitted "
            f"sigma_run's 95 % range [{100 * sig_q[0]:.3g}, {100 * sig_q[2]:.3g}] %: the weak "
            "HalfNormal(2 %) starting prior decides, not the runs; look for a typo'd, failed "
            "or mislabelled run (the prior written keeps the runs' df)")


def _compare_ranges(lo: float, hi: float, lo2: float, hi2: float) -> str:
    """How the range [lo, hi] stands to [lo2, hi2], in words that match the numbers as
    printed (3 decimals): ``is wider than``, ``is narrower than``, ``is as wide as``, with
    ``and lies below`` / ``above`` when one range does not contain the other."""
    lo, hi, lo2, hi2 = (round(x, 3) for x in (lo, hi, lo2, hi2))
    w, w2 = hi - lo, hi2 - lo2
    word = ("is wider than" if w > w2 + 5e-4 else "is narrower than" if w < w2 - 5e-4
            else "is as wide as")
    if lo >= lo2 and hi <= hi2 or lo <= lo2 and hi >= hi2:
        return word  # one inside the other
    return word + (", and lies below," if hi < hi2 else ", and lies above,")

