"""MTP acceptance of a capture's prompts: a given curve or file, the measured per-prompt
counters of calibration prompts, or the content model's prediction for other prompts."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from planner.errors import InputError

def _acceptance_for(capture, k: int, curve: Sequence[float] | None, acceptance: str | None,
                    per_prompt: str | None):
    """(model, curves (P, k), note) of a capture's MTP acceptance; ``model.meta["stack"]``
    says whose stack the curve is (:func:`_stack_entry`).

    Without ``--curve``: a capture recognised as a shipped capture of a stack with its own
    measured record (:func:`models.drafting.acceptance_stacks.match_stack`) reads that
    record's curve; stack-F captures read the default record with its per-prompt counters;
    any other capture borrows the default stack-F curve (and says so)."""
    from models.drafting.acceptance import DEFAULT_RECORD, record_model
    from models.drafting.acceptance_stacks import match_stack

    match = match_stack(capture) if curve is None and acceptance is None else None
    if match is not None and match.record not in (None, DEFAULT_RECORD):
        own = record_model(match.record)
        if k <= own.k:
            own.meta["model"] = f"the capture's own stack's measured curve ({match.record})"
            own.meta["stack"] = _stack_entry(capture, own, k, match, own=True)
            note = (f"capture recognised (by {match.how}) as {match.capture}: MTP acceptance "
                    f"from its own stack's measured curve {match.record} ({match.stack}), "
                    "not stack F's")
            return own, own.curves_for(capture.ids)[:, :k], note
        match = None  # own stack measured less deep than K: borrow, and say why
        why = (f"; the capture's own stack's record {own.meta['record']} is measured to "
               f"K={own.k} only")
    else:
        why = ""
    model, cur, note = _acceptance_default(capture, k, curve, acceptance, per_prompt)
    own_f = match is not None and match.record == DEFAULT_RECORD
    model.meta["stack"] = _stack_entry(capture, model, k, match, own=own_f,
                                       given=curve is not None or acceptance is not None,
                                       why=why)
    return model, cur, note


def _stack_entry(capture, model, k: int, match, *, own: bool, given: bool = False,
                 why: str = "") -> dict:
    """The acceptance JSON's ``stack`` entry: whose curve it is, and for a borrowed curve the
    spread between the shipped stacks' curves at depth ``k``
    (:func:`models.drafting.acceptance_stacks.stack_spread`) by which intervals widen."""
    from models.drafting.acceptance_stacks import stack_spread

    rec = model.meta.get("record")
    entry = {"record": rec, "own": bool(own), "borrowed": not own and not given,
             "given": bool(given), "capture": None if match is None else match.capture,
             "matched_by": None if match is None else match.how,
             "stack": None if match is None else match.stack}
    if entry["borrowed"]:
        ref = 1.0 + float(np.asarray(model.curve)[:k].sum())
        entry["spread"] = stack_spread(k, ref)
        reason = why[2:] if why else "the capture's stack has no measured MTP record"
        entry["note"] = (f"borrowed from {rec or model.source} (stack F): {reason}; intervals "
                         "widened by the spread between the shipped stacks' curves at K="
                         f"{k} (x{entry['spread']['ratio_low']:.3f} to "
                         f"x{entry['spread']['ratio_high']:.3f}, "
                         f"{entry['spread']['n_stacks']} stacks)")
    elif own:
        entry["note"] = (f"the capture's own stack ({match.stack}): measured curve {rec}"
                         + (" with stack F's per-prompt counters" if
                            model.prompt_curves is not None else ""))
    else:
        entry["note"] = f"curve given by the user ({model.source})"
    return entry


def _acceptance_default(capture, k: int, curve: Sequence[float] | None,
                        acceptance: str | None, per_prompt: str | None):
    from models.drafting.acceptance import load_acceptance, per_prompt_counters

    model = load_acceptance(acceptance, curve=curve)
    note = None
    if model.prompt_curves is not None:  # a per-prompt file given: must match the capture
        cur = model.curves_for(capture.ids, file=str(acceptance))
    elif per_prompt and per_prompt.lower() != "none" and curve is None and acceptance is None:
        from models.drafting.acceptance import calibration_ids

        rows = per_prompt_counters(per_prompt)
        ids = {r["id"] for r in rows}
        # matched by prompt tokens, not ids: a capture of some calibration prompts (any ids,
        # any order) reads their measured counters; prompts outside them, the content model
        cal = calibration_ids(capture.prompts)
        matched = [i for i, c in enumerate(cal) if c is not None and c in ids]
        if matched and len(matched) < len(cal):
            model, cur, note = _mixed_acceptance(capture, k, per_prompt, cal, matched,
                                                 len(ids), model.curve)
        elif len(matched) == len(cal):
            model = load_acceptance(per_prompt=per_prompt)
            n_cal = len(set(cal))
            model.meta["model"] = (
                "measured per-prompt counters (calibration prompts)" if n_cal == len(ids) else
                f"measured per-prompt counters ({n_cal} of the {len(ids)} calibration "
                "prompts, matched by prompt tokens)")
            cur = model.curves_for(cal, subset=True)
        else:
            from models.drafting.content_prediction import for_capture

            pred = for_capture(capture, model.curve, min(k, model.k))
            model.meta.update(content=pred, model=pred.model["model"])
            note = ("prompts are not the calibration prompts (prompt_set_hash 43df0c18b56abde3):"
                    " per-prompt curves predicted by the content model")
            cur = _to_depth(pred.curves, model.k)
    else:
        cur = model.curves_for(capture.ids)
    if k > model.k:
        raise InputError(f"K={k} exceeds the acceptance curve depth {model.k}; give a deeper "
                         "acceptance curve", field="k")
    return model, cur[:, :k], note


def _to_depth(curves: np.ndarray, k: int) -> np.ndarray:
    """Content-model curves (P, K') padded to depth ``k`` with a negligible survival (1e-9)
    beyond K' (the model predicts up to its calibration depth)."""
    return np.pad(curves, ((0, 0), (0, k - curves.shape[1])), constant_values=1e-9)


def _mixed_acceptance(capture, k: int, per_prompt: str, cal: list, matched: list,
                      n_cal: int, base_curve: np.ndarray):
    """(model, curves, note) of a capture holding some calibration prompts and some others.

    The matched prompts read their measured per-prompt curves, the others the content
    model's; the content model's relative prediction interval of the others' set figure
    ``r`` acts on the whole set through the set formula ``sum L / sum(L / tpf)``: with
    ``A`` and ``B`` the matched and the other prompts' ``sum L / tpf``, the whole set moves
    by ``(A + B) / (A + B / r)``, so a few foreign prompts widen the interval a little,
    not as if every prompt were predicted.
    """
    from dataclasses import replace

    from models.drafting.acceptance import load_acceptance
    from models.drafting.content_prediction import for_capture

    model = load_acceptance(per_prompt=per_prompt)
    taken = set(matched)
    others = [i for i in range(len(cal)) if i not in taken]
    kk = min(k, model.k)
    pred = for_capture(capture.subset(others), base_curve, kk)
    cur = np.empty((len(cal), model.k))
    cur[matched] = model.curves_for([cal[i] for i in matched], subset=True)
    cur[others] = _to_depth(pred.curves, model.k)
    ln = np.array([len(c) for c in capture.completions], float)
    per = ln / (1 + cur[:, :kk].sum(1))
    a, b = float(per[matched].sum()), float(per[others].sum())

    def whole(r: float) -> float:
        return (a + b) / (a + b / r)

    n_m = len(set(cal[i] for i in matched))
    label = (f"measured per-prompt counters for {n_m} of the {n_cal} calibration prompts "
             f"(matched by prompt tokens), {pred.model['model']} for the other {len(others)}")
    model.meta.update(content=replace(pred, ratio_low=whole(pred.ratio_low),
                                      ratio_high=whole(pred.ratio_high),
                                      model={**pred.model, "prompts_predicted": len(others)}),
                      model=label)
    note = (f"{len(others)} of the {len(cal)} prompts are not calibration prompts "
            "(prompt_set_hash 43df0c18b56abde3): their curves are predicted by the content "
            f"model; the other {len(matched)} read their measured counters")
    return model, cur, note
