"""One report layer: every command writes --json, --md and --html, and ``planner report``
re-renders the saved JSON into the same Markdown and HTML (plots and the generation stamp
aside); bad saved files exit 2 with one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "tests" / "fixtures" / "draft_small_capture.jsonl.gz"
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
_CFG = ("fa2sw_precache_agentI+CENTROID_TOP_K={},FUSED_SPARSE_ARGMAX_BLOCK=64,"
        "SPECULATIVE_CONFIG=K=7/mtp")

#: kind -> command line (without --json/--md/--html), small settings.
COMMANDS = {
    "verdict": ["verdict", str(RUNS), "--a", _CFG.format(64), "--b", _CFG.format(128)],
    "repeats": ["repeats", "--delta", "1", "--relative", "--sims", "200", "--design",
                "separate", "--max-runs", "8"],
    "budget": ["budget", str(ROOT / "tests" / "fixtures" / "plan_small.csv"), "--sims", "200",
               "--total-usd", "20"],
    "draft": ["draft", str(SMALL), "-p", "pld", "-p", "hf-pld", "-p", "mtp", "--bootstrap",
              "100", "--mc-reps", "5", "--convention", "vllm"],
    "draft-sweep": ["draft", "sweep", str(SMALL), "--n-values", "2", "--d-values", "8",
                    "--k-values", "2", "--mc-reps", "5"],
    "calibrate": ["calibrate", str(RUNS), "--platform", "local-a10g", "--metric",
                  "decode_wall", "--workload", "128x512"],
    "shift": ["shift", "--public-tps", "300", "--draws", "2000", "--seed", "2"],
}


def _main(argv) -> int:
    from planner.cli import main

    try:
        main([str(a) for a in argv])
    except SystemExit as exc:
        return exc.code or 0
    return 0


def write_all(folder: Path, capsys) -> dict:
    """Run every command with --json --md --html into ``folder``; kind -> (json, md, html)."""
    out = {}
    for kind, argv in COMMANDS.items():
        stem = kind.replace("-", "_")
        md, html = folder / f"{stem}.md", folder / f"{stem}.html"
        code = _main(argv + ["--json", "--md", md, "--html", html])
        text = capsys.readouterr().out
        assert code == 0, kind
        js = folder / f"{stem}.json"
        js.write_text(text, encoding="utf-8")
        out[kind] = (js, md, html)
    return out


def _html_sans_plots(text: str) -> str:
    text = re.sub(r'src="data:image/png;base64,[^"]*"', 'src="PNG"', text)
    return re.sub(r"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", "generated T", text)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    import contextlib  # capsys is function-scoped: capture stdout by hand
    import io

    folder = tmp_path_factory.mktemp("direct")

    class _Cap:
        def __init__(self):
            self.buf = io.StringIO()

        def readouterr(self):
            v = self.buf.getvalue()
            self.buf.seek(0)
            self.buf.truncate()
            return type("R", (), {"out": v})

    cap = _Cap()
    with contextlib.redirect_stdout(cap.buf):
        return write_all(folder, cap)


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_report_re_renders_what_the_command_wrote(kind, written, tmp_path, cli):
    js, md, html = written[kind]
    saved = json.loads(js.read_text())
    from planner.report.render import kind_of

    assert kind_of(saved) == kind
    assert saved["schema"].startswith("spec-planner/")
    md2, html2 = tmp_path / md.name, tmp_path / html.name
    code, out, err = cli("report", js, "--md", md2, "--html", html2)
    assert code == 0, err
    assert md2.read_text() == md.read_text()
    assert _html_sans_plots(html2.read_text()) == _html_sans_plots(html.read_text())
    assert html.read_text().count("data:image/png;base64,") >= (
        0 if kind in ("calibrate", "shift") else 1)
    if kind == "draft":  # the Markdown's plot is written next to it
        assert (tmp_path / md.with_suffix(".png").name).stat().st_size > 1000
    # the terminal view of the saved file
    code, out, err = cli("report", js)
    assert code == 0 and out.strip(), err


def test_draft_report_carries_vllm_counters(written):
    js, md, html = written["draft"]
    saved = json.loads(js.read_text())
    mtp = [p for p in saved["policies"] if p["policy"] == "mtp"][0]["vllm_counters"]
    assert mtp["convention"] == "vllm" and len(mtp["acceptance_rate_per_position"]) <= 7
    assert "vLLM spec-decode counters" in md.read_text()
    assert "| hf-pld(max_n=2,depth=10) | vllm |" in md.read_text()


def test_report_refuses_bad_files_and_its_input(tmp_path, cli, written):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = cli("report", bad, "--md", tmp_path / "x.md")
    assert code == 2 and err.count("\n") == 1 and "bad.json" in err
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "something/else/1"}))
    code, _, err = cli("report", other)
    assert code == 2 and "not a spec-planner result" in err
    js = written["verdict"][0]
    before = js.read_text()
    code, _, err = cli("report", js, "--html", js)
    assert code == 2 and "over an input" in err and js.read_text() == before


@pytest.mark.slow
def test_verdict_idata_opens_in_arviz(tmp_path, cli):
    """--idata writes the verdict's MCMC fit as NetCDF InferenceData: the posterior gives the
    verdict's own Δ (same draws), observed data are the runs."""
    import arviz as az
    import numpy as np

    nc = tmp_path / "fit.nc"
    code, out, err = cli("verdict", "--a-runs", "308.1,307.9,308.4", "--b-runs",
                         "309.0,309.4,309.1", "--platform", "hf-a10g-small", "--engine", "mcmc",
                         "--seed", "3", "--json", "--idata", nc)
    assert code == 0, err
    v = json.loads(out)
    idata = az.from_netcdf(nc)
    assert {"posterior", "sample_stats", "observed_data", "constant_data"} <= set(idata.groups())
    assert {"mu", "tau", "sigma"} <= set(idata.posterior.data_vars)
    assert idata.observed_data["y"].size == 6
    mu = idata.posterior["mu"].values.reshape(-1, 2)
    assert np.mean(mu[:, 1] - mu[:, 0]) == pytest.approx(v["delta_log"]["mean"], rel=1e-9)
    y = idata.observed_data["y"].values + idata.observed_data.attrs["centre"]
    assert np.exp(y[idata.constant_data["config"].values == 0]).mean() == pytest.approx(
        v["mean_tps_a"])
    code, _, err = cli("verdict", "--a-runs", "308,309", "--b-runs", "309,310", "--idata", nc)
    assert code == 2 and "--engine mcmc" in err


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_every_report_records_its_inputs(kind, written):
    """JSON, Markdown and HTML of every command record its files (with the content's
    SHA-256), its options (filters, prior, seed) and the version; no machine path."""
    import hashlib

    from planner import __version__

    js, md, html = written[kind]
    saved = json.loads(js.read_text())
    inp = saved["inputs"]
    assert inp["version"] == __version__
    argv = COMMANDS[kind]
    for f in inp["files"]:
        assert f["name"] in argv  # the path as given
        assert f["sha256"] == hashlib.sha256(Path(f["name"]).read_bytes()).hexdigest()
    if kind in ("verdict", "calibrate", "draft", "budget", "draft-sweep"):
        assert len(inp["files"]) == 1
    if kind == "calibrate":
        assert {k: inp["options"][k] for k in ("platform", "metric", "workload")} == {
            "platform": "local-a10g", "metric": "decode_wall", "workload": "128x512"}
    if kind == "shift":
        assert inp["options"]["seed"] == 2 and inp["public_tps"] == 300
    for text in (md.read_text(), html.read_text()):
        assert "Inputs" in text and f"spec-planner {__version__}" in text
        assert "as_json" not in text and "sha256 " in text if inp["files"] else True
    assert "## Inputs" in md.read_text() and "<h2>Inputs</h2>" in html.read_text()


