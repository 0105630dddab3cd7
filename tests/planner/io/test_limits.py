"""One plausibility rule per quantity (planner.io.limits), applied by every reader and writer."""

from __future__ import annotations

import json

import pytest

from planner.io import limits
from planner.errors import InputError
from planner.io.rows import Run, validate_run
from planner.io.runs import read_runs, runs_from_values
from planner.io.writer import write_runs_csv


@pytest.mark.parametrize("name,bad,good", [
    ("tps", 1e-300, 0.01), ("tps", 1e308, 1e6), ("total_usd", 1e9, 1e6),
    ("max_runs_per_arm", 100_000_000, 1000), ("price_per_hour", 0, 1000),
    ("delta_pct", -100, -99.9), ("delta_tps", 1e308, -1e6), ("minutes_per_run", 0, 1440),
    ("seed", 2**32, 2**32 - 1), ("sims", 99, 100), ("bootstrap", 1e6, 100_000),
])
def test_each_quantity_has_a_range(name, bad, good):
    assert limits.check(name, good) == good
    with pytest.raises(InputError, match=f"field '{name}': implausible"):
        limits.check(name, bad)


def test_integer_and_non_finite_values_are_refused():
    with pytest.raises(InputError, match="whole number"):
        limits.check("max_runs_per_arm", 2.5)
    with pytest.raises(InputError, match="not a finite number"):
        limits.check("tps", float("nan"))
    with pytest.raises(InputError, match="not a number"):
        limits.check("tps", True)


def test_quick_form_refuses_values_no_benchmark_produces(cli):
    code, _, err = cli("verdict", "--a", "1e-300", "--b", "2e-300")
    assert code == 2 and "field '--a': implausible TPS 1e-300" in err
    assert "Traceback" not in err


def test_runs_from_values_shares_the_run_rule():
    with pytest.raises(InputError, match="field 'b'.*implausible TPS"):
        runs_from_values([300.0], [2e-300])
    assert len(runs_from_values([300.0, 301.0], [302.0])) == 3


def test_control_character_in_a_name_names_file_line_field(tmp_path):
    p = tmp_path / "r.csv"
    p.write_bytes(b"config,tps,instance\nA,300,i1\nA,301,i2\nA\x00,302,i3\nB,303,i4\n")
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert str(e.value) == (f"{p}:4 field 'config': control character '\\x00' at position 2 "
                            "of 'A\\x00'")
    q = tmp_path / "r.jsonl"
    q.write_text('{"config": "A", "tps": 300, "workload": "128\\t512"}\n')
    with pytest.raises(InputError, match=r"r.jsonl:1 field 'workload': control character"):
        read_runs(q)


def test_ingest_refuses_what_verdict_refuses(cli, tmp_path):
    for k, tps in enumerate((300.5, 1e308)):
        d = tmp_path / "res" / "cfgA" / f"run{k}"
        d.mkdir(parents=True)
        (d / "summary.json").write_text(json.dumps({"tps": tps, "job_id": f"j{k}"}))
    out = tmp_path / "runs.csv"
    code, _, err = cli("ingest", tmp_path / "res", "-o", out)
    assert code == 2 and "run1/summary.json field 'tps': implausible TPS 1e+308" in err
    assert not out.exists()


def test_writer_checks_every_run(tmp_path):
    bad = Run(config="A", tps=5e6, extra={"source": "x/summary.json"})
    with pytest.raises(InputError, match="x/summary.json field 'tps'"):
        write_runs_csv([bad], tmp_path / "o.csv")
    assert not (tmp_path / "o.csv").exists()
    with pytest.raises(InputError, match="field 'platform': control"):
        validate_run(Run(config="A", tps=300.0, platform="a10g\n"), file="f")


def test_tool_result_values_use_their_metric_range(tmp_path):
    # a hyperfine time of 0.5 ms is a plausible duration, not a 0.0005 TPS rate
    p = tmp_path / "h.json"
    p.write_text(json.dumps({"results": [{"command": "a", "times": [0.0005, 0.0006]},
                                         {"command": "b", "times": [0.0007, 1e300]}]}))
    with pytest.raises(InputError, match="h.json:2 field 'times': implausible duration 1e"):
        read_runs(p)


def test_large_table_streamed_with_the_same_runs(tmp_path):
    rows = "".join(f"c{k % 3},{250 + k % 7}.5,i{k},{k % 2}\n" for k in range(3000))
    p = tmp_path / "big.csv"
    p.write_text("config,tps,instance,rep\n" + rows)
    q = tmp_path / "big.jsonl"
    q.write_text("".join(json.dumps({"config": f"c{k % 3}", "tps": 250 + k % 7 + 0.5,
                                     "instance": f"i{k}", "rep": k % 2}) + "\n"
                         for k in range(3000)))
    a, b = read_runs(p), read_runs(q)
    assert len(a) == len(b) == 3000
    assert [(r.config, r.tps, r.instance, r.rep, r.line) for r in a.runs][:2] == \
        [("c0", 250.5, "i0", 0, 2), ("c1", 251.5, "i1", 1, 3)]
    assert [(r.config, r.tps, r.rep) for r in a.runs] == [(r.config, r.tps, r.rep)
                                                         for r in b.runs]


