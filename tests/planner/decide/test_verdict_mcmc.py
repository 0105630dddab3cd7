"""The verdict on the MCMC engine: a starved sampler fails its diagnostics and the verdict
says undecided (the engine itself is tested in tests/models/stats/test_mcmc.py)."""

from pathlib import Path

import models.stats.tps_mcmc as tm
from models.stats.noise import platform_prior
from planner.io.runs import read_runs
from planner.decide.verdict import verdict

RUNS = Path(__file__).resolve().parents[3] / "examples" / "runs" / "tps_runs.csv"


def test_bad_fit_makes_verdict_undecided(monkeypatch):
    table = read_runs(RUNS).filter(run_group="validity/free_ceiling_wallclock_realize/ab_out")
    a, b = "fa2sw_precache_agentI", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"
    prior = platform_prior("local-a10g")
    # without the cold term: its one-sided mixture prior leaves this case short of tail ESS
    # (198 < 400 after the extension), which the engine rightly reports as not decisive
    good = verdict(table, a, b, prior=prior, engine="mcmc", rope="0.1%", use_cold=False)
    assert good.diagnostics["ok"] and good.label == "B better"

    real = tm.fit_mcmc

    def starved(data, prior, **kw):
        kw.update(draws=20, tune=5)
        return real(data, prior, **kw)

    monkeypatch.setattr(tm, "fit_mcmc", starved)
    bad = verdict(table, a, b, prior=prior, engine="mcmc", rope="0.1%", use_cold=False)
    assert bad.diagnostics["ok"] is False
    assert bad.label == "undecided" and bad.delta_curve is None