def test_draft_views_show_the_prediction_interval_and_unlabelled_rows(written):
    """The MTP row (numbers from the acceptance curve, not the capture's tokens) is marked
    and explained; pi_low/pi_high sit beside the bootstrap interval; a 6-prompt capture is
    'too little evidence' in every view."""
    from planner.report.views.draft import NOT_FROM_CAPTURE

    js, md, html = written["draft"]
    saved = json.loads(js.read_text())
    mtp = [p for p in saved["policies"] if p["policy"] == "mtp"][0]
    assert mtp["from_capture"] is False and "acceptance curve" in mtp["numbers_from"]
    pi = f"[{mtp['tokens_per_forward']['pi_low']:.3f}, {mtp['tokens_per_forward']['pi_high']:.3f}]"
    text = md.read_text()
    assert f"| mtp(k=7) {NOT_FROM_CAPTURE} |" in text and pi in text
    assert "not from this capture's own tokens" in text and "new prompt set [90 % PI]" in text
    assert "too little evidence" in text and "too little evidence" in html.read_text()
    assert saved["evidence"]["level"] == "limited"
    assert all(p["worth_a_run"]["code"] == "too_little_evidence" for p in saved["policies"]
               if p["worth_a_run"])


def test_calibrate_prints_the_written_prior_in_its_summary_terms(written):
    """The prior calibrate writes is shown as median and 95 % range in % (the terms of the
    posterior summary), and the JSON says why sigma_run's population prior is wider."""
    import numpy as np

    from models.stats.noise import ScalePrior

    js, md, html = written["calibrate"]
    r = json.loads(js.read_text())
    sig = r["prior"]["sigma"]
    q = ScalePrior("inv_chi2", sig["scale"], sig["df"]).ppf(np.array([0.025, 0.5, 0.975]))
    assert [r["prior_pct"]["sigma_pct"][k] for k in ("low", "median", "high")] == \
        pytest.approx(100 * q)
    assert r["prior_pct"]["sigma_pct"]["high"] > r["posterior"]["sigma_pct"]["high"]
    assert "not the pooled posterior" in r["sigma_note"]
    text = md.read_text()
    assert f"| prior sigma_run (written) | median {100 * q[1]:.3f}%" in text
    assert "why the prior differs" in text


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_terminal_views_end_with_the_inputs_line(kind, written, cli):
    """The terminal view of every saved result ends with one line of its recorded inputs
    (files with their SHA-256 prefix, options, version), as its Markdown and HTML do."""
    from planner import __version__

    js = written[kind][0]
    saved = json.loads(js.read_text())
    code, out, err = cli("report", js)
    assert code == 0, err
    flat = " ".join(out.split())
    tail = flat[flat.rindex("inputs: "):]
    assert tail.endswith(f"spec-planner {__version__}")
    for f in saved["inputs"]["files"]:
        assert f"{f['role']}: {f['name']} (sha256 {f['sha256'][:12]})" in tail
    if "seed" in saved["inputs"]["options"]:
        assert f"seed={saved['inputs']['options']['seed']}" in tail
    # the command itself prints the same line (not only 'planner report')
    if kind == "shift":
        code, out2, err = cli(*COMMANDS[kind])
        assert code == 0 and " ".join(out2.split()).endswith(tail), err


