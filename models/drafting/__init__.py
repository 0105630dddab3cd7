"""Drafting replay over captured greedy token streams: the supported API.

Data flow: a capture file -> :class:`Capture` -> per-position draft profiles
(:func:`draft_profiles`, lookup policies) or acceptance curves (:func:`load_acceptance`,
MTP) -> the one step walk (:func:`walk`, :class:`WalkResult`; its module documents the
``start`` convention and what is counted) -> :func:`summarize` / a bootstrap over prompts
(:func:`bootstrap_ratios`, :func:`summarize_samples`) and step time
(:class:`ForwardCostModel`, milliseconds per forward).

Modules
-------
* :mod:`.capture`     -- :func:`load_capture`, :class:`Capture`, :func:`prompt_set_hash`.
* :mod:`.lookup`      -- policies :class:`AR`, :class:`PLD`, :class:`NGram`, :class:`Suffix`
  and their per-position :class:`DraftProfile` (:func:`draft_profiles`, :func:`replay`).
* :mod:`.walk`        -- the step walk for every policy and :func:`summarize`.
* :mod:`.mtp`         -- :func:`simulate_mtp`, the MTP chain.
* :mod:`.hybrid`      -- MTP + lookup hybrids and the easiness-correlation model.
* :mod:`.acceptance`  -- MTP acceptance curves (:class:`AcceptanceModel`).
* :mod:`.cost`        -- :class:`ForwardCostModel`, :func:`load_cost_model`.
* :mod:`.bootstrap`   -- paired bootstrap over prompts.
* :mod:`.policies`    -- the drafting-policy registry (one declaration per policy).

Names not listed in ``__all__`` (kernels, reference replays used by the tests) are internal.
"""

from importlib import import_module

#: Where each public name lives: importing the package imports none of them (the policy
#: registry and ``--help`` read :mod:`.policies` without NumPy); the first use does.
_HOME = {
    **dict.fromkeys(("AcceptanceModel", "default_model", "load_acceptance",
                     "per_prompt_counters", "record_model"), "acceptance"),
    **dict.fromkeys(("bootstrap_ratios", "resample_indices", "summarize_samples"),
                    "bootstrap"),
    **dict.fromkeys(("Capture", "load_capture", "prompt_set_hash"), "capture"),
    **dict.fromkeys(("ForwardCostModel", "load_cost_model"), "cost"),
    **dict.fromkeys(("calibrate_gamma", "easiness_state", "fit_conditioned", "run_hybrid"),
                    "hybrid"),
    **dict.fromkeys(("AR", "PLD", "DraftProfile", "NGram", "ProfileBatch", "Suffix",
                     "draft_profiles", "replay"), "lookup"),
    "simulate_mtp": "mtp",
    **dict.fromkeys(("MODES", "ReplaySummary", "WalkResult", "summarize", "walk"), "walk"),
}


def __getattr__(name: str):
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


# ``walk`` names both a submodule and its function: once the submodule is imported, the
# package attribute is the module and ``__getattr__`` is never asked. Bound here, before any
# other import of the submodule, the attribute stays the function (NumPy, not numba).
from .walk import walk  # noqa: E402


__all__ = [
    # captures
    "Capture", "load_capture", "prompt_set_hash",
    # lookup policies and profiles
    "AR", "PLD", "NGram", "Suffix", "DraftProfile", "ProfileBatch", "draft_profiles", "replay",
    # the step walk
    "MODES", "walk", "WalkResult", "summarize", "ReplaySummary",
    # MTP and hybrids
    "simulate_mtp", "run_hybrid", "easiness_state", "fit_conditioned", "calibrate_gamma",
    "AcceptanceModel", "load_acceptance", "default_model", "record_model",
    "per_prompt_counters",
    # step time and bootstrap
    "ForwardCostModel", "load_cost_model",
    "bootstrap_ratios", "resample_indices", "summarize_samples",
]
