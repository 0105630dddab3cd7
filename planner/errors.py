"""User-facing input errors.

Every problem with a user's input is raised as :class:`InputError`; the CLI turns it into
one line on stderr and exit code 2 (never a traceback).
"""

from __future__ import annotations


class InputError(ValueError):
    """A problem with user input, rendered as one line naming the file, line and field.

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

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = []
        if self.file is not None:
            where.append(str(self.file) + (f":{self.line}" if self.line is not None else ""))
        elif self.line is not None:
            where.append(f"line {self.line}")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        prefix = " ".join(where)
        msg = " ".join(str(self.message).split())
        return f"{prefix}: {msg}" if prefix else msg
