"""The ``planner`` command line (typer).

The CLI parses options, calls the decision functions in :mod:`planner` and hands their JSON
result to a renderer. It holds no statistics. Every subcommand lives in its own module under
:mod:`planner.cli` and registers itself with :func:`register`.
"""

from __future__ import annotations

import re
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


_COMMAND_MODULES = ("verdict", "runs", "repeats", "budget", "draft", "report", "shift",
                    "compile")


def _register_all() -> None:
    import importlib

    for name in _COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"planner.cli.{name}")
        except ModuleNotFoundError as exc:  # a command not built yet
            if exc.name == f"planner.cli.{name}":
                continue
            raise
        mod.register(app)


_register_all()


#: Commands invoked by :func:`_fast_invoke` when their arguments are plain (issue 9: click's
#: parser builds a pydantic adapter per option, ~0.1-0.2 s of a ~0.4 s ``planner verdict``).
_FAST_COMMANDS = ("verdict", "draft", "repeats", "budget")

#: Values the fast path converts itself; anything else (signs, ``nan``, ``1_0``, hex) goes to
#: typer, which words the error or the conversion.
_PLAIN_INT = re.compile(r"[0-9]{1,18}\Z")  # < 2**63; Python refuses int() of > 4300 digits
_PLAIN_FLOAT = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def _fast_invoke(args: list[str]) -> bool:
    """Call a command of :data:`_FAST_COMMANDS` directly when its arguments are plain.

    Plain means: the command's options are ``str``, ``Path``, ``int`` or ``float`` (digits,
    within its ``min`` / ``max``), ``List[str]`` (the option repeated) or boolean flags
    (``--x`` or ``--x/--no-x``) declared with ``typer.Option`` / ``typer.Argument`` and no
    callback or environment variable; every token is a known option (``--opt value``,
    ``--opt=value`` or ``-o value``, each at most once unless a list) or one of the
    positional arguments (a required one given); no ``--help``, no ``--``, no value
    starting with ``-``. The parsed values are those click would pass. Anything else returns
    False and the caller lets typer parse (and word the usage error) as before.

    Returns
    -------
    bool
        True when the command ran.
    """
    import inspect
    import typing
    from pathlib import Path

    from typer.models import ArgumentInfo, OptionInfo

    if not args or args[0] not in _FAST_COMMANDS:
        return False
    cb = _commands().get(args[0])
    if cb is None:
        return False
    try:
        hints = typing.get_type_hints(cb)
    except Exception:  # noqa: BLE001 - an annotation typer resolves differently
        return False
    kinds = {str: str, Path: Path, int: int, float: float, bool: bool}
    opts: dict[str, tuple[str, object, object]] = {}   # spelling -> (param, kind, flag value)
    positional: list[tuple[str, object]] = []
    values: dict[str, object] = {}
    infos: dict[str, object] = {}
    for name, prm in inspect.signature(cb).parameters.items():
        info = prm.default
        hint = hints.get(name)
        targs = [t for t in typing.get_args(hint) if t is not type(None)]
        base = targs[0] if typing.get_origin(hint) is typing.Union and len(targs) == 1 \
            else hint
        kind = kinds.get(base)
        if typing.get_origin(base) is list and typing.get_args(base) == (str,):
            kind = list  # a repeatable option: each use appends its value
        if kind is None or not isinstance(info, (OptionInfo, ArgumentInfo)) or \
                info.callback is not None or info.envvar is not None or \
                (info.default is ... and not isinstance(info, ArgumentInfo)) or \
                info.default_factory is not None or \
                getattr(info, "is_eager", False) or getattr(info, "prompt", False) or \
                getattr(info, "count", False) or getattr(info, "parser", None) is not None or \
                getattr(info, "exists", False) or getattr(info, "resolve_path", False) or \
                getattr(info, "allow_dash", False) or getattr(info, "clamp", False):
            return False  # click would check or transform the value
        values[name] = list(info.default) if kind is list else info.default
        if kind is list and (not isinstance(info, OptionInfo) or values[name]):
            return False  # a list argument, or a non-empty default list: leave it to typer
        infos[name] = info
        if isinstance(info, ArgumentInfo):
            positional.append((name, kind))
            continue
        for decl in info.param_decls:
            if kind is bool:
                on, _, off = decl.partition("/")
                opts[on.strip()] = (name, bool, True)
                if off:
                    opts[off.strip()] = (name, bool, False)
            elif decl.startswith("--") or (len(decl) == 2 and decl[0] == "-"):
                opts[decl] = (name, kind, None)
            else:
                return False
    seen: list[str] = []
    free = list(positional)
    toks = args[1:]
    k = 0
    while k < len(toks):
        tok = toks[k]
        k += 1
        if tok.startswith("-"):
            spell, eq, val = tok.partition("=")
            if spell not in opts:
                return False
            name, kind, flag = opts[spell]
            if eq and not spell.startswith("--"):
                return False  # click reads '-p=x' as the value '=x'
            if name in seen and kind is not list:
                return False
            if name not in seen:
                seen.append(name)
            if kind is bool:
                if eq:
                    return False
                values[name] = flag
                continue
            if not eq:
                if k >= len(toks):
                    return False
                val = toks[k]
                k += 1
            if val.startswith("-"):
                return False
        else:
            if not free:
                return False
            (name, kind), free = free[0], free[1:]
            seen.append(name)
            val = tok
        if kind is int or kind is float:
            if not (_PLAIN_INT if kind is int else _PLAIN_FLOAT).match(val):
                return False
            num = kind(val)
            lo, hi = infos[name].min, infos[name].max
            if (lo is not None and num < lo) or (hi is not None and num > hi):
                return False
            values[name] = num
        elif kind is list:
            values[name].append(val)
        else:
            values[name] = kind(val)
    if any(values[n] is ... for n, _ in free):
        return False  # a required argument missing: typer words the usage error
    # the parsed parameters as click's context holds them (the report records them, files
    # in this order): the options given, in command-line order, then the positional
    # arguments (click's parser takes them after every option, given or not), then the
    # others in declaration order
    from typer._click.core import Context
    from typer._click.globals import pop_context, push_context
    from typer.core import TyperCommand

    ctx = Context(TyperCommand(args[0]))
    pos = [n for n, _ in positional]
    order = [n for n in seen if n not in pos] + pos
    ctx.params = {n: values[n] for n in order + [n for n in values if n not in order]}
    push_context(ctx)
    try:
        cb(**values)
    finally:
        pop_context()
    return True


