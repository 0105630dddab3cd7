"""``planner repeats`` and ``planner.repeats.plan_repeats``: JSON, recommendation, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from models.noise import platform_prior
from planner.errors import InputError
from planner.repeats import plan_repeats

KEYS = {"design", "runs_per_arm", "assurance", "false_claim_rate", "gpu_hours", "cost_usd"}


def test_json_designs_and_recommendation(cli):
    code, out, err = cli("repeats", "--delta", "-5.82", "--platform", "published-n4",
                         "--sims", "600", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["command"] == "repeats"
    assert r["designs"] and all(KEYS <= set(d) for d in r["designs"])
    rec = r["recommended"]
    assert rec is not None and KEYS <= set(rec)
    assert rec["assurance"] >= 0.8 and rec["false_claim_rate"] <= 0.05
    assert rec["design"] == "separate" and rec["runs_per_arm"] <= 3
    # cheapest among the qualifying designs
    ok = [d for d in r["designs"] if d["meets_target"] and d["false_claim_ok"]]
    assert rec["cost_usd"] == min(d["cost_usd"] for d in ok)
    # published-n4 pins sigma: no paired rows by default
    assert all(d["design"] != "paired" for d in r["designs"])
    seq = [d for d in r["designs"] if d["design"] == "sequential"]
    assert seq and all("expected_runs_per_arm" in d and "max_cost_usd" in d for d in seq)


def test_small_claim_not_reachable_within_cap(cli):
    code, out, err = cli("repeats", "--delta", "0.44", "--platform", "published-n4",
                         "--design", "separate", "--sims", "400", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["recommended"] is None
    assert "reaches assurance" in r["reason"]
    assert r["beyond_cap"]["runs_per_arm"] > 500          # ~2,300 per arm at ROPE 0.1 %


def test_python_api_matches_cli(cli):
    code, out, _ = cli("repeats", "--delta", "0.5", "--relative", "--platform", "hf-a10g-small",
                       "--design", "separate,paired", "--max-runs", "8", "--sims", "300",
                       "--seed", "3", "--json")
    assert code == 0
    a = json.loads(out)
    b = plan_repeats(0.5, relative=True, prior=platform_prior("hf-a10g-small"),
                     designs=("separate", "paired"), max_runs=8, sims=300, seed=3).to_dict()
    assert [d["assurance"] for d in a["designs"]] == [d["assurance"] for d in b["designs"]]
    assert [d["cost_usd"] for d in a["designs"]] == pytest.approx(
        [d["cost_usd"] for d in b["designs"]])


def test_delta_draws_accepted():
    draws = np.random.default_rng(0).normal(3.0, 1.0, 500)
    r = plan_repeats(draws, prior=platform_prior("hf-a10g-small"), designs=("paired",),
                     max_runs=6, sims=300)
    assert r.effect["kind"] == "distribution"
    assert r.inputs["delta"] == {"draws": 500, "mean": pytest.approx(float(draws.mean()))}
    assert 0 <= r.designs[0].assurance <= 1


def test_seed_reproducible(cli):
    args = ("repeats", "--delta", "2", "--design", "separate", "--max-runs", "6", "--sims",
            "300", "--json", "--seed", "5")
    _, o1, _ = cli(*args)
    _, o2, _ = cli(*args)
    assert o1 == o2  # byte for byte: timings are not in the JSON


def test_terminal_and_markdown(cli, tmp_path):
    md = tmp_path / "rep.md"
    code, out, err = cli("repeats", "--delta", "-5.82", "--platform", "published-n4",
                         "--design", "separate", "--max-runs", "4", "--sims", "300",
                         "--md", str(md))
    assert code == 0, err
    assert "Recommended" in out and "assurance" in out
    text = md.read_text()
    assert text.startswith("# How many runs") and "| design |" in text


def test_existing_runs(cli, runs_csv):
    a = "fa2sw_precache_agentI"
    b = "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"
    code, out, err = cli("repeats", "--runs", runs_csv, "--a", a, "--b", b, "--platform",
                         "local-a10g", "--metric", "decode_wall", "--workload", "128x512",
                         "--design", "paired", "--max-runs", "4", "--sims", "300", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["existing"]["n_a"] > 0 and r["existing"]["label"]
    assert r["effect"]["kind"] == "distribution"
    assert r["inputs"]["existing_runs"] > 0


@pytest.mark.parametrize("args,field", [
    (("--delta", "-1", "--rule", "superiority:0.95"), "--delta"),
    (("--delta", "0", "--rule", "superiority"), "--delta"),
    (("--delta", "1", "--assurance", "1.5"), "--assurance"),
    (("--delta", "1", "--assurance", "0"), "--assurance"),
    (("--delta", "1", "--max-cost", "0.01"), "--max-cost"),
    (("--delta", "1", "--max-runs", "0"), "--max-runs"),
    (("--delta", "1", "--rule", "bogus"), "--rule"),
    (("--delta", "1", "--design", "bogus"), "--design"),
    (("--delta", "0", "--rope", "0"), "--delta"),
    (("--rule", "verdict"), "--delta"),
])
def test_bad_input_is_one_line_exit_2(cli, args, field):
    code, out, err = cli("repeats", "--sims", "200", *args)
    assert code == 2
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err
    assert field in lines[0]


def test_api_errors():
    pr = platform_prior("hf-a10g-small")
    with pytest.raises(InputError):
        plan_repeats(-0.4, prior=pr, rule="superiority")
    with pytest.raises(InputError):
        plan_repeats(0.4, prior=pr, target=1.0)
    with pytest.raises(InputError):
        plan_repeats(0.4, prior=pr, max_cost=0.05)


@pytest.mark.parametrize("args,field,words", [
    (("--delta", "1", "--pairs-per-instance", "0"), "--pairs-per-instance", [">= 1"]),
    (("--delta", "1", "--runs-per-instance", "0"), "--runs-per-instance", [">= 1"]),
    (("--delta", "1", "--platform", "mars"), "--platform", ["unknown platform 'mars'"]),
    (("--delta", "1", "--batch", "0"), "--batch", [">= 1"]),
    (("--a", "A", "--b", "B", "--delta", "1"), "--a", ["only apply with --runs"]),
    (("--delta", "1", "--workload", "128x512"), "--workload", ["only apply with --runs"]),
    (("--delta", "1", "--sims", "5000000"), "--sims", ["100,000"]),
    (("--delta", "1", "--seed", "-1"), "--seed", []),
])
def test_option_errors_name_the_option(cli, args, field, words):
    code, out, err = cli("repeats", *args)
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert field in lines[0] and all(w in lines[0] for w in words), lines[0]
    if field != "--seed":
        assert f"field '{field}'" in lines[0]


def test_platform_alias_sizes(cli):
    code, out, err = cli("repeats", "--delta", "5", "--platform", "hf", "--design", "paired",
                         "--max-runs", "4", "--sims", "200", "--json")
    assert code == 0, err


def test_given_delta_with_runs_is_what_the_note_says(cli, runs_csv):
    a = "fa2sw_precache_agentI"
    b = "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"
    code, out, err = cli("repeats", "--runs", runs_csv, "--a", a, "--b", b, "--platform",
                         "local-a10g", "--metric", "decode_wall", "--workload", "128x512",
                         "--design", "paired", "--max-runs", "4", "--sims", "300", "--delta",
                         "40", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["effect"]["kind"] == "fixed" and r["effect"]["mean_tps"] == pytest.approx(40)
    notes = " ".join(r["notes"])
    assert "current posterior of Δ" not in notes and "given Δ = 40 TPS" in notes
    assert r["effect"]["source"] == "delta"


def test_md_never_overwrites_the_runs(cli, runs_csv, tmp_path):
    import shutil

    src = tmp_path / "runs.csv"
    shutil.copy(runs_csv, src)
    before = src.read_bytes()
    code, out, err = cli("repeats", "--runs", src, "--a", "x", "--b", "y", "--sims", "200",
                         "--md", src)
    assert code == 2 and "field '--md'" in err and src.read_bytes() == before
