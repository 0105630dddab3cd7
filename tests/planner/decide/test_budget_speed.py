"""``planner budget`` speed changes that keep the result bit for bit.

* The Δ-curve density (:func:`models.stats.special.gaussian_kde_1d`, tested against SciPy
  in tests/models/stats/test_special.py) needs no ``scipy.stats``.
* Comparisons sized on two threads give the same result as one after another, and the
  first error in plan order.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

import planner.decide.budget as B
from planner.decide.budget import plan_budget, read_plan
from planner.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures"


def test_budget_does_not_import_scipy_stats():
    import subprocess
    import sys

    code = ("import sys\nfrom planner.decide.budget import plan_budget, read_plan\n"
            f"plan_budget(read_plan({str(FIX / 'plan_small.csv')!r}, "
            "overrides={'total_usd': 10.0}), sims=100, seed=0)\n"
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def _dump(res) -> str:
    return json.dumps(res.to_dict(), sort_keys=True)


@pytest.mark.slow
def test_threads_give_the_sequential_result(monkeypatch):
    plan = read_plan(ROOT / "examples" / "plan.toml")
    monkeypatch.setattr(B, "_SIZING_THREADS", 1)
    one = plan_budget(plan, sims=150, seed=3)
    monkeypatch.setattr(B, "_SIZING_THREADS", 2)
    seen = []
    two = plan_budget(plan, sims=150, seed=3, progress=seen.append)
    assert _dump(one) == _dump(two)
    assert seen == [c.name for c in plan.comparisons]      # progress in plan order


def test_threads_raise_the_first_error_in_plan_order(monkeypatch):
    plan = read_plan(FIX / "plan_small.csv", overrides={"total_usd": 10.0})
    bad = [i for i, _ in enumerate(plan.comparisons)][-2:]
    def fake_size(plan, c, **kw):
        if c.index in bad:
            raise InputError(f"bad {c.index}", field="x")
        return real(plan, c, **kw)

    real = B._size
    monkeypatch.setattr(B, "_size", fake_size)
    with pytest.raises(InputError, match=f"bad {bad[0]}"):
        plan_budget(plan, sims=100, seed=0)


def test_one_thread_without_a_threadsafe_layer(monkeypatch):
    """numba's workqueue layer aborts on concurrent launches: sizing is then sequential."""
    import threading

    plan = read_plan(FIX / "plan_small.csv", overrides={"total_usd": 10.0})
    seen = set()
    real = B._size

    def spy(plan, c, **kw):
        seen.add(threading.get_ident())
        return real(plan, c, **kw)

    monkeypatch.setattr(B, "_size", spy)
    monkeypatch.setattr(B, "_threadsafe_kernels", lambda: False)
    plan_budget(plan, sims=100, seed=0)
    assert len(seen) == 1


def test_last_worker_gets_all_numba_threads(monkeypatch):
    import numba

    import models.stats.assurance_analysis as A

    if numba.config.NUMBA_NUM_THREADS < 2 or not B._threadsafe_kernels():
        pytest.skip("one numba thread, or a threading layer that is not thread-safe")
    monkeypatch.setattr(B, "_SIZING_THREADS", 2)
    seen = []
    real = A._k.label_mixtures_fused

    def rec(*a):
        seen.append(numba.get_num_threads())
        return real(*a)

    monkeypatch.setattr(A._k, "label_mixtures_fused", rec)
    plan = read_plan(FIX / "plan_small.csv", overrides={"total_usd": 10.0})
    last = len(plan.comparisons) - 1
    finished, others_done, lock = [0], threading.Event(), threading.Lock()
    real_size = B._size

    def size(plan, c, **kw):                 # the last comparison starts once the others end
        if c.index == last:
            assert others_done.wait(timeout=120)
            return real_size(plan, c, **kw)
        try:
            return real_size(plan, c, **kw)
        finally:
            with lock:
                finished[0] += 1
                if finished[0] == last:
                    others_done.set()

    monkeypatch.setattr(B, "_size", size)
    with_hook = plan_budget(plan, sims=100, seed=0)
    assert A.before_launch is None                      # removed when the budget is done
    assert seen[0] == 1 and max(seen) == numba.config.NUMBA_NUM_THREADS
    monkeypatch.setattr(B, "_SIZING_THREADS", 1)
    assert _dump(plan_budget(plan, sims=100, seed=0)) == _dump(with_hook)
