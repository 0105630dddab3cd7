"""Ahead-of-time compiled kernels (models.kernels._aot): same results as numba's JIT, a guard that
falls back to the JIT on arguments the compiled signature does not cover, no numba in a
``planner draft`` process that has the module, nothing loaded or built when turned off.

The suite runs with ``SPEC_PLANNER_AOT=0`` (tests/conftest.py); the tests here turn it on
for themselves, building into a temporary folder. The build (~20-40 s) is marked slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.kernels import _aot

ROOT = Path(__file__).resolve().parents[3]
EX = ROOT / "examples" / "captures"
CAPTURE = EX / "ar_reference_bf16.jsonl.gz"


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------
def _env(aot_dir: Path, on: bool = True) -> dict:
    return dict(os.environ, SPEC_PLANNER_AOT="1" if on else "0",
                SPEC_PLANNER_AOT_DIR=str(aot_dir), PYTHONPATH=str(ROOT), NO_COLOR="1")


def _copy(args):
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            b = a.copy()
            b.flags.writeable = a.flags.writeable
            out.append(b)
        else:
            out.append(a)
    return out


def _bits(x):
    """A value as bytes and type, for bitwise comparison."""
    if isinstance(x, np.ndarray):
        return (x.dtype.str, x.shape, x.tobytes())
    return (type(x).__name__ if not isinstance(x, (int, np.integer)) else "int",
            np.asarray(x).tobytes() if isinstance(x, (float, np.floating)) else x)


#: (module, attribute) of each kernel's JIT factory (the lookup kernels share one maker).
_JIT_FACTORIES = {
    "parse_token_arrays": ("models.drafting.capture", "_jit_parse"),
    "gather_sums": ("models.drafting.bootstrap", "_jit_gather"),
    "mtp_walk_tpf": ("models.drafting.acceptance_model", "_jit_walk_kernel"),
    "kde_sum_1d": ("models.stats.special", "_jit_kde_sum"),
    "scan_records": ("models.drafting._scan", "_jit_scan"),
    "ndtr_ratio_rows": ("models.stats.special", "_jit_ndtr_ratio_rows"),
    "label_mixtures_fused": ("models.kernels.assurance", "_jit_label_mixtures_fused"),
}


def _jit_factory(name):
    """The numba JIT kernel of ``name`` (as the kernel's module makes it)."""
    import importlib

    mod, *_ = _aot.KERNELS[name]
    if mod == "models.kernels.lookup":
        from models.kernels import lookup as k

        return k._jit_factory(name)
    modname, attr = _JIT_FACTORIES[name]
    return getattr(importlib.import_module(modname), attr)


#: (module, attribute) through which the callers reach each kernel.
_CALL_SITES = {
    "parse_token_arrays": ("models.drafting.capture", "_parse_token_arrays"),
    "pld_batch": ("models.kernels.lookup", "pld_batch"),
    "ngram_batch": ("models.kernels.lookup", "ngram_batch"),
    "suffix_batch": ("models.kernels.lookup", "suffix_batch"),
    "walk_sums": ("models.kernels.lookup", "walk_sums"),
    "walk_batch": ("models.kernels.lookup", "walk_batch"),
    "step_sums": ("models.kernels.lookup", "step_sums"),
    "gather_sums": ("models.drafting.bootstrap", "_gather_sums"),
    "mtp_walk_tpf": ("models.drafting.acceptance_model", "_walk_kernel"),
    "label_mixtures_fused": ("models.kernels.assurance", "label_mixtures_fused"),
    "ndtr_ratio_rows": ("models.stats.special", "_ndtr_ratio_rows"),
    "scan_records": ("models.drafting._scan", "scan_records"),
    "kde_sum_1d": ("models.stats.special", "_kde_kernel"),
}


def _record_real_calls(monkeypatch, cli) -> dict:
    """Arguments (copied before the call) of the first two calls of every kernel during
    ``planner draft`` with each policy on a shipped capture, plus the trace walk and the
    MTP expected-walk kernel on that capture's lengths."""
    import importlib

    store: dict = {}
    for name, (modname, attr) in _CALL_SITES.items():
        mod = importlib.import_module(modname)
        orig = getattr(mod, attr)

        def rec(*a, _o=orig, _n=name):
            if len(store.setdefault(_n, [])) < 2:
                store[_n].append(_copy(a))
            return _o(*a)

        monkeypatch.setattr(mod, attr, rec)
    for pol in ("pld", "ngram", "suffix", "suffix:cache=loo", "mtp", "hybrid-max", "tree",
                "suffix-first"):
        code, out, err = cli("draft", CAPTURE, "--policy", pol, "--seed", "1")
        assert code == 0, err
    # the budget's delta-curve KDE (and its sizing kernels), on a two-comparison plan
    code, out, err = cli("budget", ROOT / "tests" / "fixtures" / "plan_projection.toml", "--sims",
                         "200")
    assert code == 0, err
    from models.drafting import PLD, draft_profiles, load_capture, walk
    from models.drafting.acceptance_model import walk_tpf
    from models.drafting.cost import load_cost_model

    cap = load_capture(CAPTURE)
    # a line the one-pass scanner leaves to msgspec (an escaped id): the raw-array parser
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        odd = Path(d) / "odd.jsonl"
        odd.write_text('{"id":"a\\tb","prompt_token_ids":[1,2],"completion_token_ids":[3]}\n')
        assert load_capture(odd).ids == ["a\tb"]
    b = draft_profiles(cap, PLD(2, 24))
    walk(b.lengths, mode="lookup", lookup=b, cost=load_cost_model("F").step_ms, trace=True)
    L = b.lengths
    off = np.r_[0, np.cumsum(L)].astype(np.int64)
    p = np.random.default_rng(5).uniform(0.2, 0.95, int(off[-1]))
    walk_tpf(p, off, 7)
    return store


# ---------------------------------------------------------------------------------------
# fast: the guard, the lock, the failure marker, the background start, the switch
# ---------------------------------------------------------------------------------------
def test_registered_signatures_parse():
    for name, (_, _, _, ret, args) in _aot.KERNELS.items():
        assert ret in ("void", "i8", "f8[::1]")
        for a in args:
            code, nd, flags = _aot._parse(a)
            assert code in _aot._DTYPES and 0 <= nd <= 3 and set(flags) <= {"r", "w"}


def test_guard_checks_dtype_layout_writeability_and_scalars():
    calls = []

    def aot(*a):
        calls.append(("aot", a))
        return "aot"

    def jit(*a):
        calls.append(("jit", a))
        return "jit"

    g = _aot._Guarded("pld_batch", aot, _aot.KERNELS["pld_batch"][4], lambda: jit)
    i4 = np.zeros(8, np.int32)
    i8 = np.zeros(3, np.int64)
    good = [i4, i8, i8[:2], i8, np.int64(2), 24, i4.copy(), i4.copy(), i4.copy()]
    assert g(*good) == "aot"
    assert calls[-1][1][4] == 2 and type(calls[-1][1][4]) is int  # scalar coerced
    bad = {
        "int64 where int32": (0, np.zeros(8, np.int64)),
        "non-contiguous": (0, np.zeros(16, np.int32)[::2]),
        "2-D": (0, np.zeros((2, 4), np.int32)),
        "read-only output": (6, np.frombuffer(np.zeros(8, np.int32).tobytes(), np.int32)),
        "float scalar": (4, 2.0),
        "bool scalar": (5, True),
        "int32 scalar": (5, np.int32(24)),
        "too big": (5, 1 << 64),
        "list": (0, [0] * 8),
    }
    for what, (i, v) in bad.items():
        args = list(good)
        args[i] = v
        assert g(*args) == "jit", what
        assert calls[-1][1][i] is v  # the JIT gets the caller's arguments unchanged
    assert g(*good[:-1]) == "jit"  # wrong arity
    # a read-only input is fine where the kernel only reads
    ro = np.frombuffer(i4.tobytes(), np.int32)
    assert g(ro, *good[1:]) == "aot"


def test_float32_and_bool_scalars():
    g = _aot._Guarded("x", lambda *a: a, ("f4", "b1", "f8"), lambda: (lambda *a: "jit"))
    assert g(np.float32(0.5), np.bool_(True), 1.5) == (0.5, True, 1.5)
    assert g(0.5, True, 1.5) == "jit"  # a Python float is float64 to numba
    assert g(np.float32(0.5), 1, 1.5) == "jit"
    assert g(np.float32(0.5), False, 1) == "jit"


def test_off_means_jit_no_module_no_build(tmp_path, monkeypatch):
    monkeypatch.setenv("SPEC_PLANNER_AOT", "0")
    monkeypatch.setenv("SPEC_PLANNER_AOT_DIR", str(tmp_path / "aot"))
    monkeypatch.setattr(_aot, "_MODULE", None)
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("build started"))
    sentinel = object()
    assert _aot.kernel("pld_batch", lambda: sentinel) is sentinel
    assert not (tmp_path / "aot").exists()
    assert _aot.main(["build"]) == 0 and not (tmp_path / "aot").exists()


