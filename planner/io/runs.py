"""The runs table: one row per benchmark execution.

A run has a ``config`` and a ``tps`` (tokens per second, > 0) and optionally ``instance``
(the machine or HF job allocation), ``session`` (one server start), ``rep``, ``platform``,
``metric``, ``workload``, ``phase``, ``server``, ``ppl``, ``timestamp``, ``run_group`` and
``cold``. CSV, JSON (a list of objects, or ``{"runs": [...]}``) and JSONL are read; the rate
column may also be named by one of :data:`RATE_ALIASES` and the config column by one of
:data:`CONFIG_ALIASES` (or any name the caller gives). Column names match ignoring case and
surrounding spaces (``Config``, `` TPS ``); a CSV file may be ``,``-, ``;``- or
tab-separated (sniffed from its header line; a ``;`` file may write decimal commas).
A row may give summary statistics in place of its value (``mean``, ``sd``, ``n`` or
``median``, ``min``, ``max``, ``n``, the value blank): it is read as ``n`` pseudo-runs with
that log-scale mean and sd (:mod:`planner.io.summaries`).
Benchmark tools' own result files (vLLM, SGLang, pyperf, hyperfine) are read through
:mod:`planner.io.formats`, detected by content.

A run's value is higher-is-better (a rate) unless its metric is a latency or a duration
(:func:`metric_lower_is_better`); the direction travels with each run
(``Run.lower_is_better``) and is never inverted silently.

Validation is strict: every problem is an :class:`planner.errors.InputError` naming the file,
the row (1-based line number in the file for CSV/JSONL, element index + 1 for JSON) and the
field. Input files are only ever opened for reading.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
from sys import intern
from array import array
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from planner.io._parse import parse_number, to_float
from planner.errors import InputError
from planner.io.limits import PPL, REP, TPS, check_name, has_control, value_limit

__all__ = ["KNOWN_COLUMNS", "RATE_ALIASES", "CONFIG_ALIASES", "MAX_TPS", "NAME_FIELDS", "Run", "RunsTable",
           "read_runs", "runs_from_values", "write_runs_csv", "validate_run", "instance_key",
           "canonical_platform", "metric_lower_is_better", "WARMUP_PHASE"]

#: Columns a runs table may carry (others are kept as strings in ``extra``).
KNOWN_COLUMNS = ("config", "tps", "instance", "session", "rep", "platform", "metric",
                 "workload", "phase", "server", "ppl", "timestamp", "run_group", "cold")

_KNOWN = frozenset(KNOWN_COLUMNS)

#: Other names of the rate column, read as ``tps`` when the table has no ``tps`` column
#: (two of them in one table is ambiguous and refused).
RATE_ALIASES = ("throughput", "output_throughput", "tokens_per_s", "tok/s", "tokens/s")

#: Other names of the config column, read as ``config`` when the table has no ``config``
#: column (two of them in one table is ambiguous and refused; ``--config-column`` names any
#: other column). Spreadsheets and tools' exports label the compared setups so.
CONFIG_ALIASES = ("variant", "name", "label", "configuration")

#: Column names a table's header is matched against ignoring case and surrounding spaces
#: (``Config``, `` TPS ``, ``Run_Group``): the known columns, the aliases above and the
#: summary columns (:data:`planner.io.summaries.SUMMARY_COLUMNS`).
_FOLDED = {c: c for c in KNOWN_COLUMNS + RATE_ALIASES + CONFIG_ALIASES
           + ("mean", "sd", "median", "min", "max", "n")}

#: Metric names that are lower-is-better: latencies and durations (``mean_tpot_ms``,
#: ``median_itl_ms``, ``mean_ttft_ms``, ``wall_time_s``, ``latency_s``, ``bytes``, and the words
#: ``tpot``, ``itl``, ``ttft``, ``ms``, ``seconds``, ``time`` as ``_``/``-``/space-separated
#: tokens), not rates (``tokens_per_s``, ``decode_wall``).
_LOWER_IS_BETTER = re.compile(r"(_ms$|(?<!per)_s$|latency|^bytes$|^time_s$"
                              r"|(^|[_\- ])(tpot|itl|ttft|ms|seconds|secs|time)($|[_\- ]))",
                              re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def metric_lower_is_better(metric: str) -> bool:
    """True when smaller values of ``metric`` are better (a latency or a duration).

    Parameters
    ----------
    metric : str
        A metric (or rate-column) name; '' (unknown) counts as a rate.
    """
    return bool(_LOWER_IS_BETTER.search(metric or ""))


#: Upper bound on a plausible TPS value (a single-stream decode at 1e6 tokens/s is far beyond
#: any hardware; larger values are unit errors and would overflow the reports). The whole
#: rule, lower bound included, is :data:`planner.io.limits.TPS`.
MAX_TPS = TPS.high

#: The text columns of a run; none may hold a control character
#: (:func:`planner.io.limits.check_name`): a NUL byte in a config label would make another config.
NAME_FIELDS = ("config", "instance", "session", "platform", "metric", "workload", "phase",
               "server", "timestamp", "run_group")


@dataclass(slots=True)
class Run:
    """One benchmark execution (a row of the runs table; slotted: a 50 MB table holds
    ~250,000 of them)."""

    config: str
    tps: float
    instance: str = ""
    session: str = ""
    rep: int | None = None
    platform: str = ""
    metric: str = ""
    workload: str = ""
    phase: str = ""
    server: str = ""
    ppl: float | None = None
    timestamp: str = ""
    run_group: str = ""
    cold: bool | None = None
    line: int = 0
    extra: dict = field(default_factory=dict)
    #: Smaller values are better (a latency or duration metric, see
    #: :func:`metric_lower_is_better`).
    lower_is_better: bool = False


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
            if c not in have:
                hint = _name_hint(c, self.configs)
                raise InputError(f"config '{c}' is not in the file{hint}; the file's configs: "
                                 f"{_listing(self.configs)}", file=self.path, field="config")
        keep = set(configs)
        if self.kept is not None and not keep <= self.kept:
            raise ValueError(f"configs {sorted(keep - self.kept)} were not kept when the table "
                             "was read (read_runs configs=...)")
        return RunsTable([r for r in self.runs if r.config in keep], self.path)

    def measured(self) -> "RunsTable":
        """Rows whose ``phase`` is not ``warmup`` (explicit warm-up passes are not measurements)."""
        runs = [r for r in self.runs if r.phase != "warmup"]
        if self.census is not None:
            return RunsTable(runs, self.path, {k: None for k in self.census if k[5] != "warmup"},
                             self.kept)
        return RunsTable(runs, self.path)

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
        return RunsTable(rows, self.path)

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
            return InputError(f"no row with {k} '{v}'{_name_hint(v, vals)}; the file's "
                              f"{plural(k)}: {_listing(vals)}", file=self.path, field=k)
        others = " and ".join(f"{c} '{w}'" for c, w in applied)
        left = [it for it in items if all(match(it, c, w) for c, w in applied)]
        parts = [f"rows with {others} have {plural(k)}: "
                 f"{_listing(list(dict.fromkeys(val(it, k) for it in left)))}"]
        for c, w in applied:
            vals = list(dict.fromkeys(val(it, c) for it in with_v))
            parts.append(f"rows with {k} '{v}' have {plural(c)}: {_listing(vals)}")
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
        return RunsTable(rows, self.path, dict.fromkeys(keys), self.kept)

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

        An explicit ``cold`` column wins. Otherwise a run is cold when it is ``rep`` 0 (the
        first run after a server start or a config change) on a named ``instance`` whose
        session (``session``, else ``run_group``) holds other runs, of any config: whether or
        not its own config has later runs (a lone first run beside warm runs of another config
        is as cold as one followed by its own warm runs; its slowdown is then known only
        through the cold prior, :func:`models.stats.tps_model.cold_prior_components`). A run alone
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
        for k, r in enumerate(self.runs):
            if r.cold is not None:
                out[k] = r.cold
            elif r.rep == 0 and r.instance and not _warm_metric(r.metric):
                out[k] = per_session[(r.instance, r.session or r.run_group)] > 1
        return out

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


def instance_key(run: Run, k: int) -> str:
    """The model's instance label of a run (``k``: the run's index, for runs without one).

    An instance re-used in another experiment (``run_group``) is a new draw of the instance
    effect (local GPUs are re-used across days and server builds); a run with no ``instance``
    is its own instance.
    """
    return f"{run.instance}|{run.run_group}" if run.instance else f"{run.config}#run{k}"


def canonical_platform(name: str) -> str:
    """Platform label with aliases and, for a known platform, letter case folded
    (``hf-job-a10g-small`` and ``HF-A10G-Small`` are ``hf-a10g-small``); another label is
    kept as written."""
    from models.stats.noise import platform_key

    return platform_key(name) or name


def _listing(values: Sequence[str], most: int = 8) -> str:
    """``'a', 'b', (blank) and 3 more``: the values a file holds, for an error message."""
    vals = list(values)
    out = ", ".join(f"'{v}'" if v else "(blank)" for v in vals[:most])
    return out + (f" and {len(vals) - most} more" if len(vals) > most else "")


def _nfc(name: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFC", name)


def _form(name: str) -> str:
    """The Unicode normalisation form ``name`` is in, for a message."""
    import unicodedata

    for f in ("NFC", "NFD"):
        if unicodedata.is_normalized(f, name):
            return f
    return "neither NFC nor NFD"


def _name_hint(name: str, options: Sequence[str]) -> str:
    """What to add to "'name' is not in the file": the file's name that is the same text in
    another Unicode normalisation (they print alike; a decomposed 'è' from one editor, a
    composed one from another), else the nearest spelling (:func:`_closest`), else ''."""
    same = [o for o in options if o != name and _nfc(o) == _nfc(name)]
    if same:
        return (f"; the file's '{same[0]}' looks the same but is another Unicode "
                f"normalisation ({_form(same[0])} in the file, {_form(name)} as given): "
                "copy the name from the file, or save the file NFC-normalised")
    near = _closest(name, options)
    return f"; did you mean '{near}'?" if near else ""


def _closest(name: str, options: Iterable[str]) -> str | None:
    import difflib

    m = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
    return m[0] if m else None


def _parse_float(v, *, path, line, fld, positive=False, optional=False):
    return parse_number(v, path=path, line=line, field=fld, positive=positive,
                        optional=optional)


def _parse_bool(v, *, path, line, fld):
    if v is None or (isinstance(v, str) and v.strip() == ""):
        return None
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("1", "true", "yes", "y", "t"):
        return True
    if s in ("0", "false", "no", "n", "f"):
        return False
    raise InputError(f"not a boolean: {v!r}", file=path, line=line, field=fld)


def _row_to_run(row: dict, *, path: str, line: int, rate: str = "tps") -> Run:
    cfg = row.get("config")
    if cfg is None or str(cfg).strip(" ") == "":
        raise InputError("missing config label", file=path, line=line, field="config")
    summary = None
    if ("mean" in row or "median" in row) and not str(row.get(rate) or "").strip():
        from planner.io.summaries import is_summary_row, summary_from_row

        if is_summary_row(row, rate):  # mean/sd/n or median/min/max/n: planner.io.summaries
            summary = summary_from_row(row, path=path, line=line)
            row = {**row, rate: summary.center, "rep": None}
    tps = _parse_float(row.get(rate), path=path, line=line, fld=rate, positive=True)
    rep_raw = row.get("rep")
    rep = None
    if rep_raw is not None and str(rep_raw).strip() != "":
        # the one rule of a run index (limits.REP: a whole number 0 .. 10^6; 1e12 is a
        # timestamp in the wrong column), by the one number grammar; -1 marks a warm-up pass,
        # which validate_run accepts only on a phase=warmup row
        rep = -1 if _is_warmup_rep(rep_raw) else REP.check(rep_raw, field="rep", file=path,
                                                             line=line)
    ppl = _parse_float(row.get("ppl"), path=path, line=line, fld="ppl", optional=True)
    extra = {k: v for k, v in row.items()
             if k not in _KNOWN and k != rate and k is not None}
    get = row.get

    def s(k):  # names repeat across rows: one shared string each (a large table's memory)
        # only spaces are trimmed: a trailing tab, VT or NEL is a control character that
        # validate_run refuses (limits.check_name), not padding to drop silently
        v = get(k)
        return "" if v is None else intern(v.strip(" ") if type(v) is str else str(v).strip(" "))

    run = Run(config=intern(str(cfg).strip(" ")), tps=tps, instance=s("instance"), session=s("session"),
              rep=rep, platform=s("platform"), metric=s("metric"), workload=s("workload"),
              phase=s("phase"), server=s("server"), ppl=ppl, timestamp=s("timestamp"),
              run_group=s("run_group"),
              cold=_parse_bool(row.get("cold"), path=path, line=line, fld="cold"),
              line=line, extra=extra,
              lower_is_better=metric_lower_is_better(s("metric") or rate))
    if summary is not None:
        run.extra["_summary_obj"] = summary  # expanded to its pseudo-runs by read_runs
    return validate_run(run, file=path, value_field=rate)


def validate_run(run: Run, *, file: str | None, value_field: str = "tps") -> Run:
    """Return ``run`` if it is a run every command accepts; the one check of a run shared by
    every reader (runs tables, tools' result files, quick forms) and writer (``planner
    ingest``).

    Parameters
    ----------
    run : Run
        The run (its ``line`` is reported when non-zero and ``file`` is given).
    file : str or None
        Its file, for messages.
    value_field : str
        The name of the value's column or option in messages (``tps``, ``--a-runs``).

    Returns
    -------
    Run
        ``run`` itself.

    Raises
    ------
    planner.errors.InputError
        Naming the file, line and field: an empty config; a control character in a text
        column (:data:`NAME_FIELDS`); a value outside its quantity's range
        (:func:`planner.io.limits.value_limit`: a rate in tokens/s, a duration, a size);
        a perplexity outside :data:`planner.io.limits.PPL`; a ``rep`` outside
        :data:`planner.io.limits.REP`, or -1 (a warm-up pass) on a row whose ``phase`` is not
        ``warmup``.
    """
    line = (run.line or None) if file is not None else None  # no file, no line: an option
    if not run.config:
        raise InputError("missing config label", file=file, line=line, field="config")
    if has_control("".join([run.config, run.instance, run.session, run.platform, run.metric,
                            run.workload, run.phase, run.server, run.timestamp,
                            run.run_group])):
        for f in NAME_FIELDS:
            check_name(getattr(run, f), field=f, file=file, line=line)
    lim = value_limit(run.metric, run.lower_is_better)
    run.tps = lim.check(run.tps, field=value_field, file=file, line=line)
    if run.ppl is not None:
        run.ppl = PPL.check(run.ppl, field="ppl", file=file, line=line)
    if run.rep is not None:
        if _is_warmup_rep(run.rep):
            if run.phase != WARMUP_PHASE:
                raise InputError(f"rep -1 marks a warm-up pass, but the row's phase is "
                                 f"{run.phase or '(blank)'!r}, not '{WARMUP_PHASE}' (a measured "
                                 f"run's rep is a whole number 0 .. 1,000,000)", file=file,
                                 line=line, field="rep")
            run.rep = -1
        else:
            run.rep = REP.check(run.rep, field="rep", file=file, line=line)
    return run


#: The ``phase`` of a warm-up pass (not a measurement; :meth:`RunsTable.measured` drops it).
WARMUP_PHASE = "warmup"


def _is_warmup_rep(v) -> bool:
    """True when ``v`` is the run index -1 (``-1``, ``-1.0``, ``"-1"``) of a warm-up pass."""
    if isinstance(v, bool):
        return False
    try:
        return to_float(v) == -1.0
    except (TypeError, ValueError, OverflowError):
        return False


def _fold(name: str) -> str:
    """A header name as it is matched: surrounding spaces dropped, case folded, Unicode NFC."""
    import unicodedata

    return unicodedata.normalize("NFC", name.strip()).casefold()


def _header_map(cols: Iterable[str], path: str, tps_column: str | None = None,
                config_column: str | None = None) -> tuple[dict, str]:
    """How a table's column names are read: ``(renames, rate)``.

    Every column whose name matches a known column (:data:`KNOWN_COLUMNS`, the
    :data:`RATE_ALIASES`, :data:`CONFIG_ALIASES`, the summary columns) or the column named by
    ``tps_column`` / ``config_column``, ignoring case and surrounding spaces (:func:`_fold`),
    is read under that name; without a ``config`` column, one of :data:`CONFIG_ALIASES` is the
    config.

    Parameters
    ----------
    cols : iterable of str
        The column names as the file spells them (blank names are ignored).
    path : str
        The file, for messages.
    tps_column, config_column : str, optional
        The columns of the values and of the config labels, as the user named them.

    Returns
    -------
    renames : dict
        File spelling -> name read, for the columns whose name changes (None: the column is
        not read, a ``config`` column when ``config_column`` names another one).
    rate : str
        The name the value column is read under.

    Raises
    ------
    InputError
        Two columns that are one name once case and spaces are ignored; a missing config or
        value column; two aliases of one column (line 1, the column as field).
    """
    names = [c for c in cols if c]
    cols = list(dict.fromkeys(names))
    listing = ", ".join(sorted(cols)) or "none"
    user = {}
    if tps_column:
        user[_fold(tps_column)] = _FOLDED.get(_fold(tps_column), tps_column.strip())
    if config_column:
        if tps_column and _fold(config_column) == _fold(tps_column):
            raise InputError(f"the config column and the value column are both named "
                             f"'{config_column}'", file=path, line=1, field="config")
        user[_fold(config_column)] = "config"
    if len(cols) < len(names):  # a name written twice: a reader keeps one of them silently
        for c in cols:
            to = user.get(_fold(c)) or _FOLDED.get(_fold(c))
            if to is not None and names.count(c) > 1:
                raise InputError(f"column '{c}' appears {names.count(c)} times in the header; "
                                 "rename or remove all but one", file=path, line=1, field=to)
    renames: dict = {}
    owner: dict = {}  # name read -> the file's column read under it
    for c in cols:
        f = _fold(c)
        to = user.get(f) or _FOLDED.get(f)
        if to is None:
            continue
        if to == "config" and config_column and f != _fold(config_column):
            renames[c] = None  # a config column other than the one named: not read
            continue
        if to in owner:
            raise InputError(f"columns '{owner[to]}' and '{c}' are one column once case and "
                             "surrounding spaces are ignored; rename or remove one", file=path,
                             line=1, field=to)
        owner[to] = c
        if to != c:
            renames[c] = to
    if config_column and "config" not in owner:
        raise InputError(f"no column '{config_column}' (columns: {listing})", file=path,
                         line=1, field="config", remedy="config_column")
    if "config" not in owner:
        aliases = [a for a in CONFIG_ALIASES if a in owner]
        if len(aliases) > 1:
            raise InputError(f"ambiguous config column: both '{owner[aliases[0]]}' and "
                             f"'{owner[aliases[1]]}' could name the configs; name the "
                             "config column to read", file=path, line=1, field="config",
                             remedy="config_column")
        if not aliases:
            raise InputError(f"missing required column 'config' (columns: {listing}); "
                             f"call it config or one of {', '.join(CONFIG_ALIASES)}, or "
                             "name the config column", file=path, line=1, field="config",
                             remedy="config_column")
        c = owner.pop(aliases[0])
        owner["config"] = c
        renames[c] = "config"
    if tps_column:
        rate = user[_fold(tps_column)]
        if rate not in owner:
            raise InputError(f"no column '{tps_column}' (columns: {listing})", file=path,
                             line=1, field="tps", remedy="tps_column")
        return renames, rate
    if "tps" in owner:
        return renames, "tps"
    aliases = [a for a in RATE_ALIASES if a in owner]
    if len(aliases) > 1:
        raise InputError(f"ambiguous rate column: both '{owner[aliases[0]]}' and "
                         f"'{owner[aliases[1]]}' could be the TPS; name the value column",
                         file=path, line=1, field=aliases[0], remedy="tps_column")
    if aliases:
        return renames, aliases[0]
    if "n" in owner and ("mean" in owner or "median" in owner):
        return renames, "tps"  # summary rows only (planner.io.summaries)
    raise InputError(f"missing required column 'tps' (columns: {listing}); call it tps or one "
                     f"of {', '.join(RATE_ALIASES)}, or name the value column", file=path,
                     line=1, field="tps", remedy="tps_column")


def _renamed(d: dict, renames: dict) -> dict:
    """A record with its keys read as :func:`_header_map` says (None: dropped)."""
    out = {}
    for k, v in d.items():
        to = renames.get(k, k)
        if to is not None:
            out[to] = v
    return out


def read_runs(path: str | Path, *, format: str | None = None, metric: str | None = None,
              tps_column: str | None = None, instance: str | None = None,
              configs: Iterable[str] | None = None,
              config_column: str | None = None) -> RunsTable:
    """Read a runs table (CSV, JSON or JSONL) or a benchmark tool's result file.

    Parameters
    ----------
    path : str or Path
        ``.csv`` (header row), ``.json`` (list of objects or ``{"runs": [...]}``) or
        ``.jsonl`` (one object per line). Other suffixes are sniffed from the first byte.
        A vLLM, SGLang, pyperf or hyperfine result file is recognised by its content and read
        by :mod:`planner.io.formats`.
    format : str, optional
        Force a format (one of :data:`planner.io.formats.FORMATS`) instead of detecting it.
    metric : str, optional
        For a tool's result file, the field to read (default: its output-token throughput).
        Ignored for a runs table, whose ``metric`` column callers filter on.
    tps_column : str, optional
        For a runs table, the column holding the values (default ``tps``, else one of
        :data:`RATE_ALIASES`). Column names are matched ignoring case and surrounding
        spaces (``TPS``, `` Throughput ``).
    instance : str, optional
        For a tool's result file, the instance of every run (the files cannot say which
        machine ran them; without it each run is its own instance).
    configs : iterable of str, optional
        Keep the runs of these configs only (a verdict's A and B): every row is still
        validated and duplicate-checked, with the same errors, but the other rows are only
        counted in the table's census (:attr:`RunsTable.census`), so a large CSV/JSONL table
        costs the memory of the kept runs, and a plain row of another config is checked by a
        fast path (:func:`_read_csv_census`). Other formats read every run (``census`` None).
    config_column : str, optional
        For a runs table, the column holding the config labels (default ``config``, else
        one of :data:`CONFIG_ALIASES`).

    Returns
    -------
    RunsTable
        Validated runs (``tps`` > 0 and finite, ``config`` non-empty).

    Raises
    ------
    InputError
        Empty file, missing ``config``/``tps`` column, non-numeric / NaN / non-positive TPS,
        duplicate rows (same config, instance, session, rep, TPS, metric, workload, on rows
        that carry a rep, instance, session or timestamp), or a
        syntax error; the message names the file, line and field.
    """
    if format is not None:  # checked before the file is read
        from planner.io.formats import FORMATS

        if format not in FORMATS:
            raise InputError(f"unknown format {format!r} (known: {', '.join(FORMATS)})",
                             field="format")
    p = Path(path)
    name = str(path)
    if p.is_dir():
        raise InputError("is a directory (expected a runs CSV/JSON/JSONL file; "
                         "use 'planner ingest DIR' to build one)", file=name)
    suffix = p.suffix.lower()
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise InputError("file not found", file=name) from None
    if configs is not None and suffix in (".csv", ".jsonl") and format in (None, "table"):
        sink = _Census(frozenset(configs))
        if _read_streamed(p, name, suffix, tps_column, instance, size, format, sink,
                          config_column) is not None:
            if not sink.rows:
                raise InputError("no runs in file (header only?)", file=name)
            if not sink.summary and not sink.maybe_duplicate():
                return RunsTable(sink.runs, name, sink.census, sink.kept)
            # summary rows, or two rows whose duplicate keys hash alike: the whole table,
            # read again, gives the exact answer (the pseudo-runs, or the duplicate's message)
        else:
            configs = None  # a tool's result file: read whole below
    if suffix in (".csv", ".jsonl") and format in (None, "table"):
        runs = _read_streamed(p, name, suffix, tps_column, instance, size, format,
                              config_column=config_column)
        if runs is not None:
            if not runs:
                raise InputError("no runs in file (header only?)", file=name)
            runs = _expand_summaries(runs, name)
            _check_duplicates(runs, name)
            return RunsTable(runs, name)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", file=name) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=name) from None
    del raw
    if not text.strip():
        raise InputError("empty file", file=name)
    first = text.lstrip()[:1]
    from planner.io.formats import detect_format, read_results

    fmt = format or ("table" if suffix == ".csv" else detect_format(text))
    if fmt != "table":
        if tps_column or config_column:
            raise InputError(f"a {fmt} result has no columns to name (its configs are its "
                             "commands or runs; the value read is chosen with metric)",
                             file=name, field="tps_column" if tps_column else "config_column",
                             remedy="metric")
        runs = read_results(text, path=name, format=fmt, metric=metric, instance=instance)
    elif instance:
        raise InputError("a runs table names its instances in its 'instance' column",
                         file=name, field="instance")
    elif suffix == ".jsonl" or (suffix not in (".csv", ".json") and first == "{"
                                and "\n{" in text.strip()):
        runs = _read_jsonl(text.splitlines(), name, tps_column, config_column=config_column)
    elif suffix == ".json" or (suffix != ".csv" and first in "[{"):
        runs = _read_json(text, name, tps_column, config_column)
    else:
        runs = _read_csv(io.StringIO(text, newline=""), name, tps_column,
                         config_column=config_column)
    if not runs:
        raise InputError("no runs in file (header only?)", file=name)
    runs = _expand_summaries(runs, name)
    _check_duplicates(runs, name)
    return RunsTable(runs, name)


def _expand_summaries(runs: list[Run], path: str) -> list[Run]:
    """Summary rows (``mean``, ``sd``, ``n`` or ``median``, ``min``, ``max``, ``n`` in place
    of the value) replaced by their pseudo-runs (:func:`planner.io.summaries.expand_runs`)."""
    from planner.io.summaries import expand_runs

    return expand_runs(runs, path)


class _Census:
    """Where a table read for some configs puts its rows (in place of a list of runs): the
    runs of the ``kept`` configs, the census key (:data:`CENSUS_COLUMNS`) of every row, and
    the hash of every row's duplicate key (:func:`_duplicate_key`)."""

    __slots__ = ("kept", "runs", "census", "hashes", "rows", "summary")

    def __init__(self, kept: frozenset):
        self.kept = kept
        self.runs: list[Run] = []
        self.census: dict = {}
        self.hashes = array("q")
        self.rows = 0
        self.summary = False

    def append(self, run: Run) -> None:
        """Count one validated run (keep it when its config is kept)."""
        self.rows += 1
        if "_summary_obj" in run.extra:
            self.summary = True
        key = (run.config, run.platform, run.metric, run.workload, run.run_group, run.phase)
        if key not in self.census:
            self.census[key] = None
        dup = _duplicate_key(run)
        if dup is not None:
            self.hashes.append(hash(dup))
        if run.config in self.kept:
            self.runs.append(run)

    def count_names(self, names: tuple, rep: int | None, tps: float) -> None:
        """Count one plain row of the fast paths from its :data:`NAME_FIELDS` values: the
        census key and the duplicate key :meth:`append` takes from a :class:`Run` (the rows
        are counted by the caller)."""
        key = (names[0], names[3], names[4], names[5], names[9], names[6])
        if key not in self.census:
            self.census[_intern_all(key)] = None
        dup = _dup_fields(names[0], names[1], names[2], names[9], rep, tps, names[4], names[5],
                          names[6], names[8])
        if dup is not None:
            self.hashes.append(hash(dup))

    def maybe_duplicate(self) -> bool:
        """True when two rows' duplicate keys hash alike (a duplicate, or a hash collision)."""
        if len(self.hashes) < 2:
            return False
        h = np.frombuffer(self.hashes, dtype=np.int64).copy()
        h.sort()
        return bool((h[1:] == h[:-1]).any())


def _read_streamed(p: Path, name: str, suffix: str, tps_column: str | None,
                   instance: str | None, size: int, format: str | None,
                   sink: _Census | None = None,
                   config_column: str | None = None) -> list[Run] | _Census | None:
    """A ``.csv`` or ``.jsonl`` runs table read line by line from the open file (no copy of
    the whole text); None when a ``.jsonl`` file's first record is a tool's result (the caller
    then reads the whole file). With ``sink``, the rows go to it (and it is returned)."""
    with open(p, encoding="utf-8-sig", newline="" if suffix == ".csv" else None) as fh:
        try:
            head = fh.read(1 << 16)
            if not head.strip() and size <= len(head.encode("utf-8")) + 3:
                raise InputError("empty file", file=name)
            fh.seek(0)
            if suffix == ".jsonl" and format is None:
                from planner.io.formats import detect_format

                first = ""
                while not first.strip():
                    first = fh.readline()
                    if not first:
                        break
                if detect_format(first) != "table":
                    return None
                fh.seek(0)
            if instance:
                raise InputError("a runs table names its instances in its 'instance' column",
                                 file=name, field="instance")
            if suffix == ".csv":
                return _read_csv(fh, name, tps_column, sink, config_column)
            return _read_jsonl(fh, name, tps_column, sink, config_column)
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text ({exc.reason})", file=name) from None


def _sniff_delimiter(line: str) -> str:
    """The field separator of a CSV file from its header line: the most frequent of ``,``,
    ``;`` and tab outside double quotes (a spreadsheet's export in a locale whose decimal
    mark is a comma uses ``;``), ``,`` on a tie or when there is none."""
    outside = re.sub(r'"[^"]*"', "", line)
    counts = {d: outside.count(d) for d in (",", ";", "\t")}
    best = max(counts, key=counts.get)  # first of the most frequent: "," on a tie
    return best if counts[best] else ","


#: A number written with a decimal comma (``100,1``): read as ``100.1`` in a ``;``-separated
#: file, the export of a spreadsheet in a locale whose decimal mark is the comma.
_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]+,[0-9]+").fullmatch


