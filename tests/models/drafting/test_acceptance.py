"""Content-aware MTP acceptance model: fit, leave-one-group-out, capture prediction."""

import json

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
    from models.errors import ModelInputError

    with pytest.raises(ModelInputError):
        am.fit(am.load_calibration(), exclude_groups=["aime2026", "gpqa_diamond"])


@pytest.mark.parametrize("rec, needle", [
    ({"method": "mtp_chain", "k": 4, "per_position_acceptance": [0.8, 0.6, 0.5]},
     "3 positions but K=4"),
    ({"method": "mtp_chain", "k": 3, "per_position_acceptance": ["0.8", "0.6", "0.5"]},
     "must be a list of numbers"),
    ({"method": "mtp_chain", "k": 3, "per_position_acceptance": []}, "got 0"),
])
def test_curve_files_are_checked(tmp_path, rec, needle):
    """A record of K=4 with 3 values ran as K=3, quoted numbers were read, and an empty list
    said the record had no curve at all."""
    from models.drafting.acceptance import load_acceptance
    from models.errors import ModelInputError

    p = tmp_path / "c.json"
    p.write_text(json.dumps({"id": "c1", **rec}))
    with pytest.raises(ModelInputError) as e:
        load_acceptance(str(p))
    assert needle in str(e.value) and e.value.field == "per_position_acceptance"


def test_json_lines_of_curve_records_read_as_records(tmp_path):
    """Two curve records on two lines were read as per-prompt counters ('need
    accepted_per_pos', no line or field); they are records, the first mtp_chain one used."""
    from models.drafting.acceptance import load_acceptance

    p = tmp_path / "c.jsonl"
    p.write_text('{"id":"a","method":"mtp_chain","k":3,"per_position_acceptance":[0.8,0.6,0.5]}\n'
                 '{"id":"b","method":"mtp_chain","k":2,"per_position_acceptance":[0.7,0.4]}\n')
    m = load_acceptance(str(p))
    assert m.k == 3 and m.curve.tolist() == [0.8, 0.6, 0.5]
