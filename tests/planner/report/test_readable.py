"""Reports a benchmarker can read (issue 22): counts in words, digits that tell values apart,
the reason the classical tests and the verdict differ, the runs of a quick form in one strip
with the outlier rule stated, a status line on every long wait (stderr, a terminal only,
never with --json), --help at 80 columns off a terminal, error lines that print names
literally."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "verdict_with_runs.json"
ROOT = Path(__file__).resolve().parents[3]


def test_counts_in_words():
    from planner.report.wording import count, tidy

    assert tidy("cheapest of 1 candidate(s): 1 runs per arm") == \
        "cheapest of 1 candidate: 1 run per arm"
    assert tidy("about 15 more run(s) per arm; 1 more run(s)") == \
        "about 15 more runs per arm; 1 more run"
    assert tidy("needs 1 runs/arm, 1 pairs, 11 runs, 0.1 runs, 2,001 runs") == \
        "needs 1 run/arm, 1 pair, 11 runs, 0.1 runs, 2,001 runs"
    assert tidy("(best 0.500: sequential, 26.048 runs per arm)") == \
        "(best 0.500: sequential, 26.0 runs per arm)"
    assert count(1, "run") == "1 run" and count(10000, "run") == "10,000 runs"
    # two adjectives (repeats' "4 cold first run(s) left out" was shown with its "(s)")
    assert tidy("4 cold first run(s) left out; 1 cold first run(s)") == \
        "4 cold first runs left out; 1 cold first run"


def test_repeats_views_print_counts_and_percentages_as_the_verdict(golden):
    from planner.report.views.repeats import footnotes, question_lines, recommendation, rows

    r = golden("repeats_runs")
    text = "\n".join(recommendation(r) + question_lines(r) + footnotes(r)
                     + [" ".join(c) for c in rows(r)])
    assert "1 runs" not in text and "1 pairs" not in text and "(s)" not in text
    assert "+0.614%" not in text and "+0.61%" in text  # two decimals, as the verdict
    assert "ROPE ±0.10%" in text


def _verdict(**kw) -> dict:
    r = json.loads(FIXTURE.read_text())
    r.update(kw)
    return r


def test_the_verdict_says_why_the_classical_tests_differ():
    from planner.report.render import render_html, render_markdown
    from planner.report.views.verdict import classical_note

    r = _verdict(label="undecided")
    r["classical"]["welch"].update(p=1e-4, significant=True, t=10.0, df=5.0)
    r["delta_pct"].update(hdi_low=-0.2, hdi_high=0.9)  # the verdict's interval holds 0
    note = classical_note(r)
    assert note.startswith("Why Welch's t says significant and the verdict undecided")
    assert "practical margin" in note and "σ_instance" in note
    # the verdict's own interval excluding 0 too: the margin is the only difference
    r["delta_pct"].update(hdi_low=-0.15, hdi_high=-0.03)
    note = classical_note(r)
    assert "excludes 0 as well" in note and "-0.15 .. -0.03 %" in note
    assert "σ_instance" not in note and "too small to matter" in note
    r = _verdict(label="undecided")
    r["classical"]["welch"].update(p=1e-4, significant=True, t=10.0, df=5.0)
    assert "Why Welch" in render_markdown(r) and "Why Welch" in render_html(r)
    r = _verdict(label="B better")
    r["classical"]["welch"].update(p=0.3, significant=False)
    r["classical"]["z_test"].update(z=None, p=None, significant=None)
    assert classical_note(r).startswith("Why Welch's t says not significant and the "
                                        "verdict B better")
    r["classical"]["welch"].update(p=1e-3, significant=True)
    assert classical_note(r) is None  # they agree: nothing to explain


def test_a_latency_verdict_reads_in_seconds_as_hyperfine():
    from planner.report.views.verdict import _rows, lead_sentence

    r = _verdict(direction="lower_is_better", metric="time_s", label="B faster",
                 mean_tps_a=1.2131, mean_tps_b=1.2031,
                 delta_tps={"mean": -0.0100, "hdi_low": -0.0151, "hdi_high": -0.0049},
                 delta_pct={"mean": -0.82, "hdi_low": -1.24, "hdi_high": -0.40})
    lead = lead_sentence(r)
    assert "(1.213 s vs 1.203 s, Δ -0.010 s; 95 % HDI of Δ" in lead, lead
    rows = dict(_rows(r))
    assert "mean 1.213 s" in rows["A"]
    assert rows["Δ = B − A, s (mean, 95% HDI)"].startswith("-0.010")


def test_a_latency_lead_shows_its_means_to_the_digits_of_its_delta():
    """vLLM's mean_tpot_ms 3.237 vs 3.308: the lead printed "3.2 ms vs 3.3 ms, Δ +0.0712 ms"."""
    from planner.report.views.verdict import lead_sentence

    r = _verdict(direction="lower_is_better", metric="mean_tpot_ms", label="B slower",
                 mean_tps_a=3.2370, mean_tps_b=3.3082,
                 delta_tps={"mean": 0.0712, "hdi_low": 0.009, "hdi_high": 0.134},
                 delta_pct={"mean": 2.20, "hdi_low": 0.28, "hdi_high": 4.16})
    assert "(3.237 ms vs 3.308 ms, Δ +0.071 ms; 95 % HDI" in lead_sentence(r)
    r.update(mean_tps_a=12.31, mean_tps_b=13.84, delta_tps={"mean": 1.53, "hdi_low": 1.0,
                                                           "hdi_high": 2.0})
    assert "(12.3 ms vs 13.8 ms, Δ +1.5 ms; " in lead_sentence(r)


