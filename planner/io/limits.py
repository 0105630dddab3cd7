"""Plausible ranges of every numeric input: one rule per quantity, shared by every reader,
writer and command.

Each quantity (a TPS value, a Δ, a cost, a time, a count, a seed) has one :class:`Limit`: its
unit, its range and why. Readers of runs tables and tools' result files, the quick forms of
``planner verdict``, plan files and command options all check values through
:func:`check`, so a value one of them refuses is refused by every other (``planner ingest``
does not write a run that ``planner verdict`` would refuse). Ranges are wide: they only
exclude values a benchmark cannot produce (unit errors, overflow-sized numbers such as
``1e308`` or ``1e-300``) and values whose work would grow with the value rather than with the
data (a budget of a billion dollars priced in cents, 10^8 runs per arm).

Names (config, instance, platform, metric, workload, run group, ...) follow one rule too:
:func:`check_name` refuses control characters (a NUL byte or a tab in a config label would
silently make another config).

Every refusal is a :class:`planner.errors.InputError` naming the field (and the file and line
when the value came from a file).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from planner.io._parse import not_a_number, to_float, too_large
from planner.errors import InputError

__all__ = ["Limit", "LIMITS", "TPS", "DURATION", "BYTES", "PPL", "DELTA_TPS", "DELTA_PCT", "DELTA_SD",
           "ROPE_PCT", "ROPE_TPS", "PRICE_PER_HOUR", "TOTAL_USD", "MINUTES_PER_RUN",
           "STARTUP_MINUTES", "RUNS_PER_ARM", "MAX_RUNS_TOTAL", "RUNS_PER_INSTANCE", "SIMS",
           "BOOTSTRAP", "MC_REPS", "DRAWS", "SIGMA_TPS", "VERIFY_BASE_MS", "SEED", "REP", "NOISE_CV", "NOISE_SCALE", "PRIOR_DF",
           "POLL_SECONDS", "WATCH_SECONDS",
           "check_noise_prior", "check_delta_at", "metric_unit", "SYNC_FACTOR", "STEP_MS", "GAMMA", "check", "check_all", "value_limit", "check_name", "has_control"]


@dataclass(frozen=True)
class Limit:
    """The plausible range of one quantity.

    Attributes
    ----------
    quantity : str
        What the value is (``TPS``), used in messages.
    unit : str
        Its unit (``tokens/s``, ``$``, ``min``, ``runs``; '' for a pure number).
    low, high : float
        The range's ends.
    low_open : bool
        ``low`` itself is excluded (a rate of 0 or a Δ of -100 % is not a measurement).
    integer : bool
        Only whole numbers.
    why : str
        The reason for the range (shown in the documentation, not in every message).
    """

    quantity: str
    unit: str
    low: float
    high: float
    low_open: bool = False
    integer: bool = False
    why: str = ""

    def describe(self) -> str:
        """The range as text: ``(0, 1e+06] tokens/s``."""
        lo = f"{self.low:,}" if self.integer else f"{self.low:g}"
        hi = f"{int(self.high):,}" if self.integer else f"{self.high:g}"
        u = f" {self.unit}" if self.unit else ""
        return f"{'(' if self.low_open else '['}{lo}, {hi}]{u}"

    def check(self, value: Any, *, field: str, file: str | None = None,
              line: int | None = None) -> float | int:
        """Return ``value`` (a float, or an int for an integer quantity) if it is in range.

        Parameters
        ----------
        value : int or float or str
            The value (a string is parsed as a number; booleans are refused).
        field : str
            The field or option named in the error.
        file, line : optional
            Where the value came from.

        Raises
        ------
        planner.errors.InputError
            Not a number, not finite, not whole (integer quantities) or outside the range.
        """
        where = {"file": file, "line": line, "field": field}
        if isinstance(value, bool):
            raise InputError(f"not a number: {value!r}", **where)
        try:
            x = to_float(value)
        except OverflowError:  # an integer of hundreds of digits: its count, not its digits
            raise InputError(too_large(value), **where) from None
        except (TypeError, ValueError):
            raise InputError(not_a_number(value), **where) from None
        if not math.isfinite(x):
            raise InputError(f"not a finite number: {value!r}", **where)
        below = x <= self.low if self.low_open else x < self.low
        if below or x > self.high:
            shown = f"{int(x):,}" if self.integer and x == int(x) and abs(x) < 1e18 else f"{x:g}"
            hint = (f"; did you mean {x / 100:g} ({x:g}%)?" if self.unit == "fraction"
                    and 1.0 <= x <= 100.0 else "")
            raise InputError(f"implausible {self.quantity} {shown}: outside {self.describe()}"
                             f"{hint}", **where)
        if self.integer:
            if x != int(x):
                raise InputError(f"must be a whole number, got {value!r}", **where)
            return int(x)
        return x


#: A rate (tokens/s, or any higher-is-better value of a runs table or a tool's result):
#: 0.01 is one token per 100 s (a stalled server; the reports print TPS to 2 decimals, so
#: anything smaller would show as 0.00); 1e6 is far beyond any single-stream decode (the
#: fastest published LLM decodes are ~10^3-10^4 tokens/s), so larger values are unit errors.
TPS = Limit("TPS", "tokens/s", 0.01, 1e6, why="0.01: one token per 100 s, the smallest the "
            "2-decimal reports show; 1e6: beyond any decode, a unit error")
#: A latency or duration (lower is better; seconds or milliseconds as the metric says): 1 ns
#: (the resolution of ``time.perf_counter_ns``; pyperf micro-benchmarks report ~10^-8 s) to
#: 1e9 (31.7 years in s, 11.6 days in ms).
DURATION = Limit("duration", "", 1e-9, 1e9, why="1 ns timer resolution to 11.6 days in ms")
#: A memory size in bytes (pyperf's ``byte`` unit): 1 B to 1 PB.
BYTES = Limit("size", "bytes", 1.0, 1e15, why="1 byte to 1 PB")
#: Perplexity recorded with a run: >= 1 by definition (exp of a non-negative cross-entropy);
#: 1e6 is a broken model, not a measurement.
PPL = Limit("perplexity", "", 1.0, 1e6, why=">= 1 by definition; 1e6 is a broken model")
#: An expected or measured Δ in TPS (B − A): bounded by the TPS range.
DELTA_TPS = Limit("delta", "TPS", -1e6, 1e6, why="a difference of two TPS values")
#: A Δ in % of the baseline: above -100 % (B would decode at 0 TPS) and up to +10,000 % (a
#: 100x speed-up; speculative decoding reaches ~2-5x).
DELTA_PCT = Limit("delta", "%", -100.0, 10_000.0, low_open=True,
                  why="-100 % is a rate of 0; +10,000 % is a 100x speed-up")
#: The sd of an expected Δ (a plan's ``delta_sd``, TPS or % as its Δ): from 1e-6 (a
#: millionth of a TPS or of a percent: below it the Δ is known exactly, so leave ``delta_sd``
#: out; ``5e-324`` made the effect's distribution degenerate and failed in the simulation)
#: to the TPS range.
DELTA_SD = Limit("delta sd", "TPS or %", 1e-6, 1e6,
                 why="below 1e-6 the delta is exact (leave delta_sd out); 1e6: the TPS range")
#: ROPE half-width in % of TPS: below 50 % (a wider ROPE calls any two configs equivalent;
#: :class:`planner.decide.verdict.Rope` enforces it), default 0.1 %.
ROPE_PCT = Limit("ROPE", "%", 0.0, 50.0, why="a ROPE of 50 % calls any two configs equal")
#: ROPE half-width in TPS (the verdict also keeps it below the baseline level).
ROPE_TPS = Limit("ROPE", "TPS", 0.0, 1e6, why="the TPS range")
#: GPU price: an 8xH100 node costs ~$100/h on demand; $1,000/h leaves 10x room.
PRICE_PER_HOUR = Limit("price", "$/h", 0.0, 1000.0, low_open=True,
                       why="8xH100 ~ $100/h on demand, 10x room")
#: A total budget or cost cap: up to $1,000,000 of GPU time (~10^4 GPU-days at $4/h), far
#: beyond a benchmark campaign. The purchase search works over items, not cents, so its
#: memory does not grow with this value.
TOTAL_USD = Limit("budget", "$", 0.0, 1e6, low_open=True,
                  why="$1M of GPU time is beyond any benchmark campaign")
#: Minutes per run: a benchmark run is seconds to hours; one day is the ceiling.
MINUTES_PER_RUN = Limit("time per run", "min", 0.0, 1440.0, low_open=True,
                        why="a run longer than a day is not a benchmark repeat")
#: Start-up minutes per allocation (server start, model load): 0 to one day.
STARTUP_MINUTES = Limit("start-up time", "min", 0.0, 1440.0,
                        why="a start-up longer than a day is a broken allocation")
#: Seconds between polls of ``next --watch``: 10 ms (a busy loop below it) to one day (a
#: harness lands a run every few minutes; 1e12 s overflowed the platform's time_t).
POLL_SECONDS = Limit("poll interval", "s", 0.01, 86_400.0,
                     why="a busy loop below 10 ms; a day between polls watches nothing")
#: Seconds before ``next --watch`` gives up: 0 (one look) to 30 days (a campaign, not a watch).
WATCH_SECONDS = Limit("watch timeout", "s", 0.0, 30 * 86_400.0,
                      why="30 days is a campaign, not a watch")
#: Runs per arm of a planned design (``max_runs_per_arm``, ``repeats --max-runs``): 1,000
#: runs of a 10-minute benchmark are ~7 GPU-days per arm; the simulations' memory and time
#: grow with this cap (10^8 tried to allocate 47.7 GiB; 1,000 at 200 sims: 21 s, 250 MB).
RUNS_PER_ARM = Limit("runs per arm", "runs", 1, 1000, integer=True,
                     why="~7 GPU-days per arm at 10 min a run; simulation cost grows with it")
#: Total runs of both arms of a budget (``max_runs``).
MAX_RUNS_TOTAL = Limit("run budget", "runs", 1, 100_000, integer=True,
                       why="100 comparisons at the per-arm cap, both arms")
#: Runs (or pairs) per instance, runs per look: at most the per-arm cap.
RUNS_PER_INSTANCE = Limit("runs per instance", "runs", 1, 1000, integer=True,
                          why="at most the runs of an arm")
#: Simulated experiments per design (:data:`planner.defaults.MIN_SIMS` ..
#: :data:`planner.defaults.MAX_SIMS`): below 100 the Monte-Carlo error swamps the assurance;
#: above 100,000 a plan takes minutes for no visible gain.
SIMS = Limit("simulations", "", 100, 100_000, integer=True,
             why="Monte-Carlo error below 100; minutes for no gain above 100,000")
#: Bootstrap replicates (``draft --bootstrap``): 100 resolves a 95 % interval's ends only
#: roughly, 100,000 already gives them to ~0.1 %; time and memory grow with it.
BOOTSTRAP = Limit("bootstrap replicates", "", 100, 100_000, integer=True,
                  why="interval ends need ~100; 100,000 resolves them to ~0.1 %")
#: Monte-Carlo replicates of a drafting walk (``draft --mc-reps``, ``draft-sweep --mc-reps``):
#: each replicate re-walks the whole capture, so time and memory grow with it (10^8 tried to
#: allocate the replicate arrays and failed with a numpy memory error); 10,000 replicates
#: already put the Monte-Carlo error far below the bootstrap interval.
MC_REPS = Limit("Monte-Carlo replicates", "", 1, 10_000, integer=True,
                why="each replicate re-walks the capture; 10,000 is far below bootstrap error")
#: Monte-Carlo draws of ``planner shift``: below 100 the probability is too coarse; one
#: million draws give P to ~0.001 (memory grows with it: 10^9 draws is tens of GB).
DRAWS = Limit("Monte-Carlo draws", "", 100, 1_000_000, integer=True,
              why="P to ~0.001 at 10^6 draws; memory grows with the draws")
#: The TPS sd of one run (``draft --sigma-tps``): positive, at most the TPS range.
SIGMA_TPS = Limit("TPS sd", "tokens/s", 0.0, 1e6, low_open=True, why="the TPS range")
#: Random seeds: 0 .. 2^32 - 1, the range every numpy seeding API and most tools accept, so a
#: saved report's seed reproduces anywhere.
SEED = Limit("seed", "", 0, 2**32 - 1, integer=True, why="32-bit seeds reproduce anywhere")
#: A run's ``rep`` (its index among a config's runs on one instance): 0 .. 10^6 (a million
#: repeats of one config on one machine is beyond any campaign; ``-1`` or ``1e12`` is a typo
#: or a timestamp in the wrong column).
REP = Limit("rep", "", 0, 1_000_000, integer=True,
            why="an index from 0; 10^6 repeats on one machine is beyond any campaign")
#: A stated noise CV (``--cv``, ``--cv-instance``; a fraction, ``2%`` = 0.02): from 0.0001 %
#: (below it the 2-decimal TPS values of a ~300 TPS run could not show it, and the noise
#: model's grid would divide by ~0) to 99 % (100 % is a run-to-run spread as large as the
#: value itself).
NOISE_CV = Limit("noise CV", "fraction", 1e-6, 0.99, why="0.0001 % is below any measurable "
                 "spread; 100 % is a spread as large as the value")
#: The scale of a noise prior (``tau``/``sigma`` of a ``--prior`` file or of what ``planner
#: calibrate`` writes): a log-scale SD from 1e-6 to log(2) = 0.693 (the log of a CV of 100 %),
#: the range of :data:`NOISE_CV` on the log scale.
NOISE_SCALE = Limit("noise scale", "log-SD", 1e-6, 0.6931471805599453,
                    why="the NOISE_CV range on the log scale")
#: Degrees of freedom of a noise prior (``--cv 2%:DF``, ``calibrate --max-df``, a prior file's
#: ``df``): from 0.1 (below it the inverse-chi2 scale's 95 % range spans hundreds of decades
#: and the exact engine's grid has no finite quantile: ``df`` 0.01 and ``1e-320`` failed
#: there, 0.1 holds) up to 10^5 (already a point mass: the scale's 95 % range is +-0.4 % of
#: itself; larger values overflow the prior's density).
PRIOR_DF = Limit("prior degrees of freedom", "", 0.1, 1e5,
                 why="below 0.1 df the prior has no usable quantiles; 10^5 df is a point mass")
#: Multiplier of a drafting step that needs a host sync (``draft --sync-factor``; the cost
#: model's ``sync_factor``, measured 1.20 on the A10G stack F): 0.5 to 100. A sync never
#: makes a step faster, so below 1 is already generous; near 0 the step time vanished and
#: the TPS overflowed (4.9e-324 failed as a non-finite gain); 1e308 overflowed the model.
SYNC_FACTOR = Limit("sync factor", "", 0.5, 100.0,
                    why="measured 1.20; a synced step is never 2x faster than an async one, "
                        "and 100x is no longer the same machine")
#: A time per step, row or draft token of the step-time model (``draft --drafter-ms``, a cost
#: file's ``verify_base_ms``, ``drafter_per_token_ms``, ...): 0 to 1,000 ms (the measured A10G
#: values are 0.2-7 ms; a second per draft token is a unit error, ms given as us or s).
STEP_MS = Limit("step time", "ms", 0.0, 1000.0,
                why="measured 0.2-7 ms on the A10G; 1 s per step is a unit error")
#: The verify forward at M = 1 (a cost file's ``verify_base_ms``): as :data:`STEP_MS` but
#: above 0, since every other step time is priced from it (the staircase is a fraction of it).
VERIFY_BASE_MS = Limit("verify time", "ms", 0.0, 1000.0, low_open=True,
                       why="measured 6.25 ms on the A10G; a step cannot take no time")
#: The correlation exponent gamma of hybrid drafting (``draft --correlation GAMMA``): 0
#: (independent) to 100 (acceptance follows lookup easiness as a step function already).
GAMMA = Limit("correlation gamma", "", 0.0, 100.0,
              why="beyond ~100 the power is a step function; 1e308 is not a setting")

#: Every limit by plain field name (the plan file's and the decision layer's field names).
LIMITS: dict[str, Limit] = {
    "tps": TPS, "baseline_tps": TPS, "duration": DURATION, "bytes": BYTES, "ppl": PPL,
    "delta_tps": DELTA_TPS, "delta_pct": DELTA_PCT, "delta_sd": DELTA_SD, "rope_pct": ROPE_PCT, "rope_tps": ROPE_TPS,
    "price_per_hour": PRICE_PER_HOUR, "total_usd": TOTAL_USD, "max_cost": TOTAL_USD,
    "minutes_per_run": MINUTES_PER_RUN, "startup_minutes": STARTUP_MINUTES,
    "max_runs_per_arm": RUNS_PER_ARM, "runs_per_arm": RUNS_PER_ARM, "max_runs": MAX_RUNS_TOTAL,
    "runs_per_instance": RUNS_PER_INSTANCE, "pairs_per_instance": RUNS_PER_INSTANCE,
    "batch": RUNS_PER_INSTANCE, "sims": SIMS, "bootstrap": BOOTSTRAP, "seed": SEED,
    "mc_reps": MC_REPS, "draws": DRAWS, "sigma_tps": SIGMA_TPS, "public_tps": TPS,
    "rep": REP, "cv": NOISE_CV, "cv_instance": NOISE_CV, "noise_scale": NOISE_SCALE,
    "df": PRIOR_DF, "max_df": PRIOR_DF, "sync_factor": SYNC_FACTOR, "drafter_ms": STEP_MS,
    "drafter_per_token_ms": STEP_MS, "verify_base_ms": STEP_MS, "verify_per_row_ms": STEP_MS,
    "host_ms": STEP_MS, "correlation": GAMMA, "interval": POLL_SECONDS,
    "timeout": WATCH_SECONDS,
}


def check(name: str, value: Any, *, field: str | None = None, file: str | None = None,
          line: int | None = None) -> float | int:
    """Check ``value`` against the limit of quantity ``name`` (a key of :data:`LIMITS`).

    Parameters
    ----------
    name : str
        The quantity (``total_usd``, ``max_runs_per_arm``, ``tps``...).
    value : int, float or str
        The value.
    field : str, optional
        The field or option named in an error (default ``name``).
    file, line : optional
        Where the value came from.

    Returns
    -------
    float or int
        The value (int for counts and seeds).

    Raises
    ------
    planner.errors.InputError
        Outside the quantity's range, not finite or not a number.
    """
    return LIMITS[name].check(value, field=field or name, file=file, line=line)


def check_all(items) -> None:
    """Check several values at once: ``items`` of ``(name, value, field)``; ``None`` values
    (options not given) are skipped.

    Raises
    ------
    planner.errors.InputError
        The first value outside its range, naming its ``field`` (a command passes its option
        spelling, ``--max-runs``).
    """
    for name, value, field in items:
        if value is not None:
            check(name, value, field=field)


def check_delta_at(delta_tps: float, baseline_tps: float, *, field: str,
                   baseline_field: str, file: str | None = None,
                   line: int | None = None) -> float:
    """Check a Δ in TPS against the baseline it is measured at: as a share of the baseline
    it must lie in :data:`DELTA_PCT` (above -100 %, at most +10,000 %). ``--delta 307
    --baseline-tps 0.5`` (the two values swapped) is +61,400 % and refused.

    Parameters
    ----------
    delta_tps, baseline_tps : float
        The Δ (TPS, B − A) and the baseline TPS (both already in their own ranges).
    field, baseline_field : str
        The option or field names of each, for the message.
    file, line : optional
        Where the values came from.

    Returns
    -------
    float
        The Δ in % of the baseline.

    Raises
    ------
    planner.errors.InputError
        The share is outside :data:`DELTA_PCT`, naming both fields.
    """
    pct = 100.0 * float(delta_tps) / float(baseline_tps)
    below = pct <= DELTA_PCT.low
    if below or pct > DELTA_PCT.high:
        raise InputError(f"implausible delta {delta_tps:+g} TPS at a baseline of "
                         f"{baseline_tps:g} TPS: {pct:+,.0f} % of the baseline, outside "
                         f"{DELTA_PCT.describe()} (are {field} and {baseline_field} "
                         "swapped?)", file=file, line=line, field=field)
    return pct


def value_limit(metric: str, lower_is_better: bool) -> Limit:
    """The limit of a run's value: :data:`BYTES` for ``bytes``, :data:`DURATION` for a
    latency or duration (lower is better), else :data:`TPS` (a rate)."""
    if metric == "bytes":
        return BYTES
    return DURATION if lower_is_better else TPS


def metric_unit(metric: str | None, lower_is_better: bool = False) -> str:
    """The unit a view prints for the values of ``metric``: ``ms`` for a ``*_ms`` field
    (vLLM/SGLang latencies), ``s`` for ``*_s`` and ``time_s`` (hyperfine, pyperf, vLLM
    latency), ``bytes`` for pyperf's sizes, ``TPS`` for a rate (higher is better); a
    lower-is-better metric of no known unit is ``units``.

    Examples
    --------
    >>> metric_unit("mean_tpot_ms", True), metric_unit("wall_time_s", True)
    ('ms', 's')
    """
    m = (metric or "").lower()
    if m == "bytes":
        return "bytes"
    if m.endswith("_ms"):
        return "ms"
    if m.endswith("_s") or m in ("s", "seconds"):
        return "s"
    return "units" if lower_is_better else "TPS"


#: C0 and C1 control characters and DEL (NUL, tab, newline, escape...).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def has_control(text: str) -> bool:
    """True when ``text`` holds a control character (C0, DEL or C1)."""
    return _CONTROL.search(text) is not None


def check_name(text: str, *, field: str, file: str | None = None,
               line: int | None = None) -> str:
    """Return ``text`` if it holds no control character.

    Raises
    ------
    planner.errors.InputError
        Naming the character (as ``\\x00``), the field, file and line.
    """
    m = _CONTROL.search(text)
    if m is not None:
        raise InputError(f"control character {m.group()!r} at position {m.start() + 1} of "
                         f"{text!r}", file=file, line=line, field=field)
    return text


#: Kinds of a noise prior's scale (:class:`models.stats.noise.ScalePrior`).
_SCALE_KINDS = ("inv_chi2", "half_normal")


#: Keys of a prior object (``NoisePrior.to_dict`` and what ``planner calibrate`` adds).
_PRIOR_KEYS = frozenset({"tau", "sigma", "name", "source", "extra"})


def check_noise_prior(d: Any, *, file: str | None = None) -> dict:
    """Check a noise prior as a ``--prior`` file holds it and ``planner calibrate`` writes it.

    ``d`` is the ``prior`` object (``{"tau": {...}, "sigma": {...}, "name", "source"}``) or a
    whole ``planner calibrate --json`` result holding one. Each of ``tau`` and ``sigma`` needs
    ``kind`` (``inv_chi2`` or ``half_normal``), ``scale`` in :data:`NOISE_SCALE` and, for
    ``inv_chi2``, ``df`` in :data:`PRIOR_DF`; ``name`` and ``source`` hold no control
    character. The same rule is applied by the writer (calibrate) and every reader of a
    prior file, so a prior one accepts the other accepts.

    Returns
    -------
    dict
        The ``prior`` object.

    Raises
    ------
    planner.errors.InputError
        Naming the file and the field (``tau.scale``...).
    """
    schema = d.get("schema") if isinstance(d, dict) else None
    if isinstance(schema, str) and schema.startswith("spec-planner/") and \
            schema != "spec-planner/noise-prior/1":
        what = schema.split("/")[1]
        raise InputError(f"a saved '{what}' result, not a noise prior: a prior file is what "
                         "planner calibrate writes as JSON, a prior object or a platform name",
                         file=file, field="schema")
    if isinstance(d, dict) and isinstance(d.get("prior"), dict):
        d = d["prior"]
    if not isinstance(d, dict):
        raise InputError("expected a JSON object with 'tau' and 'sigma'", file=file,
                         field="prior")
    unknown = sorted(set(d) - _PRIOR_KEYS)
    if unknown:  # a typo ('tua') would otherwise be ignored silently
        raise InputError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_PRIOR_KEYS))})",
                         file=file, field=unknown[0])
    for part in ("tau", "sigma"):
        sp = d.get(part)
        if not isinstance(sp, dict):
            raise InputError("missing (an object with kind, scale, df)", file=file, field=part)
        bad = sorted(set(sp) - {"kind", "scale", "df"})
        if bad:
            raise InputError(f"unknown key {bad[0]!r} (known: kind, scale, df)", file=file,
                             field=f"{part}.{bad[0]}")
        kind = sp.get("kind")
        if kind not in _SCALE_KINDS:
            raise InputError(f"unknown kind {kind!r} (known: {', '.join(_SCALE_KINDS)})",
                             file=file, field=f"{part}.kind")
        if kind == "half_normal" and "df" in sp:
            raise InputError("a half_normal scale takes no df (only inv_chi2 has one)",
                             file=file, field=f"{part}.df")
        NOISE_SCALE.check(sp.get("scale"), field=f"{part}.scale", file=file)
        if kind == "inv_chi2":
            PRIOR_DF.check(sp.get("df"), field=f"{part}.df", file=file)
    for key in ("name", "source"):
        v = d.get(key)
        if v is not None:
            if not isinstance(v, str):
                raise InputError(f"expected text, got {v!r}", file=file, field=key)
            check_name(v, field=key, file=file)
    return d
