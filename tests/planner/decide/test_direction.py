"""Lower-is-better metrics: the direction is given or inferred, the labels read
"B faster" / "B slower" for latencies, the JSON carries ``direction``, and plain numbers say
which direction was assumed. The decision rule (models.stats.decision) is the same for both."""

import json

import pytest

from planner.io.runs import Run, RunsTable
from planner.io.rows import metric_lower_is_better
from planner.decide.direction import shown_label

TPOT_A, TPOT_B = "20.26,19.95", "22.59,22.38,22.62"


def test_tpot_regression_reads_b_slower(cli):
    """TPOT in ms, B 12 % higher: a regression. Before: "B better, +12 %"."""
    code, out, err = cli("verdict", "--a-runs", TPOT_A, "--b-runs", TPOT_B, "--lower-is-better",
                         "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["label"] == "B slower"
    assert r["rule_label"] == "B better"           # B's value is higher; the rule is unchanged
    assert r["direction"] == "lower_is_better" and r["direction_source"] == "given"
    assert r["delta_pct"]["mean"] == pytest.approx(100 * (22.53 / 20.105 - 1), abs=0.5)
    code, out, err = cli("verdict", "--a-runs", TPOT_A, "--b-runs", TPOT_B, "--lower-is-better")
    assert code == 0, err
    assert "verdict: B slower" in out and "lower is better" in out


def test_plain_numbers_say_what_was_assumed(cli):
    code, out, err = cli("verdict", "--a-runs", TPOT_A, "--b-runs", TPOT_B, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["direction"] == "higher_is_better" and r["direction_source"] == "assumed"
    assert r["label"] == "B better"
    assert any("higher is better assumed" in n and "say lower is better" in n for n in r["notes"])


def test_faster_when_b_is_lower(cli):
    code, out, err = cli("verdict", "--a-runs", TPOT_B, "--b-runs", TPOT_A, "--lower-is-better",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["label"] == "B faster"


def test_direction_inferred_from_the_metric_column(cli, tmp_path):
    p = tmp_path / "lat.csv"
    p.write_text("config,mean_tpot_ms\n" + "".join(
        f"A,{x}\n" for x in TPOT_A.split(",")) + "".join(f"B,{x}\n" for x in TPOT_B.split(",")))
    code, out, err = cli("verdict", str(p), "--a", "A", "--b", "B", "--tps-column",
                         "mean_tpot_ms", "--cv", "1%", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["direction"] == "lower_is_better" and r["direction_source"] == "metric"
    assert r["label"] in ("B slower", "undecided")
    assert any("inferred from" in n for n in r["notes"])


def test_an_explicit_flag_against_the_name_is_said():
    from planner.decide.direction import read_direction as _direction

    t = RunsTable([Run("A", 20.0, metric="mean_ttft_ms", lower_is_better=True)])
    d, src, note = _direction(t, False)
    assert (d, src) == ("higher_is_better", "given") and "mean_ttft_ms" in note


@pytest.mark.parametrize("name,lower", [
    ("mean_tpot_ms", True), ("TPOT", True), ("itl", True), ("ttft_p50", True),
    ("wall_time", True), ("seconds", True), ("latency_s", True), ("time", True),
    ("tokens_per_s", False), ("decode_wall", False), ("probe_wall", False), ("tps", False),
    ("output_throughput", False), ("title", False), ("timestamp", False)])
def test_metric_names(name, lower):
    assert metric_lower_is_better(name) is lower


def test_shown_labels():
    assert [shown_label(x, "lower_is_better") for x in
            ("B better", "A better", "equivalent", "undecided")] == \
        ["B slower", "B faster", "equivalent", "undecided"]
    assert shown_label("B better", "higher_is_better") == "B better"
    with pytest.raises(ValueError):
        shown_label("B better", "up")


def test_saved_result_without_direction_still_renders():
    """A verdict JSON saved before ``direction`` existed reads as higher-is-better."""
    from planner.report.views.verdict import render_markdown
    from planner.io.runs import runs_from_values
    from planner.decide.verdict import verdict
    from planner.results.verdict import Verdict
    from models.stats.noise import platform_prior

    d = verdict(runs_from_values([300, 301], [310, 311]), "A", "B",
                prior=platform_prior("hf-a10g-small")).to_dict()
    for k in ("direction", "direction_source", "rule_label", "cold_runs"):
        d.pop(k)
    v = Verdict.from_dict(d)
    assert v.direction == "higher_is_better"
    assert "higher is better" in render_markdown(v.to_dict())
