"""The input-format registry drives detection, reading, the ``--format`` names, its help and
the errors that list formats: a format added as one module and one registry entry is seen
everywhere."""

from __future__ import annotations

import importlib
import json
import types

import pytest

from planner.errors import InputError
from planner.io import formats
from planner.io.formats import (detect_format, format_help, format_names, format_table,
                                read_results)
from planner.io.formats._common import Format, make_run, value
from planner.io.ingest import ingest
from planner.io.runs import read_runs


def _toy_read(doc, *, path, metric=None, config=None, instance=None):
    """One run per line of a toybench file: ``{"toybench": 1, "bench": NAME, "tok_s": X}``."""
    return [make_run(config=r["bench"], metric="tok_s", path=path, line=line, rep=k,
                     tps=value(r["tok_s"], path=path, line=line, field="tok_s"),
                     instance=instance or "")
            for k, (line, r) in enumerate(doc.records)]


#: A format module as a new file would declare it.
TOY = types.SimpleNamespace(FORMATS=(Format(
    "toybench", "toybench --json (a run per line)",
    sniff=lambda doc: bool(doc.records) and all("toybench" in r for _, r in doc.records),
    read=_toy_read, aliases=("toy",)),))

TOY_TEXT = "".join(json.dumps({"toybench": 1, "bench": b, "tok_s": x}) + "\n"
                   for b, x in (("A", 101.5), ("B", 103.25), ("A", 100.5), ("B", 104.0)))


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(formats, "REGISTRY", formats.REGISTRY + (TOY,))


def _flat(text: str) -> str:
    """Help text without rich's box characters and line wrapping."""
    return " ".join(text.replace("│", " ").split())


def test_a_registered_format_is_detected_and_read(toy, tmp_path):
    assert detect_format(TOY_TEXT) == "toybench"
    p = tmp_path / "toy.jsonl"
    p.write_text(TOY_TEXT)
    t = read_runs(p)
    assert [(r.config, r.tps, r.metric, r.line) for r in t.runs] == [
        ("A", 101.5, "tok_s", 1), ("B", 103.25, "tok_s", 2), ("A", 100.5, "tok_s", 3),
        ("B", 104.0, "tok_s", 4)]
    assert t.configs == ["A", "B"]
    # forced by its alias, on a file without a telling suffix
    q = tmp_path / "toy.out"
    q.write_text(TOY_TEXT)
    assert [r.tps for r in read_runs(q, format="TOY").runs] == [101.5, 103.25, 100.5, 104.0]


def test_without_its_registry_entry_the_format_is_a_table(tmp_path):
    assert detect_format(TOY_TEXT) == "table"
    assert "toybench" not in format_names() and "toybench" not in format_help()


def test_a_registered_format_is_listed_in_help_and_errors(toy, tmp_path, cli):
    assert format_names()[-2:] == ["toybench", "toy"]
    assert format_help().endswith(", sglang, toybench (or toy) (default: detected from the "
                                  "content).")
    assert "| toybench | toy | toybench --json (a run per line) |" in format_table()
    with pytest.raises(InputError) as e:
        read_runs("examples/runs/tps_runs.csv", format="nope")
    assert e.value.message == f"unknown format 'nope' (known: {', '.join(format_names())})"
    assert "toybench" in e.value.message
    with pytest.raises(InputError) as e:
        read_results("{}", path="x.json", format="table")
    assert e.value.message.startswith("unknown result format 'table' (known: pyperf, ")
    assert e.value.message.endswith(", sglang, toybench, toy)")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError,
                       match=r"no benchmark result files \(pyperf, .*, toybench, toy\)"):
        ingest(tmp_path / "empty")
    code, _, err = cli("verdict", "examples/runs/tps_runs.csv", "--a", "A", "--b", "B",
                       "--format", "nope")
    assert code == 2 and "toybench" in err and "\n" not in err.strip()
    # the --format help is derived from the registry when the options are built
    from planner.cli import _options

    try:
        assert "toybench (or toy)" in importlib.reload(_options).FORMAT_HELP
    finally:
        formats.REGISTRY = formats.REGISTRY[:-1]
        importlib.reload(_options)
    assert "toybench" not in _options.FORMAT_HELP


def test_format_help_is_the_one_planner_verdict_shows(cli):
    from planner.cli._options import FORMAT_HELP

    assert FORMAT_HELP == format_help()
    code, out, _ = cli("verdict", "--help")
    assert code == 0
    flat = _flat(out)
    assert "Input format: table, pyperf, hyperfine, vllm" in flat
    for name in format_names():  # every registered name reaches --help
        assert name in flat
