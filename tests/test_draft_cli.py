"""planner draft CLI: JSON schema, worth-a-run, bad input -> exit 2 one line."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from planner.draft import worth_a_run

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "tests" / "fixtures" / "draft_small_capture.jsonl.gz"


def run(*args):
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True,
                           text=True, cwd=ROOT)


def test_json_schema_small_capture():
    p = run("draft", str(SMALL), "-p", "pld", "-p", "mtp", "-p", "suffix-first",
            "--bootstrap", "200", "--mc-reps", "20", "--json", "--baseline-tps", "150")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert {"policies", "worth_a_run", "capture", "settings"} <= set(r)
    for pol in r["policies"]:
        for key in ("policy", "params", "tokens_per_forward", "mean_acceptance_length",
                    "frac_tokens_from_lookup", "runs_over_cap", "projected_tps", "worth_a_run"):
            assert key in pol
        assert set(pol["tokens_per_forward"]) >= {"point", "mean", "ci_low", "ci_high"}
    assert r["policies"][0]["policy"] == "ar"
    assert r["policies"][0]["projected_tps"]["point"] == pytest.approx(150)
    pld = r["policies"][1]
    assert pld["params"] == {"n": 2, "depth": 24}
    assert pld["tokens_per_forward"]["point"] > 1.5  # repetitive prompts
    # reproducible with --seed
    p2 = run("draft", str(SMALL), "-p", "pld", "-p", "mtp", "-p", "suffix-first",
             "--bootstrap", "200", "--mc-reps", "20", "--json", "--baseline-tps", "150")
    assert p2.stdout == p.stdout


@pytest.mark.parametrize("args", [
    ["-p", "mtp", "--k", "17"],
    ["-p", "pld", "--depth", "0"],
    ["-p", "pld", "--n", "99"],
    ["-p", "nonsense"],
    ["-p", "mtp", "--curve", "0.5,0.7"],
    ["-p", "mtp", "--k", "5", "--curve", "0.8,0.6,0.5"],
    ["--baseline-tps", "-3"],
])
def test_bad_input_exit_2_one_line(args):
    p = run("draft", str(SMALL), "--bootstrap", "50", "--mc-reps", "5", *args)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "Traceback" not in p.stderr
    assert p.stderr.startswith("planner: error:")


def test_acceptance_prompt_set_mismatch(tmp_path):
    f = tmp_path / "pp.jsonl"
    f.write_text(json.dumps({"id": "other-1", "num_drafts": 10, "num_accepted": 20,
                             "accepted_per_pos": [8, 6, 4, 1, 1, 0, 0]}) + "\n")
    before = f.read_text()
    p = run("draft", str(SMALL), "-p", "mtp", "--curve", str(f), "--bootstrap", "50")
    assert p.returncode == 2 and "does not match" in p.stderr
    assert f.read_text() == before


def test_missing_capture_exit_2():
    p = run("draft", "/nonexistent/capture.jsonl")
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_md_report_with_png(tmp_path):
    md = tmp_path / "r.md"
    p = run("draft", str(SMALL), "-p", "pld", "--bootstrap", "100", "--md", str(md))
    assert p.returncode == 0, p.stderr
    assert "tokens/forward" in md.read_text() and (tmp_path / "r.png").stat().st_size > 1000


def test_worth_a_run_rules():
    g = np.random.default_rng(0).normal(3.0, 0.3, 2000)
    w = worth_a_run(g, 1.16)
    # n = 2 (1.96 + 0.84)^2 (1.16/3)^2 ~ 2.3 -> 3 runs per arm
    assert w["worth"] and w["runs_per_arm"] in (2, 3, 4)
    assert w["cost_usd"] == pytest.approx(2 * w["runs_per_arm"] * 10 / 60)
    assert 0.9 < w["p_run_beats_baseline"] < 1
    w = worth_a_run(np.full(100, -1.0), 1.16)
    assert not w["worth"] and "<= 0" in w["verdict"]
    w = worth_a_run(np.full(100, 0.2), 1.16, cap=40)
    assert not w["worth"] and w["over_run_cap"]


def test_sweep_json():
    p = run("draft-sweep", str(SMALL), "--n-values", "1,2", "--d-values", "4,8",
            "--k-values", "2,3", "--mc-reps", "5", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["rows"]
    assert len(rows) == 1 + 4 + 2
    tps = [r["projected_tps"] for r in rows]
    assert tps == sorted(tps, reverse=True)


def test_draft_sweep_spelled_as_in_the_docs(cli):
    """`planner draft sweep` is an alias of `planner draft-sweep`."""
    code, out, err = cli("draft", "sweep", "--help")
    assert code == 0 and "Grid over pld" in out


def test_typed_results_round_trip_and_render_from_saved_json(tmp_path):
    """DraftResult / SweepResult -> JSON -> from_dict; the views and the plot work from the
    saved JSON (no bootstrap draws), the live result carries them as a typed field."""
    from planner.commands.draft import _markdown, _plot
    from planner.draft import DraftResult, SweepResult, parse_policy, run_draft, run_sweep
    from planner.errors import InputError
    from planner.report.output import to_json

    r = run_draft(SMALL, [parse_policy("pld")], n_boot=100, mc_reps=5, seed=1)
    assert isinstance(r, DraftResult)
    assert set(r.samples) == {"ar", "pld"} and r.samples["pld"].shape == (100,)
    text = to_json(r.to_dict())
    saved = json.loads(text)
    assert "samples" not in saved and "_samples" not in saved
    back = DraftResult.from_dict(saved)
    assert back.samples == {} and to_json(back.to_dict()) == text
    assert "| pld | " in _markdown(saved, None)
    png = tmp_path / "saved.png"
    _plot(saved, back.samples, png)
    assert png.stat().st_size > 1000
    s = run_sweep(SMALL, n_values=[2], d_values=[8], k_values=[2], mc_reps=5)
    assert isinstance(s, SweepResult) and [x["policy"] for x in s.rows].count("pld") == 1
    assert SweepResult.from_dict(json.loads(to_json(s.to_dict()))) == s
    with pytest.raises(InputError):
        DraftResult.from_dict(s.to_dict())
