"""The command table of ``planner`` (:data:`planner.cli.COMMANDS`): typer lists every command,
builds each one's help, and a process loads only the command it runs."""

import inspect
import subprocess
import sys
from pathlib import Path

import pytest
import typer

import planner.cli as cli
from planner.cli import COMMANDS, load_command

ROOT = Path(__file__).resolve().parents[3]
MODULES = sorted({module for module, _ in COMMANDS.values()})


def test_the_table_holds_every_command_its_modules_register():
    """Each module's ``register`` declares exactly the commands the table names for it."""
    import importlib

    for module in MODULES:
        sub = typer.Typer()
        importlib.import_module(f"planner.cli.{module}").register(sub)
        names = [c.name or c.callback.__name__.replace("_", "-") for c in sub.registered_commands]
        assert sorted(names) == sorted(n for n, (m, _) in COMMANDS.items() if m == module)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_commands_help_line_is_its_docstrings_first_line(name):
    cmd = load_command(name)
    assert cmd.name == name
    assert inspect.cleandoc(cmd.help).splitlines()[0] == COMMANDS[name][1]


def test_planner_help_lists_every_command_in_table_order(cli):
    code, out, err = cli("--help")
    assert code == 0, err
    at = [out.find(f" {name} ") for name in COMMANDS]
    assert all(k >= 0 for k in at) and at == sorted(at)
    for _, line in COMMANDS.values():  # each command's line (rich may wrap it)
        assert " ".join(line.split()[:4]) in " ".join(out.replace("│", " ").split())


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_commands_own_help_works(cli, name):
    code, out, err = cli(name, "--help")
    assert code == 0, err
    assert "Usage:" in out and name in out and "--help" in out
    assert " ".join(COMMANDS[name][1].split()[:4]) in " ".join(out.split())


def test_draft_sweep_is_also_spelled_draft_space_sweep(cli):
    code, out, _ = cli("draft", "sweep", "--help")
    assert code == 0 and "--k-values" in out


def test_an_unknown_command_is_a_one_line_usage_error(cli):
    code, out, err = cli("verdcit")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "No such command 'verdcit'" in err


def _loaded(args) -> list[str]:
    """The command modules a ``planner ARGS`` process imported."""
    code = ("import sys, io, contextlib\nfrom planner.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            f"        main({list(args)!r})\n"
            "    except SystemExit:\n"
            "        pass\n"
            f"print(sorted(m for m in {MODULES!r} if 'planner.cli.' + m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       check=True)
    return eval(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("args, modules", [
    (["verdict", "--a", "308.49", "--b", "308.05"], ["verdict"]),
    (["--help"], []),
    (["draft-sweep", "--help"], ["draft"]),
    (["shift", "--help"], ["shift"]),
])
def test_a_process_imports_only_the_module_of_its_command(args, modules):
    assert _loaded(args) == modules


def test_only_the_invoked_command_is_built(monkeypatch, capsys):
    built = []
    real = cli.load_command
    monkeypatch.setattr(cli, "load_command", lambda name: built.append(name) or real(name))
    with pytest.raises(SystemExit) as e:
        cli.main(["draft-sweep", "--top", "0"])
    assert e.value.code == 2
    assert built == ["draft-sweep"]  # not draft, the other command of its module


@pytest.mark.parametrize("exc, code", [(KeyboardInterrupt, 130), (EOFError, 1)])
def test_an_interrupt_exits_quietly(exc, code, monkeypatch, capsys):
    """Ctrl-C exits 130 (as a shell reports SIGINT) and end of input 1, without a traceback,
    wherever in the command it lands (here: while the command loads)."""
    def boom(name):
        raise exc

    monkeypatch.setattr(cli, "load_command", boom)
    with pytest.raises(SystemExit) as e:
        cli.main(["draft"])
    assert e.value.code == code
    assert "Traceback" not in capsys.readouterr().err


def test_the_console_script_runs_through_planner_main():
    r = subprocess.run([sys.executable, "-m", "planner", "--version"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("spec-planner ")
