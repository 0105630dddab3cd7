"""``planner draft`` called directly (issue 9): the same JSON as typer's parser.

Typer 0.29 builds a pydantic adapter per option on every parse (~0.15-0.2 s of a ~1 s
``planner draft BIG.jsonl``); :func:`planner.cli._fast_invoke` calls the command itself when
its arguments are plain. These tests run each argument list both ways and compare the
whole ``--json`` output, recorded inputs included, and check every other spelling is left to
typer (its parse, its conversion, its error).
"""

import contextlib
import io
import json
from pathlib import Path

import pytest

import planner.cli as cli

ROOT = Path(__file__).resolve().parents[2]
BF16 = "examples/captures/ar_reference_bf16.jsonl.gz"
SMALL = ["--bootstrap", "200", "--mc-reps", "20"]


def _run(args, monkeypatch, fast: bool) -> str:
    monkeypatch.setattr(cli, "_FAST_COMMANDS", ("draft",) if fast else ())
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(args)
    return out.getvalue()


@pytest.mark.parametrize("args", [
    [],
    [BF16, "-p", "pld", "--policy", "mtp", "--n", "3", "--depth", "16",
     "--baseline-tps", "120.5", "--sigma-tps", "1.2"],
    ["--policy=suffix", BF16, "--sync-factor", "1.1", "--stop-at-eos", "--convention", "vllm",
     "--seed=7"],
    ["-p", "mtp", "--k", "3", "--curve", "0.7,0.5,0.3", "--drafter-ms", ".5", "--minutes-per-run", "9",
     "--price-per-hour", "1e0", "--platform", "hf-a10g-small"],
])
def test_direct_invocation_gives_the_typer_json(args, monkeypatch):
    args = ["draft", *args, *SMALL, "--json"]
    slow = _run(args, monkeypatch, fast=False)
    called = []
    real = cli._fast_invoke
    monkeypatch.setattr(cli, "_fast_invoke", lambda a: called.append(real(a)) or called[-1])
    fast = _run(args, monkeypatch, fast=True)
    assert called == [True]
    assert fast == slow
    assert json.loads(fast)["inputs"]["options"]["bootstrap"] == 200


def test_a_repeated_policy_keeps_its_order(monkeypatch):
    args = ["draft", "-p", "mtp", "--policy", "pld", *SMALL, "--json"]
    fast = json.loads(_run(args, monkeypatch, fast=True))
    assert fast["inputs"]["options"]["policy"] == ["mtp", "pld"]
    assert fast == json.loads(_run(args, monkeypatch, fast=False))


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


def test_files_are_recorded_in_typer_order_whatever_the_command_line_order(monkeypatch,
                                                                          tmp_path):
    """click's parser takes the positional CAPTURE after every option: the recorded files
    (and the report's inputs line) list --cost-file first even when the capture comes
    first on the command line."""
    cost = tmp_path / "cost.json"
    cost.write_text(json.dumps({"verify_base_ms": 6.5}), encoding="utf-8")
    args = ["draft", BF16, "--cost-file", str(cost), *SMALL, "--json"]
    fast = _run(args, monkeypatch, fast=True)
    assert fast == _run(args, monkeypatch, fast=False)
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
