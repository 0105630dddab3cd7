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
