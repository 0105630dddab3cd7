"""Which of N configs is fastest: the joint posterior of all their means in one fit.

The runs of every config are fitted together by the exact engine
(:func:`models.stats.tps_exact.fit_exact`: the configs as fixed effects, one noise scale per
level shared by all of them, sessions, cold starts and the platform's noise prior), as the
verdict fits two. The rows are read as :mod:`planner.decide.comparison` reads A's and B's:
the same filters (:class:`~planner.decide.comparison.Selection`), warm-up passes dropped, the
same instance and session keys, the cautious one-session-per-config reading when the
machines are unknown (:func:`~planner.decide.comparison.one_session_per_arm`) and the same
prior choice (:func:`planner.decide.priors.resolve_prior`).

The exact posterior is a mixture of Normals over grid points, so each config's mean and each
difference from the best are mixtures read by :func:`models.stats.mixture.mixture_summary`
(the verdict's HDI and ROPE probabilities). P(config k is the fastest) is the share of
:data:`RANK_DRAWS` seeded draws from the mixture (a grid point by weight, then the Normal of
the config means) in which k is the best.

A ranking is **decisive** (label ``fastest``) when the best's P(fastest) is at least
:data:`P_DECISIVE` and, for every other config, the 95 % HDI of (best − it) lies wholly
beyond the ROPE: the verdict's ``B better`` pair by pair. Both conditions must hold; the
second alone already keeps the false-call rate of N identical configs below the verdict's
(docs/rank.md has the simulated and real A/A rates for N = 3..8).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from models.stats.mixture import mixture_summary
from models.stats.noise import WEAK, NoisePrior
from models.stats.tps_model import TPSData, pct
from planner.decide.comparison import (Selection, check_identifiable, fit, measured_runs,
                                       machines_unknown, one_session_per_arm)
from planner.decide.direction import read_direction
from planner.decide.rope import Rope
from planner.defaults import DEFAULT_ROPE
from planner.errors import InputError
from planner.io.rows import instance_key
from planner.io.runs import RunsTable
from planner.results.counts import count
from planner.results.rank import Ranking

__all__ = ["P_DECISIVE", "RANK_DRAWS", "MAX_CONFIGS", "Field", "build_data", "from_table",
           "rank", "p_fastest", "is_decisive"]

#: P(fastest) the best config needs for a decisive ranking (with every other config beyond
#: the ROPE): the issue's definition of naming one "fastest" decisively.
P_DECISIVE = 0.95
#: Draws from the posterior mixture for P(fastest): Monte-Carlo SE at most
#: sqrt(0.25 / 20000) = 0.0035.
RANK_DRAWS = 20000
#: Most configs one ranking fits (the fixed effects' p x p algebra grows as p^3 per grid
#: point; 64 keeps a fit within seconds).
MAX_CONFIGS = 64


#: The note of the one-session-per-config reading (:data:`planner.decide.comparison.
#: SESSION_NOTE` for N configs).
RANK_SESSION_NOTE = ("each config's runs are taken as one session: the offsets between the "
                     "configs' sessions are noise their spread cannot measure (name the "
                     "platform, state the between-instance CV or give an instance column)")


def build_data(table: RunsTable, configs: Sequence[str], *, use_cold: bool | None = None,
               lower_is_better: bool | None = None) -> TPSData:
    """The rows of ``configs`` as the model's data, configs in the order given.

    The same reading as :func:`planner.decide.comparison.build_data` (warm-up passes
    dropped, instance keys :func:`planner.io.rows.instance_key`, sessions
    ``instance/session-or-run_group``, cold flags), for any number of configs.

    Raises
    ------
    InputError
        A config named twice or missing, or mixed metric / workload / platform.
    """
    configs = list(configs)
    if len(set(configs)) != len(configs):
        dup = next(c for c in configs if configs.count(c) > 1)
        raise InputError(f"config {dup!r} named twice", field="configs")
    sub, flags = measured_runs(table, *configs)   # the verdict's cold reading
    sub.check_homogeneous()
    sub.platform()
    order = {c: k for k, c in enumerate(configs)}
    pos = sorted(range(len(sub.runs)), key=lambda k: order[sub.runs[k].config])
    runs = [sub.runs[k] for k in pos]
    cold = flags[pos]
    inst = [instance_key(r, k) for k, r in enumerate(runs)]
    sess = [f"{r.instance}/{r.session or r.run_group}" for r in runs]
    lower = sub.lower_is_better if lower_is_better is None else bool(lower_is_better)
    return TPSData.from_arrays([r.tps for r in runs], [r.config for r in runs], inst, cold,
                               sess, use_cold=use_cold, lower_is_better=lower)


@dataclass
class Field:
    """N configs' runs as the model reads them, their platform and noise prior (the N-way
    :class:`planner.decide.comparison.Comparison`)."""

    table: RunsTable
    configs: list
    platform: str | None = None
    sessions: bool = False
    prior: NoisePrior | None = None
    prior_label: str = "weak"
    choice: object = None
    notes: list = field(default_factory=list)
    use_cold: bool | None = None
    lower_is_better: bool | None = None
    value_name: str | None = None
    baseline: str | None = None
    _data: dict = field(default_factory=dict, repr=False, compare=False)

    def direction(self) -> tuple[str, str, str | None]:
        """(direction, source, note): :func:`planner.decide.direction.read_direction`."""
        return read_direction(self.table, self.lower_is_better, plain=False)

    def data(self) -> TPSData:
        """The model's data, built once."""
        if "d" not in self._data:
            lower = self.direction()[0] == "lower_is_better"
            self._data["d"] = build_data(self.table, self.configs, use_cold=self.use_cold,
                                         lower_is_better=lower)
        return self._data["d"]

    def metric(self) -> str | None:
        names = sorted({r.metric for r in self.table.runs if r.metric})
        return names[0] if names else (self.value_name or None)


