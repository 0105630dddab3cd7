"""Which column of a runs table is which: the header's names matched to the known columns
(ignoring case and surrounding spaces), the aliases of the value and config columns, and a
CSV file's field separator and decimal comma."""

from __future__ import annotations

import re
from typing import Iterable

from planner.errors import InputError
from planner.io.rows import KNOWN_COLUMNS

__all__ = ["CONFIG_ALIASES", "RATE_ALIASES", "DecimalComma", "fold", "header_map", "renamed",
           "sniff_delimiter"]

#: Other names of the rate column, read as ``tps`` when the table has no ``tps`` column
#: (two of them in one table is ambiguous and refused).
RATE_ALIASES = ("throughput", "output_throughput", "tokens_per_s", "tok/s", "tokens/s")

#: Other names of the config column, read as ``config`` when the table has no ``config``
#: column (two of them in one table is ambiguous and refused; ``--config-column`` names any
#: other column). Spreadsheets and tools' exports label the compared setups so.
CONFIG_ALIASES = ("variant", "name", "label", "configuration")

#: Column names a table's header is matched against ignoring case and surrounding spaces
#: (``Config``, `` TPS ``, ``Run_Group``): the known columns, the aliases above and the
#: summary columns (:data:`planner.io.summaries.SUMMARY_COLUMNS`).
_FOLDED = {c: c for c in KNOWN_COLUMNS + RATE_ALIASES + CONFIG_ALIASES
           + ("mean", "sd", "median", "min", "max", "n")}

def fold(name: str) -> str:
    """A header name as it is matched: surrounding spaces dropped, case folded, Unicode NFC."""
    import unicodedata

    return unicodedata.normalize("NFC", name.strip()).casefold()


