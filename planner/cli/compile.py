"""``planner compile``: compile every numba kernel into numba's cache now, in the foreground.

Optional: without it the first command that needs a kernel compiles it (10-20 s once per
user and kernel version, one line on a terminal's stderr says so). This command runs in
this process and starts none."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Register ``compile`` on the planner app."""

    @app.command("compile")
    def compile_() -> None:
        """Compile the numba kernels into the cache now (the first run would otherwise).

        Kernels are compiled by numba's JIT and cached in the user's cache folder
        (~/.cache/spec-planner/numba, or NUMBA_CACHE_DIR), once per user, kernel source
        and numba version; later commands load them from there."""
        from models.kernels._jit import compile_all

        res = compile_all()
        where = (f"into {res['cache']}" if res["cache"] else
                 "in memory only (no writable cache folder: each run compiles again)")
        print(f"compiled {res['kernels']} kernels in {res['seconds']:.1f} s {where}")
