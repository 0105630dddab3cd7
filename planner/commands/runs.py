"""``planner ingest`` and ``planner calibrate``: build and learn from runs tables."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def version() -> None:
        """Print the spec-planner version."""
        from planner import __version__

        print(__version__)