class _DecimalComma:
    """A CSV reader whose cells in the value columns ``cols`` that are numbers with a
    decimal comma (:data:`_DECIMAL_COMMA`) are read with a decimal point (``;``-separated
    files only: there a comma cannot be a field separator)."""

    def __init__(self, reader, cols: list[int]):
        self.reader, self.cols = reader, cols

    def __iter__(self):
        return self

    def __next__(self) -> list[str]:
        row = next(self.reader)
        for i in self.cols:
            if i < len(row) and "," in row[i] and _DECIMAL_COMMA(row[i].strip()):
                row[i] = row[i].replace(",", ".")
        return row

    @property
    def line_num(self) -> int:
        return self.reader.line_num


def _read_csv(fh, path: str, tps_column: str | None = None, sink: _Census | None = None,
              config_column: str | None = None) -> list[Run] | _Census:
    """Rows of a CSV runs table from an open text file (read row by row); into ``sink``
    when given (:func:`_read_csv_census`). The field separator is sniffed from the header
    line (:func:`_sniff_delimiter`); the column names are matched as :func:`_header_map`
    says."""
    first = fh.readline()
    if first.lstrip()[:1] in ("[", "{"):
        raise InputError(f"this CSV file holds JSON (it starts with "
                         f"'{first.lstrip()[:1]}'), not comma-separated values; name it .json "
                         "(a list of run objects) or .jsonl (one object per line)", file=path,
                         line=1)
    fh.seek(0)
    reader = csv.reader(fh, delimiter=_sniff_delimiter(first))
    header = next(reader, None)
    if header is None:
        raise InputError("empty file", file=path)
    names = [c.strip() for c in header]
    renames, rate = _header_map(names, path, tps_column, config_column)
    if renames:
        names = [renames.get(c, c) or "" for c in names]
    if reader.dialect.delimiter == ";":
        reader = _DecimalComma(reader, [i for i, c in enumerate(names)
                                        if c in (rate, "ppl", "mean", "sd", "median", "min",
                                                 "max")])
    width = len(header)
    keep = [(i, c) for i, c in enumerate(names) if c]
    runs = [] if sink is None else sink
    try:
        if sink is not None and "mean" not in names and "median" not in names and (
                rate == "tps" or rate not in _KNOWN):
            _read_csv_census(reader, sink, width, keep, path, rate)
        else:
            for row in reader:
                _csv_row(row, reader, runs, width, keep, path, rate)
    except csv.Error as exc:
        raise InputError(f"unreadable CSV: {exc}", file=path, line=reader.line_num) from None
    return runs


