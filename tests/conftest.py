import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
RUNS_CSV = EXAMPLES / "runs" / "tps_runs.csv"

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture
def runs_csv():
    return RUNS_CSV


@pytest.fixture
def cli(capsys):
    """Run the planner CLI in-process; returns (exit code, stdout, stderr)."""
    from planner.cli import main

    def run(*args):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def cli_output(monkeypatch):
    """``planner.cli.main(args)``'s stdout, run in-process from the repository root."""
    import contextlib
    import io

    from planner.cli import main

    def run(args) -> str:
        monkeypatch.chdir(ROOT)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(list(args))
        return out.getvalue()

    return run


#: Fixtures that start a real browser session (tests/planner/report/test_html_browser.py).
BROWSER_FIXTURES = ("driver",)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """A browser session that cannot start is a skip with its reason, never an error.

    The browser tests skip unless chromium, chromedriver and selenium are all found; a
    machine can still have them in a state where no session starts (a chromedriver of
    another major version than chromium, a snap shim without its snap, selenium's driver
    manager offline). Each test using the session then errored (12 errors); now each is
    skipped, saying why."""
    try:
        return (yield)
    except Exception as exc:  # noqa: BLE001 - only for the browser fixtures, re-raised else
        if fixturedef.argname not in BROWSER_FIXTURES:
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        reason = (f"browser tests need a chromium and a chromedriver that start a session "
                  f"(apt-get install -y chromium chromium-driver, same major version); "
                  f"it failed: {type(exc).__name__}: {first}")
        try:
            pytest.skip(reason)
        except pytest.skip.Exception as skip:
            cached = getattr(fixturedef, "cached_result", None)
            if isinstance(cached, tuple) and len(cached) == 3 and cached[2] is not None:
                # the module-scoped session is set up once: the tests after the first
                # re-raise what is cached, so cache the skip, not the error
                fixturedef.cached_result = (None, cached[1], (skip, skip.__traceback__))
            raise
