"""Drafting replay over captured greedy token streams.

* :mod:`.capture` -- :func:`load_capture`, :class:`Capture`, :func:`prompt_set_hash`.
* :mod:`.lookup`  -- per-position :class:`DraftProfile` for ``pld`` / ``ngram`` /
  ``suffix`` / ``ar`` policies (:func:`draft_profiles`).
* :mod:`.walk`    -- the step walk (:func:`walk`) and :func:`summarize`.
"""

from .capture import Capture, load_capture, prompt_set_hash
from .lookup import (AR, PLD, DraftProfile, NGram, ProfileBatch, Suffix, draft_profiles,
                     ngram_reference_propose, pld_reference_replay, profile_arrays, replay)
from .walk import ReplaySummary, WalkResult, summarize, walk, walk_arrays

__all__ = [
    "Capture", "load_capture", "prompt_set_hash",
    "AR", "PLD", "NGram", "Suffix", "DraftProfile", "ProfileBatch", "draft_profiles",
    "profile_arrays", "replay", "pld_reference_replay", "ngram_reference_propose",
    "walk", "walk_arrays", "summarize", "WalkResult", "ReplaySummary",
]
