r"""A hierarchy of run-to-run noise priors over (platform, metric, workload) cells.

Why
---
One platform prior applied to every metric and workload of that platform is over-confident
outside the cells it was fitted on: a single-stream probe is several times noisier run to run
than the 128x512 decode benchmark on the same GPU. This module learns, from all shipped
repeated runs, how the run-to-run scale :math:`\sigma` varies between experiments *within* a
cell and how the cells differ, and gives each (platform, metric, workload) the prior a *new*
experiment in that cell should use.

Data
----
A *replicate cell* r is the warm runs of one config on one instance in one run group
(experiment), of one (platform, metric, workload). Its sample variance of log TPS
:math:`s_r^2` on :math:`d_r = n_r - 1` degrees of freedom is the datum (cold first runs are
dropped by the caller: they are modelled by the verdict's cold term, not by the noise).

Model (per node of the tree global -> platform -> (platform, metric family) -> cell)
-------------------------------------------------------------------------------------
Each replicate cell of a node draws its own scale,
:math:`\sigma_r^2 \sim \text{Scaled-Inv-}\chi^2(\nu, s_0^2)`, so that
:math:`s_r^2/s_0^2 \sim F(d_r, \nu)` (see :func:`models.stats.noise.fit_scale_population`). The
node's hyper-parameters :math:`\theta = (\log\nu, \log s_0)` maximise

.. math::

   \sum_r \big[\log f_F(s_r^2/s_0^2;\, d_r, \nu) - 2\log s_0\big]
   - \frac{(\log s_0 - \log s_0^{P})^2}{2\omega_P^2} - \frac{(\log\nu - \log\nu^{P})^2}{2\omega_\nu^2}

(partial pooling toward the parent P, fitted top-down: a node with many replicate cells follows
its own data, a node with one or two follows its parent). :math:`\omega_P` is the spread (SD)
of :math:`\log s_0` between the parent's children, estimated from their unpooled fits (the
children with at least :data:`MIN_OWN_CELLS` replicate cells; the parent's own :math:`\omega`
when fewer than two); :math:`\omega_\nu =` :data:`OMEGA_NU`.

The prior handed to a new experiment is the node's *predictive* for a new cell, including the
uncertainty of :math:`\theta` (Laplace: the inverse Hessian :math:`H^{-1}` of the objective):
with :math:`L = \log\sigma^2`,

.. math::

   E[L] = \log(\nu s_0^2/2) - \psi(\nu/2), \qquad
   \mathrm{Var}[L] = \psi'(\nu/2) + 4\,(H^{-1})_{s_0 s_0} + \text{extra},

moment-matched back to a Scaled-Inv-:math:`\chi^2`
(:func:`models.stats.noise.fit_inv_chi2_to_log_moments`). ``extra`` is :math:`4\omega^2` when a
metric or workload the node has never seen borrows the node's prior (a new child is one more
draw from the spread of its siblings): the same centre, fewer degrees of freedom.

Between-instance scale :math:`\tau`
------------------------------------
The shipped runs rarely repeat one config on several instances of one platform in one
experiment, so :math:`\tau` is kept per platform, from the platform entries of
``models/data/noise_priors.json`` (their ``source`` fields say where they come from).

Unknown platforms
-----------------
No platform's prior is ever applied to another. :meth:`NoiseHierarchy.choose` gives an unknown
platform :data:`WIDE`, whose 5-95 % prior interval on each scale is 0.03 %-20 % (issue 8);
the verdict's resolution (:mod:`planner.decide.priors`) gives it instead the population prior
over platforms (:mod:`models.stats.population`, issue 20), a joint prior of the two scales
learned from every platform with repeated runs.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from importlib import resources
from typing import Iterable, Sequence

import numpy as np

from models.stats.noise import (NoisePrior, ScalePrior, fit_inv_chi2_to_log_moments,
                               minimize_scale_objective, scale_population_nll)

__all__ = [
    "WIDE", "MIN_OWN_CELLS", "OMEGA_NU", "ReplicateCell", "HierarchyChoice", "NoiseHierarchy",
    "metric_family", "replicate_cells", "fit_hierarchy", "load_hierarchy", "wide_prior",
]

#: Weakly informative prior for a platform with no data: each scale (tau and sigma)
#: Scaled-Inv-chi2(0.48, 0.066 %), whose 5 % / 50 % / 95 % quantiles are 0.03 % / 0.17 % / 20 %:
#: the run-to-run CVs seen in public benchmark reports span 0.03 % to 20 % (issue 8). The
#: upper tail falls like sigma^-1.48, so a user's own spread always wins over it.
WIDE_DF = 0.48
WIDE_SCALE = 0.00066
WIDE = NoisePrior(tau=ScalePrior("inv_chi2", WIDE_SCALE, WIDE_DF),
                  sigma=ScalePrior("inv_chi2", WIDE_SCALE, WIDE_DF), name="wide",
                  source="unknown platform: weakly informative Scaled-Inv-chi2(0.48, 0.066%) on "
                         "each scale, 5-95% prior range 0.03%-20% (run-to-run CVs of public "
                         "benchmark reports)")

#: A node needs this many replicate cells before its unpooled fit enters the spread of its
#: siblings (the F-population fit needs >= 3 points to separate df from scale).
MIN_OWN_CELLS = 3
#: Prior SD of log(df) of a child around its parent's (a factor e either way): df is poorly
#: determined by a handful of cells, and pooling it is what keeps a 3-cell node sane.
OMEGA_NU = 1.0
#: Spread of log s0 between siblings when no level has two children with their own fit:
#: a factor 3 (1 SD), about the ratio of the probe and decode median scales on local A10G
#: (0.044 % vs 0.032 %, and their pooled SDs 0.087 % vs 0.33 %; ``examples/runs/tps_runs.md``).
DEFAULT_OMEGA = math.log(3.0)
#: Variance floor (relative^2): transcribed values with 2 decimals can repeat exactly; a
#: sample variance below (0.001 %)^2 is read as (0.001 %)^2.
S2_FLOOR = 1e-10
SCHEMA = "spec-planner/noise-hierarchy/1"


def metric_family(metric: str) -> str:
    """Family of a metric: ``probe`` for the ``probe_*`` micro-probes, else the metric itself.

    Examples
    --------
    >>> metric_family("probe_wall"), metric_family("decode_wall")
    ('probe', 'decode_wall')
    """
    m = (metric or "").strip()
    return "probe" if m.startswith("probe") else (m or "?")


@dataclass(frozen=True)
class ReplicateCell:
    """Warm repeated runs of one config on one instance in one run group.

    Attributes
    ----------
    platform, metric, workload, run_group : str
    s2 : float
        Sample variance of log TPS (relative^2), ddof 1.
    df : int
        n - 1 (>= 1).
    """

    platform: str
    metric: str
    workload: str
    run_group: str
    s2: float
    df: int


def replicate_cells(platform: Sequence[str], metric: Sequence[str], workload: Sequence[str],
                    run_group: Sequence[str], config: Sequence[str], instance: Sequence[str],
                    tps: Sequence[float], cold: Sequence[bool] | None = None
                    ) -> list[ReplicateCell]:
    """Group runs into replicate cells (warm runs only; cells of one run are dropped).

    Parameters
    ----------
    platform, metric, workload, run_group, config, instance : sequences of str, length N
        Per run. A blank ``instance`` makes the run its own instance (never a replicate).
    tps : sequence of float, length N
        Tokens per second (> 0).
    cold : sequence of bool, optional
        Cold first runs, dropped.

    Returns
    -------
    list of ReplicateCell
        Sorted by key, so fits are reproducible.
    """
    n = len(tps)
    cold = np.zeros(n, bool) if cold is None else np.asarray(cold, bool)
    groups: dict[tuple, list[float]] = {}
    for k in range(n):
        if cold[k] or not instance[k]:
            continue
        key = (platform[k], metric[k], workload[k], run_group[k], config[k], instance[k])
        groups.setdefault(key, []).append(math.log(float(tps[k])))
    out = []
    for key in sorted(groups):
        v = groups[key]
        if len(v) >= 2:
            out.append(ReplicateCell(key[0], key[1], key[2], key[3],
                                     max(float(np.var(v, ddof=1)), S2_FLOOR), len(v) - 1))
    return out


def _log_moments(prior: ScalePrior) -> tuple[float, float]:
    from scipy import special

    a = prior.df / 2.0
    return (math.log(prior.df * prior.scale**2 / 2.0) - float(special.digamma(a)),
            float(special.polygamma(1, a)))


def _widen(prior: ScalePrior, extra_var_log_var: float) -> ScalePrior:
    """Same centre of log sigma^2, its variance increased (fewer df)."""
    m, v = _log_moments(prior)
    return fit_inv_chi2_to_log_moments(m, v + max(extra_var_log_var, 0.0))


def _fit_node(s2: np.ndarray, df: np.ndarray, parent: tuple[float, float] | None,
              omega: float) -> tuple[float, float, float]:
    """Penalised F-population fit; returns (log nu, log s0, var of log s0)."""
    nll = scale_population_nll(s2, df)

    def obj(p, grad: bool = False):
        val = nll(p, grad)
        if parent is None:
            return val
        pen = (p[1] - parent[1]) ** 2 / (2 * omega**2) + (p[0] - parent[0]) ** 2 / (
            2 * OMEGA_NU**2)
        if not grad:
            return val + pen
        g = val[1] + np.array([(p[0] - parent[0]) / OMEGA_NU**2, (p[1] - parent[1]) / omega**2])
        return val[0] + pen, g

    start = [parent[0], parent[1]] if parent else [math.log(1.0), 0.5 * math.log(np.median(s2))]
    x = minimize_scale_objective(obj, start).x
    h = 1e-3
    H = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            e_i, e_j = np.eye(2)[i] * h, np.eye(2)[j] * h
            H[i, j] = (obj(x + e_i + e_j) - obj(x + e_i - e_j) - obj(x - e_i + e_j)
                       + obj(x - e_i - e_j)) / (4 * h * h)
    try:
        cov = np.linalg.inv(H)
        var_s0 = float(cov[1, 1]) if cov[1, 1] > 0 else omega**2
    except np.linalg.LinAlgError:
        var_s0 = omega**2
    return float(x[0]), float(x[1]), min(var_s0, omega**2 if parent else var_s0)


@dataclass
class Node:
    """One fitted node: its predictive prior for a new replicate cell and its counts."""

    key: str
    level: str
    log_nu: float
    log_s0: float
    var_log_s0: float
    omega: float
    n_cells: int
    n_runs: int
    n_groups: int

    #: ``prior`` / ``borrowed()`` as stored in the hierarchy file (moment matching needs
    #: digamma, trigamma and a root search: SciPy, ~0.3 s of imports a verdict need not pay).
    #: :meth:`to_dict` always recomputes them, and a test checks the shipped file against that.
    stored_prior: ScalePrior | None = field(default=None, repr=False, compare=False)
    stored_borrowed: ScalePrior | None = field(default=None, repr=False, compare=False)

    @property
    def prior(self) -> ScalePrior:
        """Predictive Scaled-Inv-chi2 for a new replicate cell of this node."""
        return self.stored_prior if self.stored_prior is not None else self._prior()

    def _prior(self) -> ScalePrior:
        base = ScalePrior("inv_chi2", math.exp(self.log_s0), math.exp(self.log_nu))
        return _widen(base, 4.0 * self.var_log_s0)

    def borrowed(self) -> ScalePrior:
        """Prior for an unseen child (metric or workload): widened by the siblings' spread."""
        if self.stored_borrowed is not None:
            return self.stored_borrowed
        return _widen(self.prior, 4.0 * self.omega**2)

    def to_dict(self) -> dict:
        p = self._prior()
        return {"level": self.level, "log_nu": self.log_nu, "log_s0": self.log_s0,
                "var_log_s0": self.var_log_s0, "omega": self.omega, "n_cells": self.n_cells,
                "n_runs": self.n_runs, "n_groups": self.n_groups,
                "prior": p.to_dict(), "borrowed": _widen(p, 4.0 * self.omega**2).to_dict()}

    @classmethod
    def from_dict(cls, key: str, d: dict) -> "Node":
        stored = {f"stored_{k}": ScalePrior.from_dict(d[k]) for k in ("prior", "borrowed")
                  if k in d}
        return cls(key, d["level"], d["log_nu"], d["log_s0"], d["var_log_s0"], d["omega"],
                   d["n_cells"], d["n_runs"], d["n_groups"], **stored)