#: A plain decimal (``258.4442``, ``7``): a subset of :data:`planner.io._parse.NUMBER` whose
#: ``float`` is :func:`planner.io._parse.to_float`'s.
_PLAIN = re.compile(r"[0-9]+(?:\.[0-9]+)?").fullmatch
_BOOLS = frozenset(("1", "true", "yes", "y", "t", "0", "false", "no", "n", "f"))


def _fast_names(raw: tuple) -> tuple | None:
    """The checked names of a row's raw :data:`NAME_FIELDS` cells (spaces trimmed), or None
    when the row needs the full check (a control character, a blank config)."""
    if has_control("".join(raw)):
        return None
    names = tuple([v.strip(" ") for v in raw])
    return names if names[0] else None


def _read_csv_census(reader, sink: _Census, width: int, keep: list, path: str,
                     rate: str) -> None:
    """The rows of a CSV table into ``sink``. A row of a config not kept, all of whose
    cells are plain (names without control characters, the value and ``ppl`` plain
    decimals inside their ranges, ``rep`` a whole number 0 .. 10^6, ``cold`` blank or a
    boolean word), is checked here without building its :class:`Run`: every such row is one
    that :func:`_row_to_run` accepts, and its census key and duplicate key are the ones its
    run would have. Any other row (kept, blank, short, unusual) takes the full path
    (:func:`_csv_row`), so every error is worded as before."""
    idx = {c: i for i, c in keep}
    blank = width  # a "" appended to each row stands for the absent columns
    name_of = itemgetter(*[idx.get(f, blank) for f in NAME_FIELDS])
    it = idx[rate]
    ir, ip, ic = idx.get("rep", blank), idx.get("ppl", blank), idx.get("cold", blank)
    kept = sink.kept
    limits: dict = {}  # metric -> (low, high, low open) of its value (limits.value_limit)
    plain = _PLAIN
    rep_high, ppl_low, ppl_high = REP.high, PPL.low, PPL.high
    fast = 0
    for row in reader:
        if len(row) == width:
            row.append("")
            names = name_of(row)
            j = "".join(names)
            # isprintable: no control character (nor any other unusual one, which the
            # exact check of _fast_names then looks at)
            if " " in j or not names[0] or not j.isprintable():
                names = _fast_names(names)  # trims spaces; None: the full path
            if names is not None and names[0] not in kept:
                lim = limits.get(names[4])
                if lim is None:
                    v = value_limit(names[4], metric_lower_is_better(names[4] or rate))
                    lim = limits[names[4]] = (v.low, v.high, v.low_open)
                low, high, low_open = lim
                t = row[it]
                if plain(t) is not None:
                    x = float(t)
                    if x > 0 and (x > low if low_open else x >= low) and x <= high:
                        r = row[ir]
                        ok = True
                        if r == "":
                            rep = None
                        elif len(r) <= 7 and r.isascii() and r.isdigit() and \
                                int(r) <= rep_high:
                            rep = int(r)
                        else:
                            ok = False
                        q = row[ip]
                        if q != "" and not (plain(q) is not None
                                            and ppl_low <= float(q) <= ppl_high):
                            ok = False
                        c = row[ic]
                        if c != "" and c.strip().lower() not in _BOOLS:
                            ok = False
                        if ok:
                            fast += 1
                            sink.count_names(names, rep, x)
                            continue
            row.pop()
        _csv_row(row, reader, sink, width, keep, path, rate)
    sink.rows += fast


