"""Spelling the decision layer's plain field names as a command's options, and the options
every command that reads a runs table shares (their help and their fields).

The decision layer names the field of a bad value plainly (``max_runs``, ``target``); only the
command line knows that the user typed ``--max-runs`` or ``--assurance``. Each command keeps
one table from field to option and passes the errors of its call through :func:`as_option`.
"""

from __future__ import annotations

from typing import Mapping

from models.errors import ModelInputError
from planner.io.formats import format_help

__all__ = ["OUTPUT_OPTIONS", "check_output_names", "strict_numbers", "CONFIG_COLUMN_HELP", "FORMAT_HELP", "INSTANCE_HELP", "TABLE_OPTIONS",
           "TPS_COLUMN_HELP", "as_option", "command_params"]


#: Help of the runs-table options (verdict, repeats --runs, calibrate).
FORMAT_HELP = format_help()  # derived from the formats registry
INSTANCE_HELP = ("Instance (machine) of every run read from a tool's result file, which cannot "
                 "say. Without it the instance stays blank: planner verdict then reads each "
                 "config's runs as one session on a machine of its own (no platform) or each "
                 "run as its own instance (a platform with noise data).")
TPS_COLUMN_HELP = ("Runs table column holding the values (default: tps, else throughput, "
                   "output_throughput, tokens_per_s, tok/s or tokens/s; any case).")
CONFIG_COLUMN_HELP = ("Runs table column holding the config labels (default: config, else "
                      "variant, name, label or configuration; any case).")


#: Plain settings of a runs table -> their options (the fields and remedies of table errors),
#: the same in every command that reads one.
TABLE_OPTIONS = {"config_column": "--config-column", "tps_column": "--tps-column",
                 "platform": "--platform", "metric": "--metric", "format": "--format"}


def as_option(exc: ModelInputError, options: Mapping[str, str]) -> ModelInputError:
    """``exc`` with its field spelled as the command's option.

    Parameters
    ----------
    exc : ModelInputError
        An input error of either layer.
    options : mapping of str to str
        Plain field -> option spelling (``{"max_runs": "--max-runs"}``).

    Returns
    -------
    ModelInputError
        A copy naming the option when ``exc`` has no file (a value the user typed) and its
        field is in ``options``, or its field's first word is (``aa_runs (position 2)`` ->
        ``--aa-runs (position 2)``, ``a_summary sd`` -> ``--a-summary sd``); else ``exc``
        itself (a file's field stays as it is). When ``exc.remedy`` (the setting that
        resolves the error) is in ``options``, its spelling is added to the message in
        brackets, also for a file's error (``... or name the config column
        (--config-column)``).
    """
    remedy = getattr(exc, "remedy", None)
    message = exc.message
    if remedy in options:  # the option that resolves it, even for a file's error
        message = f"{message} ({options[remedy]})"
    field = exc.field
    if exc.file is None and field is not None:
        head, sep, rest = field.partition(" ")
        if field in options:
            field = options[field]
        elif sep and head in options:
            field = options[head] + sep + rest
    if field == exc.field and message == exc.message:
        return exc
    return type(exc)(message, file=exc.file, line=exc.line, field=field, remedy=remedy)


def command_params(ctx, values: Mapping) -> dict:
    """The parameters of the running command, as its input record shows them.

    Parameters
    ----------
    ctx : typer.Context
        The command's context (its parameter ``ctx: typer.Context``).
    values : mapping
        The command function's arguments (``locals()`` at its first line): the values as
        the command received them (``Path`` for a path on every typer version).

    Returns
    -------
    dict
        Parameter name -> value, in click's processing order (the options given, in
        command-line order, then the positional arguments, then the others in declaration
        order). The command fills in a default it decides itself (``params["k"] = 7``)
        before passing the dict to :func:`planner.report.output.input_record`.
    """
    return {name: values[name] for name in ctx.params if name in values}


#: Options that name a file a command writes.
OUTPUT_OPTIONS = ("--md", "--html", "-o", "--output", "--idata")