def test_first_use_starts_one_detached_background_build(tmp_path, monkeypatch):
    monkeypatch.setenv("SPEC_PLANNER_AOT", "1")
    monkeypatch.setenv("SPEC_PLANNER_AOT_DIR", str(tmp_path))
    monkeypatch.setattr(_aot, "_MODULE", None)
    monkeypatch.setattr(_aot, "_BUILD_STARTED", False)
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, **kw: started.append((cmd, kw)))
    sentinel = object()
    assert _aot.kernel("pld_batch", lambda: sentinel) is sentinel  # JIT for this run
    assert _aot.kernel("ngram_batch", lambda: sentinel) is sentinel
    assert len(started) == 1
    cmd, kw = started[0]
    assert cmd[1:] == ["-m", "models.kernels._aot", "build", "--background"]
    assert kw["start_new_session"] is True and kw["stdin"] == subprocess.DEVNULL
    assert (tmp_path / f"{_aot._stem()}.log").exists()


def test_no_background_build_after_a_failure_or_while_one_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("SPEC_PLANNER_AOT", "1")
    monkeypatch.setenv("SPEC_PLANNER_AOT_DIR", str(tmp_path))
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, **kw: started.append(cmd))

    def boom(out):
        raise RuntimeError("no C compiler")

    monkeypatch.setattr(_aot, "_compile", boom)
    res = _aot.build()
    assert not res["built"] and "no C compiler" in res["error"]
    fail = tmp_path / f"{_aot._stem()}.failed"
    assert "no C compiler" in fail.read_text()
    assert not (tmp_path / f"{_aot._stem()}.lock").exists()  # released
    monkeypatch.setattr(_aot, "_compile", lambda out: pytest.fail("retried"))
    assert "no C compiler" in _aot.build()["error"]  # not retried on every run
    monkeypatch.setattr(_aot, "_BUILD_STARTED", False)
    _aot._start_background_build()
    assert started == []
    fail.unlink()
    (tmp_path / f"{_aot._stem()}.lock").write_text(f"{os.getpid()} 0\n")  # a live build
    monkeypatch.setattr(_aot, "_BUILD_STARTED", False)
    _aot._start_background_build()
    assert started == []
    assert _aot.build(wait_s=0)["error"].startswith("another build holds")
    # planner compile retries a failed build (and a module that failed to load)
    (tmp_path / f"{_aot._stem()}.lock").unlink()
    fail.write_text("ImportError: bad module\n")
    _aot.module_path().write_bytes(b"corrupt")
    monkeypatch.setattr(_aot, "_compile", lambda out: out.write_bytes(b"rebuilt"))
    assert not _aot.build()["built"]  # without retry_failed: left as it is
    res = _aot.build(retry_failed=True)
    assert res["built"] and res["error"] is None and not fail.exists()
    assert _aot.module_path().read_bytes() == b"rebuilt"


