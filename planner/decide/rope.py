"""The region of practical equivalence (ROPE): parsed as given, converted to the log scale.

``0.5%`` is relative to A's level, ``1.5`` is in the metric's unit (TPS, ms, s). Every command
that applies the decision rule (verdict, repeats, budget, draft) reads its ROPE here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.errors import InputError

__all__ = ["Rope"]


@dataclass(frozen=True)
class Rope:
    """Region of practical equivalence, as given (``0.5%`` relative or ``1.5`` TPS)."""

    value: float
    relative: bool

    @classmethod
    def parse(cls, text: str | float) -> "Rope":
        """Read a ROPE as given: ``0.5%`` (relative) or ``1.5`` (TPS).

        The number is read by the one number grammar (:func:`planner.io._parse.to_float`:
        ``0_1%`` is refused) and checked against :data:`planner.io.limits.ROPE_PCT` (a relative
        ROPE, below 50 %) or :data:`planner.io.limits.ROPE_TPS` (an absolute one, which
        :meth:`check_level` also keeps below half the TPS level).

        Raises
        ------
        InputError
            Not a number or percentage, or outside its range (field ``rope``).
        """
        from planner.io._parse import to_float
        from planner.io.limits import check

        s = str(text).strip()
        rel = s.endswith("%")
        try:
            v = to_float(s[:-1] if rel else s)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"not a number or percentage: {text!r}", field="rope") from None
        if not math.isfinite(v):
            raise InputError(f"not a finite number: {text!r}", field="rope")
        if v < 0:
            raise InputError(f"must be >= 0, got {text!r}", field="rope")
        if rel and v >= 50:
            raise InputError(f"a ROPE of {v:g}% would call almost anything equivalent; "
                             "must be < 50%", field="rope")
        v = float(check("rope_pct" if rel else "rope_tps", v, field="rope"))
        return cls(v, rel)

    def check_level(self, level_tps: float, unit: str = "TPS") -> None:
        """Refuse an absolute ROPE of half the level or more (same bound as relative);
        ``unit`` is the values' unit (TPS, ms, s) for the message."""
        if not self.relative and self.value >= 0.5 * level_tps:
            what = "TPS level" if unit == "TPS" else "level"
            raise InputError(f"a ROPE of {self.value:g} {unit} is >= half the {what} "
                             f"({level_tps:.4g} {unit}); must be smaller", field="rope")

    def log_halfwidth(self, level_tps: float) -> float:
        """Half-width on the log scale at a TPS level."""
        return math.log1p(self.value / 100.0) if self.relative else math.log1p(self.value / level_tps)

    def describe(self) -> str:
        return f"±{self.value:g}%" if self.relative else f"±{self.value:g} TPS"
