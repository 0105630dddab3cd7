"""The browser tests skip cleanly (with the reason) on a machine whose chromium and
chromedriver cannot start a session (here: stand-ins that fail at once), never error."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("driver", [True, False])
def test_browser_tests_skip_when_no_session_starts(tmp_path, driver):
    pytest.importorskip("selenium")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    names = ["chromium"] + (["chromedriver"] if driver else [])
    for name in names:  # present on PATH, but cannot start a browser
        p = bin_ / name
        p.write_text("#!/bin/sh\necho 'cannot start' >&2\nexit 1\n")
        p.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_}{os.pathsep}{os.environ.get('PATH', '')}",
               SE_OFFLINE="true")  # selenium's driver manager: never download one
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p",
                          "no:cacheprovider", "-rs", "-k", "not screenshot",
                          "tests/planner/report/test_html_browser.py"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    tail = out.stdout[-3000:]
    assert out.returncode == 0, tail + out.stderr[-2000:]
    summary = tail.strip().splitlines()[-1]
    assert not re.search(r"\d+ (error|failed)", summary), tail
    assert re.search(r"\d+ skipped", summary) and "chromedriver" in tail, tail
