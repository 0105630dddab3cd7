"""Ahead-of-time compiled kernels: the numba kernels as one compiled extension module.

Why (issue 9): a warm ``planner draft`` spent ~0.75 s of CPU loading numba (its import,
then its CPU target's typing registries at the first cached dispatch, which also imports
``scipy.linalg`` to check BLAS). The kernels themselves take a fraction of that. Compiled
ahead of time with :mod:`numba.pycc`, the same Python kernel functions load as a plain
extension module in under a millisecond and numba is never imported.

One source of truth: every kernel is a plain Python function (``_py_*`` in its module),
compiled two ways from that same function, by numba's JIT (``njit``, as before) and here by
``numba.pycc`` for the explicit signatures of :data:`KERNELS`. Nothing a kernel computes
depends on which way it was compiled (the tests check results are bitwise identical).

**Where.** ``<user cache folder>/spec-planner/aot/_kernels_<hash><ext suffix>`` (the
folder beside numba's cache, :func:`models.kernels._cache.cache_dir`; ``$SPEC_PLANNER_AOT_DIR``
overrides it). ``<hash>`` is the SHA-256 of the kernel source files, this file, numba's
and NumPy's versions, the Python version and the machine (architecture and the CPU's
feature flags: the module is compiled for the host CPU), so any change selects a new
module and a stale one is never loaded.

**When it is built.** ``planner compile`` builds it in the foreground. Otherwise the first
kernel call of a process that finds no module starts ``python -m models.kernels._aot build`` as a
detached background process (its output in ``_kernels_<hash>.log``) and uses numba's JIT
as before; later runs use the module. A lock file keeps two builds from running at once;
a failed build leaves ``_kernels_<hash>.failed`` (the error) so that a machine without a
C compiler does not retry on every run (``planner compile`` retries). The module is
compiled into a temporary folder and moved into place with :func:`os.replace` (atomic).

**Use.** :func:`kernel` returns the compiled function behind a type guard when the module
exists, else numba's JIT dispatcher. pycc's wrappers do not check array types (an int64
array passed where int32 is compiled is read as garbage), so the guard checks every
argument against the signature (array type, dtype, dimensions, C-contiguity, alignment,
writeability where the kernel writes; scalars of the exact kinds numba would type alike)
and calls the JIT dispatcher on any mismatch. The compiled kernels are serial (pycc has
no ``parallel=True``: ``prange`` runs as ``range``) and release the GIL while they run
(numba's ``nogil``: pycc has no option for it, so the build compiles with numba's
``release_gil`` flag set; :func:`_compile`), so threads can run them on several cores, as
``planner budget`` does.

``SPEC_PLANNER_AOT=0`` turns off both the use and the build.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["KERNELS", "aot_dir", "build", "enabled", "kernel", "lazy", "module_path",
           "source_hash", "status"]

#: Environment variable: ``0`` (or ``false``, ``no``, ``off``) disables AOT use and build.
ENV = "SPEC_PLANNER_AOT"
#: Environment variable: the folder holding the compiled modules (default: see module doc).
ENV_DIR = "SPEC_PLANNER_AOT_DIR"

_MODELS = Path(__file__).resolve().parents[1]

#: The AOT kernels: name -> (module, Python function, setup function or None, return type,
#: argument types). The setup function (in the module) compiles the kernel's callees with
#: numba first, so the kernel body's global names resolve to compiled functions. Types:
#: ``i4`` int32, ``i8`` int64, ``u1`` uint8, ``f4`` float32, ``f8`` float64, ``b1`` bool;
#: ``[::1]``, ``[:,::1]``, ``[:,:,::1]`` C-contiguous arrays of 1-3 dimensions; after an
#: array, ``w`` = the kernel writes it (the guard requires a writeable array), ``r`` =
#: compiled for a read-only array (``np.frombuffer`` of bytes). The signatures are those
#: the callers pass (``dispatcher.signatures`` after ``planner draft`` with every policy).
KERNELS: dict = {
    "parse_token_arrays": (
        "models.drafting.capture", "_py_parse_token_arrays", None, "i8",
        ("u1[::1]r", "i8[::1]", "i4[::1]w", "i8[::1]w")),
    "scan_records": (
        "models.drafting._scan", "_py_scan_records", "_jit_helpers", "i8",
        ("u1[::1]r", "i4[::1]w", "i8[:,::1]w")),
    "pld_batch": (
        "models.kernels.lookup", "_py_pld_batch", "_jit_helpers", "void",
        ("i4[::1]", "i8[::1]", "i8[::1]", "i8[::1]", "i8", "i8",
         "i4[::1]w", "i4[::1]w", "i4[::1]w")),
    "ngram_batch": (
        "models.kernels.lookup", "_py_ngram_batch", "_jit_helpers", "void",
        ("i4[::1]", "i8[::1]", "i8[::1]", "i8[::1]", "i8", "i8", "i8",
         "i4[::1]w", "i4[::1]w", "i4[::1]w")),
    "suffix_batch": (
        "models.kernels.lookup", "_py_suffix_batch", "_jit_helpers", "i8",
        ("i4[::1]", "i8[::1]", "i8[::1]", "i8[::1]", "i8[::1]", "i8", "i8", "f8", "f8", "f4",
         "i8", "i8", "i8", "i8", "i4[::1]w", "i4[::1]w", "i4[::1]w", "i8[::1]w")),
    "walk_sums": (
        "models.kernels.lookup", "_py_walk_sums", "_jit_helpers", "i8",
        ("i4[::1]", "i4[::1]", "i8[::1]", "i8", "f8[::1]", "i8", "f8[::1]w", "f8[::1]w",
         "f8[::1]w", "f8[::1]w", "f8[::1]w", "f8[::1]w", "i8[::1]w")),
    "walk_batch": (
        "models.kernels.lookup", "_py_walk_batch", "_jit_helpers", "i8",
        ("i4[::1]", "i4[::1]", "i4[::1]", "i8[::1]", "i8", "i4[::1]w", "i4[::1]w",
         "i4[::1]w", "i4[::1]w", "i4[::1]w", "i8[::1]w")),
    "step_sums": (
        "models.kernels.lookup", "_py_step_sums", "_jit_helpers", "i8",
        ("i8[::1]", "i4[::1]", "i4[::1]", "f8[::1]", "i8", "f8[::1]w", "f8[::1]w",
         "f8[::1]w", "f8[::1]w", "f8[::1]w", "f8[::1]w")),
    "gather_sums": (
        "models.drafting.bootstrap", "_py_gather_sums", "_jit_helpers", "void",
        ("f8[:,::1]", "i8[:,::1]", "i8[:,::1]", "i8", "i8", "i8[:,::1]", "f8[:,::1]w")),
    "ndtr_ratio_rows": (
        "models.stats.special", "_py_ndtr_ratio_rows", None, "void",
        ("f8[::1]", "f8[::1]", "f8[:,::1]w")),
    "kde_sum_1d": (
        "models.stats.special", "_py_kde_sum", None, "f8[::1]",
        ("f8[::1]", "f8[::1]", "f8[::1]", "f8")),
    "mtp_walk_tpf": (
        "models.drafting.acceptance_model", "_py_walk_kernel", None, "f8[::1]",
        ("f8[::1]", "i8[::1]", "i8")),
    "label_mixtures_fused": (
        "models.kernels.assurance", "_py_kernel_fused", "_jit_helpers", "void",
        ("f8[:,::1]", "f8[:,::1]", "f8[:,::1]", "f8[:,::1]", "f8[::1]", "f8", "f8[::1]",
         "b1[:,::1]", "f8", "i8", "f8", "f8[:,:,::1]w", "b1", "f8[:,::1]")),
}

_DTYPES = {"i4": np.dtype(np.int32), "i8": np.dtype(np.int64), "u1": np.dtype(np.uint8),
           "f4": np.dtype(np.float32), "f8": np.dtype(np.float64), "b1": np.dtype(np.bool_)}


def _parse(spec: str) -> tuple:
    """``(dtype code, ndim, flags)`` of one argument type of :data:`KERNELS` (ndim 0 for a
    scalar)."""
    if "[" not in spec:
        return spec, 0, ""
    code, rest = spec.split("[", 1)
    dims, flags = rest.split("]", 1)
    parts = dims.split(",")
    if parts[-1] != "::1" or any(p != ":" for p in parts[:-1]) or code not in _DTYPES:
        raise ValueError(f"unsupported AOT argument type {spec!r}")
    return code, len(parts), flags


def enabled() -> bool:
    """Whether AOT kernels are used and built (``$SPEC_PLANNER_AOT`` is not 0/false/no/off)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def aot_dir() -> Path:
    """Folder of the compiled modules: ``$SPEC_PLANNER_AOT_DIR``, else ``aot`` beside
    numba's cache folder (:func:`models.kernels._cache.cache_dir`). Not created here."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    from models.kernels._cache import cache_dir

    return cache_dir().parent / "aot"


def _sources() -> list:
    files = {Path(__file__).resolve()}
    for mod, *_ in KERNELS.values():
        files.add(_MODELS.parent.joinpath(*mod.split(".")).with_suffix(".py"))
    return sorted(files)


def _cpu_flags() -> bytes:
    """The CPU feature flags (Linux ``/proc/cpuinfo``; empty elsewhere): the module is
    compiled for the host CPU, so a home folder shared by different machines must not
    share it."""
    try:
        with open("/proc/cpuinfo", "rb") as fh:
            for line in fh:
                if line.startswith((b"flags", b"Features")):
                    return line
    except OSError:
        pass
    return platform.processor().encode()


_HASH = None


def source_hash() -> str:
    """16 hex digits of SHA-256 over the kernel sources, numba's version file, NumPy's and
    Python's versions and the machine (computed once per process, without importing
    numba)."""
    global _HASH
    if _HASH is None:
        h = hashlib.sha256()
        for f in _sources():
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
        spec = importlib.util.find_spec("numba")
        if spec is not None and spec.origin:
            try:
                h.update(Path(spec.origin).with_name("_version.py").read_bytes())
            except OSError:
                h.update(spec.origin.encode())
        h.update(f"{np.__version__}|{sys.version}|{platform.machine()}|".encode())
        h.update(_cpu_flags())
        _HASH = h.hexdigest()[:16]
    return _HASH


def _stem() -> str:
    return f"_kernels_{source_hash()}"


def module_path() -> Path:
    """Path of the compiled module for the current sources and versions."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return aot_dir() / f"{_stem()}{suffix}"


