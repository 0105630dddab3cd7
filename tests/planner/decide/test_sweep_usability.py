"""planner rank / next / baseline used as a new user would: narrow terminals, option
combinations that used to be silently ignored or waited on (issue 23, hU's pass)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from planner.cli import main

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
G = "mtp_k_sweep_speed/runs"


def _terminal(view, result: dict, width: int) -> str:
    """``view.render_terminal(result)`` as a terminal of ``width`` columns shows it."""
    import rich.console as rc

    buf = io.StringIO()
    real = rc.Console

    class _Tty(real):
        def __init__(self, *a, **k):
            k.setdefault("file", buf)
            k.setdefault("width", width)
            k["force_terminal"] = True
            k["color_system"] = None
            super().__init__(*a, **k)

    rc.Console = _Tty
    try:
        view.render_terminal(result)
    finally:
        rc.Console = real
    return buf.getvalue()


@pytest.fixture(scope="module")
def ranked():
    from planner.decide.comparison import Selection
    from planner.decide.rank import from_table, rank
    from planner.io.runs import read_runs

    fld = from_table(read_runs(RUNS), None, selection=Selection(run_group=G))
    return rank(fld, seed=0, draws=2000).to_dict()


@pytest.mark.parametrize("width", [80, 100, 150])
def test_rank_table_keeps_the_config_names_on_a_narrow_terminal(ranked, width):
    """At 80 columns the config column used to be squeezed to nothing (the names vanished)
    and the last columns were cut off."""
    from planner.report.views import rank as view

    out = _terminal(view, ranked, width)
    lines = out.splitlines()
    assert max(len(x) for x in lines) <= width
    table = [x for x in lines if x.startswith(("┃", "│"))]
    # every row closes with its border: nothing is cropped at the right edge
    assert all(x.endswith(("┃", "│")) for x in table), out
    # each config's name is there in full (folded onto several lines when narrow)
    cells = "".join(x.split("│")[2].strip() for x in table if x.startswith("│"))
    for row in ranked["configs"]:
        assert row["config"] in cells, (row["config"], out)


def _fails(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_next_watch_refuses_the_same_config_twice_at_once(tmp_path, capsys):
    """--watch with --a X --b X used to poll until --timeout (exit 4) saying 'waiting'."""
    import time

    t0 = time.monotonic()
    err = _fails(["next", "--watch", str(tmp_path), "--a", "A", "--b", "A", "--timeout",
                  "30", "--interval", "0.5"], capsys)
    assert "same config" in err and time.monotonic() - t0 < 20


def test_next_baseline_refuses_a_second_config_a(tmp_path, capsys):
    """--baseline NAME is config A: an --a beside it used to be dropped silently."""
    store = tmp_path / "b.sqlite"
    main(["baseline", "save", "k11", str(RUNS), "--config", f"{G}:k11", "--run-group", G,
          "--store", str(store)])
    capsys.readouterr()
    err = _fails(["next", str(RUNS), "--run-group", G, "--baseline", "k11", "--store",
                  str(store), "--a", f"{G}:k3", "--b", f"{G}:k13"], capsys)
    assert "--baseline" in err and "--a" in err


def test_next_configs_refuses_a_and_b(capsys):
    """--configs picks A and B itself: --a/--b beside it used to be dropped silently."""
    err = _fails(["next", str(RUNS), "--run-group", G, "--configs", f"{G}:k11,{G}:k13",
                  "--a", f"{G}:k3"], capsys)
    assert "--configs" in err


def test_next_configs_with_a_baseline_ranks_the_baseline_too(tmp_path, capsys):
    """As rank --baseline: the saved runs are one of the configs ranked (they used to be
    left out of the ranking next --configs does)."""
    import json

    store = tmp_path / "b.sqlite"
    main(["baseline", "save", "k13", str(RUNS), "--config", f"{G}:k13", "--run-group", G,
          "--store", str(store)])
    capsys.readouterr()
    main(["next", str(RUNS), "--run-group", G, "--baseline", "k13", "--store", str(store),
          "--configs", f"{G}:k3,{G}:k11", "--json", "--sims", "100"])
    out = json.loads(capsys.readouterr().out)
    assert "baseline:k13" in out["configs"]
    assert out["b"] == "baseline:k13" and out["a"] == f"{G}:k11"


@pytest.mark.parametrize("command", [["rank"], ["next", "--b", "serve_config_sweep:control"]])
def test_a_baseline_of_another_metric_is_named_as_the_baseline(tmp_path, capsys, command):
    """A probe_wall baseline against decode_wall runs used to be the table's 'rows mix'
    error naming line 0 of the new runs' file (a row that came from the store)."""
    store = tmp_path / "b.sqlite"
    main(["baseline", "save", "k11", str(RUNS), "--config", f"{G}:k11", "--run-group", G,
          "--store", str(store)])
    capsys.readouterr()
    err = _fails([command[0], str(RUNS), "--run-group", "serve_config_sweep", "--baseline",
                  "k11", "--store", str(store)] + command[1:], capsys)
    assert "baseline 'k11' holds metric probe_wall" in err and ":0" not in err


