"""models.kernels: lazily JIT-compiled kernels, the cache folder chosen on first use, and a
cache that fails (corrupt: rebuilt; unwritable, no home: an in-memory compile) with the same
results."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]

#: A real kernel run in a child process: prints the MTP walk's tokens per forward (compiled)
#: next to the plain Python kernel's, and where numba cached (empty: in memory).
_CHILD = """
import os, sys
import numpy as np
{prelude}
from models.kernels import mtp, _jit
p = np.linspace(0.05, 0.95, 300)
off = np.array([0, 120, 300], np.int64)
got = mtp.walk_tpf(p, off, 7)
ref = mtp._py_walk_kernel(p, off, 7)
print(repr(got.tolist() == ref.tolist()), _jit._STATE["cache"], os.environ.get("NUMBA_CACHE_DIR", ""))
"""


def _child(env_changes: dict, *, prelude: str = "", cwd=ROOT):
    env = dict(os.environ)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", _CHILD.format(prelude=prelude)], env=env,
                         cwd=cwd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split(), out.stderr


def test_importing_the_kernels_imports_no_numba_and_sets_nothing():
    code = ("import os, sys\n"
            "before = dict(os.environ)\n"
            "import models, models.kernels.lookup, models.kernels.assurance, models.kernels.capture\n"
            "import models.kernels.bootstrap, models.kernels.mtp, models.kernels.special\n"
            "import models.stats.special, models.stats.assurance, models.drafting.capture\n"
            "print('numba' in sys.modules, dict(os.environ) == before)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_compiled_kernels_give_the_plain_python_results():
    from models.kernels import bootstrap, capture, mtp, special

    rng = np.random.default_rng(5)
    p = rng.uniform(0, 1, 500)
    off = np.array([0, 1, 40, 500], np.int64)
    assert mtp.walk_tpf(p, off, 7).tolist() == mtp._py_walk_kernel(p, off, 7).tolist()

    text = b"[1,2,3][ 40 , 5 ][x][2147483648]"
    buf = np.frombuffer(text, np.uint8)
    bounds = np.array([0, 7, 17, 20, len(text)], np.int64)
    outs = [np.zeros(20, np.int32) for _ in range(2)]
    counts = [np.zeros(4, np.int64) for _ in range(2)]
    n_jit = capture.parse_token_arrays(buf, bounds, outs[0], counts[0])
    n_py = capture._py_parse_token_arrays(text, bounds, outs[1], counts[1])  # Python ints
    assert n_jit == n_py == 5 and counts[0].tolist() == [3, 2, -1, -1]
    assert outs[0][:5].tolist() == outs[1][:5].tolist() == [1, 2, 3, 40, 5]

    x = rng.normal(0, 3, 300)
    scales = rng.uniform(0.5, 4, 7)
    a, b = np.empty((7, 300)), np.empty((7, 300))
    special.ndtr_ratio_rows(x, scales, a)
    special._py_ndtr_ratio_rows(x, scales, b)
    assert np.array_equal(a, b)
    d, xs = rng.normal(0, 1, 200), np.linspace(-3, 3, 50)
    assert np.allclose(special.kde_sum(d, xs, 0.4), special._py_kde_sum(d, xs, 0.4),
                       rtol=1e-13, atol=0)

    V = rng.normal(0, 1, (5, 300))
    sel = rng.integers(0, 5, (3, 4)).astype(np.int64)
    idx = rng.integers(0, 300, (4, 200)).astype(np.int64)
    from models.drafting.bootstrap import _pairwise_program

    prog = _pairwise_program(200)
    out = np.zeros((3, 4))
    bootstrap.gather_sums(V, sel, idx, 0, 4, prog, out)
    want = np.array([[V[sel[s, b]][idx[b]].sum() for b in range(4)] for s in range(3)])
    assert np.array_equal(out, want)  # NumPy's pairwise sums, bit for bit


def test_a_corrupt_cache_file_is_rebuilt(tmp_path):
    """A truncated or garbage cache file (UnpicklingError, EOFError) gives the right answer,
    and the damaged entries are rebuilt into the cache, so the next run loads them."""
    cache = tmp_path / "numba"
    ok, where, folder = _child({"NUMBA_CACHE_DIR": str(cache)})[0]
    assert (ok, where, folder) == ("True", "True", str(cache))
    files = [f for f in cache.rglob("*") if f.suffix in (".nbi", ".nbc")]
    assert files, "nothing was cached"
    for damage in ("truncated", "garbage"):
        for f in [f for f in cache.rglob("*") if f.suffix in (".nbi", ".nbc")]:
            f.write_bytes(f.read_bytes()[: max(1, f.stat().st_size // 3)]
                          if damage == "truncated" else b"\x80\x04not a pickle")
        ok, where, _ = _child({"NUMBA_CACHE_DIR": str(cache)})[0]
        assert (ok, where) == ("True", "True"), damage  # right answer, cache rebuilt
        stamps = {f: f.stat().st_mtime_ns for f in cache.rglob("*.nbc")}
        ok, where, _ = _child({"NUMBA_CACHE_DIR": str(cache)})[0]
        assert (ok, where) == ("True", "True")
        assert {f: f.stat().st_mtime_ns for f in cache.rglob("*.nbc")} == stamps  # loaded


def test_a_cache_file_damaged_inside_is_caught_by_its_checksum(tmp_path):
    """Bytes flipped inside numba's object code still unpickle: LLVM then aborted the process
    (SIGABRT) on every later run. Each cache file has a checksum written with it; a
    mismatch rebuilds the module's entries before numba reads them."""
    import random

    cache = tmp_path / "numba"
    assert _child({"NUMBA_CACHE_DIR": str(cache)})[0][:2] == ["True", "True"]
    data = sorted(cache.rglob("*.nbc"))
    assert data and all(Path(str(f) + ".b2sum").exists() for f in data)
    rng = random.Random(2)  # this pattern aborted the process before the checksums
    for f in data:
        b = bytearray(f.read_bytes())
        for _ in range(20):
            b[rng.randrange(len(b) // 3, len(b))] = rng.randrange(256)
        f.write_bytes(bytes(b))
    ok, where, _ = _child({"NUMBA_CACHE_DIR": str(cache)})[0]
    assert (ok, where) == ("True", "True")
    stamps = {f: f.stat().st_mtime_ns for f in cache.rglob("*.nbc")}
    assert _child({"NUMBA_CACHE_DIR": str(cache)})[0][:2] == ["True", "True"]
    assert {f: f.stat().st_mtime_ns for f in cache.rglob("*.nbc")} == stamps  # loaded again


@pytest.mark.parametrize("env,note", [
    ({"NUMBA_NUM_THREADS": "0"}, "NUMBA_NUM_THREADS='0'"),
    ({"NUMBA_NUM_THREADS": "100000"}, "NUMBA_NUM_THREADS='100000'"),
    ({"NUMBA_THREADING_LAYER": "bogus"}, "NUMBA_THREADING_LAYER='bogus'"),
    ({"NUMBA_DISABLE_JIT": "1"}, "plain Python"),
])
def test_numba_settings_that_would_fail_every_kernel_fall_back(tmp_path, env, note):
    """numba raised at its first launch ("Number of threads specified must be > 0", "The
    threading layer requested 'bogus' is unknown") or, with NUMBA_DISABLE_JIT, the kernels
    had no compile(): numba's defaults (or the plain Python kernel) instead, one note."""
    out, err = _child({"NUMBA_CACHE_DIR": str(tmp_path / "numba"), **env})
    assert out[0] == "True", err
    assert note in err and "Traceback" not in err, err


def test_an_unloadable_threading_layer_falls_back_to_the_default(tmp_path):
    """NUMBA_THREADING_LAYER=tbb without TBB: "No threading layer could be loaded" at the
    first parallel kernel; numba's default layer instead, one note."""
    # one parallel kernel is enough (the layer loads at its compile): a small one made the
    # way models.kernels.assurance makes its two (a KernelGroup with prange, parallel=True,
    # nogil=True) goes through the same fallback; assurance's label_mixtures took 13 s to
    # compile, compile_all 40 s
    (tmp_path / "par_kernel.py").write_text(
        "import numpy as np\n"
        "from models.kernels._jit import KernelGroup\n"
        "_prange = range\n"
        "def _py_psum(x):\n"
        "    out = np.empty(x.shape[0])\n"
        "    for i in _prange(x.shape[0]):\n"
        "        out[i] = 2.0 * x[i] + 1.0\n"
        "    return out.sum()\n"
        "psum = KernelGroup(globals(), prange='_prange').kernel(\n"
        "    _py_psum, parallel=True, nogil=True, sig=('f8[::1]',))\n")
    code = ("import numpy as np\n"
            "import par_kernel\n"
            "from models.kernels import _jit\n"
            "ok = par_kernel.psum(np.arange(1000.0)) == 1000.0 ** 2\n"
            "from numba.core.registry import CPUDispatcher\n"
            "print(ok, isinstance(par_kernel.psum._disp, CPUDispatcher), _jit._STATE['cache'])\n")
    env = dict(os.environ, NUMBA_THREADING_LAYER="tbb",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["True", "True", "True"], out.stderr[-3000:]  # compiled, cached
    try:
        import tbb  # noqa: F401
    except ImportError:
        assert "threading layer 'tbb' could not be loaded" in out.stderr


def test_an_unwritable_cache_folder_compiles_in_memory(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    ok, where, _ = _child({"NUMBA_CACHE_DIR": str(blocker / "numba")})[0]
    assert (ok, where) == ("True", "False")
    # a read-only install: numba finds no place to cache ("no locator available")
    no_locator = ("import numba.core.caching as c\n"
                  "c.CacheImpl._locator_classes = []\n")
    ok, where, _ = _child({"NUMBA_CACHE_DIR": str(tmp_path / "numba")}, prelude=no_locator)[0]
    assert (ok, where) == ("True", "False")


@pytest.mark.parametrize("home", ["", None, "/", "/nonexistent-home"])
def test_no_home_compiles_in_memory_and_makes_no_folder(tmp_path, home):
    from models.kernels import _cache

    env = {"HOME": home, "XDG_CACHE_HOME": None, "NUMBA_CACHE_DIR": None}
    ok, where, *rest = _child(env, cwd=tmp_path)[0]
    assert (ok, where, rest) == ("True", "False", [])
    assert list(tmp_path.iterdir()) == []  # no ./.cache from an empty HOME
    assert not os.path.exists("/nonexistent-home")
    old = dict(os.environ)
    try:
        for k, v in env.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        assert _cache.cache_dir() is None and _cache.cache_folder() is None
    finally:
        os.environ.clear()
        os.environ.update(old)


def test_the_user_cache_folder_is_chosen_on_first_use(tmp_path):
    ok, where, folder = _child({"XDG_CACHE_HOME": str(tmp_path), "NUMBA_CACHE_DIR": None,
                                "HOME": str(tmp_path / "home")})[0]
    assert (ok, where, folder) == ("True", "True", str(tmp_path / "spec-planner" / "numba"))
    assert any((tmp_path / "spec-planner" / "numba").rglob("*.nbi"))


def test_first_compile_says_so_on_a_terminal_only(tmp_path):
    """The progress line goes to stderr when it is a terminal and the cache is empty; a
    piped stderr (scripts, --json) gets nothing."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    _, err = _child(env)
    assert "compiling" not in err
    tty = "import sys\nsys.stderr.isatty = lambda: True\n"
    _, err = _child({"NUMBA_CACHE_DIR": str(tmp_path / "fresh")}, prelude=tty)
    assert err.count("planner: compiling the replay kernels once") == 1
    _, err = _child({"NUMBA_CACHE_DIR": str(tmp_path / "fresh")}, prelude=tty)
    assert "compiling" not in err  # cached now


def _planner(args, env_changes, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([sys.executable, "-m", "planner", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=1200)


@pytest.mark.slow
def test_seeded_json_is_the_same_cold_warm_and_in_memory(tmp_path):
    """A draft compiled into an empty cache, loaded from it, and compiled in memory (no home
    directory) prints the same seeded JSON; nothing compiles on stdout.

    One seeded Monte-Carlo policy (MTP) on a small capture, without the per-prompt counters
    (whose calibration compiles the suffix lookup kernel, 7 s): it still goes through the
    capture parser, the walk sums, the bootstrap, the special functions and the parallel
    assurance kernel of the runs/arm sizing, compiled in 17 s instead of the default
    draft's 31 s (five policies, the shipped capture), twice."""
    capture = ROOT / "tests" / "fixtures" / "draft_small_capture.jsonl.gz"
    args = ["draft", str(capture), "-p", "mtp", "--per-prompt", "none", "--seed", "1", "--json"]
    cache = {"NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    cold = _planner(args, cache)
    assert cold.returncode == 0, cold.stderr[-2000:]
    compiled = {f.name.split(".")[0] for f in (tmp_path / "numba").rglob("*.nbi")}
    assert compiled >= {"assurance", "bootstrap", "capture", "lookup", "special"}, compiled
    warm = _planner(args, cache)
    memory = _planner(args, {"HOME": "", "XDG_CACHE_HOME": None, "NUMBA_CACHE_DIR": None},
                      cwd=tmp_path)
    for r in (warm, memory):
        assert r.returncode == 0, r.stderr[-2000:]
    assert cold.stdout == warm.stdout == memory.stdout
    assert cold.stdout.lstrip().startswith("{")
    mtp = json.loads(cold.stdout)["policies"][1]
    assert mtp["label"] == "mtp(k=7)" and mtp["stochastic"] and mtp["mc_replicates"] == 200
    assert mtp["worth_a_run"]["runs_per_arm"] >= 1  # sized by the assurance kernel


@pytest.mark.slow
def test_planner_compile_fills_the_cache_in_the_foreground(tmp_path):
    cache = tmp_path / "numba"
    r = _planner(["compile"], {"NUMBA_CACHE_DIR": str(cache)})
    assert r.returncode == 0, r.stderr[-2000:]
    from models.kernels._jit import KERNEL_MODULES

    assert r.stdout.startswith("compiled ") and str(cache) in r.stdout
    assert len(list(cache.rglob("*.nbi"))) >= len(KERNEL_MODULES)
    again = _planner(["compile"], {"NUMBA_CACHE_DIR": str(cache)})
    assert again.returncode == 0 and again.stdout.split()[:3] == r.stdout.split()[:3]


def test_another_installs_damaged_entries_leave_this_installs_cache_alone(tmp_path):
    """numba keeps each install's (clone's, worktree's) entries in its own subfolder of one
    cache folder. A checksum mismatch there (another version, a process still writing) used
    to purge this install's entries of the module too, so the next command compiled again."""
    cache = tmp_path / "numba"
    assert _child({"NUMBA_CACHE_DIR": str(cache)})[0][:2] == ["True", "True"]
    ours = sorted(cache.rglob("*.nbc"))
    assert ours and len({f.parent for f in ours}) == 1
    other = cache / "kernels_0123456789abcdef0123456789abcdef01234567"
    other.mkdir()
    for name in ("mtp._py_walk_kernel-15.py311.nbi", "mtp._py_walk_kernel-15.py311.1.nbc"):
        (other / name).write_bytes(b"written by another install")
        (other / (name + ".b2sum")).write_text("0" * 32 + "\n")  # does not match
    stamps = {f: f.stat().st_mtime_ns for f in ours}
    assert _child({"NUMBA_CACHE_DIR": str(cache)})[0][:2] == ["True", "True"]
    assert {f: f.stat().st_mtime_ns for f in cache.rglob("*.nbc") if f.parent != other} \
        == stamps  # loaded, not rebuilt
    assert len(list(other.iterdir())) == 4  # and the other install's files are its own business
