"""Is this delta real? The posterior verdict on config B vs config A.

The verdict fits the hierarchical TPS model (:mod:`models.stats.tps_model`) to the runs of A and B
with a noise prior, reads the posterior of Δ = μ_B − μ_A (log scale, reported in % and TPS)
against a region of practical equivalence (ROPE) and gives one of four labels:

* ``B better`` — the 95 % HDI of Δ lies wholly above +ROPE;
* ``A better`` — the 95 % HDI lies wholly below −ROPE;
* ``equivalent`` — the 95 % HDI lies inside (−ROPE, +ROPE);
* ``undecided`` — anything else, or an MCMC fit that failed its diagnostics.

A decisive label thus needs posterior probability ≥ 0.975 beyond the ROPE on that side, so a
calibrated model makes a wrong decisive call on an A/A comparison at most 5 % of the time
(checked on the shipped runs in ``tests/planner/decide/test_aa.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Sequence

import numpy as np

from models.stats.decision import LABELS, label_from
from models.stats.noise import WEAK, NoisePrior
from models.stats.posterior import Posterior
from models.stats.tps_model import COLD_MEAN_SLOW, COLD_P_NONE, TPSData, pct
from planner.decide.defaults import DEFAULT_ROPE, ZTEST_SIGMA_TPS
from planner.errors import InputError
from planner.io.rows import instance_key
from planner.io.table import RunsTable

__all__ = ["machines_unknown", "one_session_per_arm", "SESSION_NOTE", "SCHEMA", "DEFAULT_ROPE", "ZTEST_SIGMA", "LABELS", "Rope", "Verdict", "label_from",
           "build_data", "check_identifiable", "fit", "classical_tests", "verdict",
           "SETTLE_SIMS", "SETTLE_MAX_RUNS", "SETTLE_SCREEN_MARGIN", "settle_screen",
           "DIRECTIONS", "shown_label", "cold_runs", "cold_only_notes", "welch_t"]

SCHEMA = "spec-planner/verdict/1"

#: The reference script's noise, SD 1.16 TPS per run (:data:`planner.decide.defaults.ZTEST_SIGMA_TPS`).
ZTEST_SIGMA = ZTEST_SIGMA_TPS


@dataclass(frozen=True)
class Rope:
    """Region of practical equivalence, as given (``0.5%`` relative or ``1.5`` TPS)."""

    value: float
    relative: bool

    @classmethod
    def parse(cls, text: str | float) -> "Rope":
        """Read a ROPE as given: ``0.5%`` (relative) or ``1.5`` (TPS).

        The number is read by the one number grammar (:func:`planner.io._parse.to_float`:
        ``0_1%`` is refused) and checked against :data:`planner.io.limits.ROPE_PCT` (a relative
        ROPE, below 50 %) or :data:`planner.io.limits.ROPE_TPS` (an absolute one, which
        :meth:`check_level` also keeps below half the TPS level).

        Raises
        ------
        InputError
            Not a number or percentage, or outside its range (field ``rope``).
        """
        from planner.io._parse import to_float
        from planner.io.limits import check

        s = str(text).strip()
        rel = s.endswith("%")
        try:
            v = to_float(s[:-1] if rel else s)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"not a number or percentage: {text!r}", field="rope") from None
        if not math.isfinite(v):
            raise InputError(f"not a finite number: {text!r}", field="rope")
        if v < 0:
            raise InputError(f"must be >= 0, got {text!r}", field="rope")
        if rel and v >= 50:
            raise InputError(f"a ROPE of {v:g}% would call almost anything equivalent; "
                             "must be < 50%", field="rope")
        v = float(check("rope_pct" if rel else "rope_tps", v, field="rope"))
        return cls(v, rel)

    def check_level(self, level_tps: float, unit: str = "TPS") -> None:
        """Refuse an absolute ROPE of half the level or more (same bound as relative);
        ``unit`` is the values' unit (TPS, ms, s) for the message."""
        if not self.relative and self.value >= 0.5 * level_tps:
            what = "TPS level" if unit == "TPS" else "level"
            raise InputError(f"a ROPE of {self.value:g} {unit} is >= half the {what} "
                             f"({level_tps:.4g} {unit}); must be smaller", field="rope")

    def log_halfwidth(self, level_tps: float) -> float:
        """Half-width on the log scale at a TPS level."""
        return math.log1p(self.value / 100.0) if self.relative else math.log1p(self.value / level_tps)

    def describe(self) -> str:
        return f"±{self.value:g}%" if self.relative else f"±{self.value:g} TPS"