def _intern_all(key: tuple) -> tuple:
    """``key`` with each string interned (a census key is kept for the table's life)."""
    return tuple([intern(v) for v in key])


def _csv_row(row, reader, runs, width, keep, path, rate) -> None:
    """Append the run of one CSV row (blank rows are skipped)."""
    if len(row) > width:
        raise InputError("more fields than the header", file=path, line=reader.line_num)
    if not any(v.strip() for v in row):
        return
    n = len(row)
    d = {c: row[i] for i, c in keep if i < n}
    runs.append(_row_to_run(d, path=path, line=reader.line_num, rate=rate))


def _read_json(text: str, path: str, tps_column: str | None = None,
               config_column: str | None = None) -> list[Run]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno) from None
    if isinstance(data, dict) and "runs" in data:
        data = data["runs"]
    if not isinstance(data, list):
        raise InputError("expected a list of run objects or {\"runs\": [...]}", file=path)
    rate = tps_column or "tps"
    renames: dict = {}
    if data and all(isinstance(d, dict) for d in data):
        renames, rate = _header_map(set().union(*[d.keys() for d in data]), path, tps_column,
                                    config_column)
    runs = []
    for k, d in enumerate(data, start=1):
        try:
            if not isinstance(d, dict):
                raise InputError("expected an object", file=path, line=k)
            if renames and not renames.keys().isdisjoint(d):
                d = _renamed(d, renames)
            runs.append(_row_to_run(d, path=path, line=k, rate=rate))
        except InputError as exc:
            if exc.line != k:
                raise
            # a JSON list may sit on one line: name its record, not a line number
            raise InputError(f"record {k} of the list: {exc.message}", file=path,
                             field=exc.field, remedy=exc.remedy) from None
    return runs


