"""Typed results of ``planner draft`` and ``planner draft-sweep``: one schema each, written by
:meth:`to_dict` and read back (validated) by :meth:`from_dict`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from planner.errors import InputError

__all__ = ["DRAFT_SCHEMA", "SWEEP_SCHEMA", "DraftResult", "SweepResult"]

#: ``schema`` of a saved ``planner draft`` / ``planner draft sweep`` result.
DRAFT_SCHEMA = "spec-planner/draft/1"
SWEEP_SCHEMA = "spec-planner/draft-sweep/1"

@dataclass(frozen=True)
class DraftResult:
    """Result of :func:`run_draft` (``command`` ``draft``).

    One field per key of the JSON object, in its order; nested objects stay plain dicts and
    lists (see docs/drafting.md "JSON"). :meth:`to_dict` writes the JSON object,
    :meth:`from_dict` reads a saved one back (without ``samples``).

    Attributes
    ----------
    capture : dict
        ``path``, ``n_prompts``, ``n_tokens``, ``stop_at_eos``, ``eos_tokens_removed``,
        ``stratified_groups``, ``walk_start``.
    settings : dict
        Bootstrap, seed, baseline, TPS anchor, noise (``sigma_tps`` in TPS per run), run cap,
        cost model.
    acceptance : dict
        MTP acceptance curve used.
    correlation : dict
        Lookup/MTP easiness correlation mode and calibrations.
    policies : list of dict
        Per policy: tokens/forward, projected TPS, speed-up (each ``{point, ci_low, ci_high,
        ...}``), ``worth_a_run`` (None for the baseline), ...
    worth_a_run : dict or None
        Best runnable policy and its one-line verdict (None when there is no candidate);
        ``headline_policy`` leads the verdict and ``basis`` (``capture``/``model``) says whether
        its numbers come from the capture's tokens (:func:`_headline_row`).
    evidence : dict or None
        How far the capture supports a projection (:func:`capture_evidence`); None in
        results saved before it existed.
    inputs : dict or None
        What the result was computed from (files with their SHA-256, options, version), as
        recorded by the command layer (:func:`planner.report.output.emit`).
    samples : dict of str to ndarray, shape (B,)
        Bootstrap draws of tokens/forward per policy label (for the plot); not serialised,
        empty after :meth:`from_dict`.
    rests_on : list of dict
        What the conclusion rests on: one :class:`planner.results.rests_on.RestsOn` object
        per deciding constant (JSON key ``rests_on``); empty in results saved before it
        existed.
    """

    capture: dict
    settings: dict
    acceptance: dict
    correlation: dict
    policies: list
    worth_a_run: dict | None
    evidence: dict | None = None
    inputs: dict | None = None
    samples: dict = field(default_factory=dict, repr=False, compare=False)
    rests_on: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The JSON object (``samples`` left out; ``inputs`` only when recorded)."""
        head = {"schema": DRAFT_SCHEMA, "command": "draft"}
        if self.inputs is not None:
            head["inputs"] = self.inputs
        return {**head, "capture": self.capture, "evidence": self.evidence,
                "settings": self.settings, "acceptance": self.acceptance,
                "correlation": self.correlation, "policies": self.policies,
                "worth_a_run": self.worth_a_run, "rests_on": self.rests_on}

    @classmethod
    def from_dict(cls, d: dict) -> "DraftResult":
        """Read a saved ``planner draft --json`` object.

        Raises
        ------
        InputError
            Not a draft result, or a key missing.
        """
        _check_saved(d, "draft", ("capture", "settings", "acceptance", "correlation",
                                  "policies", "worth_a_run"))
        from planner.results.rests_on import rests_on_from_list

        rests_on_from_list(d.get("rests_on"))  # validated (one-line error naming the key)
        return cls(d["capture"], d["settings"], d["acceptance"], d["correlation"],
                   d["policies"], d["worth_a_run"], evidence=d.get("evidence"),
                   inputs=d.get("inputs"), rests_on=list(d.get("rests_on") or []))


