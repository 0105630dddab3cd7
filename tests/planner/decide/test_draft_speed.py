"""``planner draft`` called directly (issue 9): the same JSON as typer's parser.

Typer 0.29 builds a pydantic adapter per option on every parse (~0.15-0.2 s of a ~1 s
``planner draft BIG.jsonl``); :func:`planner.cli._fast_invoke` calls the command itself when
its arguments are plain. The whole-JSON comparisons of both ways are in
``test_cli_fast.py``; here: draft's list option, file order, long integers, interrupts, and
every other spelling left to typer (its parse, its conversion, its error).
"""

import json
from pathlib import Path

import pytest

import planner.cli as cli

ROOT = Path(__file__).resolve().parents[3]
BF16 = "examples/captures/ar_reference_bf16.jsonl.gz"
SMALL = ["--bootstrap", "200", "--mc-reps", "20"]


def test_a_repeated_policy_keeps_its_order(cli_output, monkeypatch):
    args = ["draft", "-p", "mtp", "--policy", "pld", *SMALL, "--json"]
    fast = json.loads(cli_output(args, fast=True))
    assert fast["inputs"]["options"]["policy"] == ["mtp", "pld"]
    assert fast == json.loads(cli_output(args, fast=False))


@pytest.mark.parametrize("args", [
    ["draft", "-p=mtp"], ["draft", "-pmtp"], ["draft", "--sigma-tps", "nan"],
    ["draft", "--sigma-tps", "inf"], ["draft", "--bootstrap", "1_000"],
    ["draft", "--sync-factor", "-1"], ["draft", "--sync-factor", " 1"],
    ["draft", "--seed", "1", "--seed", "2"], ["draft", "a.jsonl", "b.jsonl"],
    ["draft", "--json=1"], ["draft", "--help"], ["draft", "-p"], ["draft", "--", "x"],
    ["draft-sweep"], ["draft", "--bootstrap", "0x10"],
])
def test_anything_else_is_left_to_typer(args):
    assert cli._fast_invoke(args) is False


def test_files_are_recorded_in_typer_order_whatever_the_command_line_order(cli_output, monkeypatch,
                                                                          tmp_path):
    """click's parser takes the positional CAPTURE after every option: the recorded files
    (and the report's inputs line) list --cost-file first even when the capture comes
    first on the command line."""
    cost = tmp_path / "cost.json"
    cost.write_text(json.dumps({"verify_base_ms": 6.5}), encoding="utf-8")
    args = ["draft", BF16, "--cost-file", str(cost), *SMALL, "--json"]
    fast = cli_output(args, fast=True)
    assert fast == cli_output(args, fast=False)
    assert [f["role"] for f in json.loads(fast)["inputs"]["files"]] == ["cost_file", "capture"]


@pytest.mark.parametrize("args", [
    ["draft", "--seed", "1" * 19], ["draft", "--seed", "1" * 5000],
    ["verdict", "--a", "1", "--b", "2", "--seed", "0" * 4301],
])
def test_long_integers_are_left_to_typer(args):
    """int() of more than 4300 digits raises (a traceback on the fast path): typer words it."""
    assert cli._fast_invoke(args) is False


@pytest.mark.parametrize("exc, code", [(KeyboardInterrupt, 130), (EOFError, 1)])
def test_interrupt_exits_as_typer_does(exc, code, monkeypatch, capsys):
    def boom(args):
        raise exc

    monkeypatch.setattr(cli, "_fast_invoke", boom)
    with pytest.raises(SystemExit) as e:
        cli.main(["draft"])
    assert e.value.code == code
    assert "Traceback" not in capsys.readouterr().err


def test_a_one_letter_option_with_an_equals_sign_gets_a_hint(cli):
    """click reads '-p=pld' as the value '=pld' ('unknown policy' before): say why."""
    code, out, err = cli("draft", "-p=pld")
    assert code == 2 and "a one-letter option takes its value after a space (-p pld" in err