def _read_jsonl(lines: Iterable[str], path: str, tps_column: str | None = None,
                sink: _Census | None = None, config_column: str | None = None
                ) -> list[Run] | _Census:
    """Rows of a JSONL runs table from an iterable of lines (an open file is read line by
    line). The rate column is known from the first record when it has ``tps`` (or
    ``tps_column`` is given), and every row becomes a run as it is read; otherwise the
    records are kept until the columns of the whole file are known. With ``sink``, the runs
    go to it (and it is returned)."""
    runs = [] if sink is None else sink
    pending: list[tuple[int, dict]] = []
    cols: set = set()
    rate: str | None = None
    renames: dict = {}
    fast = None
    for k, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", file=path, line=k) from None
        if not isinstance(d, dict):
            raise InputError("expected a JSON object", file=path, line=k)
        if rate is None and not pending and (tps_column or "tps") in d and \
                (config_column or "config") in d:
            renames, rate = _header_map(d.keys(), path, tps_column, config_column)
        if rate is not None:
            if renames and not renames.keys().isdisjoint(d):
                d = _renamed(d, renames)
            if fast is None:
                fast = _fast_record if sink is not None and (
                    rate == "tps" or rate not in _KNOWN) else False
            if not (fast and fast(d, rate, sink)):
                runs.append(_row_to_run(d, path=path, line=k, rate=rate))
        else:
            cols |= d.keys()
            pending.append((k, d))
    if pending:
        renames, rate = _header_map(cols, path, tps_column, config_column)
        for k, d in pending:  # runs is empty: rows are pending only from the first record
            if renames and not renames.keys().isdisjoint(d):
                d = _renamed(d, renames)
            runs.append(_row_to_run(d, path=path, line=k, rate=rate))
    return runs