def status() -> dict:
    """``{"enabled", "path", "built", "failed"}``: the state of the AOT module (``failed``
    is the recorded error of a failed build, or None)."""
    p = module_path()
    fail = p.with_name(_stem() + ".failed")
    try:
        failed = fail.read_text(errors="replace") if fail.exists() else None
    except OSError:
        failed = None
    return {"enabled": enabled(), "path": str(p), "built": p.exists(), "failed": failed}


# ---------------------------------------------------------------------------------------
# use
# ---------------------------------------------------------------------------------------
_MODULE = None  # the loaded module, False when there is none (after the first look)
_BUILD_STARTED = False


def _load_module():
    """The compiled module, or None (and a background build started when there is none)."""
    global _MODULE
    if _MODULE is None:
        _MODULE = False
        if not enabled():
            return None
        try:
            p = module_path()
            if p.exists():
                loader = importlib.machinery.ExtensionFileLoader(_stem(), str(p))
                spec = importlib.util.spec_from_file_location(_stem(), p, loader=loader)
                mod = importlib.util.module_from_spec(spec)
                loader.exec_module(mod)
                _MODULE = mod
            else:
                _start_background_build()
        except Exception as exc:  # noqa: BLE001 - an unusable module: JIT, and say why once
            _mark_failed(f"loading {_stem()}: {type(exc).__name__}: {exc}")
    return _MODULE or None