@dataclass(frozen=True)
class HierarchyChoice:
    """The prior chosen for one (platform, metric, workload) and where it comes from.

    Attributes
    ----------
    prior : NoisePrior
    level : str
        ``cell`` (the cell's own partially pooled fit), ``family`` (an unseen workload borrows
        from its metric family, widened), ``platform`` (an unseen metric family borrows from the
        platform, widened; or the platform's embedded prior), ``unknown-platform`` (:data:`WIDE`).
    cell : str
        ``platform/metric/workload`` asked for.
    n_runs, n_cells, n_groups : int
        Runs, replicate cells and run groups behind the node used (0 for WIDE).
    source : str
    """

    prior: NoisePrior
    level: str
    cell: str
    n_runs: int
    n_cells: int
    n_groups: int
    source: str


@dataclass
class NoiseHierarchy:
    """Fitted nodes (``global``, ``P``, ``P/family``, ``P/metric/workload``) and per-platform tau."""

    nodes: dict[str, Node]
    tau: dict[str, dict]
    sources: dict = field(default_factory=dict)
    #: per platform, its embedded tau and sigma widened for an unseen metric / workload, as
    #: stored in the file (see :attr:`Node.stored_prior`); recomputed by :meth:`to_dict`
    widened: dict = field(default_factory=dict, repr=False, compare=False)

    def platforms(self) -> list[str]:
        """Platforms with a tau entry (the only ones a prior is ever given for)."""
        return sorted(self.tau)

    def choose(self, platform: str, metric: str | None = None,
               workload: str | None = None) -> HierarchyChoice:
        """The prior of a new experiment in (platform, metric, workload).

        Parameters
        ----------
        platform : str
            Canonical platform name; unknown (or blank) -> :data:`WIDE`.
        metric, workload : str, optional
            None: the platform's embedded prior (level ``platform``), as before the hierarchy.
        """
        cell = "/".join([platform or "?", metric or "*", workload or "*"])
        if not platform or platform not in self.tau:
            return HierarchyChoice(WIDE, "unknown-platform", cell, 0, 0, 0,
                                   f"no noise data for platform '{platform or '(none)'}': "
                                   + WIDE.source)
        t = self.tau[platform]
        tau = ScalePrior.from_dict(t["tau"])
        emb_sigma = ScalePrior.from_dict(t["sigma"])
        if metric is None:
            return HierarchyChoice(NoisePrior(tau, emb_sigma, name=platform, source=t["source"]),
                                   "platform", cell, t.get("n_runs", 0), t.get("n_cells", 0),
                                   t.get("n_groups", 0), t["source"])
        fam = metric_family(metric)
        keys = [(f"{platform}/{metric}/{workload}", "cell"), (f"{platform}/{fam}", "family"),
                (platform, "platform")]
        for k, (key, level) in enumerate(keys):
            node = self.nodes.get(key)
            if node is None or node.n_cells == 0:
                continue
            if k == 0:
                sigma, how = node.prior, "own fit, partially pooled"
            else:
                sigma, how = node.borrowed(), "borrowed, widened by the spread between cells"
            src = (f"sigma: {level} {key} ({how}; {node.n_cells} replicate cells, "
                   f"{node.n_runs} runs, {node.n_groups} run groups; {self.sources.get('runs', '')}"
                   f"); tau: {t['source']}")
            return HierarchyChoice(NoisePrior(tau, sigma, name=f"{platform}:{level}", source=src),
                                   level, cell, node.n_runs, node.n_cells, node.n_groups, src)
        # a known platform without any replicate cell (every official run is its own
        # allocation): the embedded prior, its sigma widened unless this is the measured cell
        measured = t.get("measured_on", {})
        same = measured.get("metric") == metric and measured.get("workload") == workload
        if same:
            sigma, tau_w = emb_sigma, tau
        elif platform in self.widened:
            w = self.widened[platform]
            sigma, tau_w = ScalePrior.from_dict(w["sigma"]), ScalePrior.from_dict(w["tau"])
        else:
            sigma, tau_w = self._widened(platform)
        level = "cell" if same else "platform"
        src = (t["source"] + ("" if same else f" (measured on {measured.get('metric')}/"
                              f"{measured.get('workload')}; widened for {metric}/{workload})"))
        return HierarchyChoice(NoisePrior(tau_w, sigma, name=f"{platform}:{level}", source=src),
                               level, cell, t.get("n_runs", 0), t.get("n_cells", 0),
                               t.get("n_groups", 0), src)

    def _widened(self, platform: str) -> tuple[ScalePrior, ScalePrior]:
        """(sigma, tau) of ``platform``'s embedded prior, widened by the global spread."""
        t = self.tau[platform]
        omega = self.nodes["global"].omega if "global" in self.nodes else DEFAULT_OMEGA
        return (_widen(ScalePrior.from_dict(t["sigma"]), 4.0 * omega**2),
                _widen(ScalePrior.from_dict(t["tau"]), 4.0 * omega**2))

    def to_dict(self) -> dict:
        widened = {}
        for p in sorted(self.tau):
            sigma, tau = self._widened(p)
            widened[p] = {"sigma": sigma.to_dict(), "tau": tau.to_dict()}
        return {"schema": SCHEMA, "sources": self.sources, "tau": self.tau,
                "nodes": {k: v.to_dict() for k, v in sorted(self.nodes.items())},
                "widened": widened}

    @classmethod
    def from_dict(cls, d: dict) -> "NoiseHierarchy":
        return cls({k: Node.from_dict(k, v) for k, v in d["nodes"].items()}, d["tau"],
                   d.get("sources", {}), d.get("widened", {}))


