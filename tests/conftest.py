import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
RUNS_CSV = EXAMPLES / "runs" / "tps_runs.csv"

os.environ.setdefault("MPLBACKEND", "Agg")


def _one_blas_thread() -> None:
    """Each pytest process (an xdist worker: one per core) with one BLAS thread, as the
    ``planner`` command runs (:func:`planner.__main__.one_blas_thread`; before NumPy loads,
    which pytest and its plugins have not imported yet). Two workers each waking and
    spinning two OpenBLAS threads on two cores took 127 s where one thread each took 96 s
    (the calibration tests). The subprocesses the tests start inherit it. Should a plugin
    have loaded NumPy already, threadpoolctl (a dependency of PyMC) sets the count instead."""
    import sys

    from planner.__main__ import one_blas_thread

    if one_blas_thread() and "numpy" in sys.modules:
        from threadpoolctl import threadpool_limits

        globals()["_BLAS_LIMIT"] = threadpool_limits(1, user_api="blas")


_one_blas_thread()


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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The slow checks first, shared between the xdist workers; the quick tests after them.

    pytest-xdist's ``worksteal`` hands each worker a contiguous share of the collection and
    an idle worker later steals the end of a busy one's queue. With the slow checks where
    collection put them, a minute-long test could start last on one worker while the other
    sat idle. Here each worker's share opens with its slow checks (whole modules kept
    together, so a module-scoped fixture is built on one worker only, dealt out largest
    module first to the share with the least so far) and ends with quick tests, which are
    what gets stolen. Without xdist only the order changes: slow checks first."""
    n_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    slow_mods: dict[str, list] = {}
    quick = []
    for it in items:
        if it.get_closest_marker("slow") is not None:
            slow_mods.setdefault(it.nodeid.split("::")[0], []).append(it)
        else:
            quick.append(it)
    if not slow_mods:
        return
    shares = [[] for _ in range(max(n_workers, 1))]
    for mod in sorted(slow_mods, key=lambda m: -len(slow_mods[m])):
        min(shares, key=len).extend(slow_mods[mod])
    # xdist's first split: worker i gets len(remaining) // (workers left) items in order
    out, q, left = [], 0, len(items)
    for i, share in enumerate(shares):
        size = left // (len(shares) - i)
        take = max(size - len(share), 0)
        out += share + quick[q:q + take]
        q += take
        left -= len(share) + take
    out += quick[q:]
    items[:] = out