def _fast_record(d: dict, rate: str, sink: _Census) -> bool:
    """Count a plain JSONL record of a config not kept in ``sink`` without building its
    :class:`Run` (the fast path of :func:`_read_csv_census` for a record: string names
    without control characters, a number or plain decimal value and ``ppl`` inside their
    ranges, ``rep`` a whole number 0 .. 10^6, ``cold`` blank, a boolean or a boolean word);
    False, with nothing counted, for any other record (it takes the full path)."""
    get = d.get
    if "mean" in d or "median" in d:
        return False
    raw = []
    for f in NAME_FIELDS:
        v = get(f)
        if v is None:
            v = ""
        elif type(v) is not str:
            return False
        raw.append(v)
    j = "".join(raw)
    if " " in j or not raw[0] or not j.isprintable():
        names = _fast_names(raw)
        if names is None:
            return False
    else:
        names = raw
    if names[0] in sink.kept:
        return False
    lim = value_limit(names[4], metric_lower_is_better(names[4] or rate))
    x = _fast_number(get(rate))
    if x is None or not (x > 0 and (x > lim.low if lim.low_open else x >= lim.low)
                         and x <= lim.high):
        return False
    r = get("rep")
    if r is None or r == "":
        rep = None
    elif type(r) is int and 0 <= r <= REP.high:
        rep = r
    elif type(r) is str and len(r) <= 7 and r.isascii() and r.isdigit() and int(r) <= REP.high:
        rep = int(r)
    else:
        return False
    q = get("ppl")
    if q is not None and q != "":
        y = _fast_number(q)
        if y is None or not PPL.low <= y <= PPL.high:
            return False
    c = get("cold")
    if not (c is None or c == "" or type(c) is bool
            or (type(c) is str and c.strip().lower() in _BOOLS)):
        return False
    sink.rows += 1
    sink.count_names(names, rep, x)
    return True


