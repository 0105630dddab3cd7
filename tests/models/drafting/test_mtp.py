"""MTP acceptance models and chain simulation."""
from pathlib import Path

import numpy as np
import pytest

from models.drafting.acceptance import (curve_from_histogram, default_model, load_acceptance,
                                        per_prompt_counters, pmf_from_curve, record_model,
                                        scale_curve, validate_curve)
from models.drafting.mtp import simulate_mtp
from models.drafting.walk import walk
from models.errors import ModelInputError

ROOT = Path(__file__).resolve().parents[3]
K7 = ROOT / "examples" / "captures" / "mtp_spec_on_k7_int4_frontier.jsonl.gz"
F7 = [0.7291, 0.5537, 0.4393, 0.3609, 0.3013, 0.2518, 0.2132]


def test_default_curve_is_f7_calib():
    m = default_model()
    assert m.k == 7
    np.testing.assert_allclose(m.curve, F7)
    assert m.tokens_per_forward == pytest.approx(3.8493, abs=1e-4)
    assert "accept_calibration" in m.source


def test_histogram_q6():
    m = record_model("Q6_P128_perstep_hist")
    assert m.k == 6
    assert m.tokens_per_forward == pytest.approx(3.386, abs=2e-3)
    c = curve_from_histogram({0: 1, 1: 1, 2: 2}, 2)
    np.testing.assert_allclose(c, [0.75, 0.5])


@pytest.mark.parametrize("bad", [[0.5, 0.6], [0.0, 0.0], [1.2], [], [0.5] * 17, ["x"]])
def test_bad_curves(bad):
    with pytest.raises(ModelInputError):
        validate_curve(bad)


def test_bad_curve_file_and_fixture():
    with pytest.raises(ModelInputError):
        load_acceptance(ROOT / "tests" / "fixtures" / "draft_bad_curve.json")
    m = load_acceptance(ROOT / "tests" / "fixtures" / "draft_curve_k3.json")
    assert m.tokens_per_forward == pytest.approx(2.9)
    with pytest.raises(ModelInputError):
        load_acceptance(ROOT / "tests" / "fixtures" / "draft_curve_k3.json", k=5)


def test_pmf():
    p = pmf_from_curve(np.array([0.8, 0.5]))
    np.testing.assert_allclose(p, [0.2, 0.3, 0.5])


def test_all_ones_curve_gives_k_plus_1():
    # L=33, start=1: 32 tokens in steps of 4 -> exactly 8 forwards
    r = simulate_mtp([33], [1.0, 1.0, 1.0], n_rep=3, seed=1, start=1)
    assert r.tokens_per_forward() == 4.0
    assert r.forwards[0, 0] == 8
    # truncation: L=11 from start 1 -> 10 tokens = 4 + 4 + 2 -> 3 forwards
    r = simulate_mtp([11], [1.0, 1.0, 1.0], n_rep=1, start=1)
    assert r.forwards[0, 0] == 3 and r.tokens[0, 0] == 10
    # the default start 0 (reference replay) also walks token 0: 11 = 4 + 4 + 3
    r = simulate_mtp([11], [1.0, 1.0, 1.0], n_rep=1)
    assert r.forwards[0, 0] == 3 and r.tokens[0, 0] == 11
    # the last step's draft covers the 3 remaining tokens: the verifier accepts 3 (no bonus)
    # while the committed count is 2 (tokens = forwards + accepted)
    assert r.accept_hist.tolist() == [0, 0, 0, 3]
    assert r.accepted[0, 0] == 3 + 3 + 2 == r.tokens[0, 0] - r.forwards[0, 0]


def test_tiny_curve_is_ar_and_ar_mode():
    r = simulate_mtp([50], [1e-12] * 4, n_rep=2)
    assert r.tokens_per_forward() == 1.0
    r = walk([50, 20], mode="ar", start=1)
    assert r.forwards.sum() == 49 + 19
    assert walk([50, 20], mode="ar").forwards.sum() == 70


def test_hand_walk_lookup_profile():
    acc = [np.array([0, 3, 0, 0, 0, 2, 0, 0, 0, 0])]
    prop = [np.array([0, 3, 1, 1, 1, 2, 0, 0, 0, 0])]
    r = walk([10], mode="lookup", lookup=(acc, prop, prop), start=1)
    # t=1: +4 -> 5; t=5: +3 -> 8; t=8: +1; t=9: +1 -> 10: 4 forwards, 9 tokens
    assert r.forwards[0, 0] == 4 and r.tokens[0, 0] == 9
    assert r.accepted[0, 0] == 5