def test_a_quick_form_shows_its_runs_as_one_strip_per_config(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    a = ",".join(f"{300 + 0.01 * k:.2f}" for k in range(60))
    b = ",".join(f"{301 + 0.01 * k:.2f}" for k in range(60))
    code, out, err = cli("verdict", "--a-runs", a, "--b-runs", b, "--platform", "hf-a10g-small")
    assert code == 0, err
    tail = out[out.index("runs per instance"):]
    strips = [ln for ln in tail.splitlines() if "instances, one run each" in ln]
    assert len(strips) == 2, tail  # not 120 one-run lines
    assert "n=60" in strips[0] and "…+12" in strips[0] and "median" in strips[0]
    assert "Iglewicz & Hoaglin 1993" in tail and "the model keeps every run" in tail


def test_the_outlier_rule_is_stated_in_every_medium():
    from planner.report.render import render_html, render_markdown

    r = _verdict()
    assert "robust z beyond 3.5" in render_markdown(r)
    assert "robust z beyond 3.5" in render_html(r)


class _FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_wait_shows_a_status_on_a_terminal_only(monkeypatch):
    from planner.report.progress import waiting

    fake = _FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    with waiting("fitting the model by MCMC (20-35 s)..."):
        pass
    assert "fitting the model by MCMC" in fake.getvalue()
    fake = _FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    with waiting("fitting...", quiet=True):  # --json
        pass
    assert fake.getvalue() == ""
    plain = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stderr", plain)
    with waiting("fitting..."):
        pass
    assert plain.getvalue() == ""
    forced = io.StringIO()
    monkeypatch.setattr(sys, "stderr", forced)
    with waiting("A[/] \x1b[2J", force=True):  # printed literally
        pass
    assert "A[/] \\x1b[2J" in forced.getvalue()


def test_verdict_status_on_a_terminal_never_with_json(monkeypatch, runs_csv, capsys):
    from planner.cli import main

    args = [str(runs_csv), "--a", "fa2sw_precache_agentI",
            "--b", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2",
            "--run-group", "validity/free_ceiling_wallclock_realize/ab_out"]
    for extra, shown in (([], True), (["--json"], False)):
        fake = _FakeTTY()
        monkeypatch.setattr(sys, "stderr", fake)
        main(["verdict", *args, *extra])
        out = capsys.readouterr().out
        assert ("reading the runs table" in fake.getvalue()) is shown
        assert ("fitting the model" in fake.getvalue()) is shown
        assert "fitting" not in out
        if extra:
            json.loads(out)


def test_help_off_a_terminal_is_readable_at_80_columns():
    env = {"PATH": "", "COLUMNS": "80", "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "planner", "verdict", "--help"],
                       capture_output=True, text=True, env=env, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    assert not any(c in p.stdout for c in "│╭╰─")  # plain text, no panels
    a = next(ln for ln in lines if ln.lstrip().startswith("--a <"))
    assert "Config A (baseline)" in a  # the help beside its option, not 18 columns wide
    p = subprocess.run([sys.executable, "-m", "planner", "budget", "--help"],
                       capture_output=True, text=True, env=env, cwd=ROOT)
    assert "[budget] table" in p.stdout and "\\[" not in p.stdout


@pytest.mark.parametrize("name", ["x\x1b]0;pwned\x07.csv", "x\u202eevil.csv", "x\ny.csv"])
def test_an_error_line_prints_the_name_literally(cli, tmp_path, name):
    code, out, err = cli("verdict", tmp_path / name, "--a", "a", "--b", "b")
    assert code == 2 and err.count("\n") == 1, err
    assert not any(c in err for c in "\x1b\x07\u202e") and "\ny" not in err
    assert "\\x1b]0;pwned\\x07" in err or "\\u202e" in err or "x\\ny" in err
    code, out, err = cli("verdict", "--a", "1", "--b", "2", "--seed", "\x1b[2J")
    assert code == 2 and "\x1b" not in err and "\\x1b[2J" in err


def test_markdown_names_escape_emphasis_and_line_markers():
    from markdown_it import MarkdownIt

    from planner.report.escape import md

    assert md("fa2sw_precache_agentI") == "fa2sw_precache_agentI"  # intraword: as typed
    html = MarkdownIt("commonmark").render(f"- {md('_x_')} {md('__b__')} {md('~~s~~')}\n"
                                           f"- {md('> q')}\n- {md('- nested')}\n")
    assert "<em>" not in html and "<strong>" not in html and "<blockquote>" not in html
    assert html.count("<li>") == 3 and "<ul>" in html and html.count("<ul>") == 1


def test_an_unstable_group_is_marked_in_every_medium(cli, tmp_path, monkeypatch):
    """A group whose spread is far above the prior's run-to-run scale: the result flags its
    runs (``unstable``), every medium says so and that the model keeps it."""
    p = tmp_path / "w.csv"
    p.write_text("config,instance,rep,tps\n" + "".join(
        f"A,m1,{k},{v}\n" for k, v in enumerate((300, 306, 294, 303))) + "".join(
        f"B,m1,{k},{v}\n" for k, v in enumerate((301, 301.1, 300.9, 301.05))))
    monkeypatch.setenv("COLUMNS", "200")
    md, html = tmp_path / "w.md", tmp_path / "w.html"
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B", "--prior", "local-a10g",
                         "--md", md, "--html", html)
    assert code == 0, err
    assert "UNSTABLE (spread far above the prior)" in out and "1 unstable group" in out
    for text in (md.read_text(), html.read_text()):
        assert "(unstable: spread far above the prior)" in text
        assert "its spread read as run-to-run noise" in text
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B", "--prior", "local-a10g",
                         "--json")
    r = json.loads(out)
    assert [x["unstable"] for x in r["runs"]] == [True] * 4 + [False] * 4


