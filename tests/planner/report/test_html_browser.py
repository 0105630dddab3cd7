"""HTML reports in a real headless browser (Debian ``chromium`` + ``chromedriver``, driven by
selenium): every kind's page loads with no console error, every plot image present and
decoded (naturalWidth > 0), no external request; a hostile saved result runs no script; a
``chromium --screenshot`` of the budget report is not blank.

Skipped (with the reason) unless chromium, chromedriver and the Python package selenium
are all present: ``apt-get install -y chromium chromium-driver`` and ``pip install
selenium``. Four tests, one browser session.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None)
_MISSING = [what for what, ok in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER),
                                  ("selenium", importlib.util.find_spec("selenium")))
            if not ok]

pytestmark = pytest.mark.skipif(
    bool(_MISSING), reason=f"browser tests need chromium, chromedriver and selenium; missing: "
                           f"{', '.join(_MISSING)} (apt-get install -y chromium "
                           "chromium-driver; pip install selenium)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]

#: Golden saved result -> plot images its page holds.
PAGES = {"budget": 1 + 3 * 10, "verdict_readme": 1, "verdict_quick": 1, "repeats_delta": 2,
         "repeats_runs": 2, "draft_mtp": 1, "draft_sweep": 1, "calibrate": 0, "shift": 0,
         "shift_capture": 1}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """HTML of every kind rendered from the golden saved results, and of a verdict with its
    runs."""
    import gzip

    from planner.report.render import render_html

    d = tmp_path_factory.mktemp("pages")
    out = {}
    for name in PAGES:
        r = json.loads(gzip.decompress((HERE / "fixtures" / "golden" /
                                        f"{name}.json.gz").read_bytes()))
        out[name] = d / f"{name}.html"
        out[name].write_text(render_html(r), encoding="utf-8")
    r = json.loads((HERE / "fixtures" / "verdict_with_runs.json").read_text())
    out["verdict_with_runs"] = d / "verdict_with_runs.html"
    out["verdict_with_runs"].write_text(render_html(r), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

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


#: URLs a page may load: its own file, inline images, and the browser's own pages (Chromium
#: loads its new-tab page's scripts when the first window opens).
_LOCAL = ("file:", "data:", "chrome:", "chrome-untrusted:", "chrome-search:", "about:",
          "devtools:")


def _check(imgs, console, urls, n_images):
    assert console == [], console
    assert len(imgs) == n_images
    for im in imgs:
        assert im["src"].startswith("data:image/png;base64,"), im
        assert im["complete"] and im["w"] > 0 and im["h"] > 0, im
    external = [u for u in urls if not u.startswith(_LOCAL)]
    assert external == [], external


def test_every_kind_of_report_in_browser(driver, pages):
    for name, path in pages.items():
        imgs, console, urls = _open(driver, path)
        _check(imgs, console, urls, PAGES.get(name, 2))
        assert driver.execute_script("return document.querySelectorAll('table').length") >= 1
        lead = driver.execute_script("var p = document.querySelector('p.lead');"
                                     "return p ? p.innerText : null")
        assert lead and len(lead) > 20, name
    assert "Which comparisons to buy" in _title(driver, pages["budget"])


def _title(driver, path: Path) -> str:
    driver.get(path.as_uri())
    return driver.title


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


def test_a_hostile_saved_result_runs_no_script(driver, tmp_path, golden):
    """Names, notes and printed settings edited into script tags and event handlers (a
    verdict's runs too: their config, instance and session names): the page sets no global,
    opens no alert, logs no error, and shows the text."""
    from selenium.common.exceptions import NoAlertPresentException
    from test_escaping import HOSTILE, poison

    from planner.report.render import render_html

    runs = json.loads((HERE / "fixtures" / "verdict_with_runs.json").read_text())
    for name in ("verdict_readme", "budget", "draft_sweep", "repeats_runs",
                 "verdict_with_runs"):
        page = tmp_path / f"{name}.html"
        saved = runs if name == "verdict_with_runs" else golden(name)
        page.write_text(render_html(poison(saved, name)), encoding="utf-8")
        imgs, console, urls = _open(driver, page)
        assert console == [] and [u for u in urls if not u.startswith(_LOCAL)] == []
        assert driver.execute_script("return typeof window.pwned") == "undefined"
        with pytest.raises(NoAlertPresentException):
            driver.switch_to.alert.text  # noqa: B018 - raises when no alert is open
        text = driver.execute_script("return document.body.innerText")
        assert HOSTILE[0] in text, name
        assert driver.execute_script("return document.scripts.length") == 0


def test_screenshot_not_blank(pages, tmp_path):
    shot = tmp_path / "budget.png"
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
           f"--screenshot={shot}", "--window-size=1280,1800", "--hide-scrollbars",
           pages["budget"].as_uri()]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    from PIL import Image

    im = Image.open(shot).convert("L")
    assert im.size == (1280, 1800)
    lo, hi = im.getextrema()
    assert hi - lo > 100  # text and plots, not a blank page
