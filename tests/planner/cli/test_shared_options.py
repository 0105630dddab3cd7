"""The options several commands share (:mod:`planner.cli._options`): each is declared once,
every command that takes one uses that declaration, and the module stays light."""

import subprocess
import sys
from pathlib import Path

import pytest

from planner.cli import COMMANDS, _options, load_command

#: Options that share a spelling with a shared option but not its meaning (the module's
#: docstring says why each stays with its command).
OWN = {("ingest", "--platform"), ("ingest", "--metric"), ("ingest", "--workload"),
       ("repeats", "--platform"), ("repeats", "--prior"), ("draft", "--platform"),
       ("report", "--md"), ("report", "--html")}

def _spelling(alias) -> str:
    """``--cold/--no-cold``: in an ``Annotated`` option typer takes the first positional
    argument (``default``) as the spelling."""
    info = alias.__metadata__[0]
    return "/".join((info.default, *info.param_decls))


_ALIASES = {_spelling(a).split("/")[0]: a
            for a in (getattr(_options, n) for n in _options.__all__)
            if hasattr(a, "__metadata__")}


def _params(name):
    cmd = load_command(name)
    for p in cmd.params:
        if getattr(p, "opts", None):
            yield p


def test_every_shared_spelling_has_one_alias():
    assert sorted(_ALIASES) == sorted(_options.SHARED)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_takes_each_shared_option_from_its_alias(name):
    """Same spelling, same flag pair, same type and range; the help is the alias' own, with at
    most a note added by :func:`planner.cli._options.noted`."""
    for p in _params(name):
        opt = p.opts[0]
        if opt not in _ALIASES or (name, opt) in OWN:
            continue
        info = _ALIASES[opt].__metadata__[0]
        assert "/".join(p.opts + p.secondary_opts) == _spelling(_ALIASES[opt]), (name, opt)
        assert p.help.startswith(info.help.rstrip(".)")), (name, opt, p.help)
        assert getattr(p.type, "min", None) == info.min, (name, opt)
        assert getattr(p.type, "max", None) == info.max, (name, opt)


def test_the_shared_options_are_used_by_the_commands_the_brief_names():
    """A shared option used by one command only would not need a home here."""
    uses = {opt: {n for n in COMMANDS for p in _params(n) if p.opts[0] == opt
                  and (n, opt) not in OWN} for opt in _options.SHARED}
    assert {opt for opt, names in uses.items() if len(names) < 2} == set()
    assert {"verdict", "rank", "next", "repeats", "calibrate", "baseline"} <= uses["--format"]
    assert {"verdict", "repeats", "budget", "draft", "draft-sweep", "shift", "rank",
            "next"} == uses["--seed"]


def test_noted_adds_to_the_help_and_leaves_the_alias_alone():
    before = _options.Workload.__metadata__[0].help
    noted = _options.noted(_options.Workload, "(with --runs)")
    assert noted.__metadata__[0].help == ("Keep rows of this workload (e.g. 128x512: prompts x "
                                         "output tokens; with --runs).")
    assert _options.noted(_options.Metric, "(save only)").__metadata__[0].help == (
        "Keep rows of this metric; of a tool's result file, the field to read (save only).")
    assert _options.noted(_options.Cv, "Applies.").__metadata__[0].help.endswith(
        "run-to-run scale. Applies.")
    assert _options.Workload.__metadata__[0].help == before


def test_seed_help_states_the_range_the_limits_check():
    from planner.io.limits import SEED

    assert _options.Seed.__metadata__[0].help == f"Random seed, {SEED.describe()}."
    assert "4,294,967,295" in _options.Seed.__metadata__[0].help


RUNS = Path(__file__).resolve().parents[3] / "examples" / "runs" / "tps_runs.csv"


@pytest.mark.parametrize("args", [
    ("verdict", "--a", "308.49", "--b", "308.05"), ("repeats", "--delta", "0.44"),
    ("shift", "--public-tps", "411.6"), ("rank", str(RUNS), "--run-group", "serve_config_sweep"),
    ("next", str(RUNS), "--a", "A", "--b", "B"), ("draft",), ("draft-sweep",),
    ("budget", str(Path(__file__).resolve().parents[3] / "examples" / "plan.toml")),
])
@pytest.mark.parametrize("seed", ["-1", "4294967296"])
def test_a_seed_outside_its_range_is_one_line_naming_the_range(cli, args, seed):
    """Every command refuses a seed outside [0, 2**32 - 1] with the limits' one line (draft's
    wording before the option was shared; the others had click's 'x>=0' for -1)."""
    code, _, err = cli(*args, "--seed", seed)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "field '--seed'" in err and "outside [0, 4,294,967,295]" in err, err


def test_the_options_module_imports_nothing_heavy():
    code = ("import sys, planner.cli._options; "
            "print(sorted(m for m in ('numpy', 'scipy', 'numba', 'rich', 'pydantic') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
