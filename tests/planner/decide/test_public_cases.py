"""The public "is this delta real?" cases (``tests/fixtures/public_cases.csv``, issue 20 item
6(b)) and the public repeated-run data (``models/data/public_runs.csv``, item 2).

The fixture is checked for form (every row parses, a source on every row, the counts the
issue asks for); the planner's verdict, Welch's t and the z-test are run on every case
through ``bench/bench_public_cases.py`` and the planner's false-claim rate on the nulls is
held to the issue's target (<= 5 %). Power is reported, not gated: the population prior
(issue 20 item 2) is what is meant to raise it.
"""

from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "public_cases.csv"
RUNS = ROOT / "models" / "data" / "public_runs.csv"
#: a source is a URL or ``owner/repo:path@commit`` (40 hex digits), possibly "... vs ..."
SOURCE = re.compile(r"^(https://github\.com/\S+|[\w.-]+/[\w.-]+:\S+@[0-9a-f]{40})")

pytestmark = pytest.mark.slow


def _bench():
    spec = importlib.util.spec_from_file_location("bench_public_cases",
                                                  ROOT / "bench" / "bench_public_cases.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def bench():
    return _bench()


@pytest.fixture(scope="module")
def result(bench):
    return bench.main(["--json"])


def test_fixture_rows_parse_and_name_sources(bench):
    cases = bench.read_cases(FIXTURE)
    assert len({c["case_id"] for c in cases}) == len(cases), "duplicate case_id"
    for c in cases:
        assert SOURCE.match(c["source"]), f"{c['case_id']}: source {c['source']!r}"
        assert c["confirmed_by"].strip(), f"{c['case_id']}: no confirmed_by"
        assert c["platform"] and c["design"] and c["unit"] and c["group"], c["case_id"]
        assert c["truth_strength"] in ("strong", "moderate"), c["case_id"]
        for arm in "ab":
            assert all(v > 0 for v in c[arm]), f"{c['case_id']}: non-positive value"


def test_fixture_counts(bench):
    cases = bench.read_cases(FIXTURE)
    effects = [c for c in cases if c["kind"] == "effect"]
    nulls = [c for c in cases if c["kind"] == "null"]
    assert len(effects) >= 25 and len(nulls) >= 15, (len(effects), len(nulls))
    assert len({c["platform"] for c in cases}) >= 8


def test_every_method_runs_on_every_case(result):
    rows = result["cases"]
    assert all(r["planner_error"] is None for r in rows), \
        [(r["case_id"], r["planner_error"]) for r in rows if r["planner_error"]]
    assert all(r["planner_call"] in (-1, 0, 1) for r in rows)
    multi = [r for r in rows if r["n_a"] >= 2 and r["n_b"] >= 2]
    assert all(r["welch_call"] is not None and r["z_call"] is not None for r in multi)


def test_power_is_reported(result):
    for method in ("planner", "welch", "z"):
        for view in ("all", "multi", "by_source"):
            s = result["summary"][method][view]
            assert s["n_effect"] > 0 and 0.0 <= s["power"] <= 1.0
            assert s["n_null"] > 0 and 0.0 <= s["false_claims"] <= 1.0


def test_planner_false_claims_on_nulls_at_most_5_percent(result):
    # 1 of 22 today (llama.cpp PR 9921's withdrawn tg128 claim): one more false claim fails it
    assert result["summary"]["planner"]["all"]["false_claims"] <= 0.05


def test_public_runs_read_and_are_sourced():
    from planner.io.runs import read_runs

    table = read_runs(RUNS)
    assert len({r.platform for r in table.runs}) >= 8
    with open(RUNS, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for line, row in enumerate(rows, start=2):
        assert SOURCE.match(row["source"]), f"line {line}: source {row['source']!r}"
        assert row["higher_is_better"] in ("0", "1"), f"line {line}"
