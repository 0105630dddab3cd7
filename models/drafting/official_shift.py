"""The official public -> private shift, fitted on real verifier re-runs.

Data: ``models/data/official_private_pairs.csv`` (eight external submissions, public score and
the organiser's verifier re-run on the private set, with the verdict; provenance in the
``.md`` beside it) plus the one official pair of ``private_shift_evidence.json``
(``fa2sw_precache_agentI``, verdict from the 5 % rule). Every drop of more than 5 % was ruled
invalid, so ``P(invalid) = P(private < 0.95 public)``.

Model of the log ratio of pair i (one public run, one private run, two allocations)::

    log(private_i / public_i) = x_i' beta + u_i + e_i
    u_i ~ N(0, tau^2)            prompt-set shift of this submission beyond the covariates
    e_i ~ N(0, 2 sigma_a^2)      allocation-to-allocation noise of two official runs

``x_i = (1, drafter_tuned_i)``: a drafter fine-tuned on public-like prompts (``drafterft`` in
the submission label) loses more on the private set; leave-one-pair-out earns it its place
(Brier 0.175 vs 0.294 without it, ``docs/drafting.md``). Priors: ``beta`` flat; ``sigma_a^2``
scaled-inverse-chi^2 with 3 df and scale 0.79 % (``examples/runs/tps_runs.md``: official
allocation-to-allocation CV pooled 0.79 %, df 3 -- the pairs alone cannot tell the two
variances apart, the re-runs of one submission on one prompt set can); ``tau`` half-normal with
scale 3 % (weak: the local proxy pairs, harsher prompt sets, spread by about 4 %).

The posterior is evaluated exactly on a (sigma_a, tau) grid with ``beta`` integrated out
(flat prior: the residual sum of squares of least squares, ``n - p`` degrees of freedom), so
``P(invalid)`` and the predictive quantiles are deterministic mixtures of normals (no Monte
Carlo); only the optional draws are seeded.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from importlib import resources

import numpy as np
from scipy.special import ndtr

from models.errors import ModelInputError

__all__ = ["OfficialPair", "OfficialFit", "load_official_pairs", "drafter_tuned_from_name",
           "fit_official", "leave_one_out", "ALLOCATION_CV", "ALLOCATION_DF", "TAU_SCALE",
           "INVALID_RATIO"]

#: official allocation-to-allocation CV, pooled (examples/runs/tps_runs.md, df 3)
ALLOCATION_CV = 0.0079
ALLOCATION_DF = 3
#: half-normal scale of the between-submission prompt-set shift SD (log scale)
TAU_SCALE = 0.03
#: verifier rule: a private score more than 5 % below the public one was ruled invalid
INVALID_RATIO = 0.95

_SA = np.linspace(0.0005, 0.03, 119)   # sigma_a grid (log-ratio SD of one allocation)
_TAU = np.linspace(0.0, 0.08, 81)      # tau grid


@dataclass(frozen=True)
class OfficialPair:
    """One official public/private pair.

    Attributes
    ----------
    submission : str
    public, private : float
        TPS (bench_serving, HF a10g-small).
    verdict : str
        ``"valid"`` / ``"invalid"`` (``verdict_source`` says whether transcribed or by rule).
    drafter_tuned : bool
    agent : str
        Submitter label (for leave-one-agent-out).
    source : str
    verdict_source : str
    """

    submission: str
    public: float
    private: float
    verdict: str
    drafter_tuned: bool
    agent: str
    source: str
    verdict_source: str = "transcribed"

    @property
    def log_ratio(self) -> float:
        return float(np.log(self.private / self.public))

    @property
    def invalid(self) -> bool:
        return self.verdict == "invalid"


def drafter_tuned_from_name(name: str | None) -> bool | None:
    """True when a submission label says its drafter was fine-tuned on public-like prompts
    (``drafterft``, as in ``osoi5-drafterft-w40-v0``); None for no label."""
    if not name:
        return None
    return bool(re.search(r"drafter[-_]?ft", name, re.I))


def load_official_pairs() -> list[OfficialPair]:
    """The shipped official pairs: the eight of ``official_private_pairs.csv`` then the
    official pair of ``private_shift_evidence.json``.

    Raises
    ------
    ModelInputError
        A row without a positive score or with an unknown verdict (names the line).
    """
    root = resources.files("models").joinpath("data")
    text = root.joinpath("official_private_pairs.csv").read_text(encoding="utf-8")
    out = []
    for i, r in enumerate(csv.DictReader(text.splitlines()), start=2):
        try:
            pub, priv = float(r["public_tps"]), float(r["private_tps"])
        except (KeyError, ValueError):
            raise ModelInputError("official pair without a numeric score",
                                  file="official_private_pairs.csv", line=i,
                                  field="public_tps") from None
        if not (pub > 0 and priv > 0) or r["verifier_verdict"] not in ("valid", "invalid"):
            raise ModelInputError("official pair with a non-positive score or unknown verdict",
                                  file="official_private_pairs.csv", line=i,
                                  field="verifier_verdict")
        m = re.search(r"\((agent\w+)\)", r["submission"])
        out.append(OfficialPair(r["submission"], pub, priv, r["verifier_verdict"],
                                bool(drafter_tuned_from_name(r["submission"])),
                                m.group(1) if m else r["submission"], r["source"]))
    ev = json.loads(root.joinpath("private_shift_evidence.json").read_text(encoding="utf-8"))
    for p in ev["pairs"]:
        if p["kind"] == "official":
            out.append(OfficialPair(
                p["config"], float(p["public"]), float(p["private"]),
                "invalid" if p["private"] < INVALID_RATIO * p["public"] else "valid",
                bool(drafter_tuned_from_name(p["config"])), "team", "private_shift_evidence.json"
                " (tps_runs.csv, " + p["note"] + ")", "5 % rule (not transcribed)"))
    return out


def _log_prior_sa(sa: np.ndarray, cv: float, df: int) -> np.ndarray:
    v = sa ** 2  # scaled-inverse-chi^2 on the variance, density carried to sigma_a
    return -(df / 2 + 1) * np.log(v) - df * cv ** 2 / (2 * v) + np.log(sa)


@dataclass
class OfficialFit:
    """Posterior of the official shift model (see the module docstring).

    Attributes
    ----------
    covariates : tuple of str
        ``("intercept",)`` or ``("intercept", "drafter_tuned")``.
    beta : numpy.ndarray, shape (p,)
        Least-squares coefficients (the posterior mean of beta, log-ratio scale).
    xtx_inv : numpy.ndarray, shape (p, p)
    weights, s2, sa, tau : numpy.ndarray, shape (G,)
        Grid posterior weights (sum 1), total pair variance ``tau^2 + 2 sigma_a^2``, and the
        grid values.
    n : int
        Pairs fitted.
    """

    covariates: tuple
    beta: np.ndarray
    xtx_inv: np.ndarray
    weights: np.ndarray
    s2: np.ndarray
    sa: np.ndarray
    tau: np.ndarray
    n: int
    pairs: list = field(default_factory=list)

    def _x(self, drafter_tuned: bool) -> np.ndarray:
        return np.array([1.0, float(bool(drafter_tuned))])[: len(self.covariates)]

    def predictive(self, drafter_tuned: bool = False, *, allocation_only: bool = False):
        """Mixture of normals of the log ratio of a new pair: ``(mean, sd, weights)``, mean a
        float and sd, weights arrays of shape (G,). ``allocation_only``: the variance of two
        allocations alone (what is left when a capture predicts the submission's shift)."""
        x = self._x(drafter_tuned)
        m = float(x @ self.beta)
        base = 2 * self.sa ** 2 if allocation_only else self.s2
        return m, np.sqrt(base + self.s2 * float(x @ self.xtx_inv @ x)), self.weights

    def cdf(self, ratio: float, drafter_tuned: bool = False) -> float:
        """``P(private / public < ratio)`` for a new pair."""
        m, sd, w = self.predictive(drafter_tuned)
        return float((w * ndtr((np.log(ratio) - m) / sd)).sum())

    def p_invalid(self, drafter_tuned: bool = False, threshold: float = INVALID_RATIO) -> float:
        """``P(private < threshold x public)`` (default the verifier's 5 % rule)."""
        return self.cdf(threshold, drafter_tuned)

    def quantile(self, q: float, drafter_tuned: bool = False) -> float:
        """Predictive quantile of the ratio (bisection on the mixture CDF, 1e-9 in log)."""
        m, sd, w = self.predictive(drafter_tuned)
        lo, hi = m - 12 * sd.max(), m + 12 * sd.max()
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if (w * ndtr((mid - m) / sd)).sum() < q:
                lo = mid
            else:
                hi = mid
        return float(np.exp(0.5 * (lo + hi)))

    def interval(self, level: float = 0.90, drafter_tuned: bool = False) -> tuple:
        """``(median, low, high)`` of the ratio of a new pair."""
        return (self.quantile(0.5, drafter_tuned), self.quantile((1 - level) / 2, drafter_tuned),
                self.quantile((1 + level) / 2, drafter_tuned))

    def draws(self, n: int, rng: np.random.Generator, drafter_tuned: bool = False) -> np.ndarray:
        """Ratio draws of a new pair, shape (n,)."""
        m, sd, w = self.predictive(drafter_tuned)
        idx = rng.choice(len(w), size=n, p=w)
        return np.exp(m + sd[idx] * rng.standard_normal(n))

    def p_invalid_interval(self, level: float = 0.90, drafter_tuned: bool = False, *,
                           threshold: float = INVALID_RATIO, n: int = 20000,
                           seed: int = 0) -> tuple[float, float]:
        """Interval of ``P(invalid | parameters)`` over the posterior of the parameters (how
        well the nine pairs pin the probability down; its mean is :meth:`p_invalid`)."""
        rng = np.random.default_rng(seed)
        x = self._x(drafter_tuned)
        idx = rng.choice(len(self.weights), size=n, p=self.weights)
        s = np.sqrt(self.s2[idx])
        mu = x @ self.beta + s * np.sqrt(float(x @ self.xtx_inv @ x)) * rng.standard_normal(n)
        p = ndtr((np.log(threshold) - mu) / s)
        lo, hi = np.quantile(p, [(1 - level) / 2, (1 + level) / 2])
        return float(lo), float(hi)

    def mean_ratio_interval(self, level: float = 0.90, drafter_tuned: bool = False) -> tuple:
        """``(point, low, high)`` of the mean ratio ``exp(x' beta)`` (t-mixture, the
        uncertainty of the fitted coefficients only)."""
        x = self._x(drafter_tuned)
        m = float(x @ self.beta)
        sd = np.sqrt(self.s2 * float(x @ self.xtx_inv @ x))
        out = []
        for q in ((1 - level) / 2, (1 + level) / 2):
            lo, hi = m - 12 * sd.max(), m + 12 * sd.max()
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if (self.weights * ndtr((mid - m) / sd)).sum() < q else (lo, mid)
            out.append(float(np.exp(0.5 * (lo + hi))))
        return float(np.exp(m)), out[0], out[1]

    def posterior_sd(self, which: str) -> tuple[float, float, float]:
        """Posterior mean and 90 % interval of ``sigma_a`` (``"allocation"``) or ``tau``
        (``"shift"``), log-ratio scale (~ a CV)."""
        v = self.sa if which == "allocation" else self.tau
        o = np.argsort(v)
        c = np.cumsum(self.weights[o])
        return (float((self.weights * v).sum()), float(v[o][np.searchsorted(c, 0.05)]),
                float(v[o][min(np.searchsorted(c, 0.95), len(v) - 1)]))


def fit_official(pairs: list[OfficialPair] | None = None, *, covariate: bool = True,
                 allocation_cv: float = ALLOCATION_CV, allocation_df: int = ALLOCATION_DF,
                 fixed_allocation_cv: float | None = None,
                 tau_scale: float = TAU_SCALE) -> OfficialFit:
    """Fit the official shift model.

    Parameters
    ----------
    pairs : list of OfficialPair, optional
        Default :func:`load_official_pairs`.
    covariate : bool
        Include ``drafter_tuned`` (dropped when every pair has the same value).
    allocation_cv, allocation_df : float, int
        Prior of the allocation CV (scaled-inverse-chi^2 on its square).
    fixed_allocation_cv : float, optional
        Hold the allocation CV at this value (sensitivity, ``rests_on``).
    tau_scale : float
        Half-normal scale of the between-submission shift SD.

    Returns
    -------
    OfficialFit

    Raises
    ------
    ModelInputError
        Fewer pairs than coefficients + 1.
    """
    pairs = load_official_pairs() if pairs is None else list(pairs)
    y = np.array([p.log_ratio for p in pairs])
    ft = np.array([float(p.drafter_tuned) for p in pairs])
    use_cov = covariate and 0 < ft.sum() < len(ft)
    X = np.c_[np.ones(len(y)), ft] if use_cov else np.ones((len(y), 1))
    n, k = X.shape
    if n < k + 1:
        raise ModelInputError(f"need at least {k + 1} official pairs, got {n}", field="pairs")
    xtx_inv = np.linalg.inv(X.T @ X)
    beta = xtx_inv @ X.T @ y
    rss = float(((y - X @ beta) ** 2).sum())
    if fixed_allocation_cv is not None:
        sa_g = np.array([float(fixed_allocation_cv)])
        lp_sa = np.zeros(1)
    else:
        sa_g = _SA
        lp_sa = _log_prior_sa(_SA, allocation_cv, allocation_df)
    S, T = np.meshgrid(sa_g, _TAU, indexing="ij")
    s2 = T ** 2 + 2 * S ** 2
    lp = (-(n - k) / 2 * np.log(s2) - rss / (2 * s2) + lp_sa[:, None]
          - T ** 2 / (2 * tau_scale ** 2))
    w = np.exp(lp - lp.max()).ravel()
    keep = w > 1e-12  # grid points below 1e-12 of the mode's weight change no printed digit
    w = w[keep] / w[keep].sum()
    return OfficialFit(("intercept", "drafter_tuned") if use_cov else ("intercept",), beta,
                       xtx_inv, w, s2.ravel()[keep], S.ravel()[keep], T.ravel()[keep], n,
                       pairs)


def leave_one_out(pairs: list[OfficialPair] | None = None, *, covariate: bool = True,
                  level: float = 0.90, by: str = "pair", **fit_kw) -> dict:
    """Leave-one-pair-out (or leave-one-agent-out, ``by="agent"``) predictive check.

    Each pair is predicted from a fit without it (without any pair of its submitter for
    ``by="agent"``): the ``level`` predictive interval of its ratio and ``P(invalid)``,
    scored against the verdict.

    Returns
    -------
    dict
        ``rows`` (``submission, drafter_tuned, verdict, observed_ratio, predicted_ratio,
        pi_low, pi_high, covered, p_invalid``), ``coverage`` (fraction), ``covered`` and
        ``n``, ``brier`` (mean squared error of P(invalid) vs the verdict), ``log_score``
        (mean log probability of the verdict; ``log 0.5 = -0.693`` is a coin), ``base_rate_brier``
        (Brier of predicting the held-in invalid rate), ``level``, ``by``, ``covariates``.
    """
    pairs = load_official_pairs() if pairs is None else list(pairs)
    rows, bb = [], []
    for i, p in enumerate(pairs):
        keep = [q for j, q in enumerate(pairs)
                if (j != i if by == "pair" else q.agent != p.agent)]
        f = fit_official(keep, covariate=covariate, **fit_kw)
        med, lo, hi = f.interval(level, p.drafter_tuned)
        pi = f.p_invalid(p.drafter_tuned)
        rows.append({"submission": p.submission, "drafter_tuned": p.drafter_tuned,
                     "verdict": p.verdict, "observed_ratio": p.private / p.public,
                     "predicted_ratio": med, "pi_low": lo, "pi_high": hi,
                     "covered": bool(lo <= p.private / p.public <= hi), "p_invalid": pi})
        base = np.mean([q.invalid for q in keep])
        bb.append((base - p.invalid) ** 2)
    inv = np.array([p.invalid for p in pairs], float)
    pv = np.clip(np.array([r["p_invalid"] for r in rows]), 1e-12, 1 - 1e-12)
    cov = sum(r["covered"] for r in rows)
    return {"rows": rows, "n": len(rows), "covered": cov, "coverage": cov / len(rows),
            "brier": float(np.mean((pv - inv) ** 2)),
            "log_score": float(np.mean(np.where(inv > 0, np.log(pv), np.log(1 - pv)))),
            "base_rate_brier": float(np.mean(bb)), "level": level, "by": by,
            "covariates": ["intercept", "drafter_tuned"] if covariate else ["intercept"]}
