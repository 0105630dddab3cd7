"""Plausible ranges of the step-time model's numbers (a ``--cost-file``'s fields and the
options that override them), checked before the model is built."""

from __future__ import annotations

from planner.errors import InputError
from planner.io import limits
from planner.io.limits import Limit

#: Harness efficiency of a cost file (measured TPS / modelled TPS): above 0, at most 2 (the
#: calibrated stack-F value is 0.9485; a harness twice as fast as its own step time is a
#: wrong unit, not a measurement).
HARNESS_EFFICIENCY = Limit("harness efficiency", "", 0.0, 2.0, low_open=True,
                           why="calibrated 0.9485; above 2 the step times are wrong")
#: A staircase step (``staircase_rel`` values): a fraction of the M=1 verify time, 0 to 10
#: (measured +6.75 % to +24.7 % on the A10G).
STAIRCASE_REL = Limit("staircase step", "x the M=1 verify", 0.0, 10.0,
                      why="measured 0.07-0.25 on the A10G")
#: The verify rows at which a staircase step starts (``staircase_rel`` keys): 1 to 10,000
#: (the deepest tree verifies 1 + 16 + 64 rows).
STAIRCASE_ROWS = Limit("staircase rows", "rows", 1, 10_000, integer=True,
                       why="the deepest draft verifies 81 rows")
#: ``sync_factor`` (``--sync-factor``, a cost file's field) has one meaning: the multiplier of
#: the WHOLE step time (verify + GPU drafter + host overhead) of a synchronous step, one whose
#: drafter is a host-side lookup, so the next step cannot be queued before the sampled ids
#: reach the host (:meth:`models.drafting.cost.ForwardCostModel.step_ms`). 1 = a sync costs
#: nothing; measured 1.15-1.26x on the A10G stack F (serialized vs pipelined steps, midpoint
#: 1.20). At least 1: a synchronous step is never faster than the asynchronous one (0.5 made
#: suffix-first project 612.8 TPS); at most 100 (no longer the same machine).
SYNC_FACTOR = Limit("sync factor", "x the asynchronous step", 1.0, 100.0,
                    why="a synchronous step is never faster than the asynchronous one; "
                        "measured 1.20")
#: The limit of each number of the step-time model (a ``--cost-file``'s fields,
#: ``--sync-factor``, ``--drafter-ms``); ``staircase_rel`` is checked item by item.
COST_FIELD_LIMITS = {
    "verify_base_ms": limits.VERIFY_BASE_MS, "verify_per_row_ms": limits.STEP_MS,
    "drafter_per_token_ms": limits.STEP_MS, "host_ms": limits.STEP_MS,
    "sync_add_ms": limits.STEP_MS, "sync_factor": SYNC_FACTOR,
    "harness_efficiency": HARNESS_EFFICIENCY}


def check_cost_field(name: str, value, file: str | None = None) -> None:
    """Range-check one field of the step-time model before it is built
    (:func:`models.drafting.cost.load_cost_model`'s ``check`` hook).

    Parameters
    ----------
    name : str
        Field of :class:`models.drafting.cost.ForwardCostModel` (``verify_base_ms``...).
    value : any
        Its value as the cost file or the option gives it.
    file : str, optional
        The cost file (None for an option such as ``--sync-factor``).

    Raises
    ------
    InputError
        Outside :data:`COST_FIELD_LIMITS` (``*_ms``: :data:`planner.io.limits.STEP_MS`,
        ``sync_factor``: :data:`SYNC_FACTOR`), or a ``staircase_rel`` that is not
        an object of rows (:data:`STAIRCASE_ROWS`) to steps (:data:`STAIRCASE_REL`).
    """
    if name == "staircase_rel":
        if not isinstance(value, dict):
            raise InputError(f"expected an object {{rows: relative step}}, got {value!r}",
                             file=file, field=name)
        for k, v in value.items():
            STAIRCASE_ROWS.check(k, field=f"{name}.{k}", file=file)
            STAIRCASE_REL.check(v, field=f"{name}.{k}", file=file)
        return
    lim = COST_FIELD_LIMITS.get(name)
    if lim is not None:
        lim.check(value, field=name, file=file)
