"""User-facing input errors of the decision layer.

Every problem with a user's input is raised as :class:`InputError`; the CLI turns it (and the
model layer's :class:`models.errors.ModelInputError`, which it derives from) into one line on
stderr and exit code 2 (never a traceback). Control characters of a file name or value
(a newline, an escape sequence, a bidi override) are shown escaped (:func:`visible`), so
the line stays one line and the terminal shows what the name holds.
"""

from __future__ import annotations

import re

from models.errors import ModelInputError

__all__ = ["InputError", "line_of", "shorten", "visible"]

#: C0 and C1 control characters, DEL, and the Unicode format characters that reorder or
#: hide text on a terminal (bidi embeddings / overrides / isolates, marks, zero-width
#: characters, the byte-order mark, line and paragraph separators).
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069"
                        "\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match) -> str:
    c = m.group()
    if c in _NAMED:
        return _NAMED[c]
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def visible(text: str) -> str:
    """``text`` with its control and invisible format characters written as escapes.

    A newline becomes ``\\n``, an escape ``\\x1b``, a right-to-left override ``\\u202e``;
    a character that cannot be encoded (a lone surrogate of a file name not in UTF-8,
    ``os.fsdecode``) becomes its ``\\udcXX`` escape. Everything else is kept.

    Parameters
    ----------
    text : str
        Any text (a file name, a value, a whole message).

    Returns
    -------
    str
        One printable line.

    Examples
    --------
    >>> visible("runs\\n.csv")
    'runs\\\\n.csv'
    """
    text = _INVISIBLE.sub(_escape, str(text))
    if any("\ud800" <= c <= "\udfff" for c in text):
        text = "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


class InputError(ModelInputError):
    """A problem with user input, rendered as one line naming the file, line and field.

    The decision layer's error; it behaves like the model layer's
    :class:`~models.errors.ModelInputError` (same constructor); its
    :meth:`one_line` shows control characters escaped (:func:`visible`). Catch
    ``ModelInputError`` to handle the errors of both layers.

    Parameters
    ----------
    message : str
        What is wrong, in one line.
    file : str, optional
        The input file (path as given by the user).
    line : int, optional
        1-based line (or row) number in ``file``.
    field : str, optional
        The column / JSON field / option concerned.
    """

    def one_line(self) -> str:
        """As :meth:`models.errors.ModelInputError.one_line`, control characters escaped
        (in the message too, before its whitespace is folded: a config ``'x\\ny'`` is not
        shown as ``'x y'``)."""
        return line_of(self)


def shorten(text: str, most: int = 80) -> str:
    """``text`` cut to its first ``most`` characters and its length when longer (a value of
    5,000 digits quoted in an error line): ``'1000...' (5,003 characters)``."""
    if len(text) <= most:
        return text
    q = text[0] if text[:1] in "'\"" and text[-1:] == text[:1] else ""
    return f"{text[:most - 4]}...{q} ({len(text):,} characters)"


#: A quoted value in a message (``'x\ny'``, ``"a b"``).
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def _cut(quoted: str) -> str:
    """:func:`shorten` a quoted value, not a stretch of prose between two apostrophes (the
    file's 'x' ... isn't): a value worth cutting (5,000 digits) holds no space."""
    return shorten(quoted) if not any(c.isspace() for c in quoted) else quoted


def line_of(exc: ModelInputError) -> str:
    """The one line of an input error of either layer, control characters of its file,
    field and message escaped (:func:`visible`).

    Inside a quoted value of the message a newline or tab is escaped (a config ``'x\\ny'``
    is not shown as ``'x y'``); elsewhere runs of whitespace are folded to one space, as
    :meth:`models.errors.ModelInputError.one_line` does (a message wrapped in the source)."""
    message = exc.message
    try:
        exc.message = _QUOTED.sub(lambda m: visible(_cut(m.group())), str(message))
        return visible(ModelInputError.one_line(exc))
    finally:
        exc.message = message
