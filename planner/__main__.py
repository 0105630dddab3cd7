"""``python -m planner`` and the ``planner`` console script.

:func:`run` imports the CLI (typer, the command table) inside its own guard, so a Ctrl-C
while the first modules load ends the process as one during a command does: exit code
130, no traceback.
"""

import sys


def run() -> None:
    """Entry point: :func:`planner.cli.main` with the command line of the process."""
    try:
        from planner.cli import main
    except KeyboardInterrupt:
        sys.exit(130)
    main()


if __name__ == "__main__":
    run()
