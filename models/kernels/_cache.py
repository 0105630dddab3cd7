"""Where numba keeps its compiled-kernel cache (``cache=True``).

Imported by :mod:`models` itself, before any kernel module imports numba: numba reads
``NUMBA_CACHE_DIR`` once, when it is first imported. By default numba writes its cache
into ``__pycache__`` beside the source, which fails or is lost for an installed,
read-only or shared site-packages; spec-planner's kernels are cached instead under the
user's cache folder:

* ``$NUMBA_CACHE_DIR`` when the user set it (never overridden);
* else ``$XDG_CACHE_HOME/spec-planner/numba`` (``~/.cache/spec-planner/numba``) on Linux
  and other POSIX systems, ``~/Library/Caches/spec-planner/numba`` on macOS,
  ``%LOCALAPPDATA%\\spec-planner\\numba`` on Windows;
* if that folder cannot be created or written, nothing is set and numba keeps its own
  fallbacks (it compiles in memory when no cache location is writable).

A process that imported numba before :mod:`models` keeps numba's own choice.
This module does not import numba (commands without kernels stay fast to start).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["cache_dir", "configure_cache_dir"]


def cache_dir() -> Path:
    """The per-user folder for spec-planner's numba cache (not created here).

    Returns
    -------
    pathlib.Path
        ``<user cache folder>/spec-planner/numba``.
    """
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
    return base / "spec-planner" / "numba"


def configure_cache_dir() -> str | None:
    """Set ``NUMBA_CACHE_DIR`` to :func:`cache_dir` unless the user has set it.

    Returns
    -------
    str or None
        The cache folder now in effect, or None when it was left to numba (the user's
        cache folder is not writable).
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    try:
        d = cache_dir()
        d.mkdir(parents=True, exist_ok=True)
        if not os.access(d, os.W_OK | os.X_OK):
            return None
    except (OSError, RuntimeError):  # RuntimeError: no home directory
        return None
    os.environ["NUMBA_CACHE_DIR"] = str(d)
    return str(d)
