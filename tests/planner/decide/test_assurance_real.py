"""Assurance predictions held against the planner on shipped data: realised decisive fractions
of real A/B and A/A subsamples, and the analysis grid on the budget example. (The model-only
assurance tests are in tests/models/stats/test_assurance.py; these need the planner's runs reader
and budget.)"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from models.stats.assurance import Truth, evaluate_fixed
from models.stats.assurance_analysis import analysis_grid
from models.stats.decision import label_from
from models.stats.designs import paired_layout
from models.stats.noise import platform_prior
from models.stats.tps_exact import fit_exact
from models.stats.tps_model import TPSData

BASE = 307.08
ROPE = math.log1p(0.001)                     # the default 0.1 %
HF = platform_prior("hf-a10g-small")
# ------------------------------------------------------------------------------------------
# predicted assurance vs the realised fraction of decisive verdicts on the shipped runs
# ------------------------------------------------------------------------------------------
def _group_runs(runs_csv, group):
    from planner.io.runs import read_runs

    t = read_runs(runs_csv)
    return [r for r in t.runs if r.run_group == group and r.phase != "warmup"
            and r.metric == "decode_wall"]


def test_real_ab_subsamples_match_prediction(runs_csv):
    """A/B on one local GPU (validity/triton_attn_joint_autotune/ab_out: 6 + 6 fresh-server
    runs, B ~1.1 % slower): predict the assurance of k = 2 interleaved pairs from the posterior
    of the 12 runs, and compare with the fraction of 'A better' verdicts over all 15 x 15
    subsamples of 2 + 2 real runs."""
    prior = platform_prior("local-a10g")
    rs = _group_runs(runs_csv, "validity/triton_attn_joint_autotune/ab_out")
    cfg = list(dict.fromkeys(r.config for r in rs))
    ya = np.log([r.tps for r in rs if r.config == cfg[0]])
    yb = np.log([r.tps for r in rs if r.config == cfg[1]])
    full = TPSData.from_arrays(np.exp(np.r_[ya, yb]), ["A"] * ya.size + ["B"] * yb.size,
                               ["gpu"] * (ya.size + yb.size))
    post = fit_exact(full, prior)
    g = np.random.default_rng(0).choice(post.w.size, 4000, p=post.w / post.w.sum())
    L = np.linalg.cholesky(post.cov[g][:, :2, :2])
    beta = post.mean[g][:, :2] + np.einsum("dpq,dq->dp", L,
                                           np.random.default_rng(1).standard_normal((4000, 2)))
    tr = Truth(post.tau[g], post.sigma[g], beta[:, 1] - beta[:, 0], np.zeros(4000))
    k = 2
    pred = evaluate_fixed(paired_layout(k), prior, tr, ROPE, error_rates=False).assurance
    hits = []
    for ia in itertools.combinations(range(ya.size), k):
        for ib in itertools.combinations(range(yb.size), k):
            d = TPSData.from_arrays(np.exp(np.r_[ya[list(ia)], yb[list(ib)]]),
                                    ["A"] * k + ["B"] * k, ["gpu"] * (2 * k))
            hits.append(label_from(fit_exact(d, prior).delta(0, 1, ROPE)) == "A better")
    real = float(np.mean(hits))
    assert abs(pred - real) <= 0.05, (pred, real)


def test_real_aa_splits_match_prediction(runs_csv):
    """A/A on one local GPU (validity/g1_sigma_measured: 12 fresh-server runs of one config):
    split into 4 + 4 at random, equivalence at a ROPE of ±0.03 %; the predicted probability of
    'equivalent' (noise from the posterior of the 12 runs, Δ = 0) against the realised
    fraction over 300 random splits."""
    prior = platform_prior("local-a10g")
    rope = math.log1p(0.0003)
    y = np.log([r.tps for r in _group_runs(runs_csv, "validity/g1_sigma_measured")])
    post = fit_exact(TPSData.from_arrays(np.exp(y), ["A"] * y.size, ["gpu"] * y.size), prior)
    g = np.random.default_rng(0).choice(post.w.size, 4000, p=post.w / post.w.sum())
    tr = Truth(post.tau[g], post.sigma[g], np.zeros(4000), np.zeros(4000))
    k = 4
    pred = evaluate_fixed(paired_layout(k), prior, tr, rope, rule="equivalence",
                          error_rates=False).assurance
    rng = np.random.default_rng(5)
    hits = []
    for _ in range(300):
        idx = rng.permutation(y.size)
        d = TPSData.from_arrays(np.exp(np.r_[y[idx[:k]], y[idx[k:2 * k]]]),
                                ["A"] * k + ["B"] * k, ["gpu"] * (2 * k))
        hits.append(label_from(fit_exact(d, prior).delta(0, 1, rope)) == "equivalent")
    real = float(np.mean(hits))
    assert 0.1 < pred < 0.9                       # a setting where the check means something
    assert abs(pred - real) <= 0.05, (pred, real)


@pytest.mark.slow
def test_default_grid_matches_1200_points_on_budget_example(monkeypatch):
    """The default analysis grid (g_max = 600, ≈ 29 % less CPU) against the former 1,200
    points on the budget example (examples/plan.toml, 2,000 sims, seed 0): every assurance of
    every design curve, and the recommended purchases, within 0.005."""
    import functools
    from pathlib import Path

    import models.stats.assurance as asr
    import models.stats.sequential as seq
    from planner.decide.budget import plan_budget, read_plan

    plan = read_plan(Path(__file__).resolve().parents[3] / "examples" / "plan.toml")
    assert analysis_grid.__kwdefaults__["g_max"] == 600
    new = plan_budget(plan, sims=2000, seed=0).to_dict()
    fine = functools.partial(analysis_grid, g_max=1200)
    monkeypatch.setattr(asr, "analysis_grid", fine)       # fixed designs
    monkeypatch.setattr(seq, "analysis_grid", fine)       # sequential plans
    old = plan_budget(plan, sims=2000, seed=0).to_dict()
    checked = 0
    for cn, co in zip(new["comparisons"], old["comparisons"]):
        assert cn["name"] == co["name"] and cn["status"] == co["status"]
        rn, ro = cn["recommended"], co["recommended"]
        assert (rn is None) == (ro is None)
        if rn is not None:
            assert rn["design"] == ro["design"]
            assert abs(rn["assurance"] - ro["assurance"]) <= 0.005
        for dn, do in zip(cn["designs"], co["designs"]):
            assert dn["design"] == do["design"]
            an, ao = dn["curve"]["assurance"], do["curve"]["assurance"]
            assert len(an) == len(ao)
            for x, y in zip(an, ao):
                if x is not None and y is not None:
                    assert abs(x - y) <= 0.005, (cn["name"], dn["design"], x, y)
                    checked += 1
    assert checked > 100


