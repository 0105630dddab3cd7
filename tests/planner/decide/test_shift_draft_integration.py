"""planner draft on prompts it was not calibrated on (issue 12 items 2-3): prediction
intervals beside the bootstrap ones, the acceptance model named, measured counters on the
calibration prompts, and hybrids built on the same per-prompt content predictions."""

import json
import subprocess
import sys

import pytest

POLICIES = ["-p", "mtp", "-p", "hybrid-max", "-p", "suffix-first", "-p", "tree"]


def _draft(capture):
    p = subprocess.run([sys.executable, "-m", "planner", "draft", capture, *POLICIES,
                        "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), p.stdout


@pytest.fixture(scope="module")
def unseen():
    return _draft("tests/fixtures/draft_small_capture.jsonl.gz")


@pytest.fixture(scope="module")
def calibration():
    return _draft("examples/captures/mtp_spec_on_k7_int4_frontier.jsonl.gz")[0]


def test_unseen_prompts_name_the_content_model_and_carry_both_intervals(unseen):
    d = unseen[0]
    assert d["acceptance"]["model"].startswith("content-walk-v8")
    assert d["acceptance"]["content_model"]["share_beyond_calibrated"] == 0.0
    assert "not the calibration prompts" in d["acceptance"]["note"]
    by = {p["policy"]: p["tokens_per_forward"] for p in d["policies"]}
    for name in ("mtp", "hybrid-max", "suffix-first", "tree"):
        t = by[name]
        # the prediction interval holds the model's error and the set effect on top of the
        # bootstrap's sampling error: never narrower than the bootstrap interval
        assert t["pi_low"] <= t["ci_low"] < t["point"] < t["ci_high"] <= t["pi_high"]
    assert by["mtp"]["pi_high"] / by["mtp"]["pi_low"] > 1.3


def test_hybrids_use_the_same_per_prompt_predictions(unseen):
    d = unseen[0]
    by = {p["policy"]: p for p in d["policies"]}
    mtp = by["mtp"]["tokens_per_forward"]["point"]
    # lookup tokens only add to the MTP chain: hybrid-max / tree >= MTP alone
    assert by["hybrid-max"]["tokens_per_forward"]["point"] >= mtp
    assert by["tree"]["tokens_per_forward"]["point"] >= mtp
    for name in ("hybrid-max", "suffix-first", "tree"):
        assert "content-walk-v8" in by[name]["numbers_from"]


def test_seeded_json_is_byte_identical(unseen):
    assert _draft("tests/fixtures/draft_small_capture.jsonl.gz")[1] == unseen[1]


def test_calibration_prompts_use_measured_counters_and_say_so(calibration):
    d = calibration
    assert d["acceptance"]["model"] == "measured per-prompt counters (calibration prompts)"
    assert d["acceptance"]["content_model"] is None
    mtp = {p["policy"]: p for p in d["policies"]}["mtp"]["tokens_per_forward"]
    # no set shift predicted on the calibration prompts: the 90 % PI is the bootstrap's
    # 90 % interval, inside its 95 % CI (about 1.645 / 1.96 of its width), not the CI itself
    assert mtp["ci_low"] < mtp["pi_low"] < mtp["point"] < mtp["pi_high"] < mtp["ci_high"]
    ratio = (mtp["pi_high"] - mtp["pi_low"]) / (mtp["ci_high"] - mtp["ci_low"])
    assert ratio == pytest.approx(1.645 / 1.96, rel=0.1)
    assert mtp["point"] == pytest.approx(3.85, abs=0.03)  # run B counters 3.851


def test_terminal_says_when_mtp_extrapolates_beyond_calibrated_positions(unseen, capsys):
    """48-token completions: no note; the same result with 37.5 % of its tokens beyond the
    512 calibrated positions prints one line with that share (terminal view only)."""
    from planner.report.views.draft import extrapolation_line, render_terminal

    d = unseen[0]
    assert extrapolation_line(d) is None
    render_terminal(d)
    assert "extrapolates" not in capsys.readouterr().out
    far = json.loads(json.dumps(d))
    far["acceptance"]["content_model"]["share_beyond_calibrated"] = 0.375
    want = ("MTP projection extrapolates: 37.5% of the capture's completion tokens lie beyond "
            "the 512 positions the acceptance model was calibrated on (not validated there).")
    assert extrapolation_line(far) == want
    render_terminal(far)
    assert want in " ".join(capsys.readouterr().out.split())
