"""Lookup drafting profiles + walk: reference figures, fast == reference, hand cases."""

from pathlib import Path

import numpy as np
import pytest

from models.drafting import AR, PLD, NGram, Suffix, draft_profiles, load_capture, replay, walk
from models.drafting.cost import load_cost_model
from models.drafting.lookup import (ngram_reference_propose, pld_reference_replay,
                                    reference_profile)

EX = Path(__file__).resolve().parents[3] / "examples" / "captures"


@pytest.fixture(scope="module")
def bf16():
    return load_capture(EX / "ar_reference_bf16.jsonl.gz")


@pytest.fixture(scope="module")
def int4():
    return load_capture(EX / "ar_reference_int4_frontier_specoff.jsonl.gz")


# -- the reference PLD replay figures ------------------------------------------------

def test_pld_reference_figures_bf16(bf16):
    _, _, s = replay(bf16, policy=PLD(n=2, D=24))
    assert round(s.tokens_per_forward, 3) == 1.384
    assert round(s.frac_from_lookup, 3) == 0.278
    assert s.matched_runs == 6020
    assert s.runs_over_cap == 383
    assert round(100 * s.frac_beyond_cap, 2) == 3.69
    _, _, s3 = replay(bf16, policy=PLD(n=3, D=24))
    assert round(s3.tokens_per_forward, 3) == 1.267


def test_pld_reference_figures_int4(int4):
    assert round(replay(int4, policy=PLD(2, 24))[2].tokens_per_forward, 3) == 1.480
    assert round(replay(int4, policy=PLD(3, 24))[2].tokens_per_forward, 3) == 1.342


# -- fast kernel == straightforward replay -------------------------------------------

@pytest.mark.parametrize("n,D", [(1, 4), (2, 24), (3, 8), (4, 1), (2, 2)])
def test_pld_fast_equals_reference(bf16, int4, n, D):
    for cap in (bf16.subset(range(0, 128, 16)), int4.subset(range(3, 128, 25))):
        ref = pld_reference_replay(cap.prompts, cap.completions, n, D)
        w = draft_profiles(cap, PLD(n, D)).walk()
        for r in range(len(cap)):
            assert w.per_request(r).tolist() == ref[r]
        ref1 = pld_reference_replay(cap.prompts, cap.completions, n, D, start=1)
        w1 = draft_profiles(cap, PLD(n, D)).walk(start=1)
        assert [w1.per_request(r).tolist() for r in range(len(cap))] == ref1


@pytest.mark.parametrize("lo,hi,k", [(2, 6, 5), (2, 3, 3), (1, 1, 4), (3, 5, 7)])
def test_ngram_fast_equals_kmp_reference(int4, lo, hi, k):
    cap = int4.subset([0, 57, 120])
    fast = draft_profiles(cap, NGram(lo, hi, k))
    for r in range(len(cap)):
        cut = 200  # keep the O(L^2) reference cheap
        ref = reference_profile(cap.prompts[r], cap.completions[r][:cut],
                                lambda x: ngram_reference_propose(x, lo, hi, k))
        f = draft_profiles([cap.prompts[r]], [cap.completions[r][:cut]], NGram(lo, hi, k))[0]
        assert np.array_equal(ref.accept_len, f.accept_len)
        assert np.array_equal(ref.match_len, f.match_len)
        assert np.array_equal(ref.proposed, f.proposed)
        # profile of the truncated stream agrees with the full one except near the cut
        assert np.array_equal(fast[r].match_len[:cut], f.match_len)


# -- hand-checked tiny PLD replay (20 completion tokens) -----------------------------

PROMPT = [5, 6, 7, 8]
COMP = [9, 5, 6, 7, 8, 9, 5, 6, 10, 11, 5, 6, 7, 12, 13, 14, 13, 14, 13, 14]


