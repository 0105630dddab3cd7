"""The metric's direction: whether a higher value is better (TPS, rates) or a lower one
(latencies, durations), and the label the decision rule's label is shown as."""

from __future__ import annotations

from planner.io.runs import RunsTable

__all__ = ["DIRECTIONS", "shown_label", "read_direction"]


#: Values of the result's ``direction``.
DIRECTIONS = ("higher_is_better", "lower_is_better")

#: Decision-rule label (:mod:`models.stats.decision`: "B better" = B's value higher beyond the ROPE)
#: -> the label shown for a lower-is-better metric. The rule itself is the same for both.
_LOWER_LABELS = {"B better": "B slower", "A better": "B faster"}


def shown_label(rule_label: str, direction: str) -> str:
    """The label shown for a decision-rule label and a metric direction.

    For ``higher_is_better`` (TPS and other rates) the rule's label is shown as is
    ("B better" / "A better"); for ``lower_is_better`` (latencies, durations) B's value being
    higher is "B slower" and lower is "B faster". "equivalent" and "undecided" are the same.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}")
    return _LOWER_LABELS.get(rule_label, rule_label) if direction == "lower_is_better" \
        else rule_label


def read_direction(sub: RunsTable, given: bool | None, *, plain: bool = False
               ) -> tuple[str, str, str | None]:
    """(direction, source, note) of the compared rows; see :func:`planner.decide.verdict.verdict`."""
    inferred = sub.lower_is_better  # raises on rows of both directions
    names = sorted({r.metric for r in sub.runs if r.metric})
    if given is not None:
        d = "lower_is_better" if given else "higher_is_better"
        note = None
        if names and given != inferred:
            note = (f"direction given as {d.replace('_', ' ')}, although metric "
                    f"'{names[0]}' reads as {'lower' if inferred else 'higher'} is better")
        return d, "given", note
    if inferred:
        what = f"metric '{names[0]}'" if names else "the value column's name"
        return "lower_is_better", "metric", (f"lower is better (a latency or duration), "
                                             f"inferred from {what}: labels read B faster / "
                                             "B slower")
    if names or not plain:  # a metric name, or a table's value column (tps or an alias)
        return "higher_is_better", "metric", None
    return "higher_is_better", "assumed", (
        "higher is better assumed (a rate such as TPS): plain numbers cannot say; say "
        "lower is better for a latency or duration")
