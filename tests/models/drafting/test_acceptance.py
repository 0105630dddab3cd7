"""Content-aware MTP acceptance model: fit, leave-one-group-out, capture prediction."""

import pytest

from models.drafting import acceptance_model as am


def test_calibration_table_is_p128_and_pooled_counters():
    t = am.load_calibration()
    assert t["prompt_set_hash"] == "43df0c18b56abde3"
    assert len(t["rows"]) == 128
    nd = sum(r["num_drafts"] for r in t["rows"])
    na = sum(r["num_accepted"] for r in t["rows"])
    # runs A (3.857) and B (3.851) pooled
    assert 1 + na / nd == pytest.approx(3.854, abs=0.003)


def test_fit_needs_two_groups():
    with pytest.raises(Exception):
        am.fit(am.load_calibration(), exclude_groups=["aime2026", "gpqa_diamond"])
