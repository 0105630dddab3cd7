r"""MCMC engine: the hierarchical TPS model in PyMC (Normal or Student-t run noise).

The model is the one of :mod:`models.stats.tps_model`, written so that where both engines apply
(Normal likelihood, no session effect) it is *identical* to the exact grid engine
(:mod:`models.stats.tps_exact`) — same priors, same data — and the two can be checked against each
other (``tests/planner/decide/test_engines_agree.py``). With :math:`y_r` the log TPS of run :math:`r`,
centred by :math:`\bar y` (the mean log TPS of the data) for sampling:

.. math::

    y_r - \bar y &= \mu_{c(r)} + \beta\,\mathrm{cold}_r + \tau z_{i(r)}
                   + \sigma_s w_{s(r)} + \varepsilon_r,\\
    \mu_c &\sim N(0, s_\mu^2),\quad \beta \sim \textstyle\sum_k \pi_k N(m_k, s_k^2),\quad
    z_i, w_s \sim N(0, 1),\\
    \varepsilon_r &\sim N(0, \sigma^2)\ \text{or}\ t_\nu(0, \sigma),\quad
    \nu \sim \mathrm{Gamma}(2, 0.1).

* :math:`\beta`, one cold-start slowdown per cold group (session, else instance), has the
  one-sided prior of the exact engine: the same Normal mixture per group
  (:func:`models.stats.tps_cold.cold_prior_components`, heavy-tailed, fitted on every shipped
  cold cell), as a ``pm.NormalMixture`` of shape (groups,).
* :math:`\mu_c` is reported back on the uncentred scale (:math:`+\bar y`), so its prior is
  :math:`N(\bar y, s_\mu^2)` exactly as in the exact engine (``TPSData.prior_mean_sd``;
  :math:`s_\mu` = ``models.stats.tps_model.MU_PRIOR_SD``, imported, so the engines cannot drift).
* :math:`\tau` and :math:`\sigma` carry the :class:`models.stats.noise.NoisePrior` densities:
  ``inv_chi2`` puts :math:`\mathrm{InvGamma}(\nu_0/2,\ \nu_0 s_0^2/2)` on the *variance*
  (``pm.InverseGamma``) and takes the square root; ``half_normal`` is ``pm.HalfNormal``. A
  joint prior (``NoisePrior.joint``, the population prior of an unknown platform) is a
  ``pm.Potential`` on log tau and log sigma, uniform on the exact engine's grid range
  (:func:`_noise_rvs`). The session SD has the exact engine's prior, the population ratio given sigma
  (:func:`_session_rv`, ``NoisePrior.session_logw``), continuous on the range of the exact
  engine's session nodes.
* Instance effects are non-centred (:math:`u_i = \tau z_i`): with a handful of instances and
  small :math:`\tau` the centred form has a funnel (Betancourt & Girolami 2015). The config
  means are sampled through :math:`m_c = \mu_c + \tau \bar z_c` (:math:`\bar z_c` the mean
  of :math:`z` over config :math:`c`'s runs; a shift with unit Jacobian, the prior stays on
  :math:`\mu_c`): when configs share instances the data pin :math:`\mu_c + \tau z_i`, and
  without the shift NUTS crawls along the :math:`\mu`/:math:`z` ridge (bulk ESS 330 of 2,000
  draws on a one-GPU A/B; 1,400-1,800 with it).
* Session effect :math:`v_s = \sigma_s w_s`, :math:`\log(\sigma_s/\sigma)` the population's
  ratio (was :math:`\sigma_s \sim \mathrm{HalfNormal}(0.005)`, 0.5 % of TPS; the measured session-to-session SD on one local GPU was 0.11 %, 0.90 % with
  cold-start contaminated sessions, ``examples/runs/tps_runs.md``), only when
  ``data.session`` splits some instance into two or more sessions; otherwise sessions and
  instances coincide and the term would duplicate :math:`u_i`. The exact engine has no
  session term, so the engines agree only on data without it.
* The Student-t degrees of freedom prior :math:`\nu \sim \mathrm{Gamma}(2, 0.1)` (mean 20,
  mode 10, 5 % quantile 3.6) is the one of Juárez & Steel (2010), "Model-based clustering
  of non-Gaussian panel data based on skew-t distributions", *JBES* 28(1), recommended in
  the Stan prior-choice wiki (github.com/stan-dev/stan/wiki/Prior-Choice-Recommendations).
  The t scale is :math:`\sigma` itself (so :math:`\sigma` is not the run SD when
  :math:`\nu` is small; the SD is :math:`\sigma\sqrt{\nu/(\nu-2)}`).

Diagnostics follow Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization,
folding, and localization: an improved R-hat for assessing convergence of MCMC", *Bayesian
Analysis* 16(2): a fit is ``ok`` when the rank-normalised split :math:`\hat R \le 1.01`,
bulk and tail ESS :math:`\ge 400` for every parameter, and there are no divergent
transitions.

PyMC is imported lazily (inside :func:`fit_mcmc`): this module is only loaded for
``planner verdict --engine mcmc`` and the tests.
"""

