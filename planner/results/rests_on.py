"""What a projection rests on: one entry per deciding constant, with its plausible range, its
source and where in that range the conclusion flips.

Every drafting and shift result (``planner draft``, ``planner draft sweep``, ``planner shift``)
carries a ``rests_on`` list of :class:`RestsOn` entries (JSON: a list of objects with the keys
of :meth:`RestsOn.to_dict`). The renderers print them as they are; the decision layer
(``planner.decide``) computes them by re-running the projection at the ends of each range and
bisecting for the flip point.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from planner.errors import InputError

__all__ = ["RestsOn", "rests_on_from_list"]


@dataclass(frozen=True)
class RestsOn:
    """One constant a conclusion rests on.

    Attributes
    ----------
    name : str
        The constant as the user knows it (``sync_factor``, ``acceptance_curve``,
        ``cost_profile``, ``prompt_set_model``, ``official_ratio`` ...).
    value : float or str
        The value used (a number, or a label such as a curve's stack name).
    low, high : float or None
        Plausible range (numeric constants); None for a categorical constant.
    unit : str
        Unit of ``value``/``low``/``high`` ("" for a plain factor).
    source : str
        Where the value and the range come from (file, measurement, document).
    flip_at : float or None
        Value inside ``[low, high]`` at which the conclusion changes; None when it holds over
        the whole range.
    conclusion : str
        The conclusion at ``value`` (e.g. "worth a run", "not worth a run", "valid").
    note : str
        One sentence for the reader ("worth a run if the sync factor is below 1.07").
    alternatives : dict or None
        For a categorical constant: the conclusion (or headline number) under each alternative
        (e.g. each shipped stack's acceptance curve).
    """

    name: str
    value: float | str
    low: float | None
    high: float | None
    unit: str
    source: str
    flip_at: float | None
    conclusion: str
    note: str
    alternatives: dict | None = None

    def to_dict(self) -> dict:
        """The JSON object (keys in field order)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict, *, where: str = "rests_on") -> "RestsOn":
        """Read one saved entry back.

        Raises
        ------
        InputError
            A missing or mistyped key (names the key).
        """
        if not isinstance(d, dict):
            raise InputError("each rests_on entry must be an object", field=where)
        try:
            out = cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})
        except TypeError as e:
            raise InputError(f"rests_on entry is missing a key ({e})", field=where) from None
        for k in ("low", "high", "flip_at"):
            v = getattr(out, k)
            if v is not None and not isinstance(v, (int, float)):
                raise InputError(f"{k} must be a number or null", field=f"{where}.{k}")
        for k in ("name", "unit", "source", "conclusion", "note"):
            if not isinstance(getattr(out, k), str):
                raise InputError(f"{k} must be a string", field=f"{where}.{k}")
        return out


def rests_on_from_list(items, *, where: str = "rests_on") -> list[RestsOn]:
    """Read a saved ``rests_on`` list (None or missing -> empty list)."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise InputError("rests_on must be a list", field=where)
    return [RestsOn.from_dict(d, where=f"{where}[{i}]") for i, d in enumerate(items)]