def from_table(table: RunsTable, configs: Sequence[str] | None, *,
               selection: Selection = Selection(), prior: str | None = None,
               cv: str | None = None, cv_instance: str | None = None,
               aa_runs: str | None = None, use_cold: bool | None = None,
               lower_is_better: bool | None = None, value_name: str | None = None,
               baseline: str | None = None) -> Field:
    """The field of configs to rank in a runs table.

    Parameters
    ----------
    table : RunsTable
    configs : sequence of str or None
        The configs (at least 2); None: every config the selection keeps, in the table's
        order.
    selection : Selection
        Rows kept, as the verdict keeps them.
    prior, cv, cv_instance, aa_runs : str, optional
        The prior settings (:func:`planner.decide.priors.resolve_prior`).
    baseline : str, optional
        The config holding a saved baseline's runs (shown as such).

    Raises
    ------
    InputError
        No rows after the filters, fewer than 2 or more than :data:`MAX_CONFIGS` configs, a
        config missing, several platforms, a bad prior setting.
    """
    from planner.decide.priors import resolve_prior

    rows = table.filter(platform=selection.platform, metric=selection.metric,
                        workload=selection.workload, run_group=selection.run_group,
                        blank_platform=True)
    if not rows.has_rows:
        raise InputError("no rows left after the platform, metric, workload and run_group "
                         "filters", file=table.path, field="platform")
    if configs is None:
        configs = rows.measured().configs
    configs = list(configs)
    if len(configs) < 2:
        raise InputError(f"a ranking needs at least 2 configs ({len(configs)} selected)",
                         field="configs")
    if len(configs) > MAX_CONFIGS:
        raise InputError(f"{len(configs)} configs selected: at most {MAX_CONFIGS} per "
                         "ranking (filter by run_group or name them)", field="configs")
    sub = rows.select(configs)
    plat = selection.platform if selection.platform is not None else (sub.platform() or None)
    sessions = machines_unknown(sub, plat)
    if sessions:
        sub = one_session_per_arm(sub)
    ms = {r.metric for r in sub.runs if r.metric}
    ws = {r.workload for r in sub.runs if r.workload}
    choice = resolve_prior(prior, plat, ms.pop() if len(ms) == 1 else None,
                           ws.pop() if len(ws) == 1 else None, cv=cv, cv_instance=cv_instance,
                           aa_runs=aa_runs)
    return Field(sub, configs, platform=plat, sessions=sessions, prior=choice.prior,
                 prior_label=choice.label, choice=choice,
                 notes=list(choice.notes) + ([RANK_SESSION_NOTE] if sessions else []),
                 use_cold=use_cold, lower_is_better=lower_is_better, value_name=value_name,
                 baseline=baseline)


#: Posterior mass of the lightest grid components left out of the summaries and draws
#: (every probability moves by less than this; the verdict's cold fits drop 1e-7 the same way).
_DROP_MASS = 1e-7


