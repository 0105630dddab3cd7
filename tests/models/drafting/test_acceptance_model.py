"""Content acceptance model v2 (issue 12): honest nested leave-one-group-out, the n-gram
reference, the stack transfer and the capture prediction. Model layer only (no planner)."""

import copy

import numpy as np
import pytest

from models.drafting import acceptance_model as am
from models.drafting.acceptance import default_model
from models.drafting.capture import load_capture

P128 = "examples/captures/mtp_spec_on_k7_int4_frontier.jsonl.gz"


def test_calibration_table_pooled_counters_and_per_fold_xng():
    t = am.load_calibration()
    assert t["prompt_set_hash"] == "43df0c18b56abde3" and len(t["rows"]) == 128
    assert t["features"] == list(am.FEATURES)
    nd = sum(r["num_drafts"] for r in t["rows"])
    na = sum(r["num_accepted"] for r in t["rows"])
    assert 1 + na / nd == pytest.approx(3.854, abs=0.003)  # runs A 3.857 + B 3.851 pooled
    # xng stored for every set of left-out groups: all, 3 singles, 3 pairs
    assert len(t["rows"][0]["xng"]) == 7 and "-aime2026-gpqa_diamond" in t["rows"][0]["xng"]
    # a left-out group meets a reference without its own domain: lower predictability
    for g in ("aime2026", "gpqa_diamond", "mmlu_pro"):
        inside = [r for r in t["rows"] if r["group"] == g]
        assert np.mean([r["xng"]["-" + g] for r in inside]) < \
            np.mean([r["xng"]["all"] for r in inside])


def test_honest_leave_one_group_out_figures():
    """Penalty and set effect chosen inside each fold; AIME misses the +-5 % target and its
    90 % interval (documented in docs/drafting.md), the other two are inside both."""
    rows = {r["group"]: r for r in am.leave_one_group_out(seed=0)}
    assert rows["aime2026"]["error_pct"] == pytest.approx(-10.57, abs=0.05)
    assert rows["gpqa_diamond"]["error_pct"] == pytest.approx(4.83, abs=0.05)
    assert rows["mmlu_pro"]["error_pct"] == pytest.approx(-0.76, abs=0.05)
    assert rows["aime2026"]["measured"] == pytest.approx(4.680, abs=0.001)
    assert not rows["aime2026"]["covered"]
    assert rows["gpqa_diamond"]["covered"] and rows["mmlu_pro"]["covered"]
    assert all(r["nu"] == 3 for r in rows.values())


def test_left_out_group_is_never_seen_by_the_fit():
    """Changing the left-out group's counters, and every xng value computed WITH that group
    in the reference, leaves the fold's model unchanged (nested, not just held out)."""
    t = am.load_calibration()
    m0 = am.fit(t, exclude_groups=["aime2026"])
    t2 = copy.deepcopy(t)
    for r in t2["rows"]:
        for key in r["xng"]:
            if "aime2026" not in key:
                r["xng"][key] = 0.5  # a fold that excludes aime must not read these
        if r["group"] == "aime2026":
            r["num_accepted"] *= 3
            r["x"] = [0.0] * len(r["x"])
    m1 = am.fit(t2, exclude_groups=["aime2026"])
    assert np.allclose(m0.coef, m1.coef) and m0.tau == m1.tau and m0.penalty == m1.penalty


def test_full_fit():
    m = am.default_content_model()
    t = am.load_calibration()
    x, nd, na, g, L = am._arrays(t)
    r = np.corrcoef(m.predict_prompts(x), 1 + na / nd)[0, 1]
    assert r > 0.75  # the easy-fraction regression alone gave 0.73
    assert m.nu == 4 and m.tau > 0.05 and m.penalty in am.PENALTIES
    assert m.to_dict()["groups"] == ["aime2026", "gpqa_diamond", "mmlu_pro"]


def test_fit_needs_two_groups():
    from models.errors import ModelInputError
    with pytest.raises(ModelInputError):
        am.fit(am.load_calibration(), exclude_groups=["aime2026", "gpqa_diamond"])


def test_xng_of_calibration_prompts_leaves_their_own_completion_out():
    cap = load_capture(P128).subset([0, 5, 17])
    t = am.load_calibration()
    want = [t["rows"][i]["xng"]["all"] for i in (0, 5, 17)]
    assert np.allclose(am.xng_feature(cap), want, atol=1e-6)


def test_ngram_reference_plain_python():
    ref = am.NgramReference([np.array([5, 6, 7, 5, 6, 8, 5, 6, 7])])
    # contexts: (5,6)->7 twice vs 8 once; 7 -> 5; unseen 9 -> no prediction
    assert ref.top1_share([1], [5, 6, 7, 9]) == pytest.approx(2 / 4)  # 6 (after 5), 7


def test_theta_inverts_the_power_curve():
    F = default_model().curve
    t = np.array([1.5, 3.8493, 6.0])
    th = am._theta(F, t)
    assert np.allclose(1 + (F[None] ** th[:, None]).sum(1), t, atol=1e-9)
    assert am._theta(F, np.array([3.8493]))[0] == pytest.approx(1.0, abs=1e-3)


def test_capture_prediction_stack_transfer_and_seed():
    cap = load_capture("tests/fixtures/draft_small_capture.jsonl.gz")
    x = am.capture_features(cap)
    assert x.shape == (len(cap), len(am.FEATURES))
    F = default_model().curve
    p = am.for_capture(cap, F, 7, n_draws=500, seed=1)
    assert np.allclose(1 + p.curves.sum(1), p.tpf, atol=1e-6)  # stack F: the prediction
    assert p.ratio_low < 1 < p.ratio_high
    assert np.array_equal(p.draws, am.for_capture(cap, F, 7, n_draws=500, seed=1).draws)
    other = np.array([0.70, 0.52, 0.40, 0.32, 0.26, 0.21])  # another stack's K=6 curve
    q = am.for_capture(cap, other, 4, n_draws=500, seed=1)
    th = am._theta(F, p.tpf)
    assert np.allclose(q.curves, other[None, :4] ** th[:, None])