def test_saving_over_a_baseline_says_it_replaced_it(tmp_path, capsys):
    """A second save under the same name printed 'saved' as if the name were new."""
    store = tmp_path / "b.sqlite"
    base = ["baseline", "save", "main", str(RUNS), "--run-group", G, "--store", str(store)]
    main(base + ["--config", f"{G}:k11"])
    assert capsys.readouterr().out.startswith("saved baseline 'main'")
    main(base + ["--config", f"{G}:k13"])
    out = capsys.readouterr().out
    assert out.startswith("replaced baseline 'main'") and f"3 runs of {G}:k11" in out


GOLDEN = ROOT / "tests" / "planner" / "report" / "fixtures" / "golden"


@pytest.mark.parametrize("name, view", [("draft_mtp", "draft"), ("draft_default", "draft"),
                                        ("draft_sweep", "draft_sweep"), ("shift", "shift"),
                                        ("shift_capture", "shift")])
def test_draft_and_shift_tables_keep_every_figure_on_an_80_column_terminal(name, view):
    """At 80 columns rich cut the policies table's every figure to '3.8…' and the rests-on
    constants' names to 'officia…'; a table that cannot fit with its words whole is now
    printed one block per row, every cell whole."""
    import gzip
    import importlib
    import json

    r = json.loads(gzip.decompress((GOLDEN / f"{name}.json.gz").read_bytes()))
    mod = importlib.import_module(f"planner.report.views.{view}")
    out = _terminal(mod, r, 80)
    assert "…" not in out, out
    assert max(len(x) for x in out.splitlines()) <= 80
    for e in r.get("rests_on") or []:
        assert e["name"] in out
    wide = _terminal(mod, r, 400)  # room for everything: the tables as before
    assert "┏" in wide


def test_next_terminal_shows_stop_one_more_run_and_repeats_plan():
    """With a long design ladder the first 12 rows were all design sizes: the one-more-run
    actions, stopping and the plan repeats --runs recommends never reached the terminal."""
    from planner.report.views import next as view

    acts = [{"action": "paired", "config": None, "runs_per_arm": k, "runs": 2 * k,
             "cost_usd": 0.1 * k, "gpu_hours": 0.1 * k, "p_decided": 0.5,
             "expected_cost": 1.0 + k, "source": "repeats",
             "recommended_by_repeats": k == 30} for k in range(1, 31)]
    acts += [{"action": "one_more_a", "config": "A", "runs_per_arm": None, "runs": 1,
              "cost_usd": 0.05, "gpu_hours": 0.05, "p_decided": 0.0, "expected_cost": 40.0,
              "source": "preposterior"},
             {"action": "stop", "config": None, "runs_per_arm": 0, "runs": 0,
              "cost_usd": 0.0, "gpu_hours": 0.0, "p_decided": 0.0, "expected_cost": None,
              "source": "current"}]
    r = {"a": "A", "b": "B", "actions": acts, "cost_model": {"unit": "usd"},
         "current": {"label": "undecided", "decided": False,
                     "delta_pct": {"mean": 0.1, "hdi_low": -0.2, "hdi_high": 0.4}},
         "recommended": acts[0], "repeats": None}
    out = _terminal(view, r, 150)
    assert "one more run of A" in out and "stop now" in out
    assert "30 A/B pairs on" in out and "13 A/B pair" not in out
    assert "more design sizes" in out and "list every action" in out


@pytest.mark.parametrize("argv", [["draft", "-p", "pld", "--baseline", "nope"],
                                  ["draft", "sweep", "--baseline", "pld:q=1"]])
def test_a_bad_baseline_policy_names_baseline(argv, capsys):
    """A bad --baseline was reported as field '--policy' (an option the user may not have
    given)."""
    err = _fails(argv, capsys)
    assert "field '--baseline'" in err


