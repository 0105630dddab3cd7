"""Fixtures of the report tests: the golden saved results.

``fixtures/golden/*.json.gz`` are the seeded ``--json`` outputs of the 13 commands of
/work/wt/golden.sh (verdict x4, repeats x2, budget, draft x3, draft sweep, shift,
calibrate), gzipped: saved results as users keep them, rendered by ``planner report``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "golden"
GOLDEN_NAMES = sorted(p.name[:-len(".json.gz")] for p in GOLDEN.glob("*.json.gz"))


@pytest.fixture
def golden():
    """``golden(name)``: a fresh copy of the golden saved result ``name``."""
    def load(name: str) -> dict:
        return json.loads(gzip.decompress((GOLDEN / f"{name}.json.gz").read_bytes()))
    return load
