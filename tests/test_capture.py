"""Capture loading: good files, stop_at_eos, prompt-set hash, bad input -> ModelInputError."""

from pathlib import Path

import numpy as np
import pytest

from models.drafting.capture import load_capture, prompt_set_hash
from models.errors import ModelInputError

FIX = Path(__file__).parent / "fixtures"
EX = Path(__file__).resolve().parents[1] / "examples" / "captures"


@pytest.mark.parametrize("name", ["capture_small.jsonl", "capture_small.jsonl.gz"])
def test_load_small(name):
    c = load_capture(FIX / name)
    assert c.ids == ["g-1", "g-2", "x-3"]
    assert c.groups == ["g", "g", "x"]
    assert all(p.dtype == np.int32 for p in c.prompts + c.completions)
    assert c.completions[0].tolist() == [5, 6, 106, 1, 106, 107]
    assert c.eos_tokens_removed == 0
    assert c.n_completion_tokens == 13


def test_stop_at_eos_keeps_eos_and_counts_removed():
    c = load_capture(FIX / "capture_small.jsonl", stop_at_eos=True)
    assert c.completions[0].tolist() == [5, 6, 106]       # cut after first EOS (106)
    assert c.completions[1].tolist() == [9, 10, 11]       # no EOS: unchanged
    assert c.completions[2].tolist() == [1]               # EOS first: keep it only
    assert c.eos_tokens_removed == 3 + 0 + 3
    c2 = load_capture(FIX / "capture_small.jsonl", stop_at_eos=True, eos_ids=(107,))
    assert c2.completions[0].tolist() == [5, 6, 106, 1, 106, 107]
    assert c2.eos_tokens_removed == 0


def test_stop_at_eos_real_capture_count():
    c = load_capture(EX / "ar_reference_bf16.jsonl.gz", stop_at_eos=True)
    assert c.eos_tokens_removed == 1000
    assert c.n_completion_tokens == 65536 - 1000


def test_prompt_set_hash_matches_shared_readme():
    c = load_capture(EX / "ar_reference_int4_frontier_specoff.jsonl.gz")
    assert c.prompt_set_hash() == "43df0c18b56abde3"
    assert load_capture(EX / "ar_longform_aime_int4.jsonl.gz").prompt_set_hash() == "4c427242457b252f"
    # order-independent
    assert prompt_set_hash(c.prompts[::-1]) == "43df0c18b56abde3"


@pytest.mark.parametrize("name,line,field", [
    ("bad_capture_empty.jsonl", 1, None),
    ("bad_capture_truncated.jsonl", 2, None),
    ("bad_capture_invalid_json.jsonl", 2, None),
    ("bad_capture_missing_field.jsonl", 2, "completion_token_ids"),
    ("bad_capture_non_integer.jsonl", 1, "completion_token_ids"),
    ("bad_capture_float_token.jsonl", 1, "prompt_token_ids"),
    ("bad_capture_negative.jsonl", 3, "completion_token_ids"),
    ("bad_capture_empty_completion.jsonl", 1, "completion_token_ids"),
    ("bad_capture_not_object.jsonl", 1, None),
    ("bad_capture_garbage.jsonl.gz", None, None),
    ("bad_capture_truncated.jsonl.gz", None, None),
])
def test_bad_input_raises_input_error(name, line, field):
    path = FIX / name
    with pytest.raises(ModelInputError) as ei:
        load_capture(path)
    e = ei.value
    assert e.file == str(path)
    assert e.line is not None and e.line >= 1
    if line is not None:
        assert e.line == line
    assert e.field == field
    msg = str(e)
    assert "\n" not in msg and name in msg and f":{e.line}" in msg


def test_missing_file():
    with pytest.raises(ModelInputError) as ei:
        load_capture(FIX / "capture_does_not_exist.jsonl")
    assert "capture_does_not_exist" in str(ei.value)