def test_shift_refuses_an_unknown_evidence(capsys):
    """--evidence nope ran the official mode and exited 0."""
    err = _fails(["shift", "--public-tps", "411.6", "--evidence", "nope"], capsys)
    assert "field '--evidence'" in err and "official or proxy" in err


def test_shift_help_keeps_its_defaults(capsys, monkeypatch):
    """Rich read '[default: official]' inside a help text as markup and dropped it: the
    help printed 'official | proxy shipped pairs .'."""
    monkeypatch.setenv("COLUMNS", "200")
    try:
        main(["shift", "--help"])
    except SystemExit as exc:
        assert not exc.code
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: official)" in out and "(default: 7)" in out
    assert "else not tuned)" in out and " . " not in out.replace("│", " ")


@pytest.mark.parametrize("command", ["rank", "next", "baseline"])
def test_store_help_is_whole_at_80_columns(command, capsys, monkeypatch):
    """At 80 columns rich cut the store's default path to '$XDG_DATA_HOME/s…'."""
    monkeypatch.setenv("COLUMNS", "80")
    try:
        main([command, "--help"])
    except SystemExit as exc:
        assert not exc.code
    out = capsys.readouterr().out
    assert max(len(x) for x in out.splitlines()) <= 80
    block = out[out.index("--store"):]
    block = block[:block.index("~/.local/share") + 20]
    assert "…" not in block and "$XDG_DATA_HOME" in block


def test_a_policy_has_one_label_whatever_the_key_order():
    """'pld:depth=12' was labelled pld(depth=12,n=2), the sweep's row pld(n=2,depth=12):
    two labels (and two rows) of one policy."""
    from planner.decide.draft.policy import PolicySpec, default_specs

    a, = default_specs(["pld:depth=12"])
    b, = default_specs(["pld:n=2,depth=12"])
    assert a.label == b.label == "pld(n=2,depth=12)"
    t, = default_specs(["tree:tree_depth=24"])
    assert t.label == PolicySpec("tree", {"k": 7, "lookup": "suffix",
                                          "tree_depth": 24}).label
    assert t.label == "tree(k=7,lookup=suffix,tree_depth=24)"


@pytest.mark.parametrize("texts", [["pld", "pld"], ["pld:depth=12", "pld:n=2,depth=12"]])
def test_one_policy_given_twice_is_refused(texts):
    """It was replayed twice and printed as two identical rows."""
    from planner.decide.draft.policy import default_specs
    from planner.errors import InputError

    with pytest.raises(InputError, match="already given"):
        default_specs(texts)


def test_rank_figures_keep_four_significant_digits():
    """':.4g' printed '254' and '252.3..256' beside '254.2', as if less precise."""
    from planner.report.views.rank import _g4

    assert [_g4(v) for v in (254.0, 256, 254.2, 12.345, 0.01234, 999.96)] == \
        ["254.0", "256.0", "254.2", "12.35", "0.01234", "1000"]


def test_a_latency_ranking_prints_its_unit(tmp_path, capsys):
    """A mean_tpot_ms ranking with the default relative ROPE printed '11.51 TPS' and a
    'mean TPS' column."""
    f = tmp_path / "lat.csv"
    f.write_text("config,mean_tpot_ms,instance,rep\n" + "".join(
        f"{c},{v},m1,{k}\n" for c, vs in (("a", (12.10, 12.14, 12.08)),
                                          ("b", (11.50, 11.55, 11.48)))
        for k, v in enumerate(vs, 1)))
    main(["rank", str(f), "--tps-column", "mean_tpot_ms", "--draws", "1000"])
    out = capsys.readouterr().out
    assert "TPS" not in out.split("inputs:")[0]
    assert "ms (95 % HDI" in out and "mean ms" in out


def test_sweep_headline_names_the_best_row_by_its_label():
    """The headline said 'mtp k=7' where every table and the worth-a-run line say
    'mtp(k=7)'."""
    import gzip
    import json

    from planner.report.views.draft_sweep import headline

    r = json.loads(gzip.decompress((GOLDEN / "draft_sweep.json.gz").read_bytes()))
    b = r["rows"][0]
    b["policy"], b["params"], b["label"] = "mtp", {"k": 7}, "mtp(k=7)"
    assert "configurations: mtp(k=7)," in headline(r)[0]
    del b["label"]  # a result saved before rows had labels: as before
    assert "configurations: mtp k=7," in headline(r)[0]
