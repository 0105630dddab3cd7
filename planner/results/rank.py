"""The typed results of ``planner rank`` (schema ``spec-planner/rank/1``) and ``planner next``
(schema ``spec-planner/next/1``).

:func:`planner.decide.rank.rank` returns a :class:`Ranking`, :func:`planner.decide.next_run.
advise` a :class:`NextAdvice`; ``to_dict()`` is the JSON of ``--json`` and every renderer
reads that dict only (:mod:`planner.report.views.rank`, :mod:`planner.report.views.next`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from planner.results.counts import count

__all__ = ["RANK_SCHEMA", "NEXT_SCHEMA", "Ranking", "NextAdvice", "describe_action"]

RANK_SCHEMA = "spec-planner/rank/1"
NEXT_SCHEMA = "spec-planner/next/1"


@dataclass
class Ranking:
    """The joint posterior of N configs' means read as a ranking.

    Parameters
    ----------
    configs : list of dict
        One row per config, best first: ``config``, ``n`` (runs), ``mean`` (posterior mean
        level in the metric's unit), ``hdi_low`` / ``hdi_high`` (its HDI), ``mean_pct_vs_best``
        and ``diff_pct`` (``{mean, hdi_low, hdi_high}``: this config minus the best, % of the
        best), ``p_fastest`` and ``p_fastest_se`` (Monte-Carlo SE), ``p_beyond_rope`` (P(the
        best is better than this config by more than the ROPE)), ``tied_with_best`` (not told
        apart from the best at the ROPE), ``baseline`` (a saved baseline's runs).
    best : str
        The config with the highest P(fastest).
    label : {"fastest", "undecided"}
        ``fastest``: P(fastest) of the best >= ``p_decisive`` and every other config's 95 %
        HDI of the difference lies beyond the ROPE (the verdict's rule, pair by pair).
    contenders : list of str
        The best and every config not told apart from it at the ROPE.
    rope : dict
        ``value``, ``unit``, ``pct`` (of the best's level).
    """

    configs: list
    best: str
    label: str
    contenders: list
    rope: dict
    hdi_prob: float
    p_decisive: float
    draws: int
    seed: int
    direction: str
    metric: str | None
    platform: str | None
    prior: dict
    sigma_instance: dict
    sigma_run: dict
    engine: str = "exact"
    notes: list = field(default_factory=list)
    runs: list = field(default_factory=list)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict:
        """The JSON object (``schema``, ``command``, then the fields in order)."""
        return {"schema": RANK_SCHEMA, "command": "rank",
                **{f.name: getattr(self, f.name) for f in fields(self)}}


@dataclass
class NextAdvice:
    """What to buy next: each action's cost and P(decided), cheapest first.

    Parameters
    ----------
    actions : list of dict
        ``action`` (``stop``, ``one_more_a``, ``one_more_b``, ``separate``, ``paired``,
        ``one_more``), ``config`` (one config's action), ``runs_per_arm``, ``runs``
        (runs bought), ``cost_usd`` and ``gpu_hours`` of the action itself, ``p_decided``
        (P(a decisive label right after it), preposterior), ``p_right`` (assurance, when
        known), ``expected_cost_usd`` (to a decision: the action's cost plus, when it leaves
        the comparison undecided, the plan's recommended design again) and ``source``
        (``repeats``: the row of ``planner repeats --runs``; ``preposterior``: simulated here).
    current : dict
        The verdict if you stop now: ``label``, ``delta_pct`` {mean, hdi_low, hdi_high},
        ``decided``.
    recommended : dict or None
        The first action (the cheapest expected cost to a decision).
    repeats : dict or None
        ``planner repeats --runs``' recommendation on the same data (design, runs per arm,
        assurance, cost): the same numbers by construction.
    """

    a: str
    b: str
    actions: list
    current: dict
    recommended: dict | None
    repeats: dict | None
    sims: int
    seed: int
    platform: str | None
    cost_model: dict
    rope: dict
    notes: list = field(default_factory=list)
    configs: list | None = None
    elapsed_s: float = 0.0

    def to_dict(self) -> dict:
        """The JSON object (``schema``, ``command``, then the fields in order)."""
        return {"schema": NEXT_SCHEMA, "command": "next",
                **{f.name: getattr(self, f.name) for f in fields(self)}}


def describe_action(x: dict, stop: str = "stop") -> str:
    """An action of a :class:`NextAdvice` (one of its ``actions`` rows) in words
    (``paired: 5 A/B pairs on a new allocation``); ``stop`` is the word for stopping (the
    watch line says "stop", the reports "stop now")."""
    kind = x["action"]
    if kind == "stop":
        return stop
    if kind in ("one_more_a", "one_more_b"):
        return f"one more run of {x['config']} on its allocation"
    if kind == "paired":
        return f"{count(x['runs_per_arm'], 'A/B pair')} on a new allocation"
    return f"{count(x['runs_per_arm'], 'run')} per arm, each on a new allocation"
