"""The input record a command writes into its result (``inputs``: files with their SHA-256,
the options in click's order, the version): built by the command from its own parameters and
the defaults it decides, and handed to the renderer (:func:`planner.report.output.emit`)."""

import hashlib
import json
from pathlib import Path

import pytest

from planner import __version__

ROOT = Path(__file__).resolve().parents[3]
RUNS = "examples/runs/tps_runs.csv"
RUNS_SHA = hashlib.sha256((ROOT / RUNS).read_bytes()).hexdigest()
GROUP = "validity/free_ceiling_wallclock_realize/ab_out"
A, B = "fa2sw_precache_agentI", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"


def _embedded() -> dict:
    from planner.decide.draft import EMBEDDED_CAPTURE, default_capture_path

    return {"role": "capture", "name": EMBEDDED_CAPTURE,
            "sha256": hashlib.sha256(default_capture_path().read_bytes()).hexdigest()}


#: Records of the commands as planner wrote them when the record was read from click's
#: context: the options given (command-line order), the arguments, then the other
#: parameters in declaration order; a default the command decides is recorded as typed.
CASES = [
    (["verdict", "--a", "308.49", "--b", "308.05", "--platform", "hf-a10g-small", "--rope",
      "0.5%", "--seed", "3"],
     [], {"a": "308.49", "b": "308.05", "platform": "hf-a10g-small", "rope": "0.5%",
          "seed": 3, "paired": False, "engine": "exact", "likelihood": "normal"}),
    (["verdict", RUNS, "--run-group", GROUP, "--b", B, "--a", A, "--no-cold"],
     [{"role": "runs", "name": RUNS, "sha256": RUNS_SHA}],
     {"run_group": GROUP, "b": B, "a": A, "cold": False, "paired": False, "rope": "0.1%",
      "engine": "exact", "likelihood": "normal", "seed": 0}),
    (["repeats", "--delta", "0.44", "--platform", "hf-a10g-small", "--sims", "200"],
     [], {"delta": 0.44, "platform": "hf-a10g-small", "sims": 200, "relative": False,
          "baseline_tps": 307.08, "known_noise": False, "rule": "verdict", "rope": "0.1%",
          "assurance": 0.8, "design": "auto", "max_runs": 40, "seed": 0}),
    (["shift", "--public-tps", "411.6", "--draws", "1000"],
     [], {"public_tps": 411.6, "draws": 1000, "evidence": "official", "x": 5.0,
          "level": 0.9, "seed": 0}),
    (["draft", "--bootstrap", "200", "--mc-reps", "20", "-p", "mtp", "--policy", "pld"],
     [_embedded], {"bootstrap": 200, "mc_reps": 20, "policy": ["mtp", "pld"],
                   "lookup": "suffix", "per_prompt": "B", "correlation": "calibrated",
                   "baseline": "ar", "seed": 0, "convention": "reference",
                   "stop_at_eos": False, "cost_profile": "F", "platform": "hf-a10g-small",
                   "run_cap": 40}),
    (["draft", "sweep", "--mc-reps", "5", "--k-values", "1,2", "--n-values", "2",
      "--depth-values", "8"],
     [_embedded], {"mc_reps": 5, "k_values": "1,2", "n_values": "2", "depth_values": "8",
                   "families": "pld,ngram,suffix,mtp,suffix-first,tree",
                   "ngram_windows": "1-3,2-4,2-6,3-6", "ngram_k": "3,5,8",
                   "suffix_depths": "24", "suffix_factors": "1,2", "thresholds": "2,4,8",
                   "tree_depths": "4,8,24", "baseline": "ar", "bootstrap": 1000,
                   "seed": 0, "convention": "reference", "stop_at_eos": False,
                   "cost_profile": "F"}),
    (["calibrate", RUNS, "--platform", "local-a10g", "--metric", "decode_wall", "--workload",
      "128x512"],
     [{"role": "runs", "name": RUNS, "sha256": RUNS_SHA}],
     {"platform": "local-a10g", "metric": "decode_wall", "workload": "128x512",
      "keep_cold": False, "max_df": 10.0}),
]


@pytest.mark.parametrize("args, files, options", CASES, ids=lambda v: None)
def test_the_record_is_the_one_planner_wrote_before(cli_output, args, files, options):
    got = json.loads(cli_output([*args, "--json"]))["inputs"]
    assert got["files"] == [f() if callable(f) else f for f in files]
    assert list(got["options"].items()) == list(options.items())  # the order too
    assert got["version"] == __version__


def test_a_prior_file_is_recorded_after_the_runs(cli_output, tmp_path):
    prior = json.loads((ROOT / "models" / "data" / "noise_priors.json").read_text())["local-a10g"]
    p = tmp_path / "prior.json"
    p.write_text(json.dumps({"prior": prior}), encoding="utf-8")
    args = ["verdict", "--a-runs", "308.1,307.9", "--b-runs", "309.0,309.4", "--prior", str(p),
            "--json"]
    files = json.loads(cli_output(args))["inputs"]["files"]
    assert [(f["role"], f["name"]) for f in files] == [("prior", str(p))]
    assert files[0]["sha256"] == hashlib.sha256(p.read_bytes()).hexdigest()


def test_files_are_listed_in_click_order_whatever_the_command_line_order(cli_output, tmp_path):
    """click takes the positional CAPTURE after every option: --cost-file is listed first
    even when the capture comes first on the command line."""
    cost = tmp_path / "cost.json"
    cost.write_text(json.dumps({"verify_base_ms": 6.5}), encoding="utf-8")
    args = ["draft", "examples/captures/ar_reference_bf16.jsonl.gz", "--cost-file", str(cost),
            "--bootstrap", "200", "--mc-reps", "20", "--json"]
    files = json.loads(cli_output(args))["inputs"]["files"]
    assert [f["role"] for f in files] == ["cost_file", "capture"]


def test_a_report_keeps_the_saved_record(cli_output, tmp_path):
    saved = tmp_path / "v.json"
    saved.write_text(cli_output(["verdict", "--a", "308.49", "--b", "308.05", "--json"]),
                     encoding="utf-8")
    md = tmp_path / "v.md"
    cli_output(["report", str(saved), "--md", str(md)])
    text = md.read_text(encoding="utf-8")
    assert "308.49" in text and str(saved) not in text  # the verdict's inputs, not report's


def test_the_record_is_built_without_the_cli_framework():
    """The renderer layer reads no click context: the record is a function of its
    parameters; a NamedFile is recorded by its name with its content's hash."""
    from planner.report.output import NamedFile, input_record

    rec = input_record({"runs": ROOT / RUNS, "capture": NamedFile("embedded:x", ROOT / RUNS),
                        "as_json": True, "seed": 1, "platform": None, "policy": []})
    assert rec == {"files": [{"role": "runs", "name": str(ROOT / RUNS), "sha256": RUNS_SHA},
                             {"role": "capture", "name": "embedded:x", "sha256": RUNS_SHA}],
                   "options": {"seed": 1}, "version": __version__}


def test_the_renderer_layer_imports_no_cli_framework_nor_the_draft_decision():
    """planner/report/ (function-level imports too) imports neither typer, click, planner.cli
    nor planner.decide.draft: the record reaches it as a plain dict."""
    import ast

    banned = ("typer", "click", "planner.cli", "planner.decide.draft")
    for path in sorted((ROOT / "planner" / "report").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not any(name == b or name.startswith(b + ".") for b in banned), \
                    f"{path.relative_to(ROOT)} imports {name}"
