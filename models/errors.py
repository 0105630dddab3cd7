"""The error the model layer raises for bad input data.

A model function that reads a file (a capture, an acceptance curve, a cost profile) or takes a
value from its caller reports a problem with that input as :class:`ModelInputError`: one line
naming the file, the line and the *plain* field name (``k``, ``profile``), never an option
spelling such as ``--k``; adding the ``--`` is the command line's business.

The decision layer's ``planner.errors.InputError`` derives from this class, so a caller that
catches :class:`ModelInputError` catches the errors of both layers. This module imports nothing
of the project, so ``models`` stands alone.
"""

from __future__ import annotations

__all__ = ["ModelInputError"]


class ModelInputError(ValueError):
    """A problem with input data, rendered as one line naming the file, line and field.

    Parameters
    ----------
    message : str
        What is wrong, in one line (runs of whitespace are folded to one space).
    file : str, optional
        The input file (path as given by the caller).
    line : int, optional
        1-based line (or row) number in ``file``.
    field : str, optional
        The column, JSON field or parameter concerned.
    remedy : str, optional
        The plain name of the setting that resolves the problem (``config_column`` when a
        table's config column is not found): the command line adds its option spelling to
        the message (``planner.cli._options.as_option``); a library caller reads it here.

    Attributes
    ----------
    message, file, line, field, remedy
        As given; :meth:`one_line` combines the first four.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None, remedy: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        self.remedy = remedy
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The error as one line: ``FILE:LINE field 'FIELD': MESSAGE`` (parts only if known).

        Returns
        -------
        str
            E.g. ``capture.jsonl:3 field 'prompt_token_ids': not a list``; without a file,
            ``line 3 ...``; without any location, the folded message alone.
        """
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
