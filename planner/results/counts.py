"""Counts in words, for the sentences every layer writes: ``1 run``, ``2 runs``, ``1,000 runs``.

It sits below the decision layer (``planner.results`` is imported by ``planner.decide``) so a
note or reason is written right where it is composed ("1 run lies far ...", "3 cold first
runs ..."), not as "run(s)" for :mod:`planner.report.wording` to tidy at render time.
"""

from __future__ import annotations

import numbers

__all__ = ["count", "plural"]


def plural(n, noun: str, plural_form: str | None = None) -> str:
    """The word for ``n`` of ``noun``: ``noun`` when ``n == 1``, else ``plural_form`` or
    ``noun + "s"`` (``plural(1, "run")`` -> ``run``; ``plural(0, "batch", "batches")``)."""
    return noun if n == 1 else (plural_form or noun + "s")


def count(n, noun: str, plural_form: str | None = None) -> str:
    """``n`` and its noun: ``1 run``, ``2 runs``, ``1,000 runs`` (an integer, NumPy's too, with thousands
    separators; any other number as ``str`` gives it); ``plural_form``: a plural that is not
    noun + s (``count(2, "batch", "batches")``)."""
    word = plural(n, noun, plural_form)
    return f"{n:,} {word}" if isinstance(n, numbers.Integral) and not isinstance(n, bool) else f"{n} {word}"
