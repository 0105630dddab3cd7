"""The ``planner`` command line (typer).

The CLI parses options, calls the decision functions in :mod:`planner` and hands their JSON
result to a renderer. It holds no statistics. Every subcommand lives in its own module under
:mod:`planner.commands` and registers itself with :func:`register`.
"""

from __future__ import annotations

import sys

import typer

from models.errors import ModelInputError

_ABORT = typer.Abort
try:  # typer >= 0.16 vendors click
    from typer._click.exceptions import ClickException as _CLICK_ERRORS
except ImportError:  # pragma: no cover - older typer on top of click
    from click.exceptions import ClickException as _CLICK_ERRORS

app = typer.Typer(
    name="planner",
    help="Bayesian experiment planning for LLM decode-speed (TPS) benchmarks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

def _version(value: bool) -> None:
    if value:
        from planner import __version__

        print(f"spec-planner {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Bayesian experiment planning for LLM decode-speed (TPS) benchmarks.

    verdict: is this delta real?  repeats / budget: how many runs to buy?
    draft: is this drafting idea worth a run?
    """


_COMMAND_MODULES = ("verdict", "runs", "repeats", "budget", "draft", "report", "shift")


def _register_all() -> None:
    import importlib

    for name in _COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"planner.commands.{name}")
        except ModuleNotFoundError as exc:  # a command not built yet
            if exc.name == f"planner.commands.{name}":
                continue
            raise
        mod.register(app)


_register_all()


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``planner`` console script.

    Usage errors exit 2 (typer). Input errors of either layer
    (:class:`models.errors.ModelInputError`, :class:`planner.errors.InputError`) and unreadable
    files become one line on stderr and exit code 2, so bad input never prints a traceback.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    # `planner draft sweep ...` is the documented spelling of `planner draft-sweep ...`
    # (draft itself takes a positional CAPTURE, so sweep cannot be a typer subcommand of it)
    if not args:
        args = ["--help"]
    if args[:2] == ["draft", "sweep"]:
        args = ["draft-sweep"] + args[2:]
    try:
        rv = app(args=args, standalone_mode=False)
        if isinstance(rv, int) and rv:
            sys.exit(rv)
    except ModelInputError as exc:  # planner.errors.InputError derives from it
        print(f"planner: error: {exc.one_line()}", file=sys.stderr)
        sys.exit(2)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"planner: error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        sys.exit(2)
    except _CLICK_ERRORS as exc:  # usage errors: one line, exit 2 (click's own code)
        msg = " ".join(exc.format_message().split())
        cmd = getattr(getattr(exc, "ctx", None), "command_path", "planner")
        print(f"{cmd}: error: {msg} (see '{cmd} --help')", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2) or 2)
    except _ABORT:
        print("planner: aborted", file=sys.stderr)
        sys.exit(1)
