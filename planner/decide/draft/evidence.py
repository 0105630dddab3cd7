"""Which capture a projection reads and whether it holds enough evidence (prompts, walked
tokens) for a worth-a-run label."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from planner.errors import InputError

#: How much capture a projection needs. ``refuse``: below any of these ``planner draft`` and
#: ``planner draft-sweep`` exit 2; ``limited``: below any of these the result carries
#: ``evidence.level = "limited"`` and worth-a-run says "too little evidence" instead of a
#: label. Walked tokens are completion tokens from the walk's start (``--convention``); one
#: AR step (forward) per walked token.
#:
#: Source: 95 % percentile-bootstrap intervals of pld(n=2, depth=24) tokens/forward on
#: random subsets of the shipped captures (150 subsets x 400 replicates each,
#: docs/drafting.md "How much capture a projection needs"): with full-length completions the
#: interval covers the whole capture's value in 44-45 % of subsets of 2 prompts, 66-74 % of
#: 3, 79-81 % of 4, 83-91 % of 8 and 90-95 % from 12 prompts on (ar_reference_bf16 and
#: ar_longform_aime_int4); with completions cut to 4 tokens or fewer pld's tokens/forward is
#: exactly 1.000 with a zero-width interval (nothing to learn), at 8 tokens the interval
#: covers the same-length value in 59-78 % of subsets of 8-16 prompts, at 16 tokens 94 % with
#: 16 prompts; below 512 walked tokens coverage stays under 0.90 whatever the split.
EVIDENCE_FLOORS = {
    "refuse": {"prompts": 3, "tokens_per_prompt": 4, "tokens": 32},
    "limited": {"prompts": 12, "tokens_per_prompt": 16, "tokens": 512},
}
_EVIDENCE_WORDS = {"prompts": "prompts", "tokens_per_prompt": "walked tokens per prompt "
                   "(median)", "tokens": "walked tokens (AR steps)"}


def capture_evidence(n_prompts: int, walked: np.ndarray, *, file: str | None = None) -> dict:
    """How far a capture supports a projection (:data:`EVIDENCE_FLOORS`).

    Parameters
    ----------
    n_prompts : int
        Prompts in the capture.
    walked : array of int, shape (P,)
        Walked completion tokens per prompt (completion length minus the walk's start).
    file : str, optional
        Capture name for the error message.

    Returns
    -------
    dict
        ``level`` (``"ok"`` or ``"limited"``), ``prompts``, ``tokens``,
        ``tokens_per_prompt`` (median), ``floors`` (the limited floors), ``reasons`` (one
        phrase per floor not met) and ``note`` (one sentence, None when ok).

    Raises
    ------
    InputError
        Below a refuse floor, naming the capture and the quantity.
    """
    w = np.asarray(walked, np.int64)
    have = {"prompts": int(n_prompts), "tokens_per_prompt": float(np.median(w)) if w.size else 0.0,
            "tokens": int(w.sum())}

    def short(floors):
        return [f"{have[k]:g} {_EVIDENCE_WORDS[k]} < {v}" for k, v in floors.items()
                if have[k] < v]

    bad = short(EVIDENCE_FLOORS["refuse"])
    if bad:
        raise InputError(f"too little capture to project from: {'; '.join(bad)} (see "
                         "docs/drafting.md, How much capture a projection needs)",
                         file=file, field="completion_token_ids")
    reasons = short(EVIDENCE_FLOORS["limited"])
    return {"level": "limited" if reasons else "ok", **have,
            "floors": dict(EVIDENCE_FLOORS["limited"]), "reasons": reasons,
            "note": ("too little evidence: " + "; ".join(reasons) + ". Bootstrap intervals "
                     "on a capture this small cover a full capture's value less often than "
                     "they claim, so no projection here is a basis for a run") if reasons
            else None}


def _withhold(war: dict, evidence: dict) -> dict:
    """A worth-a-run dict relabelled "too little evidence" (numbers kept, label withheld)."""
    g = war["gain_tps"]
    return {**war, "worth": False, "code": "too_little_evidence",
            "verdict": (f"too little evidence ({'; '.join(evidence['reasons'])}): the "
                        f"projected {g['point']:+.1f} TPS [{g['ci_low']:+.1f}, "
                        f"{g['ci_high']:+.1f}] is no basis for a run; capture more prompts "
                        "or longer completions")}


def default_capture_path() -> Path:
    """The shipped example capture ``examples/captures/ar_reference_bf16.jsonl.gz`` (repo
    checkout), else the package copy ``planner/data/draft_default_capture.jsonl.gz``.

    Raises
    ------
    InputError
        Neither exists.
    """
    repo = Path(__file__).resolve().parents[2] / "examples" / "captures" / \
        "ar_reference_bf16.jsonl.gz"
    if repo.is_file():
        return repo
    pkg = Path(str(resources.files("planner").joinpath("data", "draft_default_capture.jsonl.gz")))
    if pkg.is_file():
        return pkg
    raise InputError("no CAPTURE given and the shipped example capture was not found",
                     field="CAPTURE")


#: Name of the shipped example capture in results (never a machine path).
EMBEDDED_CAPTURE = "embedded:draft_default_capture.jsonl.gz"


def capture_name(capture_path) -> str:
    """The capture as results name it: the path as given, or :data:`EMBEDDED_CAPTURE` for
    the shipped example (whose location differs between a checkout and an install)."""
    return EMBEDDED_CAPTURE if capture_path is None else str(capture_path)
