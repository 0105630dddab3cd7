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

from models import files as _mf
from models.files import MAX_FILE_BYTES, MAX_LINE_CHARS
from planner.errors import InputError

__all__ = ["MAX_FILE_BYTES", "MAX_LINE_CHARS", "atomic_output", "bounded_lines",
           "check_encoding", "check_size", "read_text", "same_file", "write_atomic"]

_mib = _mf.mib
_binary = _mf.binary_at


def check_encoding(head: bytes, name: str) -> None:
    """Refuse a file whose first bytes are a UTF-16/UTF-32 byte-order mark or hold a NUL
    (:func:`models.files.check_encoding`).

    Raises
    ------
    InputError
        Naming the file: the encoding and how to convert it, or the NUL's byte offset.
    """
    _mf.check_encoding(head, name, InputError)


def check_size(p: Path, name: str) -> bool:
    """Refuse a regular file over :data:`MAX_FILE_BYTES`; True when ``p`` is a regular file
    (its size is then known), False for a device or pipe (read with a bound instead).

    Raises
    ------
    InputError
        The file is larger than the bound, or does not exist.
    """
    return _mf.check_size(p, name, InputError)


def read_text(p: Path, name: str) -> str:
    """The text of an input file, decoded as UTF-8 (a UTF-8 byte-order mark dropped), read
    in chunks up to :data:`MAX_FILE_BYTES` (:func:`models.files.read_text`).

    Raises
    ------
    InputError
        Naming the file: not found, over the bound, binary (a NUL), UTF-16/32, not UTF-8.
    """
    return _mf.read_text(p, name, InputError)


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


def same_file(a, b) -> bool:
    """True when paths ``a`` and ``b`` name one file: the same device and inode, so also
    through a hard link or a symlink (False when either does not exist)."""
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _visible_name(path) -> str:
    from planner.errors import visible

    return visible(os.fsdecode(path))


def _stream(path) -> bool:
    """True when ``path`` is a character device or a named pipe (``/dev/stdout``,
    ``/dev/null``, ``<(cmd)``): written in place, as a stream."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


#: ``os.write`` and ``os.fsync`` as :func:`write_atomic` calls them (a test replaces them to
#: fake a full disk).
_write = os.write
_fsync = os.fsync


def write_atomic(path, data: bytes | str, *, field: str | None = None) -> None:
    """Write ``data`` to ``path`` so that the file is either its old self or wholly the new
    content: a temporary file in the same folder, flushed to disk (``fsync``), then renamed
    over ``path`` (``os.replace``, atomic on POSIX and Windows).

    A symlink ``path`` is written through (its target replaced, the link kept); an existing
    file's permission bits are kept. A character device or named pipe (``/dev/stdout``) is
    written in place, as a stream. A text ``data`` is written as UTF-8 (file names not in
    UTF-8, ``os.fsdecode``'s surrogates, go back out as their bytes).

    Parameters
    ----------
    path : str or Path
        The file to write.
    data : bytes or str
        Its whole new content.
    field : str, optional
        The option that named the file, for the error.

    Raises
    ------
    planner.errors.InputError
        The folder cannot be written or the disk is full (``OSError`` of the write, the
        flush or the rename): one line naming the file and the system's reason; the old
        file is left as it was and no partial or temporary file is left behind.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", errors="surrogateescape")
    if _stream(path):  # /dev/stdout, /dev/null, a named pipe: written in place, never replaced
        try:
            with open(path, "wb") as fh:
                fh.write(data)
            return
        except OSError as exc:
            raise InputError(f"cannot write it: {exc.strerror or exc}",
                             file=_visible_name(path), field=field) from None
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    tmp = None
    try:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None
        import tempfile

        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp",
                                   dir=folder)
        try:
            view = memoryview(data)
            while view:
                n = _write(fd, view)
                view = view[n:]
            _fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(tmp, mode)
        else:  # a new file gets the mode open() would give it (0o666 less the umask)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InputError(f"cannot write it: {reason}; nothing was written (an old file of "
                         "that name is left as it was)", file=_visible_name(path),
                         field=field) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class atomic_output:
    """``with atomic_output(path) as tmp:`` hands a temporary path in ``path``'s folder to a
    writer that needs a file name (NetCDF); on a clean exit the file is flushed to disk and
    renamed over ``path`` (as :func:`write_atomic`), on an error removed.

    Raises
    ------
    planner.errors.InputError
        As :func:`write_atomic` (an ``OSError`` of the writer included).
    """

    def __init__(self, path, *, field: str | None = None):
        self.path = path
        self.field = field
        self.target = os.path.realpath(path)
        self.tmp = None

    def __enter__(self) -> str:
        import tempfile

        base = os.path.basename(self.target)
        stem, ext = os.path.splitext(base)
        try:
            fd, self.tmp = tempfile.mkstemp(prefix=f".{stem}.", suffix=f".tmp{ext}",
                                            dir=os.path.dirname(self.target) or ".")
            os.close(fd)
        except OSError as exc:
            self._fail(exc)
        return self.tmp

    def _fail(self, exc: OSError):
        raise InputError(f"cannot write it: {exc.strerror or exc}; nothing was written (an "
                         "old file of that name is left as it was)",
                         file=_visible_name(self.path), field=self.field) from None

    def __exit__(self, et, ev, tb) -> bool:
        try:
            if et is None:
                try:
                    fd = os.open(self.tmp, os.O_RDONLY)
                    try:
                        _fsync(fd)
                    finally:
                        os.close(fd)
                    os.replace(self.tmp, self.target)
                    self.tmp = None
                except OSError as exc:
                    self._fail(exc)
            elif issubclass(et, OSError):
                self._fail(ev)
        finally:
            if self.tmp is not None:
                try:
                    os.unlink(self.tmp)
                except OSError:
                    pass
        return False
