"""The typed result of ``planner verdict`` (schema ``spec-planner/verdict/1``).

:func:`planner.decide.verdict.verdict` returns a :class:`Verdict`; :meth:`Verdict.to_dict` is
the JSON of ``planner verdict --json`` and :meth:`Verdict.from_dict` reads a saved one back,
so every renderer works from a saved JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from planner.errors import InputError

__all__ = ["SCHEMA", "Verdict", "OUTLIER_Z", "OUTLIER_MIN_RUNS"]

#: Robust z (on the log scale, median and MAD within a run's (config, instance, session)
#: group) beyond which :func:`planner.decide.comparison.runs_listing` marks a run as an
#: outlier: Iglewicz & Hoaglin, "How to Detect and Handle Outliers" (ASQC 1993), modified
#: z-score |M| > 3.5. Here, below the decision layer, so the renderers state the rule.
OUTLIER_Z = 3.5
#: Fewest warm runs in a (config, instance, session) group for
#: :func:`planner.decide.comparison.runs_listing` to mark outliers in it. With 3 runs the MAD
#: is the smaller of the two gaps to the median, so any unequal spacing "flags" the far run
#: (35.73, 35.76, 35.94: z 4.0); on Normal samples (20,000 groups per size, no outlier,
#: robust z > 3.5) some run of the group is flagged in 29 % of groups of 3, 17 % of 4 and
#: 21 % of 5, while a run 6 SD off is caught in 54 %, 69 % and 73 %; from 5 runs the median
#: and MAD of a group with one far run rest on the other 4.
OUTLIER_MIN_RUNS = 5

SCHEMA = "spec-planner/verdict/1"


@dataclass(frozen=True)
class Verdict:
    """The posterior verdict on B vs A (schema ``spec-planner/verdict/1``).

    One field per key of the JSON result, in its order; nested JSON objects stay plain dicts
    of floats (``{mean, hdi_low, hdi_high}`` and the like). :meth:`to_dict` writes the JSON
    object, :meth:`from_dict` reads one back, so every renderer works from a saved result.

    Attributes
    ----------
    a, b : str
        Config labels; Δ = B − A.
    n_a, n_b : int
        Runs used per config.
    mean_tps_a, mean_tps_b : float
        Sample means (TPS).
    label : str
        One of :data:`models.stats.decision.LABELS`, or its lower-is-better reading.
    p_b_gt_a, p_equivalent, p_b_gt_a_beyond_rope, p_a_gt_b_beyond_rope : float
        Posterior probabilities of Δ > 0, |Δ| < ROPE, Δ > +ROPE, Δ < −ROPE.
    delta_pct, delta_tps : dict
        ``{mean, hdi_low, hdi_high}`` of Δ in % of A and in TPS at A's level.
    delta_log : dict
        ``{mean, sd, hdi_low, hdi_high}`` of Δ on the log scale.
    hdi_prob : float
        HDI mass.
    rope : dict
        ``{value, unit ("%" or "TPS"), pct, tps}``: the ROPE as given and converted.
    level_tps_a : float
        Posterior mean TPS of A.
    sigma_instance, sigma_run : dict
        ``{"pct": {...}, "tps": {...}}`` summaries (mean, median, HDI) of τ and σ.
    engine, likelihood : str
    prior : dict
        The noise prior (``label`` plus :meth:`models.stats.noise.NoisePrior.to_dict`).
    diagnostics : dict
        Engine diagnostics (``ok``, ``messages``, ...).
    more_runs_per_arm : int or None
        Runs per arm to add to settle an undecided verdict ("to settle" advice).
    more_runs_note : str or None
        That advice in words (None when the verdict is decisive).
    more_runs_code : str or None
        ``settle`` (``more_runs_per_arm`` reach the target assurance), ``over_cap`` (more
        than :data:`planner.decide.settle.SETTLE_MAX_RUNS`), ``fit_failed`` (the fit failed its diagnostics: no
        advice to buy runs is given), ``no_spread`` (each arm's runs hold one value and no
        noise is stated: the label is held, no advice to buy runs) or None (decisive).
    classical : dict
        z-test (``z_test.sigma_tps`` is its σ) and Welch's t.
    delta_curve : dict or None
        ``{delta_pct, density}`` (lists) of the Δ posterior when the engine has a closed-form
        density; ``None`` otherwise (the plots then use ``delta_log.mean/sd``).
    notes : list of str
        Display notes (nothing branches on them).
    seed : int
    direction : str
        ``higher_is_better`` (TPS, rates) or ``lower_is_better`` (latencies, durations): how
        ``label`` reads the decision rule's label (``rule_label``).
    direction_source : str
        ``given`` (an option), ``metric`` (inferred from the metric or column name) or
        ``assumed`` (a plain list of numbers: higher is better was assumed, with a note).
    rule_label : str
        The decision rule's label (:mod:`models.stats.decision`; "B better" = B's value higher);
        equals ``label`` for ``higher_is_better``.
    cold_runs : list of dict
        Runs treated as cold first runs, ``{config, rep, instance, tps}``.
    metric : str or None
        The compared rows' metric (``mean_tpot_ms``, ``decode_wall``...), else the value
        column's name when one was given; None for plain numbers. The views print values in
        its unit (:func:`planner.io.limits.metric_unit`: ms, s, TPS).
    runs : list of dict
        The runs as the model read them, ``{config, arm ("a" | "b"), instance, session, rep,
        cold, value, outlier, unstable}`` (:func:`planner.decide.comparison.runs_listing`:
        ``outlier`` a robust z beyond 3.5 within its instance and session, ``unstable`` its
        group's spread far above the prior's), at most
        :data:`planner.decide.comparison.RUNS_CAP`.
    runs_truncated : int
        Runs left out of ``runs``.
    grouping : dict or None
        How the runs were grouped and from what (instances, sessions, cold groups, and the
        column or reader of each; :func:`planner.decide.comparison.grouping`).
    """

    a: str
    b: str
    n_a: int
    n_b: int
    mean_tps_a: float
    mean_tps_b: float
    label: str
    p_b_gt_a: float
    p_equivalent: float
    p_b_gt_a_beyond_rope: float
    p_a_gt_b_beyond_rope: float
    delta_pct: dict
    delta_tps: dict
    delta_log: dict
    hdi_prob: float
    rope: dict
    level_tps_a: float
    sigma_instance: dict
    sigma_run: dict
    engine: str
    likelihood: str
    prior: dict
    diagnostics: dict
    more_runs_per_arm: int | None
    more_runs_note: str | None
    more_runs_code: str | None
    classical: dict
    delta_curve: dict | None
    notes: list = field(default_factory=list)
    seed: int = 0
    direction: str = "higher_is_better"
    direction_source: str = "assumed"
    rule_label: str | None = None
    cold_runs: list = field(default_factory=list)
    metric: str | None = None
    runs: list = field(default_factory=list)
    runs_truncated: int = 0
    grouping: dict | None = None

    def to_dict(self) -> dict:
        """The JSON object (``schema``, ``command``, then the fields in order)."""
        return {"schema": SCHEMA, "command": "verdict",
                **{f.name: getattr(self, f.name) for f in fields(self)}}

    @classmethod
    def from_dict(cls, d: dict) -> "Verdict":
        """Read a saved verdict JSON object.

        Raises
        ------
        InputError
            Not a ``spec-planner/verdict/`` result, or a field missing.
        """
        schema = str(d.get("schema", ""))
        if not schema.startswith("spec-planner/verdict/"):
            raise InputError(f"not a verdict result (schema {schema or '?'!r})", field="schema")
        names = [f.name for f in fields(cls)]
        optional = ("notes", "seed", "more_runs_code", "direction", "direction_source",
                    "rule_label", "cold_runs", "metric", "runs", "runs_truncated", "grouping")
        missing = [n for n in names if n not in d and n not in optional]
        if missing:
            raise InputError(f"verdict result lacks {', '.join(missing)}", field=missing[0])
        return cls(**{"more_runs_code": None, **{n: d[n] for n in names if n in d}})
