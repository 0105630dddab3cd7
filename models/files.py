"""Reading an input file with bounds, for every reader of either layer (runs tables, tools'
result files, captures, plans, prior files, cost and curve files, saved results).

No file may exhaust memory or time: a file (after gzip decompression, for a capture) holds
at most :data:`MAX_FILE_BYTES`, a line of a line-oriented file at most
:data:`MAX_LINE_CHARS`; a NUL byte where text is expected means a binary file (a sparse
file, ``/dev/zero``, UTF-16 without a byte-order mark), and a UTF-16/32 byte-order mark a
file to convert. Each is refused with one line naming the file, as soon as it is seen
(``/dev/zero`` is refused at its first chunk, a gzip bomb of spaces or blank lines at its
first :data:`BLANK_RUN_BYTES` of nothing else).

This module imports nothing of the project but :mod:`models.errors`;
:mod:`planner.io.files` builds on it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from models.errors import ModelInputError

__all__ = ["BLANK_RUN_BYTES", "CHUNK", "HUGE_INTEGER", "MAX_FILE_BYTES", "MAX_LINE_CHARS",
           "binary_at", "check_encoding", "check_size", "loads_json", "read_bytes", "read_text"]

#: Largest input file read, in bytes (of a gzip file: decompressed). The largest shipped
#: tables and captures are a few MB; a table of this size already costs several GB as runs.
MAX_FILE_BYTES = 512 * 2**20
#: Longest line of a line-oriented input (CSV row, JSON Lines record), in characters; a
#: row of 100,000 columns is ~1 MB, a capture record of 100k tokens ~0.7 MB.
MAX_LINE_CHARS = 256 * 2**20
#: A run of this many bytes holding nothing but spaces, tabs and line breaks ends the read
#: of a capture (a gzip bomb of blank space): no real input has one.
BLANK_RUN_BYTES = 64 * 2**20
#: Bytes read per step.
CHUNK = 1 << 20

#: Byte-order marks of encodings other than UTF-8 (longest first: UTF-32 LE starts as UTF-16 LE).
_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
         (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def mib(n: int) -> str:
    """``n`` bytes as whole MiB text (``512 MiB``)."""
    return f"{n // 2**20} MiB"


def binary_at(b: bytes, offset: int | None = None) -> int | None:
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


def check_encoding(head: bytes, name: str, error=ModelInputError) -> None:
    """Refuse a file whose first bytes are a UTF-16/UTF-32 byte-order mark or hold a NUL.

    Parameters
    ----------
    head : bytes
        The file's first bytes (any length).
    name : str
        The file, for messages.
    error : type
        The error class raised (:class:`ModelInputError` or a subclass).

    Raises
    ------
    ModelInputError
        Naming the file: the encoding and how to convert it, or the NUL's byte offset.
    """
    for bom, enc in _BOMS:
        if head.startswith(bom):
            raise error(f"a {enc} text file (byte-order mark {bom.hex(' ').upper()}); save it "
                        f"as UTF-8 (a spreadsheet's 'CSV UTF-8', or iconv -f {enc} -t UTF-8 "
                        "FILE > FILE.utf8)", file=name)
    k = binary_at(head)
    if k is not None:
        raise error(f"a binary file (a NUL byte at byte {k}), not text; UTF-16 without a "
                    "byte-order mark reads so too: save it as UTF-8 (iconv -f UTF-16 -t "
                    "UTF-8 FILE > FILE.utf8)", file=name)


def check_size(p, name: str, error=ModelInputError) -> bool:
    """Refuse a regular file over :data:`MAX_FILE_BYTES`; True when ``p`` is a regular file
    (its size is then known), False for a device or pipe (read with a bound instead).

    Raises
    ------
    ModelInputError
        The file is larger than the bound, or does not exist.
    """
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise error("file not found", file=name) from None
    except OSError as exc:
        raise error(f"cannot read it: {exc.strerror or exc}", file=name) from None
    if not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise error("is a directory", file=name)
        return False
    if st.st_size > MAX_FILE_BYTES:
        raise error(f"{st.st_size / 2**20:,.0f} MiB is over the {mib(MAX_FILE_BYTES)} an "
                    "input file may hold", file=name)
    return True


def read_bytes(p, name: str, error=ModelInputError, *, text: bool = True) -> bytes:
    """The bytes of an input file, read in chunks up to :data:`MAX_FILE_BYTES`; with
    ``text``, refused at the first chunk that reads as binary (:func:`check_encoding`).

    Raises
    ------
    ModelInputError
        Naming the file: not found, a directory, over the bound, binary, UTF-16/32.
    """
    check_size(p, name, error)
    chunks, total = [], 0
    try:
        with open(p, "rb") as fh:
            while True:
                b = fh.read(CHUNK)
                if not b:
                    break
                if text:
                    if not chunks:
                        check_encoding(b, name, error)
                    elif (at := binary_at(b, total)) is not None:
                        raise error(f"a binary file (a NUL byte at byte {at}), not text",
                                    file=name)
                total += len(b)
                if total > MAX_FILE_BYTES:
                    raise error(f"more than the {mib(MAX_FILE_BYTES)} an input file may hold",
                                file=name)
                chunks.append(b)
    except FileNotFoundError:
        raise error("file not found", file=name) from None
    except IsADirectoryError:
        raise error("is a directory", file=name) from None
    except OSError as exc:
        raise error(f"cannot read it: {exc.strerror or exc}", file=name) from None
    return b"".join(chunks)


def read_text(p, name: str | None = None, error=ModelInputError) -> str:
    """The text of an input file, decoded as UTF-8 (a UTF-8 byte-order mark dropped), read
    with the bounds of :func:`read_bytes`.

    Parameters
    ----------
    p : str or path
        The file.
    name : str, optional
        The file as the user gave it, for messages (default ``str(p)``).
    error : type
        The error class raised.

    Raises
    ------
    ModelInputError
        Naming the file: not found, over the bound, binary (a NUL), UTF-16/32, not UTF-8.
    """
    name = str(p) if name is None else name
    raw = read_bytes(Path(p), name, error)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=name,
                    line=raw.count(b"\n", 0, exc.start) + 1) from None


#: The error of a JSON or TOML file holding an integer of more digits than Python converts
#: (``sys.get_int_max_str_digits()``, 4300; the parsers raise a plain ValueError, not their
#: syntax error): no benchmark value has so many.
HUGE_INTEGER = "an integer of thousands of digits (over Python's 4300); not a benchmark value"


class _Huge(Exception):
    """An integer literal too long to convert (raised through ``json.loads``)."""


def _int(s: str) -> int:
    try:
        return int(s)
    except ValueError:
        raise _Huge from None


def loads_json(text: str, name: str | None = None, error=ModelInputError, **kwargs):
    """``json.loads(text)`` with an integer of thousands of digits refused as one line
    (:data:`HUGE_INTEGER`) instead of Python's "Exceeds the limit (4300 digits)" error.

    Parameters
    ----------
    text : str
        The JSON text.
    name : str, optional
        The file, for the error.
    error : type
        The error class raised.
    **kwargs
        Passed to :func:`json.loads` (``parse_constant``, ``object_pairs_hook``).

    Raises
    ------
    json.JSONDecodeError
        Not JSON (the caller words it, with its line).
    ModelInputError
        An integer of more than 4300 digits.
    """
    import json

    try:
        return json.loads(text, parse_int=_int, **kwargs)
    except _Huge:
        raise error(HUGE_INTEGER, file=name) from None
