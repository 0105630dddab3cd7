"""What a draft projection rests on: the deciding constants, their plausible ranges and
sources, and where in each range the worth-a-run conclusion flips.

The conclusion is the headline's: *worth a run* when the runnable policy (not the baseline,
not the ``hybrid-max`` upper bound) with the largest projected gain is worth a run
(:func:`planner.decide.draft.worth.worth_a_run`), else *not worth a run*. For each
constant the projection is re-priced (:class:`planner.decide.draft.reprice.Repricer`: no
walk, the same bootstrap draws) at the ends of its range; when the conclusion there differs
from the one at the value used, the flip point is bracketed by bisection: first on the
point gain's sign (free), then on the verdict itself (the assurance planner, a few calls),
to :data:`FLIP_ITERS` halvings. The projection is taken as monotone in each constant (it
is, term by term: a larger sync factor, drafter or per-row cost only slows a step).

Constants and plausible ranges (sources: ``../shared/data/forward_cost.md``, copied into
``models/data/forward_cost.json``; ``mtp_acceptance.json``):

* ``sync_factor`` [1.00, 1.26]: 1.00 = a synchronous step as fast as the asynchronous one
  (the floor: never faster); 1.15-1.26x serialized vs pipelined steps (s1, M <= 32), the
  shipped 1.20 is their midpoint (and s5's +19 % community note).
* ``drafter_per_token_ms`` [0.20, 0.45] ms: 1.426-1.494 ms for 7 MTP passes on stack F
  (s3: 0.204-0.213 per token) up to 2.63-2.70 ms for K=6 on the BI-off int4-head stack (s4:
  0.44-0.45).
* ``verify_per_row_ms`` [0.0127, 0.0846] ms: the bf16-head body's flat M=1..16 (s1), stack
  F's 0.038 (s3), the served synchronous verify's linear fit C(M) (s2).
* ``cost_profile``: each shipped profile's verify/drafter/host numbers (the sync factor
  stays the run's: it is its own entry).
* ``acceptance_curve``: each shipped stack's P128 curve at the policy's K
  (:func:`models.drafting.acceptance_stacks.stack_spread`), applied to first order.
* ``prompt_set_model``: the content model's 90 % interval of the set's tokens/forward, when
  the prompts are not the calibration prompts.
* ``tps_anchor``: ``--baseline-tps`` (or the cost model's TPS): it scales every TPS figure;
  the verdict reads the gain relative to it, so it never flips it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from planner.results.rests_on import RestsOn

__all__ = ["Projection", "rests_on", "NUMERIC", "FLIP_ITERS", "SIZED"]

#: Halvings of a policy's worth-a-run gain threshold (:meth:`Projection.threshold`), each one
#: assurance-planner call (about 0.1-0.4 s on the shared 2-core VM): 2 give it to 1/8 of the
#: bracket (+-0.7 TPS on the K=7 example, +-0.003 of a sync factor).
FLIP_ITERS = 2
#: Positive-gain policies whose verdict an evaluation checks (the largest gains first): 1,
#: the headline's rule (``worth_a_run.worth`` is the verdict of the runnable policy with the
#: largest projected gain).
SIZED = 1
#: A list to append (label, gain) of every sizing call to (tests, timing); None: off.
_TRACE: list | None = None

#: Numeric cost constants: field, label, (low, high), unit, source.
NUMERIC = (
    ("sync_factor", "sync factor", (1.0, 1.26), "x the asynchronous step",
     "forward_cost.md s1: serialized vs pipelined steps 1.15-1.26x (M <= 32); 1.00 = a "
     "synchronous step as fast as the asynchronous one (the floor); 1.20 their midpoint"),
    ("drafter_per_token_ms", "drafter cost per draft token", (0.20, 0.45), "ms",
     "forward_cost.md s3: 7 MTP passes 1.426-1.494 ms on stack F (0.204-0.213 ms/token); "
     "s4: K=6 drafter 2.63-2.70 ms on the BI-off int4-head stack (0.44-0.45 ms/token)"),
    ("verify_per_row_ms", "verify cost per extra row", (0.0127, 0.0846), "ms",
     "forward_cost.md s1: bf16-head body M=1->16 0.0127 ms/row; s3 stack F 0.038; s2 served "
     "synchronous verify C(M) = 12.70 + 0.0846 M"),
)


@dataclass
class Projection:
    """What re-deciding a draft run needs besides its walks (built by ``run_draft``)."""

    rep: object  # Repricer
    cost: object  # ForwardCostModel
    labels: list
    names: list
    candidates: list  # indices of runnable non-baseline policies
    baseline_tps: float | None
    sigma_at: Callable
    noise_draws: object
    prior: object
    run_cost: object
    run_cap: int
    seed: int
    widen: dict = field(default_factory=dict)  # run index -> factor on its TPS draws
    withheld: bool = False
    ks: dict = field(default_factory=dict)  # run index -> MTP K (stochastic runs)
    curve: object = None  # the MTP curve used (global), for acceptance alternatives
    content: object = None  # content-model prediction (ratio_low, ratio_high) or None
    at_value: dict | None = None  # run index -> (worth, point gain) at the run's constants
    calls: int = 0
    _draws: dict = field(default_factory=dict)
    _thr: dict = field(default_factory=dict)
    _thr_hi: dict = field(default_factory=dict)

    # -- one evaluation -------------------------------------------------------------
    def _tps(self, i: int, cost, lam: dict, point_only: bool):
        b_s, b_pt = self.rep.rates(0, cost, lam.get(0, 1.0), point_only=point_only)
        r_s, r_pt = self.rep.rates(i, cost, lam.get(i, 1.0), point_only=point_only)
        if self.baseline_tps is not None:
            anchor = self.baseline_tps
            tps_pt = anchor * r_pt / b_pt
            tps_s = None if point_only else anchor * r_s / b_s
            base_s = anchor
        else:
            anchor = float(cost.tps(b_pt, 1.0))
            tps_pt = float(cost.tps(r_pt, 1.0))
            tps_s = None if point_only else cost.tps(r_s, 1.0)
            base_s = None if point_only else cost.tps(b_s, 1.0)
        return tps_s, tps_pt, base_s, anchor

    def gains(self, cost, lam: dict) -> dict:
        """Point gain (TPS) of every candidate."""
        out = {}
        for i in self.candidates:
            _, tps_pt, _, anchor = self._tps(i, cost, lam, True)
            out[i] = tps_pt - anchor
        return out

    def _sized(self, i: int, g: float) -> bool:
        """The verdict of candidate ``i`` were its point gain ``g``: the run's own gain draws
        shifted by ``g - g_v`` (one assurance-planner call)."""
        from planner.decide.draft.worth import worth_a_run

        if i not in self._draws:
            tps_s, tps_pt, base_s, anchor = self._tps(i, self.cost, {}, False)
            if i in self.widen:
                tps_s = tps_s * self.widen[i]
            self._draws[i] = (tps_s - base_s, tps_pt - anchor, anchor)
        d, g_v, anchor = self._draws[i]
        self.calls += 1
        if _TRACE is not None:
            _TRACE.append((self.labels[i], g))
        w = worth_a_run(d + (g - g_v), self.sigma_at(anchor), point=g, baseline_tps=anchor,
                        prior=self.prior, cost=self.run_cost, cap=self.run_cap,
                        seed=self.seed, noise_draws=self.noise_draws)
        return bool(w["worth"])

    def threshold(self, i: int, g_need: float) -> float:
        """The smallest point gain of candidate ``i`` that is worth a run (the gain the
        assurance planner confirms within the run cap, given this projection's spread),
        bracketed by :data:`FLIP_ITERS` halvings (one sizing call each, plus one at ``g_need``
        when the run's own verdict does not bound it); +inf when even ``g_need`` is not.
        Found once per policy: every constant moves the verdict through the gain."""
        if i in self._thr and (self._thr[i] < float("inf") or g_need <= self._thr_hi[i]):
            return self._thr[i]
        worth_v, g_v = (self.at_value or {}).get(i, (False, 0.0))
        lo, hi = 0.0, None
        if worth_v and g_v > 0:
            hi = g_v
        elif g_v > 0:
            lo = g_v
        if hi is None:
            if g_need <= lo or not self._sized(i, g_need):
                self._thr[i], self._thr_hi[i] = float("inf"), max(g_need, lo)
                return self._thr[i]
            hi = g_need
        for _ in range(FLIP_ITERS):
            m = 0.5 * (lo + hi)
            if self._sized(i, m):
                hi = m
            else:
                lo = m
        self._thr[i], self._thr_hi[i] = 0.5 * (lo + hi), hi
        return self._thr[i]

    def decide(self, g: dict) -> tuple:
        """(worth, label) from the candidates' point gains: the best one whose gain reaches
        its :meth:`threshold`, among the :data:`SIZED` largest positive gains (the
        headline's rule: the verdict of the policy with the largest gain)."""
        ref = self.at_value or {}
        for i in sorted((i for i in g if g[i] > 0), key=lambda i: -g[i])[:SIZED]:
            if i in ref:  # the run's own verdict bounds it: no sizing needed
                worth_v, g_v = ref[i]
                tol = 1e-9 * max(1.0, abs(g_v))  # re-priced gains at the run's constants
                if worth_v and g[i] >= g_v - tol:
                    return True, self.labels[i]
                if not worth_v and g[i] <= g_v + tol:
                    continue
            if g[i] >= self.threshold(i, g[i]):
                return True, self.labels[i]
        return False, None

    def conclude(self, cost, lam: dict) -> tuple:
        """(worth, label of the policy that is worth it or None, best point gain)."""
        g = self.gains(cost, lam)
        return (*self.decide(g), max(g.values()) if g else float("-inf"))


def _words(worth: bool, label: str | None) -> str:
    return f"worth a run ({label})" if worth else "not worth a run"


def _scan(proj: Projection, make: Callable, lo: float, v: float, hi: float, at_v: tuple):
    """Flip point of the conclusion over [lo, hi] (``make(x)`` -> (cost, lam)); None when
    the ends agree with the value. Returns (flip or None, conclusion at lo, at hi). The
    bisection reads point gains against each policy's :meth:`Projection.threshold`, so it
    costs no sizing call beyond the thresholds'."""
    ends = {e: (at_v if e == v else proj.conclude(*make(e))) for e in (lo, hi)}
    flip = None
    for e in (lo, hi):
        if ends[e][0] == at_v[0]:
            continue
        a, b = (e, v) if ends[e][0] else (v, e)  # a: worth side
        for _ in range(40):
            m = 0.5 * (a + b)
            if proj.decide(proj.gains(*make(m)))[0]:
                a = m
            else:
                b = m
        flip = 0.5 * (a + b)
    return flip, ends[lo], ends[hi]


def rests_on(proj: Projection, *, at_v: tuple, acceptance: dict, cost_name: str,
             anchor_source: str) -> list[RestsOn]:
    """The ``rests_on`` entries of a draft result (see the module docstring).

    Parameters
    ----------
    proj : Projection
    at_v : tuple
        (worth, label) of the run itself.
    acceptance : dict
        The result's ``acceptance`` entry (its ``stack``).
    cost_name : str
        The cost model's name (profile).
    anchor_source : str
        Where the TPS anchor comes from (words).

    Returns
    -------
    list of RestsOn
    """
    from models.drafting.cost import PROFILES, load_cost_model

    out: list[RestsOn] = []
    concl = _words(*at_v[:2])
    if proj.withheld:
        return _withheld(proj, acceptance, cost_name, anchor_source)
    syncs = any(proj.rep.sums[i].sync for i in range(len(proj.labels)))
    stoch = bool(proj.ks)
    for fld, label, (lo, hi), unit, src in NUMERIC:
        v = float(getattr(proj.cost, fld))
        lo, hi = min(lo, v), max(hi, v)
        enters = {"sync_factor": syncs, "drafter_per_token_ms": stoch}.get(fld, True)
        if not enters or proj.withheld or not proj.candidates:
            why = ("no policy here is synchronous" if fld == "sync_factor" else
                   "no policy here drafts with the MTP head") if not enters else concl
            out.append(RestsOn(fld, v, lo, hi, unit, src, None, concl,
                               f"does not decide it: {why}"))
            continue

        def make(x, fld=fld):
            return proj.cost.__class__(**{**_fields(proj.cost), fld: x}), {}

        flip, c_lo, c_hi = _scan(proj, make, lo, v, hi, at_v)
        if flip is None:
            note = f"{concl} over the whole range [{lo:g}, {hi:g}] {unit}"
        else:
            w_low = c_lo[0]
            lab = c_lo[1] if w_low else c_hi[1]
            note = (f"worth a run ({lab}) if the {label} is {'below' if w_low else 'above'} "
                    f"{_num(flip)}" + ("" if unit.startswith("x") else f" {unit}")
                    + f"; {concl} at {v:g}")
        out.append(RestsOn(fld, v, lo, hi, unit, src, None if flip is None else
                           round(flip, 4), concl, note,
                           {"at_low": _words(*c_lo[:2]), "at_high": _words(*c_hi[:2])}))
    # the cost profile: each shipped profile's constants, same staircase
    alts = {}
    base_name = str(cost_name).split("+")[0]
    for prof in PROFILES:
        if prof == base_name or proj.withheld or not proj.candidates:
            continue
        other = load_cost_model(prof)
        if other.staircase_rel != proj.cost.staircase_rel:
            continue
        c2 = proj.cost.__class__(**{**_fields(proj.cost), **{
            k: getattr(other, k) for k in ("verify_base_ms", "verify_per_row_ms",
                                           "drafter_per_token_ms", "host_ms")}})
        alts[prof] = _words(*proj.conclude(c2, {})[:2])
    flips = [p for p, c in alts.items() if c.split(" (")[0] != concl.split(" (")[0]]
    out.append(RestsOn(
        "cost_profile", str(cost_name), None, None, "",
        "models/data/forward_cost.json (forward_cost.md s1-s3): each profile's verify, "
        "drafter and host constants (the sync factor is its own entry)", None, concl,
        (f"{concl}; under profile {', '.join(flips)}: {alts[flips[0]]}" if flips else
         f"{concl} under every shipped cost profile") if alts else
        f"{concl} (no other profile compared)", alts or None))
    out.append(_acceptance_entry(proj, acceptance, concl))
    out.append(_prompt_set_entry(proj, acceptance, concl, at_v))
    anchor = proj.baseline_tps
    out.append(RestsOn(
        "tps_anchor", "model" if anchor is None else float(anchor),
        None if anchor is None else float(anchor) * 0.95,
        None if anchor is None else float(anchor) * 1.05, "TPS", anchor_source, None, concl,
        f"{concl} at any anchor: it scales every TPS figure, and the verdict reads the gain "
        "relative to it (the sizing works on the log scale)"))
    return out


def _withheld(proj: Projection, acceptance: dict, cost_name: str,
              anchor_source: str) -> list[RestsOn]:
    """The entries of a result whose verdict is withheld (too little evidence): each
    constant with its value, range and source, not evaluated."""
    concl, note = ("too little evidence", "not evaluated: the verdict is withheld (too little "
                   "evidence)")
    out = [RestsOn(f, float(getattr(proj.cost, f)), min(lo, float(getattr(proj.cost, f))),
                   max(hi, float(getattr(proj.cost, f))), unit, src, None, concl, note)
           for f, _, (lo, hi), unit, src in NUMERIC]
    st = acceptance.get("stack") or {}
    out += [RestsOn("cost_profile", str(cost_name), None, None, "",
                    "models/data/forward_cost.json", None, concl, note),
            RestsOn("acceptance_curve", st.get("record") or str(acceptance.get("source")),
                    None, None, "", "models/data/mtp_acceptance.json; " + str(st.get("note", "")),
                    None, concl, note),
            RestsOn("prompt_set_model", str(acceptance.get("model")), None, None, "",
                    "the content model, or the measured per-prompt counters", None, concl,
                    note),
            RestsOn("tps_anchor", "model" if proj.baseline_tps is None
                    else float(proj.baseline_tps), None, None, "TPS", anchor_source, None,
                    concl, note)]
    return out


def _num(x: float) -> str:
    """A flip point as the notes print it (3 decimals from 1 up, else 3 significant)."""
    return f"{x:.3f}" if abs(x) >= 1 else f"{x:.3g}"


def _fields(cost) -> dict:
    from dataclasses import fields

    return {f.name: getattr(cost, f.name) for f in fields(cost)}


def _lams(proj: Projection, stack_tpf: dict) -> dict:
    """Per stochastic run, the MTP accepted-token scale of a stack: ``(tpf' - 1) / (tpf -
    1)`` at the run's K (``stack_tpf``: K -> tokens/forward of that stack)."""
    cv = np.asarray(proj.curve, float)
    return {i: (stack_tpf[k] - 1.0) / float(cv[:k].sum()) for i, k in proj.ks.items()}


def _acceptance_entry(proj: Projection, acceptance: dict, concl: str) -> RestsOn:
    from models.drafting.acceptance_stacks import stack_spread

    st = acceptance.get("stack") or {}
    value = st.get("record") or str(acceptance.get("source", "curve"))
    src = ("models/data/mtp_acceptance.json: the shipped stacks' P128 curves at each "
           "policy's K; " + str(st.get("note", "")))
    if not proj.ks or proj.withheld or not proj.candidates:
        return RestsOn("acceptance_curve", value, None, None, "", src, None, concl,
                       "does not decide it: no MTP-based policy" if not proj.ks else concl)
    cv = np.asarray(proj.curve, float)
    per_k = {k: stack_spread(k, 1.0 + float(cv[:k].sum()))["stacks"]
             for k in set(proj.ks.values())}
    common = set.intersection(*(set(s) for s in per_k.values()))
    alts = {}
    for rec in sorted(common):
        lam = _lams(proj, {k: per_k[k][rec] for k in per_k})
        alts[rec] = _words(*proj.conclude(proj.cost, lam)[:2])
    flips = [r for r, c in alts.items() if c.split(" (")[0] != concl.split(" (")[0]]
    note = (f"{concl} under every shipped stack's curve ({len(alts)})" if not flips else
            f"{concl} with {value}; {alts[flips[0]]} with {', '.join(flips)}")
    return RestsOn("acceptance_curve", value, None, None, "", src, None, concl,
                   note + " (first order: the MTP share of accepted tokens scaled)",
                   alts or None)


def _prompt_set_entry(proj: Projection, acceptance: dict, concl: str, at_v) -> RestsOn:
    model = acceptance.get("model") or "curve"
    if proj.content is None or not proj.ks or proj.withheld or not proj.candidates:
        return RestsOn("prompt_set_model", str(model), None, None, "",
                       "models/data/acceptance_*: the content model, or the measured "
                       "per-prompt counters", None, concl,
                       "does not decide it: no prompt-set shift is predicted (measured "
                       "counters or a plain curve)" if proj.content is None else concl)
    lo, hi = float(proj.content.ratio_low), float(proj.content.ratio_high)
    cv = np.asarray(proj.curve, float)

    def make(r):
        return proj.cost, {i: ((r * (1.0 + float(cv[:k].sum()))) - 1.0) / float(cv[:k].sum())
                           for i, k in proj.ks.items()}

    flip, c_lo, c_hi = _scan(proj, make, lo, 1.0, hi, at_v)
    note = (f"{concl} over the content model's 90 % interval of the set's tokens/forward "
            f"(x{lo:.3f} to x{hi:.3f})" if flip is None else
            f"worth a run if the new prompt set's tokens/forward is "
            f"{'below' if c_lo[0] else 'above'} x{flip:.3f} of the prediction; {concl} at it")
    return RestsOn("prompt_set_model", str(model), lo, hi, "x predicted tokens/forward",
                   "the content model's 90 % prediction interval (docs/drafting.md "
                   "'Prompt-set shift')", None if flip is None else round(flip, 4), concl,
                   note, {"at_low": _words(*c_lo[:2]), "at_high": _words(*c_hi[:2])})