def _budget_variant(saved: dict) -> dict:
    """The saved small budget with its first purchase made sequential (paired, worst case
    $9.00) and its last comparison unreachable: the views only format what the JSON says."""
    import copy

    r = copy.deepcopy(saved)
    c0, cl = r["comparisons"][0], r["comparisons"][-1]
    rec = c0["recommended"]
    rec.update(design="sequential", layout="paired", label="sequential (paired)",
               runs_per_arm=7.5, worst_case_cost_usd=9.0, max_cost_usd=9.0)
    c0["status"] = "buy"
    cl["recommended"], cl["status"] = None, "unreachable"
    cl["reason"] = "no design reaches assurance 0.8 within 40 runs per arm"
    t = r["totals"]
    t.update(reachable=len(r["comparisons"]) - 1, bought=len(r["comparisons"]) - 1,
             worst_case_cost_usd=t["cost_usd"] + 9.0 - rec["cost_usd"], worst_case_runs=80,
             worst_case_exceeds_budget=False, worst_case_exceeds=[])
    return r


def test_budget_views_state_the_plans_delta_reachable_totals_and_worst_case(written):
    """Δ (plan) is the plan's own Δ in its own unit; the simulated mean sits in its own
    column; totals count the reachable comparisons; a sequential purchase's worst case is in
    the summary, not in its row."""
    from planner.report.views.budget import comparison_rows, render_markdown
    from planner.report.views.budget import render_html as render_budget

    saved = json.loads(written["budget"][0].read_text())
    by = {c["name"]: c for c in saved["comparisons"]}
    assert by["spec8"]["delta"]["given"] == -5.82 and by["sdpa"]["delta"]["given"] == 0.6
    assert saved["totals"]["reachable"] == sum(c["recommended"] is not None
                                               for c in saved["comparisons"])
    rows = {row[0]: row for row in comparison_rows(saved)}
    assert rows["spec8"][1] == "-5.82±1.64 TPS"
    assert rows["sdpa"][1] == "+0.6±0.3 %"  # as the plan says it: delta_pct = 0.6
    d = by["sdpa"]["delta"]
    assert rows["sdpa"][2] == f"{d['mean_pct']:+.2f}% ({d['mean_tps']:+.2f} TPS)"

    r = _budget_variant(saved)
    n = len(r["comparisons"])
    rows = comparison_rows(r)
    assert rows[0][3] == "sequential (paired)" and rows[0][4] == "≈7.5"
    assert not any("$9.00" in cell for row in rows for cell in row)
    md = render_markdown(r)
    assert f"Buy {n - 1} of {n - 1} reachable comparisons (1 of {n} unreachable" in md
    worst = [ln for ln in md.splitlines() if ln.startswith("**Worst case:**")]
    assert len(worst) == 1 and f"{r['comparisons'][0]['name']} $9.00" in worst[0]
    assert "within the budget" in worst[0]
    h = render_budget(r)
    assert "<b>Worst case:</b>" in h and "+0.6±0.3 %" in h and "simulated mean Δ" in h


