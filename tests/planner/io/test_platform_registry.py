"""The platforms registry is the one home of a platform: a platform declared there (with a new
cost flavor, reusing a measured noise cell) is accepted by verdict, repeats and budget, priced
at its own rate, given its cell's noise prior and listed in the help."""

from __future__ import annotations

import json

import pytest

from models.stats.noise import platform_prior as cell_prior
from planner.decide.costs import FLAVORS, PLATFORM_FLAVOR, cost_model
from planner.errors import InputError
from planner.io import platforms as P
from planner.io.plan_file import read_plan

L4_FLAVOR = P.Flavor("l4x1", 0.80, 3.0, 4.0, True, "test: HF Jobs l4x1")
L4 = P.Platform("hf-l4x1", "l4x1", "hf-a10g-small", ("l4",), "HF Jobs l4x1 (test)")

_RUNS = "config,tps,instance,platform\n" + "".join(
    f"{c},{t},{c}{k},L4\n" for k, (c, t) in enumerate(
        [("A", 300.1), ("A", 301.2), ("A", 299.8), ("B", 303.0), ("B", 302.4), ("B", 304.1)]))

_PLAN = ('[plan]\nplatform = "{platform}"\nbaseline_tps = 300\n'
         '[budget]\ntotal_usd = 20\nassurance = 0.8\nmax_runs_per_arm = 12\n'
         '[[comparison]]\nname = "x"\nbaseline = "a"\ncandidate = "b"\ndelta_tps = 3.0\n')


@pytest.fixture
def l4(monkeypatch):
    monkeypatch.setattr(P, "FLAVORS", P.FLAVORS + (L4_FLAVOR,))
    monkeypatch.setattr(P, "PLATFORMS", P.PLATFORMS + (L4,))


def test_a_registered_platform_is_named_folded_and_priced(l4):
    assert P.canonical_platform(" L4 ") == "hf-l4x1" == P.platform_key("HF_L4X1")
    assert P.noise_cell("l4") == "hf-a10g-small"
    assert "hf-l4x1" in P.known_platforms() and P.PLATFORM_ALIASES["l4"] == "hf-l4x1"
    assert PLATFORM_FLAVOR["hf-l4x1"] == "l4x1" and FLAVORS["l4x1"].price_per_hour == 0.80
    cm = cost_model("L4")
    assert (cm.flavor, cm.price_per_hour, cm.startup_minutes) == ("l4x1", 0.80, 4.0)
    # 2 allocations of 3 runs: 4 + 3 x 3 = 13 min each, billed per minute at $0.80/h
    c = cm.cost([3, 3])
    assert c["billed_minutes"] == 26.0 and c["cost_usd"] == pytest.approx(26 * 0.80 / 60)
    assert P.platform_prior("l4") == cell_prior("hf-a10g-small")
    assert "hf-l4x1 (or l4): $0.8/h" in P.platform_help()


def test_without_its_registry_line_the_platform_is_unknown(tmp_path):
    assert P.canonical_platform("l4") == "l4" and P.platform_key("l4") is None
    with pytest.raises(InputError, match="unknown platform or flavor 'l4'"):
        cost_model("l4")
    plan = tmp_path / "plan.toml"
    plan.write_text(_PLAN.format(platform="l4"))
    with pytest.raises(InputError, match="unknown platform 'l4'"):
        read_plan(plan)


def test_repeats_prices_a_registered_platform(l4, cli):
    code, out, err = cli("repeats", "--delta", "0.9", "--platform", "L4", "--design",
                         "separate", "--sims", "200", "--seed", "3", "--json")
    assert code == 0, err
    r = json.loads(out)["inputs"]
    assert r["platform"] == "hf-l4x1"
    assert r["cost_model"]["price_per_hour"] == 0.80 and r["cost_model"]["startup_minutes"] == 4
    assert r["prior"]["label"] == "platform:hf-a10g-small"  # the cell the registry names


def test_verdict_reads_a_registered_platform_from_the_table(l4, cli, tmp_path):
    p = tmp_path / "runs.csv"
    p.write_text(_RUNS)
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B", "--json")
    assert code == 0, err
    v = json.loads(out)
    assert v["prior"]["label"] == "platform:hf-a10g-small"
    assert v["prior"]["tau"] == cell_prior("hf-a10g-small").tau.to_dict()


def test_budget_accepts_and_prices_a_registered_platform(l4, cli, tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text(_PLAN.format(platform="L4"))
    assert read_plan(plan).platform == "hf-l4x1"
    code, out, err = cli("budget", plan, "--seed", "1", "--sims", "200", "--json")
    assert code == 0, err
    b = json.loads(out)
    c = b["comparisons"][0]
    assert c["platform"] == "hf-l4x1" and c["prior"] == "platform:hf-a10g-small"
    assert b["budget"]["price_per_hour"] == 0.80
