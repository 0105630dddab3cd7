"""Hints for a name that is not in a file: the file's values listed, a near spelling, or the
same text in another Unicode normalisation."""

from __future__ import annotations

from typing import Iterable, Sequence

__all__ = ["CHOICES", "choice_hint", "closest", "listing", "name_hint"]


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


def name_hint(name: str, options: Sequence[str], where: str = "file") -> str:
    """What to add to "'name' is not in the file": the file's name that is the same text in
    another Unicode normalisation (they print alike; a decomposed 'è' from one editor, a
    composed one from another), else the nearest spelling (:func:`closest`), else ''.
    ``where``: what holds the names ("file", "folder")."""
    same = [o for o in options if o != name and _nfc(o) == _nfc(name)]
    if same:
        save = "the file" if where == "file" else f"the {where}'s files"
        return (f"; the {where}'s '{same[0]}' looks the same but is another Unicode "
                f"normalisation ({_form(same[0])} in the {where}, {_form(name)} as given): "
                f"copy the name from the {where}, or save {save} NFC-normalised")
    near = closest(name, options)
    return f"; did you mean '{near}'?" if near else ""


def closest(name: str, options: Iterable[str]) -> str | None:
    import difflib

    m = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
    return m[0] if m else None




#: Choices of options whose "unknown ..." message does not list them.
CHOICES = {"likelihood": ("normal", "student-t"), "correlation": ("calibrated", "independent")}


def _norm(s: str) -> str:
    return s.strip().lower().replace("_", "-").replace(" ", "-")


def choice_hint(message: str, field: str | None = None, value: str | None = None) -> str:
    """``; did you mean 'hybrid-max'?`` for an error saying a value is not one of a list.

    The message is one of the form ``unknown KIND 'VALUE' (A, B or C)`` (also ``(one of
    ...)``, ``(known: ...)``, ``(platforms: ...; flavors: ...)``, ``... , got 'VALUE'``): the
    nearest choice by :func:`difflib.get_close_matches`, compared without letter case and
    with ``_`` read as ``-`` (``hybrid_max``, ``MCMC``). A message that already holds a hint,
    or names no near choice, gets none ('').

    Parameters
    ----------
    message : str
        The error message.
    field : str, optional
        The option or field (choices of :data:`CHOICES` when the message lists none).
    value : str, optional
        The value when the message does not quote it (a ``--prior`` that is neither a
        platform nor a file: the error's file).

    Returns
    -------
    str
        The hint to append, or ''.
    """
    import difflib
    import re

    if "did you mean" in message:
        return ""
    m = re.search(r"(?:unknown [\w -]+?|not an? [\w -]+?|does not take|got) '([^']*)'", message)
    if m:
        value, rest = m.group(1), message[m.end():]
    elif value is not None and re.match(r"not an? [\w -]+\(", message):
        rest = message
    else:
        return ""
    lst = re.search(r"\(([^()]*)\)", rest)
    choices: list[str] = []
    if lst:
        body = re.sub(r"\b(one of|known|use|expected|platforms|flavors|takes|or|nor)\b:?", ",",
                      lst.group(1))
        choices = [c.strip(" '\"") for c in re.split(r"[,;]", body) if c.strip(" '\"")]
        choices = [c for c in choices if re.fullmatch(r"[\w.:%+-]+", c)]
    if not choices:
        choices = list(CHOICES.get((field or "").lstrip("-").replace("-", "_"), ()))
    if not choices or value in choices:
        return ""
    by = {_norm(c): c for c in choices}
    near = difflib.get_close_matches(_norm(value), list(by), n=1, cutoff=0.6)
    return f"; did you mean '{by[near[0]]}'?" if near else ""