def _mark_failed(text: str) -> None:
    try:
        d = aot_dir()
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{_stem()}.failed").write_text(text + "\n")
    except OSError:
        pass


def _start_background_build() -> None:
    """Start ``python -m models.kernels._aot build`` detached, unless a build failed before or one
    is running (its lock held)."""
    global _BUILD_STARTED
    if _BUILD_STARTED:
        return
    _BUILD_STARTED = True
    d = aot_dir()
    stem = _stem()
    if (d / f"{stem}.failed").exists() or _lock_held(d / f"{stem}.lock"):
        return
    import subprocess

    try:
        d.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        root = str(_MODELS.parent)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                    else "")
        with open(d / f"{stem}.log", "ab") as log:
            subprocess.Popen([sys.executable, "-m", "models.kernels._aot", "build", "--background"],
                             stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             cwd=root, env=env, start_new_session=True, close_fds=True)
    except OSError:
        pass


class _Guarded:
    """The compiled kernel behind a type guard; numba's JIT dispatcher on any mismatch."""

    __slots__ = ("name", "fn", "checks", "jit_factory", "_jit")

    def __init__(self, name, fn, specs, jit_factory):
        self.name = name
        self.fn = fn
        self.jit_factory = jit_factory
        self._jit = None
        checks = []
        for s in specs:
            code, nd, flags = _parse(s)
            checks.append((code, nd, _DTYPES.get(code), "w" in flags))
        self.checks = tuple(checks)

    def jit(self):
        """The JIT dispatcher (made on first need)."""
        if self._jit is None:
            self._jit = self.jit_factory()
        return self._jit

    def coerce(self, args):
        """``args`` as the compiled function takes them, or None when one does not match
        its signature."""
        if len(args) != len(self.checks):
            return None
        out = list(args)
        for i, (code, nd, dt, write) in enumerate(self.checks):
            a = args[i]
            if nd:
                if type(a) is not np.ndarray or a.ndim != nd or a.dtype != dt:
                    return None
                fl = a.flags
                if not (fl.c_contiguous and fl.aligned) or (write and not fl.writeable):
                    return None
            else:
                t = type(a)
                if code == "i8":
                    if not (t is int or t is np.int64) or not -(1 << 63) <= a < (1 << 63):
                        return None
                    out[i] = int(a)
                elif code == "f8":
                    if not (t is float or t is np.float64):
                        return None
                    out[i] = float(a)
                elif code == "f4":
                    if t is not np.float32:
                        return None
                    out[i] = float(a)
                elif code == "b1":
                    if not (t is bool or t is np.bool_):
                        return None
                    out[i] = bool(a)
                else:  # pragma: no cover - KERNELS uses the codes above
                    return None
        return out

    def __call__(self, *args):
        ok = self.coerce(args)
        if ok is None:
            return self.jit()(*args)
        return self.fn(*ok)


