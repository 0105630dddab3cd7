"""Reading an input file so that no file can exhaust memory or time: bounds on its size and
on each line, refused with one line when a file is binary, endless or not UTF-8.

Bounds (every reader of runs tables, tools' result files, ``planner ingest`` folders and plan
files):

* a file holds at most :data:`MAX_FILE_BYTES` (512 MiB; the largest shipped tables are a few
  MB, and a table of that size already costs several GB of memory as runs). A device or pipe
  (``/dev/zero``, ``<(cmd)``) is read up to that bound and refused beyond it;
* a line of a line-oriented file (CSV row, JSON Lines record) holds at most
  :data:`MAX_LINE_CHARS` characters (256 MiB; a row of 100,000 columns is ~1 MB). A one-line
  JSON document is bounded by the file bound only;
* NUL bytes before the first line break, or in more than 1 of 10 bytes of a 1 MiB chunk,
  mean a binary file (a sparse file, ``/dev/zero``, UTF-16 without a byte-order mark):
  refused there, without reading further (a stray NUL in a row is refused by the row's
  check, naming its line and field);
* a UTF-16 or UTF-32 byte-order mark is refused with how to convert the file to UTF-8.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO, Iterator

from planner.errors import InputError

__all__ = ["MAX_FILE_BYTES", "MAX_LINE_CHARS", "bounded_lines", "check_encoding",
           "check_size", "read_text"]

#: Largest input file read, in bytes.
MAX_FILE_BYTES = 512 * 2**20
#: Longest line of a line-oriented input (CSV, JSON Lines), in characters.
MAX_LINE_CHARS = 256 * 2**20

_CHUNK = 1 << 20

#: Byte-order marks of encodings other than UTF-8 (longest first: UTF-32 LE starts as UTF-16 LE).
_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
         (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def _mib(n: int) -> str:
    return f"{n // 2**20} MiB"


def check_encoding(head: bytes, name: str) -> None:
    """Refuse a file whose first bytes are a UTF-16/UTF-32 byte-order mark or hold a NUL.

    Parameters
    ----------
    head : bytes
        The file's first bytes (any length).
    name : str
        The file, for messages.

    Raises
    ------
    InputError
        Naming the file: the encoding and how to convert it, or the NUL's byte offset.
    """
    for bom, enc in _BOMS:
        if head.startswith(bom):
            raise InputError(f"a {enc} text file (byte-order mark {bom.hex(' ').upper()}); "
                             f"save it as UTF-8 (a spreadsheet's 'CSV UTF-8', or iconv -f "
                             f"{enc} -t UTF-8 FILE > FILE.utf8)", file=name)
    k = _binary(head)
    if k is not None:
        raise InputError(f"a binary file (a NUL byte at byte {k}), not text; UTF-16 without a "
                         "byte-order mark reads so too: save it as UTF-8", file=name)


def _binary(b: bytes, offset: int | None = None) -> int | None:
    """The offset of the first NUL when ``b`` reads as binary: NULs in more than 1 of 10
    bytes, or (at the file's start, ``offset`` None) a NUL before the first line break; None
    otherwise (a stray NUL in a row is left to the row's check, which names its line and
    field)."""
    k = b.find(b"\0")
    if k < 0:
        return None
    nl = b.find(b"\n")
    if (offset is None and (nl < 0 or k < nl)) or b.count(b"\0") * 10 > len(b):
        return (offset or 0) + k
    return None


def check_size(p: Path, name: str) -> bool:
    """Refuse a regular file over :data:`MAX_FILE_BYTES`; True when ``p`` is a regular file
    (its size is then known), False for a device or pipe (read with a bound instead).

    Raises
    ------
    InputError
        The file is larger than the bound, or does not exist.
    """
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError("file not found", file=name) from None
    if not stat.S_ISREG(st.st_mode):
        return False
    if st.st_size > MAX_FILE_BYTES:
        raise InputError(f"{st.st_size / 2**20:,.0f} MiB is over the {_mib(MAX_FILE_BYTES)} "
                         "an input file may hold", file=name)
    return True


def read_text(p: Path, name: str) -> str:
    """The text of an input file, decoded as UTF-8 (a UTF-8 byte-order mark dropped), read
    in chunks up to :data:`MAX_FILE_BYTES`.

    Raises
    ------
    InputError
        Naming the file: not found, over the bound, binary (a NUL), UTF-16/32, not UTF-8.
    """
    check_size(p, name)
    chunks, total = [], 0
    try:
        with open(p, "rb") as fh:
            while True:
                b = fh.read(_CHUNK)
                if not b:
                    break
                if not chunks:
                    check_encoding(b, name)
                elif (at := _binary(b, total)) is not None:
                    raise InputError(f"a binary file (a NUL byte at byte {at}), not text",
                                     file=name)
                total += len(b)
                if total > MAX_FILE_BYTES:
                    raise InputError(f"more than the {_mib(MAX_FILE_BYTES)} an input file may "
                                     "hold", file=name)
                chunks.append(b)
    except FileNotFoundError:
        raise InputError("file not found", file=name) from None
    except IsADirectoryError:
        raise InputError("is a directory", file=name) from None
    raw = b"".join(chunks)
    del chunks
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                         file=name) from None


def bounded_lines(fh: IO[str], name: str) -> Iterator[str]:
    """The lines of an open text file, each at most :data:`MAX_LINE_CHARS` characters.

    Raises
    ------
    InputError
        A longer line (naming its line number).
    """
    k = 0
    readline = fh.readline
    limit = MAX_LINE_CHARS + 1
    while True:
        line = readline(limit)
        if not line:
            return
        k += 1
        if len(line) == limit and not line.endswith("\n"):
            raise InputError(f"a line longer than {_mib(MAX_LINE_CHARS)} characters (the bound "
                             "of a line)", file=name, line=k)
        yield line