from __future__ import annotations

import warnings

# PyTensor from pip has no BLAS; our models are tiny (no matrix products worth BLAS), so the
# advice it prints on every process start is noise for users of this tool.
warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS",
                        category=UserWarning)

import logging
import math
from dataclasses import dataclass, field

import numpy as np

from models.stats.noise import NoisePrior, ScalePrior
from models.stats.tps_cold import cold_names
from models.stats.tps_model import MU_PRIOR_SD, DeltaSummary, TPSData

#: Half-normal scale of the session-to-session SD (relative; 0.5 % of TPS).
SESSION_PRIOR_SD = 0.005
#: Gamma(shape, rate) prior on the Student-t degrees of freedom (Juárez & Steel 2010).
NU_PRIOR = (2.0, 0.1)
#: Convergence thresholds (Vehtari et al. 2021).
RHAT_MAX = 1.01
ESS_MIN = 400
#: Most draws an automatic extension may ask for, as a multiple of ``draws``.
MAX_EXTEND = 4
#: target_accept of the one re-run after divergences (the usual remedy on a funnel; a
#: 3-vs-3 local-a10g A/B went from 3-5 divergences, R-hat 1.02 to none, R-hat 1.002).
RETRY_TARGET_ACCEPT = 0.99
LIKELIHOODS = ("normal", "student-t")
SAMPLERS = ("auto", "nutpie", "pymc")
#: Sampler chosen by ``sampler="auto"`` when nutpie is importable (see ``docs/mcmc.md`` and
#: ``bench/bench_verdict.py`` for the timing that decided it).
AUTO_PREFERS_NUTPIE = True


def nutpie_available() -> bool:
    """True when the optional ``nutpie`` sampler is importable."""
    try:
        import nutpie  # noqa: F401
    except Exception:  # pragma: no cover - depends on the environment
        return False
    return True


def has_sessions(data: TPSData) -> bool:
    """True when ``data.session`` puts two or more sessions on one instance."""
    if data.session is None:
        return False
    pairs = set(zip(data.instance.tolist(), data.session.tolist()))
    return len(pairs) > data.n_instances


def _scale_rv(pm, name: str, sp: ScalePrior):
    """A PyMC random variable for one noise scale with the NoisePrior density."""
    if sp.kind == "half_normal":
        return pm.HalfNormal(name, sigma=sp.scale)
    var = pm.InverseGamma(f"{name}_sq", alpha=sp.df / 2.0, beta=sp.df * sp.scale**2 / 2.0)
    return pm.Deterministic(name, pm.math.sqrt(var))


def _ratio_logp(pm, pp, lr, ls):
    """Log density of log(tau/sigma) given log sigma under the population prior ``pp``: the
    PyTensor twin of :meth:`models.stats.noise.PopulationPrior.ratio_logpdf` (a t, or the
    two-component mixture when ``pp.w_r > 0``), so both engines use one density."""
    from models.stats.noise import REF_LOG_SIGMA

    m = pp.mu_r + pp.b * (ls - REF_LOG_SIGMA)
    bulk = pm.logp(pm.StudentT.dist(nu=pp.nu_r, mu=m, sigma=pp.s_r), lr)
    if pp.w_r <= 0.0:
        return bulk
    broad = pm.logp(pm.StudentT.dist(nu=pp.nu_w, mu=m + pp.d_w, sigma=pp.s_w), lr)
    return pm.math.logaddexp(math.log1p(-pp.w_r) + bulk, math.log(pp.w_r) + broad)