def header_map(cols: Iterable[str], path: str, tps_column: str | None = None,
                config_column: str | None = None) -> tuple[dict, str]:
    """How a table's column names are read: ``(renames, rate)``.

    Every column whose name matches a known column (:data:`KNOWN_COLUMNS`, the
    :data:`RATE_ALIASES`, :data:`CONFIG_ALIASES`, the summary columns) or the column named by
    ``tps_column`` / ``config_column``, ignoring case and surrounding spaces (:func:`fold`),
    is read under that name; without a ``config`` column, one of :data:`CONFIG_ALIASES` is the
    config.

    Parameters
    ----------
    cols : iterable of str
        The column names as the file spells them (blank names are ignored).
    path : str
        The file, for messages.
    tps_column, config_column : str, optional
        The columns of the values and of the config labels, as the user named them.

    Returns
    -------
    renames : dict
        File spelling -> name read, for the columns whose name changes (None: the column is
        not read, a ``config`` column when ``config_column`` names another one).
    rate : str
        The name the value column is read under.

    Raises
    ------
    InputError
        Two columns that are one name once case and spaces are ignored; a missing config or
        value column; two aliases of one column (line 1, the column as field).
    """
    names = [c for c in cols if c]
    cols = list(dict.fromkeys(names))
    listing = ", ".join(sorted(cols)) or "none"
    user = {}
    if tps_column:
        user[fold(tps_column)] = _FOLDED.get(fold(tps_column), tps_column.strip())
    if config_column:
        if tps_column and fold(config_column) == fold(tps_column):
            raise InputError(f"the config column and the value column are both named "
                             f"'{config_column}'", file=path, line=1, field="config")
        user[fold(config_column)] = "config"
    if len(cols) < len(names):  # a name written twice: a reader keeps one of them silently
        for c in cols:
            to = user.get(fold(c)) or _FOLDED.get(fold(c))
            if to is not None and names.count(c) > 1:
                raise InputError(f"column '{c}' appears {names.count(c)} times in the header; "
                                 "rename or remove all but one", file=path, line=1, field=to)
    renames: dict = {}
    owner: dict = {}  # name read -> the file's column read under it
    for c in cols:
        f = fold(c)
        to = user.get(f) or _FOLDED.get(f)
        if to is None:
            continue
        if to == "config" and config_column and f != fold(config_column):
            renames[c] = None  # a config column other than the one named: not read
            continue
        if to in owner:
            raise InputError(f"columns '{owner[to]}' and '{c}' are one column once case and "
                             "surrounding spaces are ignored; rename or remove one", file=path,
                             line=1, field=to)
        owner[to] = c
        if to != c:
            renames[c] = to
    if config_column and "config" not in owner:
        raise InputError(f"no column '{config_column}' (columns: {listing})", file=path,
                         line=1, field="config", remedy="config_column")
    if "config" not in owner:
        aliases = [a for a in CONFIG_ALIASES if a in owner]
        if len(aliases) > 1:
            raise InputError(f"ambiguous config column: both '{owner[aliases[0]]}' and "
                             f"'{owner[aliases[1]]}' could name the configs; name the "
                             "config column to read", file=path, line=1, field="config",
                             remedy="config_column")
        if not aliases:
            raise InputError(f"missing required column 'config' (columns: {listing}); "
                             f"call it config or one of {', '.join(CONFIG_ALIASES)}, or "
                             "name the config column", file=path, line=1, field="config",
                             remedy="config_column")
        c = owner.pop(aliases[0])
        owner["config"] = c
        renames[c] = "config"
    if tps_column:
        rate = user[fold(tps_column)]
        if rate not in owner:
            raise InputError(f"no column '{tps_column}' (columns: {listing})", file=path,
                             line=1, field="tps", remedy="tps_column")
        return renames, rate
    if "tps" in owner:
        return renames, "tps"
    aliases = [a for a in RATE_ALIASES if a in owner]
    if len(aliases) > 1:
        raise InputError(f"ambiguous rate column: both '{owner[aliases[0]]}' and "
                         f"'{owner[aliases[1]]}' could be the TPS; name the value column",
                         file=path, line=1, field=aliases[0], remedy="tps_column")
    if aliases:
        return renames, aliases[0]
    if "n" in owner and ("mean" in owner or "median" in owner):
        return renames, "tps"  # summary rows only (planner.io.summaries)
    raise InputError(f"missing required column 'tps' (columns: {listing}); call it tps or one "
                     f"of {', '.join(RATE_ALIASES)}, or name the value column", file=path,
                     line=1, field="tps", remedy="tps_column")


def renamed(d: dict, renames: dict) -> dict:
    """A record with its keys read as :func:`header_map` says (None: dropped)."""
    out = {}
    for k, v in d.items():
        to = renames.get(k, k)
        if to is not None:
            out[to] = v
    return out


def sniff_delimiter(line: str) -> str:
    """The field separator of a CSV file from its header line: the most frequent of ``,``,
    ``;`` and tab outside double quotes (a spreadsheet's export in a locale whose decimal
    mark is a comma uses ``;``), ``,`` on a tie or when there is none."""
    outside = re.sub(r'"[^"]*"', "", line)
    counts = {d: outside.count(d) for d in (",", ";", "\t")}
    best = max(counts, key=counts.get)  # first of the most frequent: "," on a tie
    return best if counts[best] else ","


#: A number written with a decimal comma (``100,1``): read as ``100.1`` in a ``;``-separated
#: file, the export of a spreadsheet in a locale whose decimal mark is the comma.
_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]+,[0-9]+").fullmatch


class DecimalComma:
    """A CSV reader whose cells in the value columns ``cols`` that are numbers with a
    decimal comma (:data:`_DECIMAL_COMMA`) are read with a decimal point (``;``-separated
    files only: there a comma cannot be a field separator)."""

    def __init__(self, reader, cols: list[int]):
        self.reader, self.cols = reader, cols

    def __iter__(self):
        return self

    def __next__(self) -> list[str]:
        row = next(self.reader)
        for i in self.cols:
            if i < len(row) and "," in row[i] and _DECIMAL_COMMA(row[i].strip()):
                row[i] = row[i].replace(",", ".")
        return row

    @property
    def line_num(self) -> int:
        return self.reader.line_num