def test_stale_lock_is_taken_over(tmp_path):
    lock = tmp_path / "x.lock"
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    lock.write_text(f"{p.pid} 0\n")  # a dead process
    assert not _aot._lock_held(lock)
    assert _aot._acquire(lock, 0)
    assert lock.read_text().split()[0] == str(os.getpid())
    assert _aot._lock_held(lock)
    assert not _aot._acquire(lock, 0)


def test_hash_follows_the_kernel_sources(monkeypatch, tmp_path):
    h = _aot.source_hash()
    assert len(h) == 16 and _aot.module_path().name.startswith(f"_kernels_{h}")
    src = tmp_path / "k.py"
    src.write_text("x = 1\n")
    monkeypatch.setattr(_aot, "_sources", lambda: [src])
    monkeypatch.setattr(_aot, "_HASH", None)
    h1 = _aot.source_hash()
    src.write_text("x = 2\n")
    monkeypatch.setattr(_aot, "_HASH", None)
    assert _aot.source_hash() != h1 != h


def test_kernel_modules_import_without_numba():
    code = ("import sys\n"
            "import models.kernels.lookup, models.drafting.capture\n"
            "import models.drafting.bootstrap, models.drafting.acceptance_model\n"
            "import models.kernels._aot, models.kernels.assurance, models.stats.assurance\n"
            "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------------------------
# slow: a real build
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A folder holding the compiled module, built by ``planner compile`` (shared by
    pytest-xdist workers through the lock: the second waits and finds it built)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # .../pytest-N/popen-gwK: share pytest-N
        base = base.parent
    d = base / "aot-test-modules"
    out = subprocess.run([sys.executable, "-m", "planner", "compile"], cwd=ROOT,
                         env=_env(d), capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "compiled" in out.stdout or "up to date" in out.stdout
    return d


def _load(built: Path, monkeypatch):
    """The compiled module in ``built``, loaded in this process (models.kernels._aot's state is
    restored after the test; the kernels' own modules keep what they resolved)."""
    monkeypatch.setenv("SPEC_PLANNER_AOT", "1")
    monkeypatch.setenv("SPEC_PLANNER_AOT_DIR", str(built))
    monkeypatch.setattr(_aot, "_MODULE", None)
    monkeypatch.setattr(_aot, "_BUILD_STARTED", True)
    mod = _aot._load_module()
    assert mod is not None, _aot.status()
    return mod


@pytest.mark.slow
def test_every_kernel_bitwise_equal_to_jit_on_real_inputs(built, cli, monkeypatch):
    with pytest.MonkeyPatch.context() as mp:  # recorded with the JIT kernels (AOT off)
        calls = _record_real_calls(mp, cli)
    aot_mod = _load(built, monkeypatch)
    assert set(calls) == set(_aot.KERNELS), set(_aot.KERNELS) ^ set(calls)
    for name, recs in calls.items():
        jit = _jit_factory(name)()
        g = _aot._Guarded(name, getattr(aot_mod, name), _aot.KERNELS[name][4], None)
        for args in recs:
            a1, a2 = _copy(args), _copy(args)
            ok = g.coerce(a1)
            assert ok is not None, f"{name}: the guard refuses the callers' arguments"
            r1 = g.fn(*ok)
            r2 = jit(*a2)
            assert _bits(r1) == _bits(r2), name
            for i, (x, y) in enumerate(zip(a1, a2)):
                if isinstance(x, np.ndarray):
                    assert _bits(x) == _bits(y), f"{name} argument {i}"
            written = [i for i, s in enumerate(_aot.KERNELS[name][4]) if s.endswith("w")]
            assert any(np.any(a1[i] != args[i]) for i in written) or r1 is not None, name


@pytest.mark.slow
def test_guard_mismatch_falls_back_to_jit_with_the_right_answer(built, monkeypatch):
    from models.kernels import lookup as k
    from models.drafting.capture import load_capture
    from models.drafting.lookup import _layout

    cap = load_capture(CAPTURE)
    seq, seq_off, plen, comp_off = _layout(cap.prompts[:20], cap.completions[:20])
    seq = np.ascontiguousarray(seq, np.int32)
    n = int(comp_off[-1])
    jit_calls = []

    def factory():
        jit_calls.append(1)
        return k._jit_factory("pld_batch")()

    _load(built, monkeypatch)
    g = _aot.kernel("pld_batch", factory)
    assert isinstance(g, _aot._Guarded)

    def run(s):
        outs = [np.zeros(n, np.int32) for _ in range(3)]
        g(s, seq_off, plen, comp_off, 2, 24, *outs)
        return outs

    want = run(seq)
    assert jit_calls == [] and want[0].sum() > 0
    wide = np.zeros(2 * seq.size, np.int32)
    wide[::2] = seq
    for other in (seq.astype(np.int64), wide[::2]):  # int64 where int32; non-contiguous
        got = run(other)
        assert all(np.array_equal(a, b) for a, b in zip(got, want))
    assert jit_calls == [1]


def _draft(env, *args, command="draft"):
    code = ("import sys\nfrom planner.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code\n"
            "print(sorted(m for m in sys.modules if m in ('numba', 'scipy.special')"
            " or m.startswith('_kernels_')), file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", code, command, *map(str, args)], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout, out.stderr.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.parametrize("args", [(), (CAPTURE, "--policy", "pld", "--policy", "suffix",
                                       "--policy", "mtp")])
def test_draft_with_the_module_imports_no_numba_and_prints_the_same_json(built, args):
    before = sorted(p.name for p in built.iterdir())
    aot_out, aot_mods = _draft(_env(built), *args, "--seed", "7", "--json")
    jit_out, jit_mods = _draft(_env(built, on=False), *args, "--seed", "7", "--json")
    assert aot_out == jit_out and aot_out.startswith("{")
    assert "numba" not in aot_mods and "_kernels_" in aot_mods
    # nor scipy.special (its import was a fifth of a warm draft): the Normal CDF is
    # models.stats.special's, the platform prior's grid quantiles stored (scale_quantiles.json)
    assert "scipy.special" not in aot_mods
    assert "_kernels_" not in jit_mods and "numba" in jit_mods  # off: never loaded
    assert sorted(p.name for p in built.iterdir()) == before  # and nothing built


@pytest.mark.slow
def test_budget_with_the_module_sizes_without_numba_and_prints_the_same_json(built):
    """budget's sizing threads run the AOT kernels (they release the GIL): no numba in the
    process, and the same JSON as numba's parallel kernels (elapsed time aside)."""
    args = (ROOT / "tests" / "fixtures" / "plan_projection.toml", "--sims", "200", "--seed",
            "3", "--json")
    aot_out, aot_mods = _draft(_env(built), *args, command="budget")
    jit_out, jit_mods = _draft(_env(built, on=False), *args, command="budget")
    assert "numba" not in aot_mods and "_kernels_" in aot_mods and "numba" in jit_mods
    a, b = json.loads(aot_out), json.loads(jit_out)
    for d in (a, b):
        d.pop("elapsed_s", None)
    assert a == b and a["comparisons"]


def test_compile_into_a_folder_it_cannot_make_is_one_line_exit_2(tmp_path):
    """A cache 'folder' that is a file: one line naming it, exit 2, no traceback; a draft in
    the same setting falls back to the JIT quietly (the JIT path is what the suite runs)."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    env = {**os.environ, "SPEC_PLANNER_AOT": "1", "SPEC_PLANNER_AOT_DIR": str(blocker / "aot")}
    out = subprocess.run([sys.executable, "-m", "planner", "compile"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith("planner: error: ") and "SPEC_PLANNER_AOT_DIR" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
