"""``python -m planner`` and the ``planner`` console script.

:func:`run` prepares the process before anything heavy is imported:

* **Ctrl-C while starting.** Until the command's modules (typer, NumPy, ...) are loaded, a
  SIGINT ends the process at once with exit code 130 and no traceback (the handler is
  installed first thing, by :func:`quiet_sigint`); then Python's own handler is put back,
  so a Ctrl-C during a command ends it as before (exit 130, reports written atomically, so
  an old report stays intact). A Ctrl-C during Python's own start-up (``site``, before any
  spec-planner code runs) is Python's to handle.
* **A terminal that cannot show every character** (``PYTHONIOENCODING=ascii``, a Latin-1
  locale): stdout and stderr transliterate what they cannot encode (``Δ`` -> ``Delta``,
  ``±`` -> ``+/-``, ``—`` -> ``--``) instead of failing with ``UnicodeEncodeError``
  (:func:`transliterate`). ``--json`` output is ASCII already.
* **A plotting backend set for a notebook** (``MPLBACKEND=module://matplotlib_inline...``,
  or any bogus value): the command line only writes PNG files, so its process uses
  matplotlib's ``Agg`` backend whatever ``MPLBACKEND`` says.
* **No home directory** (``HOME=`` empty): no library makes a cache folder at the file
  system's root (:func:`homeless_dirs`).
* **One BLAS thread** unless the user chose a count (:func:`one_blas_thread`).
"""

import sys

#: Characters of the reports and messages -> their ASCII spelling, for a stream whose
#: encoding lacks them (other characters: their NFKD letters, else ``?``).
ASCII = {
    "Δ": "Delta", "δ": "delta", "±": "+/-", "—": "--", "–": "-", "−": "-", "…": "...",
    "≈": "~", "≤": "<=", "≥": ">=", "≠": "!=", "×": "x", "·": ".", "→": "->", "←": "<-",
    "↑": "^", "↓": "v", "µ": "u", "μ": "u", "σ": "sigma", "τ": "tau", "ν": "nu",
    "α": "alpha", "β": "beta", "γ": "gamma", "π": "pi", "²": "^2", "³": "^3", "√": "sqrt",
    "‰": "per mille", "’": "'", "‘": "'", "“": '"', "”": '"', "•": "*", "✓": "ok",
    "✗": "x", "€": "EUR", "£": "GBP", "°": " deg", "\u00a0": " ", "\u202f": " ",
    "\u2009": " ", "\u2007": " ",
}

_ERRORS = "planner-transliterate"


