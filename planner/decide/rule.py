"""The grammar of a decision rule (``verdict``, ``superiority[:LEVEL]``, ``equivalence``):
one parser for ``planner repeats --rule``, a plan's ``rule`` and ``planner budget``."""

from __future__ import annotations

from planner.errors import InputError

__all__ = ["RULE_GRAMMAR", "parse_rule"]


#: The one grammar of a decision rule (``--rule``, a plan's ``rule``), for errors.
RULE_GRAMMAR = "verdict | superiority[:LEVEL] | equivalence (no space, no empty part)"


def parse_rule(rule: str) -> tuple[str, float]:
    """``verdict`` | ``superiority[:LEVEL]`` | ``equivalence`` -> (name, level).

    One grammar (:data:`RULE_GRAMMAR`): a name, then at most one ``:`` followed by a level;
    no space, no empty part (``superiority:`` and ``superiority:0.95:`` are refused alike).

    Raises
    ------
    InputError
        A space, an empty or extra ``:`` part, an unknown rule or a level outside (0.5, 1)
        (field ``rule``).
    """
    from planner.io._parse import to_float

    s = str(rule)
    bad = next((i for i, c in enumerate(s) if c.isspace()), None)
    if bad is not None:
        raise InputError(f"rule {rule!r}: whitespace {s[bad]!r} at position {bad + 1} "
                         f"(grammar {RULE_GRAMMAR})", field="rule")
    parts = s.lower().split(":")
    if len(parts) > 2 or not all(parts):
        what = "an empty part" if len(parts) <= 2 else "more than one ':'"
        raise InputError(f"rule {rule!r}: {what} (grammar {RULE_GRAMMAR})", field="rule")
    name, lev = parts[0], (parts[1] if len(parts) == 2 else "")
    if name not in ("verdict", "superiority", "equivalence"):
        raise InputError(f"unknown rule {rule!r} (verdict, superiority:0.95, equivalence)",
                         field="rule")
    level = 0.95
    if lev:
        if name != "superiority":
            raise InputError(f"only superiority takes a level, got {rule!r}", field="rule")
        try:
            level = to_float(lev)
        except (ValueError, OverflowError):
            raise InputError(f"not a probability: {lev!r}", field="rule") from None
        if not (0.5 < level < 1.0):
            raise InputError(f"level must be in (0.5, 1), got {level:g}", field="rule")
    return name, level