def _noise_rvs(pm, prior: NoisePrior):
    """(tau, sigma) with the prior's densities: independent (:func:`_scale_rv`), or the joint
    population prior (``prior.joint``): log tau and log sigma uniform on the exact engine's grid
    range (1e-5 .. ~0.98) times the joint density of (log sigma, log tau/sigma) as a
    ``pm.Potential`` (the density of (log tau, log sigma) is that of (log sigma, log ratio):
    unit Jacobian), so both engines integrate the same truncated prior."""
    if prior.joint is None:
        return _scale_rv(pm, "tau", prior.tau), _scale_rv(pm, "sigma", prior.sigma)
    from models.stats.tps_exact import _GRID_HI

    j = prior.joint
    lo, hi = math.log(1e-5), math.log(_GRID_HI)
    ls = pm.Uniform("log_sigma", lo, hi, initval=math.log(0.01))
    lt = pm.Uniform("log_tau", lo, hi, initval=math.log(0.01))
    pm.Potential("population_prior",
                 pm.logp(pm.StudentT.dist(nu=j.nu_s, mu=j.mu_s, sigma=j.s_s), ls)
                 + _ratio_logp(pm, j, lt - ls, ls))
    return pm.Deterministic("tau", pm.math.exp(lt)), pm.Deterministic("sigma", pm.math.exp(ls))


def _session_rv(pm, prior: NoisePrior, sigma):
    """The session SD with the exact engine's prior: the population's ratio to sigma
    (``NoisePrior.session_logw``, a t on log(omega/sigma)), on the range of the exact engine's
    session nodes (``models.stats.tps_exact.session_nodes``); the half-normal when no
    population fit is shipped."""
    from models.stats.noise import _shipped_population
    from models.stats.tps_sessions import SESSION_NODE_HI, SESSION_NODE_LO

    pp = prior.joint if prior.joint is not None else _shipped_population()
    if pp is None:
        return pm.HalfNormal("sigma_session", sigma=SESSION_PRIOR_SD)
    lo, hi = math.log(SESSION_PRIOR_SD * SESSION_NODE_LO), math.log(SESSION_NODE_HI)
    lw = pm.Uniform("log_sigma_session", lo, hi, initval=math.log(SESSION_PRIOR_SD))
    ls = pm.math.log(sigma)
    pm.Potential("session_prior", _ratio_logp(pm, pp, lw - ls, ls))
    return pm.Deterministic("sigma_session", pm.math.exp(lw))