def fit_hierarchy(cells: Iterable[ReplicateCell], tau: dict[str, dict], *,
                  sources: dict | None = None) -> NoiseHierarchy:
    """Fit every node of the tree, top-down, from replicate cells.

    Parameters
    ----------
    cells : iterable of ReplicateCell
    tau : dict
        Per canonical platform: ``{"tau": ScalePrior dict, "sigma": ScalePrior dict (used when
        the platform has no replicate cell), "source": str, "measured_on": {metric, workload}}``.
    sources : dict, optional
        Provenance stored with the fit (e.g. ``{"runs": "examples/runs/tps_runs.csv"}``).

    Returns
    -------
    NoiseHierarchy
    """
    cells = list(cells)
    tree: dict[str, tuple[str, str | None, list[ReplicateCell]]] = {}

    def add(key, level, parent, c):
        tree.setdefault(key, (level, parent, []))[2].append(c)

    for c in cells:
        fam = metric_family(c.metric)
        add("global", "global", None, c)
        add(c.platform, "platform", "global", c)
        add(f"{c.platform}/{fam}", "family", c.platform, c)
        add(f"{c.platform}/{c.metric}/{c.workload}", "cell", f"{c.platform}/{fam}", c)

    def arrays(cs):
        return np.array([c.s2 for c in cs]), np.array([c.df for c in cs], float)

    # unpooled fits give the spread of log s0 between siblings (omega of their parent)
    raw: dict[str, float] = {}
    for key, (level, parent, cs) in tree.items():
        if len(cs) >= MIN_OWN_CELLS:
            raw[key] = _fit_node(*arrays(cs), None, DEFAULT_OMEGA)[1]
    children: dict[str, list[str]] = {}
    for key, (level, parent, cs) in tree.items():
        if parent is not None:
            children.setdefault(parent, []).append(key)

    def omega_of(key):
        own = [raw[k] for k in children.get(key, []) if k in raw]
        if len(own) >= 2:
            return max(float(np.std(own, ddof=1)), 0.1)
        parent = tree[key][1]
        return omega_of(parent) if parent else DEFAULT_OMEGA

    order = {"global": 0, "platform": 1, "family": 2, "cell": 3}
    nodes: dict[str, Node] = {}
    for key in sorted(tree, key=lambda k: (order[tree[k][0]], k)):
        level, parent, cs = tree[key]
        s2, df = arrays(cs)
        om_parent = omega_of(parent) if parent else DEFAULT_OMEGA
        pp = (nodes[parent].log_nu, nodes[parent].log_s0) if parent else None
        lnu, ls0, v = _fit_node(s2, df, pp, om_parent)
        nodes[key] = Node(key, level, lnu, ls0, v, omega_of(key), len(cs),
                          int(df.sum() + len(cs)), len({c.run_group for c in cs}))
    return NoiseHierarchy(nodes, dict(tau), dict(sources or {}))


def load_hierarchy() -> NoiseHierarchy:
    """The shipped hierarchy, ``models/data/noise_hierarchy.json`` (see ``bench`` / calibrate)."""
    text = resources.files("models").joinpath("data/noise_hierarchy.json").read_text("utf-8")
    return NoiseHierarchy.from_dict(json.loads(text))


def wide_prior() -> NoisePrior:
    """:data:`WIDE`, the prior of an unknown platform."""
    return WIDE
