"""Compile a kernel with numba's JIT on its first call, cached on disk when possible.

Every kernel of :mod:`models.kernels` is a plain Python function ``_py_<name>``; a
:class:`KernelGroup` (one per kernel module) turns it into a callable that, on its first
call, compiles it with ``numba.njit(cache=True, ...)`` for the argument types given, and
then calls the compiled code. Importing a kernel module imports neither numba nor touches
the environment or the disk.

**Cache folder.** Chosen on the first compile, before numba is imported
(:func:`models.kernels._cache.cache_folder`): ``$NUMBA_CACHE_DIR`` when the user set it,
else the per-user cache folder (``~/.cache/spec-planner/numba``), which is then handed to
numba through ``NUMBA_CACHE_DIR``. When there is no usable folder (no home directory, a
read-only one), the kernels are compiled in memory (``cache=False``): slower to start,
same results.

**A cache that fails never fails a command.** A compile that raises with caching on (a
truncated or corrupt cache file: ``UnpicklingError``, ``EOFError``) drops the cache
entries of that kernel module and compiles again into the cache (a rebuild: the next run
loads them again). A cache file damaged so that it still loads (bytes flipped inside
numba's object code: LLVM aborted the process, SIGABRT, on every later run) is caught
before numba reads it: each cache file gets a checksum file (``.b2sum``) when it is
written, and a module's files are checked once per process before its first cached
compile; a mismatch rebuilds the module's entries. When a rebuild fails too (numba's "cannot cache function ... no locator
available" for a read-only install; an unwritable folder), it is redone in memory, with
the group's callees recompiled in memory too, and every later compile of this process
stays in memory.

**Threads.** The first compile of a group runs under one lock (``planner budget`` sizes
comparisons on two threads that may reach a kernel together).

**Progress.** numba compiles the replay kernels in 10-20 s on an empty cache. When a
kernel is about to be compiled with no cache entry and stderr is a terminal, one line
goes to stderr, once per process (never to stdout, so ``--json`` output is untouched).
"""

from __future__ import annotations

import os
import sys
import threading

__all__ = ["KernelGroup", "compile_all", "prepare_numba"]

#: numba's OpenMP threading layer keeps idle worker threads spinning between parallel
#: regions by default; the planners launch the assurance kernels thousands of times with
#: NumPy work in between, and spinning workers take the core the main thread needs. libgomp
#: reads this when it loads (numba's first parallel launch); a value the user set is kept.
_OMP_WAIT_POLICY = "PASSIVE"

_LOCK = threading.RLock()
#: Process-wide state: ``cache`` is None until the first compile decides it (True: numba's
#: disk cache, False: in memory); ``told`` whether the progress line was printed.
_STATE: dict = {"cache": None, "told": False, "verified": set(), "sealed": {}, "up": False}


def numba_up() -> bool:
    """True once some kernel has been compiled or loaded in this process: numba's import and
    its target's set-up (~0.7 s) are paid, and one more cached kernel loads in ~5 ms."""
    return bool(_STATE["up"])

_PROGRESS = "planner: compiling the replay kernels once (about 15 s; cached afterwards)..."

#: Every kernel made by :meth:`KernelGroup.kernel`, with its argument types.
_REGISTRY: list = []
#: The kernel modules (imported by :func:`compile_all`).
KERNEL_MODULES = ("assurance", "bootstrap", "capture", "exact", "lookup", "mtp", "screen",
                  "special")


#: numba's threading layers (``NUMBA_THREADING_LAYER``).
_LAYERS = ("default", "safe", "threadsafe", "forksafe", "omp", "tbb", "workqueue")


def _note(text: str) -> None:
    print(f"planner: note: {text}", file=sys.stderr, flush=True)


def _sane_numba_env() -> None:
    """Drop numba settings of the environment that would fail every kernel (numba raises
    at its first parallel launch): ``NUMBA_NUM_THREADS`` that is not a whole number in 1 ..
    the CPU count (``0``: "Number of threads specified must be > 0"), a
    ``NUMBA_THREADING_LAYER`` numba does not know (``bogus``). numba's defaults are used
    instead, with one note on stderr."""
    n = os.environ.get("NUMBA_NUM_THREADS")
    if n is not None and "numba" not in sys.modules:
        s = n.strip()
        if not (s.isascii() and s.isdigit() and 1 <= int(s) <= (os.cpu_count() or 1)):
            os.environ.pop("NUMBA_NUM_THREADS")
            _note(f"NUMBA_NUM_THREADS={n!r} is not a thread count in 1..{os.cpu_count() or 1}; "
                  "using numba's default")
    t = os.environ.get("NUMBA_THREADING_LAYER")
    if t is not None and t.strip().lower() not in _LAYERS and "numba" not in sys.modules:
        os.environ.pop("NUMBA_THREADING_LAYER")
        _note(f"NUMBA_THREADING_LAYER={t!r} is not one of {', '.join(_LAYERS)}; using "
              "numba's default")


