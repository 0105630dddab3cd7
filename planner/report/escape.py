"""Escaping of user-derived text for each report medium: every view passes every value it did
not write itself (names, labels, notes, any field of a saved result) through one of these.

* :func:`visible` -- control characters (C0, DEL, C1), invisible format characters and the bidi controls (U+061C,
  U+200E/F, U+202A-202E, U+2066-2069) spelled as ``\\x1b`` / ``\\u202e``, so an escape
  sequence (OSC window title, screen clear) or a right-to-left override cannot act;
* :func:`term` -- a :class:`rich.text.Text` of :func:`visible` text: rich never reads it as
  markup (``[link=javascript:...]``, ``[blink]``, ``A[/]`` print as they are);
* :func:`md` -- Markdown inline text: a ``<`` that would open a tag, comment or autolink
  and an ``&`` that would start an entity as entities (raw HTML does not render), and the
  characters that end a table cell, open a code span or emphasis, or close a link text
  backslash-escaped (``|``, backtick, ``*``, ``~``, ``\\``, a ``]`` before ``( [ :``, a
  ``_`` that is not between two letters or digits, and opening the text a ``>`` or ``#``,
  or a ``-``, ``+``, ``=`` and a space: a quote, heading or list marker); an intraword
  ``_`` of a config name
  (``fa2sw_precache``) emphasises nothing and stays as it is, as does a plain ``[0.21,
  0.52]`` or ``<= 0``; a newline is spelled ``\\n`` (:func:`visible`), so a value holds
  one line, one table cell;
* :func:`html` -- HTML text and attribute values (``& < > " '`` as entities).
"""

from __future__ import annotations

import html as _html
import re

from planner.errors import visible as _visible

__all__ = ["visible", "term", "md", "html"]

def visible(x) -> str:
    """``str(x)`` (``""`` for None) with every control, invisible format or bidi character
    spelled out (``"\\x1b]0;t\\x07"`` -> ``\\x1b]0;t\\x07`` as text); a newline too (``\\n``),
    so a value cannot fake a line of the report. The one rule is
    :func:`planner.errors.visible` (error messages use it too)."""
    return _visible("" if x is None else x)


def term(x, style: str | None = None):
    """:func:`visible` text as a rich ``Text`` (printed literally, no markup), in ``style``."""
    from rich.text import Text

    return Text(visible(x), style=style or "")


_MD_SPECIAL = re.compile(r"([\\`*|~]|\](?=[(\[:])|(?<![^\W_])_|_(?![^\W_])|^[>#]|^[-+=](?=\s))")
_MD_ENTITY = re.compile(r"&(?=[#A-Za-z])")
_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])")


def md(x) -> str:
    """:func:`visible` text safe in Markdown, also inside a table cell: ``<script>`` shows as
    text, a pipe or a backtick in a config name does not end a cell or open a code span,
    ``[x](javascript:...)`` is no link."""
    text = _MD_TAG.sub("&lt;", _MD_ENTITY.sub("&amp;", visible(x)))
    return _MD_SPECIAL.sub(r"\\\1", text)


def html(x) -> str:
    """:func:`visible` text safe in HTML text and in a quoted attribute value."""
    return _html.escape(visible(x), quote=True)