def test_pld_hand_checked_steps():
    # n=2, D=3. t=3: last (5,6) -> most recent earlier at 0 -> propose 7,8,9: all right.
    # t=7: (9,5) at 4 -> 6,7,8 vs 6,10: 1. t=12: (5,6) most recent at 10 -> 10,11,5 vs 7: 0
    # (the earliest occurrence would have given 1). t=18: (13,14) at 18 -> proposal cut at
    # the known text (13,14), overlaps the end; 2 accepted = all remaining, no bonus.
    b = draft_profiles([PROMPT], [COMP], PLD(n=2, D=3))
    w = b.walk()
    assert w.step_positions.tolist() == [0, 1, 2, 3, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]
    assert w.step_accepted.tolist() == [0, 0, 0, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]
    assert w.step_committed.tolist() == [1, 1, 1, 4, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2]
    # committed accepted tokens: the last step's 2 accepted tokens finish the stream
    assert w.accepted[0, 0] == 3 + 1 + 1 == w.tokens[0, 0] - w.forwards[0, 0]
    assert w.summary().tokens_per_forward == pytest.approx(20 / 15)
    assert b[0].proposed[18] == 2 and b[0].proposed[3] == 3
    assert b[0].match_len[3] == 2 and b[0].match_len[0] == 0
    assert pld_reference_replay([PROMPT], [COMP], 2, 3) == [w.step_accepted.tolist()]
    w1 = b.walk(start=1)
    assert w1.step_accepted.tolist() == [0, 0, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]
    assert w1.tokens.sum() == 19


def test_walk_plain_arrays_and_ar():
    prof = ([[2, 0, 0, 1, 0, 0]],) * 3
    w = walk([6], mode="lookup", lookup=prof)
    assert w.step_accepted.tolist() == [2, 1, 0] and w.step_positions.tolist() == [0, 3, 5]
    two = ([[0, 0], [5, 0, 0]],) * 3
    # a profile entry beyond the stream is cut at L - t (2 tokens left at t=1)
    w2 = walk([2, 3], mode="lookup", lookup=two)
    assert w2.step_accepted.tolist() == [0, 0, 3] and w2.per_request(1).tolist() == [3]
    b = draft_profiles([PROMPT], [COMP], AR())
    s = b.walk().summary()
    assert s.tokens_per_forward == 1.0 and s.n_steps == 20
    assert walk([20], mode="ar").accept_hist.tolist() == [20]


def _loop_walk(L, acc, prop, start, cost, cap):
    """Straightforward per-request walk of a lookup profile with the costed sums."""
    out = {"tokens": 0, "forwards": 0, "drafts": 0, "accepted": 0, "rows": 0, "time": 0.0,
           "over": 0, "steps": []}
    t = start
    while t < L:
        a = min(acc[t], prop[t], L - t)
        c = min(a + 1, L - t)
        out["tokens"] += c
        out["forwards"] += 1
        out["drafts"] += prop[t] > 0
        out["accepted"] += c - 1
        out["rows"] += prop[t] + 1
        out["time"] += float(cost.step_ms(prop[t] + 1, 0, True))
        out["over"] += c - 1 > cap
        out["steps"].append(a)
        t += c
    return out


@pytest.mark.parametrize("start", [0, 1])
def test_lookup_walk_sums_equal_a_plain_loop(start):
    rng = np.random.default_rng(5)
    cost = load_cost_model()
    L = rng.integers(2, 60, size=12)
    prop = [rng.integers(0, 12, size=n) for n in L]
    acc = [np.minimum(p, rng.integers(0, 14, size=p.size)) for p in prop]
    w = walk(L, mode="lookup", lookup=(acc, prop, prop), cost=cost.step_ms, start=start,
             run_cap=3)
    for r, n in enumerate(L):
        ref = _loop_walk(int(n), acc[r], prop[r], start, cost, 3)
        assert w.tokens[0, r] == ref["tokens"] and w.forwards[0, r] == ref["forwards"]
        assert w.drafts[0, r] == ref["drafts"] and w.accepted[0, r] == ref["accepted"]
        assert w.lookup_tokens[0, r] == ref["accepted"] and w.rows[0, r] == ref["rows"]
        assert w.time_ms[0, r] == ref["time"]   # same summation order: bit-equal
        assert w.per_request(r).tolist() == ref["steps"]
    assert w.meta["runs_over_cap"] == sum(
        _loop_walk(int(n), acc[r], prop[r], start, cost, 3)["over"] for r, n in enumerate(L))


