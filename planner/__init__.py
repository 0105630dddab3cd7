"""spec-planner: decisions (verdicts, repeat plans, budgets, drafting projections) and the CLI.

The statistics live in :mod:`models`; this package turns them into decisions and reports.
"""

__version__ = "0.1.0"


def _exit_130(signum, frame) -> None:
    """SIGINT while the command starts: exit 130 at once, nothing to clean up yet."""
    import os

    os._exit(130)


def _cli_start() -> None:
    """The ``planner`` command (``python -m planner`` or the console script) is starting: a
    Ctrl-C from now until its modules are loaded ends it quietly with exit code 130
    (as :func:`planner.__main__.quiet_sigint`). A library import changes nothing."""
    import sys

    argv = getattr(sys, "orig_argv", None) or []
    tail = argv[1:]
    script = tail[0].replace("\\", "/").rsplit("/", 1)[-1] if tail else ""
    if tail[:2] == ["-m", "planner"] or script in ("planner", "planner.exe",
                                                   "planner-script.py"):
        import signal  # not planner.__main__: its import would widen the window

        try:
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                signal.signal(signal.SIGINT, _exit_130)
        except (ValueError, OSError):  # not the main thread
            pass


_cli_start()