def _commands() -> dict:
    """The registered commands: name (``draft``, ``draft-sweep``, ...) -> callback."""
    return {c.name or c.callback.__name__.replace("_", "-"): c.callback
            for c in app.registered_commands}


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
    try:
        try:
            ran = _fast_invoke(args)
        except KeyboardInterrupt:  # as typer's own wrapper does: quiet, exit 130
            sys.exit(130)
        except EOFError:
            print(file=sys.stderr)
            raise _ABORT() from None
        if ran:
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
            _quick_exit(argv)
            return
        rv = app(args=args, standalone_mode=False)
        sys.stdout.flush()
        _quick_exit(argv)
        if isinstance(rv, int) and rv:
            sys.exit(rv)
    except BrokenPipeError:
        # `planner ... | head -1`: the reader closed stdout. Quiet, as other CLIs are: the
        # Python documentation's recipe (signal.SIGPIPE notes) points stdout at devnull so
        # the interpreter's final flush cannot fail again; exit 141 (128 + SIGPIPE), what a
        # tool killed by SIGPIPE reports to a shell with pipefail.
        import os

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
        print(f"planner: error: {exc.one_line()}", file=sys.stderr)
        sys.exit(2)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"planner: error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        sys.exit(2)
    except _CLICK_ERRORS as exc:  # usage errors: one line, exit 2 (click's own code)
        msg = " ".join(exc.format_message().split())
        if "'--delta'" in msg and any(t.endswith("%") for t in args):
            msg += "; for a relative effect give the number with --relative (--delta 0.3 --relative)"
        cmd = getattr(getattr(exc, "ctx", None), "command_path", None)
        if cmd is None:  # an error raised before click made the command's context
            cmd = "planner" + (f" {args[0]}" if args and args[0] in _commands() else "")
        print(f"{cmd}: error: {msg} (see '{cmd} --help')", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2) or 2)
    except _ABORT:
        print("planner: aborted", file=sys.stderr)
        sys.exit(1)