@dataclass(frozen=True)
class SweepResult:
    """Result of :func:`run_sweep` (``command`` ``draft-sweep``).

    Attributes
    ----------
    capture : str
        Capture path.
    n_prompts : int
    baseline_tps : float or None
        Measured baseline TPS the projections are anchored to (None: the cost model's).
    cost_model : str
        Cost-model name.
    seed, mc_replicates : int
    acceptance : str
        Source of the MTP acceptance curve.
    rows : list of dict
        ``policy``, ``params``, ``tokens_per_forward``, ``step_ms`` (ms), ``speedup_vs_ar``,
        ``projected_tps`` (TPS), ``from_capture`` (False: the numbers come from the MTP
        acceptance curve, the capture gives only lengths), sorted by projected TPS,
        descending.
    evidence : dict or None
        :func:`capture_evidence` of the capture.
    inputs : dict or None
        Files, options and version, as recorded by the command layer.
    baseline : str
        Label of the policy every row's gain and worth-a-run verdict is against.
    bootstrap : int or None
        Bootstrap replicates of the intervals (None in results saved before intervals).
    grid : dict or None
        ``sizes`` (rows per family) and ``rows`` (all, with plain decoding).
    rests_on : list of dict
        What the conclusion rests on (:class:`planner.results.rests_on.RestsOn` objects).
    worth_a_run : dict or None
        The sweep's headline verdict (as ``planner draft``'s).
    acceptance_stack : dict or None
        Whose stack the MTP curve is (the draft result's ``acceptance.stack``).

    Rows also carry (from this version on) ``label``, ``is_baseline``,
    ``tokens_per_forward_ci`` and ``projected_tps_ci`` (95 % bootstrap ``[low, high]``),
    ``gain_tps`` and ``gain_ci`` against the baseline, ``worth``, ``verdict_code``,
    ``runs_per_arm`` and ``cost_usd`` (None for the baseline row).
    """

    capture: str
    n_prompts: int
    baseline_tps: float | None
    cost_model: str
    seed: int
    mc_replicates: int
    acceptance: str
    rows: list
    evidence: dict | None = None
    inputs: dict | None = None
    baseline: str = "ar"
    bootstrap: int | None = None
    grid: dict | None = None
    rests_on: list = field(default_factory=list)
    worth_a_run: dict | None = None
    acceptance_stack: dict | None = None

    def to_dict(self) -> dict:
        """The JSON object (``inputs`` only when recorded)."""
        head = {"schema": SWEEP_SCHEMA, "command": "draft-sweep"}
        if self.inputs is not None:
            head["inputs"] = self.inputs
        return {**head, "capture": self.capture, "n_prompts": self.n_prompts,
                "evidence": self.evidence,
                "baseline_tps": self.baseline_tps, "cost_model": self.cost_model,
                "seed": self.seed, "mc_replicates": self.mc_replicates,
                "acceptance": self.acceptance, "acceptance_stack": self.acceptance_stack,
                "baseline": self.baseline, "bootstrap": self.bootstrap, "grid": self.grid,
                "worth_a_run": self.worth_a_run, "rows": self.rows,
                "rests_on": self.rests_on}

    @classmethod
    def from_dict(cls, d: dict) -> "SweepResult":
        """Read a saved ``planner draft-sweep --json`` object.

        Raises
        ------
        InputError
            Not a sweep result, or a key missing.
        """
        keys = ("capture", "n_prompts", "baseline_tps", "cost_model", "seed", "mc_replicates",
                "acceptance", "rows")
        _check_saved(d, "draft-sweep", keys)
        from planner.results.rests_on import rests_on_from_list

        rests_on_from_list(d.get("rests_on"))
        return cls(**{k: d[k] for k in keys}, evidence=d.get("evidence"),
                   inputs=d.get("inputs"), baseline=d.get("baseline", "ar"),
                   bootstrap=d.get("bootstrap"), grid=d.get("grid"),
                   rests_on=list(d.get("rests_on") or []), worth_a_run=d.get("worth_a_run"),
                   acceptance_stack=d.get("acceptance_stack"))


def _check_saved(d: dict, command: str, keys: Sequence[str]) -> None:
    if d.get("command") != command:
        raise InputError(f"not a {command} result (command {d.get('command')!r})",
                         field="command")
    missing = [k for k in keys if k not in d]
    if missing:
        raise InputError(f"{command} result lacks {', '.join(missing)}", field=missing[0])