@dataclass
class _Mixture:
    """The heaviest components of an exact posterior (weights renormalised)."""

    w: np.ndarray
    mean: np.ndarray
    cov: np.ndarray

    def contrast(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = np.asarray(c, float)
        return self.mean @ c, np.einsum("p,gpq,q->g", c, self.cov, c)


def _pruned(post) -> _Mixture:
    w = np.asarray(post.w, float)
    order = np.argsort(w, kind="stable")[::-1]
    c = np.cumsum(w[order])
    k = int(np.searchsorted(c, (1.0 - _DROP_MASS) * c[-1])) + 1
    keep = np.sort(order[:k])
    return _Mixture(w[keep] / w[keep].sum(), post.mean[keep], post.cov[keep])


def p_fastest(post, n_configs: int, *, lower: bool = False, draws: int = RANK_DRAWS,
              seed: int = 0, return_draws: bool = False):
    """P(config k is the best) for each config, from seeded draws of the exact posterior.

    Parameters
    ----------
    post : models.stats.tps_exact.GridPosterior
        Weights ``w`` (G,), conditional means ``mean`` (G, p) and covariances ``cov``
        (G, p, p); the first ``n_configs`` fixed effects are the configs' log means.
    n_configs : int
    lower : bool
        Lower is better (a latency): the best is the smallest mean.
    draws : int
        Draws (>= 1): a grid point by weight, then the configs' means from its Normal.
    seed : int

    return_draws : bool
        Also return the draws of the configs' log means, shape (draws, n_configs).

    Returns
    -------
    ndarray, shape (n_configs,)
        Shares summing to 1; Monte-Carlo SE sqrt(p (1 - p) / draws).
    """
    rng = np.random.default_rng([int(seed), 23])
    w = np.asarray(post.w, float)
    g = rng.choice(w.size, size=int(draws), p=w / w.sum())
    ug, inv = np.unique(g, return_inverse=True)
    n = int(n_configs)
    C = post.cov[ug][:, :n, :n]
    jitter = 1e-18 * np.eye(n)
    L = np.linalg.cholesky(C + jitter)
    z = rng.standard_normal((int(draws), n))
    mu = post.mean[ug][:, :n][inv] + np.einsum("dpq,dq->dp", L[inv], z)
    best = np.argmin(mu, axis=1) if lower else np.argmax(mu, axis=1)
    p = np.bincount(best, minlength=n) / float(draws)
    return (p, mu) if return_draws else p


def _hdi_draws(x: np.ndarray, prob: float) -> tuple[float, float]:
    """Shortest interval holding ``prob`` of the draws ``x``."""
    xs = np.sort(x)
    k = max(int(math.ceil(prob * xs.size)), 1)
    if k >= xs.size:
        return float(xs[0]), float(xs[-1])
    widths = xs[k - 1:] - xs[: xs.size - k + 1]
    i = int(np.argmin(widths))
    return float(xs[i]), float(xs[i + k - 1])


def is_decisive(p_best: float, beyond: Sequence[bool], p_decisive: float = P_DECISIVE) -> bool:
    """The decisive-ranking rule: P(fastest) of the best >= ``p_decisive`` and every other
    config's HDI of (best − it) wholly beyond the ROPE (``beyond``, one per other config)."""
    return bool(p_best >= p_decisive and all(beyond))


def _contrast(post, i: int, j: int, rope_log: float, hdi_prob: float):
    """Mixture summary of mu_i - mu_j (log scale)."""
    c = np.zeros(post.mean.shape[-1])
    c[i], c[j] = 1.0, -1.0
    m, v = post.contrast(c)
    return mixture_summary(post.w, m, v, rope_log, hdi_prob)


def rank(fld: Field, *, rope: Rope | str = DEFAULT_ROPE, seed: int = 0,
         draws: int = RANK_DRAWS, hdi_prob: float = 0.95,
         p_decisive: float = P_DECISIVE) -> Ranking:
    """Rank the configs of ``fld`` by their posterior means (schema ``spec-planner/rank/1``).

    Parameters
    ----------
    fld : Field
        The configs' runs and prior (:func:`from_table`).
    rope : Rope or str
        ROPE half-width (relative, or in the metric's unit at the best's level).
    seed, draws
        Of the P(fastest) draws (:func:`p_fastest`).
    hdi_prob : float
        Mass of every HDI (0.95, the verdict's).
    p_decisive : float
        P(fastest) the best needs for the ``fastest`` label.

    Returns
    -------
    Ranking
        Rows best first (highest P(fastest), then the better mean).

    Raises
    ------
    InputError
        As :func:`build_data`; a config with one run and no noise prior; a bad ROPE.
    """
    t0 = time.perf_counter()
    rp = Rope.parse(rope) if not isinstance(rope, Rope) else rope
    direction, _, dir_note = fld.direction()
    lower = direction == "lower_is_better"
    data = fld.data()
    prior = fld.prior
    check_identifiable(data, prior or WEAK, prior is not None, fld.table.path)
    prior = prior or WEAK
    post, diag = fit(data, prior, "exact")
    n = data.n_configs
    names = list(data.config_names)
    full = post
    post = _pruned(full)
    p, mu_draws = p_fastest(post, n, lower=lower, draws=draws, seed=seed, return_draws=True)
    means = post.mean[:, :n].T @ post.w                      # (n,) log means
    sign = -1.0 if lower else 1.0
    order = sorted(range(n), key=lambda k: (-p[k], -sign * means[k], names[k]))
    best = order[0]
    level = float(np.exp(means[best]))
    from planner.io.limits import metric_unit

    metric = fld.metric()
    unit = metric_unit(metric, lower)
    rp.check_level(level, unit)
    rope_log = rp.log_halfwidth(level)
    counts = np.bincount(data.config, minlength=n)
    rows, beyond, contenders = [], [], []
    for k in order:
        # each mean's HDI from the draws (shown only; the decision reads the differences'
        # exact mixtures below)
        lo_k, hi_k = _hdi_draws(mu_draws[:, k], hdi_prob)
        if k == best:
            d_mean = d_lo = d_hi = 0.0
            p_beyond, tied = 0.0, True
        else:
            d = _contrast(post, k, best, rope_log, hdi_prob)   # this config minus the best
            d_mean, d_lo, d_hi = d.mean, d.hdi_low, d.hdi_high
            # the best is better beyond the ROPE: the verdict's label, B = best, A = this
            out = (d_hi < -rope_log) if not lower else (d_lo > rope_log)
            p_beyond = d.p_lt_neg_rope if not lower else d.p_gt_rope
            beyond.append(bool(out))
            tied = not out
        if tied:
            contenders.append(names[k])
        rows.append({"config": names[k], "n": int(counts[k]),
                     "mean": float(np.exp(means[k])), "hdi_low": float(np.exp(lo_k)),
                     "hdi_high": float(np.exp(hi_k)),
                     "diff_pct": {"mean": pct(d_mean), "hdi_low": pct(d_lo),
                                  "hdi_high": pct(d_hi)},
                     "p_fastest": float(p[k]),
                     "p_fastest_se": float(math.sqrt(max(p[k] * (1 - p[k]), 0.0) / draws)),
                     "p_beyond_rope": float(p_beyond), "tied_with_best": bool(tied),
                     "baseline": names[k] == fld.baseline})
    decisive = is_decisive(float(p[best]), beyond, p_decisive) and diag.get("ok", True)
    notes = list(fld.notes)
    if dir_note:
        notes.append(dir_note)
    if not diag.get("ok", True):
        notes.append("the fit failed its diagnostics: no decisive label is given")
    if data.one_run_per_instance():
        notes.append("every run is on its own instance: the data learn only "
                     "sqrt(sigma_instance^2 + sigma_run^2); the split comes from the prior")
    if data.use_cold:
        notes.append(f"{count(int(data.cold.sum()), 'cold first run')} modelled with the verdict's "
                     "one-sided cold-start coefficient")
    tau, sig = full.scale_summary("tau"), full.scale_summary("sigma")
    runs = []
    sub = fld.table.measured().select(fld.configs)
    for r in sub.runs:
        runs.append({"config": r.config, "instance": r.instance or None, "rep": r.rep,
                     "value": float(r.tps)})
    return Ranking(
        configs=rows, best=names[best], label="fastest" if decisive else "undecided",
        contenders=contenders,
        rope={"value": rp.value, "unit": "%" if rp.relative else unit, "pct": pct(rope_log),
              "best_level": level},
        hdi_prob=hdi_prob, p_decisive=p_decisive, draws=int(draws), seed=int(seed),
        direction=direction, metric=metric, platform=fld.platform,
        prior={"label": fld.prior_label, **prior.to_dict()},
        sigma_instance={k: 100 * v for k, v in tau.items()},
        sigma_run={k: 100 * v for k, v in sig.items()},
        notes=notes, runs=runs, elapsed_s=time.perf_counter() - t0)


def with_runs(fld: Field, extra: RunsTable) -> Field:
    """``fld`` with more runs appended (a saved baseline's, as their own config)."""
    return replace(fld, table=RunsTable(list(fld.table.runs) + list(extra.runs),
                                        fld.table.path), _data={})
