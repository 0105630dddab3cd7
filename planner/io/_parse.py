"""Parsing of numbers from user input into :class:`planner.errors.InputError` one-liners."""

from __future__ import annotations

import math
import re
from typing import Any

from models.files import HUGE_INTEGER as _HUGE
from planner.errors import InputError

__all__ = ["HUGE_INTEGER", "NUMBER", "not_a_number", "to_float", "parse_number", "LIST_GRAMMAR", "split_items",
           "decimal_comma", "refuse_decimal_comma"]

#: The one grammar of a number typed by a user or read from a file: optional sign, decimal
#: digits with an optional fraction, optional exponent (``308``, ``-0.5``, ``1e-3``, ``.5``,
#: ``2.``). Python's ``float()`` also takes ``3_00`` (300), ``45_3.5``, ``infinity``, ``nan``
#: and surrounding Unicode spaces; a benchmark value never has them, so they are refused
#: rather than silently read as another number.
NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

_NONFINITE = ("inf", "infinity", "nan")

#: The error of a JSON or TOML file holding an integer of more digits than Python converts
#: (one message for both layers: :data:`models.files.HUGE_INTEGER`).
HUGE_INTEGER = _HUGE


def not_a_number(v: Any) -> str:
    """``not a number: '308,5' (a decimal comma? write 308.5)``: the message for a value
    outside :data:`NUMBER`, with the hint when it is a number written with a decimal comma
    (a spreadsheet's export in a European locale)."""
    msg = f"not a number: {v!r}"
    if isinstance(v, str):
        m = re.fullmatch(r"\s*([+-]?[0-9]*),([0-9]+)\s*", v)
        if m:
            msg += f" (a decimal comma? write {m.group(1) or '0'}.{m.group(2)})"
    return msg


def too_large(v: int) -> str:
    """``not a finite number: an integer of 401 digits``: the message for an int beyond
    float's range (up to :data:`HUGE_INTEGER`'s 4,300 digits a JSON reader accepts), which
    would print as hundreds of digits."""
    return f"not a finite number: an integer of {len(str(abs(v))):,} digits"


def to_float(v: Any) -> float:
    """``v`` as a float, by the one number grammar (:data:`NUMBER`).

    Numbers (int, float) pass through ``float``; a string must match :data:`NUMBER` after
    stripping ASCII spaces and tabs (a CSV cell ``" 453.5 "`` is fine, ``"3_00"`` and ``"0x1c5"`` are
    not). Non-finite values come back as they are (the caller names them).

    Raises
    ------
    ValueError
        A string outside the grammar, or a value of another type (booleans included).
    OverflowError
        An int too large for a float.
    """
    if isinstance(v, bool):
        raise ValueError(f"not a number: {v!r}")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip(" \t\r\n")
        if s.lower().lstrip("+-") in _NONFINITE:
            return float(s)  # named by the caller as 'not a finite number'
        if not NUMBER.fullmatch(s):
            raise ValueError(f"not a number: {v!r}")
        return float(s)
    raise ValueError(f"not a number: {v!r}")


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
        x = to_float(v)
    except OverflowError:  # a JSON integer of hundreds of digits: its count, not its digits
        raise InputError(too_large(v), file=path, line=line, field=field) from None
    except (TypeError, ValueError):
        raise InputError(not_a_number(v), file=path, line=line, field=field) from None
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


#: The one grammar of a comma list typed by a user (``--n-values``, ``--depth-values``,
#: ``--k-values``, ``--curve``, the KEY=VALUE pairs of a policy spec, ``repeats --design``): items separated by
#: single commas, no space anywhere, no empty item (so no leading or trailing comma).
LIST_GRAMMAR = "ITEM,ITEM,... (no spaces, no empty item, no trailing comma)"


def split_items(text: str, *, field: str, what: str = "list") -> list[str]:
    """Split a comma list by :data:`LIST_GRAMMAR`.

    Parameters
    ----------
    text : str
        The list as typed (``"1,2,3"``).
    field : str
        The option named in an error (``--n-values``).
    what : str
        What the list is, for the message.

    Returns
    -------
    list of str
        The items (at least one, none empty).

    Raises
    ------
    InputError
        A space (or any whitespace) anywhere, or an empty item (``1,,2``, ``1,2,``, ``,1``,
        ``''``), naming the item's position.
    """
    bad = next((i for i, c in enumerate(text) if c.isspace()), None)
    if bad is not None:
        raise InputError(f"{what} {text!r}: whitespace {text[bad]!r} at position {bad + 1} "
                         f"(grammar {LIST_GRAMMAR})", field=field)
    items = text.split(",")
    for i, it in enumerate(items, 1):
        if not it:
            raise InputError(f"{what} {text!r}: item {i} of {len(items)} is empty "
                             f"(grammar {LIST_GRAMMAR})", field=field)
    return items


def decimal_comma(text: str) -> str | None:
    """The first ``INT,D`` (``308,5``) of a number list typed with a decimal comma, or None.

    The rule: a list with no ``.`` and no exponent anywhere is ambiguous when every item
    after the first is 1 or 2 digits, each shorter than the first item (or the first is
    ``0``): ``308,5``, ``308,50``, ``12,1``, ``0,5`` are one value written the European way
    far more often than runs of 308 and 5 TPS; and when it holds both ``;`` and ``,``
    (``308,5;309,1``). A list of full numbers (``308.1,307.9``, ``300,301``, ``300,301,30``,
    ``308.0,5``) and of small whole numbers alike in length (``1,2``, ``12,15``) is read as
    it is.

    Examples
    --------
    >>> decimal_comma("308,5"), decimal_comma("308.1,307.9"), decimal_comma("300,301")
    ('308,5', None, None)
    """
    s = str(text)
    if "." in s or "e" in s.lower() or "," not in s:
        return None
    if ";" in s:  # '308,5;309,1': ';' between values, ',' inside them
        m = re.search(r"([+-]?[0-9]+),([0-9]+)", s)
        return f"{m.group(1)},{m.group(2)}" if m else None
    items = [t.strip() for t in s.split(",")]
    head = items[0].lstrip("+-")
    if re.fullmatch(r"[0-9]+", head) and all(re.fullmatch(r"[0-9]{1,2}", t) for t in items[1:]) \
            and (head == "0" or all(len(t) < len(head) for t in items[1:])):
        return f"{items[0]},{items[1]}"
    return None


def refuse_decimal_comma(text: str, *, field: str) -> None:
    """Refuse a number list typed with a decimal comma (:func:`decimal_comma`).

    Raises
    ------
    InputError
        Naming ``field``: ``308,5 looks like a decimal comma: write 308.5; separate runs with
        ',' only between full numbers``.
    """
    hit = decimal_comma(text)
    if hit is not None:
        whole, frac = hit.split(",")
        raise InputError(f"{hit} looks like a decimal comma: write {whole}.{frac}; separate runs "
                         f"with ',' only between full numbers (whole values as {whole}.0,"
                         f"{frac}.0)", field=field)