def build_model(data: TPSData, prior: NoisePrior, likelihood: str = "normal"):
    """The PyMC model of the centred log TPS.

    Parameters
    ----------
    data : TPSData
    prior : NoisePrior
    likelihood : {"normal", "student-t"}

    Returns
    -------
    model : pymc.Model
        Free variables ``mu`` (shape (C,), centred), ``beta_cold`` (if ``data.use_cold``),
        ``tau``/``sigma`` (or ``tau_sq``/``sigma_sq`` for inv-chi2 priors, with the
        scales as deterministics), ``z`` (shape (I,)), ``sigma_session``/``w`` (if
        :func:`has_sessions`) and ``nu`` (Student-t).
    centre : float
        The subtracted mean log TPS.
    """
    import pymc as pm

    if likelihood not in LIKELIHOODS:
        raise ValueError(f"unknown likelihood {likelihood!r}; expected one of {LIKELIHOODS}")
    centre = float(np.mean(data.y))
    yc = data.y - centre
    coords = {"config": list(data.config_names), "instance": list(data.instance_names)}
    sess = has_sessions(data)
    if sess:
        coords["session"] = list(data.session_names) if data.session_names else \
            [str(k) for k in range(int(data.session.max()) + 1)]
    # zbar[c] = mean of z over the runs of config c (weights n_ci / n_c), shape (C, I)
    counts = np.zeros((data.n_configs, data.n_instances))
    np.add.at(counts, (data.config, data.instance), 1.0)
    wz = counts / np.maximum(counts.sum(1, keepdims=True), 1.0)
    with pm.Model(coords=coords) as model:
        tau, sigma = _noise_rvs(pm, prior)
        z = pm.Normal("z", 0.0, 1.0, dims="instance")
        # mu_c = m_c - tau * zbar_c: a unit-Jacobian shift that takes the data-confounded
        # part of the instance effects out of the config means (with one shared instance the
        # likelihood sees m only), removing the mu/z ridge that slows NUTS. The prior
        # N(0, MU_PRIOR_SD^2) stays on mu itself, so the model is unchanged.
        m = pm.Flat("m", dims="config")
        mu = pm.Deterministic("mu", m - tau * pm.math.dot(wz, z), dims="config")
        pm.Potential("mu_prior", pm.logp(pm.Normal.dist(0.0, MU_PRIOR_SD), mu).sum())
        mean = mu[data.config] + tau * z[data.instance]
        if data.use_cold:
            # one slowdown per cold group, independent draws of the population prior
            # (models.stats.tps_cold)
            cw, cm, cs = data.cold_prior()
            J = data.n_cold
            beta = pm.NormalMixture("beta_cold", w=cw, mu=cm, sigma=cs, shape=(J,))
            xc = data.design_matrix()[:, data.n_configs:]                # (n, J), signed
            mean = mean + pm.math.dot(xc, beta)
        if sess:
            s_sess = _session_rv(pm, prior, sigma)
            w = pm.Normal("w", 0.0, 1.0, dims="session")
            mean = mean + s_sess * w[data.session]
        # a data container, so one compiled model can be refitted to new y of the same design
        # (``compiled.with_data(y_obs=...)`` in nutpie; used by the SBC test)
        y_obs = pm.Data("y_obs", yc)
        if likelihood == "normal":
            pm.Normal("y", mu=mean, sigma=sigma, observed=y_obs)
        else:
            nu = pm.Gamma("nu", alpha=NU_PRIOR[0], beta=NU_PRIOR[1])
            pm.StudentT("y", nu=nu, mu=mean, sigma=sigma, observed=y_obs)
    return model, centre


def _flat(idata, name: str) -> np.ndarray:
    """Posterior draws of ``name`` with chains and draws flattened: shape (S, ...)."""
    x = idata.posterior[name].values
    return x.reshape((-1,) + x.shape[2:])


def _diagnostics(idata, sampler: str) -> dict:
    import arviz as az

    # every model quantity (raw instance/session effects included; not the sampler's
    # internal shift ``m`` or the unconstrained ``*_log__`` copies): the worst one decides
    names = [v for v in idata.posterior.data_vars
             if v in ("mu", "beta_cold", "tau", "sigma", "z", "sigma_session", "w", "nu")]
    rhat = az.rhat(idata, var_names=names)
    ess_b = az.ess(idata, var_names=names, method="bulk")
    ess_t = az.ess(idata, var_names=names, method="tail")

    def _ext(ds, fn):
        vals = [np.asarray(ds[v].values, float).ravel() for v in ds.data_vars]
        vals = np.concatenate(vals) if vals else np.array([np.nan])
        vals = vals[np.isfinite(vals)]
        return float(fn(vals)) if vals.size else float("nan")

    r_max = _ext(rhat, np.max)
    eb = _ext(ess_b, np.min)
    et = _ext(ess_t, np.min)
    div = int(np.asarray(idata.sample_stats["diverging"].values).sum()) \
        if "diverging" in idata.sample_stats else 0
    msgs = []
    if not (r_max <= RHAT_MAX):
        msgs.append(f"R-hat {r_max:.3f} > {RHAT_MAX} (chains disagree; run longer)")
    if not (eb >= ESS_MIN):
        msgs.append(f"bulk ESS {eb:.0f} < {ESS_MIN} (run more draws)")
    if not (et >= ESS_MIN):
        msgs.append(f"tail ESS {et:.0f} < {ESS_MIN} (HDI ends unreliable; run more draws)")
    if div:
        msgs.append(f"{div} divergent transition(s): the posterior geometry was not explored")
    return {"engine": "mcmc", "sampler": sampler, "r_hat_max": r_max, "ess_bulk_min": eb,
            "ess_tail_min": et, "divergences": div, "ok": not msgs, "messages": msgs}