@pytest.mark.parametrize("start", [0, 1])
@pytest.mark.parametrize("tree_depth", [None, 5])
def test_walk_without_trace_equals_traced_walk(bf16, start, tree_depth):
    """walk(trace=False) (one compiled pass, cost by a table over draft lengths) gives the
    traced walk's numbers bit for bit: per-prompt sums, histogram, runs over the cap."""
    cost = load_cost_model()
    batch = draft_profiles(bf16, policy=PLD(2, 24))
    L = batch.lengths
    for mode, lk in (("lookup", batch), ("ar", None)):
        a = walk(L, mode=mode, lookup=lk, cost=cost.step_ms, start=start,
                 tree_depth=tree_depth)
        b = walk(L, mode=mode, lookup=lk, cost=cost.step_ms, start=start,
                 tree_depth=tree_depth, trace=False)
        for f in ("tokens", "forwards", "time_ms", "drafts", "accepted", "lookup_tokens",
                  "rows"):
            assert getattr(a, f).tobytes() == getattr(b, f).tobytes(), (mode, f)
        assert a.accept_hist.tolist() == b.accept_hist.tolist()
        assert a.meta["runs_over_cap"] == b.meta["runs_over_cap"]
        assert b.step_accepted is None and b.step_offsets is None
    s = walk(L, mode="lookup", lookup=batch, start=start, trace=False).summary()
    if start == 0:  # the published figures from the trace-free walk too
        assert round(s.tokens_per_forward, 3) == 1.384 and s.runs_over_cap == 383
        assert round(100 * s.frac_beyond_cap, 2) == 3.69


# -- vLLM n-gram micro cases ----------------------------------------------------------

def test_ngram_vllm_docstring_example():
    assert ngram_reference_propose([1, 2, 3, 4, 2, 3], 2, 3, 4) == ([4, 2, 3], 2)


def test_ngram_earliest_and_longest():
    ctx = [1, 2, 9, 1, 2, 8, 1, 2]
    assert ngram_reference_propose(ctx, 2, 2, 3) == ([9, 1, 2], 2)   # earliest occurrence
    ctx = [7, 1, 2, 5, 3, 1, 2, 6, 7, 3, 1, 2]
    assert ngram_reference_propose(ctx, 2, 3, 3) == ([6, 7, 3], 3)   # longest first
    assert ngram_reference_propose([4, 5, 6], 2, 3, 3) == ([], 0)
    # the fast kernel agrees at the last position
    b = draft_profiles([ctx[:-1]], [[ctx[-1], 6, 7, 0]], NGram(2, 3, 3))
    assert b[0].match_len[1] == 3 and b[0].proposed[1] == 3 and b[0].accept_len[1] == 2


def test_ngram_conditional_vs_unconditional(int4):
    _, _, s = replay(int4, policy=NGram(2, 6, 5), start=1)
    assert s.mean_accept_len_conditional > 2.0 > 1.5 > s.tokens_per_forward > 1.3


# -- suffix micro cases -----------------------------------------------------------------

def test_suffix_hand_checked_local():
    prompt = [10, 11, 12, 10, 11, 13, 10, 11, 12]
    comp = [10, 11, 12]
    p = draft_profiles([prompt], [comp], Suffix(cache="none"))[0]
    # t=0: best score at match 3 (10,11,12): path 10,11,13 with probs .5,.5,.5
    # t=1: match 4 (10,11,12,10): path 11,13,10,11 (score 2.0); actual 11,12 -> 1
    assert p.match_len[:2].tolist() == [3, 4]
    assert p.proposed[:2].tolist() == [3, 4]
    assert p.accept_len[:2].tolist() == [2, 1]
    q = draft_profiles([prompt], [comp], Suffix(cache="none", min_token_prob=0.6))[0]
    assert q.proposed[0] == 0 and q.match_len[0] == 0 and q.accept_len[0] == 0


def test_suffix_cross_request_cache():
    prompts = [[50, 51], [60, 61]]
    comps = [[7, 8, 9, 7, 8, 9], [7, 8, 9, 7, 8, 9]]
    fifo = draft_profiles(prompts, comps, Suffix(cache="fifo"))
    none = draft_profiles(prompts, comps, Suffix(cache="none"))
    loo = draft_profiles(prompts, comps, Suffix(cache="loo"))
    # request 1, t=1 (context ..61,7): only request 0's output knows 7 -> 8
    assert fifo[1].proposed[1] == 1 and fifo[1].accept_len[1] == 1
    assert none[1].proposed[1] == 0
    assert fifo[0].proposed[1] == 0                  # nothing cached before request 0
    assert loo[0].proposed[1] == 1 and loo[0].accept_len[1] == 1
    one = draft_profiles(prompts, comps, Suffix(cache="fifo", max_cached_requests=1))
    assert one[1].proposed[1] == 0                   # only the active request is cached