def test_a_plan_name_in_the_budget_progress_is_not_markup(tmp_path, monkeypatch, capsys):
    """The budget's progress bar (stderr, a terminal) shows each comparison's name: rich
    markup in it prints literally, with no MarkupError from ``A[/]``."""
    from planner.cli import main

    plan = tmp_path / "plan.toml"
    plan.write_text('[plan]\nplatform = "hf-a10g-small"\nbaseline_tps = 308.0\n'
                    '[budget]\ntotal_usd = 5.0\nprice_per_hour = 1.0\nmax_runs_per_arm = 4\n'
                    '[[comparison]]\nname = "A[/] [blink]x\\u202e"\nbaseline = "a"\n'
                    'candidate = "b"\ndelta_tps = 3.0\n', encoding="utf-8")
    fake = _FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    main(["budget", str(plan), "--sims", "200"])
    out = capsys.readouterr().out
    assert "A[/] [blink]x" in out and "\u202e" not in out
    assert "Traceback" not in fake.getvalue() and "MarkupError" not in fake.getvalue()


def test_counts_are_words_where_the_decision_layer_writes_them():
    """One count helper below the decision layer (planner.results.counts, re-exported by the
    report's wording): the notes come out of the decision layer in words, with no "(s)" for
    the renderer to tidy."""
    from planner.decide.comparison import grouping_note
    from planner.report.wording import count as report_count
    from planner.results.counts import count, plural
    from planner.results.rank import describe_action

    assert report_count is count
    assert (count(1, "run"), count(2, "run"), count(1000, "run"), count(0, "group")) == \
        ("1 run", "2 runs", "1,000 runs", "0 groups")
    assert count(2, "batch", "batches") == "2 batches" and plural(1, "lie") == "lie"
    g = {"sessions": 1, "session_source": "src", "sessions_modelled": True, "cold_groups": 1,
         "cold_group_by": "instance", "instances": 1, "instance_source": "i", "cold_source": "c"}
    note = grouping_note(g)
    assert "(s)" not in note and "1 instance (i)" in note and "1 server session (src)" in note
    assert "1 cold group," in note
    assert describe_action({"action": "paired", "runs_per_arm": 1}) == \
        "1 A/B pair on a new allocation"
    assert describe_action({"action": "new", "runs_per_arm": 3}) == \
        "3 runs per arm, each on a new allocation"


def test_a_rope_of_zero_reads_as_zero():
    """--rope 0 printed "your ±0.00 % practical margin", a margin that looks rounded away."""
    from planner.report.views.verdict import _rope_pct

    assert (_rope_pct(0), _rope_pct(0.1), _rope_pct(0.001)) == ("0", "0.10", "0.001")


def test_an_hdi_end_at_the_margin_gets_the_digits_to_show_its_side():
    # a 100k-run table: 'HDI +0.10 .. +0.10 % ... straddles your ±0.10 %' (a new user)
    from planner.report.views.verdict import lead_sentence

    r = _verdict(label="undecided")
    r["delta_pct"].update(mean=0.1003, hdi_low=0.0996, hdi_high=0.1011)
    r["rope"]["pct"] = 0.1
    s = lead_sentence(r)
    assert "+0.0996 .. +0.1011 %" in s and "straddles" in s