@dataclass
class McmcPosterior:
    """Posterior draws of the hierarchical TPS model.

    Attributes
    ----------
    idata : arviz.InferenceData
        The sampler output (``mu`` on the centred scale; see ``centre``).
    diagnostics : dict
        ``engine``, ``sampler``, ``r_hat_max``, ``ess_bulk_min``, ``ess_tail_min``,
        ``divergences``, ``ok``, ``messages`` (see :func:`fit_mcmc`).
    centre : float
        Mean log TPS subtracted before sampling.
    names : list of str
        Fixed-effect names: configs, then ``cold`` if modelled (indices for :meth:`delta`).
    beta : ndarray, shape (S, p)
        Draws of the fixed effects on the log-TPS scale (config means uncentred).
    tau, sigma : ndarray, shape (S,)
        Draws of the noise scales (relative SDs).
    nu : ndarray, shape (S,) or None
        Student-t degrees of freedom (None for the Normal likelihood).
    sigma_session : ndarray, shape (S,) or None
        Session SD when the session term is in the model.
    likelihood : str
    seed : int

    Satisfies :class:`models.stats.posterior.Posterior`; :meth:`delta_density` is ``None`` (draws
    only).
    """

    idata: object
    diagnostics: dict
    centre: float
    names: list[str]
    beta: np.ndarray
    tau: np.ndarray
    sigma: np.ndarray
    nu: np.ndarray | None
    sigma_session: np.ndarray | None
    likelihood: str
    seed: int
    n_configs: int = field(default=0)

    @property
    def n_draws(self) -> int:
        """Total draws S (chains x draws)."""
        return int(self.tau.size)

    def delta_draws(self, a: int, b: int) -> np.ndarray:
        """Draws of :math:`\\Delta = \\beta_b - \\beta_a` (log scale), shape (S,)."""
        return self.beta[:, b] - self.beta[:, a]

    def delta(self, a: int, b: int, rope: float, hdi_prob: float = 0.95) -> DeltaSummary:
        """Posterior of mu_b - mu_a (log scale) with ROPE readings.

        Parameters
        ----------
        a, b : int
            Fixed-effect indices (configs A and B, in ``names``).
        rope : float
            ROPE half-width on the log scale (>= 0).
        hdi_prob : float
            Mass of the highest-density interval (``arviz.hdi``).

        Returns
        -------
        DeltaSummary
            Probabilities are Monte Carlo fractions of draws (MC SE about
            :math:`\\sqrt{p(1-p)/\\mathrm{ESS}}`).
        """
        import arviz as az

        d = self.delta_draws(a, b)
        lo, hi = (float(x) for x in az.hdi(d, hdi_prob=hdi_prob))
        p_gt = float(np.mean(d > rope))
        p_lt = float(np.mean(d < -rope))
        return DeltaSummary(float(np.mean(d)), float(np.std(d, ddof=1)), lo, hi,
                            float(np.mean(d > 0)), p_gt, p_lt, max(0.0, 1.0 - p_gt - p_lt),
                            float(rope), hdi_prob)

    def delta_density(self, a: int, b: int, x: np.ndarray) -> None:
        """No closed-form density of Δ from draws: ``None`` (see
        :meth:`models.stats.posterior.Posterior.delta_density`; callers fall back to
        ``delta(...).mean`` / ``sd``)."""
        return None

    def scale_summary(self, which: str, hdi_prob: float = 0.95) -> dict:
        """Posterior mean, median and HDI of ``tau``, ``sigma`` or ``sigma_session``.

        Returns
        -------
        dict
            ``mean``, ``median``, ``hdi_low``, ``hdi_high`` (relative SDs, log scale).
        """
        import arviz as az

        x = {"tau": self.tau, "sigma": self.sigma, "sigma_session": self.sigma_session}.get(which)
        if x is None:
            raise KeyError(f"no scale {which!r} in this posterior")
        lo, hi = (float(v) for v in az.hdi(x, hdi_prob=hdi_prob))
        return {"mean": float(np.mean(x)), "median": float(np.median(x)), "hdi_low": lo,
                "hdi_high": hi}

    def level(self, k: int) -> float:
        """Posterior mean TPS level of config ``k``: :math:`E[\\exp\\mu_k]` (TPS)."""
        return float(np.mean(np.exp(self.beta[:, k])))

    def predictive(self, k: int, new_instance: bool = True, *, seed: int | None = None
                   ) -> np.ndarray:
        """Draws of the next run's log TPS of config ``k``, shape (S,).

        Parameters
        ----------
        k : int
            Config index.
        new_instance : bool
            Add a fresh instance effect (:math:`\\tau z`) and, when modelled, a fresh session
            effect. False: a run on a known instance with its effect removed (the same
            convention as :meth:`models.stats.tps_exact.GridPosterior.predictive`).
        seed : int, optional
            Seed of the noise draws (default: the fit's seed); same seed, same draws.
        """
        rng = np.random.default_rng(self.seed if seed is None else seed)
        S = self.n_draws
        out = self.beta[:, k].copy()
        if new_instance:
            out += self.tau * rng.standard_normal(S)
            if self.sigma_session is not None:
                out += self.sigma_session * rng.standard_normal(S)
        if self.nu is None:
            out += self.sigma * rng.standard_normal(S)
        else:
            out += self.sigma * rng.standard_t(self.nu)
        return out


