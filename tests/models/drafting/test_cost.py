"""Per-forward cost model."""
import json

import numpy as np
import pytest

from models.drafting.cost import ForwardCostModel, load_cost_model
from models.errors import ModelInputError


def test_stack_f_cycle():
    c = load_cost_model("F")
    assert isinstance(c, ForwardCostModel) and c.name == "F"
    # 6.252 + 0.038*7 + 0.206*7 + 0.05 = 8.01 ms vs the measured 8.011 ms cycle (profile sources)
    assert float(c.step_ms(8, 7)) == pytest.approx(8.011, abs=0.01)
    assert float(c.step_ms(1, 0)) == pytest.approx(6.302, abs=1e-3)
    # TPS identity with harness efficiency: 3.847 tokens/forward -> ~455 TPS measured
    assert float(c.tps(3.847, c.step_ms(8, 7))) == pytest.approx(455.3, rel=0.01)


def test_staircase_and_sync():
    c = load_cost_model("F")
    v = c.verify_ms(np.array([16, 17, 32, 33, 49]))
    assert v[1] - v[0] > 0.3 and v[3] - v[2] > 1.0 and np.all(np.diff(v) > 0)
    assert float(c.step_ms(8, 0, True)) == pytest.approx(1.2 * float(c.step_ms(8, 0)))
    b = load_cost_model("bf16head")
    assert float(b.verify_ms(1)) == pytest.approx(11.56)
    assert float(b.verify_ms(33)) == pytest.approx(14.99, rel=0.02)


def test_sync_factor_multiplies_the_whole_synchronous_step_and_is_at_least_one():
    """One meaning: step_ms(sync) = sync_factor x (verify + drafter + host); 1 = a sync
    costs nothing, and below 1 (a synchronous step faster than the asynchronous one) is
    refused by the model itself."""
    from models.errors import ModelInputError

    one = load_cost_model("F", sync_factor=1.0)
    for M, d in ((1, 0), (8, 7), (40, 7)):
        assert float(one.step_ms(M, d, True)) == float(one.step_ms(M, d, False))
    c = load_cost_model("F", sync_factor=1.5)
    base = float(c.verify_ms(8)) + 7 * c.drafter_per_token_ms + c.host_ms
    assert float(c.step_ms(8, 7, True)) == pytest.approx(1.5 * base)
    with pytest.raises(ModelInputError, match=">= 1"):
        load_cost_model("F", sync_factor=0.999)


def test_overrides_and_file(tmp_path):
    c = load_cost_model("F", drafter_per_token_ms=0.5, sync_factor=None)
    assert c.drafter_per_token_ms == 0.5 and c.sync_factor == 1.2
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"verify_base_ms": 7.0}))
    assert load_cost_model("F", p).verify_base_ms == 7.0
    p.write_text(json.dumps({"bogus": 1}))
    with pytest.raises(ModelInputError):
        load_cost_model("F", p)
    with pytest.raises(ModelInputError):
        load_cost_model("nope")
    with pytest.raises(ModelInputError):
        load_cost_model("F", verify_base_ms=-1.0)


def test_a_jsonl_cost_file_says_it_should_be_one_object(tmp_path):
    from models.drafting.cost import load_cost_model
    from models.errors import ModelInputError

    p = tmp_path / "cost.jsonl"
    p.write_text('{"verify_base_ms": 6.5}\n{"sync_factor": 1.1}\n')
    with pytest.raises(ModelInputError) as e:
        load_cost_model("F", str(p))
    assert e.value.line == 2 and "one JSON object (this looks like JSON Lines)" in str(e.value)


def test_a_cost_field_given_twice_is_refused(tmp_path):
    """json.loads keeps the last of two equal keys: the first value was dropped silently."""
    from models.drafting.cost import load_cost_model
    from models.errors import ModelInputError

    p = tmp_path / "cost.json"
    p.write_text('{"verify_base_ms": 6.5, "verify_base_ms": 7.0}')
    with pytest.raises(ModelInputError) as e:
        load_cost_model("F", str(p))
    assert e.value.field == "verify_base_ms" and "given twice" in str(e.value)