def kernel(name: str, jit_factory):
    """The kernel ``name`` of :data:`KERNELS`: the AOT-compiled function behind its type
    guard when the module for the current sources exists, else ``jit_factory()`` (numba's
    JIT dispatcher, as before).

    Parameters
    ----------
    name : str
        Key of :data:`KERNELS`.
    jit_factory : callable
        No arguments; returns the JIT-compiled kernel (imports numba). Called at most once
        here, when there is no compiled module or on the first guard mismatch.

    Returns
    -------
    callable
        Takes the kernel's arguments; returns what the kernel returns.

    Notes
    -----
    The first call of a process that finds no compiled module starts its build in the
    background (see the module docstring); ``SPEC_PLANNER_AOT=0`` returns the JIT kernel
    and never loads or builds a module.
    """
    mod = _load_module()
    fn = getattr(mod, name, None) if mod is not None else None
    if fn is None:
        return jit_factory()
    return _Guarded(name, fn, KERNELS[name][4], jit_factory)


def lazy(name: str, jit_factory):
    """A function calling :func:`kernel` ``(name, jit_factory)`` on its first call (so
    that importing the kernel's module neither loads the AOT module nor numba)."""
    impl = None

    def call(*args):
        nonlocal impl
        if impl is None:
            impl = kernel(name, jit_factory)
        return impl(*args)

    call.__name__ = name
    call.__qualname__ = name
    call.__doc__ = f"The ``{name}`` kernel (AOT-compiled or numba JIT; see models.kernels._aot)."
    return call


# ---------------------------------------------------------------------------------------
# build
# ---------------------------------------------------------------------------------------
#: A lock older than this is left by a build that died: taken over (seconds).
LOCK_STALE_S = 1800.0


def _lock_held(lock: Path) -> bool:
    try:
        st = lock.stat()
    except OSError:
        return False
    try:
        pid = int(lock.read_text().split()[0])
    except (OSError, ValueError, IndexError):  # being written, or garbage
        return time.time() - st.st_mtime < 10.0
    if time.time() - st.st_mtime > LOCK_STALE_S:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, someone else's
        return True
    return True


def _acquire(lock: Path, wait_s: float) -> bool:
    """Create ``lock`` exclusively (taking over a stale one); wait up to ``wait_s``."""
    t0 = time.monotonic()
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if not _lock_held(lock):
                try:
                    lock.unlink()
                except FileNotFoundError:
                    pass
                continue
            if time.monotonic() - t0 >= wait_s:
                return False
            time.sleep(0.5)
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{os.getpid()} {time.time():.0f}\n")
        return True


def _numba_type(spec: str):
    from numba import types

    code, nd, flags = _parse(spec)
    scalar = {"i4": types.int32, "i8": types.int64, "u1": types.uint8, "f4": types.float32,
              "f8": types.float64, "b1": types.boolean, "void": types.void}[code]
    if nd == 0:
        return scalar
    return types.Array(scalar, nd, "C", readonly="r" in flags)


def signature(name: str):
    """numba signature of kernel ``name`` (imports numba)."""
    _, _, _, ret, args = KERNELS[name]
    return _numba_type(ret)(*[_numba_type(a) for a in args])


