"""Platform names: letter case and aliases fold to one platform, everywhere a name is read."""

from __future__ import annotations

import json

import pytest

from planner.io.platforms import platform_key, platform_prior
from planner.decide.costs import cost_model
from planner.io.plan_file import read_plan
from planner.decide.priors import resolve_prior


@pytest.mark.parametrize("name, key", [("hf-a10g-small", "hf-a10g-small"),
                                       ("HF-A10G-Small", "hf-a10g-small"),
                                       (" hf ", "hf-a10g-small"),
                                       ("Official", "hf-a10g-small"),
                                       ("LOCAL-A10G", "local-a10g"),
                                       ("Published-N4", "published-n4"),
                                       ("nope", None), ("", None), (None, None)])
def test_platform_key_folds_case_and_aliases(name, key):
    assert platform_key(name) == key


def test_prior_and_cost_model_do_not_depend_on_case():
    assert platform_prior("HF-A10G-SMALL").to_dict() == platform_prior("hf-a10g-small").to_dict()
    assert cost_model("HF-A10G-Large") == cost_model("hf-a10g-large")
    assert cost_model("A10G-Small") == cost_model("a10g-small")
    with pytest.raises(KeyError):
        platform_prior("hf-a100")
    up = resolve_prior("auto", "HF-A10G-Small", metric="decode_wall", workload="128x512")
    lo = resolve_prior("auto", "hf-a10g-small", metric="decode_wall", workload="128x512")
    assert up.level == lo.level
    assert up.prior.to_dict() == lo.prior.to_dict() and up.cell == lo.cell


def test_plan_file_platform_is_folded_to_its_key(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text('[plan]\nplatform = "HF-A10G-Small"\nbaseline_tps = 300\n'
                    '[budget]\ntotal_usd = 20\n'
                    '[[comparison]]\nname = "x"\nbaseline = "a"\ncandidate = "b"\ndelta_tps = 1.0\n'
                    'platform = "Published-N4"\n')
    p = read_plan(plan)
    assert p.platform == "hf-a10g-small"
    assert p.comparisons[0].platform == "published-n4"
    plan.write_text(plan.read_text().replace("Published-N4", "hf-a100"))
    with pytest.raises(Exception, match="unknown platform 'hf-a100'"):
        read_plan(plan)


def test_repeats_reads_the_platform_in_any_case(cli):
    runs = []
    for name in ("hf-a10g-small", "HF-A10G-SMALL"):
        code, out, err = cli("repeats", "--delta", "0.9", "--platform", name,
                             "--design", "separate", "--sims", "200", "--seed", "3", "--json")
        assert code == 0, err
        r = json.loads(out)
        runs.append((r["designs"], r["recommended"]))
    assert runs[0] == runs[1]


def test_underscores_and_prior_words_in_any_case(cli):
    assert platform_key("hf_a10g_small") == "hf-a10g-small"
    a = resolve_prior("WEAK", "hf-a10g-small")
    assert a.level == "weak" and a.prior is None
    b = resolve_prior(" Official ", None)
    assert b.label == "platform:hf-a10g-small"
    code, _, err = cli("verdict", "examples/runs/tps_runs.csv", "--a", "A", "--b", "B",
                       "--format", "foo")
    from planner.io.formats import format_names

    assert code == 2 and f"unknown format 'foo' (known: {', '.join(format_names())})" in err
    assert "field '--format'" in err


def test_shift_refuses_options_it_would_ignore(cli):
    code, _, err = cli("shift", "--public-tps", "480", "--public-capture",
                       "tests/fixtures/shift_aime2026_p128.jsonl.gz")
    assert code == 2 and "field '--public-capture'" in err and "--private-capture" in err
    code, _, err = cli("shift", "--public-tps", "480", "--private-capture",
                       "tests/fixtures/shift_aime2026_p128.jsonl.gz", "--evidence", "proxy")
    assert code == 2 and "field '--evidence'" in err
