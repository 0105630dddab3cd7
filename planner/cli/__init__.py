"""The ``planner`` command line (typer).

The CLI parses options, calls the decision functions in :mod:`planner` and hands their JSON
result to a renderer. It holds no statistics. Every subcommand lives in its own module under
:mod:`planner.cli` with a ``register(app)`` that declares it on a typer app; :data:`COMMANDS`
names each command's module, and only the invoked command's module is imported and its
options built (a ``planner verdict`` process never builds ``draft``'s forty options).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

import typer
from typer.core import TyperGroup

from models.errors import ModelInputError
from planner.errors import line_of, visible

try:  # typer >= 0.26 vendors click
    from typer._click.exceptions import ClickException as _CLICK_ERRORS
except ImportError:  # typer < 0.26 runs on an installed click
    from click.exceptions import ClickException as _CLICK_ERRORS

__all__ = ["COMMANDS", "app", "main"]

#: Every command: name -> (module under :mod:`planner.cli` that registers it, its line in
#: ``planner --help``, the first line of its docstring; tests/planner/cli/test_commands.py
#: checks both against the modules). The order is the order of ``planner --help``.
COMMANDS: dict[str, tuple[str, str]] = {
    "verdict": ("verdict", "Posterior verdict on B vs A: P(B > A), HDI of Δ, ROPE, label."),
    "ingest": ("runs", "Walk result folders and write a runs table (one row per run)."),
    "calibrate": ("runs", "Fit the noise prior (sigma_instance, sigma_run) from your own "
                          "repeated runs."),
    "repeats": ("repeats", "How many runs to buy: assurance, false-claim rate and cost of "
                           "designs."),
    "budget": ("budget", "Plan a budget: the cheapest design per comparison, then the best "
                         "set to buy."),
    "draft": ("draft", "Simulate drafting policies on a capture; project TPS; is it worth a "
                       "run?"),
    "draft-sweep": ("draft", "Grid over every drafting family, ranked by projected TPS, with "
                             "worth-a-run per row."),
    "report": ("report", "Re-render a saved result; the terminal view when no file option "
                         "is given."),
    "shift": ("shift", "P(private score more than X % below public): the public-to-private "
                       "risk."),
    "rank": ("rank", "Rank N configs: P(fastest), each mean's HDI and its gap to the best."),
    "next": ("next", "What to buy next: each action's cost to a decision and P(decided)."),
    "baseline": ("baseline", "Save, list and show baselines: a config's runs kept to "
                             "compare against."),
    "compile": ("compile", "Compile the numba kernels into the cache now (the first run "
                           "would otherwise)."),
}


def load_command(name: str):
    """The click command ``name`` of :data:`COMMANDS`, built by typer from its module.

    The module's ``register`` declares its commands on a fresh :class:`typer.Typer`; typer
    (:func:`typer.main.get_command`) then builds the one named, so a module holding two
    commands (``draft``, ``draft-sweep``) builds only the options of the one asked for.

    Raises
    ------
    KeyError
        ``name`` is not a command of :data:`COMMANDS`, or its module does not register it.
    """
    import importlib

    module, _ = COMMANDS[name]
    sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                      rich_markup_mode=_HELP["markup"])
    importlib.import_module(f"planner.cli.{module}").register(sub)
    info = [c for c in sub.registered_commands
            if (c.name or c.callback.__name__.replace("_", "-")) == name]
    if len(info) != 1:
        raise KeyError(f"planner.cli.{module} registers no command {name!r}")
    sub.registered_commands = info
    from planner.cli._options import strict_numbers

    cmd = typer.main.get_command(sub)
    strict_numbers(cmd)  # one grammar of numbers: '0_4' is not 4, 'nan' is not a delta
    if _HELP["markup"] is None:  # plain help: rich's escaped brackets (\\[budget]) as typed
        for obj in [cmd, *cmd.params]:
            if isinstance(getattr(obj, "help", None), str):
                obj.help = obj.help.replace("\\[", "[")
    return cmd


class _Commands(Mapping):
    """:data:`COMMANDS` as the name -> click command mapping of a click group: a command is
    built on first look-up, once."""

    def __init__(self) -> None:
        self._built: dict = {}

    def __getitem__(self, name: str):
        if name not in COMMANDS:
            raise KeyError(name)
        if name not in self._built:
            self._built[name] = load_command(name)
        return self._built[name]

    def __iter__(self):
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class LazyGroup(TyperGroup):
    """typer's group of ``planner``'s commands, each loaded when it is invoked.

    ``planner --help`` lists every command with its line of :data:`COMMANDS` (no command is
    built for the listing); ``planner NAME ...`` and ``planner NAME --help`` build only
    ``NAME`` (:func:`load_command`). Parsing, conversion, help and usage errors stay
    typer's and click's own."""

    def __init__(self, **attrs) -> None:
        super().__init__(**attrs)
        self.commands = _Commands()
        self._listing = False

    def list_commands(self, ctx) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx, cmd_name: str):
        if cmd_name not in COMMANDS:
            return None
        if self._listing:  # the group's help: a command's name and its line, not built
            line = COMMANDS[cmd_name][1]
            return typer.core.TyperCommand(name=cmd_name, help=line, short_help=line)
        return self.commands[cmd_name]

    def format_help(self, ctx, formatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="planner",
    cls=LazyGroup,
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


def _quick_exit(argv) -> None:
    """Spare the ``planner`` process the final garbage collection of its exit.

    A command that loaded numba, SciPy or PyMC holds up to a million tracked objects; the
    collector's passes over them at interpreter exit took 0.2-0.8 s of a 1-5 s command.
    :func:`gc.freeze` moves every object alive now to the permanent generation, which no
    later collection walks; exit still runs atexit handlers, flushes and closes files. Only
    when :func:`main` is the process's entry point (``argv`` None): an in-process caller
    (tests, a program calling ``main([...])``) keeps its collector as it was."""
    if argv is None:
        import gc

        gc.freeze()


def _plain_help_off_a_terminal() -> None:
    """``--help`` piped or redirected (no terminal on stdout): click's plain layout, the
    option and its help on one line at 80 columns, instead of rich panels whose four columns
    leave the help text 18 characters at that width. On a terminal the rich panels stay."""
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stdout
        tty = False
    app.rich_markup_mode = "rich" if tty else None
    _HELP["markup"] = app.rich_markup_mode


#: The help layout of the commands :func:`load_command` builds: typer's rich panels
#: ("rich") or click's plain text (None: off a terminal, :func:`_plain_help_off_a_terminal`).
_HELP: dict = {"markup": "rich"}


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``planner`` console script.

    Usage errors exit 2 (typer). Input errors of either layer
    (:class:`models.errors.ModelInputError`, :class:`planner.errors.InputError`) and unreadable
    files become one line on stderr and exit code 2, so bad input never prints a traceback.
    A closed stdout (``planner verdict ... | head -1``) ends the command quietly with exit
    code 141 (128 + SIGPIPE, as a command killed by SIGPIPE).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    # `planner draft sweep ...` is the documented spelling of `planner draft-sweep ...`
    # (draft itself takes a positional CAPTURE, so sweep cannot be a typer subcommand of it)
    if not args:
        args = ["--help"]
    if args[:2] == ["draft", "sweep"]:
        args = ["draft-sweep"] + args[2:]
    _plain_help_off_a_terminal()
    try:
        try:
            from planner.cli._options import check_output_names

            check_output_names(args)  # '--md newdir/' names a folder, never a file 'newdir'
            rv = app(args=args, standalone_mode=False)
        except KeyboardInterrupt:  # outside typer's own guard: as typer does, quiet, 130
            sys.exit(130)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        _quick_exit(argv)
        if isinstance(rv, int) and rv:
            sys.exit(rv)
    except BrokenPipeError:
        # `planner ... | head -1`: the reader closed stdout. Quiet, as other CLIs are: the
        # Python documentation's recipe (signal.SIGPIPE notes) points stdout at devnull so
        # the interpreter's final flush cannot fail again; exit 141 (128 + SIGPIPE), what a
        # tool killed by SIGPIPE reports to a shell with pipefail.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(141)
    except SystemExit as exc:
        # rich's console meets the closed pipe first: it points stdout at devnull itself and
        # raises SystemExit(1); the same quiet exit code as above
        if exc.code == 1 and isinstance(exc.__context__, BrokenPipeError):
            sys.exit(141)
        raise
    except ModelInputError as exc:  # planner.errors.InputError derives from it
        # control characters of a name (a newline, an escape sequence) shown escaped: one line
        from planner.io.hints import choice_hint

        hint = choice_hint(str(exc.message), exc.field,  # '-p hybrid_max': 'hybrid-max'?
                           value=exc.file if isinstance(exc.file, str) else None)
        print(f"planner: error: {line_of(exc)}{visible(hint)}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:  # unreadable, unwritable, full disk, read-only file system
        name = f"{visible(os.fsdecode(exc.filename))}: " if exc.filename is not None else ""
        print(f"planner: error: {name}{exc.strerror or exc}", file=sys.stderr)
        sys.exit(2)
    except _CLICK_ERRORS as exc:  # usage errors: one line, exit 2 (click's own code)
        import re

        from planner.errors import shorten

        msg = visible(re.sub(r"'[^']*'", lambda m: shorten(m.group()),
                             " ".join(exc.format_message().split())))
        comma = re.search(r"'([+-]?[0-9]+),([0-9]+)' is not a valid (float|integer)", msg)
        if comma:  # '--delta 0,44': a decimal comma
            msg = msg.rstrip(".") + f"; a decimal comma? write {comma.group(1)}.{comma.group(2)}"
        if "'--delta'" in msg and any(t.endswith("%") for t in args):
            msg += "; for a relative effect give the number with --relative (--delta 0.3 --relative)"
        cmd = getattr(getattr(exc, "ctx", None), "command_path", None)
        if cmd is None:  # an error raised before click made the command's context
            cmd = "planner" + (f" {args[0]}" if args and args[0] in COMMANDS else "")
        print(visible(f"{cmd}: error: {msg} (see '{cmd} --help')"), file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2) or 2)
    except typer.Abort as exc:
        # typer < 0.26 turns Ctrl-C into Abort (later ones into exit code 130): 130 either way
        if isinstance(exc.__context__, KeyboardInterrupt):
            sys.exit(130)
        print("planner: aborted", file=sys.stderr)  # end of input at a prompt
        sys.exit(1)
