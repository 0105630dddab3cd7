"""``planner compile``: build the ahead-of-time compiled kernels now, in the foreground.

Without it, the first run that needs a kernel starts the same build in the background and
uses numba's JIT until it is done (see :mod:`models._aot`). ``SPEC_PLANNER_AOT=0`` turns
ahead-of-time kernels off (nothing is built)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Register ``compile`` on the planner app."""

    @app.command("compile")
    def compile_(
        force: bool = typer.Option(False, "--force", help="Compile again even when the "
                                   "module for these sources exists."),
    ) -> None:
        """Compile the numba kernels ahead of time (once per user, kernel source and numba
        version): later commands load them without importing numba."""
        from models import _aot

        if not _aot.enabled():
            print(f"{_aot.ENV}=0: ahead-of-time kernels are off; nothing built")
            return
        res = _aot.build(force=force, retry_failed=True)
        if res["error"]:
            first = res["error"].strip().splitlines()[0] if res["error"].strip() else "?"
            print(f"planner: error: AOT build failed: {first} (the kernels keep using "
                  f"numba's JIT; details in {res['path'].rsplit('.', 2)[0]}.failed)")
            raise typer.Exit(1)
        if res["built"]:
            print(f"compiled {len(_aot.KERNELS)} kernels in {res['seconds']:.1f} s: "
                  f"{res['path']}")
        else:
            print(f"up to date: {res['path']}")
