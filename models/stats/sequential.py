r"""Group-sequential plans: look after every batch of runs, stop when decisive or futile.

A sequential plan fixes a design at the cap (:func:`sequential_plan`) and a list of looks
(how many instances of each type have been run at look :math:`j`). At every look the
analysis of :mod:`models.stats.assurance` labels the data so far with the decision rule at a
per-look HDI mass :math:`h` (:mod:`models.stats.decision`); an experiment stops at the first
decisive label, or as *futile* when the predictive chance that the analysis at the cap is
decisive falls below ``futility``. With the current posterior :math:`N(m, s^2)` of Δ
after :math:`n` runs per arm and :math:`n_{\max}` at the cap, the final posterior SD is
about :math:`s_f = s\sqrt{n / n_{\max}}` and the final mean is predicted as
:math:`N(m, \omega^2)`, :math:`\omega^2 = s^2 - s_f^2`; with :math:`z = \Phi^{-1}((1+h)/2)`
(superiority: :math:`\Phi^{-1}(\ell)`) the chance of a decisive call is

.. math::

    \Phi\Big(\frac{m - r - z s_f}{\omega}\Big)
    + \Phi\Big(\frac{-r - z s_f - m}{\omega}\Big)
    + \Big[\Phi\Big(\frac{c - m}{\omega}\Big) - \Phi\Big(\frac{-c - m}{\omega}\Big)\Big]_{c = r - z s_f > 0}

(B better, A better, equivalent; superiority keeps the first term only). Optional
stopping inflates the false-claim rate at Δ = 0, which the simulations report; a larger
per-look HDI mass repairs it. Every per-look mass of :func:`evaluate_sequential_levels`
shares the simulated data and each dataset's posterior.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from models.stats.assurance import (Adaptive, Truth, _build, _chunk_for, _coherent_errors, _Draws,
                                    _memo_key, _prefix_ends, _rate, planned_sign)
from models.stats.assurance_analysis import (Decisions, _analysis, analysis_grid,
                                             decide_analysis_levels)
from models.stats.decision import A_BETTER, B_BETTER, EQUIVALENT, UNDECIDED, target_labels
from models.stats.designs import Existing, InstanceType, Layout
from models.stats.noise import NoisePrior

__all__ = ["SequentialResult", "evaluate_sequential", "evaluate_sequential_levels",
           "sequential_plan"]


@dataclass
class SequentialResult:
    """A group-sequential plan: looks after every batch, stop when decisive or futile.

    ``expected_runs_per_arm``: mean runs per arm actually used; ``stop_fractions``: fraction
    of experiments stopped at each look (decisive or futile); ``false_claim_rate``: decisive
    directional claims at Δ = 0 under optional stopping (the honest rate of the plan).
    """

    assurance: float
    assurance_se: float
    false_claim_rate: float
    false_claim_se: float
    wrong_sign_rate: float | None
    expected_runs_per_arm: float
    expected_instances: float
    runs_per_arm_at_stop: np.ndarray = field(repr=False)
    instances_at_stop: np.ndarray = field(repr=False)
    hdi_prob: float = 0.95
    futility: float = 0.01
    sims: int = 0


def _futile(dec: Decisions, n_now: float, n_cap: float, rope: float, hdi_prob: float,
            rule: str, level: float, thresh: float) -> np.ndarray:
    """Predictive chance (Normal approximation) that the analysis at the cap is decisive is
    below ``thresh``: the remaining budget cannot change the verdict.

    The chance is B better + A better + equivalent, added in that order; the first two are
    Normal CDF values (>= 0), so a dataset whose B-better term already reaches ``thresh`` is
    not futile whatever follows (adding a nonnegative float never lowers a sum), and the
    later terms are only computed for the others, the equivalence term only where it is
    not zero. The result is the one of computing every term for every dataset.
    """
    from scipy.special import ndtr, ndtri

    if n_now >= n_cap:
        return np.ones(dec.mean.shape, bool)
    s_now = dec.sd
    s_fin = s_now * math.sqrt(n_now / n_cap)
    om = np.sqrt(np.maximum(s_now ** 2 - s_fin ** 2, 1e-300))
    zq = float(ndtri(0.5 + hdi_prob / 2.0)) if rule != "superiority" else float(ndtri(level))
    m = dec.mean
    p = ndtr((m - rope - zq * s_fin) / om)
    if rule != "superiority":
        i = np.flatnonzero(p < thresh)
        if i.size:
            m, s_fin, om = m[i], s_fin[i], om[i]
            q = p[i] + ndtr((-rope - zq * s_fin - m) / om)
            half = rope - zq * s_fin
            k = np.flatnonzero(half > 0)
            if k.size:
                hk, mk, ok = half[k], m[k], om[k]
                q[k] = q[k] + (ndtr((hk - mk) / ok) - ndtr((-hk - mk) / ok))
            p[i] = q
    return p < thresh


def evaluate_sequential(full: Layout, looks: Sequence[Sequence[int]], prior: NoisePrior,
                        truth: Truth, rope: float, *, rule: str = "verdict", level: float = 0.95,
                        hdi_prob: float = 0.95, futility: float = 0.01, seed: int = 0,
                        existing: Existing | None = None, error_rates: bool = True,
                        progress: Callable[[int], None] | None = None) -> SequentialResult:
    """Simulate a sequential plan.

    Parameters
    ----------
    full : Layout
        The design at the cap.
    looks : sequence of sequences of int
        For each look, the number of instances of each type of ``full`` analysed so far
        (increasing; the last is ``full``'s counts).
    futility : float
        Stop (undecided) when the predictive chance of a decisive call at the cap is below
        this (Normal approximation of the future posterior).
    hdi_prob : float
        Per-look HDI mass (0.95 = the verdict rule at every look; larger is stricter).

    Returns
    -------
    SequentialResult
    """
    return evaluate_sequential_levels(full, looks, prior, truth, rope, (hdi_prob,), rule=rule,
                                      level=level, futility=futility, seed=seed,
                                      existing=existing, error_rates=error_rates,
                                      progress=progress)[0]


def evaluate_sequential_levels(full: Layout, looks: Sequence[Sequence[int]], prior: NoisePrior,
                               truth: Truth, rope: float, hdi_probs: Sequence[float], *,
                               rule: str = "verdict", level: float = 0.95,
                               futility: float = 0.01, seed: int = 0,
                               existing: Existing | None = None, error_rates: bool = True,
                               until_false_claim: float | None = None,
                               until_false_claim_se: float = 0.0,
                               progress: Callable[[int], None] | None = None,
                               adaptive: Adaptive | None = None, memo: dict | None = None
                               ) -> list[SequentialResult]:
    """:func:`evaluate_sequential` at several per-look HDI masses, sharing the simulated data
    and each dataset's posterior between the masses (one pass per scenario).

    Every mass gets exactly the result of its own :func:`evaluate_sequential` call (same
    seeds, same data; each mass keeps its own set of experiments still running).

    Parameters
    ----------
    hdi_probs : sequence of float
        Per-look HDI masses, in the order they would be tried.
    until_false_claim : float, optional
        Only the masses up to the first whose false-claim rate is not above this are needed:
        the false-claim scenario is simulated for all masses, the others only for those.
    until_false_claim_se : float
        Monte-Carlo tolerance of that test in standard errors: a rate is "above" when it
        exceeds ``until_false_claim`` by more than this many of its binomial SEs (0 = strict).
    adaptive : Adaptive, optional
        Without existing runs: the false-claim scenario stops at the first prefix of its
        experiments where every mass up to the first one under ``adaptive.false_claim_limit``
        is decided (:meth:`Adaptive.false_claim_side`), and the wrong-sign scenario (only
        reported) at the first prefix; the assurance scenario, which gives the expected runs
        and costs, simulates all of ``truth`` unless every mass's assurance is surely below
        every goal of ``adaptive`` (such a plan is never the one chosen). Tolerance as
        :class:`Adaptive`.
    memo : dict, optional
        As :func:`models.stats.assurance.evaluate_fixed`'s: each mass's labels and stopping looks
        of a scenario labelled before (on a prefix or in full, e.g. by the adaptive pass
        before the recommended plan is simulated in full) are continued, not simulated
        again; the results are those without ``memo``.

    Returns
    -------
    list of SequentialResult, one per needed mass (all masses when ``until_false_claim`` is
    None).
    """
    hps = [float(h) for h in hdi_probs]
    n_old = existing.n_runs if existing is not None else 0
    tg, sg, _, _ = analysis_grid(prior, full.n_runs + n_old)
    analyses = [_analysis(full.prefix(c), prior, tg, sg, existing) for c in looks]
    n_arm = [full.prefix(c).n_a for c in looks]
    n_inst = [full.prefix(c).n_instances for c in looks]
    chunk = _chunk_for(tg.size, full.n_runs)
    nl = len(looks)

    def block(ys, levels: list[float]) -> tuple[np.ndarray, np.ndarray]:
        L = len(levels)
        D = ys[0].shape[0]
        alive = np.ones((L, D), bool)          # per mass: experiment still running
        lab = np.zeros((L, D), np.int8)
        stp = np.full((L, D), nl - 1)
        for j, (an, c) in enumerate(zip(analyses, looks)):
            rows = np.flatnonzero(alive.any(0))
            if rows.size == 0:
                break
            ysub = [y[rows] for y in ys]
            z, zq = an.stats(ysub, c)
            act = alive[:, rows]
            decs = decide_analysis_levels(an, z, zq, rope, levels, act, rule=rule,
                                          level=level, exact_probs=False)
            for li, (dec, hp) in enumerate(zip(decs, levels)):
                a = act[li]
                rl = rows[a]
                labs = dec.labels[a]
                done = labs != UNDECIDED
                lab[li, rl[done]] = labs[done]
                if j < nl - 1:
                    u = np.flatnonzero(~done)        # futility only matters when undecided
                    sub = Decisions(labs[u], dec.p_gt[a][u], dec.p_lt[a][u], dec.mean[a][u],
                                    dec.sd[a][u])
                    stop = done.copy()
                    stop[u] = _futile(sub, n_arm[j], n_arm[-1], rope, hp, rule, level,
                                      futility)
                else:
                    stop = np.ones(rl.size, bool)
                stp[li, rl[stop]] = j
                alive[li, rl[stop]] = False
        return lab, stp

    mk = None if memo is None else _memo_key(
        memo, truth, prior, existing, full, tg, sg, tuple(tuple(int(x) for x in c)
                                                          for c in looks),
        rope, rule, level, futility, seed, chunk)

    def run(tr: Truth, rng, levels: list[float], report: bool = True, stop=None,
            tag: str = "") -> tuple[np.ndarray, np.ndarray]:
        """Labels and stopping looks (L, D); ``stop(labels so far)``: end at the first
        prefix (of ``adaptive.first``, doubling) where it is true (same experiments).
        Rows labelled before at every mass (``memo``, scenario ``tag``) are reused."""
        L = len(levels)
        labels = np.zeros((L, tr.size), np.int8)
        stop_look = np.full((L, tr.size), nl - 1)
        mem = None if mk is None else memo.setdefault(mk + (tag,), {})
        done = tr.size
        for li, hp in enumerate(levels):   # rows known at every mass
            got = mem.get(hp) if mem is not None else None
            k = 0 if got is None else got[0]
            if k:
                labels[li, :k], stop_look[li, :k] = got[1][:k], got[2][:k]
            done = min(done, k)

        def keep(upto: int) -> None:
            if mem is None:
                return
            for li, hp in enumerate(levels):
                if mem.get(hp, (0,))[0] < upto:
                    mem[hp] = (upto, labels[li], stop_look[li])

        ends = _prefix_ends(tr.size, adaptive.first) if stop is not None else [tr.size]
        for e in ends:
            if e > done:
                break
            if e >= tr.size:
                return labels, stop_look
            if stop is not None and stop(labels[:, :e]):
                return labels[:, :e], stop_look[:, :e]
        for s in range(0, tr.size, chunk):
            sl = slice(s, s + chunk)
            t = tr.take(sl)
            draws = _Draws(full, t.size, rng)
            if s + t.size <= done:
                draws.finish()
                continue
            lo = max(done - s, 0)
            for e in [x - s for x in ends if s < x <= s + t.size] + [t.size]:
                if e <= lo:
                    continue
                lab, stp = block(_build(full, t, draws.upto(e), slice(lo, e)), levels)
                labels[:, s + lo:s + e] = lab
                stop_look[:, s + lo:s + e] = stp
                if progress is not None and report:
                    progress((e - lo) * L)
                lo = e
                keep(s + e)
                if stop is not None and s + e < tr.size and s + e in ends and \
                        stop(labels[:, :s + e]):
                    return labels[:, :s + e], stop_look[:, :s + e]
            draws.finish()
        return labels, stop_look

    tgt = target_labels(truth.delta, rope, rule)
    sgn = planned_sign(truth)
    fcs: list[tuple[float, float]] = []
    need = hps
    ad = adaptive if existing is None else None
    if error_rates and existing is None:
        def claims(l):
            return (l == EQUIVALENT) if rule == "equivalence" else \
                (l == B_BETTER) | (l == A_BETTER)

        fstop = None
        if ad is not None and ad.false_claim_limit is not None:
            def fstop(l0):
                # decided when the masses tried in order are surely over the limit up to
                # one surely under it (or all surely over)
                for l in l0:
                    side = ad.false_claim_side(claims(l), truth.size)
                    if side <= 0:
                        return side < 0
                return True
        d0 = rope if rule == "equivalence" else 0.0
        l0, _ = run(truth.with_delta(d0), np.random.default_rng([seed, 12]), hps, False, fstop,
                    "null")
        fcs = [_rate(claims(l)) for l in l0]
        if until_false_claim is not None:
            k = next((i for i, (fc, fse) in enumerate(fcs)
                      if not fc > until_false_claim + until_false_claim_se * fse + 1e-12),
                     len(hps) - 1)
            need = hps[:k + 1]
        if progress is not None:       # count the experiments of the masses reported
            progress(l0.shape[1] * len(need))
    astop = None
    if ad is not None and ad.goals:
        def astop(lab):
            # every mass's assurance surely below every goal: the plan cannot be chosen, so
            # its rates and expected runs from this prefix are enough
            t = tgt[:lab.shape[1]]
            return all(ad.rate_decided(l == t) and np.mean(l == t) < min(ad.goals)
                       for l in lab)
    lab, stop = run(truth, np.random.default_rng([seed, 11]), need, True, astop, "assurance")
    wss: list = [None] * len(need)
    if error_rates and existing is None and rule != "equivalence":
        # the wrong-sign rate is only reported: with ``adaptive``, the first prefix
        l1, _ = run(truth.with_delta(-truth.delta), np.random.default_rng([seed, 13]), need,
                    True, (lambda l: True) if ad is not None else None, "minus")
        wss = [float(np.mean(l == (B_BETTER if sgn > 0 else A_BETTER))) for l in l1]
    out = []
    for i, hp in enumerate(need):
        assur, ase = _rate(lab[i] == tgt[:lab.shape[1]])
        runs = np.asarray(n_arm)[stop[i]]
        inst = np.asarray(n_inst)[stop[i]]
        fc = fse = float("nan")
        ws = None
        if error_rates and existing is not None:
            fc, fse, ws = _coherent_errors(lab[i], truth.delta, tgt)
        elif error_rates:
            fc, fse = fcs[i]
            ws = wss[i]
        out.append(SequentialResult(assur, ase, fc, fse, ws, float(runs.mean()),
                                    float(inst.mean()), runs, inst, hp, futility, lab.shape[1]))
    if until_false_claim is not None and existing is not None and error_rates:
        k = next((i for i, r in enumerate(out) if not r.false_claim_rate > until_false_claim
                  + until_false_claim_se * r.false_claim_se + 1e-12),
                 len(out) - 1)
        out = out[:k + 1]
    return out


def sequential_plan(base: str, batch: int, cap: int, runs_per_instance: int = 1
                    ) -> tuple[Layout, list[list[int]]]:
    """Layout at the cap and the per-look instance counts of a sequential plan.

    Parameters
    ----------
    base : {"separate", "paired"}
        ``separate``: each batch adds ``batch`` runs per arm on new instances
        (``runs_per_instance`` runs of one config each); ``paired``: each batch is one new
        instance with ``batch`` interleaved pairs.
    batch, cap : int
        Runs per arm per batch, and the cap on runs per arm (rounded down to whole batches).
    """
    nb = max(1, cap // batch)
    if base == "paired":
        full = Layout((InstanceType(nb, batch, batch),))
        return full, [[j] for j in range(1, nb + 1)]
    r = min(runs_per_instance, batch)
    if batch % r:
        raise ValueError("batch must be a multiple of runs_per_instance")
    per = batch // r
    full = Layout((InstanceType(nb * per, r, 0), InstanceType(nb * per, 0, r)))
    return full, [[j * per, j * per] for j in range(1, nb + 1)]