def _compile(out: Path) -> None:
    """Compile every kernel of :data:`KERNELS` into the module ``out`` (via a temporary
    folder beside it, then :func:`os.replace`)."""
    import shutil
    import tempfile
    import warnings

    import numba  # noqa: F401
    from numba.core.errors import NumbaPendingDeprecationWarning

    warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
    import numba.pycc.compiler as pycc_compiler
    from numba.pycc import CC

    # pycc compiles every export with a fresh numba.core.compiler.Flags(); its wrappers
    # then hold the GIL. numba's own nogil=True is the flag release_gil on those Flags:
    # set it for the exports of this build (restored below), so the compiled wrappers
    # release the GIL around the kernel as njit(nogil=True) dispatchers do.
    base_flags = pycc_compiler.Flags

    class _NoGilFlags(base_flags):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    pycc_compiler.Flags = _NoGilFlags

    stem = out.name.split(".")[0]
    tmp = Path(tempfile.mkdtemp(prefix=f".{stem}-", dir=out.parent))
    try:
        cc = CC(stem)
        cc.output_dir = str(tmp)
        cc.target_cpu = "host"
        cc.verbose = False
        for name, (modname, fname, setup, _, _) in KERNELS.items():
            mod = importlib.import_module(modname)
            if setup:
                getattr(mod, setup)()
            cc.export(name, signature(name))(getattr(mod, fname))
        cc.compile()
        built = [p for p in tmp.iterdir() if p.name.startswith(stem) and p.suffix in
                 (".so", ".pyd", ".dylib")]
        if len(built) != 1:
            raise RuntimeError(f"pycc produced {[p.name for p in tmp.iterdir()]}")
        os.replace(built[0], out)
    finally:
        pycc_compiler.Flags = base_flags
        shutil.rmtree(tmp, ignore_errors=True)


def build(*, force: bool = False, retry_failed: bool = False, wait_s: float = 900.0) -> dict:
    """Compile the AOT module for the current sources, unless it exists.

    Parameters
    ----------
    force : bool
        Compile even when the module exists or a build failed before.
    retry_failed : bool
        Compile again when a build (or loading the module) failed before; otherwise the
        recorded error is returned (what a background build does: no retry on every run).
    wait_s : float
        Seconds to wait for a build already running in another process (0: do not wait).

    Returns
    -------
    dict
        ``path`` (str), ``built`` (True when this call compiled it), ``seconds`` (compile
        wall time; 0.0 when it existed), ``error`` (None, or the error text, also written
        to ``_kernels_<hash>.failed``).
    """
    out = module_path()
    d = out.parent
    d.mkdir(parents=True, exist_ok=True)
    stem = _stem()
    fail = d / f"{stem}.failed"
    res = {"path": str(out), "built": False, "seconds": 0.0, "error": None}
    failed = fail.exists()
    if out.exists() and not force and not (failed and retry_failed):
        return res
    if failed and not (force or retry_failed):
        res["error"] = fail.read_text(errors="replace").strip()
        return res
    lock = d / f"{stem}.lock"
    if not _acquire(lock, wait_s):
        res["error"] = f"another build holds {lock}"
        return res
    try:
        if out.exists() and not force and not fail.exists():  # built by the one we waited for
            return res
        t0 = time.perf_counter()
        try:
            _compile(out)
        except Exception as exc:  # noqa: BLE001 - recorded, so that runs stop retrying
            import traceback

            res["error"] = f"{type(exc).__name__}: {exc}"
            fail.write_text(res["error"] + "\n\n" + traceback.format_exc())
            return res
        res["seconds"] = time.perf_counter() - t0
        res["built"] = True
        try:
            fail.unlink()
        except FileNotFoundError:
            pass
        return res
    finally:
        try:
            lock.unlink()
        except FileNotFoundError:
            pass


def main(argv=None) -> int:
    """``python -m models.kernels._aot build [--force] [--background]`` / ``status``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("build", "status"):
        print("usage: python -m models.kernels._aot build [--force] [--background] | status",
              file=sys.stderr)
        return 2
    if args[0] == "status":
        print(status())
        return 0
    if not enabled():
        print(f"{ENV}=0: not building")
        return 0
    bg = "--background" in args
    res = build(force="--force" in args, wait_s=0.0 if bg else 900.0)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    if res["error"]:
        print(f"{stamp} AOT build failed: {res['error']}")
        return 0 if bg else 1
    what = f"built in {res['seconds']:.1f} s" if res["built"] else "up to date"
    print(f"{stamp} {res['path']}: {what}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