def test_plots_tell_the_sequential_layouts_apart():
    """Each sequential layout has its own colour and legend label, dashed; the budget
    overview hatches them."""
    from planner.report.plots import (
        LAYOUT_HATCHES,
        _design_style,
        assurance_plot,
        budget_plot,
    )

    designs = [{"design": "separate"}, {"design": "paired"},
               {"design": "sequential", "layout": "separate"},
               {"design": "sequential", "layout": "paired"}]
    seen: dict = {}
    styles = [_design_style(e, seen) for e in designs]
    assert [s[0] for s in styles] == ["separate", "paired", "sequential (separate)",
                                      "sequential (paired)"]
    assert len({s[1] for s in styles}) == 4
    assert [s[2] for s in styles] == ["-", "-", "--", "--"]
    assert set(LAYOUT_HATCHES) == {"sequential (separate)", "sequential (paired)"}
    curves = [{**e, "runs_per_arm": 4, "assurance": 0.5,
               "curve": {"runs_per_arm": [2, 4], "assurance": [0.3, 0.5]}} for e in designs]
    assert assurance_plot(curves, target=0.8)[:4] == b"\x89PNG"
    comps = [{"name": f"c{i}", "status": "buy", "recommended": {**e, "cost_usd": 1.0,
                                                                 "assurance": 0.9}}
             for i, e in enumerate(designs)]
    assert budget_plot(comps, total_usd=5)[:4] == b"\x89PNG"


def test_repeats_on_owned_hardware_shows_gpu_hours_not_dollars(cli, tmp_path):
    """local-a10g costs $0/h (owned): the header says so, the $ column says 'owned', the
    GPU-hours stay, in the terminal, Markdown and HTML."""
    md, html, js = tmp_path / "r.md", tmp_path / "r.html", tmp_path / "r.json"
    argv = ["repeats", "--delta", "1", "--relative", "--sims", "200", "--design", "separate",
            "--max-runs", "4", "--platform", "local-a10g"]
    code, out, err = cli(*argv, "--json")
    assert code == 0, err
    js.write_text(out)
    r = json.loads(out)
    assert r["inputs"]["cost_model"]["price_per_hour"] == 0
    assert all(d["gpu_hours"] > 0 for d in r["designs"])
    code, out, err = cli(*argv, "--md", md, "--html", html)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "owned hardware: $0/h" in flat and "$0.00" not in flat and "$0/h at" not in flat
    first = r["designs"][0]
    assert f"{first['gpu_hours']:.2f} │ owned │" in out
    text = md.read_text()
    assert "owned hardware: $0/h" in text and "$0.00" not in text
    assert f"| {first['gpu_hours']:.2f} | owned |" in text
    h = html.read_text()
    assert "owned hardware: $0/h" in h and "$0.00" not in h
    assert "expected GPU-hours vs assurance" in h
    # a priced platform keeps its dollars
    code, out, err = cli(*argv[:-1], "hf-a10g-small")
    assert code == 0 and "owned" not in out and "$" in out


