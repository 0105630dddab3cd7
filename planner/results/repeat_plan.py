"""The typed result of ``planner repeats``: design rows, the reason of the recommendation and
the whole plan (schema ``spec-planner/repeats/1``).

:func:`planner.decide.repeats.plan_repeats` and :func:`planner.decide.repeats.plan_more_runs` return a
:class:`RepeatPlan`; ``RepeatPlan.to_dict()`` is the JSON of ``planner repeats --json`` and
``RepeatPlan.from_dict()`` reads a saved one back, so every renderer works from a saved JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["PAIRED_NOTE", "paired_note", "SCHEMA", "REASON_CODES", "DesignRow", "Reason", "RepeatPlan", "design_label",
           "reason_code"]

def paired_note(sigma_from: str = "a weak one where it is not measured, as on "
                                   "hf-a10g-small") -> str:
    """What a paired design assumes (repeats' notes, budget's views); ``sigma_from`` says
    where the within-allocation scale's prior comes from (the stated noise, in a budget
    sized with ``--cv``)."""
    return ("paired designs run A and B interleaved on the same allocation, so the "
            "instance effect cancels; their assurance rests on the prior of the "
            f"within-allocation scale sigma ({sigma_from}) — and they estimate Δ on that one "
            "allocation")


#: :func:`paired_note` with the platform priors' wording.
PAIRED_NOTE = paired_note()

SCHEMA = "spec-planner/repeats/1"

#: Codes of :class:`Reason`: a design was recommended; no design reaches the target within the
#: cap; designs reach it only with a false-claim rate above the limit; they exceed the $ cap.
REASON_CODES = ("recommended", "target_unreachable", "false_claims", "over_budget")

# JSON key order of a fixed (separate / paired) and of a sequential row
_FIXED_KEYS = ("design", "runs_per_arm", "runs_per_instance", "pairs_per_instance",
               "instances", "assurance", "assurance_se", "false_claim_rate",
               "false_claim_rate_se", "wrong_sign_rate", "labels", "gpu_hours", "cost_usd", "allocations",
               "runs_total", "meets_target", "false_claim_ok", "within_budget", "minimal")
_SEQ_KEYS = ("design", "layout", "batch", "runs_per_arm", "max_runs_per_arm",
             "runs_per_instance", "pairs_per_instance", "instances", "assurance",
             "assurance_se", "false_claim_rate", "false_claim_rate_se", "wrong_sign_rate",
             "per_look_hdi_prob", "futility_threshold", "looks", "gpu_hours", "cost_usd",
             "max_gpu_hours", "max_cost_usd", "expected_runs_per_arm", "p_stop_early",
             "minimal", "meets_target", "false_claim_ok", "within_budget", "fixed_equivalent")


@dataclass
class DesignRow:
    """One design of a repeat plan: its runs, assurance, error rates and cost.

    Parameters
    ----------
    design : {"separate", "paired", "sequential"}
    runs_per_arm : int or float
        Runs per arm (a sequential design: the expected number at its stop).
    runs_per_instance, pairs_per_instance : int or None
        Runs of one config per allocation (separate), A/B pairs per allocation (paired).
    instances : int or float
        Allocations (expected, for a sequential design).
    assurance, assurance_se : float
        Probability of the right call, and its Monte-Carlo standard error.
    false_claim_rate, false_claim_rate_se : float or None
        Rate of decisive directional calls when Δ = 0, and its Monte-Carlo standard error
        (0 for an exact rate; results saved before this name read ``false_claim_se``).
    wrong_sign_rate : float or None
        Rate of the planned direction's call when Δ has the opposite sign.
    gpu_hours, cost_usd : float
        GPU-hours (h) and dollars ($) of the design (expected, for a sequential design).
    meets_target, false_claim_ok, within_budget : bool
        Assurance ≥ target; false-claim rate ≤ :data:`planner.defaults.MAX_FALSE_CLAIM` within
        its Monte-Carlo error (:func:`planner.decide.repeats.false_claim_ok`);
        (worst-case) cost ≤ the $ cap.
    minimal : bool
        The smallest fixed design of its kind meeting the target.
    labels, allocations, runs_total
        Fixed designs only: fractions of each verdict label, allocations, runs of both arms.
    layout, batch, max_runs_per_arm, per_look_hdi_prob, futility_threshold, looks,
    max_gpu_hours, max_cost_usd, expected_runs_per_arm, p_stop_early, fixed_equivalent
        Sequential designs only: the fixed design it extends (``separate`` / ``paired``),
        runs per arm per look, the cap, the per-look HDI mass, the futility threshold, the
        number of looks, hours and $ at the cap, expected runs per arm, P(stop before the cap)
        and the fixed design of the same assurance (a dict or None).
    """

    design: str
    runs_per_arm: float
    runs_per_instance: int | None
    pairs_per_instance: int | None
    instances: float
    assurance: float
    assurance_se: float
    false_claim_rate: float | None
    false_claim_rate_se: float | None
    wrong_sign_rate: float | None
    gpu_hours: float
    cost_usd: float
    meets_target: bool = False
    false_claim_ok: bool = False
    within_budget: bool = True
    minimal: bool = False
    labels: dict | None = None
    allocations: int | None = None
    runs_total: int | None = None
    layout: str | None = None
    batch: int | None = None
    max_runs_per_arm: int | None = None
    per_look_hdi_prob: float | None = None
    futility_threshold: float | None = None
    looks: int | None = None
    max_gpu_hours: float | None = None
    max_cost_usd: float | None = None
    expected_runs_per_arm: float | None = None
    p_stop_early: float | None = None
    fixed_equivalent: dict | None = None

    @property
    def sequential(self) -> bool:
        """A sequential design (else a fixed one)."""
        return self.design == "sequential"

    @property
    def worst_case_cost_usd(self) -> float:
        """$ if every look is needed (a fixed design costs what it costs)."""
        return float(self.max_cost_usd if self.max_cost_usd else self.cost_usd)

    def to_dict(self) -> dict:
        """The row as in the JSON result (the keys of its kind, in their order)."""
        return {k: getattr(self, k) for k in (_SEQ_KEYS if self.sequential else _FIXED_KEYS)}

    @classmethod
    def from_dict(cls, d: dict) -> "DesignRow":
        """A row of a saved JSON result (keys as :meth:`to_dict` writes them)."""
        names = {f.name for f in fields(cls)}
        d = dict(d)
        if "false_claim_se" in d and "false_claim_rate_se" not in d:
            d["false_claim_rate_se"] = d.pop("false_claim_se")
        return cls(**{k: v for k, v in d.items() if k in names})


def design_label(e: DesignRow | dict | None) -> str:
    """Display name of a design: ``sequential`` says its layout (``sequential (paired)``)."""
    if e is None:
        return "—"
    d = e if isinstance(e, dict) else {"design": e.design, "layout": e.layout}
    name = str(d.get("design") or "?")
    lay = d.get("layout")
    return f"{name} ({lay})" if lay and lay != name else name


@dataclass(frozen=True)
class Reason:
    """Why a plan recommends what it recommends: a code (one of :data:`REASON_CODES`) for
    programs and a sentence for people."""

    code: str
    text: str


def reason_code(designs: list[DesignRow], recommended: DesignRow | None) -> str:
    """The :class:`Reason` code implied by the rows (the rule of
    :func:`planner.decide.repeats.plan_repeats`' recommendation)."""
    if recommended is not None:
        return "recommended"
    if not any(r.meets_target for r in designs):
        return "target_unreachable"
    if not any(r.meets_target and r.false_claim_ok for r in designs):
        return "false_claims"
    return "over_budget"


@dataclass
class RepeatPlan:
    """Result of :func:`planner.decide.repeats.plan_repeats` (and ``plan_more_runs``).

    Parameters
    ----------
    inputs : dict
        The question: ``delta``, ``relative``, ``baseline_tps`` (TPS), ``rule``, ``level``,
        ``rope`` (``value``, ``unit``, ``pct``, ``tps``, ``log``), ``target``, ``max_runs``,
        ``max_cost_usd`` ($), ``sims``, ``seed``, ``prior``, ``cost_model``
        (``price_per_hour`` $/h, ``minutes_per_run``, ``startup_minutes`` min,
        ``billed_per_minute``, optional ``source``), ``runs_per_instance``,
        ``pairs_per_instance``, ``existing_runs``, optional ``platform``.
    effect : dict
        The simulated effect: ``kind`` (``fixed`` / ``distribution``), ``mean_pct``,
        ``mean_tps``, ``sd_pct``, ``p_positive``, ``delta_log``, optional ``source``
        (``delta``: a given Δ replaced the posterior of the existing runs).
    designs : list of DesignRow
        The table, in display order.
    recommended : DesignRow or None
        One of ``designs`` (the very object), or None.
    reason : Reason
    beyond_cap : dict or None
        The smallest fixed design beyond ``max_runs`` reaching the target (``design``,
        ``runs_per_arm`` or None with a ``note``, ``assurance``, ...), when searched.
    notes : list of str
    simulated_experiments : int
    existing : dict or None
        With runs already bought: ``a``, ``b``, ``n_a``, ``n_b``, ``level_tps_a``, ``label``,
        ``delta_pct`` (``mean``, ``hdi_low``, ``hdi_high``), ``p_b_gt_a``.
    allocation : dict or None
        When the runs per allocation were chosen (``runs_per_instance`` not given):
        ``mode``, ``tau``, ``sigma`` (the noise it used), ``startup_minutes``,
        ``minutes_per_run``, ``r_star`` (Kalibera & Jones' optimum, None when infinite),
        ``candidates`` (per runs-per-allocation: minimal ``runs_per_arm``, ``cost_usd``,
        ``assurance``), ``runs_per_instance`` (chosen) and ``reason``.
    runs : list of dict or None
        With runs already bought: the runs as the model read them (``config``, ``arm``,
        ``instance``, ``session``, ``rep``, ``cold``, ``value``, ``outlier``, ``unstable``;
        :func:`planner.decide.comparison.runs_listing`).
    runs_truncated : int
        Runs left out of ``runs`` (it holds at most
        :data:`planner.decide.comparison.RUNS_CAP`).
    elapsed_s : float or None
        Wall-clock seconds; not part of the JSON (a seeded result is byte-reproducible).
    """

    inputs: dict
    effect: dict
    designs: list[DesignRow]
    recommended: DesignRow | None
    reason: Reason
    beyond_cap: dict | None = None
    notes: list[str] = field(default_factory=list)
    simulated_experiments: int = 0
    existing: dict | None = None
    allocation: dict | None = None
    runs: list | None = None
    runs_truncated: int = 0
    elapsed_s: float | None = field(default=None, compare=False)

    @property
    def more_runs_per_arm(self) -> float | None:
        """Runs per arm to add under the recommended design (None: no recommendation)."""
        return None if self.recommended is None else self.recommended.runs_per_arm

    def to_dict(self) -> dict:
        """The JSON result (schema ``spec-planner/repeats/1``); ``elapsed_s`` is left out."""
        rows = [r.to_dict() for r in self.designs]
        rec = None
        if self.recommended is not None:
            i = next((i for i, r in enumerate(self.designs) if r is self.recommended), None)
            rec = rows[i] if i is not None else self.recommended.to_dict()
        out = {"schema": SCHEMA, "command": "repeats", "inputs": self.inputs,
               "effect": self.effect, "designs": rows, "recommended": rec,
               "reason": self.reason.text, "beyond_cap": self.beyond_cap, "notes": self.notes,
               "simulated_experiments": self.simulated_experiments}
        if self.existing is not None:
            out["existing"] = self.existing
            out["more_runs_per_arm"] = self.more_runs_per_arm
        if self.allocation is not None:
            out["allocation"] = self.allocation
        if self.runs is not None:
            out["runs"] = self.runs
            out["runs_truncated"] = self.runs_truncated
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "RepeatPlan":
        """Read a saved ``planner repeats --json`` result.

        Raises
        ------
        ValueError
            ``d`` is not a ``spec-planner/repeats/1`` result.
        """
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} result: schema {d.get('schema')!r}")
        designs = [DesignRow.from_dict(r) for r in d["designs"]]
        rec = None
        if d.get("recommended") is not None:
            rec = next((r for r, raw in zip(designs, d["designs"]) if raw == d["recommended"]),
                       None) or DesignRow.from_dict(d["recommended"])
        return cls(inputs=d["inputs"], effect=d["effect"], designs=designs, recommended=rec,
                   reason=Reason(reason_code(designs, rec), d.get("reason", "")),
                   beyond_cap=d.get("beyond_cap"), notes=list(d.get("notes", [])),
                   simulated_experiments=int(d.get("simulated_experiments", 0)),
                   existing=d.get("existing"), allocation=d.get("allocation"),
                   runs=d.get("runs"), runs_truncated=int(d.get("runs_truncated", 0)))

    def design_curves(self) -> tuple[list[dict], dict | None]:
        """One entry per design and layout, with its assurance-vs-runs curve (for plots and the
        per-comparison tables of ``planner budget``).

        Sequential separate and paired are two entries. The entry of a design is the
        recommended row when it is of that design, else its ``minimal`` row, else its cheapest
        row meeting the target with an acceptable false-claim rate, else its row of highest
        assurance.

        Returns
        -------
        entries : list of dict
            ``{design, runs_per_arm, assurance, false_claim_rate, gpu_hours, cost_usd, curve,
            reaches_target, ..., label}``; ``curve`` holds the lists ``runs_per_arm``,
            ``assurance``, ``false_claim_rate``, ``cost_usd``, ``gpu_hours`` of all the rows of
            that design, by runs per arm.
        recommended : dict or None
            The entry of the recommended row.
        """
        groups: dict[tuple, list[DesignRow]] = {}
        for r in self.designs:
            groups.setdefault((r.design, r.layout), []).append(r)
        entries, rec_entry = [], None
        for rs in groups.values():
            pick = next((r for r in rs if r is self.recommended), None)
            is_rec = pick is not None
            if pick is None:
                pick = next((r for r in rs if r.minimal), None)
            if pick is None:
                ok = [r for r in rs if r.meets_target and r.false_claim_ok]
                pick = min(ok, key=lambda r: r.cost_usd or 0) if ok else \
                    max(rs, key=lambda r: r.assurance or 0)
            pts = sorted(rs, key=lambda r: r.runs_per_arm)
            e = _entry(pick, {k: [getattr(r, k) for r in pts] for k in _CURVE_KEYS})
            entries.append(e)
            if is_rec:
                rec_entry = e
        return entries, rec_entry


_CURVE_KEYS = ("runs_per_arm", "assurance", "false_claim_rate", "cost_usd", "gpu_hours")
#: row fields an entry of :meth:`RepeatPlan.design_curves` carries after ``reaches_target``
_ENTRY_EXTRA = ("expected_runs_per_arm", "max_runs_per_arm", "max_cost_usd", "max_gpu_hours",
                "layout", "batch", "per_look_hdi_prob", "false_claim_ok", "within_budget",
                "runs_total")


def _entry(r: DesignRow, curve: dict) -> dict[str, Any]:
    row = r.to_dict()
    e = {"design": r.design, "runs_per_arm": r.runs_per_arm, "assurance": r.assurance,
         "false_claim_rate": r.false_claim_rate, "gpu_hours": r.gpu_hours,
         "cost_usd": r.cost_usd, "curve": curve, "reaches_target": bool(r.meets_target)}
    e.update({k: row[k] for k in _ENTRY_EXTRA if k in row})
    e["label"] = design_label(r)
    return e
