"""The verdict's "to settle" advice: the runs per arm that ``planner repeats --runs`` recommends
adding to an undecided comparison, and the Normal screen that skips the simulation when even
:data:`SETTLE_MAX_RUNS` more separate runs cannot settle it.

The advice is :func:`planner.decide.repeats.plan_from` of the verdict's own comparison (the
same runs, cold flags and posterior), with :data:`SETTLE_SIMS` simulations, at most
:data:`SETTLE_MAX_RUNS` runs per arm, target :data:`planner.defaults.DEFAULT_ASSURANCE`
and the designs :func:`settle_designs` allows: ``planner repeats --runs FILE --a A --b B
--sims 200 --max-runs 100 --design separate,paired`` gives the same recommendation.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from planner.decide.rope import Rope
from planner.errors import InputError
from planner.results.counts import count, plural

__all__ = ["SETTLE_SIMS", "SETTLE_MAX_RUNS", "SETTLE_SCREEN_MARGIN", "paired_allowed",
           "settle_designs", "settle_range", "settle_screen", "to_settle"]


#: Simulated experiments per design and the largest number of runs per arm to add when the
#: verdict sizes its "to settle" advice with the assurance planner: 200 sims (the planner's
#: minimum is 100; Monte Carlo SE of an assurance near 0.8 about 0.03) keep ``planner
#: verdict`` within about two seconds of its old run time.
SETTLE_SIMS = 200
SETTLE_MAX_RUNS = 100


#: The "to settle" screen (:func:`settle_screen`): the simulation is skipped, and the verdict
#: says "more than :data:`SETTLE_MAX_RUNS` runs per arm" (``over_cap``), when the known-noise
#: Normal approximation of the assurance of :data:`SETTLE_MAX_RUNS` more runs per arm is below
#: the target by more than this margin. Tolerance (``tests/planner/decide/test_verdict_speed.py``):
#: where the screen fires, the simulation finds no design below the cap, one within 10 % of
#: it, or the cap's own assurance is within two Monte Carlo SEs (of the 200-simulation
#: planner) of the target, so "more than 100 runs" and the simulated number are the same
#: advice up to the planner's own noise. On a held-out grid of 336 undecided cases (quick
#: forms of 1-6 runs per arm, four noise priors, paired and not, ROPE 0.1 % and 0.5 %, and
#: pairs of configs of the shipped table; ``docs/speed.md``) the screen fired in 208; the
#: simulation said ``over_cap`` in 205 of them and 64, 98 and 99 runs per arm in the other
#: three, all with the screen at 0.785-0.80 (on the boundary). The approximation ignores the
#: noise scales' uncertainty, which makes it optimistic away from the boundary.
SETTLE_SCREEN_MARGIN = 0.0


#: Grid points x quadrature nodes from which :func:`settle_screen` sums in a compiled loop
#: (:func:`models.kernels.screen.screen_sum`, numba; each term NumPy's, the sum to
#: rounding): the 264,638 points x 48 nodes of a table with sessions and four cold groups
#: took 1.2 s in NumPy, 0.5 s compiled; a quick form's screen (~1e4 points) imports no numba.
SCREEN_COMPILED_MIN = 1 << 20


#: Posterior mass of the lightest grid points :func:`settle_screen` leaves out: 1e-3, so its
#: assurance moves by less than 1e-3, against the 0.03 Monte Carlo SE of the 200-simulation
#: planner it screens for (:data:`SETTLE_SIMS`). On the 265,138-point posterior of a table with
#: sessions and four cold groups (``SESSIONS`` of ``bench/bench_process.py``) 83,778 points
#: hold the rest: the screen went from 0.38 to 0.18 s CPU.
SCREEN_DROP_MASS = 1e-3


def settle_screen(post, rope_log: float, n: Sequence[int], *, hdi_prob: float = 0.95,
                  nodes: int = 96) -> np.ndarray:
    r"""Normal approximation of the assurance of adding ``n`` runs per arm on new instances.

    Each grid point :math:`g` of the exact posterior of the existing runs (no cold column) is
    a truth :math:`(\tau_g, \sigma_g)` with :math:`(\mu_A, \mu_B) \sim N(M_g, C_g)`. The new
    runs give arm means :math:`\bar y \sim N(\mu, s^2/n\,I)`, :math:`s^2 = \tau_g^2 +
    \sigma_g^2`; analysed with the noise known, :math:`\Delta \mid y \sim N(m_f, v_f)`,
    :math:`v_f = c^T(C_g^{-1} + n/s^2 I)^{-1}c`, and :math:`(\Delta, m_f)` is bivariate
    Normal. A design reaches the label the true Δ deserves (:func:`models.stats.decision.
    target_labels`) when the 95 % interval :math:`m_f \pm z\sqrt{v_f}` clears the ROPE the
    right way; that probability is integrated over Δ on ``nodes`` points within ±8 SD and
    over the grid weights. It ignores the uncertainty of the noise scales, which widens the
    real analysis' intervals, so it is an optimistic screen for
    :func:`planner.decide.repeats.plan_from` (separate design, one run per new instance).

    Parameters
    ----------
    post : models.stats.tps_exact.GridPosterior
        Exact fit of the runs already bought (configs 0 = A, 1 = B first).
    rope_log : float
        ROPE half-width, log scale (>= 0).
    n : sequence of int, length N
        Runs per arm to add (>= 1).
    hdi_prob : float
        Interval mass of the verdict rule.
    nodes : int
        Quadrature points over Δ per grid point.

    Returns
    -------
    ndarray, shape (N,)
        Approximate assurance of each design, in [0, 1].
    """
    from models.stats.special import ndtr, ndtri

    w = np.asarray(post.w, float)
    order = np.argsort(w)[::-1]
    k = int(np.searchsorted(np.cumsum(w[order]), (1.0 - SCREEN_DROP_MASS) * w.sum())) + 1
    idx = order[:k]
    w = w[idx] / w[idx].sum()
    M = post.mean[idx, :2]
    C = post.cov[idx, :2, :2]
    s2 = post.tau[idx] ** 2 + post.sigma[idx] ** 2
    a11, a12, a22 = C[:, 0, 0], C[:, 0, 1], C[:, 1, 1]
    det = a11 * a22 - a12 * a12
    ci11, ci12, ci22 = a22 / det, -a12 / det, a11 / det                 # C^-1, (G,)
    mean_d = M[:, 1] - M[:, 0]
    var_d = a11 + a22 - 2.0 * a12
    sd_d = np.sqrt(var_d)
    x = np.linspace(-8.0, 8.0, int(nodes))
    px = np.exp(-0.5 * x * x)
    px /= px.sum()
    compiled = w.size * x.size >= SCREEN_COMPILED_MIN
    if not compiled:
        dl = mean_d[:, None] + sd_d[:, None] * x[None, :]                # (G, Q) true Δ
        tgt_b, tgt_a = dl > rope_log, dl < -rope_log
    z = float(ndtri(0.5 + 0.5 * hdi_prob))
    out = np.empty(len(n))
    for j, nj in enumerate(n):
        a = float(nj) / s2                                               # (G,)
        p11, p12, p22 = ci11 + a, ci12, ci22 + a                         # P = C^-1 + a I
        dp = p11 * p22 - p12 * p12
        q11, q12, q22 = p22 / dp, -p12 / dp, p11 / dp                    # P^-1
        v_f = q11 + q22 - 2.0 * q12
        # c^T K with K = a P^-1, c = (-1, 1)
        k1, k2 = a * (q12 - q11), a * (q22 - q12)
        cov_md = (k1 * a11 + k2 * a12) * -1.0 + (k1 * a12 + k2 * a22)   # c^T K C c
        var_m = (k1 * k1 * a11 + 2 * k1 * k2 * a12 + k2 * k2 * a22) + (k1 * k1 + k2 * k2) / a
        beta = cov_md / var_d
        sr = np.sqrt(np.maximum(var_m - beta * cov_md, 1e-300))
        if compiled:
            from models.kernels.screen import screen_sum

            out[j] = screen_sum(w, mean_d, sd_d, beta, z * np.sqrt(v_f), sr, x, px,
                                float(rope_log))
            continue
        mu = mean_d[:, None] + beta[:, None] * (dl - mean_d[:, None])    # E[m_f | Δ]
        h = (z * np.sqrt(v_f))[:, None]
        s = sr[:, None]
        # each (grid point, true Δ) needs only the probability of its own target's label
        hs = np.broadcast_to(h, mu.shape)
        ss = np.broadcast_to(s, mu.shape)
        hit = np.empty(mu.shape)
        tgt_e = ~(tgt_b | tgt_a)
        hit[tgt_b] = ndtr((mu[tgt_b] - rope_log - hs[tgt_b]) / ss[tgt_b])
        hit[tgt_a] = ndtr((-rope_log - hs[tgt_a] - mu[tgt_a]) / ss[tgt_a])
        me, he, se = mu[tgt_e], hs[tgt_e], ss[tgt_e]
        hit[tgt_e] = np.maximum(ndtr((rope_log - he - me) / se) - ndtr((-rope_log + he - me) / se),
                                0.0)
        out[j] = float(np.sum(w * (hit @ px)))
    return np.clip(out, 0.0, 1.0)



def paired_allowed(platform: str | None, prior_named: bool, prior=None) -> bool:
    """Whether paired designs may be planned: not under the ``published-n4`` prior (chosen
    for its platform, or given as the prior itself), which only knows the total scale and
    pins the within-allocation sigma near 0, so that a paired design would look free of
    noise. ``prior_named``: the user named the prior (a file or a platform), which then says
    what it knows."""
    from planner.io.platforms import platform_key
    from planner.io.platforms import PLATFORM_ALIASES

    if prior_named:
        return True
    if prior is not None and getattr(prior, "name", "") == "published-n4":
        return False
    key = platform_key(platform) if platform else None
    return PLATFORM_ALIASES.get(key or platform or "") != "published-n4"


def settle_designs(comp) -> tuple[str, ...]:
    """The fixed designs of the verdict's advice and of ``planner repeats --runs`` (one rule
    for both): separate and paired (new runs in A/B pairs on new instances) where
    :func:`paired_allowed`; separate only otherwise, except when the runs bought are paired
    themselves (then pairs only, as they were bought).

    When each arm's runs are read as one session on a machine of its own (machines unknown,
    :attr:`planner.decide.comparison.Comparison.sessions`), separate only: the
    between-instance term is then the offset between server sessions, which a pair of runs
    (two server sessions, one per config) does not cancel; planning pairs as if it did made
    the advice smaller the less was known (11 paired runs per arm without a platform, more
    than 100 separate ones on a known platform)."""
    from planner.decide.classical import paired_design

    if getattr(comp, "arm_sessions", False):
        return ("separate",)
    named = comp.choice is not None and getattr(comp.choice, "level", "") in ("file", "named")
    if paired_allowed(comp.platform, named, comp.prior):
        return ("separate", "paired")
    return ("paired",) if paired_design(comp.data()) else ("separate",)


def settle_range(rows, design: str, target: float, z: float = 2.0
                 ) -> tuple[int | None, int | None]:
    """The runs per arm the simulations cannot tell from the recommended number.

    Over the simulated rows of ``design`` (``planner repeats``' ``designs``: ``runs_per_arm``,
    ``assurance``, ``assurance_se``): the fewest runs whose assurance is within ``z`` Monte
    Carlo SEs below ``target`` or above it (fewer are short of it beyond the simulations'
    error), and the fewest whose assurance is above ``target`` by more than ``z`` SEs (None
    when no simulated number is: the advice then says "over" the largest simulated). Where
    the assurance rises slowly with the runs (a 0.03 SE
    over a curve rising 0.05 per 20 runs) the two ends lie far apart, and the advice says so
    instead of "a few runs either way".

    Returns
    -------
    (int or None, int or None)
        Low and high end (runs per arm); (None, None) when no row of ``design`` was simulated.
    """
    pts = sorted((int(r["runs_per_arm"]), float(r["assurance"]), float(r.get("assurance_se") or 0.0))
                 for r in rows if r.get("design") == design)
    lo = next((n for n, a, se in pts if a + z * se >= target), None)
    hi = next((n for n, a, se in pts if a - z * se >= target), None)
    return lo, hi


def to_settle(comp, rope: Rope, seed: int, screen_post=None,
              designs: tuple[str, ...] | None = None, run_word: str = "run"
              ) -> tuple[int | None, str, str]:
    """Runs per arm to add to an undecided verdict: ``planner repeats --runs``' recommendation.

    :func:`planner.decide.repeats.plan_from` of ``comp`` with the designs of
    :func:`settle_designs`, the verdict's rule and ROPE, target
    :data:`planner.defaults.DEFAULT_ASSURANCE` and the platform's cost model (the
    default platform's when it has none). With ``screen_post`` (the exact fit of the same
    runs) the separate design is not simulated when :func:`settle_screen` puts the
    assurance of :data:`SETTLE_MAX_RUNS` more separate runs per arm below the target by more
    than :data:`SETTLE_SCREEN_MARGIN` (it cannot be recommended); without another design the
    answer is then ``over_cap`` with no simulation. ``designs`` overrides
    :func:`settle_designs`. ``run_word`` names the runs to buy (``"warm run"`` when a
    config's only runs are cold first runs: the sized runs are simulated warm).

    Returns
    -------
    (int or None, str, str)
        Runs per arm to add (None beyond :data:`SETTLE_MAX_RUNS`), a code (``settle``,
        ``over_cap``) and the advice in words.
    """
    from planner.decide.costs import cost_model
    from planner.defaults import DEFAULT_ASSURANCE, DEFAULT_PLATFORM

    designs = settle_designs(comp) if designs is None else tuple(designs)
    planned = designs
    if screen_post is not None and "separate" in designs:
        rope_log = rope.log_halfwidth(screen_post.level(0))
        ap = float(settle_screen(screen_post, rope_log, [SETTLE_MAX_RUNS], nodes=48)[0])
        if ap < DEFAULT_ASSURANCE - SETTLE_SCREEN_MARGIN:
            designs = tuple(d for d in designs if d != "separate")
    how_all = "each on a new instance, or in A/B pairs" if len(planned) > 1 else \
        ("in A/B pairs on new instances" if designs == ("paired",) else "each on a new instance")
    over_cap = (None, "over_cap", f"more than {SETTLE_MAX_RUNS} more {plural(2, run_word)} per arm ({how_all}) "
                                  f"to reach assurance {DEFAULT_ASSURANCE:g} of a settled verdict")
    if not designs:
        return over_cap
    from planner.decide.repeats import plan_from  # numba kernels: only when needed

    platform = comp.platform
    try:
        cm = cost_model(platform or DEFAULT_PLATFORM)
        own_price = bool(platform)
    except InputError:  # a platform without a cost model: price it as the default one
        cm, own_price = cost_model(DEFAULT_PLATFORM), False
    plan = plan_from(comp, rope=rope, sims=SETTLE_SIMS, seed=seed, designs=designs,
                     post=screen_post,
                     max_runs=SETTLE_MAX_RUNS, target=DEFAULT_ASSURANCE, cost=cm,
                     search_beyond_cap=False).to_dict()
    rec = plan["recommended"]
    if rec is None:
        return over_cap
    n = int(rec["runs_per_arm"])
    how = (f"in A/B pairs on {count(int(rec['instances']), 'new instance')}"
           if rec["design"] == "paired"
           else "each on a new instance")
    price = (f"${rec['cost_usd']:.2f}" if cm.price_per_hour > 0 else
             f"{rec['gpu_hours']:.1f} GPU-h on owned hardware")
    where = cm.flavor if own_price else f"priced as {cm.flavor} (no cost model for " \
        f"{platform or 'an unnamed platform'})"
    lo, hi = settle_range(plan["designs"], rec["design"], DEFAULT_ASSURANCE)
    lo = n if lo is None else min(lo, n)
    last = max(int(r["runs_per_arm"]) for r in plan["designs"] if r["design"] == rec["design"])
    spread = ("so a few runs either way" if hi is not None and hi - lo <= max(2, n // 4)
              else f"within their error {lo} to {hi}" if hi is not None
              else f"within their error {lo} to over {last}")
    return n, "settle", (f"about {n} more {plural(n, run_word)} per arm ({how}, {where}, {price}; "
                         f"{SETTLE_SIMS} simulations, {spread}) settle the "
                         f"verdict with assurance "
                         f"{rec['assurance']:.2f} (planner repeats with these runs gives the "
                         "full table)")