def _fast_number(v) -> float | None:
    """``v`` as :func:`planner.io._parse.to_float` reads it when it is a float, a modest int or
    a plain decimal string; None otherwise (or not finite)."""
    if type(v) is float:
        return v if v == v and v not in (float("inf"), float("-inf")) else None
    if type(v) is int:
        return float(v) if -10**15 < v < 10**15 else None
    if type(v) is str and _PLAIN(v) is not None:
        return float(v)
    return None


#: Columns that identify one run: two rows equal in all columns and carrying one of these
#: are the same run written twice. Without them (``config,tps``), equal values are two runs
#: whose rounded TPS agree, which is common.
_RUN_IDS = ("instance", "session", "timestamp")


def _duplicate_key(r: Run) -> tuple | None:
    """The columns two rows share when they are one run written twice (None: a row without a
    rep, instance, session or timestamp, never a duplicate)."""
    return _dup_fields(r.config, r.instance, r.session, r.run_group, r.rep, r.tps, r.metric,
                       r.workload, r.phase, r.timestamp)


def _dup_fields(config, instance, session, run_group, rep, tps, metric, workload, phase,
                timestamp) -> tuple | None:
    """:func:`_duplicate_key` from the values themselves (the fast paths have no Run)."""
    if rep is None and not (instance or session or timestamp):
        return None
    return (config, instance, session, run_group, rep, tps, metric, workload, phase,
            timestamp)