def test_profile_invariants(int4):
    cap = int4.subset(range(10))
    for pol in (PLD(2, 24), NGram(2, 6, 5), Suffix(max_spec_tokens=6)):
        b = draft_profiles(cap, pol)
        for r in range(len(cap)):
            p = b[r]
            L = len(p)
            assert (p.accept_len <= p.proposed).all()
            assert (p.accept_len <= L - np.arange(L)).all()
            assert ((p.proposed > 0) | ((p.match_len == 0) & (p.accept_len == 0))).all()


# -- the NumPy PLD profile against a per-position definition ---------------------------

def _pld_propose(n, D):
    """PLD by its definition: the most recent earlier start j <= len - n - 1 of the last n
    tokens, proposing ctx[j + n : j + n + D] cut at the end of the context."""
    def propose(ctx):
        m = len(ctx)
        if m < n + 1:
            return [], 0
        key = ctx[m - n:]
        for j in range(m - n - 1, -1, -1):
            if ctx[j:j + n] == key:
                return ctx[j + n:min(j + n + D, m)], n
        return [], 0
    return propose


@pytest.mark.parametrize("n,D", [(1, 3), (2, 24), (3, 5), (16, 64)])
@pytest.mark.parametrize("vocab", [3, 2**31 - 2])
def test_pld_profile_equals_its_definition(n, D, vocab):
    """The PLD kernel (hashed n-gram table, most recent start) against the definition on
    repetitive and huge-id streams, prompts shorter than n, one-token completions."""
    rng = np.random.default_rng(n * 7 + D)
    base = rng.integers(0, min(vocab, 50), size=6)
    prompts, comps = [], []
    for r in range(14):
        P, L = int(rng.integers(1, 30)), int(rng.integers(1, 45))
        x = np.tile(base, 20)[rng.integers(0, 6):][:P + L].copy()  # repeats of one motif
        flip = rng.random(x.size) < 0.15
        x[flip] = rng.integers(0, vocab, size=int(flip.sum()))
        if vocab > 50:
            x = (x * 40_000_000 + 7) % (2**31 - 1)  # ids up to 2^31 - 2
        prompts.append(x[:P].astype(np.int32))
        comps.append(x[P:].astype(np.int32))
    batch = draft_profiles(prompts, comps, PLD(n, D))
    for r in range(len(prompts)):
        ref = reference_profile(prompts[r], comps[r], _pld_propose(n, D))
        got = batch[r]
        assert got.accept_len.tolist() == ref.accept_len.tolist(), r
        assert got.match_len.tolist() == ref.match_len.tolist(), r
        assert got.proposed.tolist() == ref.proposed.tolist(), r


def test_drafting_modules_import_without_numba():
    """numba (about 0.3 s to import and 0.4 s for its first dispatch) is imported by the
    first kernel call, not by importing the drafting package or ``planner.decide.draft``: a
    command refused on its input, or one that needs no kernel, never pays for it."""
    import subprocess
    import sys

    code = ("import sys\n"
            "import models.drafting, models.drafting.capture, models.drafting.bootstrap\n"
            "import models.drafting.walk, models.drafting.lookup, planner.decide.draft\n"
            "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[3], check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("cache", ["fifo", "loo"])
def test_suffix_profiles_do_not_depend_on_the_table_size(int4, monkeypatch, cache):
    """A first global table far too small makes the kernel refuse it (before it passes 70 %
    full) and the replay runs again with twice the slots, until it fits: the profiles are
    those of a table sized for every substring from the start."""
    import models.kernels.lookup as kern
    import models.drafting.lookup as lk_mod

    sub = int4.subset(range(24))
    monkeypatch.setattr(lk_mod, "_SUFFIX_NODES", 1.0)
    want = draft_profiles(sub, Suffix(cache=cache))
    monkeypatch.setattr(lk_mod, "_SUFFIX_NODES", 0.002)
    calls = []
    real = kern.suffix_batch
    monkeypatch.setattr(kern, "suffix_batch", lambda *a: calls.append(a[12]) or real(*a))
    got = draft_profiles(sub, Suffix(cache=cache))
    assert len(calls) >= 3 and calls == sorted(calls)  # refused, doubled, ...
    for f in ("accept_len", "match_len", "proposed"):
        assert getattr(got, f).tolist() == getattr(want, f).tolist()
    assert int(want.accept_len.sum()) > 0
