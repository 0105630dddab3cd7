"""The options several commands share, each declared once, and the spelling of the decision
layer's plain field names as a command's options.

**One option, one declaration.** Every option that more than one command takes (the runs-table
options ``--format``, ``--tps-column``, ``--config-column``, ``--instance``; the row filters
``--platform``, ``--metric``, ``--workload``, ``--run-group``; the noise options ``--prior``,
``--cv``, ``--cv-instance``, ``--aa-runs``; ``--rope``, ``--cold``, ``--lower-is-better``,
``--store``, ``--seed``; the outputs ``--json``, ``--md``, ``--html``) is an ``Annotated`` type
alias below: its spelling, type, help text and range live here, its default in the signature::

    def rank(..., platform: Platform = None, seed: Seed = 0, as_json: Json = False, ...)

A command that must say one more thing about a shared option appends it with :func:`noted`
(``cv: noted(Cv, "Applies to every comparison.") = None``); the declaration stays here.

To add a shared option: one alias in the section of its kind below (``Name =
Annotated[type, typer.Option("--name", help=...)]``, help in the house style: a sentence with
a capital and a full stop), its name in ``__all__`` and its spelling in :data:`SHARED`, then
use it in each command in place of its ``typer.Option(...)`` (the default stays in the
signature: typer takes it from there). ``tests/planner/cli/test_shared_options.py`` checks
that every command taking a spelling of :data:`SHARED` takes it from its alias (same flags,
type and range; the alias' help, at most a note added). Keep this module light (typer, the
formats registry's help, :mod:`planner.io.limits` and the noise options' help texts of
:mod:`planner.decide.priors`, none of which imports NumPy): ``planner`` imports it on every
start-up, ``planner --help`` included. A command taking :data:`Seed` checks the value
against :data:`planner.io.limits.SEED` (the alias has no click range).

Options that share a spelling but not a meaning stay with their command: ``ingest``'s
``--platform``, ``--metric`` and ``--workload`` (labels written into the table, not row
filters), ``repeats``' and ``draft``'s ``--platform`` (the platform a plan is priced on, with
a default), ``repeats``' ``--prior`` (a platform or a file; no ``weak``), ``draft``'s
``--baseline`` (a policy), ``report``'s ``--md``/``--html`` (its only outputs, not "also").

The decision layer names the field of a bad value plainly (``max_runs``, ``target``); only the
command line knows that the user typed ``--max-runs`` or ``--assurance``. Each command keeps
one table from field to option and passes the errors of its call through :func:`as_option`.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Annotated, Mapping, Optional

import typer

from models.errors import ModelInputError
from planner.decide.priors import AA_RUNS_HELP, CV_HELP, CV_INSTANCE_HELP, PRIOR_HELP
from planner.io.formats import format_help
from planner.io.limits import SEED

__all__ = ["OUTPUT_OPTIONS", "check_output_names", "strict_numbers", "CONFIG_COLUMN_HELP",
           "FORMAT_HELP", "INSTANCE_HELP", "TABLE_OPTIONS", "TPS_COLUMN_HELP", "STORE_HELP",
           "as_option", "command_params", "noted", "SHARED",
           # the shared options
           "Format", "TpsColumn", "ConfigColumn", "Instance",
           "Platform", "Metric", "Workload", "RunGroup",
           "Prior", "Cv", "CvInstance", "AaRuns",
           "Rope", "Cold", "LowerIsBetter", "Store", "Seed",
           "Json", "Md", "Html"]


# -- help texts ------------------------------------------------------------------------------

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
#: (no word longer than the help column is wide at 80 columns, 17: rich cut the paths
#: to "$XDG_DATA_HOME/s…")
STORE_HELP = ("The baseline store (default: baselines.sqlite in the spec-planner folder of "
              "$XDG_DATA_HOME, else of ~/.local/share).")


def noted(alias, note: str):
    """``alias`` (a shared option) with ``note`` added to its help, for one command.

    Parameters
    ----------
    alias : typing.Annotated
        One of this module's shared options (``Cv``).
    note : str
        What this command adds: a sentence (``"Applies to every comparison."``) is appended
        after the help; a bracket (``"(with --runs)"``) goes inside its final full stop, into
        the help's own closing bracket if it ends with one (``(experiment; with --runs)``).

    Returns
    -------
    typing.Annotated
        The same type and option, the help extended (the alias itself is not changed).
    """
    base = alias.__origin__
    (info,) = alias.__metadata__
    info = copy.copy(info)
    if note.startswith("(") and info.help.endswith(")."):  # one bracket: '(experiment; ...)'
        info.help = f"{info.help[:-2]}; {note[1:]}."
    elif note.startswith("(") and info.help.endswith("."):
        info.help = f"{info.help[:-1]} {note}."
    else:
        info.help = f"{info.help} {note}"
    return Annotated[base, info]


# -- the runs table --------------------------------------------------------------------------

Format = Annotated[Optional[str], typer.Option("--format", help=FORMAT_HELP)]
TpsColumn = Annotated[Optional[str], typer.Option("--tps-column", help=TPS_COLUMN_HELP)]
ConfigColumn = Annotated[Optional[str], typer.Option("--config-column",
                                                     help=CONFIG_COLUMN_HELP)]
Instance = Annotated[Optional[str], typer.Option("--instance", help=INSTANCE_HELP)]

# -- the rows kept ---------------------------------------------------------------------------

Platform = Annotated[Optional[str], typer.Option(
    "--platform", help="Keep rows of this platform (e.g. hf-a10g-small, local-a10g).")]
Metric = Annotated[Optional[str], typer.Option(
    "--metric", help="Keep rows of this metric; of a tool's result file, the field to read.")]
Workload = Annotated[Optional[str], typer.Option(
    "--workload", help="Keep rows of this workload (e.g. 128x512: prompts x output tokens).")]
RunGroup = Annotated[Optional[str], typer.Option(
    "--run-group", help="Keep rows of this run_group (experiment).")]

# -- the noise -------------------------------------------------------------------------------

Prior = Annotated[Optional[str], typer.Option("--prior", help=PRIOR_HELP)]
Cv = Annotated[Optional[str], typer.Option("--cv", help=CV_HELP)]
CvInstance = Annotated[Optional[str], typer.Option("--cv-instance", help=CV_INSTANCE_HELP)]
AaRuns = Annotated[Optional[str], typer.Option("--aa-runs", help=AA_RUNS_HELP)]

# -- the comparison --------------------------------------------------------------------------

Rope = Annotated[str, typer.Option("--rope", help="ROPE half-width: '0.5%' or TPS '1.5'.")]
Cold = Annotated[Optional[bool], typer.Option(
    "--cold/--no-cold", help="Model the cold-start indicator (default: when a run is flagged; "
                             "a rep 0 run on a named instance, or cold=1, is a cold first "
                             "run).")]
LowerIsBetter = Annotated[Optional[bool], typer.Option(
    "--lower-is-better/--higher-is-better",
    help="The metric's direction: a latency or duration (TPOT, ITL, TTFT, ms, s) is "
         "lower-is-better and the labels read 'B faster' / 'B slower'. Default: from the "
         "metric or column name; plain numbers are taken as higher-is-better (a rate, TPS), "
         "with a note.")]
Store = Annotated[Optional[Path], typer.Option("--store", help=STORE_HELP)]
#: (no click range: every command checks the seed against :data:`planner.io.limits.SEED`, whose
#: one-line error names the whole range, where click's says only ``x>=0``)
Seed = Annotated[int, typer.Option("--seed", help=f"Random seed, {SEED.describe()}.")]

# -- the outputs -----------------------------------------------------------------------------

Json = Annotated[bool, typer.Option("--json", help="Print the JSON result.")]
Md = Annotated[Optional[Path], typer.Option("--md", help="Also write a Markdown report.")]
Html = Annotated[Optional[Path], typer.Option(
    "--html", help="Also write a self-contained HTML report.")]

#: The spellings of the shared options (tests/planner/cli/test_shared_options.py holds every
#: command that takes one to its alias).
SHARED = ("--format", "--tps-column", "--config-column", "--instance", "--platform",
          "--metric", "--workload", "--run-group", "--prior", "--cv", "--cv-instance",
          "--aa-runs", "--rope", "--cold", "--lower-is-better", "--store", "--seed", "--json",
          "--md", "--html")


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
