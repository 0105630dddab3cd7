"""NgramReference's leave-one-out scoring (``without=i``) against a reference rebuilt on the
other completions: the same hits, token for token."""

import numpy as np
import pytest

from models.drafting.ngram_reference import NgramReference


def _cases(rng):
    yield [np.array([5, 6, 7, 5, 6, 8, 5, 6, 7])]
    yield [np.array([1, 2, 3, 1, 2, 4]), np.array([1, 2, 4, 1, 2, 3]), np.array([9])]
    yield [np.array([4]), np.array([4, 5])]                  # no context of order 3 at all
    yield [np.array([1, 2, 3, (1 << 18) + 5, 2, 3, 1, 2]), np.array([2, 3, 1, 2, 3])]
    for _ in range(200):                                     # ties and shared contexts
        yield [rng.integers(0, 4, rng.integers(1, 15)) for _ in range(rng.integers(1, 5))]


def test_without_equals_a_reference_rebuilt_on_the_others():
    rng = np.random.default_rng(1)
    for seqs in _cases(rng):
        full = NgramReference(seqs)
        for j in range(len(seqs)):
            rebuilt = NgramReference([c for n, c in enumerate(seqs) if n != j])
            for q in [*seqs, rng.integers(0, 4, 10)]:
                prompt = rng.integers(0, 4, 3)
                assert np.array_equal(full.top1_hits(prompt, q, without=j),
                                      rebuilt.top1_hits(prompt, q)), (seqs, j, q)


def test_without_on_the_shipped_reference():
    from models.drafting.acceptance_model import load_reference

    ref = load_reference()
    comps = ref["completions"]
    for j in (0, 57, len(comps) - 1):
        rebuilt = NgramReference([c for n, c in enumerate(comps) if n != j])
        for q in (comps[j], comps[(j + 9) % len(comps)]):
            got = ref["reference"].top1_hits(comps[j][:3], q, without=j)
            assert np.array_equal(got, rebuilt.top1_hits(comps[j][:3], q))
    # leaving a completion out changes its own score (its contexts are its own): the check bites
    own = ref["reference"].top1_hits(comps[0][:3], comps[0])
    assert own.mean() > ref["reference"].top1_hits(comps[0][:3], comps[0], without=0).mean()
    with pytest.raises(IndexError):
        ref["reference"].top1_hits(comps[0][:3], comps[0], without=len(comps))
