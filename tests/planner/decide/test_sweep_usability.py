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
