"""The comparison of config B with config A, as every command models it.

``planner verdict``, ``planner repeats --runs`` and the verdict's "to settle" advice read the
same runs the same way through this module: the rows of A and B (filters applied, warm-up
passes dropped), the platform, how the runs are grouped (each arm one session when the
machines are unknown), which runs are cold first runs, the metric's direction and the noise
prior. :func:`from_table` and :func:`from_values` build a :class:`Comparison`; its
:meth:`Comparison.data` is the model's :class:`~models.stats.tps_model.TPSData` and
:func:`fit` its posterior, so the same runs give the same posterior in every command.

Errors name plain fields (``a``, ``platform``, ``prior``); the commands spell them as options.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from models.stats.noise import NoisePrior
from models.stats.posterior import Posterior
from models.stats.tps_model import TPSData
from planner.decide.direction import read_direction
from planner.errors import InputError
from planner.io.rows import instance_key
from planner.io.runs import RunsTable
from planner.results.counts import count
from planner.results.verdict import OUTLIER_MIN_RUNS, OUTLIER_Z

__all__ = ["Comparison", "SESSION_NOTE", "Selection", "build_data", "check_identifiable",
           "measured_runs", "warmed_sessions",
           "cold_groups", "cold_only_notes", "grouping", "grouping_note", "cold_runs", "fit", "from_table", "from_values",
           "machines_unknown", "one_machine", "one_session_per_arm", "LAYOUTS", "quick_platform_notes", "runs_listing",
           "OUTLIER_Z", "RUNS_CAP"]


def warmed_sessions(table: RunsTable) -> set[tuple[str, str, str]]:
    """The (config, instance, session) groups of ``table`` that had an explicit warm-up pass
    (a row of ``phase`` ``warmup`` on a named instance; the session is ``session``, else
    ``run_group``): the warm-up took the cold start, so their first measured run is warm.

    One rule for the verdict's reading (:func:`measured_runs`) and the cold prior's fit
    (:func:`planner.decide.cold_fit.cold_cells`). It stays out of
    :meth:`planner.io.table.RunsTable.cold_flags`, which the shipped noise hierarchy was
    fitted with (commit a7ddbdb)."""
    return {(r.config, r.instance, r.session or r.run_group) for r in table.runs
            if r.phase == "warmup" and r.instance}


def measured_runs(table: RunsTable, *configs: str) -> tuple[RunsTable, np.ndarray]:
    """The measured runs of ``configs`` (A and B; warm-up passes dropped) and their cold
    flags, shape (n_runs,), bool: the one reading of which runs are cold first runs, for
    ``planner verdict``, ``planner repeats --runs`` (and the verdict's "to settle" advice),
    ``planner rank`` and the runs every result lists.

    The flags are :meth:`planner.io.table.RunsTable.cold_flags` (a ``cold`` column, else
    ``rep`` 0 / the earliest timestamp of a session holding other runs), with the warm-up
    rule of :func:`warmed_sessions`: a run without an explicit ``cold`` value whose config
    had a warm-up pass in its session is warm.
    """
    sub = table.measured().select(list(configs))
    flags = sub.cold_flags()
    warmed = warmed_sessions(table.select(list(configs)))
    if warmed:
        flags = flags & ~np.array([r.cold is None and
                                   (r.config, r.instance, r.session or r.run_group) in warmed
                                   for r in sub.runs], bool)
    return sub, flags


def build_data(table: RunsTable, a: str, b: str, *, use_cold: bool | None = None,
               lower_is_better: bool | None = None) -> TPSData:
    """Reduce the rows of configs A and B to :class:`TPSData` (log TPS, indices, cold flags).

    ``lower_is_better`` (default: inferred from the rows' metric, as
    :attr:`planner.io.runs.RunsTable.lower_is_better`) sets the cold column's sign: a cold run
    of a latency is *higher* (:attr:`models.stats.tps_model.TPSData.cold_sign`).

    Raises
    ------
    InputError
        A or B missing, A == B, or mixed metric / workload / platform among their rows.
    """
    if a == b:
        raise InputError("A and B name the same config", field="b")
    sub, flags = measured_runs(table, a, b)
    sub.check_homogeneous()
    sub.platform()
    order = [a, b]
    # positions, not list.index(run), which compares runs field by field: O(n^2)
    pos = sorted(range(len(sub.runs)), key=lambda k: order.index(sub.runs[k].config))
    runs = [sub.runs[k] for k in pos]
    cold = flags[pos]
    inst = [instance_key(r, k) for k, r in enumerate(runs)]
    sess = [f"{r.instance}/{r.session or r.run_group}" for r in runs]
    lower = sub.lower_is_better if lower_is_better is None else bool(lower_is_better)
    return TPSData.from_arrays([r.tps for r in runs], [r.config for r in runs], inst, cold,
                               sess, use_cold=use_cold, lower_is_better=lower,
                               cold_group=cold_groups(runs, inst))


def cold_groups(runs, inst: list[str]) -> list[str]:
    """The cold group of each run: its server session when the rows name one (``session``
    column), else its instance (``inst``, the model's instance labels). The cold runs of
    one group share one slowdown (:mod:`models.stats.tps_cold`)."""
    return [f"{i}/{r.session}" if r.session else i for r, i in zip(runs, inst)]


def machines_unknown(sub: RunsTable, platform: str | None) -> bool:
    """True when the runs of ``sub`` (A's and B's) name no platform and no instance: their
    machines are as unknown as a quick form's, so they are read by
    :func:`one_session_per_arm` (``planner verdict`` and ``repeats --runs`` alike)."""
    return platform is None and not any(r.instance for r in sub.runs)


def one_session_per_arm(table: RunsTable) -> RunsTable:
    """The runs with each config's runs taken as one session on one machine of its own.

    For runs whose machines are unknown (quick forms without ``--platform``, and a runs table
    with no ``instance`` values and no platform): the offset between A's and B's machines is
    then noise their spread cannot measure, the cautious reading. Reading every run as its
    own machine instead would let the runs' spread stand for the machine-to-machine noise
    and give decisive labels that the same runs on two named machines do not get.

    Parameters
    ----------
    table : RunsTable
        The runs (their ``instance`` is replaced by ``<config>-session``).

    Returns
    -------
    RunsTable
        A new table; ``table`` is not modified.
    """
    return RunsTable([replace(r, instance=f"{r.config}-session") for r in table.runs],
                     table.path, reader=table.reader)


#: The note of :func:`one_session_per_arm`.
SESSION_NOTE = ("each arm's runs are taken as one session: the offset between A's and B's "
                "sessions is noise their spread cannot measure (name the platform, pair the "
                "runs, state the between-instance CV, give an instance column, or state the "
                "session layout when every run was on one machine)")

#: The session layouts a quick form may state for runs all on one machine: what each means
#: (the notes and ``grouping``'s session source) and how a run's session is named from its
#: config and its position k in the arm.
LAYOUTS = {
    "per-arm": ("A's runs in one server session and B's in another on the same machine: the "
                "offset between the two sessions is noise their spread cannot measure",
                lambda config, k: f"{config}-session"),
    "per-run": ("each run its own session on one machine (a fresh process or server per run, "
                "as benchmark_throughput runs each trial): the runs' spread holds the "
                "session-to-session noise",
                lambda config, k: f"{config}-run-{k}"),
    "shared": ("A's and B's runs in one server session on one machine (interleaved): no "
               "offset between them beyond the run-to-run noise",
               lambda config, k: ""),
}


def one_machine(table: RunsTable, layout: str) -> RunsTable:
    """The quick form's runs on one machine, their sessions as ``layout`` states.

    Parameters
    ----------
    table : RunsTable
        The runs of A and B (their instances are replaced by one, ``machine``).
    layout : str
        A key of :data:`LAYOUTS`: ``per-arm`` (each config's runs one session), ``per-run``
        (each run its own session), ``shared`` (one session holding every run).

    Returns
    -------
    RunsTable
        A new table; ``table`` is not modified.

    Raises
    ------
    InputError
        An unknown layout (field ``sessions``).
    """
    if layout not in LAYOUTS:
        raise InputError(f"unknown session layout {layout!r} ({', '.join(LAYOUTS)})",
                         field="sessions")
    name = LAYOUTS[layout][1]
    seen: dict[str, int] = {}
    runs = []
    for r in table.runs:
        k = seen.get(r.config, 0)
        seen[r.config] = k + 1
        runs.append(replace(r, instance="machine", session=name(r.config, k)))
    return RunsTable(runs, table.path, reader=table.reader)


def cold_runs(table: RunsTable, a: str, b: str) -> list[dict]:
    """The runs of A and B treated as cold first runs, as ``{config, rep, instance, tps}``.

    Same selection and flags as :func:`build_data` (:func:`measured_runs`).
    """
    sub, flags = measured_runs(table, a, b)
    return [{"config": r.config, "rep": r.rep, "instance": r.instance, "tps": r.tps}
            for r, c in zip(sub.runs, flags) if c]


def cold_only_notes(table: RunsTable, a: str, b: str) -> list[str]:
    """One note per config whose runs are all cold first runs (its warm level is then known
    only through the cold prior, :func:`models.stats.tps_cold.cold_prior_components`)."""
    sub, flags = measured_runs(table, a, b)
    out = []
    for who, c in (("A", a), ("B", b)):
        mine = [f for r, f in zip(sub.runs, flags) if r.config == c]
        if mine and all(mine):
            out.append(f"{who}'s only run is a cold first run: add a warm run" if len(mine) == 1
                       else f"{who}'s only runs ({len(mine)}) are cold first runs: add a warm run")
    return out


def grouping(comp: "Comparison", data: TPSData) -> dict:
    """How the runs of a comparison were grouped, and from what: the result's ``grouping``.

    Returns
    -------
    dict
        ``instances`` (the model's instances) and ``instance_source``; ``sessions``
        (distinct (instance, session) pairs), ``session_source`` and ``sessions_modelled``
        (a session level within instances, :func:`models.stats.tps_exact.has_sessions`);
        ``cold_groups`` (one slowdown each), ``cold_group_by`` (``session`` or
        ``instance``) and ``cold_source`` (:meth:`planner.io.table.RunsTable.cold_source`).
    """
    from models.stats.tps_exact import has_sessions

    sub = comp.table.measured().select([comp.a, comp.b])
    runs = sub.runs
    reader = sub.reader
    if comp.sessions:
        isrc = ("none: each arm's runs read as one session on a machine of its own (no "
                "instance column and no platform)")
    elif comp.layout:
        isrc = "one machine (the stated session layout)"
    elif any(r.instance for r in runs):
        isrc = ("the instance column" if reader == "table" else
                f"the {reader} reader (the instance given, else what the file names)")
        if any(r.run_group for r in runs):
            isrc += ", within each run_group"
    else:
        isrc = "none: each run its own instance"
    if comp.layout:
        ssrc = f"the stated layout, {comp.layout}"
    elif any(r.session for r in runs):
        ssrc = "the session column"
    elif any(r.run_group for r in runs) and not comp.sessions:
        ssrc = "the run_group column"
    else:
        ssrc = "none named: each instance is its own session"
    pairs = set(zip(data.instance.tolist(), data.session.tolist())) \
        if data.session is not None else set(data.instance.tolist())
    return {"instances": int(data.n_instances), "instance_source": isrc,
            "sessions": len(pairs), "session_source": ssrc,
            "sessions_modelled": bool(has_sessions(data)),
            "cold_groups": int(data.n_cold),
            "cold_group_by": "session" if any(r.session for r in runs) else "instance",
            "cold_source": sub.cold_source() + (
                "; a first run after a warm-up pass of its session read warm"
                if warmed_sessions(comp.table.select([comp.a, comp.b])) else "")}


def grouping_note(g: dict) -> str:
    """The note of :func:`grouping`."""
    sess = (f"{count(g['sessions'], 'server session')} ({g['session_source']}), a session "
            "offset modelled within each instance" if g["sessions_modelled"] else
            f"no instance holds two sessions, so none is modelled apart ({g['session_source']})")
    cold = (f"{count(g['cold_groups'], 'cold group')}, one slowdown per {g['cold_group_by']}"
            if g["cold_groups"] else "no cold run")
    return (f"grouping read: {count(g['instances'], 'instance')} ({g['instance_source']}); "
            f"{sess}; cold flags: {g['cold_source']} ({cold})")


def check_identifiable(data: TPSData, prior: NoisePrior, prior_given: bool, path: str) -> None:
    """Refuse a fit whose noise is neither in the data nor in a prior."""
    if not prior_given and data.residual_df() <= 0:
        counts = np.bincount(data.config, minlength=data.n_configs)
        lone = [data.config_names[k] for k in range(data.n_configs) if counts[k] < 2]
        raise InputError(
            f"config '{lone[0]}' has one run and no noise prior: the data cannot tell noise "
            "from effect; give a noise prior (a platform or a prior file) or more runs",
            file=path, field="tps")


def fit(data: TPSData, prior: NoisePrior, engine: str, *, seed: int = 0,
        likelihood: str = "normal", draws: int = 1000, chains: int = 2
        ) -> tuple[Posterior, dict]:
    """Fit with the chosen engine; return (posterior, diagnostics dict).

    Both engines return a :class:`models.stats.posterior.Posterior`.
    """
    if engine == "exact":
        if likelihood != "normal":
            raise InputError("the exact engine has the Normal likelihood only; use the mcmc "
                             "engine for the Student-t likelihood", field="likelihood")
        from models.stats.tps_exact import fit_exact

        post = fit_exact(data, prior)
        diag = {"engine": "exact", "grid_points": int(post.w.size),
                "grid_edge_mass": post.edge_mass, "ok": post.edge_mass < 1e-3,
                **({"cold": post.cold_info} if getattr(post, "cold_info", None) else {}),
                "messages": [] if post.edge_mass < 1e-3 else
                ["posterior mass at the upper edge of the noise grid; widen the prior"]}
        return post, diag
    if engine == "mcmc":
        from models.stats.tps_mcmc import fit_mcmc

        post = fit_mcmc(data, prior, likelihood=likelihood, draws=draws, chains=chains, seed=seed)
        return post, dict(post.diagnostics)
    raise InputError(f"unknown engine {engine!r} (exact or mcmc)", field="engine")


@dataclass(frozen=True)
class Selection:
    """Which rows of a runs table are compared: each field None keeps every value.

    ``platform`` also keeps rows whose platform is blank (a table without a platform column,
    or what ``planner ingest`` writes from tools' files), in every command alike.
    """

    platform: str | None = None
    metric: str | None = None
    workload: str | None = None
    run_group: str | None = None


@dataclass
class Comparison:
    """A's and B's runs as the model reads them, their platform and their noise prior.

    Attributes
    ----------
    table : RunsTable
        The runs of A and B only (filters applied; each arm one session when ``sessions``).
    a, b : str
        Config labels; Δ = B − A.
    platform : str or None
        The runs' platform (given, else the rows'), None when unknown.
    sessions : bool
        Each arm's runs read as one session on a machine of its own
        (:func:`one_session_per_arm`).
    layout : str
        The session layout the quick form stated for runs all on one machine (a key of
        :data:`LAYOUTS`, :func:`one_machine`); empty when none was stated.
    prior : NoisePrior or None
        The noise prior (None: weakly informative, the data must carry the noise).
    prior_label : str
    choice : planner.decide.priors.PriorChoice or None
        How the prior was chosen (None when the caller gave the prior itself).
    notes : list of str
        What the reading of the runs and the prior choice imply, in order.
    use_cold : bool or None
        Model the cold-start indicator (None: when some run is flagged cold).
    lower_is_better : bool or None
        The metric's direction as given (None: from the rows' metric or column name).
    plain : bool
        The runs are plain numbers (the quick forms): the direction may be assumed.
    value_name : str or None
        The value column's name when the rows name no metric (``mean_tpot_ms``).
    """

    table: RunsTable
    a: str
    b: str
    platform: str | None = None
    sessions: bool = False
    layout: str = ""
    prior: NoisePrior | None = None
    prior_label: str = "weak"
    choice: object = None
    notes: list = field(default_factory=list)
    use_cold: bool | None = None
    lower_is_better: bool | None = None
    plain: bool = False
    value_name: str | None = None
    _data: dict = field(default_factory=dict, repr=False, compare=False)

    def direction(self) -> tuple[str, str, str | None]:
        """(direction, source, note): :func:`planner.decide.direction.read_direction`."""
        return read_direction(self.table, self.lower_is_better, plain=self.plain)

    @property
    def arm_sessions(self) -> bool:
        """A's and B's runs never share a server session (each arm read as one session of
        its own, a stated per-arm layout, or a table whose sessions nested in instances each
        hold one config only): a new A/B pair is then two more sessions, whose offset it
        does not cancel, and pairs are not planned."""
        if self.sessions or self.layout == "per-arm":
            return True
        from models.stats.designs import units
        from models.stats.tps_exact import has_sessions

        data = self.data()
        if not has_sessions(data):
            return False
        u = units(data)   # one index per (instance, session)
        return np.intersect1d(u[data.config == 0], u[data.config == 1]).size == 0

    @property
    def lower(self) -> bool:
        return self.direction()[0] == "lower_is_better"

    def data(self, use_cold: bool | None = None) -> TPSData:
        """The model's data (log values, configs 0 = A and 1 = B, instances, sessions, cold
        flags); ``use_cold`` False drops the cold column (default: :attr:`use_cold`). Built
        once per setting."""
        key = self.use_cold if use_cold is None else use_cold
        if key not in self._data:
            self._data[key] = build_data(self.table, self.a, self.b, use_cold=key,
                                         lower_is_better=self.lower)
        return self._data[key]

    def metric(self) -> str | None:
        """The rows' metric, else the value column's name (its unit: ms, s, TPS)."""
        names = sorted({r.metric for r in self.table.runs if r.metric})
        return names[0] if names else (self.value_name or None)

    def prior_info(self) -> dict:
        """The result's ``prior`` additions: the choice's fields and the notes."""
        base = self.choice.to_dict() if self.choice is not None else {}
        return {**base, "notes": list(self.notes)}


def _cell(sub: RunsTable) -> tuple[str | None, str | None]:
    """The single metric and workload of A's and B's rows (None when there are several or
    none): the cell of the noise hierarchy the prior is chosen for."""
    ms = {r.metric for r in sub.runs if r.metric}
    ws = {r.workload for r in sub.runs if r.workload}
    return (ms.pop() if len(ms) == 1 else None), (ws.pop() if len(ws) == 1 else None)


def from_table(table: RunsTable, a: str, b: str, *, selection: Selection = Selection(),
               prior: str | None = None, cv: str | None = None, cv_instance: str | None = None,
               aa_runs: str | None = None, use_cold: bool | None = None,
               lower_is_better: bool | None = None, value_name: str | None = None,
               prior_platform: str | None = None) -> Comparison:
    """The comparison of B with A in a runs table.

    Parameters
    ----------
    table : RunsTable
        The runs as read (:func:`planner.io.runs.read_runs`).
    a, b : str
        Config labels.
    selection : Selection
        Rows kept (platform, metric, workload, run group).
    prior, cv, cv_instance, aa_runs : str, optional
        The prior settings (:func:`planner.decide.priors.resolve_prior`).
    use_cold, lower_is_better, value_name
        See :class:`Comparison`.
    prior_platform : str, optional
        The platform the prior is chosen for when it differs from the selection's spelling
        (a canonical name); default the runs' platform.

    Raises
    ------
    InputError
        No rows left after the filters, A or B missing, rows of several platforms, or a bad
        prior setting.
    """
    from planner.decide.priors import resolve_prior

    rows = table.filter(platform=selection.platform, metric=selection.metric,
                        workload=selection.workload, run_group=selection.run_group,
                        blank_platform=True)
    if not rows.has_rows:
        raise InputError("no rows left after the platform, metric, workload and run_group "
                         "filters", file=table.path, field="platform")
    sub = rows.select([a, b])
    plat = selection.platform if selection.platform is not None else (sub.platform() or None)
    # no instance column and no platform: the machines are as unknown as in the quick form,
    # so the same cautious reading (the same runs give the same answer)
    sessions = machines_unknown(sub, plat)
    if sessions:
        sub = one_session_per_arm(sub)
    metric, workload = _cell(sub)
    choice = resolve_prior(prior, prior_platform or plat, metric, workload, cv=cv,
                           cv_instance=cv_instance, aa_runs=aa_runs)
    return Comparison(sub, a, b, platform=plat, sessions=sessions, prior=choice.prior,
                      prior_label=choice.label, choice=choice,
                      notes=list(choice.notes) + ([SESSION_NOTE] if sessions else []),
                      use_cold=use_cold, lower_is_better=lower_is_better,
                      value_name=value_name)


def quick_platform_notes(platform: str, n: int, paired: bool) -> tuple[list[str], bool]:
    """(notes, known) for the quick forms' platform: whether it has noise data, and what the
    runs are then taken to be (each run its own allocation on a known platform)."""
    if not platform:
        return [], False
    from models.stats.noise_hierarchy import load_hierarchy
    from planner.io.hints import closest as _closest
    from planner.io.platforms import canonical_platform

    known = load_hierarchy().platforms()
    if canonical_platform(platform) in known:
        if n > 1 and not paired:
            return [f"each run is taken as its own allocation on {platform} (as each HF job "
                    "is): runs of one arm that shared a machine read as more evidence than "
                    "they are; give them as a table with an instance column"], True
        return [], True
    near = _closest(platform, known)
    return [f"platform '{platform}' has no noise data (known: {', '.join(known)}"
            + (f"; did you mean '{near}'?" if near else "") + "): the weak prior, and "
            "each arm's runs read as one session"], False


def from_values(a_values: Sequence[float] | None, b_values: Sequence[float] | None, *,
                a_summary: str | None = None, b_summary: str | None = None,
                paired: bool = False, platform: str | None = None, prior: str | None = None,
                cv: str | None = None, cv_instance: str | None = None,
                aa_runs: str | None = None, use_cold: bool | None = None,
                lower_is_better: bool | None = None, layout: str | None = None
                ) -> Comparison:
    """The comparison of the quick forms: values (or summaries) of A and B typed in.

    Without a platform with noise data, each unpaired arm's runs are read as one session
    (:func:`one_session_per_arm`); on a known platform each run is its own allocation.
    ``layout`` (a key of :data:`LAYOUTS`) states instead that every run was on one machine
    and how its server sessions went (:func:`one_machine`), whatever the platform.

    Raises
    ------
    InputError
        ``paired`` with unequal counts (field ``paired``), ``layout`` with ``paired`` or
        unknown (field ``sessions``), values out of range, a bad summary or prior setting.
    """
    from planner.decide.priors import resolve_prior
    from planner.io.runs import runs_from_values

    plat = platform or ""
    if layout is not None and paired:
        raise InputError("paired runs already say how A and B share machines (the k-th "
                         "runs one instance); a session layout is for unpaired runs on one "
                         "machine", field="sessions")
    if a_summary is not None or b_summary is not None:
        from planner.io.summaries import quick_table

        table = quick_table(a_summary, b_summary, a_values, b_values, platform=plat,
                            paired=paired)
        notes, sessions = [], False
    else:
        va, vb = list(a_values or []), list(b_values or [])
        if paired and len(va) != len(vb):
            raise InputError(f"paired runs need as many runs of A as of B ({len(va)} vs "
                             f"{len(vb)})", field="paired")
        table = runs_from_values(va, vb, platform=plat, paired=paired)
        # machines unknown (no platform, or one without noise data): the cautious reading
        notes, known = quick_platform_notes(plat, max(len(va), len(vb)), paired)
        sessions = not known and not paired
    if layout is not None:
        # the user's statement replaces the reading from the platform
        table = one_machine(table.select(["A", "B"]), layout)
        notes = [f"every run on one machine, as stated ({layout}): {LAYOUTS[layout][0]}"]
        sessions = False
    if sessions:
        table = one_session_per_arm(table.select(["A", "B"]))
    choice = resolve_prior(prior, plat, None, None, cv=cv, cv_instance=cv_instance,
                           aa_runs=aa_runs)
    return Comparison(table, "A", "B", platform=plat, sessions=sessions,
                      layout=layout or "", prior=choice.prior,
                      prior_label=choice.label, choice=choice,
                      notes=list(choice.notes) + ([SESSION_NOTE] if sessions else []) + notes,
                      use_cold=use_cold, lower_is_better=lower_is_better, plain=True)


#: Most entries of a result's ``runs`` (a quick form of 2 x 10,000 values stays small); the
#: outliers are kept first, the count left out is ``runs_truncated``.
RUNS_CAP = 2000
#: A group's SD (log scale, >= 3 runs) above this many times the median of the prior's
#: run-to-run scale is "far above" it (:func:`runs_listing`'s note): the shipped platforms'
#: sigma priors are so heavy-tailed (local-a10g: df 0.71, 97.5 % point 2.6 %) that their upper
#: range would never flag a group.
_SPREAD_FACTOR = 10.0


def _robust_z(x: np.ndarray) -> np.ndarray:
    """Modified z-scores 0.6745 (x - median) / MAD; with MAD 0, (x - median) /
    (1.253314 MeanAD) (the same scale for a Normal sample); 0 when every value is equal."""
    med = float(np.median(x))
    mad = float(np.median(np.abs(x - med)))
    if mad > 0:
        return 0.6745 * (x - med) / mad
    mean_ad = float(np.mean(np.abs(x - med)))
    if mean_ad > 0:
        return (x - med) / (1.253314 * mean_ad)
    return np.zeros_like(x)


def runs_listing(comp: Comparison, data: TPSData) -> tuple[list[dict], int, list[str]]:
    """The runs of a comparison as the result shows them, and notes on unusual ones.

    Parameters
    ----------
    comp : Comparison
    data : TPSData
        The data the model used (``comp.data()``: its cold flags).

    Returns
    -------
    (list of dict, int, list of str)
        Up to :data:`RUNS_CAP` entries ``{config, arm ("a" | "b"), instance, session, rep,
        cold, value, outlier, unstable}`` (``value`` in the metric's unit; ``cold`` as the
        model used it; ``outlier``: robust z beyond :data:`OUTLIER_Z` within its (config,
        instance, session) group of at least :data:`OUTLIER_MIN_RUNS` warm runs;
        ``unstable``: that group's SD (>= 3 runs) is more
        than :data:`_SPREAD_FACTOR` times the prior's median run-to-run scale), in the
        table's order; when there are more, the
        outliers and then both arms' first runs alike are kept; the number left out; and at most three notes (runs that
        completed fewer requests than they sent: a ``requests`` field ``"done/sent"``,
        :func:`planner.io.formats.vllm.requests_done`; outliers; groups spread far above the
        prior's run-to-run scale), saying that the verdict keeps them.
    """
    sub, flags = measured_runs(comp.table, comp.a, comp.b)
    runs = sub.runs
    if not data.use_cold:
        flags = np.zeros(len(runs), bool)
    groups: dict[tuple, list[int]] = {}
    for k, r in enumerate(runs):
        groups.setdefault((r.config, r.instance, r.session or r.run_group), []).append(k)
    logv = np.log(np.array([r.tps for r in runs], float))
    outlier = np.zeros(len(runs), bool)
    wide = []
    upper = None
    sp = comp.prior.sigma if comp.prior is not None else None
    for key, idx in groups.items():
        # a cold first run the model reads as cold is not an outlier of its warm runs
        idx = [k for k in idx if not flags[k]]
        if len(idx) < 3:
            continue
        x = logv[idx]
        if len(idx) >= OUTLIER_MIN_RUNS:
            outlier[idx] = np.abs(_robust_z(x)) > OUTLIER_Z
        if sp is not None:
            if upper is None:
                from planner.decide.prior_conflict import prior_median

                upper = prior_median(sp)
            sd = float(np.std(x, ddof=1))
            if sd > _SPREAD_FACTOR * upper:
                wide.append((key, sd))
    entries = []
    unstable = {k for key, _ in wide for k in groups[key]}  # runs of a far-spread group
    for k, r in enumerate(runs):
        entries.append({"config": r.config, "arm": "a" if r.config == comp.a else "b",
                        "instance": r.instance or None,
                        "session": (r.session or r.run_group) or None,
                        "rep": r.rep, "cold": bool(flags[k]), "value": float(r.tps),
                        "outlier": bool(outlier[k]), "unstable": k in unstable})
    truncated = 0
    if len(entries) > RUNS_CAP:
        keep = set(np.flatnonzero(outlier)[:RUNS_CAP].tolist())
        # then the arms' runs in turn (A's first, B's first, A's second, ...)
        ia = [k for k, e in enumerate(entries) if e["arm"] == "a"]
        ib = [k for k, e in enumerate(entries) if e["arm"] == "b"]
        turns = [k for pair in zip(ia, ib) for k in pair] + ia[len(ib):] + ib[len(ia):]
        for k in turns:
            if len(keep) >= RUNS_CAP:
                break
            keep.add(k)
        truncated = len(entries) - len(keep)
        entries = [e for k, e in enumerate(entries) if k in keep]
    notes = []
    short = [(r, m) for r in runs
             if (m := re.fullmatch(r"(\d+)/(\d+)", str(r.extra.get("requests") or "")))
             and int(m[1]) < int(m[2])]
    if short:
        which = "; ".join(f"{r.config} {r.tps:g}: {m[1]} of {m[2]} requests"
                          for r, m in short[:4])
        notes.append(f"{count(len(short), 'run')} completed fewer requests than "
                     f"{'it' if len(short) == 1 else 'they'} sent ({which}"
                     + ("; and more" if len(short) > 4 else "") + "): failed requests return "
                     "no tokens while the run's duration counts them, so such a run measures "
                     "a smaller workload than the others; the verdict keeps "
                     f"{'it' if len(short) == 1 else 'them'}: run again or leave out")
    n_out = int(outlier.sum())
    if n_out:
        which = ", ".join(f"{runs[k].config} {runs[k].tps:g}" + (
            f" (rep {runs[k].rep})" if runs[k].rep is not None else "")
            for k in np.flatnonzero(outlier)[:4])
        notes.append(f"{count(n_out, 'run')} {'lies' if n_out == 1 else 'lie'} far from the others of their instance and session "
                     f"(robust z beyond {OUTLIER_Z:g}: {which}"
                     + (" and more" if n_out > 4 else "") + "); the verdict keeps them, so "
                     "they widen its run-to-run noise: check them for a fault before "
                     "dropping any")
    if wide:
        (cfg, inst, sess), sd = max(wide, key=lambda w: w[1])
        where = "/".join(p for p in (inst, sess) if p and not p.endswith("-session")) or "its runs"
        notes.append(f"{count(len(wide), 'group')} of runs spread far above the {comp.prior_label} "
                     f"prior's run-to-run scale (widest: {cfg} on {where}, SD "
                     f"{100 * math.expm1(sd):.2g} % against the prior's median {100 * upper:.2g} %); "
                     "the verdict keeps them and reads the spread as run-to-run noise")
    return entries, truncated, notes
