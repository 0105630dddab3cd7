"""One row of the runs table: :class:`Run`, the check every reader and writer makes of it
(:func:`validate_run`), and the direction of its metric (:func:`metric_lower_is_better`).

This is the base of :mod:`planner.io`: the runs-table readers (:mod:`planner.io.runs`), the
tools' result readers (:mod:`planner.io.formats`) and the summaries
(:mod:`planner.io.summaries`) all build their rows here and import nothing above it.

A run has a ``config`` and a ``tps`` (tokens per second, > 0) and optionally ``instance``
(the machine or HF job allocation), ``session`` (one server start), ``rep``, ``platform``,
``metric``, ``workload``, ``phase``, ``server``, ``ppl``, ``timestamp``, ``run_group`` and
``cold``. A run's value is higher-is-better (a rate) unless its metric is a latency or a
duration (:func:`metric_lower_is_better`); the direction travels with each run
(``Run.lower_is_better``) and is never inverted silently.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from planner.errors import InputError
from planner.io._parse import to_float
from planner.io.limits import PPL, REP, TPS, check_name, has_control, value_limit

__all__ = ["KNOWN_COLUMNS", "MAX_TPS", "NAME_FIELDS", "WARMUP_PHASE", "Run", "instance_key",
           "is_warmup_rep", "metric_lower_is_better", "validate_run"]

#: Columns a runs table may carry (others are kept as strings in ``extra``).
KNOWN_COLUMNS = ("config", "tps", "instance", "session", "rep", "platform", "metric",
                 "workload", "phase", "server", "ppl", "timestamp", "run_group", "cold")

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


def instance_key(run: Run, k: int) -> str:
    """The model's instance label of a run (``k``: the run's index, for runs without one).

    An instance re-used in another experiment (``run_group``) is a new draw of the instance
    effect (local GPUs are re-used across days and server builds); a run with no ``instance``
    is its own instance.
    """
    return f"{run.instance}|{run.run_group}" if run.instance else f"{run.config}#run{k}"


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
        if is_warmup_rep(run.rep):
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


def is_warmup_rep(v) -> bool:
    """True when ``v`` is the run index -1 (``-1``, ``-1.0``, ``"-1"``) of a warm-up pass."""
    if isinstance(v, bool):
        return False
    try:
        return to_float(v) == -1.0
    except (TypeError, ValueError, OverflowError):
        return False


