"""planner shift on a small capture (issue 10, kind 4): the capture floors of planner draft
(planner.decide.draft.EVIDENCE_FLOORS) refuse a capture below 3 prompts / 4 tokens per prompt /
32 tokens, and below 12 prompts / 16 tokens per prompt / 512 tokens withhold P(drop)."""

import json
import subprocess
import sys

import pytest

from models.drafting.capture import load_capture
from planner.decide.draft import EVIDENCE_FLOORS
from planner.errors import InputError
from planner.decide.shift import ShiftResult, captures_evidence, run_shift

AIME = "tests/fixtures/shift_aime2026_p128.jsonl.gz"  # 14 prompts x 512 tokens


def _capture(path, prompts, tokens):
    with open(path, "w", encoding="utf-8") as f:
        for i in range(prompts):
            f.write(json.dumps({"id": f"p{i}", "prompt_token_ids": [2, 105, 7 + i],
                                "completion_token_ids": [5 + j % 5 for j in range(tokens)]})
                    + "\n")
    return str(path)


def _shift(*args):
    return subprocess.run([sys.executable, "-m", "planner", "shift", "--public-tps", "300",
                           *args], capture_output=True, text=True)


def test_shift_uses_the_draft_floors():
    assert EVIDENCE_FLOORS["refuse"] == {"prompts": 3, "tokens_per_prompt": 4, "tokens": 32}
    assert EVIDENCE_FLOORS["limited"] == {"prompts": 12, "tokens_per_prompt": 16,
                                          "tokens": 512}


@pytest.mark.parametrize("role,prompts,tokens,why", [
    ("private", 6, 2, "2 walked tokens per prompt (median) < 4; 12 walked tokens (AR steps) < 32"),
    ("private", 2, 100, "2 prompts < 3"),
    ("public", 1, 300, "1 prompts < 3"),
])
def test_cli_refuses_a_capture_below_the_floor(tmp_path, role, prompts, tokens, why):
    small = _capture(tmp_path / "tiny.jsonl", prompts, tokens)
    args = (["--private-capture", small] if role == "private"
            else ["--private-capture", AIME, "--public-capture", small])
    p = _shift(*args)
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr
    assert p.stderr.strip().count("\n") == 0, p.stderr
    assert small in p.stderr and "field 'completion_token_ids'" in p.stderr
    assert f"{role} capture: too little capture to project from: {why} " in p.stderr


def test_floor_boundaries(tmp_path):
    def level(prompts, tokens):
        cap = load_capture(_capture(tmp_path / f"c{prompts}x{tokens}.jsonl", prompts, tokens))
        return captures_evidence([("private", "c", cap)])

    ok = level(12, 43)  # 516 tokens, median 43
    assert ok["level"] == "ok" and ok["note"] is None
    assert ok["captures"][0]["tokens"] == 516 and ok["captures"][0]["reasons"] == []
    lim = level(11, 50)
    assert lim["level"] == "limited" and lim["captures"][0]["reasons"] == ["11 prompts < 12"]
    lim = level(40, 12)  # 480 tokens, median 12
    assert lim["captures"][0]["reasons"] == ["12 walked tokens per prompt (median) < 16",
                                             "480 walked tokens (AR steps) < 512"]
    assert level(3, 11)["level"] == "limited"  # 33 tokens: just above the refuse floor
    with pytest.raises(InputError, match=r"30 walked tokens \(AR steps\) < 32"):
        level(3, 10)  # 30 tokens


def test_small_capture_withholds_p_drop(tmp_path):
    small = _capture(tmp_path / "cap_3x50.jsonl", 3, 50)
    r = run_shift(300.0, private_capture=small, n_draws=2000, seed=0)
    d = r.to_dict()
    assert d["p_drop"] is None
    ev = d["evidence"]
    assert ev["level"] == "limited" and ev["floors"] == EVIDENCE_FLOORS["limited"]
    assert ev["captures"] == [{"role": "private", "file": small, "level": "limited",
                               "prompts": 3, "tokens": 150, "tokens_per_prompt": 50.0,
                               "reasons": ["3 prompts < 12",
                                           "150 walked tokens (AR steps) < 512"]}]
    assert ev["note"].startswith(f"too little evidence: private capture {small} has 3 "
                                 "prompts, 150 tokens (below the floor of planner draft")
    # the interval is still reported (numbers kept, the probability withheld)
    t = d["private_tps"]
    assert 0 < t["pi_low"] < t["point"] < t["pi_high"]
    assert ShiftResult.from_dict(json.loads(json.dumps(d))).to_dict() == d


def test_cli_small_capture_says_withheld_in_every_format(tmp_path):
    small = _capture(tmp_path / "cap_3x50.jsonl", 3, 50)
    md, html = tmp_path / "s.md", tmp_path / "s.html"
    p = _shift("--private-capture", small, "--draws", "2000", "--json", "--md", str(md),
               "--html", str(html))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["p_drop"] is None and d["evidence"]["level"] == "limited"
    want = ("P(private more than 5 % below public) withheld: too little evidence "
            "(3 prompts, 150 tokens)")
    assert want in md.read_text() and want in html.read_text()
    assert "too little evidence: private capture" in md.read_text()
    t = _shift("--private-capture", small, "--draws", "2000")
    assert t.returncode == 0, t.stderr
    flat = " ".join(t.stdout.split())
    # the capture's P is withheld (said on its check line); the recommended answer is the
    # official fit, which does not rest on the capture
    assert want in flat and "check, your captures (content model): " in flat
    assert d["recommended"]["mode"] == "official" and "withheld" in d["recommended"]["why"]
    saved = tmp_path / "s.json"
    saved.write_text(p.stdout)
    rep = subprocess.run([sys.executable, "-m", "planner", "report", str(saved)],
                         capture_output=True, text=True)
    assert rep.returncode == 0 and want in " ".join(rep.stdout.split()), rep.stderr


def test_large_enough_capture_keeps_p_drop():
    d = run_shift(400.0, private_capture=AIME, n_draws=2000, seed=0).to_dict()
    assert d["evidence"]["level"] == "ok" and d["evidence"]["note"] is None
    assert d["evidence"]["captures"][0]["prompts"] == 14
    assert d["evidence"]["captures"][0]["tokens"] == 7168
    assert isinstance(d["p_drop"], float) and 0 <= d["p_drop"] <= 1


def test_evidence_mode_and_old_saved_results_have_no_evidence():
    d = run_shift(481.53, evidence="proxy", n_draws=1000).to_dict()
    assert d["evidence"] is None and isinstance(d["p_drop"], float)
    old = {k: v for k, v in d.items() if k != "evidence"}
    assert ShiftResult.from_dict(old).evidence is None
