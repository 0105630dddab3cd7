"""``planner compile``: build the ahead-of-time compiled kernels now, in the foreground.

Without it, the first run that needs a kernel starts the same build in the background and
uses numba's JIT until it is done (see :mod:`models.kernels._aot`). ``SPEC_PLANNER_AOT=0`` turns
ahead-of-time kernels off (nothing is built)."""

from __future__ import annotations

import sys

import typer


def register(app: typer.Typer) -> None:
    """Register ``compile`` on the planner app."""

    @app.command("compile")
    def compile_(
        force: bool = typer.Option(False, "--force", help="Compile again even when the "
                                   "module for these sources exists."),
    ) -> None:
        """Compile the numba kernels ahead of time: later commands skip numba's import.

        Once per user, kernel source and numba version: later commands load the module
        without importing numba.

        Without this command the first run that needs a kernel starts the same build in the
        background (10-30 s, a C compiler needed) and uses numba's JIT meanwhile; the
        module goes to the user's cache folder (~/.cache/spec-planner/aot, or
        SPEC_PLANNER_AOT_DIR). SPEC_PLANNER_AOT=0 turns it off."""
        from models.kernels import _aot

        if not _aot.enabled():
            print(f"{_aot.ENV}=0: ahead-of-time kernels are off; nothing built")
            return
        try:
            res = _aot.build(force=force, retry_failed=True)
        except OSError as exc:  # the cache folder cannot be made or written
            from planner.errors import InputError

            raise InputError(f"cannot write the kernel cache ({exc.strerror}); set "
                             f"{_aot.ENV_DIR} to a writable folder, or {_aot.ENV}=0",
                             file=exc.filename) from None
        if res["error"]:
            # the recorded error's first line ("RuntimeError: ..."), without a trailing
            # sentence that leads into lines not shown ("If using conda try:")
            first = (res["error"].strip().splitlines() or ["?"])[0].strip()
            head, sep, tail = first.rpartition(". ")
            last = head + "." if sep and tail.endswith(":") else first
            print(f"planner: error: AOT build failed: {last} (the kernels keep using "
                  f"numba's JIT; details in {res['path'].rsplit('.', 2)[0]}.failed)",
                  file=sys.stderr)
            raise typer.Exit(1)
        if res["built"]:
            print(f"compiled {len(_aot.KERNELS)} kernels in {res['seconds']:.1f} s: "
                  f"{res['path']}")
        else:
            print(f"up to date: {res['path']}")
