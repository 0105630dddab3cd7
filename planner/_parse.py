"""Parsing of numbers from user input into :class:`planner.errors.InputError` one-liners."""

from __future__ import annotations

import math
from typing import Any

from planner.errors import InputError


def parse_number(v: Any, *, path: str | None, line: int | None, field: str,
                 optional: bool = False, positive: bool = False, allow_zero: bool = False,
                 integer: bool = False) -> float | int | None:
    """A finite number from a CSV cell, JSON/TOML value or option.

    Parameters
    ----------
    v : any
        The raw value (str, int, float; booleans are refused).
    path, line, field : where it came from, for the error message.
    optional : bool
        Blank / missing gives ``None`` instead of an error.
    positive : bool
        Must be > 0 (>= 0 with ``allow_zero``).
    integer : bool
        Must be a whole number (returned as int).

    Raises
    ------
    InputError
        Missing, not a number, not finite, out of range, or not whole.
    """
    if v is None or (isinstance(v, str) and not v.strip()):
        if optional:
            return None
        raise InputError("missing value", file=path, line=line, field=field)
    if isinstance(v, bool):
        raise InputError(f"not a number: {v!r}", file=path, line=line, field=field)
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InputError(f"not a number: {v!r}", file=path, line=line, field=field) from None
    if not math.isfinite(x):
        raise InputError(f"not a finite number: {v!r}", file=path, line=line, field=field)
    if positive and (x < 0 or (x == 0 and not allow_zero)):
        raise InputError(f"must be {'>=' if allow_zero else '>'} 0, got {v!r}", file=path,
                         line=line, field=field)
    if integer:
        if x != int(x):
            raise InputError(f"must be a whole number, got {v!r}", file=path, line=line,
                             field=field)
        return int(x)
    return x