def _transliterate(exc: UnicodeError):
    """A codec error handler (:func:`codecs.register_error`) spelling characters in ASCII."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    import unicodedata

    out = []
    for c in exc.object[exc.start:exc.end]:
        s = ASCII.get(c)
        if s is None:
            d = unicodedata.normalize("NFKD", c)
            s = "".join(x for x in d if ord(x) < 128) or "?"
        try:  # a Latin-1 stream takes some of the ASCII map's characters as they are
            s.encode(exc.encoding)
        except (UnicodeEncodeError, LookupError):
            s = "?"
        out.append(s)
    return "".join(out), exc.end


def transliterate() -> None:
    """Make stdout and stderr spell in ASCII what their encoding cannot hold (a UTF-8
    stream is left alone)."""
    import codecs

    try:
        codecs.lookup_error(_ERRORS)
    except LookupError:
        codecs.register_error(_ERRORS, _transliterate)
    for stream in (sys.stdout, sys.stderr):
        enc = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if enc in ("utf8", "utf8sig", "utf16", "utf32", ""):
            continue
        try:
            stream.reconfigure(errors=_ERRORS)
        except (AttributeError, ValueError, OSError):
            pass  # not a TextIOWrapper (redirected by a caller): left as it is


from planner import _exit_130  # noqa: E402 - the handler planner/__init__ may have installed


def quiet_sigint() -> None:
    """A SIGINT from now on ends the process at once: exit 130, no traceback (while
    modules load there is nothing to clean up)."""
    import signal

    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _exit_130)
    except (ValueError, OSError):  # not the main thread
        pass


def _restore_sigint() -> None:
    import signal

    try:
        if signal.getsignal(signal.SIGINT) is _exit_130:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError):
        pass


def homeless_dirs() -> None:
    """With no usable home directory (``HOME`` empty, unset, relative, ``/``, missing or
    read-only), point the
    libraries that would make a folder under it (matplotlib's font cache and config:
    ``/.cache/matplotlib``, ``/.config/matplotlib``; PyTensor's compile folder
    ``/.pytensor``; ArviZ's ``~/.cache/arviz``, through ``XDG_CACHE_HOME``) at one
    temporary folder of this process, removed at exit. A folder the user named
    (``MPLCONFIGDIR``, ``XDG_CACHE_HOME``, ``PYTENSOR_FLAGS=base_compiledir=...``) is kept.
    The kernels' own cache then lives in that folder for this process only
    (:mod:`models.kernels._cache`)."""
    import os

    if os.name != "posix":
        return
    home = os.environ.get("HOME") or ""
    if home and os.path.isabs(home) and home.strip("/") and os.path.isdir(home) and \
            os.access(home, os.W_OK | os.X_OK):
        return
    tmp = None

    def folder() -> str:
        nonlocal tmp
        if tmp is None:
            import atexit
            import shutil
            import tempfile

            tmp = tempfile.mkdtemp(prefix="spec-planner-")
            atexit.register(shutil.rmtree, tmp, True)
        return tmp

    if not os.environ.get("MPLCONFIGDIR"):
        os.environ["MPLCONFIGDIR"] = os.path.join(folder(), "matplotlib")
    xdg = os.environ.get("XDG_CACHE_HOME")
    if not (xdg and os.path.isabs(xdg) and xdg.strip("/")):
        # ArviZ (the MCMC engine) makes ~/.cache/arviz at import: "Read-only file system"
        os.environ["XDG_CACHE_HOME"] = os.path.join(folder(), "cache")
    flags = os.environ.get("PYTENSOR_FLAGS", "")
    if "base_compiledir" not in flags and "compiledir" not in flags:
        extra = f"base_compiledir={os.path.join(folder(), 'pytensor')}"
        os.environ["PYTENSOR_FLAGS"] = f"{flags},{extra}" if flags else extra


#: Variables by which OpenBLAS takes its thread count (its own, the GotoBLAS one, OpenMP's),
#: in its order of precedence: a user who set any of them has chosen, and is left alone.
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread(environ=None) -> bool:
    """Ask OpenBLAS (the BLAS of NumPy's and SciPy's wheels) for one thread, unless one of
    :data:`BLAS_THREAD_VARS` is set; True when it was set here. Must run before NumPy is
    imported (OpenBLAS reads it once, when it loads).

    Why: OpenBLAS hands every product above a few thousand elements to all its threads and
    leaves them spinning for the next call. The planner's linear algebra is small matrices
    and matrix-vector products on up to ~1e6 elements, done many times (grid fits, the
    population prior's block ascent); its parallel work is its own (numba kernels, the budget's
    design threads), which the spinning threads compete with. Measured on 2 cores, medians
    of 4-5 interleaved runs (one thread vs two): the sessions verdict of
    ``bench/bench_process.py`` 3.4 vs 4.1 s CPU and 3.6 vs 3.8 s wall; the README verdict
    0.66 vs 0.79 s CPU; ``budget examples/plan.toml`` 10.3 vs 11.2 s wall; ``draft`` 2.66 vs
    2.89 s CPU at the same wall time; the calibration tests on two pytest workers 96 vs 127 s
    wall (``tests/conftest.py`` does the same per worker)."""
    import os

    env = os.environ if environ is None else environ
    if any(env.get(k) for k in BLAS_THREAD_VARS):
        return False
    env["OPENBLAS_NUM_THREADS"] = "1"
    return True


def run() -> None:
    """Entry point: :func:`planner.cli.main` with the command line of the process."""
    quiet_sigint()
    import os

    os.environ["MPLBACKEND"] = "Agg"  # the CLI writes PNGs; a notebook's backend is not here
    one_blas_thread()
    homeless_dirs()
    transliterate()
    try:
        from planner.cli import main
    except KeyboardInterrupt:
        sys.exit(130)
    _restore_sigint()  # a Ctrl-C of the command: KeyboardInterrupt, handled by main (130)
    main()


if __name__ == "__main__":
    run()