def _check_duplicates(runs: list[Run], path: str) -> None:
    seen: dict[tuple, int] = {}
    for r in runs:
        key = _duplicate_key(r)
        if key is None:
            continue
        if key in seen:
            raise InputError(f"duplicate row (same config, instance, rep and TPS as line "
                             f"{seen[key]}); remove it or give it a distinct rep/instance",
                             file=path, line=r.line, field="tps")
        seen[key] = r.line


def runs_from_values(a: Sequence[float], b: Sequence[float], *, a_name: str = "A",
                     b_name: str = "B", platform: str = "", paired: bool = False) -> RunsTable:
    """Build a runs table from two lists of TPS values (the quick ``--a-runs`` form).

    Each value is a separate instance (a fresh allocation), unless ``paired`` is true, in
    which case the k-th runs of A and B share instance ``k``.

    Raises
    ------
    InputError
        A non-positive or non-finite TPS value (field ``a`` or ``b``, the arm).
    """
    runs = []
    for name, vals, opt in ((a_name, a, "a"), (b_name, b, "b")):
        if len(vals) == 0:
            raise InputError("no TPS values given", field=opt)
        for k, v in enumerate(vals):
            x = _parse_float(v, path=None, line=None, fld=opt, positive=True)
            inst = f"pair-{k}" if paired else f"{name}-run-{k}"
            # a plain list says nothing about cold starts: its runs are taken as warm
            runs.append(validate_run(
                Run(config=name, tps=x, instance=inst, rep=0 if paired else k,
                    platform=platform, line=k + 1, cold=False), file=None, value_field=opt))
    return RunsTable(runs, "<command line>")


def write_runs_csv(runs: Sequence[Run], path: str | Path) -> None:
    """Write runs to a CSV with the :data:`KNOWN_COLUMNS` header (``planner ingest`` output).

    Every run is checked first (:func:`validate_run`, the check every reader makes), so the
    file is written only when :func:`read_runs` will read it back.

    Raises
    ------
    planner.errors.InputError
        A run that no reader would accept (naming its source file and field); nothing is
        written.
    """
    for r in runs:
        validate_run(r, file=str(r.extra.get("source") or path))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(KNOWN_COLUMNS)
        for r in runs:
            w.writerow([r.config, repr(r.tps), r.instance, r.session,
                        "" if r.rep is None else r.rep, r.platform, r.metric, r.workload,
                        r.phase, r.server, "" if r.ppl is None else r.ppl, r.timestamp,
                        r.run_group, "" if r.cold is None else int(r.cold)])