def _layer_fallback(exc: BaseException) -> bool:
    """After a kernel failed with ``exc``: when it is numba's "no threading layer could be
    loaded" (``NUMBA_THREADING_LAYER=tbb`` without TBB installed), switch to numba's default
    layer once, with a note, and return True (the call is then retried)."""
    if "threading layer" not in str(exc) or _STATE.get("layer_reset"):
        return False
    try:
        from numba.core import config
        from numba.np.ufunc import parallel
    except ImportError:
        return False
    if getattr(parallel, "_is_initialized", False):
        return False
    _STATE["layer_reset"] = True
    asked = os.environ.pop("NUMBA_THREADING_LAYER", config.THREADING_LAYER)
    config.THREADING_LAYER = "default"
    _note(f"numba's threading layer {asked!r} could not be loaded; using its default")
    return True


def _use_cache() -> bool:
    """Decide (once per process) whether kernels are cached on disk, and prepare numba's
    environment before its first import. Returns the decision."""
    with _LOCK:
        if _STATE["cache"] is None:
            from models.kernels._cache import cache_folder

            _sane_numba_env()
            os.environ.setdefault("OMP_WAIT_POLICY", _OMP_WAIT_POLICY)
            folder = cache_folder()
            if folder is not None and not os.environ.get("NUMBA_CACHE_DIR"):
                os.environ["NUMBA_CACHE_DIR"] = folder
                if "numba" in sys.modules:  # imported by someone else: re-read its config
                    from numba.core import config

                    config.reload_config()
            _STATE["cache"] = folder is not None
        return _STATE["cache"]


def prepare_numba() -> None:
    """Prepare numba's environment before it is imported (OpenMP's wait policy, the cache
    folder): for code that imports numba itself, e.g. to query its threading layer."""
    _use_cache()


def _cache_off() -> None:
    """Compile in memory from now on (a cached compile failed)."""
    with _LOCK:
        _STATE["cache"] = False


#: Suffix of the checksum file kept next to each of numba's cache files (``X.nbc.b2sum``).
_SUM = ".b2sum"


def _module_files(fn) -> list[str]:
    """numba's cache files (``.nbi`` index, ``.nbc`` data) of every kernel of ``fn``'s module
    in this install's folder of the cache (none without a folder).

    numba keeps each source folder's entries in its own subfolder of ``NUMBA_CACHE_DIR``
    (``kernels_<sha1 of the folder's path>``): every install, clone or worktree of
    spec-planner has one. Only this install's subfolder is checked, sealed and purged: a
    mismatch in another install's files (another version, or one that process is still
    writing) must not drop this install's entries, which would then be compiled again
    (10-20 s) by every command that meets it."""
    import glob

    folder = os.environ.get("NUMBA_CACHE_DIR")
    if not folder or not os.path.isdir(folder):
        return []
    module = fn.__module__.rsplit(".", 1)[-1]
    try:  # numba's own rule for the subfolder (numba.core.caching._CacheLocator)
        from numba.core.caching import UserProvidedCacheLocator

        sub = glob.escape(UserProvidedCacheLocator.get_suitable_cache_subpath(
            fn.__code__.co_filename))
    except (ImportError, AttributeError):  # another numba: every subfolder, as numba may use
        sub = "*"
    return sorted(glob.glob(os.path.join(glob.escape(folder), sub,
                                         f"{glob.escape(module)}.*.nb[ci]")))


def _digest(path: str) -> str | None:
    import hashlib

    try:
        with open(path, "rb") as fh:
            return hashlib.blake2b(fh.read(), digest_size=16).hexdigest()
    except OSError:
        return None


def _purge(fn) -> int:
    """Remove the cache entries (``.nbi`` index, ``.nbc`` data, their checksums) of every
    kernel of ``fn``'s module from numba's cache folder, so that the next cached compile
    rebuilds them; the number of cache files removed (0 when there is no cache folder or
    nothing to remove)."""
    n = 0
    for f in _module_files(fn):
        for g in (f, f + _SUM):
            try:
                os.unlink(g)
                n += g == f
            except OSError:
                pass
    return n