def check_output_names(args) -> None:
    """Refuse an output option whose value names a folder by its spelling (``--md newdir/``,
    ``-o out/.``, ``--html .``): typer's ``Path`` drops the trailing separator, and the
    report would be written as a file named ``newdir``.

    Parameters
    ----------
    args : list of str
        The command line (without the program name).

    Raises
    ------
    planner.errors.InputError
        Naming the option and the value: give a file name (an existing folder is refused
        by :func:`planner.report.output.guard_outputs` too).
    """
    import os

    from planner.errors import InputError

    seps = tuple({os.sep, "/"} | ({os.altsep} if os.altsep else set()))
    for i, a in enumerate(args):
        if a == "--":
            return
        opt = value = None
        if a in OUTPUT_OPTIONS and i + 1 < len(args):
            opt, value = a, args[i + 1]
        elif "=" in a and a.split("=", 1)[0] in OUTPUT_OPTIONS:
            opt, value = a.split("=", 1)
        elif a.startswith("-o") and len(a) > 2 and not a.startswith("--"):
            opt, value = "-o", a[2:]
        if opt is None or not value:
            continue
        tail = value.rstrip(".") if value.endswith((f"{seps[0]}.", "/.")) else value
        if value in (".", "..") or value.endswith(seps) or tail.endswith(seps) or \
                value.endswith(tuple(s + ".." for s in seps)):
            raise InputError(f"{value!r} names a folder: give a file name (e.g. "
                             f"{value.rstrip(''.join(seps)) or '.'}/report"
                             f"{'.md' if opt == '--md' else '.html' if opt == '--html' else ''})",
                             field=opt)


#: Click's number types (by their ``name``) that :func:`strict_numbers` holds to the one
#: grammar: float-like -> :data:`planner.io._parse.NUMBER`, integer-like -> ASCII digits.
_FLOAT_TYPES = ("float", "float range")
_INT_TYPES = ("integer", "integer range", "int", "int range")


def _grammar_fail(value: str, integer: bool) -> str:
    import re

    shown = repr(value)
    m = re.fullmatch(r"\s*([+-]?[0-9]+),([0-9]+)\s*", value)
    if m:
        return (f"{shown} looks like a decimal comma: write {m.group(1)}.{m.group(2)}")
    if value.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return f"not a finite number: {shown}"
    if integer:
        return f"not a whole number: {shown} (ASCII digits, e.g. 2000)"
    return (f"not a number: {shown} (digits with an optional '.' fraction and exponent, "
            "e.g. 308, -0.5, 1e-3)")


def strict_numbers(command) -> None:
    """Hold every number option of a click ``command`` to the one grammar of numbers.

    Click converts a float option with Python's ``float()``, which also takes ``3_00``
    (300), ``0_4`` (4), ``nan``, ``infinity`` and digits of other scripts (``٣``), and an
    integer option with ``int()`` (``1_000``, full-width digits): each silently another
    number than a benchmark value could be. Each float-like option is checked against
    :data:`planner.io._parse.NUMBER` (finite values only), each integer-like one against
    ASCII digits with an optional sign, before click's own conversion and range check
    run; a value outside it is an :class:`planner.errors.InputError` naming the option (one
    line, exit 2, as every bad value). The option's type is copied (click's types are
    shared singletons).

    Parameters
    ----------
    command : click.Command
        Built by typer (:func:`planner.cli.load_command`); changed in place.
    """
    import copy
    import re

    from planner.io._parse import NUMBER

    for p in getattr(command, "params", ()):
        t = getattr(p, "type", None)
        name = getattr(t, "name", None)
        if name not in _FLOAT_TYPES + _INT_TYPES or getattr(t, "_strict", False):
            continue
        integer = name in _INT_TYPES
        pattern = re.compile(r"[+-]?[0-9]+") if integer else NUMBER
        new = copy.copy(t)
        orig = t.convert

        def convert(value, param, ctx, _orig=orig, _pattern=pattern, _int=integer):
            if isinstance(value, str) and not _pattern.fullmatch(value.strip(" \t")):
                from planner.errors import InputError

                opts = list(getattr(param, "opts", None) or [])
                name = next((o for o in opts if o.startswith("--")), opts[0] if opts else None)
                msg = _grammar_fail(value, _int)
                if value.strip().endswith("%"):
                    msg += ("; for a relative effect give the number with --relative "
                            f"({name} {value.strip()[:-1]} --relative)" if name == "--delta"
                            else "; give the number without '%'")
                # the one line of every bad value: 'field '--run': not a finite number: ...'
                raise InputError(msg, field=name)
            return _orig(value, param, ctx)

        new.convert = convert
        new._strict = True
        p.type = new