def _dense_knapsack(values, weights, capacity):
    """The dense table over capacity that planner.decide.knapsack replaced (reference)."""
    import numpy as np

    n, cap = len(values), max(int(capacity), 0)
    if n == 0:
        return []
    w = [max(int(x), 0) for x in weights]
    v = [int(round(x * 1e9)) for x in values]
    neg = -(1 << 62)
    best = np.full(cap + 1, neg, dtype=np.int64)
    best[0] = 0
    take = np.zeros((n, cap + 1), dtype=bool)
    for i in range(n):
        if v[i] <= 0 or w[i] > cap:
            continue
        cand = np.full(cap + 1, neg, dtype=np.int64)
        prev = best[:cap + 1 - w[i]]
        cand[w[i]:] = np.where(prev > neg, prev + v[i], neg)
        take[i] = cand > best
        best = np.where(take[i], cand, best)
    c = int(np.nonzero(best == best.max())[0][0])
    out = []
    for i in range(n - 1, -1, -1):
        if take[i, c]:
            out.append(i)
            c -= w[i]
    return sorted(out)


def test_knapsack_over_items_matches_the_dense_table():
    import random

    from planner.decide.knapsack import knapsack

    rnd = random.Random(0)
    for _ in range(1500):
        n = rnd.randint(0, 9)
        vals = [rnd.choice([0.0, 0.2, 0.5, 0.8, rnd.random(), -0.1]) for _ in range(n)]
        wts = [rnd.randint(0, 30) for _ in range(n)]
        cap = rnd.randint(0, 80)
        assert knapsack(vals, wts, cap) == _dense_knapsack(vals, wts, cap), (vals, wts, cap)


def test_knapsack_cost_does_not_grow_with_the_budget():
    import time
    import tracemalloc

    from planner.decide.knapsack import allocate

    buys = [{"assurance": 0.8 + k / 100, "cost_usd": 3.0 + k, "runs_per_arm": 6}
            for k in range(12)]
    tracemalloc.start()
    t = time.perf_counter()
    out = allocate(buys, total_usd=1e6)  # 10^8 cents: the dense table needed 1.1 GB
    dt = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert out["bought"] == list(range(12)) and out["capacity"] == 100_000_000
    assert peak < 5e6 and dt < 2.0


def test_plan_file_sizes_are_bounded(cli, tmp_path):
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "examples" / "plan.toml").read_text()
    for old, new, msg in (("total_usd = 15.0", "total_usd = 1e9",
                           "field 'budget.total_usd': implausible budget 1e+09"),
                          ("max_runs_per_arm = 40", "max_runs_per_arm = 100000000",
                           "field 'budget.max_runs_per_arm': implausible runs per arm "
                           "100,000,000")):
        p = tmp_path / "plan.toml"
        p.write_text(text.replace(old, new))
        code, _, err = cli("budget", p, "--sims", "100")
        assert code == 2 and msg in err and f"{p}:" in err, err
    code, _, err = cli("budget", tmp_path / "plan.toml", "--total-usd", "1e308")
    assert code == 2 and "'--total-usd': implausible budget 1e+308" in err


@pytest.mark.parametrize("args,msg", [
    (("--delta", "1e308"), "'--delta': implausible delta 1e+308"),
    (("--delta", "2", "--max-runs", "100000000"), "'--max-runs': implausible runs per arm"),
    (("--delta", "5", "--relative", "--baseline-tps", "1e-300"), "'--baseline-tps'"),
    (("--delta", "-150", "--relative"), "'--delta': implausible delta -150"),
])
def test_repeats_options_are_bounded(cli, args, msg):
    code, _, err = cli("repeats", *args)
    assert code == 2 and msg in err, err


def test_cost_model_overrides_are_bounded():
    from planner.decide.costs import cost_model

    for kw, field in [({"minutes_per_run": 1e308}, "minutes_per_run"),
                      ({"price_per_hour": 1e308}, "price_per_hour"),
                      ({"startup_minutes": -1}, "startup_minutes")]:
        with pytest.raises(InputError) as e:
            cost_model("hf-a10g-small", **kw)
        assert e.value.field == field
    assert cost_model("hf-a10g-small", minutes_per_run=10).cost([2])["cost_usd"] > 0


@pytest.mark.parametrize("name,bad,good", [("mc_reps", 100_000_000, 200),
                                           ("draws", 1_000_000_000, 20000),
                                           ("sigma_tps", 0, 1.16)])
def test_monte_carlo_sizes_and_sigma_have_ranges(name, bad, good):
    with pytest.raises(InputError):
        limits.check(name, bad)
    assert limits.check(name, good) == good


def test_repeats_help_describes_the_cost_overrides():
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "planner", "repeats", "--help"],
                       capture_output=True, text=True, env={"COLUMNS": "200", "PATH": ""})
    for opt in ("--minutes-per-run", "--startup-minutes"):
        line = next(ln for ln in p.stdout.splitlines() if opt in ln)
        assert line.split(opt, 1)[1].replace("<float>", "").strip(" │"), line
