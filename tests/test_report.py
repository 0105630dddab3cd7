"""One report layer: every command writes --json, --md and --html, and ``planner report``
re-renders the saved JSON into the same Markdown and HTML (plots and the generation stamp
aside); bad saved files exit 2 with one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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
    assert html.read_text().count("data:image/png;base64,") >= (0 if kind == "calibrate" else 1)
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
