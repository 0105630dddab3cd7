"""``planner shift``: what will a submission score when re-run on the private prompt set?

Projects the private TPS distribution from a public score through the content acceptance
model (:mod:`models.drafting.acceptance_model`) and the forward cost model, or, without a
private capture, through the shipped public/private evidence (:mod:`models.drafting.shift`),
and reports ``P(private < public x (1 - X/100))``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Sequence

import numpy as np

from planner.errors import InputError

__all__ = ["ShiftResult", "run_shift", "captures_evidence", "precision_notes", "SCHEMA"]

SCHEMA = "spec-planner/shift/1"
CALIBRATION_HASH = "43df0c18b56abde3"


@dataclass
class ShiftResult:
    """Typed result of ``planner shift``.

    Attributes
    ----------
    inputs : dict
        Public score / runs, captures, mode, X, K, level, seed, draws.
    public : dict
        Public tokens/forward (``value``, ``source``) and TPS anchor.
    private : dict
        Private tokens/forward summary (capture mode) or the evidence used.
    ratio : dict
        Private/public TPS ratio: ``point``, ``pi_low``, ``pi_high``.
    private_tps : dict
        ``point``, ``pi_low``, ``pi_high`` (TPS).
    p_drop : float or None
        ``P(private TPS < public x (1 - X/100))``; None (withheld) when a capture is below
        the limited evidence floor (``evidence.level == "limited"``).
    validation : list of dict
        Held-out checks behind the trust statement.
    trust : str
        How far to trust the figure.
    evidence : dict or None
        Capture mode: how far the captures support the projection (:func:`captures_evidence`);
        None in evidence mode (no capture) and in results saved before it existed.
    p_drop_mc_se : float or None
        Monte Carlo standard error of ``p_drop``, ``sqrt(p (1 - p) / draws)`` (the draws are
        independent); 0 when no draw or every draw is below the threshold (the 95 % bound on
        P is then ``3 / draws``); None when ``p_drop`` is withheld and in results saved
        before it existed.
    """

    inputs: dict
    public: dict
    private: dict
    ratio: dict
    private_tps: dict
    p_drop: float
    validation: list
    trust: str
    evidence: dict | None = None
    p_drop_mc_se: float | None = None

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "command": "shift", "inputs": self.inputs,
                "public": self.public, "private": self.private, "ratio": self.ratio,
                "private_tps": self.private_tps, "p_drop": self.p_drop,
                "validation": self.validation, "trust": self.trust, "evidence": self.evidence,
                "p_drop_mc_se": self.p_drop_mc_se}

    @classmethod
    def from_dict(cls, d: dict) -> "ShiftResult":
        if d.get("schema") != SCHEMA:
            raise InputError(f"not a saved shift result (schema {d.get('schema')!r})",
                             field="schema")
        try:
            return cls(d["inputs"], d["public"], d["private"], d["ratio"], d["private_tps"],
                       d["p_drop"], d["validation"], d["trust"], d.get("evidence"),
                       d.get("p_drop_mc_se"))
        except KeyError as exc:
            raise InputError(f"saved shift result lacks {exc.args[0]!r}",
                             field=str(exc.args[0])) from None


def shipped_validation() -> list[dict]:
    """The content model's leave-one-group-out rows as shipped
    (``models/data/acceptance_validation.json``, written by
    ``bench/bench_shift_acceptance.py``; equal to
    :func:`models.drafting.acceptance_model.leave_one_group_out`, tested). Read instead of
    recomputed: the nested fits take ~10 s."""
    import json
    from importlib import resources

    d = json.loads(resources.files("models").joinpath("data", "acceptance_validation.json")
                   .read_text(encoding="utf-8"))
    key = next(k for k in d if k.startswith("v3 walk"))
    return [{k: r[k] for k in ("group", "n", "predicted", "measured", "error_pct", "pi_low",
                               "pi_high", "covered")} for r in d[key]]


def captures_evidence(captures: Sequence[tuple[str, str, object]]) -> dict:
    """How far the captures of a capture-mode projection support it: the capture floors of
    ``planner draft`` (:data:`planner.decide.draft.EVIDENCE_FLOORS`, applied by
    :func:`planner.decide.draft.capture_evidence`), one rule for both commands.

    Every completion token counts as walked (the content model reads whole completions,
    the reference convention ``start=0``).

    Parameters
    ----------
    captures : sequence of (role, name, Capture)
        ``role`` is ``"private"`` or ``"public"``; ``name`` the file as given.

    Returns
    -------
    dict
        ``level`` (``"ok"`` or ``"limited"``: the worst capture's), ``floors`` (the limited
        floors), ``captures`` (one dict per capture: ``role``, ``file``, ``level``,
        ``prompts``, ``tokens``, ``tokens_per_prompt`` (median), ``reasons``) and ``note``
        (one sentence beginning "too little evidence", None when ok).

    Raises
    ------
    InputError
        A capture below a refuse floor (fewer than 3 prompts, a median completion under 4
        tokens, or fewer than 32 tokens), naming the file and ``completion_token_ids``.
    """
    from planner.decide.draft.evidence import EVIDENCE_FLOORS, capture_evidence

    rows = []
    for role, name, cap in captures:
        lengths = np.array([len(c) for c in cap.completions], dtype=np.int64)
        try:
            ev = capture_evidence(len(cap), lengths, file=name)
        except InputError as exc:  # say which of the two captures
            raise InputError(f"{role} capture: {exc.message}", file=exc.file,
                             field=exc.field) from None
        rows.append({"role": role, "file": name, "level": ev["level"],
                     "prompts": ev["prompts"], "tokens": ev["tokens"],
                     "tokens_per_prompt": ev["tokens_per_prompt"], "reasons": ev["reasons"]})
    low = [r for r in rows if r["level"] != "ok"]
    f = EVIDENCE_FLOORS["limited"]
    note = None
    if low:
        note = ("too little evidence: " + "; ".join(
            f"{r['role']} capture {r['file']} has {r['prompts']} prompts, {r['tokens']} "
            f"tokens" for r in low)
            + f" (below the floor of planner draft: {f['prompts']} prompts, {f['tokens']} "
            f"tokens, a median of {f['tokens_per_prompt']} tokens per prompt); the probability of a drop is "
            "withheld: on a capture this small the content model's interval says nothing "
            "about the whole prompt set")
    return {"level": "limited" if low else "ok", "floors": dict(f), "captures": rows,
            "note": note}


def precision_notes(p_drop: float | None, mc_se: float | None, n_draws: int,
                    level: float) -> list[str]:
    """What the printed headline rounds away, as sentences for the ``trust`` field (every
    view prints it, ``planner report`` too): a Monte Carlo standard error of P(drop) of
    0.005 or more (the headline prints two decimals), an interval level that is not a whole
    percent, and
    interval ends resting on fewer than 10 draws each. Empty at the defaults (20,000 draws,
    level 0.90).

    Parameters
    ----------
    p_drop, mc_se : float or None
        P(drop) and its Monte Carlo standard error (None: withheld).
    n_draws : int
    level : float

    Returns
    -------
    list of str
    """
    out = []
    if mc_se is not None and p_drop is not None and mc_se >= 0.005:
        out.append(f"P(drop) = {p_drop:.4f} has a Monte Carlo standard error of {mc_se:.4f} "
                   f"at {n_draws:,} draws: its second decimal is not supported (use more "
                   "draws)")
    lvl = 100 * float(level)
    if abs(lvl - round(lvl)) > 1e-9:
        out.append(f"the interval level is {lvl:.10g} %")
    tail = int(round(n_draws * (1 - float(level)) / 2, 6))
    if tail < 10:
        out.append(f"each end of the {lvl:.10g} % interval rests on {tail} of {n_draws:,} "
                   "draws (Monte Carlo noise; use more draws)")
    return out


def _summ(x: np.ndarray, level: float) -> dict:
    lo, med, hi = np.quantile(x, [(1 - level) / 2, 0.5, (1 + level) / 2])
    return {"point": float(med), "pi_low": float(lo), "pi_high": float(hi)}


def run_shift(public_tps: float | None = None, *, runs: Sequence[float] | None = None,
              public_capture: str | Path | None = None,
              private_capture: str | Path | None = None, evidence: str = "official",
              x_pct: float = 5.0, k: int = 7, level: float = 0.90, n_draws: int = 20000,
              seed: int = 0, cost_profile: str = "F") -> ShiftResult:
    """Project a public score onto the private prompt set.

    Parameters
    ----------
    public_tps : float, optional
        Public score (TPS). One of ``public_tps`` / ``runs`` is required.
    runs : sequence of float, optional
        Several public runs; their mean is the anchor and the mean's standard error
        (``sd / sqrt(n)``) is drawn.
    public_capture, private_capture : path, optional
        Captures of the public and private-proxy prompts. With a private capture the content
        model predicts both sets (public = measured counters when the public capture is the
        calibration set, or when it is omitted).
    evidence : {"official", "proxy"}
        Without a private capture: which shipped pairs (see :mod:`models.drafting.shift`).
    x_pct : float
        Drop threshold X in % (default 5).
    k : int
        MTP chain depth of the submission (1..7; the content model is fitted at K=7).
    level : float
        Interval level (default 0.90).
    n_draws : int
    seed : int

    Returns
    -------
    ShiftResult

    Raises
    ------
    InputError
        No score, a non-positive score, X outside (0, 100), bad captures, a capture below
        the refuse floor of :func:`captures_evidence`.
    """
    from models.drafting import shift as sh
    from models.drafting.acceptance import (calibration_ids, default_model, per_prompt_counters,
                                            scale_curve)
    from models.drafting.acceptance_model import CALIBRATED_POSITIONS, default_content_model
    from models.drafting.content_prediction import for_capture
    from models.drafting.capture import load_capture
    from models.drafting.cost import load_cost_model

    from planner.io.limits import check, check_all  # plausible ranges (no 1e308, no 10^9 draws)

    if (public_tps is None) == (not runs):
        raise InputError("give exactly one of a public score or public runs",
                         field="public_tps" if public_tps is not None else "runs")
    if public_tps is not None:
        vals = [float(check("tps", public_tps, field="public_tps"))]
    else:
        vals = [float(check("tps", v, field="runs")) for v in runs]
    check_all([("draws", n_draws, "draws"), ("seed", seed, "seed")])
    if not 0 < x_pct < 100:
        raise InputError(f"the drop threshold x must be in (0, 100) %, got {x_pct}", field="x")
    if not 1 <= k <= 7:
        raise InputError(f"the MTP chain depth k must be in 1..7 (content model depth), got {k}",
                         field="k")
    if not 0.5 <= level < 1:
        raise InputError(f"the interval level must be in [0.5, 1), got {level}", field="level")
    rng = np.random.default_rng(seed)
    anchor = float(np.mean(vals))
    se = float(np.std(vals, ddof=1) / np.sqrt(len(vals))) if len(vals) > 1 else 0.0
    pub_tps = anchor + se * rng.standard_normal(n_draws)
    cost = load_cost_model(cost_profile)
    step = float(cost.step_ms(k + 1, k))
    base = default_model().curve
    ev = sh.load_evidence()
    inputs = {"public_tps": public_tps, "runs": list(vals) if runs else None,
              "public_capture": str(public_capture) if public_capture else None,
              "private_capture": str(private_capture) if private_capture else None,
              "evidence": evidence if private_capture is None else None, "x_pct": x_pct,
              "k": k, "level": level, "draws": n_draws, "seed": seed,
              "cost_profile": cost_profile}
    validation: list = []
    ev_caps = None
    if private_capture is not None:
        pcap_all = load_capture(private_capture)
        qcap_all = load_capture(public_capture) if public_capture is not None else None
        # a prompt set counts each prompt once: repeated records (same id and prompt, or
        # the same prompt and completion) are read once
        pcap = pcap_all.distinct()
        qcap = qcap_all.distinct() if qcap_all is not None else None
        dropped = len(pcap_all) - len(pcap) + (len(qcap_all) - len(qcap) if qcap_all else 0)
        ev_caps = captures_evidence(
            [("private", str(private_capture), pcap)]
            + ([("public", str(public_capture), qcap)] if qcap is not None else []))
        m = default_content_model()
        # measured set tokens/forward of the calibration prompts at K=7, power-scaled shape
        # for K < 7 (planner draft also reads the measured counters on these prompts)
        rows = per_prompt_counters("A+B")
        counts: dict = {}  # calibration id -> [drafts, accepted], runs A and B pooled
        for r in rows:
            c = counts.setdefault(r["id"], [0, 0])
            c[0] += r["num_drafts"]
            c[1] += r["num_accepted"]
        n_cal = len(counts)

        def measured(cal):
            """(set tokens/forward, source, prompts) from the measured counters when every
            prompt is a calibration prompt (``cal``: each prompt's calibration id, matched by
            its tokens), else None."""
            if any(c is None for c in cal):
                return None
            want = set(cal)
            nd = sum(counts[i][0] for i in want)
            na = sum(counts[i][1] for i in want)
            tpf = float(1 + scale_curve(base, 1 + na / nd)[0, :k].sum())
            src = (f"measured counters runs A+B, calibration prompts (prompt_set_hash "
                   f"{CALIBRATION_HASH})" if len(want) == n_cal else
                   f"measured counters runs A+B, {len(want)} of the {n_cal} calibration "
                   "prompts (matched by prompt tokens)")
            return tpf, src, len(want)

        # a capture whose prompts are all calibration prompts (the whole set or part of it,
        # any ids) reads their measured counters, as planner draft does; each capture's
        # prompts are matched to the calibration prompts once (no public capture: the
        # calibration set itself)
        p_ids = calibration_ids(pcap.prompts)
        q_ids = calibration_ids(qcap.prompts) if qcap is not None else [r["id"] for r in rows]
        p_meas = measured(p_ids)
        q_meas = measured(q_ids)
        priv_cal = p_meas is not None
        pub_cal = q_meas is not None

        def mixed(cap, cal, seed_off):
            """(draws, source, prediction) for a capture holding some calibration prompts and
            some others: the matched prompts' measured tokens/forward (runs A+B, power-scaled
            to depth k) and the content model's set draws for the others, combined as one set
            (sum L / sum(L / tpf)); None unless both kinds are present."""
            mi = [i for i, c in enumerate(cal) if c is not None]
            fi = [i for i, c in enumerate(cal) if c is None]
            if not mi or not fi:
                return None
            pr = for_capture(cap.subset(fi), base, k, level=level, n_draws=n_draws,
                             seed=seed + seed_off, model=m)
            t7 = np.array([1 + counts[cal[i]][1] / counts[cal[i]][0] for i in mi])
            tk = 1 + scale_curve(base, t7)[:, :k].sum(1)
            ln = np.array([len(c) for c in cap.completions], float)
            draws = ln.sum() / ((ln[mi] / tk).sum() + ln[fi].sum() / pr.draws)
            src = (f"measured counters runs A+B for {len(set(cal[i] for i in mi))} calibration "
                   f"prompts (matched by prompt tokens), content model for the other "
                   f"{len(fi)}")
            return draws, src, pr

        # a capture with some calibration prompts and some others reads the measured counters
        # for the first and the content model for the rest (one foreign prompt no longer sends
        # the whole capture to the model)
        p_mix = None if priv_cal else mixed(pcap, p_ids, 0)
        q_mix = None if pub_cal else mixed(qcap, q_ids, 1)
        pair = None
        ppred = None
        if priv_cal:  # the private prompts are calibration prompts: measured
            priv_tpf = np.full(n_draws, p_meas[0])
            priv_src = p_meas[1]
        elif p_mix is not None:
            priv_tpf, priv_src, ppred = p_mix
        elif pub_cal or q_mix is not None:  # content model on the private capture only
            ppred = for_capture(pcap, base, k, level=level, n_draws=n_draws, seed=seed,
                                model=m)
            priv_tpf = ppred.draws
            priv_src = "content model"
        if pub_cal:
            pub_tpf = np.full(n_draws, q_meas[0])
            pub_src = q_meas[1]
        elif q_mix is not None:
            pub_tpf, pub_src, _ = q_mix
            pub_src += f" on {public_capture}"
        elif priv_cal or p_mix is not None:
            qpred = for_capture(qcap, base, k, level=level, n_draws=n_draws, seed=seed + 1,
                                model=m)
            pub_tpf = qpred.draws
            pub_src = f"content model on {public_capture}"
        else:  # both through the content model: shared terms drawn once
            priv_tpf, pub_tpf, pair = sh.paired_capture_draws(pcap, qcap, base, k, n=n_draws,
                                                              seed=seed, model=m)
            priv_src = "content model"
            pub_src = (f"content model on {public_capture}, "
                       + ("same prompt set: coefficient error, prompt residuals and set "
                          "effect shared" if pair["same_prompt_set"] else
                          "another prompt set: coefficient error shared, set effects and "
                          "prompt residuals independent"))
            lp = np.array([len(c) for c in pcap.completions], float)
            beyond_p = float(np.clip(lp - CALIBRATED_POSITIONS, 0, None).sum() / lp.sum())
            ppred = SimpleNamespace(share_beyond=beyond_p, model={
                **m.to_dict(), "calibrated_positions": CALIBRATED_POSITIONS,
                "share_beyond_calibrated": round(beyond_p, 4)})
        # cost model: same K on both sets -> same step; TPS = eff x 1000 tpf / step
        r_model = (cost.tps(priv_tpf / step, 1.0) / cost.tps(pub_tpf / step, 1.0))
        ratio = r_model * sh.allocation_noise(n_draws, rng, ev["official_allocation_cv"])
        private = {"mode": "capture", "tokens_per_forward": _summ(priv_tpf, level),
                   "content_model": ppred.model if ppred is not None else None,
                   "n_prompts": len(pcap)}
        if priv_src != "content model":
            private["source"] = priv_src
        if pair is not None:
            private["paired"] = pair
        public = {"tokens_per_forward": float(np.median(pub_tpf)), "source": pub_src,
                  "tps": anchor, "tps_se": se, "step_ms": step}
        validation = [{"check": "group as private set (leave-one-group-out)", **r}
                      for r in shipped_validation()]
        errs = [r["error_pct"] for r in validation]
        cov = sum(r["covered"] for r in validation)
        miss = [f"{r['group']} {r['error_pct']:+.1f} %" for r in validation
                if abs(r["error_pct"]) > 5]
        beyond = ppred.share_beyond if ppred is not None else 0.0
        private["share_beyond_calibrated"] = beyond
        if priv_cal and pub_cal and p_meas[2] == q_meas[2] == n_cal:
            lead = ("capture mode: both captures are of the calibration prompts (prompt_set_hash "
                    f"{CALIBRATION_HASH}): the measured counters stand for both sides (as in "
                    "planner draft), so no prompt-set shift is predicted and the ratio's "
                    "spread is the run-to-run noise of two official allocations (0.79 % "
                    "each); the captures' texts are not read. ")
        elif priv_cal and pub_cal:
            lead = ("capture mode: every prompt of both captures is a calibration prompt "
                    f"(private {p_meas[2]}, public {q_meas[2]} of {n_cal}, matched by prompt "
                    "tokens): their measured counters stand for both sides (as in planner "
                    f"draft), {p_meas[0]:.3f} and {q_meas[0]:.3f} tokens/forward, so the "
                    "shift is the measured difference between those prompts and the "
                    "ratio's spread the run-to-run noise of two official allocations (0.79 % "
                    "each); the captures' texts are not read. ")
        elif pair is not None and pair["same_prompt_set"]:
            d_pct = 100 * (pair["private_point"] / pair["public_point"] - 1)
            lead = ("capture mode: both captures hold the same prompt set, so the "
                    "prompt-set effect, the prompt residuals and the coefficient error are "
                    "shared and cancel in the ratio; what is left is the difference the "
                    f"content model reads between the two texts ({d_pct:+.1f} % "
                    "tokens/forward) and run noise. ")
        elif priv_cal:
            lead = ("capture mode: the private capture is of the calibration prompts "
                    f"(prompt_set_hash {CALIBRATION_HASH}), read through the measured "
                    "counters; the public capture through the content model. "
                    if p_meas[2] == n_cal else
                    f"capture mode: the private capture's prompts are {p_meas[2]} of the "
                    f"{n_cal} calibration prompts (matched by prompt tokens), read through "
                    "their measured counters; the public capture through the content "
                    "model. ")
        elif p_mix is not None or q_mix is not None:
            lead = ("capture mode: " + "; ".join(
                f"the {side} capture mixes prompts: {src}" for side, src in
                (("private", priv_src if p_mix is not None else None),
                 ("public", pub_src if q_mix is not None else None)) if src)
                + " (combined as one set: sum L / sum(L / tpf)). ")
        else:
            lead = ""
        if dropped:
            lead += (f"{dropped} repeated capture record(s) read once (a prompt set counts "
                     "each prompt once). ")
        trust = lead + (f"capture mode: on left-out prompt groups (nothing of a group reached its "
                 f"fit) the content model's set tokens/forward was within "
                 f"{min(errs):+.1f}..{max(errs):+.1f} % ({cov}/{len(validation)} inside the "
                 f"90 % interval"
                 + (f"; outside +-5 %: {', '.join(miss)}" if miss else "") + "). It was "
                 "fitted on one stack (F, K=7) and three groups of one benchmark with "
                 "512-token completions; a prompt distribution far from P128 (chat, code, "
                 "other languages) is an extrapolation"
                 + (f", and {beyond:.0%} of the private capture's tokens lie beyond the "
                    "calibrated 512 positions (not validated; longer contexts also cost more "
                    "per forward, not modelled)" if beyond > 0 else "")
                 + ". No capture of an official private set exists, so this mode is not "
                 "checked against the official public/private pair; prefill and client "
                 "overheads are not modelled")
    else:
        ratio = sh.evidence_draws(evidence, n_draws, rng, ev=ev)
        private = {"mode": "evidence", "evidence": evidence,
                   "pairs": [p for p in ev["pairs"] if evidence == "proxy" and
                             p["kind"] == "proxy" or evidence == "official"]}
        public = {"tokens_per_forward": None, "source": "not needed (TPS ratio evidence)",
                  "tps": anchor, "tps_se": se, "step_ms": step}
        validation = [{"check": "leave-one-pair-out", **r} for r in sh.validate_pairs(
            level=level, seed=seed)]
        trust = ("evidence mode: 'official' rests on ONE official public/private pair "
                 "(-4.3 %) with the spread borrowed from local proxy pairs; it cannot be "
                 "checked out of sample. 'proxy' covered 6 of 7 held-out proxy pairs; the "
                 "proxies are harsher than the real private set (the official pair is "
                 "outside the proxy interval)")
    priv = pub_tps * ratio
    thr = 1 - x_pct / 100
    p_drop = float(np.mean(priv < pub_tps * thr))
    mc_se = float(np.sqrt(p_drop * (1 - p_drop) / n_draws))  # binomial, independent draws
    if ev_caps is not None and ev_caps["level"] != "ok":
        p_drop = mc_se = None  # withheld: too little capture (see ev_caps["note"])
    notes = precision_notes(p_drop, mc_se, n_draws, level)
    if notes:
        trust += ". Precision: " + "; ".join(notes)
    return ShiftResult(inputs=inputs, public=public, private=private,
                       ratio=_summ(ratio, level), private_tps=_summ(priv, level),
                       p_drop=p_drop, validation=validation, trust=trust, evidence=ev_caps,
                       p_drop_mc_se=mc_se)
