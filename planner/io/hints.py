"""Hints for a name that is not in a file: the file's values listed, a near spelling, or the
same text in another Unicode normalisation."""

from __future__ import annotations

from typing import Iterable, Sequence

__all__ = ["closest", "listing", "name_hint"]


def listing(values: Sequence[str], most: int = 8) -> str:
    """``'a', 'b', (blank) and 3 more``: the values a file holds, for an error message."""
    vals = list(values)
    out = ", ".join(f"'{v}'" if v else "(blank)" for v in vals[:most])
    return out + (f" and {len(vals) - most} more" if len(vals) > most else "")


def _nfc(name: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFC", name)


def _form(name: str) -> str:
    """The Unicode normalisation form ``name`` is in, for a message."""
    import unicodedata

    for f in ("NFC", "NFD"):
        if unicodedata.is_normalized(f, name):
            return f
    return "neither NFC nor NFD"


def name_hint(name: str, options: Sequence[str]) -> str:
    """What to add to "'name' is not in the file": the file's name that is the same text in
    another Unicode normalisation (they print alike; a decomposed 'è' from one editor, a
    composed one from another), else the nearest spelling (:func:`closest`), else ''."""
    same = [o for o in options if o != name and _nfc(o) == _nfc(name)]
    if same:
        return (f"; the file's '{same[0]}' looks the same but is another Unicode "
                f"normalisation ({_form(same[0])} in the file, {_form(name)} as given): "
                "copy the name from the file, or save the file NFC-normalised")
    near = closest(name, options)
    return f"; did you mean '{near}'?" if near else ""


def closest(name: str, options: Iterable[str]) -> str | None:
    import difflib

    m = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
    return m[0] if m else None


