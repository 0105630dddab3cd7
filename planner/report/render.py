"""One report layer: any saved result, rendered from its JSON object alone.

A result says what it is by its ``schema`` (``spec-planner/<kind>/<version>``) or, for
files written before every result had one, its ``command``; :func:`kind_of` reads that.
Each kind is one view module, ``planner/report/views/<kind>.py``, named by one line of
:data:`VIEWS` and loaded only when a result of that kind is rendered. A view module holds

* ``SCHEMA`` -- a :class:`typing.TypedDict` of the fields its renderers read (checked by
  :func:`check_schema` before a saved result is rendered);
* ``headline(result) -> list[str]`` -- the plain sentences every medium opens with;
* ``render_terminal(result)`` (prints), ``render_markdown(result) -> str``,
  ``render_html(result) -> str`` (a page in the frame of :mod:`planner.report.html`);
* optionally ``markdown_plot(result, samples) -> bytes``: a PNG written next to the
  Markdown report (``report.md`` -> ``report.png``), which ``render_markdown(result,
  plot_name)`` then refers to.

This module only dispatches: Markdown and HTML end with the result's ``inputs`` block
(files with their SHA-256, options, version: :func:`inputs_lines`), the terminal view with
one dim line of it (:func:`inputs_terminal`). Docs: docs/architecture.md, "Adding a report
kind".
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from planner.errors import InputError
from planner.report.escape import html as _html_text
from planner.report.escape import md as _md_text
from planner.report.escape import term as _term
from planner.report.escape import visible

__all__ = ["VIEWS", "view_of", "kind_of", "render_terminal", "render_markdown",
           "render_html", "headline", "markdown_plot_path", "write_markdown", "read_result",
           "inputs_lines", "inputs_terminal", "print_inputs", "inputs_markdown", "inputs_html",
           "add_inputs_html", "check_result", "check_schema", "guarded"]

#: Report kind -> the view module that renders it: one line per kind.
VIEWS = {
    "verdict": "planner.report.views.verdict",
    "repeats": "planner.report.views.repeats",
    "budget": "planner.report.views.budget",
    "draft": "planner.report.views.draft",
    "draft-sweep": "planner.report.views.draft_sweep",
    "calibrate": "planner.report.views.calibrate",
    "shift": "planner.report.views.shift",
    "rank": "planner.report.views.rank",
    "next": "planner.report.views.next",
}
#: Schema names that are not their kind's name (``planner calibrate`` writes a noise prior).
_SCHEMA_KIND = {"noise-prior": "calibrate"}


#: The result schema versions this planner writes and reads (``spec-planner/<kind>/<v>``).
SCHEMA_VERSIONS = frozenset({"1"})


def view_of(kind: str):
    """The view module of ``kind`` (:data:`VIEWS`), imported on first use.

    Raises
    ------
    InputError
        ``kind`` is not registered (field ``schema``).
    """
    try:
        name = VIEWS[kind]
    except KeyError:
        raise InputError(f"no report view for a {kind!r} result (one of "
                         f"{', '.join(VIEWS)})", field="schema") from None
    return importlib.import_module(name)


def kind_of(result: dict) -> str:
    """The kind of a result (a key of :data:`VIEWS`), from ``command``, else ``schema``.

    Raises
    ------
    InputError
        Not a spec-planner result.
    """
    if not isinstance(result, dict):
        raise InputError("not a spec-planner result (a JSON object)", field="schema")
    cmd = result.get("command")
    schema = str(result.get("schema") or "")
    parts = schema.split("/")
    if len(parts) == 3 and parts[0] == "spec-planner" and parts[2] not in SCHEMA_VERSIONS:
        raise InputError(f"schema {schema!r}: this planner reads version "
                         f"{', '.join(sorted(SCHEMA_VERSIONS))} of its results", field="schema")
    if isinstance(cmd, str) and cmd in VIEWS:
        return cmd
    if len(parts) == 3 and parts[0] == "spec-planner":
        kind = _SCHEMA_KIND.get(parts[1], parts[1])
        if kind in VIEWS:
            return kind
    raise InputError(f"not a spec-planner result (schema {schema or '?'!r}, command "
                     f"{cmd or '?'!r}; one of {', '.join(VIEWS)})", field="schema")


def inputs_lines(r: dict, *, settings: bool = True) -> list[str]:
    """What a result was computed from, one ``name: value`` phrase each (files with their
    SHA-256 prefix, options, version); empty for results saved without ``inputs``.
    ``settings=False`` leaves out the result's own scalar settings kept in the same block
    (a repeats result's ``rule``, ``baseline_tps``, ...: its view shows them already)."""
    inp = r.get("inputs")
    if not isinstance(inp, dict):
        return []
    out = []
    shown = set()   # (role, name) of the files listed: a setting repeating one is left out
    for f in inp.get("files") or []:
        if not isinstance(f, dict) or f.get("name") is None:
            continue
        shown.add((f.get("role"), str(f.get("name"))))
        sha = f.get("sha256")
        out.append(f"{f.get('role') or 'file'}: {f.get('name')}"
                   + (f" (sha256 {str(sha)[:12]})" if sha else ""))
    opts = {k: v for k, v in (inp.get("options") or {}).items() if v is not None}
    if opts:
        out.append("options: " + ", ".join(f"{k}={_short(v)}" for k, v in opts.items()))
    for k, v in inp.items():
        if k in ("files", "options", "version") or not settings:
            continue
        if k in opts and _short(opts[k]) == _short(v):
            continue  # the option as given already says it
        if (k, str(v)) in shown:
            continue  # the file line above already says it, with its SHA-256
        if isinstance(v, (str, int, float, bool)):
            out.append(f"{k}: {_short(v)}")
    if inp.get("version"):
        out.append(f"spec-planner {inp['version']}")
    return out


#: Items of a list option shown as they are (``--a-runs`` of 10,000 values: its count, min,
#: median, max and SHA-256 instead; the values themselves are in the saved result's inputs).
_LIST_SHOWN = 6


def _short(v) -> str:
    """An option's value as the inputs block shows it: a float to 6 significant digits, a
    list of more than :data:`_LIST_SHOWN` items (or a comma-separated quick-form string) as
    ``10,000 values: min ..., median ..., max ...; sha256 <12 hex>`` (the SHA-256 of the
    value as given, so it can be matched to its source)."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        if len(v) <= _LIST_SHOWN:
            return "[" + ", ".join(_short(x) for x in v) + "]"
        return _summary([str(x) for x in v], ",".join(str(x) for x in v))
    if isinstance(v, str) and "," in v and len(v) > 80:  # a quick-form list as one string
        return _summary(v.split(","), v)
    return str(v)


def _summary(items: list[str], given: str) -> str:
    """``n values: min, median, max; sha256`` of a long list (min/median/max of the items
    that read as numbers)."""
    import hashlib
    import math

    nums = []
    for x in items:
        try:
            f = float(x)
        except ValueError:
            continue
        if math.isfinite(f):
            nums.append(f)
    sha = hashlib.sha256(given.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    head = f"{len(items):,} values"
    if nums:
        nums.sort()
        k = len(nums)
        med = nums[k // 2] if k % 2 else 0.5 * (nums[k // 2 - 1] + nums[k // 2])
        head += f": min {nums[0]:.6g}, median {med:.6g}, max {nums[-1]:.6g}"
    return f"({head}; sha256 {sha})"


def inputs_terminal(result: dict) -> str:
    """The one line ending every terminal view: ``inputs: file (sha256 ...); options: ...;
    spec-planner X`` ("" without ``inputs``)."""
    lines = inputs_lines(result, settings=False)
    return "inputs: " + "; ".join(lines) if lines else ""


def print_inputs(result: dict) -> None:
    """Print :func:`inputs_terminal` dim (nothing without ``inputs``)."""
    line = inputs_terminal(result)
    if not line:
        return
    from rich.console import Console

    con = Console()
    if not con.is_terminal:
        con = Console(width=max(con.width, 130))
    con.print(_term(line, "dim"))


def inputs_markdown(result: dict) -> str:
    """The ``## Inputs`` section of a Markdown report ("" without ``inputs``)."""
    lines = inputs_lines(result)
    if not lines:
        return ""
    return "\n## Inputs\n\n" + "\n".join(f"- {_md_text(x)}" for x in lines) + "\n"


def inputs_html(result: dict) -> str:
    """The Inputs section of an HTML report ("" without ``inputs``)."""
    lines = inputs_lines(result)
    if not lines:
        return ""
    return ("<h2>Inputs</h2><ul class=\"inputs\">"
            + "".join(f"<li>{_html_text(x)}</li>" for x in lines) + "</ul>\n")


def add_inputs_html(page: str, result: dict) -> str:
    """``page`` with :func:`inputs_html` inserted before its closing ``</body>``."""
    sec = inputs_html(result)
    if not sec or "<h2>Inputs</h2>" in page:
        return page
    i = page.rfind("</body>")
    return page + sec if i < 0 else page[:i] + sec + page[i:]


def headline(result: dict) -> list[str]:
    """The plain sentences every medium of ``result`` opens with (its view's ``headline``)."""
    return list(view_of(kind_of(result)).headline(result))


def render_terminal(result: dict, view=None) -> None:
    """Print ``result`` as its command does (``view``: the command's own terminal renderer,
    else the one of its kind), then the line of its recorded inputs (:func:`print_inputs`)."""
    if view is None:
        view = view_of(kind_of(result)).render_terminal
    view(result)
    print_inputs(result)


def render_markdown(result: dict, plot_name: str | None = None) -> str:
    """``result`` as Markdown; ``plot_name``: the PNG the report refers to (a view with a
    ``markdown_plot``)."""
    view = view_of(kind_of(result))
    text = (view.render_markdown(result, plot_name) if hasattr(view, "markdown_plot")
            else view.render_markdown(result))
    return text + inputs_markdown(result)


def render_html(result: dict) -> str:
    """``result`` as one self-contained HTML page (its view's ``render_html``), ending with
    its inputs."""
    return add_inputs_html(view_of(kind_of(result)).render_html(result), result)


def markdown_plot_path(result: dict, md: Path | str | None) -> Path | None:
    """The PNG written next to the Markdown report ``md`` (a kind whose view has a
    ``markdown_plot``), else None."""
    if md is None or not Path(md).name:
        return None  # (an empty name is refused as a directory by guard_outputs)
    if not hasattr(view_of(kind_of(result)), "markdown_plot"):
        return None
    return Path(md).with_suffix(".png")


def write_markdown(result: dict, md: Path | str, samples: dict | None = None) -> None:
    """Write the Markdown report ``md`` (and the PNG next to it of a kind that has one:
    a draft result's histograms of the bootstrap ``samples`` of a live result, else the
    intervals of the JSON)."""
    png = markdown_plot_path(result, md)
    if png is not None:
        png.write_bytes(view_of(kind_of(result)).markdown_plot(result, samples))
    Path(md).write_text(render_markdown(result, png.name if png else None), encoding="utf-8",
                        errors="surrogateescape")  # a plot name not in UTF-8: its bytes


def read_result(path: Path | str) -> dict:
    """Read a saved result (``--json`` output) and check it is one.

    Raises
    ------
    InputError
        Not JSON, or not a spec-planner result (naming the file).
    """
    try:
        from planner.io.files import read_text  # bounded: /dev/zero, a sparse file refused

        text = read_text(Path(path), str(path))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", file=str(path)) from None
    except OSError as exc:
        raise InputError(f"unreadable: {exc.strerror}", file=str(path)) from None
    try:
        from models.files import loads_json  # an integer of 5,000 digits: one line

        obj = loads_json(text, str(path), InputError, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(str(exc), file=str(path)) from None
    try:
        check_schema(obj)
        check_result(obj)
    except InputError as exc:
        raise InputError(exc.message, file=str(path), field=exc.field) from None
    return obj


def check_schema(obj: dict) -> None:
    """Check a saved result against the ``SCHEMA`` of its kind's view (required fields and
    their types, :mod:`msgspec`); fields the schema does not name pass.

    Raises
    ------
    InputError
        Not a result (:func:`kind_of`), or a field missing or of the wrong type: one line
        naming the field (its JSON path, ``delta_pct.mean``) and what it holds.
    """
    import msgspec

    kind = kind_of(obj)
    schema = getattr(view_of(kind), "SCHEMA", None)
    if schema is None:
        return
    try:
        msgspec.convert(obj, type=schema)
    except msgspec.ValidationError as exc:
        raise _schema_error(obj, kind, str(exc)) from None


def _schema_error(obj: dict, kind: str, text: str) -> InputError:
    """msgspec's ``Expected `float`, got `str` - at `$.delta_pct.mean``` as an
    :class:`InputError` naming the field and the value it holds."""
    import re

    what, _, where = text.partition(" - at `")
    path = where.rstrip("`")
    path = path[2:] if path.startswith("$.") else "" if path == "$" else path
    missing = re.match(r"Object missing required field `(.+)`", what)
    if missing:
        field = (path + "." if path else "") + missing.group(1)
        return InputError(f"a saved {kind} result without this field (edited or cut short?)",
                          field=field)
    value = obj
    for key in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        try:
            value = value[int(key[1:-1])] if key.startswith("[") else value[key]
        except (KeyError, IndexError, TypeError, ValueError):
            value = None
            break
    # as the file spells it: null, "abc", {"a": 1} (not Python's None, 'abc', {'a': 1})
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    kind_shown = _JSON_TYPES.get(type(value), type(value).__name__)
    want = what.replace("Expected ", "expected ").replace("`", "")
    want = re.sub(r"\b(float|int|str|bool)\b",
                  lambda m: {"float": "number", "int": "integer", "str": "string",
                             "bool": "boolean"}[m[1]], want)
    return InputError(f"a saved result with a field of the wrong type or value (edited?): "
                      f"it holds {visible(shown)}"
                      + ("" if value is None or isinstance(value, bool) else f" ({kind_shown})")
                      + f"; {want}", field=path or None)


#: JSON's names of the Python types a JSON document reads as.
_JSON_TYPES = {str: "string", int: "number", float: "number", dict: "object", list: "array"}


def _refuse_constant(name: str):
    """``NaN``/``Infinity`` in a saved result: the writers never write them (``--json`` output
    is strict JSON), so the file was altered."""
    raise ValueError(f"{name} is not a value a saved result holds (strict JSON)")


#: Fields of a saved result that are probabilities or rates (their name, or its prefix/suffix).
_PROB_KEYS = ("assurance", "false_claim_rate", "wrong_sign_rate", "hdi_prob", "level",
              "p_stop_early")


def _is_prob_key(key: str) -> bool:
    return key.startswith("p_") or key in _PROB_KEYS or key.startswith("prob_")


def check_result(obj: dict) -> None:
    """Check the values of a saved result before rendering it: every probability or rate
    (``p_*``, ``prob_*``, ``assurance``, ``false_claim_rate``, ``hdi_prob``...) in [0, 1], every
    TPS mean or level (``mean_tps_*``, ``level_tps_*``, ``baseline_tps``) in the plausible
    range of :data:`planner.io.limits.TPS` (of a duration or size for a lower-is-better result) -- the rules the commands apply to what they write --
    and every name ``a``/``b``/``label`` free of control characters.

    Raises
    ------
    InputError
        Naming the field (its JSON path, ``policies[2].assurance``).
    """
    from planner.io.limits import BYTES, DURATION, TPS, has_control

    # a TPS result's means are rates; a lower-is-better one (latency, duration, size) takes
    # the widest of their ranges (the saved result does not always name its unit)
    lower = obj.get("direction") == "lower_is_better"
    level = TPS if not lower else type(TPS)("value", "", DURATION.low, BYTES.high)

    def walk(x, path: str) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                here = f"{path}.{k}" if path else str(k)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    if _is_prob_key(str(k)) and not 0.0 <= v <= 1.0:
                        raise InputError(f"a probability outside [0, 1]: {v!r}", field=here)
                    if (str(k).startswith(("mean_tps_", "level_tps_"))
                            or k == "baseline_tps"):
                        level.check(v, field=here)
                elif isinstance(v, str) and k in ("a", "b", "label", "config", "name") \
                        and has_control(v):
                    raise InputError(f"control character in {v!r}", field=here)
                walk(v, here)
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, f"{path}[{i}]")

    walk(obj, "")


#: Errors a view raises on a result that lacks a field it renders or holds one of another
#: type (a saved file edited by hand or cut short): reported as one line by
#: :func:`guarded`.
RENDER_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError)


def guarded(path: Path | str, fn, *args, **kwargs):
    """Call ``fn`` (a renderer) on a saved result read from ``path``; a missing or mistyped
    field becomes one :class:`InputError` naming the file and the field instead of a
    traceback (the commands' own results always hold every field their views read)."""
    try:
        return fn(*args, **kwargs)
    except InputError:
        raise
    except KeyError as exc:
        raise InputError(f"a saved {kind_of(args[0]) if args else ''} result without this "
                         f"field (edited or cut short?)", file=str(path),
                         field=str(exc.args[0]) if exc.args else None) from None
    except RENDER_ERRORS as exc:
        raise InputError(f"a saved result with a field of the wrong type or value "
                         f"(edited?): {type(exc).__name__}: {exc}", file=str(path)) from None