def _verify(fn) -> bool:
    """Before a module's first cached compile in this process: check each of its cache files
    against the checksum written when it was made (:func:`_seal`); a file that no longer
    matches (damaged on disk: bytes flipped inside numba's object code load without an
    error and crashed the process with SIGABRT / SIGSEGV on every later run) drops the
    module's entries, which are then rebuilt. True when the entries were dropped."""
    module = fn.__module__
    if module in _STATE["verified"]:
        return False
    _STATE["verified"].add(module)
    for f in _module_files(fn):
        try:
            with open(f + _SUM, encoding="ascii") as fh:
                want = fh.read().strip()
        except (OSError, ValueError):
            continue  # never sealed (another version wrote it): trusted as numba trusts it
        if want != _digest(f):
            _purge(fn)
            return True
    return False


def _seal(fn) -> None:
    """Write the checksum of each cache file of ``fn``'s module that lacks a current one
    (atomically: a temporary file renamed over it). Errors are ignored: a folder that cannot
    take them is only not protected."""
    for f in _module_files(fn):
        d = _digest(f)
        if d is None:
            continue
        side = f + _SUM
        try:
            with open(side, encoding="ascii") as fh:
                if fh.read().strip() == d:
                    continue
        except (OSError, ValueError):
            pass
        tmp = f"{side}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="ascii") as fh:
                fh.write(d + "\n")
            os.replace(tmp, side)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _sealed(fn) -> None:
    """Seal ``fn``'s module now and at exit (:func:`_seal_used`)."""
    _seal(fn)
    if not _STATE["sealed"]:
        import atexit

        atexit.register(_seal_used)
    _STATE["sealed"].setdefault(fn.__module__, fn)


def _seal_used() -> None:
    """At exit: seal the cache files of every module compiled with the cache in this
    process (a kernel called with new argument types adds entries after its first compile)."""
    for fn in list(_STATE["sealed"].values()):
        _seal(fn)


def _tell_compiling(disp) -> None:
    """Print the progress line when ``disp`` (a caching dispatcher) has no cache index yet,
    stderr is a terminal, and it was not printed before in this process."""
    if _STATE["told"]:
        return
    try:
        if not sys.stderr.isatty():
            return
        index = disp._cache._cache_file._index_path  # numba's FunctionCache internals
        if os.path.exists(index):
            return
    except (AttributeError, OSError, ValueError):
        return
    _STATE["told"] = True
    print(_PROGRESS, file=sys.stderr, flush=True)


class KernelGroup:
    """The kernels of one module and the callees their bodies call by global name.

    Parameters
    ----------
    namespace : dict
        The kernel module's ``globals()``: the callees' names are rebound there to their
        compiled dispatchers before a kernel is compiled (numba resolves a kernel body's
        global names when it compiles it).
    callees : dict, optional
        ``name -> (plain Python function, numba options)`` of the callees.
    prange : str, optional
        A global name bound to ``range`` in the plain functions and to ``numba.prange``
        when compiled (parallel kernels).
    """

    def __init__(self, namespace: dict, callees: dict | None = None, prange: str | None = None):
        self._ns = namespace
        self._callees = dict(callees or {})
        self._prange = prange
        self._bound: bool | None = None  # the cache setting the callees are compiled with

    def _bind(self, cache: bool) -> None:
        if self._bound is cache:
            return
        from numba import njit, prange

        for name, (fn, opts) in self._callees.items():
            self._ns[name] = njit(cache=cache, **opts)(fn)
        if self._prange:
            self._ns[self._prange] = prange
        self._bound = cache

    def kernel(self, fn, *, sig: tuple = (), **options):
        """``fn`` compiled on its first call with ``numba.njit(cache=..., **options)``.

        Parameters
        ----------
        fn : callable
            The plain Python kernel.
        sig : tuple of str
            The argument types the callers pass, for :func:`compile_all` (a call with other
            types is compiled for them on the call): ``i4`` int32, ``i8`` int64 (a Python
            int), ``u1`` uint8, ``f4`` float32, ``f8`` float64 (a Python float), ``b1`` bool;
            ``[::1]``, ``[:,::1]``, ``[:,:,::1]`` C-contiguous arrays of 1-3 dimensions, and
            a trailing ``r`` for a read-only array (``np.frombuffer`` of bytes).
        **options
            numba options beyond ``cache`` (``nogil``, ``parallel``).

        Returns
        -------
        callable
            Takes ``fn``'s arguments and returns what it returns.
        """
        k = _Kernel(self, fn, options)
        _REGISTRY.append((k, tuple(sig)))
        return k


