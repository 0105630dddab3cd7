"""Shared defaults and validators of the decision layer: one place for every constant that
more than one command uses, with its source.

Commands spell options (``--max-runs``); the validators here name plain fields (``max_runs``)
and ``planner.cli`` adds the ``--`` when it reports them.
"""

from __future__ import annotations

from planner.errors import InputError

__all__ = [
    "BASELINE_TPS", "ZTEST_SIGMA_TPS", "ZTEST_CV", "DEFAULT_ROPE", "DEFAULT_ASSURANCE",
    "DEFAULT_RULE", "DEFAULT_PLATFORM", "MAX_FALSE_CLAIM", "MIN_SIMS", "MAX_SIMS",
    "check_assurance", "check_sims",
]

#: Baseline TPS level when nothing else is known: mean of the published N = 4 repeats of one
#: byte-identical submission on HF Jobs a10g-small (307.08 TPS, sd 1.16, range 2.48;
#: ``examples/runs/tps_runs.md``).
BASELINE_TPS = 307.08
#: The reference A/B script's per-run noise: sd 1.16 TPS from the same N = 4 repeats.
ZTEST_SIGMA_TPS = 1.16
#: The same noise as a coefficient of variation (1.16 / 307.08 = 0.378 %).
ZTEST_CV = ZTEST_SIGMA_TPS / BASELINE_TPS
#: Default ROPE: 0.1 % of TPS, the smallest delta the reference A/B runner calls REAL at
#: n >= 3 (``examples/runs/tps_runs.md``, "Paired designs and A/B claims").
DEFAULT_ROPE = "0.1%"
#: Default target assurance of a repeat plan (probability the planned experiment decides).
DEFAULT_ASSURANCE = 0.8
#: Default decision rule of a repeat plan (the verdict's HDI + ROPE labels).
DEFAULT_RULE = "verdict"
#: Platform whose prior and cost model are used when none is given.
DEFAULT_PLATFORM = "hf-a10g-small"
#: Largest acceptable false-claim rate of a recommended design.
MAX_FALSE_CLAIM = 0.05
#: Range of simulated experiments per design (below 100 the Monte-Carlo error swamps the
#: assurance; above 100,000 a plan takes minutes for no visible gain).
MIN_SIMS = 100
MAX_SIMS = 100_000


def check_assurance(value: float, *, field: str = "assurance", **where) -> float:
    """Return ``value`` if it is a target assurance in (0, 1).

    Raises
    ------
    planner.errors.InputError
        Naming ``field`` (and ``where``: file, line) when it is not.
    """
    if not (0.0 < float(value) < 1.0):
        hint = (f"; did you mean {float(value) / 100:g}? (a fraction, not a percent)"
                if 1.0 < float(value) < 100.0 else "")
        raise InputError(f"assurance target must be in (0, 1), got {value!r}{hint}",
                         field=field, **where)
    return float(value)


def check_sims(value: int, *, field: str = "sims", **where) -> int:
    """Return ``value`` if it is within [MIN_SIMS, MAX_SIMS].

    Raises
    ------
    planner.errors.InputError
        Naming ``field`` when it is not.
    """
    if value < MIN_SIMS or value > MAX_SIMS:
        raise InputError(f"must be between {MIN_SIMS} and {MAX_SIMS:,}, got {value:,}",
                         field=field, **where)
    return int(value)