def build_data(table: RunsTable, a: str, b: str, *, use_cold: bool | None = None,
               lower_is_better: bool | None = None) -> TPSData:
    """Reduce the rows of configs A and B to :class:`TPSData` (log TPS, indices, cold flags).

    ``lower_is_better`` (default: inferred from the rows' metric, as
    :attr:`planner.io.runs.RunsTable.lower_is_better`) sets the cold column's sign: a cold run
    of a latency is *higher* (:attr:`models.stats.tps_model.TPSData.cold_sign`).

    Raises
    ------
    InputError
        A or B missing, A == B, or mixed metric / workload / platform among their rows.
    """
    if a == b:
        raise InputError("A and B name the same config", field="b")
    sub = table.measured().select([a, b])
    sub.check_homogeneous()
    sub.platform()
    order = [a, b]
    # positions, not list.index(run): that compared dataclasses field by field, O(n^2)
    # (10,000 runs per arm: 94 s)
    pos = sorted(range(len(sub.runs)), key=lambda k: order.index(sub.runs[k].config))
    runs = [sub.runs[k] for k in pos]
    cold = sub.cold_flags()[pos]
    inst = [instance_key(r, k) for k, r in enumerate(runs)]
    sess = [f"{r.instance}/{r.session or r.run_group}" for r in runs]
    lower = sub.lower_is_better if lower_is_better is None else bool(lower_is_better)
    return TPSData.from_arrays([r.tps for r in runs], [r.config for r in runs], inst, cold,
                               sess, use_cold=use_cold, lower_is_better=lower)


#: Values of the result's ``direction``.
DIRECTIONS = ("higher_is_better", "lower_is_better")

#: Decision-rule label (:mod:`models.stats.decision`: "B better" = B's value higher beyond the ROPE)
#: -> the label shown for a lower-is-better metric. The rule itself is the same for both.
_LOWER_LABELS = {"B better": "B slower", "A better": "B faster"}


#: A run-to-run (sigma) prior with at most this many degrees of freedom is "weak": the
#: hf-a10g-small prior's sigma borrows the local A10G scale on 2 df (models/data/
#: noise_priors.json). A paired verdict with fewer than 3 runs beyond one per (instance,
#: config) leans on it for its interval's width, and says so.
WEAK_SIGMA_DF = 3.0


def machines_unknown(sub: RunsTable, platform: str | None) -> bool:
    """True when the runs of ``sub`` (A's and B's) name no platform and no instance: their
    machines are as unknown as a quick form's, so they are read by
    :func:`one_session_per_arm` (``planner verdict`` and ``repeats --runs`` alike)."""
    return platform is None and not any(r.instance for r in sub.runs)


def one_session_per_arm(table: RunsTable) -> RunsTable:
    """The runs with each config's runs taken as one session on one machine of its own.

    For runs whose machines are unknown (quick forms without ``--platform``, and a runs table
    with no ``instance`` values and no platform): the offset between A's and B's machines is
    then noise their spread cannot measure, the cautious reading. Reading every run as its
    own machine instead would let the runs' spread stand for the machine-to-machine noise
    and give decisive labels that the same runs on two named machines do not get.

    Parameters
    ----------
    table : RunsTable
        The runs (their ``instance`` is replaced by ``<config>-session``).

    Returns
    -------
    RunsTable
        A new table; ``table`` is not modified.
    """
    from dataclasses import replace

    return RunsTable([replace(r, instance=f"{r.config}-session") for r in table.runs],
                     table.path)


#: The note of :func:`one_session_per_arm`.
SESSION_NOTE = ("each arm's runs are taken as one session: the offset between A's and B's "
                "sessions is noise their spread cannot measure (name the platform, pair the "
                "runs, state the between-instance CV or give an instance column)")