#: Compiled nutpie models by design (numba compile is ~2-4 s; sampling this model ~0.2 s).
_NUTPIE_CACHE: dict = {}
_CACHE_SIZE = 8


def _design_key(data: TPSData, prior: NoisePrior, likelihood: str) -> tuple:
    """Everything the compiled model depends on except y (which is a ``pm.Data``)."""
    sess = data.session.tobytes() if has_sessions(data) else b""
    return (likelihood, prior.tau, prior.sigma, data.config.tobytes(), data.instance.tobytes(),
            bool(data.use_cold), data.cold.astype(bool).tobytes() if data.use_cold else b"",
            data.design_matrix()[:, data.n_configs:].tobytes() if data.use_cold else b"",
            float(data.cold_sign),
            sess, tuple(data.config_names), tuple(data.instance_names), MU_PRIOR_SD,
            tuple(np.concatenate(data.cold_prior()).tolist()) if data.use_cold else ())


def _extendable(diag: dict, tune: int) -> bool:
    """Only a clean but short run is extended: no divergences, chains roughly agreeing
    (R-hat <= 1.05), a real warm-up (tune >= 100), and only the ESS below target."""
    if diag["ok"] or diag["divergences"] or tune < 100:
        return False
    return diag["r_hat_max"] <= 1.05 and np.isfinite(diag["ess_bulk_min"]) and \
        np.isfinite(diag["ess_tail_min"])


def _sample_nutpie(model, *, compiled, draws, tune, chains, seed, target_accept, progressbar):
    import nutpie

    if "model" not in compiled:
        compiled["model"] = nutpie.compile_pymc_model(model)
    return nutpie.sample(compiled["model"], draws=draws, tune=tune, chains=chains, cores=chains,
                         seed=seed, progress_bar=progressbar, target_accept=target_accept,
                         save_warmup=False)


def _sample_pymc(model, *, draws, tune, chains, seed, target_accept, progressbar, cores):
    import pymc as pm

    log = logging.getLogger("pymc")
    level = log.level
    if not progressbar:
        log.setLevel(logging.WARNING)
    try:
        with model:
            return pm.sample(draws=draws, tune=tune, chains=chains, cores=cores,
                             random_seed=seed, target_accept=target_accept,
                             progressbar=progressbar,
                             compute_convergence_checks=False, return_inferencedata=True)
    finally:
        log.setLevel(level)


