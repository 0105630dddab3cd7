"""``planner draft`` / ``planner draft-sweep``: is this drafting idea worth a run?

Modules (one concept each; the package's public names are theirs, imported on first use):

* :mod:`.policy`      -- the policy grammar, validation and help, derived from the policy
  registry :mod:`models.drafting.policies`.
* :mod:`.noise`       -- :class:`NoiseSpec`, the run-to-run noise of one real run.
* :mod:`.worth`       -- :func:`worth_a_run` and the content model's spread on the TPS.
* :mod:`.evidence`    -- the capture read and whether it holds enough evidence.
* :mod:`.cost_fields` -- plausible ranges of the step-time model's numbers.
* :mod:`.acceptance`  -- MTP acceptance of a capture's prompts (curve, counters, content
  model).
* :mod:`.run`         -- :func:`run_draft`.
* :mod:`.sweep`       -- :func:`run_sweep`: a grid over every policy family as one draft.
* :mod:`.reprice`     -- a run re-priced under other cost constants / MTP acceptance, on
  the same bootstrap draws (no walk again).
* :mod:`.sensitivity` -- ``rests_on``: the deciding constants, ranges, sources, flip points.

Result types live in :mod:`planner.results.draft`.
"""

from importlib import import_module

#: Where each public name lives; a name is imported on first use, so reading the policy
#: grammar (``--help``) does not import the walk, the bootstrap or NumPy.
_HOME = {
    **dict.fromkeys(("COST_FIELD_LIMITS", "SYNC_FACTOR", "check_cost_field"), "cost_fields"),
    **dict.fromkeys(("EMBEDDED_CAPTURE", "EVIDENCE_FLOORS", "capture_evidence",
                     "capture_name", "default_capture_path"), "evidence"),
    **dict.fromkeys(("NoiseSpec", "predictive_run_sd"), "noise"),
    **dict.fromkeys(("DRAFT_DEPTH", "LOOKUP_THRESHOLD", "MTP_K", "N_WINDOW", "POLICY_GRAMMAR",
                     "PolicySpec", "default_policies", "default_specs", "parse_policy",
                     "policy_help", "validate_policy"), "policy"),
    "run_draft": "run",
    **dict.fromkeys(("run_sweep", "DEFAULT_GRID", "FAMILIES", "grid_specs"), "sweep"),
    **dict.fromkeys(("SIZING_SIMS", "model_spread_draws", "worth_a_run"), "worth"),
}
_ELSEWHERE = {"LIST_GRAMMAR": "planner.io._parse", "split_items": "planner.io._parse",
              **dict.fromkeys(("DRAFT_SCHEMA", "SWEEP_SCHEMA", "DraftResult", "SweepResult"),
                              "planner.results.draft")}


def __getattr__(name: str):
    if name in _HOME:
        mod = import_module(f"{__name__}.{_HOME[name]}")
    elif name in _ELSEWHERE:
        mod = import_module(_ELSEWHERE[name])
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(mod, name)
    globals()[name] = value
    return value


__all__ = ["PolicySpec", "parse_policy", "validate_policy", "default_policies",
           "default_specs", "policy_help", "POLICY_GRAMMAR", "NoiseSpec", "predictive_run_sd",
           "worth_a_run", "model_spread_draws", "SIZING_SIMS", "run_draft", "run_sweep",
           "DraftResult", "SweepResult", "DRAFT_SCHEMA", "SWEEP_SCHEMA",
           "default_capture_path", "capture_name", "EMBEDDED_CAPTURE", "LIST_GRAMMAR",
           "split_items", "EVIDENCE_FLOORS", "capture_evidence", "N_WINDOW", "DRAFT_DEPTH",
           "MTP_K", "LOOKUP_THRESHOLD", "COST_FIELD_LIMITS", "SYNC_FACTOR", "check_cost_field",
           "DEFAULT_GRID", "FAMILIES", "grid_specs"]