def shown_label(rule_label: str, direction: str) -> str:
    """The label shown for a decision-rule label and a metric direction.

    For ``higher_is_better`` (TPS and other rates) the rule's label is shown as is
    ("B better" / "A better"); for ``lower_is_better`` (latencies, durations) B's value being
    higher is "B slower" and lower is "B faster". "equivalent" and "undecided" are the same.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}")
    return _LOWER_LABELS.get(rule_label, rule_label) if direction == "lower_is_better" \
        else rule_label


def cold_runs(table: RunsTable, a: str, b: str) -> list[dict]:
    """The runs of A and B treated as cold first runs, as ``{config, rep, instance, tps}``.

    Same selection and flags as :func:`build_data` (:meth:`planner.io.runs.RunsTable.cold_flags`).
    """
    sub = table.measured().select([a, b])
    return [{"config": r.config, "rep": r.rep, "instance": r.instance, "tps": r.tps}
            for r, c in zip(sub.runs, sub.cold_flags()) if c]


def cold_only_notes(table: RunsTable, a: str, b: str) -> list[str]:
    """One note per config whose runs are all cold first runs (its warm level is then known
    only through the cold prior, :func:`models.stats.tps_model.cold_prior_components`)."""
    sub = table.measured().select([a, b])
    flags = sub.cold_flags()
    out = []
    for who, c in (("A", a), ("B", b)):
        mine = [f for r, f in zip(sub.runs, flags) if r.config == c]
        if mine and all(mine):
            out.append(f"{who}'s only run is a cold first run: add a warm run" if len(mine) == 1
                       else f"{who}'s only runs ({len(mine)}) are cold first runs: add a warm run")
    return out


def check_identifiable(data: TPSData, prior: NoisePrior, prior_given: bool, path: str) -> None:
    """Refuse a fit whose noise is neither in the data nor in a prior."""
    if not prior_given and data.residual_df() <= 0:
        counts = np.bincount(data.config, minlength=data.n_configs)
        lone = [data.config_names[k] for k in range(data.n_configs) if counts[k] < 2]
        raise InputError(
            f"config '{lone[0]}' has one run and no noise prior: the data cannot tell noise "
            "from effect; give a noise prior (a platform or a prior file) or more runs",
            file=path, field="tps")


def fit(data: TPSData, prior: NoisePrior, engine: str, *, seed: int = 0,
        likelihood: str = "normal", draws: int = 1000, chains: int = 2
        ) -> tuple[Posterior, dict]:
    """Fit with the chosen engine; return (posterior, diagnostics dict).

    Both engines return a :class:`models.stats.posterior.Posterior`.
    """
    if engine == "exact":
        if likelihood != "normal":
            raise InputError("the exact engine has the Normal likelihood only; use the mcmc "
                             "engine for the Student-t likelihood", field="likelihood")
        from models.stats.tps_exact import fit_exact

        post = fit_exact(data, prior)
        diag = {"engine": "exact", "grid_points": int(post.w.size),
                "grid_edge_mass": post.edge_mass, "ok": post.edge_mass < 1e-3,
                "messages": [] if post.edge_mass < 1e-3 else
                ["posterior mass at the upper edge of the noise grid; widen the prior"]}
        return post, diag
    if engine == "mcmc":
        from models.stats.tps_mcmc import fit_mcmc

        post = fit_mcmc(data, prior, likelihood=likelihood, draws=draws, chains=chains, seed=seed)
        return post, dict(post.diagnostics)
    raise InputError(f"unknown engine {engine!r} (exact or mcmc)", field="engine")


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
    :func:`planner.decide.repeats.plan_more_runs` (separate design, one run per new instance).

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
    k = int(np.searchsorted(np.cumsum(w[order]), (1.0 - 1e-5) * w.sum())) + 1
    idx = order[:k]
    w = w[idx] / w[idx].sum()
    M = post.mean[idx][:, :2]
    C = post.cov[idx][:, :2, :2]
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
    dl = mean_d[:, None] + sd_d[:, None] * x[None, :]                    # (G, Q) true Δ
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


def _as_dict(res) -> dict:
    """A repeat plan as its JSON object (a dict, or a typed result with ``to_dict()``)."""
    return res if isinstance(res, dict) else res.to_dict()


def _to_settle(table: RunsTable, a: str, b: str, prior: NoisePrior, rope: Rope,
               platform: str | None, seed: int, screen_post=None, paired: bool = False
               ) -> tuple[int | None, str, str]:
    """Runs per arm to add to an undecided verdict, from the assurance planner.

    :func:`planner.decide.repeats.plan_more_runs` (separate design, the verdict's rule and ROPE,
    target :data:`planner.decide.defaults.DEFAULT_ASSURANCE`, the platform's cost model) starting
    from the runs already bought. With ``screen_post`` (the exact fit of the same runs
    without the cold column) the simulation is skipped, and the answer is ``over_cap``, when
    :func:`settle_screen` puts the assurance of :data:`SETTLE_MAX_RUNS` more runs per arm
    below the target by more than :data:`SETTLE_SCREEN_MARGIN`. With ``paired`` (the runs
    bought pair A and B per machine) the new runs are planned as pairs on new machines
    (design ``paired``: the machine offset cancels) and the screen, built for separate runs,
    is not used.

    Returns
    -------
    (int or None, str, str)
        Runs per arm to add (None beyond :data:`SETTLE_MAX_RUNS`), a code (``settle``,
        ``over_cap``) and the advice in words.
    """
    from planner.decide.costs import cost_model
    from planner.decide.defaults import DEFAULT_ASSURANCE, DEFAULT_PLATFORM

    how = "in A/B pairs on new instances" if paired else "each on a new instance"
    over_cap = (None, "over_cap", f"more than {SETTLE_MAX_RUNS} more runs per arm ({how}) to "
                                  f"reach assurance {DEFAULT_ASSURANCE:g} of a settled verdict")
    if screen_post is not None and not paired:
        rope_log = rope.log_halfwidth(screen_post.level(0))
        ap = float(settle_screen(screen_post, rope_log, [SETTLE_MAX_RUNS], nodes=48)[0])
        if ap < DEFAULT_ASSURANCE - SETTLE_SCREEN_MARGIN:
            return over_cap
    from planner.decide.repeats import plan_more_runs  # numba kernels: only when the screen passes

    try:
        cm = cost_model(platform or DEFAULT_PLATFORM)
        own_price = bool(platform)
    except InputError:  # a platform without a cost model: price it as the default one
        cm, own_price = cost_model(DEFAULT_PLATFORM), False
    plan = _as_dict(plan_more_runs(
        table, a, b, prior=prior, rope=rope, sims=SETTLE_SIMS, seed=seed,
        designs=("paired",) if paired else ("separate",), max_runs=SETTLE_MAX_RUNS,
        target=DEFAULT_ASSURANCE, price_per_hour=cm.price_per_hour, minutes_per_run=cm.minutes_per_run,
        startup_minutes=cm.startup_minutes, billed_per_minute=cm.billed_per_minute,
        search_beyond_cap=False))
    rec = plan["recommended"]
    if rec is None:
        return over_cap
    n = int(rec["runs_per_arm"])
    price = (f"${rec['cost_usd']:.2f}" if cm.price_per_hour > 0 else
             f"{rec['gpu_hours']:.1f} GPU-h on owned hardware")
    where = cm.flavor if own_price else f"priced as {cm.flavor} (no cost model for " \
        f"{platform or 'an unnamed platform'})"
    return n, "settle", (f"about {n} more run(s) per arm ({how}, {where}, {price}; "
                         f"{SETTLE_SIMS} simulations, so a few runs either way) settle the "
                         f"verdict with assurance "
                         f"{rec['assurance']:.2f} (planner repeats with these runs gives the "
                         "full table)")


def classical_tests(tps_a: np.ndarray, tps_b: np.ndarray, sigma: float | None = None, *,
                    platform: str | None = "hf-a10g-small") -> dict:
    """The reference script's z-test (z = Δ / (σ √(1/n_A + 1/n_B))) and Welch's t.

    σ defaults to the reference noise as a CV, ``planner.decide.defaults.ZTEST_CV`` (0.378 %, i.e.
    1.16 TPS at 307.08) times A's mean TPS. It was measured on HF a10g-small only, so for
    another known or unknown ``platform`` the z-test is left out (``z`` None, with a note);
    ``platform=None`` always computes it (the A/A study). Both call "significant" at two-sided
    p < 0.05.
    """
    from planner.decide.defaults import ZTEST_CV
    from planner.io.platforms import canonical_platform

    d = float(np.mean(tps_b) - np.mean(tps_a))
    if platform is not None and canonical_platform(platform) != "hf-a10g-small":
        zt = {"sigma_tps": None, "z": None, "p": None, "significant": None,
              "note": "its σ (0.378 %) was measured on hf-a10g-small only"}
    else:
        sigma = ZTEST_CV * float(np.mean(tps_a)) if sigma is None else sigma
        se = sigma * math.sqrt(1.0 / len(tps_a) + 1.0 / len(tps_b))
        z = d / se
        from models.stats.special import ndtr

        pz = float(2 * ndtr(-abs(z)))  # scipy.stats.norm.sf(|z|) within 1e-14 relative
        zt = {"sigma_tps": sigma, "z": z, "p": pz, "significant": pz < 0.05}
    out = {"delta_tps": d, "z_test": zt}
    if len(tps_a) >= 2 and len(tps_b) >= 2 and (_spread(tps_a) or _spread(tps_b)):
        t, df, p = welch_t(tps_b, tps_a)
        out["welch"] = {"t": t, "df": df, "p": p, "significant": bool(p < 0.05)}
    else:
        out["welch"] = {"t": None, "df": None, "p": None, "significant": None,
                        "note": "needs >= 2 runs per arm with some spread"}
    return out


def _spread(x, scale: float | None = None) -> bool:
    """True when the values ``x`` vary by more than rounding: their SD above 1e-9 of
    ``scale`` (default their largest magnitude). The values reach the tests through
    ``exp(log(tps))``, so equal inputs can differ in the last bits (an SD of 1e-14 read as a
    spread gave t = 1e13 where SciPy gives inf)."""
    x = np.asarray(x, float)
    ref = float(np.max(np.abs(x))) if scale is None else scale
    return bool(x.size >= 2 and np.std(x, ddof=1) > 1e-9 * max(ref, 1e-300))


def _paired_design(data: TPSData) -> bool:
    """Every instance holds exactly one run of A and one of B (``--paired``, or a table
    pairing A and B per machine; one pair included, too few for the paired t)."""
    counts = np.zeros((data.n_instances, 2), int)
    np.add.at(counts, (data.instance, data.config), 1)
    return bool(np.all(counts == 1))


def _paired_t(data: TPSData) -> dict:
    """``{"paired_t": {...}}`` when every instance holds exactly one run of A and one of B
    (a paired design: ``--paired`` or a table pairing A and B per machine), else ``{}``.

    The paired t-test on the per-instance differences B - A (TPS or the metric's unit):
    t = mean(d) / (sd(d) / sqrt(n)), df = n - 1, two-sided p (``scipy.stats.ttest_rel``'s
    statistic; p by :func:`models.stats.special.t_sf`). Welch's t treats the pairs as independent
    and so misses what the pairing removes (new-user report: p 0.596 vs 0.004).
    """
    from models.stats.special import t_sf

    n_inst = data.n_instances
    if n_inst < 2 or not _paired_design(data):
        return {}
    v = np.exp(data.y)
    xa = np.zeros(n_inst)
    xb = np.zeros(n_inst)
    xa[data.instance[data.config == 0]] = v[data.config == 0]
    xb[data.instance[data.config == 1]] = v[data.config == 1]
    d = xb - xa
    if not _spread(d, scale=float(np.max(np.abs(v)))):
        return {"paired_t": {"n_pairs": n_inst, "t": None, "df": None, "p": None,
                             "significant": None, "note": "the differences have no spread"}}
    t = float(np.mean(d)) / (float(np.std(d, ddof=1)) / math.sqrt(n_inst))
    p = 2 * t_sf(abs(t), n_inst - 1)
    return {"paired_t": {"n_pairs": n_inst, "t": t, "df": float(n_inst - 1), "p": p,
                         "significant": bool(p < 0.05)}}


def welch_t(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Welch's t-test of mean(x) - mean(y): (t, df, two-sided p).

    ``scipy.stats.ttest_ind(x, y, equal_var=False)`` written out, the same operations in the
    same order, with :func:`models.stats.special.t_sf` for the t tail (t and df bit for bit, p within
    2e-12 relative, ``tests/planner/decide/test_verdict_speed.py``): importing scipy.stats costs about
    a second of CPU and scipy.special a quarter, most of a ``planner verdict`` on a table.

    Parameters
    ----------
    x, y : ndarray, shape (n_x,), (n_y,)
        Samples (n >= 2 each; TPS or any unit).
    """
    from models.stats.special import t_sf

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n1, n2 = x.shape[0], y.shape[0]

    def var1(a, n):
        m = np.mean(a, axis=0, keepdims=True)
        v = np.mean((a - m) ** 2, axis=0)
        v *= np.float64(n) / (np.float64(n) - 1)
        return v

    with np.errstate(divide="ignore", invalid="ignore"):
        v1, v2 = var1(x, n1), var1(y, n2)
        vn1, vn2 = v1 / n1, v2 / n2
        df = (vn1 + vn2) ** 2 / (vn1 ** 2 / (n1 - 1) + vn2 ** 2 / (n2 - 1))
        df = np.where(np.isnan(df), 1.0, df)
        denom = np.sqrt(vn1 + vn2)
        t = np.divide(np.mean(x, axis=0) - np.mean(y, axis=0), denom)
    p = 2 * t_sf(abs(float(t)), float(df))
    return float(t), float(df), float(p)


def _interval(mean: float, lo: float, hi: float, f) -> dict:
    return {"mean": f(mean), "hdi_low": f(lo), "hdi_high": f(hi)}


@dataclass(frozen=True)
class Verdict:
    """The posterior verdict on B vs A (schema ``spec-planner/verdict/1``).

    One field per key of the JSON result, in its order; nested JSON objects stay plain dicts
    of floats (``{mean, hdi_low, hdi_high}`` and the like). :meth:`to_dict` writes the JSON
    object, :meth:`from_dict` reads one back, so every renderer works from a saved result.

    Attributes
    ----------
    a, b : str
        Config labels; Δ = B − A.
    n_a, n_b : int
        Runs used per config.
    mean_tps_a, mean_tps_b : float
        Sample means (TPS).
    label : str
        One of :data:`LABELS`.
    p_b_gt_a, p_equivalent, p_b_gt_a_beyond_rope, p_a_gt_b_beyond_rope : float
        Posterior probabilities of Δ > 0, |Δ| < ROPE, Δ > +ROPE, Δ < −ROPE.
    delta_pct, delta_tps : dict
        ``{mean, hdi_low, hdi_high}`` of Δ in % of A and in TPS at A's level.
    delta_log : dict
        ``{mean, sd, hdi_low, hdi_high}`` of Δ on the log scale.
    hdi_prob : float
        HDI mass.
    rope : dict
        ``{value, unit ("%" or "TPS"), pct, tps}``: the ROPE as given and converted.
    level_tps_a : float
        Posterior mean TPS of A.
    sigma_instance, sigma_run : dict
        ``{"pct": {...}, "tps": {...}}`` summaries (mean, median, HDI) of τ and σ.
    engine, likelihood : str
    prior : dict
        The noise prior (``label`` plus :meth:`models.stats.noise.NoisePrior.to_dict`).
    diagnostics : dict
        Engine diagnostics (``ok``, ``messages``, ...).
    more_runs_per_arm : int or None
        Runs per arm to add to settle an undecided verdict ("to settle" advice).
    more_runs_note : str or None
        That advice in words (None when the verdict is decisive).
    more_runs_code : str or None
        ``settle`` (``more_runs_per_arm`` reach the target assurance), ``over_cap`` (more
        than :data:`SETTLE_MAX_RUNS`), ``fit_failed`` (the fit failed its diagnostics: no
        advice to buy runs is given) or None (decisive).
    classical : dict
        z-test (``z_test.sigma_tps`` is its σ) and Welch's t.
    delta_curve : dict or None
        ``{delta_pct, density}`` (lists) of the Δ posterior when the engine has a closed-form
        density; ``None`` otherwise (the plots then use ``delta_log.mean/sd``).
    notes : list of str
        Display notes (nothing branches on them).
    seed : int
    direction : str
        ``higher_is_better`` (TPS, rates) or ``lower_is_better`` (latencies, durations): how
        ``label`` reads the decision rule's label (``rule_label``).
    direction_source : str
        ``given`` (an option), ``metric`` (inferred from the metric or column name) or
        ``assumed`` (a plain list of numbers: higher is better was assumed, with a note).
    rule_label : str
        The decision rule's label (:mod:`models.stats.decision`; "B better" = B's value higher);
        equals ``label`` for ``higher_is_better``.
    cold_runs : list of dict
        Runs treated as cold first runs, ``{config, rep, instance, tps}``.
    metric : str or None
        The compared rows' metric (``mean_tpot_ms``, ``decode_wall``...), else the value
        column's name when one was given; None for plain numbers. The views print values in
        its unit (:func:`planner.io.limits.metric_unit`: ms, s, TPS).
    """

    a: str
    b: str
    n_a: int
    n_b: int
    mean_tps_a: float
    mean_tps_b: float
    label: str
    p_b_gt_a: float
    p_equivalent: float
    p_b_gt_a_beyond_rope: float
    p_a_gt_b_beyond_rope: float
    delta_pct: dict
    delta_tps: dict
    delta_log: dict
    hdi_prob: float
    rope: dict
    level_tps_a: float
    sigma_instance: dict
    sigma_run: dict
    engine: str
    likelihood: str
    prior: dict
    diagnostics: dict
    more_runs_per_arm: int | None
    more_runs_note: str | None
    more_runs_code: str | None
    classical: dict
    delta_curve: dict | None
    notes: list = field(default_factory=list)
    seed: int = 0
    direction: str = "higher_is_better"
    direction_source: str = "assumed"
    rule_label: str | None = None
    cold_runs: list = field(default_factory=list)
    metric: str | None = None

    def to_dict(self) -> dict:
        """The JSON object (``schema``, ``command``, then the fields in order)."""
        return {"schema": SCHEMA, "command": "verdict",
                **{f.name: getattr(self, f.name) for f in fields(self)}}

    @classmethod
    def from_dict(cls, d: dict) -> "Verdict":
        """Read a saved verdict JSON object.

        Raises
        ------
        InputError
            Not a ``spec-planner/verdict/`` result, or a field missing.
        """
        schema = str(d.get("schema", ""))
        if not schema.startswith("spec-planner/verdict/"):
            raise InputError(f"not a verdict result (schema {schema or '?'!r})", field="schema")
        names = [f.name for f in fields(cls)]
        optional = ("notes", "seed", "more_runs_code", "direction", "direction_source",
                    "rule_label", "cold_runs", "metric")
        missing = [n for n in names if n not in d and n not in optional]
        if missing:
            raise InputError(f"verdict result lacks {', '.join(missing)}", field=missing[0])
        return cls(**{"more_runs_code": None, **{n: d[n] for n in names if n in d}})


def verdict(table: RunsTable, a: str, b: str, *, rope: Rope | str = DEFAULT_ROPE,
            prior: NoisePrior | None = None, prior_label: str = "weak", engine: str = "exact",
            seed: int = 0, likelihood: str = "normal", use_cold: bool | None = None,
            hdi_prob: float = 0.95, prior_info: dict | None = None,
            platform: str | None = None, lower_is_better: bool | None = None,
            metric: str | None = None) -> Verdict:
    """Posterior verdict on B vs A (schema ``spec-planner/verdict/1``).

    Parameters
    ----------
    table : RunsTable
        Runs; only rows of ``a`` and ``b`` (non-warm-up) are used.
    a, b : str
        Config labels; Δ = B − A.
    rope : Rope or str
        ROPE half-width, ``"0.5%"`` (relative) or ``"1.5"`` (TPS at A's level).
    prior : NoisePrior, optional
        Noise prior; ``None`` means weakly informative (then each config's noise must be
        learnable from the data).
    prior_info : dict, optional
        Where the prior comes from (:meth:`planner.decide.priors.PriorChoice.to_dict` plus ``notes``):
        merged into the result's ``prior``; its ``notes`` are added to the verdict's notes.
    engine : {"exact", "mcmc"}
    seed : int
        MCMC seed (the exact engine is deterministic).
    likelihood : {"normal", "student-t"}
        ``student-t`` (MCMC only) for heavy cold-start tails.
    use_cold : bool, optional
        Include the cold-start indicator (default: when some run is flagged cold).
    platform : str, optional
        Platform of the runs (default: the table's): its cost model prices the "to settle"
        advice (:func:`planner.decide.repeats.plan_more_runs`, :data:`SETTLE_SIMS` simulations).
    lower_is_better : bool, optional
        The metric's direction as given (``--lower-is-better`` / ``--higher-is-better``);
        None infers it from the rows' metric or column name
        (:func:`planner.io.runs.metric_lower_is_better`), and assumes higher is better, with a
        note, when they name none (a plain list of numbers). Only the shown ``label`` depends
        on it (:func:`shown_label`); the decision rule and every number are the same.
    metric : str, optional
        The metric's name when the rows name none (a table's value column, ``--tps-column``);
        the result's ``metric`` is the rows' metric, else this.

    Returns
    -------
    Verdict
        ``label``, ``p_b_gt_a``, ``p_equivalent``, ``p_b_gt_a_beyond_rope``,
        ``p_a_gt_b_beyond_rope``, ``delta_tps`` / ``delta_pct`` (each ``{mean, hdi_low,
        hdi_high}``), ``sigma_instance`` / ``sigma_run`` (relative % and TPS), ``engine``,
        ``diagnostics``, ``more_runs_per_arm``, ``classical`` and the inputs;
        :meth:`Verdict.to_dict` is the JSON.

    Raises
    ------
    InputError
        Missing configs, mixed metrics/workloads, one run per config without a prior, bad ROPE.
    """
    rope = Rope.parse(rope) if not isinstance(rope, Rope) else rope
    sub = table.select([a, b])
    direction, dir_source, dir_note = _direction(sub, lower_is_better,
                                                 plain=table.path == "<command line>")
    lower = direction == "lower_is_better"
    data = build_data(table, a, b, use_cold=use_cold, lower_is_better=lower)
    check_identifiable(data, prior or WEAK, prior is not None, table.path)
    prior = prior or WEAK
    post, diag = fit(data, prior, engine, seed=seed, likelihood=likelihood)
    tps = np.exp(data.y)
    tps_a, tps_b = tps[data.config == 0], tps[data.config == 1]
    level_a = post.level(0)
    from planner.io.limits import metric_unit

    metric_name = next(iter(sorted({r.metric for r in sub.runs if r.metric})),
                       None) or metric or None
    vunit = metric_unit(metric_name, lower)
    rope.check_level(level_a, vunit)
    rope_log = rope.log_halfwidth(level_a)
    d = post.delta(0, 1, rope_log, hdi_prob)
    rule_label = label_from(d, ok=diag.get("ok", True))
    label = shown_label(rule_label, direction)
    tau = post.scale_summary("tau")
    sig = post.scale_summary("sigma")
    paired_t = _paired_t(data)

    def warm_data() -> TPSData:
        """The runs without cold-start flags (``data`` itself when it has none), built once
        for the 'to settle' fit and the prior-conflict check."""
        nonlocal data_warm
        if data_warm is None:
            data_warm = data if not data.use_cold else \
                build_data(table, a, b, use_cold=False, lower_is_better=lower)
        return data_warm

    data_warm = None
    more, more_code, more_note = None, None, None
    if not diag.get("ok", True):
        # a failed fit (an outlier, a wrong unit, a prior too wide for the data) is no basis
        # for buying runs: say what to fix instead of pricing more of the same
        more_code = "fit_failed"
        more_note = ("the fit failed its diagnostics: check the runs for an outlier or a "
                     "wrong unit, or state your noise (a CV), before buying more runs")
    elif rule_label == "undecided":
        plat = platform or sub.platform() or None
        if engine == "exact" and not data.use_cold:
            post0 = post
        else:
            from models.stats.tps_exact import fit_exact

            post0 = fit_exact(warm_data(), prior)
        more, more_code, more_note = _to_settle(table, a, b, prior, rope, plat, seed, post0,
                                                paired=_paired_design(data))

    def scale_out(s):
        return {"pct": {k: 100 * v for k, v in s.items()},
                "tps": {k: level_a * v for k, v in s.items()}}

    notes = list((prior_info or {}).get("notes", []))
    if data.one_run_per_instance():
        notes.append("every run is on its own instance: the data learn only "
                     "sqrt(sigma_instance^2 + sigma_run^2); the split comes from the prior")
    if dir_note:
        notes.append(dir_note)
    if not rope.relative and 0 < rope.value < 1e-3 * level_a:
        # a bare number is read in the metric's unit: '--rope 0.1' on ~300 TPS is 0.03 %
        notes.append(f"the ROPE {rope.value:g} (no %) is read in {vunit}: "
                     f"{100 * rope.value / level_a:.3g} % of A's level; for a relative "
                     f"margin give the ROPE as {rope.value:g}%")
    shared = set(data.instance[data.config == 0]) & set(data.instance[data.config == 1])
    sp = prior.sigma
    # runs beyond one per (instance, config) cell: the data's own evidence on sigma
    within_df = len(data.y) - len(set(zip(data.instance.tolist(), data.config.tolist())))
    if shared and within_df < 3 and sp.kind == "inv_chi2" and sp.df <= WEAK_SIGMA_DF:
        # paired runs cancel the instance effect, so Δ's precision is sigma's: say when that
        # rests on a prior that was not measured (e.g. HF, where sigma borrows 2 df locally)
        notes.append(f"A and B share {len(shared)} instance(s), so the instance effect cancels "
                     f"and the interval rests on the run-to-run scale sigma, whose prior here "
                     f"has only {sp.df:g} df ({100 * sp.scale:.2g} %): with few runs it sets "
                     "the interval's width; state your noise (a CV or A/A runs)")
    if prior is not WEAK:
        notes += prior_conflicts(warm_data(), prior, prior_label)
    colds = cold_runs(table, a, b) if data.use_cold else []
    if data.use_cold:
        which = ", ".join(f"{c['config']} rep {c['rep']}" for c in colds[:6]) + \
            (f" and {len(colds) - 6} more" if len(colds) > 6 else "")
        notes.append(f"{len(colds)} cold first run(s) ({which}) modelled with a one-sided "
                     f"cold-start coefficient (prior: {100 * COLD_P_NONE:.0f} % of first runs "
                     f"not slow, the others {100 * COLD_MEAN_SLOW:.1f} % slow on average; "
                     "never faster)")
        alone = cold_only_notes(table, a, b)
        notes += alone
        if alone and more_note is not None:
            more_note = "; ".join(alone) + "; or " + more_note
    if not diag.get("ok", True):
        notes.append("the fit failed its diagnostics: no decisive label is given")
    curve = None
    x = np.linspace(d.hdi_low - 0.6 * (d.hdi_high - d.hdi_low),
                    d.hdi_high + 0.6 * (d.hdi_high - d.hdi_low), 200)
    dens = post.delta_density(0, 1, x)  # None: the engine has draws only (MCMC)
    if dens is not None:
        # change of variables to percent: p_pct(100(e^x - 1)) = p(x) / (100 e^x)
        curve = {"delta_pct": [pct(v) for v in x],
                 "density": (dens / (100.0 * np.exp(x))).tolist()}
    return Verdict(
        a=a, b=b,
        n_a=int(len(tps_a)), n_b=int(len(tps_b)),
        mean_tps_a=float(np.mean(tps_a)), mean_tps_b=float(np.mean(tps_b)),
        label=label,
        p_b_gt_a=d.p_gt0,
        p_equivalent=d.p_in_rope,
        p_b_gt_a_beyond_rope=d.p_gt_rope,
        p_a_gt_b_beyond_rope=d.p_lt_neg_rope,
        delta_pct=_interval(d.mean, d.hdi_low, d.hdi_high, pct),
        delta_tps=_interval(d.mean, d.hdi_low, d.hdi_high, lambda x: level_a * math.expm1(x)),
        delta_log={"mean": d.mean, "sd": d.sd, "hdi_low": d.hdi_low, "hdi_high": d.hdi_high},
        hdi_prob=hdi_prob,
        rope={"value": rope.value, "unit": "%" if rope.relative else vunit,
              "pct": pct(rope_log), "tps": level_a * math.expm1(rope_log)},
        level_tps_a=level_a,
        sigma_instance=scale_out(tau),
        sigma_run=scale_out(sig),
        engine=engine,
        likelihood=likelihood,
        prior={"label": prior_label, **prior.to_dict(), **(prior_info or {})},
        diagnostics=diag,
        more_runs_per_arm=more,
        more_runs_note=more_note,
        more_runs_code=more_code,
        classical={**classical_tests(tps_a, tps_b, platform=sub.platform()), **paired_t},
        delta_curve=curve,
        notes=notes,
        seed=seed,
        direction=direction,
        direction_source=dir_source,
        rule_label=rule_label,
        cold_runs=colds,
        metric=metric_name,
    )


#: Draws of a prior scale behind its 95 % range in :func:`prior_conflicts` (seeded, 0;
#: the 2.5 % and 97.5 % order statistics of 4,000 draws are within ~3 % of the quantiles).
CONFLICT_DRAWS = 4_000


def prior_conflicts(data: TPSData, prior: NoisePrior, label: str) -> list[str]:
    """Notes where the runs alone contradict an informative noise prior.

    The runs are fitted again under the weakly informative prior (:data:`models.stats.noise.WEAK`,
    exact engine). For each scale (``tau``, between instances; ``sigma``, run to run) whose
    95 % HDI from the runs alone lies entirely outside the prior's central 95 % range, a
    note says so: the informative prior then moves the noise the runs show into the other
    scale (a paired A/B on machines 3 % apart, under a prior allowing 0.2-0.55 % between
    instances, read the machines' spread as run noise and came out undecided while a paired
    t test gave p = 0.0005). The rule is conservative: a scale the runs cannot learn has a
    wide HDI and never triggers it.

    Parameters
    ----------
    data : TPSData
        The compared runs (cold flags off).
    prior : NoisePrior
        The informative prior the verdict used.
    label : str
        Its name, for the note.

    Returns
    -------
    list of str
        Zero to two notes.
    """
    from models.stats.tps_exact import fit_exact

    alone = fit_exact(data, WEAK)
    rng = np.random.default_rng(0)
    out = []
    for name, word, sp in (("tau", "sigma_instance (between instances)", prior.tau),
                           ("sigma", "sigma_run (run to run)", prior.sigma)):
        s = alone.scale_summary(name)
        draws = np.sort(sp.rvs(CONFLICT_DRAWS, rng))  # order statistics: no np.quantile
        lo, hi = draws[CONFLICT_DRAWS // 40], draws[CONFLICT_DRAWS - 1 - CONFLICT_DRAWS // 40]
        if s["hdi_low"] > hi or s["hdi_high"] < lo:
            out.append(f"the runs disagree with the {label} prior on {word}: alone they give "
                       f"{100 * s['median']:.2f} % (95 % HDI {100 * s['hdi_low']:.2f} .. "
                       f"{100 * s['hdi_high']:.2f} %), outside the prior's 95 % range "
                       f"{100 * lo:.2f} .. {100 * hi:.2f} %; the prior moves that noise into "
                       "the other scale and the verdict leans on it: check the platform, or "
                       "compare with the weak prior")
    return out


def _direction(sub: RunsTable, given: bool | None, *, plain: bool = False
               ) -> tuple[str, str, str | None]:
    """(direction, source, note) of the compared rows; see :func:`verdict`."""
    inferred = sub.lower_is_better  # raises on rows of both directions
    names = sorted({r.metric for r in sub.runs if r.metric})
    if given is not None:
        d = "lower_is_better" if given else "higher_is_better"
        note = None
        if names and given != inferred:
            note = (f"direction given as {d.replace('_', ' ')}, although metric "
                    f"'{names[0]}' reads as {'lower' if inferred else 'higher'} is better")
        return d, "given", note
    if inferred:
        what = f"metric '{names[0]}'" if names else "the value column's name"
        return "lower_is_better", "metric", (f"lower is better (a latency or duration), "
                                             f"inferred from {what}: labels read B faster / "
                                             "B slower")
    if names or not plain:  # a metric name, or a table's value column (tps or an alias)
        return "higher_is_better", "metric", None
    return "higher_is_better", "assumed", (
        "higher is better assumed (a rate such as TPS): plain numbers cannot say; say "
        "lower is better for a latency or duration")