def test_seed_reproducible():
    a = simulate_mtp([512] * 4, F7, n_rep=5, seed=7).forwards
    b = simulate_mtp([512] * 4, F7, n_rep=5, seed=7).forwards
    c = simulate_mtp([512] * 4, F7, n_rep=5, seed=8).forwards
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_f7_curve_reproduces_3849_on_k7_capture():
    from models.drafting.capture import load_capture
    cap = load_capture(K7)
    L = [len(c) for c in cap.completions]
    r = simulate_mtp(L, F7, n_rep=100, seed=0, start=1)
    assert r.tokens_per_forward() == pytest.approx(3.849, rel=0.01)
    # the summary's per-position acceptance: P(a >= i) over the steps reproduces the curve
    s = r.summary()
    surv = np.cumsum(s.accept_hist[::-1])[::-1][1:] / s.accept_hist.sum()
    np.testing.assert_allclose(surv[:7], F7, atol=0.01)
    assert s.mean_accept_len_conditional == pytest.approx(3.849, rel=0.01)


def test_per_prompt_spread_close_to_measured():
    from models.drafting.capture import load_capture
    cap = load_capture(K7)
    m = load_acceptance(per_prompt="B")
    cv = m.curves_for(cap.ids)
    r = simulate_mtp([len(c) for c in cap.completions], cv, n_rep=100, seed=0, start=1)
    assert r.tokens_per_forward() == pytest.approx(3.849, rel=0.01)
    p5, p50, p95 = np.percentile(r.per_prompt_tpf(), [5, 50, 95])
    assert p5 == pytest.approx(2.93, abs=0.12)
    assert p95 == pytest.approx(5.58, abs=0.15)
    # a homogeneous curve is far too narrow
    r0 = simulate_mtp([512] * 128, F7, n_rep=50, seed=0, start=1)
    q5, q95 = np.percentile(r0.per_prompt_tpf(), [5, 95])
    assert q95 - q5 < 0.5 * (5.58 - 2.93)


def test_prompt_set_mismatch_is_input_error():
    m = load_acceptance(per_prompt="A")
    with pytest.raises(ModelInputError):
        m.curves_for(["not-a-prompt"])


def test_scale_curve_hits_target():
    s = scale_curve(np.array(F7), np.array([2.5, 3.849, 6.0]))
    np.testing.assert_allclose(1 + s.sum(1), [2.5, 3.849, 6.0], rtol=1e-6)
    assert np.all(np.diff(s, axis=1) <= 0)


def test_per_prompt_counters_present():
    assert len(per_prompt_counters("A")) == 128 and len(per_prompt_counters("A+B")) == 256


@pytest.mark.parametrize("start", [0, 1, 4])
@pytest.mark.parametrize("run_cap", [8, 0, -1])
def test_mtp_chain_equals_the_general_stochastic_walk(start, run_cap):
    """The MTP chain's own loop (one curve per prompt) against the general stochastic walk
    on the same curves given as two easiness states with every position in state 0: the
    same draws, so every per-prompt sum, the histogram and the runs over the cap must be
    equal bit for bit, with the default step price, none, and one that varies by lane."""
    from models.drafting.cost import load_cost_model

    rng = np.random.default_rng(3)
    L = rng.integers(1, 90, size=40)
    L[:3] = [1, 2, 3]  # shorter than start: nothing to walk
    cv = np.sort(rng.random((L.size, 7)), -1)[:, ::-1] * 0.95
    two = np.stack([cv, cv * 0.5], axis=1)  # (P, 2, K): state 1 never used
    zeros = [np.zeros(n, np.int64) for n in L]
    lane_price = lambda M, d, s: M * 0.5 + np.arange(M.size).reshape(M.shape) * 1e-3  # noqa
    for cost in (load_cost_model().step_ms, None, lane_price):
        a = walk(L, mode="mtp", n_rep=30, seed=5, curves=cv, cost=cost, start=start,
                 run_cap=run_cap)
        b = walk(L, mode="mtp", n_rep=30, seed=5, curves=two, state=zeros, cost=cost,
                 start=start, run_cap=run_cap)
        for f in ("tokens", "forwards", "drafts", "accepted", "lookup_tokens", "rows",
                  "time_ms"):
            x, y = getattr(a, f), getattr(b, f)
            assert (x is None and y is None) or x.tobytes() == y.tobytes(), f
        assert a.accept_hist.tolist() == b.accept_hist.tolist()
        assert a.meta["runs_over_cap"] == b.meta["runs_over_cap"]
        assert a.meta["state_step_frac"].tolist() == b.meta["state_step_frac"].tolist()
