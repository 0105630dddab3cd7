"""``planner report RESULT.json``: re-render any saved result (``--json`` output of verdict,
repeats, budget, draft, draft sweep, calibrate or shift) for the terminal, as Markdown or as
HTML. The saved ``inputs`` block is kept as it is (nothing of this command is recorded)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def _kinds() -> str:
    """The report kinds of the registry (planner.report.render.VIEWS), as a reader says them."""
    from planner.report.render import VIEWS

    names = [k.replace("-", " ") for k in VIEWS]
    return ", ".join(names[:-1]) + " or " + names[-1]


def register(app: typer.Typer) -> None:
    """Register ``report`` on the planner app."""

    @app.command("report")
    def report(
        result: Path = typer.Argument(..., metavar="RESULT", help="A saved result: the --json "
                                      f"output of {_kinds()}."),
        md: Optional[Path] = typer.Option(None, "--md", help="Write a Markdown report (a draft "
                                          "result also writes the PNG next to it)."),
        html: Optional[Path] = typer.Option(None, "--html", help="Write a self-contained HTML "
                                            "report (plots inline)."),
    ) -> None:
        """Re-render a saved result; the terminal view when no file option is given."""
        from planner.report import render
        from planner.report.output import emit

        obj = render.read_result(result)
        if md is None and html is None:
            _named(result, [render.render_terminal], render.render_terminal, obj)
            return
        # the files are rendered from the saved form, which is what a saved result reads as
        views = [v for v, out in ((render.render_markdown, md), (render.render_html, html))
                 if out is not None]
        from planner.report.progress import waiting

        # a budget page draws 30-odd plots (several seconds): a status line on a terminal
        with waiting("drawing the report..."):
            _named(result, views, emit, obj, as_json=False, terminal=False, md=md, html=html,
                   inputs=[result])


def _named(path: Path, views: list, fn, obj: dict, **kwargs) -> None:
    """``render.guarded(path, fn, obj, **kwargs)``, its error naming the field when a value
    of the wrong type stopped the renderer (``"x"`` where a number is formatted); ``views``
    are the renderers ``fn`` calls (``result -> text``, run again on the result to find the
    field, writing nothing).

    Raises
    ------
    planner.errors.InputError
        As :func:`planner.report.render.guarded`; for a field of the wrong type, naming the
        field (dotted path, ``delta_pct.mean``) and the value it holds.
    """
    from planner.errors import InputError
    from planner.report import render

    try:
        render.guarded(path, fn, obj, **kwargs)
    except InputError as exc:
        cause = exc.__context__
        if exc.field is not None or isinstance(cause, KeyError) or \
                not isinstance(cause, render.RENDER_ERRORS):
            raise
        found = next((f for f in (_culprit(v, obj, cause) for v in views) if f), None)
        if found is None:
            raise
        field, value = found
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise InputError(f"a saved result with a field of the wrong type or value (edited?): "
                         f"it holds {shown} ({type(value).__name__}); "
                         f"{type(cause).__name__}: {cause}", file=str(path),
                         field=field) from None


def _culprit(view, obj: dict, cause: BaseException) -> tuple[str, object] | None:
    """The field (dotted path) and value that stopped a renderer as ``cause`` did.

    The renderer ``view`` is run again (terminal output discarded) on a copy of ``obj``
    that records each field read, and whose strings record being used as numbers (formatted
    with a number code, compared, converted: the edit that turns ``0.61`` into ``"0.61"``).
    A string so used, last first, is the field when putting a number in its place moves the
    failure (the view then passes, or fails elsewhere); else a value quoted in the error,
    else the last field read of the type the error names (``'float' object is not
    subscriptable``). None when the second run does not fail the same way or nothing fits.
    """
    import copy
    import re

    log: list = []
    first = _failure(view, _track(obj, (), log))
    if first is None or first[0] is not type(cause):
        return None
    used = list(dict.fromkeys(p for kind, p, _ in reversed(log) if kind == "use"))[:6]
    for path in used + [p for p in _odd_strings(obj) if p not in used][:6]:
        o = copy.deepcopy(obj)
        d = o
        for x in path[:-1]:
            d = d[x]
        value, d[path[-1]] = d[path[-1]], 0.5
        if _failure(view, o) != first:
            return _dotted(path), value
    leaves = [(p, v) for kind, p, v in log if kind == "read"
              and not isinstance(v, (dict, list))]
    text = str(cause)
    quoted = [(p, v) for p, v in leaves if isinstance(v, str) and repr(v) in text]
    if quoted:
        return _dotted(quoted[-1][0]), quoted[-1][1]
    names = {a or b for a, b in re.findall(r"(?:type|instances of) '(\w+)'|'(\w+)' object",
                                            text)}
    typed = [(p, v) for p, v in leaves if type(v).__name__ in names and not isinstance(v, str)]
    return (_dotted(typed[-1][0]), typed[-1][1]) if typed else None


def _odd_strings(obj) -> list[tuple]:
    """Paths of the strings of ``obj`` that stand where the same field of the other items of
    their list holds a number (``designs[2].assurance = "x"`` beside numbers): a renderer
    may meet them after a copy that :func:`_track` cannot follow."""
    out: list = []

    def walk(o, path):
        if isinstance(o, dict):
            for k, v in o.items():
                walk(v, path + (k,))
        elif isinstance(o, list):
            items = [x for x in o if isinstance(x, dict)]
            for k in {k for x in items for k in x}:
                nums = sum(isinstance(x.get(k), (int, float)) and not isinstance(x.get(k), bool)
                           for x in items)
                for i, x in enumerate(o):
                    if isinstance(x, dict) and isinstance(x.get(k), str) and nums * 2 >= len(
                            items):
                        out.append(path + (i, k))
            for i, v in enumerate(o):
                walk(v, path + (i,))

    walk(obj, ())
    return out


def _failure(view, obj) -> tuple | None:
    """How ``view(obj)`` fails: (exception type, message, file and line of the renderer's
    frame that raised it); None when it does not."""
    import contextlib
    import io
    import traceback

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            view(obj)
    except Exception as exc:  # noqa: BLE001 - compared, not handled
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
        where = (frames[-1].filename, frames[-1].lineno) if frames else None
        return type(exc), str(exc), where
    return None


def _dotted(path: tuple) -> str:
    """``("delta_pct", "mean")`` -> ``delta_pct.mean``; ``("runs", 2)`` -> ``runs[2]``."""
    out = ""
    for x in path:
        out += f"[{x}]" if isinstance(x, int) else ("." if out else "") + str(x)
    return out


def _track(v, path: tuple, log: list):
    """``v`` with its dicts and lists recording every item read into ``log`` as
    ``("read", path, value)``, and its strings their use as numbers as
    ``("use", path, value)`` (``path`` a tuple of keys and indexes)."""
    if type(v) is dict:
        return _SeenDict(v, path, log)
    if type(v) is list:
        return _SeenList(v, path, log)
    if type(v) is str:
        return _SeenStr(v, path, log)
    return v


class _Seen:
    """Mixin of :class:`_SeenDict` / :class:`_SeenList`: the container's path in the result
    and the shared log of what was read."""

    def __init__(self, data, path: tuple, log: list):
        super().__init__(data)
        self._path, self._log = path, log

    def _seen(self, k, v):
        p = self._path + (k,)
        self._log.append(("read", p, v))
        return _track(v, p, self._log)


class _SeenDict(_Seen, dict):
    """A dict of a saved result that records the fields read (:func:`_culprit`)."""

    def __getitem__(self, k):
        return self._seen(k, super().__getitem__(k))

    def get(self, k, default=None):
        return self[k] if k in self else default

    def items(self):
        return [(k, self[k]) for k in self]

    def values(self):
        return [self[k] for k in self]


class _SeenList(_Seen, list):
    """A list of a saved result that records the items read (:func:`_culprit`)."""

    def __getitem__(self, i):
        v = super().__getitem__(i)
        if isinstance(i, slice):
            return [self._seen(j, x) for j, x in zip(range(*i.indices(len(self))), v)]
        return self._seen(i if i >= 0 else i + len(self), v)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


class _SeenStr(str):
    """A string of a saved result that records its use as a number (:func:`_culprit`)."""

    def __new__(cls, v: str, path: tuple, log: list, orig: str | None = None):
        o = super().__new__(cls, v)
        o._path, o._log, o._orig = path, log, v if orig is None else orig
        return o

    def _use(self) -> None:
        self._log.append(("use", self._path, self._orig))

    def __format__(self, spec):
        try:
            return str.__format__(self, spec)
        except (TypeError, ValueError):
            self._use()
            raise

    def __getitem__(self, i):
        if isinstance(i, str):  # read as an object: "abc"["mean"] (an object made a string)
            self._use()
        return str.__getitem__(self, i)

    def __float__(self):
        self._use()
        return float(str(self))

    def __int__(self):
        self._use()
        return int(str(self))

    def __abs__(self):
        self._use()
        raise TypeError("bad operand type for abs(): 'str'")

    def __neg__(self):
        self._use()
        raise TypeError("bad operand type for unary -: 'str'")

    def __round__(self, ndigits=None):
        self._use()
        raise TypeError("type str doesn't define __round__ method")


def _number_op(name: str):
    def op(self, other):
        r = getattr(str, name, lambda *_: NotImplemented)(self, other)
        if r is NotImplemented and not isinstance(other, str):
            self._use()
        elif type(r) is str:  # 100 * "0.95": still the field's text, still tracked
            return _SeenStr(r, self._path, self._log, self._orig)
        return r
    op.__name__ = name
    return op


for _name in ("__lt__", "__le__", "__gt__", "__ge__", "__add__", "__radd__", "__mul__",
              "__rmul__", "__sub__",
              "__rsub__", "__truediv__", "__rtruediv__", "__pow__", "__rpow__"):
    setattr(_SeenStr, _name, _number_op(_name))
