"""The typed result of ``planner shift`` (:class:`ShiftResult`), its JSON schema name and the
reading of a saved one. Built by :func:`planner.decide.shift.run_shift`, rendered by
:mod:`planner.report.views.shift` from :meth:`ShiftResult.to_dict`."""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.errors import InputError
from planner.results.rests_on import rests_on_from_list

__all__ = ["ShiftResult", "SCHEMA"]

SCHEMA = "spec-planner/shift/1"


@dataclass
class ShiftResult:
    """Typed result of ``planner shift``.

    Attributes
    ----------
    inputs : dict
        Public score / runs, captures, mode, X, K, level, seed, draws, submission,
        drafter_tuned.
    public : dict
        Public tokens/forward (``value``, ``source``) and TPS anchor.
    private : dict
        Private tokens/forward summary (capture mode) or the evidence used.
    ratio : dict
        Private/public TPS ratio of the mode run (``private.mode``): ``point``, ``pi_low``,
        ``pi_high``.
    private_tps : dict
        ``point``, ``pi_low``, ``pi_high`` (TPS) of the mode run.
    p_drop : float or None
        ``P(private TPS < public x (1 - X/100))`` of the mode run; None (withheld) when a
        capture is below the limited evidence floor (``evidence.level == "limited"``).
    validation : list of dict
        Held-out checks behind the trust statement (``check`` names the kind of row).
    trust : str
        How far to trust the figure.
    evidence : dict or None
        Capture mode: how far the captures support the projection; None otherwise.
    p_drop_mc_se : float or None
        Monte Carlo standard error of ``p_drop`` (0 when it is computed exactly).
    recommended : dict or None
        The one answer to act on: ``mode``, ``label``, ``why``, ``ratio``, ``private_tps``,
        ``p_drop``, ``p_drop_interval`` (``[low, high]`` of P over the fit's parameter
        uncertainty, or None). None in results saved before it existed.
    checks : list of dict
        The other modes, each ``mode``, ``label``, ``ratio``, ``private_tps``, ``p_drop``,
        ``note``.
    official_fit : dict or None
        The official-pairs fit: pairs, covariates, coefficients, allocation CV and
        prompt-set shift SD (posterior mean and 90 % interval), leave-one-pair-out scores.
    rests_on : list of dict
        :class:`planner.results.rests_on.RestsOn` entries (``to_dict``).
    """

    inputs: dict
    public: dict
    private: dict
    ratio: dict
    private_tps: dict
    p_drop: float | None
    validation: list
    trust: str
    evidence: dict | None = None
    p_drop_mc_se: float | None = None
    recommended: dict | None = None
    checks: list = field(default_factory=list)
    official_fit: dict | None = None
    rests_on: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "command": "shift", "inputs": self.inputs,
                "public": self.public, "private": self.private, "ratio": self.ratio,
                "private_tps": self.private_tps, "p_drop": self.p_drop,
                "validation": self.validation, "trust": self.trust, "evidence": self.evidence,
                "p_drop_mc_se": self.p_drop_mc_se, "recommended": self.recommended,
                "checks": self.checks, "official_fit": self.official_fit,
                "rests_on": self.rests_on}

    @classmethod
    def from_dict(cls, d: dict) -> "ShiftResult":
        """Read a saved result (older ones without the newer keys load with their defaults).

        Raises
        ------
        InputError
            Another schema, a missing key, a malformed ``rests_on`` entry.
        """
        if d.get("schema") != SCHEMA:
            raise InputError(f"not a saved shift result (schema {d.get('schema')!r})",
                             field="schema")
        try:
            out = cls(d["inputs"], d["public"], d["private"], d["ratio"], d["private_tps"],
                      d["p_drop"], d["validation"], d["trust"], d.get("evidence"),
                      d.get("p_drop_mc_se"), d.get("recommended"), d.get("checks") or [],
                      d.get("official_fit"), d.get("rests_on") or [])
        except KeyError as exc:
            raise InputError(f"saved shift result lacks {exc.args[0]!r}",
                             field=str(exc.args[0])) from None
        rests_on_from_list(out.rests_on)  # validates each entry
        return out
