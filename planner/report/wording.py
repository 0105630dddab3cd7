"""Counts in words as every view prints them: "1 run per arm", not "1 runs per arm" nor
"1 run(s)"; an expected count of runs to one decimal ("26.0 runs per arm", not "26.048").

:func:`tidy` applies these to the sentences a view composes and to the notes and reasons a
result carries (text the decision layer wrote for display; nothing branches on it). It is
never applied to a name (a config, a file): those are shown as they are. The decision layer
writes its counts in words itself (:func:`planner.results.counts.count`, re-exported here);
:func:`tidy` stays for the sentences that still say "run(s)" and for results saved before.
"""

from __future__ import annotations

import re

from planner.results.counts import count  # re-exported: one home for a count in words

__all__ = ["tidy", "count"]

_NOUNS = ("run", "pair", "instance", "allocation", "look", "session", "comparison",
          "candidate", "group", "value", "experiment", "prompt", "design", "config", "row",
          "file", "cell", "point")
_NOUN = "|".join(_NOUNS)
# up to two: "4 cold first run(s) left out" (one alone left that "(s)" shown as it was)
_ADJ = r"(?:(?:more|new|extra|other|cold|repeated|first|fixed|warm|reachable|unreachable) ){0,2}"
# "1 runs", "1 more runs" (not "0.1 runs", "11 runs", "1,001 runs")
_ONE_PLURAL = re.compile(rf"(?<![\d.,])1 ({_ADJ})({_NOUN})s\b")
_BATCHES = re.compile(r"(?<![\d.,])1 ((?:more )?)batches\b")
# "3 run(s)" / "1 run(s)" / "12 more run(s)"
_MAYBE = re.compile(rf"(?<![\d.])(\d[\d,]*(?:\.\d+)?) ({_ADJ})(\w+?)\(s\)")
# an expected count with more than one decimal: "26.048 runs per arm"
_LONG_RUNS = re.compile(r"(?<![\d.])(\d+\.\d)\d+( runs?\b)")


def tidy(text: str) -> str:
    """``text`` with its counts in words: ``1 runs`` -> ``1 run``, ``N run(s)`` -> ``N runs``
    (``1 run``), ``26.048 runs`` -> ``26.0 runs``."""
    if not isinstance(text, str) or not text:
        return text
    text = _ONE_PLURAL.sub(r"1 \1\2", text)
    text = _BATCHES.sub(r"1 \1batch", text)
    text = _MAYBE.sub(lambda m: f"{m[1]} {m[2]}{m[3]}" + ("" if m[1] == "1" else "s"), text)
    return _LONG_RUNS.sub(r"\1\2", text)
