"""planner shift on the official verifier pairs (issue 21 item 3): one recommended answer
with the other modes as checks, the drafter-tuned covariate from the label or the flag,
``rests_on`` with flip points in every format, and a validation table whose rows say what
they are and what was predicted."""

import json

import pytest

from planner.decide.shift import ShiftResult, run_shift
from planner.results.rests_on import rests_on_from_list


@pytest.fixture(scope="module")
def plain():
    return run_shift(411.6, n_draws=4000).to_dict()


def test_the_issue_case_is_narrow_and_calibrated(plain):
    """`planner shift --public-tps 411.6`: was 393.9 [347.7, 446.0], P 0.46 for everyone."""
    t = plain["private_tps"]
    assert t["pi_high"] - t["pi_low"] < 25  # 98 TPS wide before
    assert plain["recommended"]["mode"] == "official"
    assert plain["p_drop"] == pytest.approx(0.256, abs=0.01)
    lo, hi = plain["recommended"]["p_drop_interval"]
    assert 0 < lo < plain["p_drop"] < hi < 1
    assert [c["mode"] for c in plain["checks"]] == ["proxy"]
    assert plain["official_fit"]["lopo"]["covered"] == 8
    assert plain["official_fit"]["lopo"]["brier"] < plain["official_fit"][
        "lopo_without_covariate"]["brier"]


def test_drafter_tuned_from_label_and_flag():
    a = run_shift(387.5, n_draws=2000, submission="osoi5-drafterft-agentI-v2").to_dict()
    b = run_shift(387.5, n_draws=2000, drafter_tuned=True).to_dict()
    c = run_shift(387.5, n_draws=2000, submission="osoi5-drafterft-x",
                  drafter_tuned=False).to_dict()
    assert a["inputs"]["drafter_tuned"] and b["inputs"]["drafter_tuned"]
    assert a["p_drop"] == b["p_drop"] == pytest.approx(0.719, abs=0.01)
    assert not c["inputs"]["drafter_tuned"] and c["p_drop"] < 0.5
    assert "read from the submission label" in a["official_fit"]["drafter_tuned_source"]


def test_rests_on_names_the_constants_and_where_p_crosses_one_half(plain):
    ro = {x["name"]: x for x in plain["rests_on"]}
    assert list(ro) == ["official_ratio", "allocation_cv", "drafter_tuned", "shift_sd_prior",
                        "shift_mode"]
    r = ro["official_ratio"]
    assert r["low"] < r["value"] < r["high"] and r["flip_at"] == pytest.approx(0.95)
    assert ro["allocation_cv"]["low"] < 0.0079 < ro["allocation_cv"]["high"]
    alt = ro["drafter_tuned"]["alternatives"]
    assert alt["not tuned"] < 0.5 < alt["tuned"] and "flips" in ro["drafter_tuned"]["note"]
    assert set(ro["shift_mode"]["alternatives"]) == {"official", "proxy"}
    for x in plain["rests_on"]:
        assert x["source"] and x["conclusion"] and x["note"]
    assert len(rests_on_from_list(plain["rests_on"])) == 5
    assert ShiftResult.from_dict(json.loads(json.dumps(plain))).to_dict() == plain


def test_validation_rows_are_labelled_and_predicted(plain):
    off = [v for v in plain["validation"] if v["check"].startswith("official pair, leave")]
    assert len(off) == 9 and all("predicted_drop_pct" in v and "p_invalid" in v for v in off)
    assert not any("in-sample" in v["check"] or v["in_sample"] for v in plain["validation"])
    from planner.report.views.shift import _val_rows
    rows = _val_rows(plain)
    assert all(r[2] != "-" for r in rows)  # every row has a predicted cell
    assert any("P(invalid)" in r[2] for r in rows)


def test_every_format_shows_rests_on_and_the_checks(plain, tmp_path):
    from planner.report.views.shift import headline, render_html, render_markdown

    h = headline(plain)
    assert "recommended: official fit (9 verifier pairs)" in h[0]
    assert h[1].startswith("check, local private-proxy pairs:")
    md = render_markdown(plain)
    assert "## Rests on" in md and "| official_ratio |" in md and "## Validation" in md
    html = render_html(plain)
    assert "<h2>Rests on</h2>" in html and "official_ratio" in html
    assert "data:image/png;base64," in html and "tag buy" in html


def test_capture_mode_recommends_by_agreement_with_the_official_fit():
    """Two captures of the same prompts: ratio 1.000, outside the official fit's interval
    (a private-proxy capture of the public prompts cannot show the official shift): the
    official fit stays recommended and the capture projection is a check that disagrees."""
    cap = "examples/captures/mtp_spec_on_k7_int4_frontier.jsonl.gz"
    d = run_shift(400.0, private_capture=cap, public_capture=cap, n_draws=2000).to_dict()
    assert d["private"]["mode"] == "capture" and d["ratio"]["point"] == pytest.approx(1.0,
                                                                                       abs=0.003)
    assert d["recommended"]["mode"] == "official"
    assert "outside the official fit" in d["recommended"]["why"]
    assert [c["mode"] for c in d["checks"]] == ["capture", "proxy"]
    names = [x["name"] for x in d["rests_on"]]
    assert "content_model_error" in names
    assert set(d["rests_on"][names.index("shift_mode")]["alternatives"]) == {
        "official", "proxy", "capture"}


def test_cli_flags(cli):
    code, out, err = cli("shift", "--public-tps", "388", "--submission",
                         "ext:osoi5-drafterft-syspack-v0", "--draws", "1000", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["inputs"]["drafter_tuned"] is True and d["p_drop"] > 0.5
    code, out, err = cli("shift", "--public-tps", "388", "--no-drafter-tuned",
                         "--submission", "x-drafterft", "--draws", "1000", "--json")
    assert code == 0, err
    assert json.loads(out)["inputs"]["drafter_tuned"] is False


def test_capture_projection_is_recommended_when_it_agrees(tmp_path):
    """The 57 GPQA prompts of P128 as the private capture (their measured counters: 0.952 of
    the whole set) against the calibration set: inside the official fit's interval, so the
    per-submission capture projection is recommended and the official fit is a check."""
    import gzip

    out = tmp_path / "gpqa.jsonl"
    with gzip.open("examples/captures/mtp_spec_on_k7_int4_frontier.jsonl.gz", "rt") as fh:
        recs = [json.loads(ln) for ln in fh if ln.strip()]
    out.write_text("".join(json.dumps(r) + "\n" for r in recs
                           if r["id"].startswith("gpqa_diamond")))
    d = run_shift(400.0, private_capture=str(out), n_draws=2000).to_dict()
    assert d["ratio"]["point"] == pytest.approx(0.952, abs=0.005)
    assert d["recommended"]["mode"] == "capture" and "inside" in d["recommended"]["why"]
    assert [c["mode"] for c in d["checks"]] == ["official", "proxy"]
    assert d["recommended"]["p_drop"] == d["p_drop"]
    ro = {x["name"]: x for x in d["rests_on"]}
    assert ro["shift_mode"]["value"] == "capture"
