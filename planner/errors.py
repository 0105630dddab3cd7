"""User-facing input errors of the decision layer.

Every problem with a user's input is raised as :class:`InputError`; the CLI turns it (and the
model layer's :class:`models.errors.ModelInputError`, which it derives from) into one line on
stderr and exit code 2 (never a traceback).
"""

from __future__ import annotations

from models.errors import ModelInputError

__all__ = ["InputError"]


class InputError(ModelInputError):
    """A problem with user input, rendered as one line naming the file, line and field.

    The decision layer's error; it behaves exactly like the model layer's
    :class:`~models.errors.ModelInputError` (same constructor, same
    :meth:`~models.errors.ModelInputError.one_line`). Catch ``ModelInputError`` to handle the
    errors of both layers.

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