class _Kernel:
    """One lazily compiled kernel of a :class:`KernelGroup`."""

    def __init__(self, group: KernelGroup, fn, options: dict):
        self._group = group
        self._fn = fn
        self._options = options
        self._disp = None
        self._cached: bool | None = None
        self.__name__ = fn.__name__.removeprefix("_py_")
        self.__doc__ = fn.__doc__

    def _compile(self, cache: bool, args):
        from numba import njit

        with _LOCK:
            self._group._bind(cache)
            disp = njit(cache=cache, **self._options)(self._fn)
            if not hasattr(disp, "compile"):  # NUMBA_DISABLE_JIT=1: the plain Python kernel
                if not _STATE.get("plain"):
                    _STATE["plain"] = True
                    _note("NUMBA_DISABLE_JIT is set: the kernels run as plain Python (the "
                          "same results, minutes instead of seconds)")
                return disp
            if cache:
                _tell_compiling(disp)
            sig = tuple(disp.typeof_pyval(a) for a in args)
            try:
                disp.compile(sig)
            except Exception as exc:  # noqa: BLE001 - only numba's threading layer is retried
                if not _layer_fallback(exc):  # a parallel kernel launches the layer here
                    raise
                disp.compile(sig)
            return disp

    def _first(self, args):
        with _LOCK:
            if self._disp is not None:
                return self._disp
            cache = _use_cache()
            if cache:
                if _verify(self._fn):  # damaged on disk: rebuilt below, never loaded
                    self._group._bound = None
                for rebuild in (False, True):
                    try:
                        if rebuild:  # a damaged entry: drop the module's entries, rebuild them
                            _purge(self._fn)
                            self._group._bound = None
                        self._disp = self._compile(True, args)
                        self._cached = True
                        _sealed(self._fn)
                        _STATE["up"] = True
                        return self._disp
                    except Exception:  # noqa: BLE001 - any failure with caching on
                        continue
                _cache_off()  # rebuilt and still failing (unwritable): in memory from now on
            self._disp = self._compile(False, args)
            self._cached = False
            _STATE["up"] = True
            return self._disp

    def prepare(self, *args) -> None:
        """Compile (or load from the cache) for the types of ``args`` without running."""
        disp = self._disp if self._disp is not None else self._first(args)
        if not hasattr(disp, "overloads"):  # NUMBA_DISABLE_JIT=1: nothing to compile
            return
        sig = tuple(disp.typeof_pyval(a) for a in args)
        if sig not in disp.overloads:
            with _LOCK:
                try:
                    disp.compile(sig)
                except Exception:  # noqa: BLE001 - as __call__: redo in memory
                    if self._cached is False:
                        raise
                    _cache_off()
                    self._disp = self._compile(False, args)
                    self._cached = False

    def __call__(self, *args):
        disp = self._disp
        if disp is None:
            disp = self._first(args)
        if self._cached is False:
            try:
                return disp(*args)
            except Exception as exc:  # noqa: BLE001
                if _layer_fallback(exc):  # NUMBA_THREADING_LAYER=tbb without TBB
                    return disp(*args)
                raise
        try:
            return disp(*args)
        except Exception as exc:  # noqa: BLE001
            if _layer_fallback(exc):
                return disp(*args)
            # a later signature's cache entry that cannot be read (numba loads it before the
            # kernel runs); a kernel's own error is raised again by the in-memory compile
            _cache_off()
            with _LOCK:
                self._disp = self._compile(False, args)
                self._cached = False
            return self._disp(*args)


def _example(spec: str):
    """A value numba types as ``spec`` (see :meth:`KernelGroup.kernel`)."""
    import numpy as np

    dtypes = {"i4": np.int32, "i8": np.int64, "u1": np.uint8, "f4": np.float32,
              "f8": np.float64, "b1": np.bool_}
    if "[" not in spec:
        return {"i8": 0, "f8": 0.0, "b1": False}.get(spec) if spec != "f4" else np.float32(0)
    code, rest = spec.split("[", 1)
    dims, flags = rest.split("]", 1)
    a = np.zeros((1,) * len(dims.split(",")), dtypes[code])
    if "r" in flags:
        a.setflags(write=False)
    return a


def compile_all() -> dict:
    """Compile every kernel for its declared argument types now (into numba's cache when
    there is one), in this process; nothing is run.

    Returns
    -------
    dict
        ``kernels`` (how many), ``seconds`` (wall), ``cache`` (the folder, or None when the
        kernels were compiled in memory: then this process alone profits).
    """
    import importlib
    import time

    t0 = time.perf_counter()
    for name in KERNEL_MODULES:
        importlib.import_module(f"models.kernels.{name}")
    n = 0
    for k, sig in _REGISTRY:
        if sig:
            k.prepare(*(_example(s) for s in sig))
            n += 1
    cache = os.environ.get("NUMBA_CACHE_DIR") if _STATE["cache"] else None
    return {"kernels": n, "seconds": time.perf_counter() - t0, "cache": cache}
