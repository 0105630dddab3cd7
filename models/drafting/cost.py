"""Per-forward (per verify step) cost model and the TPS identity.

``step_ms(M, d, sync) = (verify_ms(M) + drafter_per_token_ms * d + host_ms)
                        * (sync_factor if sync else 1) + (sync_add_ms if sync else 0)``

``verify_ms(M) = verify_base_ms * (1 + sum_{b <= M} staircase_rel[b]) + verify_per_row_ms * (M - 1)``

* M = verify rows (K+1 for a K-token chain; K+1+D for a tree with a D-token lookup branch).
* d = draft tokens produced by the GPU drafter (MTP passes) in the step; a host-side
  lookup drafter costs ~0 GPU time (a host-side lookup, measured negligible on the A10G
  stack) but forces synchronous scheduling.
* ``sync``: the step needs the sampled ids on the host (n-gram / suffix / any hybrid that
  consults a host lookup), losing the async overlap.

``TPS = 1000 * tokens_per_forward / step_ms * harness_efficiency``.

Calibrated profiles (``models/data/forward_cost.json``; the ``sources`` field of each
profile records the measurement behind every constant; single A10G, single stream, greedy):

``F`` (frontier stack F, default)
    verify 6.252 ms at M=1, +0.038 ms per row (6.519 ms measured at M=8), drafter 0.206 ms
    per draft token (1.445 ms for 7 MTP passes), host 0.05 ms (0.047 ms measured),
    staircase at M=17/33/49 (+6.75 %, +18.9 %, +24.7 % of the M=1 step, context 256),
    synchronous factor 1.20 (serialized vs pipelined steps measured 1.15-1.26x), harness
    efficiency 455.3 / 480 = 0.9485 (measured steady TPS / TPS predicted from 3.847
    tokens/forward and 8.011 ms). step(7) = 6.518 + 1.442 + 0.05 = 8.01 ms (measured cycle
    8.011 ms).
``bf16head`` (full-bf16-head int4 QAT body)
    verify 11.56 ms at M=1, +0.0127 ms per row up to M=16 (context 256), same staircase.

:class:`ForwardCostModel` prices a forward in milliseconds, not in money.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import numpy as np

from models.errors import ModelInputError

__all__ = ["ForwardCostModel", "load_cost_model", "PROFILES"]

PROFILES = ("F", "bf16head")

#: :meth:`ForwardCostModel.step_ms` uses a look-up table from this many steps on ...
_TABLE_MIN = 4096
#: ... while the (M, draft tokens) grid has at most this many cells.
_TABLE_MAX = 1 << 16


@dataclass
class ForwardCostModel:
    """Step-time model (ms) for one target verify step plus drafting.

    Attributes
    ----------
    verify_base_ms : float
        Verify forward at M=1 (ms).
    verify_per_row_ms : float
        Extra ms per additional verified row (linear part).
    drafter_per_token_ms : float
        GPU drafter cost per draft token (ms).
    host_ms : float
        Host overhead not hidden, per step (ms).
    staircase_rel : dict[int, float]
        Tile-boundary jumps: at ``M >= b`` add ``rel * verify_base_ms`` (cumulative).
    sync_factor : float
        Multiplier of the whole step time (verify + drafter + host) when synchronous
        scheduling is needed (a host-side lookup in the loop); >= 1, since a synchronous
        step is never faster than the asynchronous one (1 = a sync costs nothing).
    sync_add_ms : float
        Additive ms per synchronous step (alternative to the factor; default 0).
    harness_efficiency : float
        Measured TPS / (tokens_per_forward / step) ratio (official-harness-like loss).
    """

    verify_base_ms: float = 6.252
    verify_per_row_ms: float = 0.038
    drafter_per_token_ms: float = 0.206
    host_ms: float = 0.05
    staircase_rel: dict = field(default_factory=lambda: {17: 0.0675, 33: 0.1886, 49: 0.2474})
    sync_factor: float = 1.20
    sync_add_ms: float = 0.0
    harness_efficiency: float = 0.9485
    name: str = "F"
    sources: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        st = self.staircase_rel
        if not isinstance(st, dict):
            raise ModelInputError(f"staircase_rel must be an object {{rows: relative step}}, "
                                  f"got {st!r}", field="staircase_rel")
        for k, v in st.items():
            if isinstance(k, bool) or not str(k).isdigit():
                raise ModelInputError(f"staircase_rel key must be a whole number of rows, got "
                                      f"{k!r}", field="staircase_rel")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) \
                    or v < 0:
                raise ModelInputError(f"staircase_rel step must be a number >= 0, got {v!r}",
                                      field=f"staircase_rel.{k}")
        self.staircase_rel = {int(k): float(v) for k, v in st.items()}
        for f in ("verify_base_ms", "harness_efficiency", "sync_factor"):
            v = getattr(self, f)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and np.isfinite(v)
                                           and v > 0):
                raise ModelInputError(f"cost parameter must be a positive number, got {v!r}",
                                      field=f)
        if self.sync_factor < 1:
            raise ModelInputError(f"sync_factor must be >= 1 (a synchronous step is never "
                                  f"faster than the asynchronous one), got {self.sync_factor!r}",
                                  field="sync_factor")
        for f in ("verify_per_row_ms", "drafter_per_token_ms", "host_ms", "sync_add_ms"):
            v = getattr(self, f)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and np.isfinite(v)
                                           and v >= 0):
                raise ModelInputError(f"cost parameter must be a number >= 0, got {v!r}", field=f)

    def verify_ms(self, M: np.ndarray | int) -> np.ndarray:
        """Verify forward time (ms) for M rows; M shape (...), returns the same shape."""
        M = np.asarray(M, dtype=float)
        rel = np.zeros_like(M)
        for b, r in self.staircase_rel.items():
            rel = rel + r * (M >= b)
        return self.verify_base_ms * (1 + rel) + self.verify_per_row_ms * np.maximum(M - 1, 0)

    def step_ms(self, M: np.ndarray | int, draft_tokens: np.ndarray | int = 0,
                sync: np.ndarray | bool = False) -> np.ndarray:
        """Time (ms) of one decode step.

        Parameters
        ----------
        M : int or array
            Verify rows.
        draft_tokens : int or array
            GPU drafter tokens in this step (MTP passes).
        sync : bool or array
            Synchronous scheduling (host-side lookup in the loop).

        Returns
        -------
        numpy.ndarray (broadcast shape), ms
        """
        table = self._step_table(M, draft_tokens, sync)
        if table is not None:
            return table
        return self._step_formula(M, draft_tokens, sync)

    def _step_formula(self, M, draft_tokens, sync) -> np.ndarray:
        """:meth:`step_ms` computed element by element (the definition)."""
        base = self.verify_ms(M) + self.drafter_per_token_ms * np.asarray(draft_tokens, float) \
            + self.host_ms
        s = np.asarray(sync, dtype=bool)
        return np.where(s, base * self.sync_factor + self.sync_add_ms, base)

    def _step_table(self, M, draft_tokens, sync) -> np.ndarray | None:
        """:meth:`step_ms` of a long walk by table look-up, or None when it does not apply.

        A step walk prices millions of steps whose (M, draft tokens, sync) take a few
        dozen distinct values: :meth:`_step_formula` is evaluated once per distinct
        (sync, M, d) on the grid ``[0, max M] x [0, max d]`` and gathered, so every step gets
        the value the formula gives it (the same operations on the same numbers, bit for
        bit) at the price of one gather instead of a dozen passes over the steps. Used for
        integer M and d >= 0 on at least :data:`_TABLE_MIN` steps with a small grid.
        """
        M = np.asarray(M)
        d = np.asarray(draft_tokens)
        if M.size < _TABLE_MIN or M.dtype.kind not in "iu" or d.dtype.kind not in "iub":
            return None
        s = np.asarray(sync, dtype=bool)
        m_hi = int(M.max())
        d_hi = int(d.max()) if d.size else 0
        if int(M.min()) < 0 or (d.size and int(d.min()) < 0) \
                or (m_hi + 1) * (d_hi + 1) > _TABLE_MAX:
            return None
        grid = self._step_formula(np.arange(m_hi + 1)[None, :, None],
                                  np.arange(d_hi + 1)[None, None, :],
                                  np.array([False, True])[:, None, None])
        return grid[s.astype(np.intp), M, d.astype(np.intp, copy=False)]

    def tps(self, tokens_per_forward: np.ndarray | float, step_ms: np.ndarray | float
            ) -> np.ndarray:
        """Projected TPS = 1000 * tokens_per_forward / step_ms * harness_efficiency."""
        return 1000.0 * np.asarray(tokens_per_forward) / np.asarray(step_ms) \
            * self.harness_efficiency

    def to_dict(self) -> dict:
        d = asdict(self)
        d["staircase_rel"] = {str(k): v for k, v in self.staircase_rel.items()}
        return d


def _profiles() -> dict:
    txt = resources.files("models").joinpath("data", "forward_cost.json").read_text("utf-8")
    return json.loads(txt)["profiles"]


def load_cost_model(profile: str = "F", path: str | Path | None = None, *,
                    check: Callable[[str, Any, str | None], None] | None = None, **overrides
                    ) -> ForwardCostModel:
    """Build a cost model from an embedded profile, an optional JSON file and overrides.

    Parameters
    ----------
    profile : {"F", "bf16head"}
        Embedded calibrated profile.
    path : str or Path, optional
        JSON object with any :class:`ForwardCostModel` fields (applied over the profile).
    check : callable(field, value, file), optional
        Called with every field value of the file (``file`` its path) and every override
        (``file`` None) before the model is built; raises to refuse a value (the caller's
        plausible ranges, e.g. :func:`planner.decide.draft.check_cost_field`). The model itself
        only refuses what it cannot compute with (non-finite, negative, a zero step time).
    **overrides
        Field values (``None`` values ignored), e.g. from CLI flags.

    Returns
    -------
    ForwardCostModel

    Raises
    ------
    ModelInputError
        Unknown profile, unknown field, bad JSON or a non-positive / negative value.
    """
    profs = _profiles()
    if profile not in profs:
        raise ModelInputError(f"unknown cost profile {profile!r} ({', '.join(profs)})",
                              field="cost-profile")
    names = {f.name for f in fields(ForwardCostModel)}
    vals = {k: v for k, v in profs[profile].items() if k in names}
    vals["name"] = profile
    vals["sources"] = profs[profile].get("sources", {})
    from_file: set = set()
    if path is not None:
        def no_repeats(pairs):  # json.loads keeps the last of two equal keys silently
            seen = set()
            for k, _ in pairs:
                if k in seen:
                    raise ModelInputError(f"field {k!r} given twice", file=str(path), field=k)
                seen.add(k)
            return dict(pairs)

        try:
            from models.files import loads_json, read_text  # bounded; no 5,000-digit ints

            obj = loads_json(read_text(path), str(path), object_pairs_hook=no_repeats)
        except json.JSONDecodeError as exc:
            hint = ("; a cost file is one JSON object (this looks like JSON Lines)"
                    if exc.msg == "Extra data" else "")
            raise ModelInputError(f"not JSON: {exc.msg}{hint}", file=str(path),
                                  line=exc.lineno) from None
        if not isinstance(obj, dict):
            raise ModelInputError("cost file must hold a JSON object", file=str(path))
        for k, v in obj.items():
            if k.startswith("_") or k == "description":
                continue
            if k not in names:
                raise ModelInputError(f"unknown cost field {k!r}", file=str(path), field=k)
            if check is not None:
                check(k, v, str(path))
            vals[k] = v
            from_file.add(k)
        vals["name"] = f"{profile}+{Path(path).name}"
    for k, v in overrides.items():
        if v is None:
            continue
        if k not in names:
            raise ModelInputError(f"unknown cost field {k!r}", field=k)
        if check is not None:
            check(k, v, None)
        vals[k] = v
        from_file.discard(k)
    try:
        return ForwardCostModel(**vals)
    except ModelInputError as exc:  # name the file when the refused value came from it
        if exc.file is not None or str(exc.field).split(".")[0] not in from_file:
            raise
        raise ModelInputError(exc.message, file=str(path), field=exc.field) from None
