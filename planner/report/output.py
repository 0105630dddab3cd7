"""Emit a command's JSON result: to stdout as JSON, or rendered for the terminal / files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable


def _clean(obj: Any) -> Any:
    """Make a result JSON-safe: numpy scalars to Python, NaN/inf to None."""
    import numpy as np

    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_clean(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def to_json(result: dict) -> str:
    """Serialise a result dict to stable, indented JSON text."""
    return json.dumps(_clean(result), indent=2, sort_keys=False)


def emit(result: dict, *, as_json: bool, terminal: Callable[[dict], None],
         md: Path | None = None, html: Path | None = None,
         md_renderer: Callable[[dict], str] | None = None,
         html_renderer: Callable[[dict], str] | None = None) -> None:
    """Write ``result`` to stdout (JSON or terminal view) and optional Markdown / HTML files."""
    if md is not None and md_renderer is not None:
        Path(md).write_text(md_renderer(result), encoding="utf-8")
    if html is not None and html_renderer is not None:
        Path(html).write_text(html_renderer(result), encoding="utf-8")
    if as_json:
        print(to_json(result))
    else:
        terminal(result)
