"""The runs table: a validated list of :class:`planner.io.rows.Run` and how commands pick
their rows from it (select configs, filter on columns, drop warm-ups, flag cold runs, check
that rows are comparable). Errors name the file's values and a near spelling
(:mod:`planner.io.hints`). Tables are read by :func:`planner.io.runs.read_runs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from planner.errors import InputError
from planner.io.hints import listing, name_hint
from planner.io.platforms import canonical_platform
from planner.io.rows import Run

__all__ = ["CENSUS_COLUMNS", "RunsTable"]


def _warm_metric(metric: str | None) -> bool:
    """Metrics whose first run after a server start is not slow in the shipped runs (the
    short probes; see :meth:`RunsTable.cold_flags`)."""
    return bool(metric) and metric.startswith("probe")


#: The columns of a census key (:attr:`RunsTable.census`), in order.
CENSUS_COLUMNS = ("config", "platform", "metric", "workload", "run_group", "phase")


@dataclass
class RunsTable:
    """A validated list of runs read from ``path``.

    A table read for some configs only (``read_runs(..., configs=...)``) holds the runs of
    those configs (``kept``) and, in ``census``, the distinct
    (:data:`CENSUS_COLUMNS`) of every row of the file in order of first appearance: enough
    for :meth:`configs`, :meth:`filter`, :meth:`measured` and :meth:`select` to answer, and
    to word their errors, exactly as on the whole table. Other methods see the kept runs
    only; call them on a :meth:`select` of kept configs (a full table again).
    """

    runs: list[Run]
    path: str = "<runs>"
    #: Distinct census keys of every row (None: ``runs`` is every row of the file).
    census: dict | None = field(default=None, repr=False, compare=False)
    #: The configs whose runs ``runs`` holds when ``census`` is given.
    kept: frozenset | None = field(default=None, repr=False, compare=False)
    #: What read the rows: ``table`` (a runs table), else the tool format's name
    #: (:func:`planner.io.formats.format_names`); says where instances, sessions and cold
    #: flags came from (:meth:`cold_source`).
    reader: str = field(default="table", compare=False)
    #: Configs whose every row is a warm-up pass (set by :meth:`measured`, which drops them):
    #: :meth:`select` says so rather than that they are not in the file.
    warmup_only: frozenset = field(default=frozenset(), repr=False, compare=False)

    def _like(self, runs: list, census=None, kept=None) -> "RunsTable":
        """A table of ``runs`` read like this one (same path and reader)."""
        return RunsTable(runs, self.path, census, kept, self.reader, self.warmup_only)

    def __len__(self) -> int:
        return len(self.runs)

    @property
    def has_rows(self) -> bool:
        """True when some row is left (a kept run, or a row counted in the census)."""
        return bool(self.runs) or bool(self.census)

    @property
    def configs(self) -> list[str]:
        """Config labels in order of first appearance."""
        if self.census is not None:
            return list(dict.fromkeys(k[0] for k in self.census))
        return list(dict.fromkeys(r.config for r in self.runs))

    def select(self, configs: Iterable[str]) -> "RunsTable":
        """Rows of the given configs (error if one is absent)."""
        configs = list(configs)
        have = set(self.configs)
        for c in configs:
            if c not in have and c in self.warmup_only:
                raise InputError(f"config '{c}' has only warm-up rows (phase 'warmup'), no "
                                 f"measured run; the measured configs: {listing(self.configs)}",
                                 file=self.path, field="phase")
            if c not in have:
                # a table gathered from a results folder (planner next --watch DIR) says so
                where = "folder" if self.path and Path(self.path).is_dir() else "file"
                hint = name_hint(c, self.configs, where)
                raise InputError(f"config '{c}' is not in the {where}{hint}; the {where}'s "
                                 f"configs: {listing(self.configs)}", file=self.path,
                                 field="config")
        keep = set(configs)
        if self.kept is not None and not keep <= self.kept:
            raise ValueError(f"configs {sorted(keep - self.kept)} were not kept when the table "
                             "was read (read_runs configs=...)")
        return self._like([r for r in self.runs if r.config in keep])

    def measured(self) -> "RunsTable":
        """Rows whose ``phase`` is not ``warmup`` (explicit warm-up passes are not measurements)."""
        runs = [r for r in self.runs if r.phase != "warmup"]
        if self.census is not None:
            out = self._like(runs, {k: None for k in self.census if k[5] != "warmup"},
                             self.kept)
        else:
            out = self._like(runs)
        out.warmup_only = self.warmup_only | (frozenset(self.configs) - set(out.configs))
        return out

    def filter(self, *, blank_platform: bool = False, **kv: str | None) -> "RunsTable":
        """Rows whose columns equal the given non-None values (e.g. ``metric="decode_wall"``).

        With ``blank_platform``, a ``platform`` filter also keeps the rows whose platform is
        blank (a table without a ``platform`` column, or what ``planner ingest`` writes from
        tools' files): they take the platform asked for.

        Raises
        ------
        InputError
            A filter drops every row left: names the filter, its value and the values the
            rows hold (field: the column).
        """
        if self.census is not None:
            return self._filter_census(blank_platform, kv)
        rows = self.runs
        applied: list = []
        for k, v in kv.items():
            if v is None:
                continue
            before = rows
            if k == "platform":
                want = canonical_platform(v)
                # canonicalise each distinct name once (a large table repeats a few names)
                match = {p for p in {r.platform for r in rows} if canonical_platform(p) == want
                         or (blank_platform and not p)}
                rows = [r for r in rows if r.platform in match]
            else:
                rows = [r for r in rows if getattr(r, k) == v]
            if before and not rows:
                raise self._no_row(self.runs, lambda r, c: getattr(r, c), applied, k, v,
                                   blank_platform)
            applied.append((k, v))
        return self._like(rows)

    def _no_row(self, items: list, value_of, applied: list, k: str, v: str,
                blank_platform: bool) -> InputError:
        """The error of a filter ``k == v`` that leaves no row of ``items`` (runs, or census
        keys) after the filters ``applied`` (``[(column, value), ...]``): a value absent
        from the file is named with the file's values (and a near spelling, or the Unicode
        normalisation it differs in); a value the file holds, but not with the other
        filters, is named with them and the values each side leaves."""
        def val(it, c):
            x = value_of(it, c)
            return canonical_platform(x) if c == "platform" else x

        def match(it, c, want):
            if c == "platform":
                x = value_of(it, c)
                return canonical_platform(x) == canonical_platform(want) or (
                    blank_platform and not x)
            return value_of(it, c) == want

        def plural(c):
            return c + ("es" if c.endswith("s") else "s")

        with_v = [it for it in items if match(it, k, v)]
        if not applied or not with_v:
            vals = list(dict.fromkeys(val(it, k) for it in items))
            return InputError(f"no row with {k} '{v}'{name_hint(v, vals)}; the file's "
                              f"{plural(k)}: {listing(vals)}", file=self.path, field=k)
        others = " and ".join(f"{c} '{w}'" for c, w in applied)
        left = [it for it in items if all(match(it, c, w) for c, w in applied)]
        parts = [f"rows with {others} have {plural(k)}: "
                 f"{listing(list(dict.fromkeys(val(it, k) for it in left)))}"]
        for c, w in applied:
            vals = list(dict.fromkeys(val(it, c) for it in with_v))
            parts.append(f"rows with {k} '{v}' have {plural(c)}: {listing(vals)}")
        return InputError(f"no row with {k} '{v}' and {others} together (the file has "
                          f"{k} '{v}', but not with {others}); " + "; ".join(parts),
                          file=self.path, field=k)

    def _filter_census(self, blank_platform: bool, kv: dict) -> "RunsTable":
        """:meth:`filter` of a table read for some configs: the census keys stand for the
        rows (same checks, same values listed in the same order)."""
        keys, rows = list(self.census), self.runs
        applied: list = []
        for k, v in kv.items():
            if v is None:
                continue
            if k not in CENSUS_COLUMNS:
                raise ValueError(f"a table read for some configs filters on "
                                 f"{', '.join(CENSUS_COLUMNS)} only, not {k!r}")
            col = CENSUS_COLUMNS.index(k)
            before = keys
            if k == "platform":
                want = canonical_platform(v)
                match = {p for p in {c[1] for c in keys} if canonical_platform(p) == want
                         or (blank_platform and not p)}
                keys = [c for c in keys if c[1] in match]
                rows = [r for r in rows if r.platform in match]
            else:
                keys = [c for c in keys if c[col] == v]
                rows = [r for r in rows if getattr(r, k) == v]
            if before and not keys:
                raise self._no_row(list(self.census),
                                   lambda c, name: c[CENSUS_COLUMNS.index(name)], applied, k,
                                   v, blank_platform)
            applied.append((k, v))
        return self._like(rows, dict.fromkeys(keys), self.kept)

    def check_homogeneous(self, columns: Sequence[str] = ("metric", "workload")) -> None:
        """Refuse to pool rows of different ``metric`` or ``workload``.

        Raises
        ------
        InputError
            Naming the column, its distinct values and the first row of the second value.
        """
        for col in columns:
            seen: dict[str, int] = {}
            for r in self.runs:
                seen.setdefault(getattr(r, col), r.line)
            if len(seen) > 1:
                vals = ", ".join(f"'{v or '(blank)'}'" for v in seen)
                second = list(seen.values())[1]
                why = {"metric": "these are not on one scale (decode_wall reads ~7.7% below "
                                 "bench_serving)",
                       "workload": "different prompt sets or lengths give different TPS"}.get(
                           col, "these are not comparable")
                raise InputError(f"rows mix {col} values {vals}; {why} — select one with "
                                 f"--{col} VALUE", file=self.path, line=second, field=col)

    def cold_flags(self) -> np.ndarray:
        """Cold-start indicator per run, shape (n_runs,), bool.

        An explicit ``cold`` column wins (tools' result files set it False: their reps are
        the file's order, :func:`planner.io.formats._common.make_run`). Otherwise a run is cold
        when it is ``rep`` 0 (or, in rows without a ``rep``, the earliest ``timestamp`` of its
        config in its session) (the
        first run after a server start or a config change) on a named ``instance`` whose
        session (``session``, else ``run_group``) holds other runs, of any config: whether or
        not its own config has later runs (a lone first run beside warm runs of another config
        is as cold as one followed by its own warm runs; its slowdown is then known only
        through the cold prior, :func:`models.stats.tps_cold.cold_prior_components`). A run alone
        on its instance (every official HF job) is not flagged: its cold start is part of the
        allocation-to-allocation noise its platform's prior was measured from. Runs without an
        ``instance`` (the quick forms, tool files) are never flagged here; the verdict reads a
        table of them without a platform as one session per arm
        (:func:`planner.decide.verdict.one_session_per_arm`, which names the instance), and its rep 0
        is then flagged. Source of the rule: the
        cold-start caveat of the shipped runs table (6 of 46 fresh-server cells had a first
        run 1.1-4.2 % slow; ``examples/runs/tps_runs.md``) and issue 8 (a lone rep-0 run read
        as warm). Probe metrics (``probe_*``) are never flagged: their shipped first runs show
        no cold effect (27 cells with a rep 0 and >= 2 later runs in one session: rep 0 within
        -0.22 .. +0.14 % of the later runs' mean, against -8.0 .. +4.8 % for ``decode_wall``).
        """
        out = np.zeros(len(self.runs), dtype=bool)
        per_session: dict[tuple, int] = {}
        for r in self.runs:
            key = (r.instance, r.session or r.run_group)
            per_session[key] = per_session.get(key, 0) + 1
        first = self._first_by_time()
        for k, r in enumerate(self.runs):
            if r.cold is not None:
                out[k] = r.cold
            elif (r.rep == 0 or (r.rep is None and k in first)) and r.instance \
                    and not _warm_metric(r.metric):
                out[k] = per_session[(r.instance, r.session or r.run_group)] > 1
        return out

    def _first_by_time(self) -> set[int]:
        """Indices of the runs without a ``rep`` that are the earliest (by ``timestamp``) of
        their config in their (instance, session) group: the timestamp order says they were
        the first run; a group where a timestamp does not parse (ISO 8601) or two tie gives
        none."""
        groups: dict[tuple, list] = {}
        for k, r in enumerate(self.runs):
            if r.rep is None and r.timestamp and r.instance:
                groups.setdefault((r.config, r.instance, r.session or r.run_group), []).append(k)
        out = set()
        for idx in groups.values():
            try:
                ts = [datetime.fromisoformat(self.runs[k].timestamp) for k in idx]
                order = sorted(range(len(idx)), key=lambda j: ts[j])
            except (ValueError, TypeError):
                continue
            if len(idx) == 1 or ts[order[0]] != ts[order[1]]:
                out.add(idx[order[0]])
        return out

    def cold_source(self) -> str:
        """Where :meth:`cold_flags` came from, in words: the ``cold`` column, the ``rep``
        column (rep 0 of a session with other runs), or why no run is flagged (a tool's
        result file: its reps are the file's order; hyperfine and pyperf warm up themselves)."""
        if self.reader != "table":
            why = ("warms up itself" if self.reader in ("hyperfine", "pyperf") else
                   "does not say which run was a fresh server's first (its reps are the "
                   "file's order)")
            return f"none: a {self.reader} result {why}"
        if any(r.cold is not None for r in self.runs):
            return "the cold column"
        if self.cold_flags().any():
            return ("the rep column: rep 0 on a named instance whose session (session, else "
                    "run_group) holds other runs")
        if any(r.rep is not None for r in self.runs):
            return "none: no rep 0 on a named instance shares its session with other runs"
        return "none: no rep, cold or instance column"

    @property
    def lower_is_better(self) -> bool:
        """True when these rows' values are latencies or durations (smaller is better).

        Raises
        ------
        InputError
            Rows of both directions (a rate and a latency cannot be compared).
        """
        dirs = {r.lower_is_better for r in self.runs}
        if len(dirs) > 1:
            raise InputError("rows mix rates (higher is better) and latencies or durations "
                             "(lower is better)", file=self.path, field="metric")
        return dirs.pop() if dirs else False

    def platform(self) -> str:
        """The single platform of these rows ('' if none given). Errors if mixed."""
        plats = {canonical_platform(p) for p in {r.platform for r in self.runs} if p}
        if len(plats) > 1:
            raise InputError(f"rows mix platforms {sorted(plats)}; compare within one platform: "
                             "select one", file=self.path, field="platform",
                             remedy="platform")
        return plats.pop() if plats else ""


