"""A status line on stderr while the tool waits: the one way a command says it is working.

:func:`waiting` shows a transient spinner with a short text (``fitting the model by MCMC
(20-35 s)...``) on stderr while its block runs, and erases it at the end, so the report that
follows is all that stays on the screen. It shows only when stderr is a terminal and the
command is not writing ``--json`` (``quiet``): never in piped or redirected output, never in
a JSON result. Lines the block prints to stderr meanwhile (numba's one-off "compiling the
replay kernels" line) appear above the spinner; stdout is not touched.

The progress bars of the simulation loops (``repeats``, ``budget``, ``draft``) are the
commands' own; this covers the waits with no count to show: reading a large runs table,
an MCMC fit, the first kernel compile on an empty cache.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

from planner.report.escape import visible

__all__ = ["waiting", "stderr_is_terminal"]


def stderr_is_terminal() -> bool:
    """True when stderr is a terminal (False for a closed, replaced or redirected one)."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError, OSError):
        return False


@contextmanager
def waiting(text: str, *, quiet: bool = False, force: bool | None = None):
    """Show ``text`` with a spinner on stderr while the ``with`` block runs.

    Parameters
    ----------
    text : str
        What the tool is doing, a few words (printed literally: no rich markup, control
        characters made visible).
    quiet : bool
        No status at all (``--json`` output).
    force : bool, optional
        Show (True) or hide (False) regardless of stderr; default: show when stderr is a
        terminal (:func:`stderr_is_terminal`).

    Notes
    -----
    The spinner refreshes from rich's own thread (``rich.live.Live``, transient); stdout is
    not redirected, so output written to it meanwhile is unaffected.
    """
    show = (stderr_is_terminal() if force is None else force) and not quiet
    if not show:
        yield
        return
    from rich.console import Console
    from rich.live import Live
    from rich.spinner import Spinner
    from rich.text import Text

    con = Console(file=sys.stderr, force_terminal=True if force else None)
    live = Live(Spinner("dots", text=Text(visible(text))), console=con, transient=True,
                refresh_per_second=8, redirect_stdout=False, redirect_stderr=True)
    live.start()
    try:
        yield
    finally:
        live.stop()