def fit_mcmc(data: TPSData, prior: NoisePrior, *, likelihood: str = "normal",
             draws: int = 1000, tune: int = 1000, chains: int = 2, seed: int = 0,
             sampler: str = "auto", progressbar: bool = False, target_accept: float = 0.95,
             cores: int | None = None, extend: bool = True) -> McmcPosterior:
    """Fit the hierarchical TPS model by NUTS.

    Parameters
    ----------
    data : TPSData
        Runs (log TPS, config/instance indices, cold flags, sessions).
    prior : NoisePrior
        Priors of tau (between instances) and sigma (run to run), relative scales.
    likelihood : {"normal", "student-t"}
        Run noise; Student-t (unknown :math:`\\nu`) for heavy cold-start tails.
    draws, tune, chains : int
        Kept draws per chain, warm-up iterations per chain, chains (>= 2 for R-hat).
    seed : int
        Seed; the same seed gives identical draws (both samplers).
    sampler : {"auto", "nutpie", "pymc"}
        ``auto``: nutpie when installed (faster here, see ``docs/mcmc.md``), else PyMC NUTS.
    progressbar : bool
    target_accept : float
        NUTS step-size adaptation target (0.95: small steps, few divergences on the
        hierarchical funnel).
    cores : int, optional
        Processes for PyMC NUTS (default 1: forking costs more than it saves on a model this
        small). nutpie runs chains on threads (``cores=chains``).
    extend : bool
        When the first pass has divergences (and ``tune`` >= 100), sample once more with
        ``target_accept`` :data:`RETRY_TARGET_ACCEPT` after twice the warm-up (same seed) and
        report that pass, with a message saying so. Then, when the pass is clean (no
        divergences, R-hat <= 1.05, ``tune`` >= 100) and only
        the ESS falls short of 400, sample once more with ``ceil(2 * draws * 400 / ESS)``
        draws per chain (at most 4 x ``draws``) after twice the warm-up (same seed, so still
        reproducible) and report
        that pass, with a message saying so. Student-t fits of a handful of runs with an
        outlier need this (the sigma/nu posterior is narrow-necked; ESS 110-700 per 2,000
        draws).

    Returns
    -------
    McmcPosterior

    Raises
    ------
    ValueError
        Unknown likelihood or sampler, or ``draws``/``tune``/``chains`` < 1.
    ImportError
        ``sampler="nutpie"`` without nutpie installed.
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler {sampler!r}; expected one of {SAMPLERS}")
    if min(draws, chains) < 1 or tune < 0:
        raise ValueError("draws and chains must be >= 1, tune >= 0")
    if sampler == "auto":
        sampler = "nutpie" if AUTO_PREFERS_NUTPIE and nutpie_available() else "pymc"
    key = _design_key(data, prior, likelihood)
    if sampler == "nutpie" and key in _NUTPIE_CACHE:
        # same design, prior and likelihood: reuse the compiled model, swap in this y
        model, compiled_model = _NUTPIE_CACHE[key]
        centre = float(np.mean(data.y))
        compiled = {"model": compiled_model.with_data(y_obs=data.y - centre)}
    else:
        model, centre = build_model(data, prior, likelihood)
        compiled = {}
    kw = dict(draws=int(draws), tune=int(tune), chains=int(chains), seed=int(seed),
              target_accept=float(target_accept), progressbar=progressbar)
    def run(kw):
        if sampler == "nutpie":
            return _sample_nutpie(model, compiled=compiled, **kw)
        return _sample_pymc(model, cores=1 if cores is None else int(cores), **kw)

    idata = run(kw)
    if sampler == "nutpie" and key not in _NUTPIE_CACHE:
        if len(_NUTPIE_CACHE) >= _CACHE_SIZE:
            _NUTPIE_CACHE.pop(next(iter(_NUTPIE_CACHE)))
        _NUTPIE_CACHE[key] = (model, compiled["model"])
    diag = _diagnostics(idata, sampler)
    passes: list = []  # what the passes after the first did (kept in the final messages)
    if extend and diag["divergences"] and tune >= 100 and target_accept < RETRY_TARGET_ACCEPT:
        # divergences on the hierarchical funnel (few runs, scales near zero): the standard
        # remedy, smaller steps after a longer warm-up, once (same seed: reproducible)
        old = diag
        kw = {**kw, "target_accept": RETRY_TARGET_ACCEPT, "tune": 2 * int(tune)}
        tune = 2 * int(tune)
        idata = run(kw)
        diag = _diagnostics(idata, sampler)
        passes.append(
            f"sampled again with target_accept {RETRY_TARGET_ACCEPT} and {tune} warm-up "
            f"iterations (first pass: {old['divergences']} divergences, R-hat "
            f"{old['r_hat_max']:.3f}, bulk ESS {old['ess_bulk_min']:.0f})")
    if extend and _extendable(diag, tune):
        more = int(min(MAX_EXTEND * draws, math.ceil(2.0 * draws * ESS_MIN / max(
            min(diag["ess_bulk_min"], diag["ess_tail_min"]), 1.0))))
        idata = run({**kw, "draws": more, "tune": 2 * int(tune)})
        old = diag
        diag = _diagnostics(idata, sampler)
        passes.append(
            f"extended to {more} draws/chain (previous pass: bulk ESS {old['ess_bulk_min']:.0f}, "
            f"tail ESS {old['ess_tail_min']:.0f} of {draws * chains} draws)")
    diag["messages"] += passes
    mu = _flat(idata, "mu") + centre
    cols = [mu]
    names = list(data.config_names)
    if data.use_cold:
        bc = _flat(idata, "beta_cold")
        cols.append(bc.reshape(bc.shape[0], -1))
        names += cold_names(data)
    beta = np.concatenate(cols, axis=1)
    post = idata.posterior
    return McmcPosterior(
        idata=idata, diagnostics=diag, centre=centre, names=names, beta=beta,
        tau=_flat(idata, "tau"), sigma=_flat(idata, "sigma"),
        nu=_flat(idata, "nu") if "nu" in post else None,
        sigma_session=_flat(idata, "sigma_session") if "sigma_session" in post else None,
        likelihood=likelihood, seed=int(seed), n_configs=data.n_configs)


def inference_data(post: McmcPosterior, data: TPSData):
    """The fit as one ArviZ ``InferenceData`` to save (``to_netcdf``) and open elsewhere.

    Parameters
    ----------
    post : McmcPosterior
        A fit of :func:`fit_mcmc` on ``data``.
    data : TPSData

    Returns
    -------
    arviz.InferenceData
        ``posterior`` and ``sample_stats`` of the sampler (``mu`` on the centred scale: add
        ``observed_data.attrs["centre"]``), ``observed_data`` ``y`` (log TPS minus ``centre``,
        one per run; attributes ``centre``, ``likelihood``, ``seed``, ``configs``,
        ``instances``) and ``constant_data`` (``config``, ``instance``, ``cold`` index per run),
        with the config and instance names as coordinates.
    """
    import arviz as az

    n = int(data.y.size)
    extra = az.from_dict(
        observed_data={"y": np.asarray(data.y, float) - post.centre},
        constant_data={"config": np.asarray(data.config, np.int64),
                       "instance": np.asarray(data.instance, np.int64),
                       "cold": np.asarray(data.cold, np.int64)},
        coords={"run": np.arange(n)},
        dims={"y": ["run"], "config": ["run"], "instance": ["run"], "cold": ["run"]})
    out = post.idata.copy()
    out.extend(extra)
    out.observed_data.attrs.update({
        "centre": float(post.centre), "likelihood": post.likelihood, "seed": int(post.seed),
        "configs": ", ".join(data.config_names), "instances": ", ".join(data.instance_names)})
    return out


__all__ = ["fit_mcmc", "McmcPosterior", "inference_data", "build_model", "has_sessions", "nutpie_available",
           "RHAT_MAX", "ESS_MIN", "SESSION_PRIOR_SD", "NU_PRIOR"]
