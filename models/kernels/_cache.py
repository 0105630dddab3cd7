"""Where numba keeps the compiled kernels (``cache=True``), chosen on the first compile.

By default numba writes its cache into ``__pycache__`` beside the source, which fails or
is lost for an installed, read-only or shared site-packages; spec-planner's kernels are
cached instead under the user's cache folder:

* ``$NUMBA_CACHE_DIR`` when the user set it (used as it is);
* else ``$XDG_CACHE_HOME/spec-planner/numba`` (``~/.cache/spec-planner/numba``) on Linux
  and other POSIX systems, ``~/Library/Caches/spec-planner/numba`` on macOS,
  ``%LOCALAPPDATA%\\spec-planner\\numba`` on Windows;
* no folder (the kernels are compiled in memory) when there is no home directory (``HOME``
  empty, unset, relative, ``/`` or a folder that does not exist: a cache is never made at
  the file system's root, nor a home created) or the folder cannot be created or written.

Nothing here runs at import; :func:`cache_folder` is called by :mod:`models.kernels._jit`
before the first compile. This module does not import numba.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["cache_dir", "cache_folder"]


def _absolute(value: str | None) -> Path | None:
    """``value`` as a path when it is absolute and not a file system root, else None."""
    if not value:
        return None
    p = Path(value)
    if not p.is_absolute() or p == Path(p.anchor):
        return None
    return p


def cache_dir() -> Path | None:
    """The per-user folder for spec-planner's numba cache (not created here).

    Returns
    -------
    pathlib.Path or None
        ``<user cache folder>/spec-planner/numba``; None when the environment names no
        user folder (see the module docstring).
    """
    if sys.platform == "win32":
        base = _absolute(os.environ.get("LOCALAPPDATA"))
        if base is None:
            home = _absolute(os.environ.get("USERPROFILE"))
            base = home / "AppData" / "Local" if home else None
    else:
        base = _absolute(os.environ.get("XDG_CACHE_HOME")) if sys.platform != "darwin" else None
        if base is None:
            home = _absolute(os.environ.get("HOME"))
            if home is None or not home.is_dir():  # a missing home is not made here
                return None
            base = home / ("Library/Caches" if sys.platform == "darwin" else ".cache")
    return base / "spec-planner" / "numba"


def cache_folder() -> str | None:
    """The folder numba should cache the kernels in, created if needed.

    Returns
    -------
    str or None
        ``$NUMBA_CACHE_DIR`` when set; else :func:`cache_dir` once it exists and is
        writable; None when there is none (compile in memory).
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        d = Path(os.environ["NUMBA_CACHE_DIR"])
    else:
        d = cache_dir()
        if d is None:
            return None
    try:
        d.mkdir(parents=True, exist_ok=True)
        if not os.access(d, os.W_OK | os.X_OK):
            return None
    except OSError:
        return None
    return str(d)
