"""Inputs of ``planner repeats`` / ``planner budget``: owned hardware states GPU-hours
(never ``$0.00`` beside them), one grammar for repeats' list options (``--design``,
``--rule``), and a ``--prior`` file (or a plan's prior file) recorded among the inputs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from planner.errors import InputError
from planner.decide.rule import parse_rule

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
A, B = "fa2sw_precache_agentI", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"


def _prior_file(tmp_path: Path) -> Path:
    d = json.loads((ROOT / "models" / "data" / "noise_priors.json").read_text())["local-a10g"]
    p = tmp_path / "prior.json"
    p.write_text(json.dumps({"prior": d}), encoding="utf-8")
    return p


# -- R1: owned hardware ($0/h): the cost is GPU-hours, in every sentence --------------------

@pytest.fixture(scope="module")
def owned_result(tmp_path_factory):
    from planner.cli import main

    md = tmp_path_factory.mktemp("own") / "r.md"
    args = ["repeats", "--delta", "0.5", "--relative", "--runs", str(RUNS), "--a", A, "--b", B,
            "--platform", "local-a10g", "--sims", "300"]
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(args + ["--json"])
    r = json.loads(buf.getvalue())
    with contextlib.redirect_stdout(io.StringIO()):
        main(args + ["--md", str(md)])
    return r, md.read_text(encoding="utf-8")


def test_owned_hardware_allocation_reason_states_gpu_hours(owned_result):
    r, _ = owned_result
    alloc = r["allocation"]
    n = alloc["candidates"][0]["runs_per_arm"]
    row = next(d for d in r["designs"] if d["design"] == "separate" and d["runs_per_arm"] == n
               and d.get("runs_per_instance") == alloc["runs_per_instance"])
    assert row["cost_usd"] == 0 and row["gpu_hours"] > 0
    # the exact wording, with the GPU-h the designs table shows for that design
    assert alloc["reason"].endswith(f"cheapest of 1 candidate: {n} runs per arm reach "
                                    f"assurance 0.8 for {row['gpu_hours']:.2f} GPU-h")
    assert alloc["reason"].endswith("for 0.15 GPU-h")
    assert "$0.00" not in json.dumps(r)


def test_owned_hardware_markdown_shows_no_zero_dollars(owned_result):
    _, md = owned_result
    assert "$0.00" not in md and "for 0.15 GPU-h" in md


def test_priced_hardware_reason_keeps_dollars(cli):
    code, out, err = cli("repeats", "--delta", "1", "--relative", "--platform", "hf-a10g-small",
                         "--sims", "300", "--json")
    assert code == 0, err
    reason = json.loads(out)["allocation"]["reason"]
    assert reason.rsplit(" for ", 1)[1].startswith("$") and "GPU-h" not in reason


def _local_plan(tmp_path: Path, prior: str | None = None) -> Path:
    p = tmp_path / "plan.toml"
    p.write_text("[plan]\ntitle = \"local\"\nplatform = \"local-a10g\"\nbaseline_tps = 308.0\n"
                 + (f"prior = \"{prior}\"\n" if prior else "")
                 + "[budget]\nmax_runs = 30\nmax_runs_per_arm = 20\n\n[[comparison]]\n"
                 "name = \"c1\"\nbaseline = \"x\"\ncandidate = \"y\"\ndelta_tps = 2.0\n"
                 "delta_sd = 0.5\n\n[[comparison]]\nname = \"c2\"\nbaseline = \"x\"\n"
                 "candidate = \"z\"\ndelta_tps = 1.0\ndelta_sd = 0.5\n", encoding="utf-8")
    return p


def test_budget_on_owned_hardware_shows_gpu_hours_not_zero_dollars(cli, tmp_path):
    plan = _local_plan(tmp_path)
    md, html = tmp_path / "b.md", tmp_path / "b.html"
    code, out, err = cli("budget", plan, "--sims", "100", "--md", md, "--html", html)
    assert code == 0, err
    for text in (out, md.read_text(encoding="utf-8"), html.read_text(encoding="utf-8")):
        assert "$0.00" not in text
        assert "on owned hardware ($0/h: the cost is GPU-hours)" in text
    assert "| owned |" in md.read_text(encoding="utf-8")
    code, out, _ = cli("budget", plan, "--sims", "100", "--json")
    t = json.loads(out)["totals"]
    md_text = md.read_text(encoding="utf-8")
    assert f"{t['runs']} runs, {t['gpu_hours']:.2f} GPU-h expected;" in md_text
    assert f"runs to its cap: {t['worst_case_gpu_hours']:.2f} GPU-h" in md_text


# -- R2: one grammar for --design and --rule ------------------------------------------------

@pytest.mark.parametrize("option,value", [
    ("--design", "separate,"), ("--design", ",separate"), ("--design", "separate,,paired"),
    ("--design", "separate, paired"), ("--design", "auto,"),
    ("--rule", "superiority:"), ("--rule", "superiority:0.95:"), ("--rule", "verdict:"),
    ("--rule", "superiority::0.9"), ("--rule", " verdict"), ("--rule", "superiority: 0.9"),
])
def test_list_options_refuse_empty_items_and_spaces(cli, option, value):
    code, out, err = cli("repeats", "--delta", "1", option, value, "--sims", "100")
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and f"field '{option}'" in err
    assert repr(value) in err  # the value as typed, so the stray part is visible


def test_rule_grammar_keeps_the_valid_spellings():
    assert parse_rule("verdict") == ("verdict", 0.95)
    assert parse_rule("superiority") == ("superiority", 0.95)
    assert parse_rule("superiority:0.9") == ("superiority", 0.9)
    assert parse_rule("Equivalence") == ("equivalence", 0.95)
    with pytest.raises(InputError, match="not a probability"):
        parse_rule("superiority:9_0")  # the one number grammar


def test_design_list_uses_the_shared_list_grammar():
    import planner.decide.draft
    from planner.io import _parse
    from planner.cli.repeats import _designs

    assert planner.decide.draft.split_items is _parse.split_items  # one grammar, draft's and repeats'
    assert _designs("separate,paired") == ("separate", "paired")
    assert _designs("auto") == ("separate", "paired", "sequential")


# -- V9: a prior file is a recorded input (name + sha256) -----------------------------------

def test_repeats_records_its_prior_file(cli, tmp_path):
    p = _prior_file(tmp_path)
    code, out, err = cli("repeats", "--delta", "1", "--relative", "--platform", "local-a10g",
                         "--prior", p, "--sims", "100", "--max-runs", "3", "--json")
    assert code == 0, err
    ins = json.loads(out)["inputs"]
    assert ins["files"] == [{"role": "prior", "name": str(p),
                             "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}]
    assert ins["options"]["prior"] == str(p)
    code, out, _ = cli("repeats", "--delta", "1", "--relative", "--prior", "local-a10g",
                       "--sims", "100", "--max-runs", "3", "--json")
    assert code == 0 and json.loads(out)["inputs"]["files"] == []  # a name is no file


def test_budget_records_a_plan_prior_file(cli, tmp_path):
    p = _prior_file(tmp_path)
    plan = _local_plan(tmp_path, prior=str(p))
    code, out, err = cli("budget", plan, "--sims", "100", "--json")
    assert code == 0, err
    files = json.loads(out)["inputs"]["files"]
    assert [f["role"] for f in files] == ["plan", "prior"]
    assert files[1] == {"role": "prior", "name": str(p),
                        "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