def test_two_outputs_on_one_file_are_refused(tmp_path, cli):
    """--md and --html on one file, or a Markdown report named like its own plot, would
    overwrite one report with another: refused, naming the file."""
    saved = tmp_path / "v.json"
    code, out, _ = cli("verdict", "--a", "300", "--b", "301", "--json")
    saved.write_text(out)
    code, _, err = cli("report", saved, "--md", tmp_path / "y.md", "--html", tmp_path / "y.md")
    assert code == 2 and "written twice" in err and not (tmp_path / "y.md").exists()
    code, out, _ = cli("draft", "--json", "--seed", "1")
    saved.write_text(out)
    code, _, err = cli("report", saved, "--md", tmp_path / "x.png")
    assert code == 2 and "written twice" in err and not (tmp_path / "x.png").exists()


def test_report_refuses_an_unknown_schema_version(tmp_path, cli):
    code, out, _ = cli("verdict", "--a", "300", "--b", "301", "--json")
    p = tmp_path / "v9.json"
    p.write_text(out.replace("spec-planner/verdict/1", "spec-planner/verdict/9"))
    code, _, err = cli("report", p)
    assert code == 2 and "field 'schema'" in err and "version 1" in err


def _leaves(o, path=()):
    """(path, value) of every number of a saved result (outside its inputs block)."""
    if isinstance(o, dict):
        for k, v in o.items():
            if path or k != "inputs":
                yield from _leaves(v, path + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from _leaves(v, path + (i,))
    elif isinstance(o, (int, float)) and not isinstance(o, bool):
        yield path, o


def _dotted(path) -> str:
    out = ""
    for x in path:
        out += f"[{x}]" if isinstance(x, int) else ("." if out else "") + x
    return out


@pytest.mark.parametrize("kind", ["verdict", "repeats"])
@pytest.mark.parametrize("view", ["terminal", "md", "html"])
def test_wrong_type_names_the_field(kind, view, written, tmp_path, cli):
    # new-user report: a number edited into a string printed "ValueError: Unknown format code
    # 'f'" without the field; every field whose edit stops a view is now named, with its value
    import copy

    saved = json.loads(written[kind][0].read_text())
    leaves = list(_leaves(saved))
    picks = {"verdict": [("delta_pct", "mean"), ("hdi_prob",), ("mean_tps_a",)]}.get(
        kind, [p for p, _ in leaves[:: max(1, len(leaves) // 6)]])
    failed = 0
    for path in picks:
        o = copy.deepcopy(saved)
        d = o
        for x in path[:-1]:
            d = d[x]
        d[path[-1]] = "x"
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(o))
        extra = {"terminal": [], "md": ["--md", tmp_path / "b.md"],
                 "html": ["--html", tmp_path / "b.html"]}[view]
        code, out, err = cli("report", bad, *extra)
        if code == 0:
            continue  # this view does not read the field
        failed += 1
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
        assert f"field '{_dotted(path)}'" in err and 'holds "x" (string)' in err, err
    assert failed >= (1 if kind == "verdict" else 0)


@pytest.mark.parametrize("view", ["terminal", "md", "html"])
def test_an_object_edited_into_a_string_is_named(view, written, tmp_path, cli):
    """delta_pct = "abc" (an object made a string): 'string indices must be integers'
    named no field; a string read as an object is recorded as used, and so named."""
    saved = json.loads(written["verdict"][0].read_text())
    saved["delta_pct"] = "abc"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(saved))
    extra = {"terminal": [], "md": ["--md", tmp_path / "b.md"],
             "html": ["--html", tmp_path / "b.html"]}[view]
    code, out, err = cli("report", bad, *extra)
    assert code == 2 and "field 'delta_pct'" in err and 'it holds "abc" (string)' in err


def test_inputs_block_leaves_out_unset_values_and_abbreviates_long_lists():
    """The Inputs section shows no ``None`` and not 2 x 10,000 quick-form values: a long
    list is its count, min, median, max and SHA-256; floats are rounded for reading."""
    from planner.report.render import inputs_lines, inputs_markdown

    r = {"inputs": {"files": [], "options": {"a_runs": ",".join(["308.1"] * 10000),
                                             "b_runs": [309.25] * 10000, "prior": None,
                                             "rope": 0.1000000000001},
                    "version": "0.1.0", "level": None, "delta": 0.44}}
    lines = inputs_lines(r)
    text = "\n".join(lines)
    assert "None" not in text and "level" not in text and len(text) < 400
    import hashlib

    sha = hashlib.sha256(r["inputs"]["options"]["a_runs"].encode()).hexdigest()[:12]
    assert (f"a_runs=(10,000 values: min 308.1, median 308.1, max 308.1; sha256 {sha})"
            in text)
    assert "b_runs=(10,000 values: min 309.25, median 309.25, max 309.25; sha256 " in text
    assert "rope=0.1\n" in text and "delta: 0.44" in text
    assert len(inputs_markdown(r)) < 500


def test_draft_and_sweep_plots_mark_the_baseline(written):
    """The draft page plots projected TPS per policy (baseline dotted, gain on the top
    axis) beside tokens/forward; the sweep plot marks plain decoding and its gain axis."""
    from planner.report.plots import draft_tps_plot, sweep_plot

    from planner.report.draft_plots import draft_overview_plot, sweep_overview_plot

    draft = json.loads(written["draft"][0].read_text())
    assert draft_tps_plot(draft["policies"])[:4] == b"\x89PNG"
    # one figure: projected TPS and gain (baseline dotted) beside tokens/forward (issue 21)
    assert draft_overview_plot(draft["policies"])[:4] == b"\x89PNG"
    assert written["draft"][2].read_text().count("data:image/png;base64,") == 1
    sweep = json.loads(written["draft-sweep"][0].read_text())
    assert sweep_plot(sweep["rows"])[:4] == b"\x89PNG"
    # a sweep saved before intervals and verdicts still plots (points without bars)
    assert sweep_overview_plot(sweep["rows"])[:4] == b"\x89PNG"


def test_a_sequential_repeats_plan_on_runs_re_renders(tmp_path, cli):
    """``repeats --runs`` recommending a sequential design saves its expected runs to add
    (11.1, a float): ``planner report`` once refused that unedited file as 'edited'."""
    runs = tmp_path / "q.csv"
    runs.write_text("config,tps\nA,308.1\nA,307.9\nB,309.0\nB,309.4\n")
    code, out, err = cli("repeats", "--runs", runs, "--a", "A", "--b", "B", "--sims", "200",
                         "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["recommended"]["design"] == "sequential"
    assert r["more_runs_per_arm"] == pytest.approx(r["recommended"]["runs_per_arm"])
    saved = tmp_path / "r.json"
    saved.write_text(out)
    code, text, err = cli("report", saved)
    assert code == 0, err
    assert "expected runs per arm" in text


def test_beyond_the_cap_names_the_layout_it_searched(cli):
    # the Normal search beyond the cap covers separate designs only: a paired design may
    # still reach the target with a higher --max-runs, so the line must not read as general
    code, out, err = cli("repeats", "--delta", "0.44", "--sims", "200")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("Beyond the cap"))
    assert line.startswith("Beyond the cap, separate designs only")


def test_every_marked_draft_row_is_named_in_its_footnote():
    """New-user report: suffix-first and tree carried † while the footnote named only the
    first row of their shared source (hybrid-max)."""
    from planner.report.views.draft import footnotes

    src = "the capture's tokens (lookup) and the MTP curve"
    r = {"policies": [{"label": lab, "from_capture": False, "numbers_from": src,
                       "tokens_per_forward": {}, "projected_tps": {}}
                      for lab in ("hybrid-max", "suffix-first", "tree")]
         + [{"label": "pld", "from_capture": True, "tokens_per_forward": {},
             "projected_tps": {}}]}
    notes = footnotes(r)
    assert notes[0] == f"† hybrid-max, suffix-first, tree: not from this capture's own tokens; numbers from {src}."
    assert not any("pld" in n for n in notes)


def test_saved_results_that_contradict_themselves_are_refused(tmp_path, cli):
    """New-user report: a budget with -5 runs or no comparisons, a draft without policies and
    a prior with df -1 re-rendered as if real."""
    import json as _json

    from planner.decide.budget import plan_budget
    from planner.io.plan_file import read_plan

    root = Path(__file__).resolve().parents[3]
    b = plan_budget(read_plan(root / "examples" / "plan.toml"), sims=100, seed=0).to_dict()
    for edit, field in ((lambda d: d["totals"].__setitem__("runs", -5), "totals.runs"),
                        (lambda d: d.__setitem__("comparisons", []), "comparisons")):
        d = _json.loads(_json.dumps(b))
        edit(d)
        p = tmp_path / f"{field}.json"
        p.write_text(_json.dumps(d))
        code, _, err = cli("report", p)
        assert code == 2 and f"field '{field}'" in err, err
