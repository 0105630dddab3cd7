"""``planner report RESULT.json``: re-render any saved result (``--json`` output of verdict,
repeats, budget, draft, draft sweep, calibrate or shift) for the terminal, as Markdown or as
HTML. The saved ``inputs`` block is kept as it is (nothing of this command is recorded)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    """Register ``report`` on the planner app."""

    @app.command("report")
    def report(
        result: Path = typer.Argument(..., metavar="RESULT", help="A saved result: the --json "
                                      "output of verdict, repeats, budget, draft, draft sweep, "
                                      "calibrate or shift."),
        md: Optional[Path] = typer.Option(None, "--md", help="Write a Markdown report (a draft "
                                          "result also writes the PNG next to it)."),
        html: Optional[Path] = typer.Option(None, "--html", help="Write a self-contained HTML "
                                            "report (plots inline)."),
    ) -> None:
        """Re-render a saved result; the terminal view when no file option is given."""
        from planner.report import render
        from planner.report.output import emit

        obj = render.read_result(result)
        if md is None and html is None:
            render.guarded(result, render.render_terminal, obj)
            return
        render.guarded(result, emit, obj, as_json=False, terminal=False, md=md, html=html,
                       inputs=[result], record=False)
