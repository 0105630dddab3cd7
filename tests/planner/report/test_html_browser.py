"""HTML reports in a real headless browser (Debian ``chromium`` + ``chromedriver``, driven by
selenium): no console errors, every plot image present and decoded (naturalWidth > 0), no
external requests; and a ``chromium --screenshot`` of the budget report is not blank.

Skipped only when chromium is not installed. CI needs ``apt-get install -y chromium
chromium-driver`` and ``pip install selenium``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "plan.toml"

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium "
                             "chromium-driver)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Budget and verdict HTML reports written by the CLI."""
    from planner.cli import main

    d = tmp_path_factory.mktemp("reports")
    out = {"budget": d / "budget.html", "verdict": d / "verdict.html",
           "verdict_curve": d / "verdict_curve.html"}
    for argv in (["budget", str(EXAMPLE), "--sims", "400", "--json", "--html",
                  str(out["budget"])],
                 ["verdict", str(ROOT / "examples/runs/tps_runs.csv"), "--a",
                  "fa2sw_precache_agentI+CENTROID_TOP_K=64,FUSED_SPARSE_ARGMAX_BLOCK=64,"
                  "SPECULATIVE_CONFIG=K=7/mtp", "--b",
                  "fa2sw_precache_agentI+CENTROID_TOP_K=128,FUSED_SPARSE_ARGMAX_BLOCK=64,"
                  "SPECULATIVE_CONFIG=K=7/mtp", "--json", "--html", str(out["verdict"])]):
        try:
            main(argv)
        except SystemExit as exc:
            assert not exc.code, argv
    # a verdict result carrying the lead's delta_curve field
    import numpy as np

    from planner.report.render import render_html

    xs = np.linspace(-1.5, 0.2, 200)
    res = {"schema": "spec-planner/verdict/1", "command": "verdict", "a": "A", "b": "B",
           "n_a": 3, "n_b": 3, "mean_tps_a": 308.0, "mean_tps_b": 305.0, "label": "A better",
           "p_b_gt_a": 0.0, "p_equivalent": 0.0, "p_b_gt_a_beyond_rope": 0.0,
           "p_a_gt_b_beyond_rope": 1.0,
           "delta_pct": {"mean": -0.8, "hdi_low": -1.2, "hdi_high": -0.4},
           "delta_tps": {"mean": -2.5, "hdi_low": -3.7, "hdi_high": -1.2},
           "delta_log": {"mean": -0.008, "sd": 0.002, "hdi_low": -0.012, "hdi_high": -0.004},
           "delta_curve": {"delta_pct": xs.tolist(),
                           "density": np.exp(-0.5 * ((xs + 0.8) / 0.2) ** 2).tolist()},
           "hdi_prob": 0.95, "rope": {"value": 0.1, "unit": "%", "pct": 0.1, "tps": 0.31},
           "sigma_instance": {"pct": {"median": 0.5, "hdi_low": 0.2, "hdi_high": 1.0},
                              "tps": {"median": 1.5}},
           "sigma_run": {"pct": {"median": 0.1, "hdi_low": 0.05, "hdi_high": 0.2},
                         "tps": {"median": 0.3}},
           "engine": "exact", "likelihood": "normal", "prior": {"label": "test"},
           "diagnostics": {"engine": "exact", "grid_points": 100, "grid_edge_mass": 0.0},
           "classical": {"z_test": {"z": -3.0, "p": 0.003, "significant": True},
                         "welch": {"t": None, "df": None, "p": None, "significant": None,
                                   "note": "n/a"}},
           "notes": []}
    out["verdict_curve"].write_text(render_html(res), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("chromium is installed but the Python package 'selenium' is not "
                    "(pip install selenium)")
    if CHROMEDRIVER is None:
        pytest.fail("chromium is installed but chromedriver is not (apt-get install -y "
                    "chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chrome-profile')}",
                      "--window-size=1280,1600"]:
        opts.add_argument(f)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    drv = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    drv.set_page_load_timeout(60)
    yield drv
    drv.quit()


_IMAGES_JS = """
return Array.from(document.images).map(function (im) {
  return {src: im.src.slice(0, 30), complete: im.complete, w: im.naturalWidth,
          h: im.naturalHeight, alt: im.alt};
});
"""


def _open(driver, path: Path) -> tuple[list[dict], list[dict], list[str]]:
    driver.get_log("browser")  # drain
    driver.get_log("performance")
    driver.get(path.as_uri())
    imgs = driver.execute_script(_IMAGES_JS)
    console = [e for e in driver.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
    urls = []
    for e in driver.get_log("performance"):
        msg = json.loads(e["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return imgs, console, urls


def _check(imgs, console, urls, n_images):
    assert console == [], console
    assert len(imgs) == n_images
    for im in imgs:
        assert im["src"].startswith("data:image/png;base64,"), im
        assert im["complete"] and im["w"] > 0 and im["h"] > 0, im
    external = [u for u in urls if not u.startswith(("file:", "data:"))]
    assert external == [], external


def test_budget_report_in_browser(driver, reports):
    imgs, console, urls = _open(driver, reports["budget"])
    _check(imgs, console, urls, 1 + 3 * 10)
    assert "Which comparisons to buy" in driver.title
    rows = driver.execute_script("return document.querySelectorAll('table')[0]"
                                 ".querySelectorAll('tbody tr').length")
    assert rows == 10


@pytest.mark.parametrize("which", ["verdict", "verdict_curve"])
def test_verdict_report_in_browser(driver, reports, which):
    imgs, console, urls = _open(driver, reports[which])
    _check(imgs, console, urls, 1)
    assert imgs[0]["w"] >= 400


def test_broken_page_is_detected(driver, tmp_path):
    """The checks above can fail: a corrupt inline PNG has naturalWidth 0 and a console error
    is captured."""
    p = tmp_path / "broken.html"
    p.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>x</title></head>'
                 '<body><img src="data:image/png;base64,iVBORw0KGgoAAAAN">'
                 '<script>console.error("boom")</script></body></html>')
    imgs, console, _ = _open(driver, p)
    assert imgs[0]["w"] == 0
    assert any("boom" in e.get("message", "") for e in console)


def test_screenshot_not_blank(reports, tmp_path):
    shot = tmp_path / "budget.png"
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
           f"--screenshot={shot}", "--window-size=1280,1800", "--hide-scrollbars",
           reports["budget"].as_uri()]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    from PIL import Image

    im = Image.open(shot).convert("L")
    assert im.size == (1280, 1800)
    lo, hi = im.getextrema()
    assert hi - lo > 100  # text and plots, not a blank page


@pytest.fixture(scope="module")
def more_reports(tmp_path_factory):
    """The HTML of repeats, draft, draft sweep and calibrate, written by each command and
    re-rendered from its saved JSON by ``planner report``."""
    import contextlib
    import io

    from planner.cli import main

    small = ROOT / "tests" / "fixtures" / "draft_small_capture.jsonl.gz"
    runs = ROOT / "examples" / "runs" / "tps_runs.csv"
    cmds = {"repeats": ["repeats", "--delta", "1", "--relative", "--sims", "200"],
            "draft": ["draft", str(small), "-p", "pld", "-p", "hf-pld", "-p", "mtp",
                      "--bootstrap", "100", "--mc-reps", "5"],
            "draft_sweep": ["draft", "sweep", str(small), "--n-values", "2", "--d-values",
                            "8", "--k-values", "2", "--mc-reps", "5"],
            "calibrate": ["calibrate", str(runs), "--platform", "local-a10g", "--metric",
                          "decode_wall", "--workload", "128x512"]}
    d = tmp_path_factory.mktemp("more")
    out = {}
    for name, argv in cmds.items():
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                main(argv + ["--json", "--html", str(d / f"{name}.html")])
            except SystemExit as exc:
                assert not exc.code, argv
        js = d / f"{name}.json"
        js.write_text(buf.getvalue(), encoding="utf-8")
        try:
            main(["report", str(js), "--html", str(d / f"{name}_report.html")])
        except SystemExit as exc:
            assert not exc.code, name
        out[name] = d / f"{name}.html"
        out[name + "_report"] = d / f"{name}_report.html"
    return out


@pytest.mark.parametrize("which,n_images", [
    ("repeats", 2), ("repeats_report", 2), ("draft", 1), ("draft_report", 1),
    ("draft_sweep", 1), ("draft_sweep_report", 1), ("calibrate", 0), ("calibrate_report", 0)])
def test_every_command_report_in_browser(driver, more_reports, which, n_images):
    imgs, console, urls = _open(driver, more_reports[which])
    _check(imgs, console, urls, n_images)
    assert driver.execute_script("return document.querySelectorAll('table').length") >= 1
