"""Which stack's MTP acceptance a capture's projection reads, and how far the shipped stacks'
curves spread.

A capture is a greedy token stream of one serving stack. When it is one of the shipped
captures whose stack has a measured MTP acceptance record (``mtp_acceptance.json``), the
projection reads that record, the capture's *own* stack, instead of the default stack-F
curve: the K=6 QAT-body capture (``mtp_spec_on_k6_int4_qat_body``) measured 3.386
tokens/forward live (record ``Q6_P128_int4_g32``, its ``paired_capture``), while stack F's
per-prompt counters project 3.629 on it (+7.6 %).

A capture is recognised by its content (:func:`fingerprint`: the first 32 completion tokens
of every record, hashed; stable under ``stop_at_eos``, which never cuts that early on the
shipped files) or, failing that, by its file name (a copy of a shipped capture under its own
name "names its stack"). :data:`SHIPPED_CAPTURES` lists the shipped captures and their
stacks. A capture of no known stack *borrows* the default curve; :func:`stack_spread` gives
the spread between the shipped stacks' curves at depth K, by which the projection's interval
is widened.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import PurePath
from typing import Sequence

import numpy as np

__all__ = ["SHIPPED_CAPTURES", "StackMatch", "fingerprint", "match_stack", "stack_spread",
           "P128_HASH", "FINGERPRINT_TOKENS"]

#: The public P128 prompt set (``prompt_set_hash`` of the records' prompts).
P128_HASH = "43df0c18b56abde3"
#: Completion tokens per record that enter the fingerprint.
FINGERPRINT_TOKENS = 32

#: Shipped captures (``examples/captures``): content fingerprint -> (file stem, acceptance
#: record of the capture's own stack or None, stack in words). Stack F captures read the
#: default record ``F7_P128_calib`` with the per-prompt counters (their own stack already).
#: Fingerprints computed with :func:`fingerprint` on the shipped files (tested).
SHIPPED_CAPTURES = {
    "edde4e5382092bc1": ("mtp_spec_on_k7_int4_frontier", "F7_P128_calib",
                         "frontier stack F (int4 body, 12,288-token head, fine-tuned MTP "
                         "drafter), K=7"),
    "b751cde3547d08cf": ("ar_reference_int4_frontier_specoff", "F7_P128_calib",
                         "frontier stack F, speculation off"),
    "09159460986918a9": ("mtp_spec_on_k6_int4_qat_body", "Q6_P128_int4_g32",
                         "vendor int4 QAT body + int4 g32 head + public QAT MTP assistant, "
                         "K=6, batch-invariant off"),
    "3d44c6adf46357cf": ("ar_reference_bf16", None,
                         "bf16 vendor checkpoint, plain vLLM (no MTP record of this stack)"),
    "a17677cf583258ab": ("ar_longform_aime_int4", None,
                         "int4 g128 body, batch-invariant on (no MTP record on its prompts)"),
    "f239857d677b89bd": ("mtp_spec_on_k7_longform_gpqa_int4", None,
                         "int4 g128 body + QAT-matched drafter, K=7 (no acceptance record)"),
}


@dataclass(frozen=True)
class StackMatch:
    """The stack a capture was recognised as.

    Attributes
    ----------
    capture : str
        Stem of the shipped capture it matched.
    record : str or None
        Acceptance record of that stack (None: the stack has no measured MTP record).
    stack : str
        The stack in words.
    how : str
        ``"content"`` (fingerprint) or ``"name"`` (file name).
    """

    capture: str
    record: str | None
    stack: str
    how: str


def fingerprint(completions: Sequence[np.ndarray]) -> str:
    """16 hex digits of SHA-256 over the first :data:`FINGERPRINT_TOKENS` completion tokens of
    every record (int64 bytes, record order)."""
    h = hashlib.sha256()
    for c in completions:
        h.update(np.asarray(c[:FINGERPRINT_TOKENS], np.int64).tobytes())
    return h.hexdigest()[:16]


def match_stack(capture) -> StackMatch | None:
    """The shipped stack of a capture (:class:`models.drafting.capture.Capture`), by content,
    else by file name; None when it is none of them."""
    fp = fingerprint(capture.completions)
    if fp in SHIPPED_CAPTURES:
        stem, rec, words = SHIPPED_CAPTURES[fp]
        return StackMatch(stem, rec, words, "content")
    if capture.path:
        name = PurePath(str(capture.path)).name
        stem = name.split(".jsonl")[0]
        for s, rec, words in SHIPPED_CAPTURES.values():
            if stem == s:
                return StackMatch(s, rec, words, "name")
    return None


def stack_spread(k: int, reference_tpf: float) -> dict:
    """Spread of the shipped stacks' MTP curves at depth ``k`` on the P128 prompts.

    Every embedded record measured on P128 with a per-position curve (or histogram) at
    least ``k`` deep, secondary notes left out, gives ``1 + sum(s[:k])`` (a deeper curve cut
    to ``k``); records of one stack (same ``config``) count once (their mean), under the id
    of the stack's deepest record.

    Parameters
    ----------
    k : int
        Chain depth.
    reference_tpf : float
        Tokens/forward of the curve the projection uses at this depth (1 + sum of its first
        ``k`` positions).

    Returns
    -------
    dict
        ``k``, ``stacks`` (record id -> tokens/forward, one per stack), ``ratio_low``,
        ``ratio_high`` (min and max over stacks / ``reference_tpf``, each bracketing 1),
        ``n_stacks``, ``source``.
    """
    from models.drafting.acceptance import _record_curve, load_records

    by_cfg: dict = {}
    for rec in load_records():
        if rec.get("prompt_set_hash") != P128_HASH or "secondary" in str(
                rec.get("measurement", "")):
            continue
        if not (rec.get("per_position_acceptance") or rec.get("accept_len_histogram")):
            continue
        by_cfg.setdefault(rec.get("config", rec["id"]), []).append(
            (rec["id"], _record_curve(rec)))
    stacks = {}
    for recs in by_cfg.values():
        # a stack is named by its deepest record (the same name at every depth)
        name = max(recs, key=lambda r: r[1].size)[0]
        tpf = [1.0 + float(cv[:k].sum()) for _, cv in recs if cv.size >= k]
        if tpf:
            stacks[name] = float(np.mean(tpf))
    vals = list(stacks.values())
    lo = min(min(vals) / reference_tpf, 1.0) if vals else 1.0
    hi = max(max(vals) / reference_tpf, 1.0) if vals else 1.0
    return {"k": int(k), "stacks": stacks, "ratio_low": float(lo), "ratio_high": float(hi),
            "n_stacks": len(stacks),
            "source": "models/data/mtp_acceptance.json (copy of the shared "
                      "mtp_acceptance.json): P128 records with a per-position curve, one per "
                      "stack"}
