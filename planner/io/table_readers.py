"""Reading the rows of a runs table's text: CSV (row by row), JSON (a list of objects, or
``{"runs": [...]}``) and JSONL (line by line), each row checked into a
:class:`planner.io.rows.Run`; the census of a table read for some configs only
(:class:`Census`, with fast paths for the plain rows of other configs); duplicate rows.

:func:`planner.io.runs.read_runs` chooses the reader; the header's columns are matched by
:mod:`planner.io.columns`; a summary row (``mean``, ``sd``, ``n`` ...) is read through
:mod:`planner.io.summaries`.
"""

from __future__ import annotations

import csv
import json
import re
from array import array
from operator import itemgetter
from sys import intern
from typing import Iterable

import numpy as np

from planner.errors import InputError
from planner.io._parse import HUGE_INTEGER, parse_number
from planner.io.columns import DecimalComma, header_map, renamed, sniff_delimiter
from planner.io.files import MAX_LINE_CHARS, bounded_lines
from planner.io.limits import PPL, REP, has_control, value_limit
from planner.io.rows import (
    KNOWN_COLUMNS,
    NAME_FIELDS,
    Run,
    is_warmup_rep,
    metric_lower_is_better,
    validate_run,
)

__all__ = ["Census", "check_duplicates", "parse_float", "read_csv", "read_json", "read_jsonl",
           "row_to_run"]

_KNOWN = frozenset(KNOWN_COLUMNS)


def parse_float(v, *, path, line, fld, positive=False, optional=False):
    return parse_number(v, path=path, line=line, field=fld, positive=positive,
                        optional=optional)


def _parse_bool(v, *, path, line, fld):
    if v is None or (isinstance(v, str) and v.strip() == ""):
        return None
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("1", "true", "yes", "y", "t"):
        return True
    if s in ("0", "false", "no", "n", "f"):
        return False
    raise InputError(f"not a boolean: {v!r}", file=path, line=line, field=fld)


def _not_a_name(v, k: str, path: str, line: int) -> str:
    """A name cell that is not a string (JSON records only): a number is read as its text;
    a list or object is refused (``["A"]`` is not the config ``A``)."""
    if isinstance(v, (list, dict)):
        raise InputError(f"a JSON {'list' if isinstance(v, list) else 'object'} where a name "
                         f"belongs: {str(v)[:40]}", file=path, line=line, field=k)
    return str(v)


def row_to_run(row: dict, *, path: str, line: int, rate: str = "tps") -> Run:
    cfg = row.get("config")
    if cfg is not None and type(cfg) is not str:
        cfg = _not_a_name(cfg, "config", path, line)
    if cfg is None or str(cfg).strip(" ") == "":
        raise InputError("missing config label", file=path, line=line, field="config")
    summary = None
    if ("mean" in row or "median" in row) and not str(row.get(rate) or "").strip():
        from planner.io.summaries import is_summary_row, summary_from_row

        if is_summary_row(row, rate):  # mean/sd/n or median/min/max/n: planner.io.summaries
            summary = summary_from_row(row, path=path, line=line)
            row = {**row, rate: summary.center, "rep": None}
    tps = parse_float(row.get(rate), path=path, line=line, fld=rate, positive=True)
    rep_raw = row.get("rep")
    rep = None
    if rep_raw is not None and str(rep_raw).strip() != "":
        # the one rule of a run index (limits.REP: a whole number 0 .. 10^6; 1e12 is a
        # timestamp in the wrong column), by the one number grammar; -1 marks a warm-up pass,
        # which validate_run accepts only on a phase=warmup row
        rep = -1 if is_warmup_rep(rep_raw) else REP.check(rep_raw, field="rep", file=path,
                                                             line=line)
    ppl = parse_float(row.get("ppl"), path=path, line=line, fld="ppl", optional=True)
    extra = {k: v for k, v in row.items()
             if k not in _KNOWN and k != rate and k is not None}
    get = row.get

    def s(k):  # names repeat across rows: one shared string each (a large table's memory)
        # only spaces are trimmed: a trailing tab, VT or NEL is a control character that
        # validate_run refuses (limits.check_name), not padding to drop silently
        v = get(k)
        return "" if v is None else intern(v.strip(" ") if type(v) is str else
                                           _not_a_name(v, k, path, line).strip(" "))

    run = Run(config=intern(str(cfg).strip(" ")), tps=tps, instance=s("instance"), session=s("session"),
              rep=rep, platform=s("platform"), metric=s("metric"), workload=s("workload"),
              phase=s("phase"), server=s("server"), ppl=ppl, timestamp=s("timestamp"),
              run_group=s("run_group"),
              cold=_parse_bool(row.get("cold"), path=path, line=line, fld="cold"),
              line=line, extra=extra,
              lower_is_better=metric_lower_is_better(s("metric") or rate))
    if summary is not None:
        run.extra["_summary_obj"] = summary  # expanded to its pseudo-runs by read_runs
    return validate_run(run, file=path, value_field=rate)


class Census:
    """Where a table read for some configs puts its rows (in place of a list of runs): the
    runs of the ``kept`` configs, the census key (:data:`CENSUS_COLUMNS`) of every row, and
    the hash of every row's duplicate key (:func:`_duplicate_key`)."""

    __slots__ = ("kept", "runs", "census", "hashes", "rows", "summary")

    def __init__(self, kept: frozenset):
        self.kept = kept
        self.runs: list[Run] = []
        self.census: dict = {}
        self.hashes = array("q")
        self.rows = 0
        self.summary = False

    def append(self, run: Run) -> None:
        """Count one validated run (keep it when its config is kept)."""
        self.rows += 1
        if "_summary_obj" in run.extra:
            self.summary = True
        key = (run.config, run.platform, run.metric, run.workload, run.run_group, run.phase)
        if key not in self.census:
            self.census[key] = None
        dup = _screen_key(run.config, run.instance, run.session, run.run_group, run.rep,
                          run.tps, run.metric, run.workload, run.phase, run.timestamp)
        if dup is not None:
            self.hashes.append(hash(dup))
        if run.config in self.kept:
            self.runs.append(run)

    def count_names(self, names: tuple, rep: int | None, tps: float) -> None:
        """Count one plain row of the fast paths from its :data:`NAME_FIELDS` values: the
        census key and the duplicate key :meth:`append` takes from a :class:`Run` (the rows
        are counted by the caller)."""
        key = (names[0], names[3], names[4], names[5], names[9], names[6])
        if key not in self.census:
            self.census[_intern_all(key)] = None
        dup = _screen_key(names[0], names[1], names[2], names[9], rep, tps, names[4], names[5],
                          names[6], names[8])
        if dup is not None:
            self.hashes.append(hash(dup))

    def maybe_duplicate(self) -> bool:
        """True when two rows' duplicate keys hash alike (a duplicate, or a hash collision)."""
        if len(self.hashes) < 2:
            return False
        h = np.frombuffer(self.hashes, dtype=np.int64).copy()
        h.sort()
        return bool((h[1:] == h[:-1]).any())


def read_csv(fh, path: str, tps_column: str | None = None, sink: Census | None = None,
              config_column: str | None = None) -> list[Run] | Census:
    """Rows of a CSV runs table from an open text file (read row by row); into ``sink``
    when given (:func:`_read_csv_census`). The field separator is sniffed from the header
    line (:func:`sniff_delimiter`); the column names are matched as :func:`header_map`
    says."""
    first = fh.readline(MAX_LINE_CHARS)
    if first.lstrip()[:1] in ("[", "{"):
        raise InputError(f"this CSV file holds JSON (it starts with "
                         f"'{first.lstrip()[:1]}'), not comma-separated values; name it .json "
                         "(a list of run objects) or .jsonl (one object per line)", file=path,
                         line=1)
    fh.seek(0)
    reader = csv.reader(bounded_lines(fh, path), delimiter=sniff_delimiter(first))
    header = next(reader, None)
    if header is None:
        raise InputError("empty file", file=path)
    names = [c.strip() for c in header]
    renames, rate = header_map(names, path, tps_column, config_column)
    if renames:
        names = [renames.get(c, c) or "" for c in names]
    if reader.dialect.delimiter == ";":
        reader = DecimalComma(reader, [i for i, c in enumerate(names)
                                        if c in (rate, "ppl", "mean", "sd", "median", "min",
                                                 "max")])
    width = len(header)
    keep = [(i, c) for i, c in enumerate(names) if c]
    runs = [] if sink is None else sink
    try:
        if sink is not None and "mean" not in names and "median" not in names and (
                rate == "tps" or rate not in _KNOWN):
            _read_csv_census(reader, sink, width, keep, path, rate)
        else:
            for row in reader:
                _csv_row(row, reader, runs, width, keep, path, rate)
    except csv.Error as exc:
        raise InputError(f"unreadable CSV: {exc}", file=path, line=reader.line_num) from None
    return runs


#: A plain decimal (``258.4442``, ``7``): a subset of :data:`planner.io._parse.NUMBER` whose
#: ``float`` is :func:`planner.io._parse.to_float`'s.
_PLAIN = re.compile(r"[0-9]+(?:\.[0-9]+)?").fullmatch
_BOOLS = frozenset(("1", "true", "yes", "y", "t", "0", "false", "no", "n", "f"))


def _fast_names(raw: tuple) -> tuple | None:
    """The checked names of a row's raw :data:`NAME_FIELDS` cells (spaces trimmed), or None
    when the row needs the full check (a control character, a blank config)."""
    if has_control("".join(raw)):
        return None
    names = tuple([v.strip(" ") for v in raw])
    return names if names[0] else None


def _read_csv_census(reader, sink: Census, width: int, keep: list, path: str,
                     rate: str) -> None:
    """The rows of a CSV table into ``sink``. A row of a config not kept, all of whose
    cells are plain (names without control characters, the value and ``ppl`` plain
    decimals inside their ranges, ``rep`` a whole number 0 .. 10^6, ``cold`` blank or a
    boolean word), is checked here without building its :class:`Run`: every such row is one
    that :func:`row_to_run` accepts, and its census key and duplicate key are the ones its
    run would have. Any other row (kept, blank, short, unusual) takes the full path
    (:func:`_csv_row`), so every error is worded as before."""
    idx = {c: i for i, c in keep}
    blank = width  # a "" appended to each row stands for the absent columns
    name_of = itemgetter(*[idx.get(f, blank) for f in NAME_FIELDS])
    it = idx[rate]
    ir, ip, ic = idx.get("rep", blank), idx.get("ppl", blank), idx.get("cold", blank)
    kept = sink.kept
    limits: dict = {}  # metric -> (low, high, low open) of its value (limits.value_limit)
    plain = _PLAIN
    rep_high, ppl_low, ppl_high = REP.high, PPL.low, PPL.high
    fast = 0
    for row in reader:
        # (a last cell ending in a line break: an unclosed '"', worded by _csv_row)
        if len(row) == width and not row[-1].endswith(("\n", "\r")):
            row.append("")
            names = name_of(row)
            j = "".join(names)
            # isprintable: no control character (nor any other unusual one, which the
            # exact check of _fast_names then looks at)
            if " " in j or not names[0] or not j.isprintable():
                names = _fast_names(names)  # trims spaces; None: the full path
            if names is not None and names[0] not in kept:
                lim = limits.get(names[4])
                if lim is None:
                    v = value_limit(names[4], metric_lower_is_better(names[4] or rate))
                    lim = limits[names[4]] = (v.low, v.high, v.low_open)
                low, high, low_open = lim
                t = row[it]
                if plain(t) is not None:
                    x = float(t)
                    if x > 0 and (x > low if low_open else x >= low) and x <= high:
                        r = row[ir]
                        ok = True
                        if r == "":
                            rep = None
                        elif len(r) <= 7 and r.isascii() and r.isdigit() and \
                                int(r) <= rep_high:
                            rep = int(r)
                        else:
                            ok = False
                        q = row[ip]
                        if q != "" and not (plain(q) is not None
                                            and ppl_low <= float(q) <= ppl_high):
                            ok = False
                        c = row[ic]
                        if c != "" and c.strip().lower() not in _BOOLS:
                            ok = False
                        if ok:
                            fast += 1
                            sink.count_names(names, rep, x)
                            continue
            row.pop()
        _csv_row(row, reader, sink, width, keep, path, rate)
    sink.rows += fast


def _intern_all(key: tuple) -> tuple:
    """``key`` with each string interned (a census key is kept for the table's life)."""
    return tuple([intern(v) for v in key])


def names_at(keep: list, i: int) -> str | None:
    """The column name of cell ``i`` (``keep``: the (index, name) pairs of the header)."""
    return next((c for j, c in keep if j == i), None)


def _csv_row(row, reader, runs, width, keep, path, rate) -> None:
    """Append the run of one CSV row (blank rows are skipped)."""
    if len(row) > width:
        raise InputError("more fields than the header", file=path, line=reader.line_num)
    if not any(v.strip() for v in row):
        return
    n = len(row)
    broken = [i for i, v in enumerate(row) if "\n" in v or "\r" in v]
    # csv reads an unclosed '"' to the end of the file as one cell: its row then looks
    # short ("field 'tps': missing value") or swallows the rows after it (a config "not in
    # the file"); such a cell is the row's last (it swallowed the rest) and ends with the
    # file's last line break. A closed quoted cell may end in a line break too: cells follow it
    if broken and broken[-1] == n - 1 and (n < width or row[-1].endswith(("\n", "\r"))):
        cell = row[broken[0]]
        start = reader.line_num - cell.count("\n") + (1 if cell.endswith("\n") else 0)
        raise InputError(f"a '\"' on line {start} is not closed: its cell runs over the line "
                         f"breaks to line {reader.line_num}", file=path, line=start,
                         field=names_at(keep, broken[0]))
    d = {c: row[i] for i, c in keep if i < n}
    runs.append(row_to_run(d, path=path, line=reader.line_num, rate=rate))


def read_json(text: str, path: str, tps_column: str | None = None,
               config_column: str | None = None) -> list[Run]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno) from None
    except ValueError:
        raise InputError(HUGE_INTEGER, file=path) from None
    if isinstance(data, dict) and "runs" in data:
        data = data["runs"]
    if not isinstance(data, list):
        raise InputError("expected a list of run objects or {\"runs\": [...]}", file=path)
    rate = tps_column or "tps"
    renames: dict = {}
    if data and all(isinstance(d, dict) for d in data):
        renames, rate = header_map(set().union(*[d.keys() for d in data]), path, tps_column,
                                    config_column)
    runs = []
    for k, d in enumerate(data, start=1):
        try:
            if not isinstance(d, dict):
                raise InputError("expected an object", file=path, line=k)
            if renames and not renames.keys().isdisjoint(d):
                d = renamed(d, renames)
            runs.append(row_to_run(d, path=path, line=k, rate=rate))
        except InputError as exc:
            if exc.line != k:
                raise
            # a JSON list may sit on one line: name its record, not a line number
            raise InputError(f"record {k} of the list: {exc.message}", file=path,
                             field=exc.field, remedy=exc.remedy) from None
    return runs


def read_jsonl(lines: Iterable[str], path: str, tps_column: str | None = None,
                sink: Census | None = None, config_column: str | None = None
                ) -> list[Run] | Census:
    """Rows of a JSONL runs table from an iterable of lines (an open file is read line by
    line). The rate column is known from the first record when it has ``tps`` (or
    ``tps_column`` is given), and every row becomes a run as it is read; otherwise the
    records are kept until the columns of the whole file are known. With ``sink``, the runs
    go to it (and it is returned)."""
    runs = [] if sink is None else sink
    pending: list[tuple[int, dict]] = []
    cols: set = set()
    rate: str | None = None
    renames: dict = {}
    fast = None
    for k, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", file=path, line=k) from None
        except ValueError:
            raise InputError(HUGE_INTEGER, file=path, line=k) from None
        if not isinstance(d, dict):
            raise InputError("expected a JSON object", file=path, line=k)
        if rate is None and not pending and (tps_column or "tps") in d and \
                (config_column or "config") in d:
            renames, rate = header_map(d.keys(), path, tps_column, config_column)
        if rate is not None:
            if renames and not renames.keys().isdisjoint(d):
                d = renamed(d, renames)
            if fast is None:
                fast = _fast_record if sink is not None and (
                    rate == "tps" or rate not in _KNOWN) else False
            if not (fast and fast(d, rate, sink)):
                runs.append(row_to_run(d, path=path, line=k, rate=rate))
        else:
            cols |= d.keys()
            pending.append((k, d))
    if pending:
        renames, rate = header_map(cols, path, tps_column, config_column)
        for k, d in pending:  # runs is empty: rows are pending only from the first record
            if renames and not renames.keys().isdisjoint(d):
                d = renamed(d, renames)
            runs.append(row_to_run(d, path=path, line=k, rate=rate))
    return runs


def _fast_record(d: dict, rate: str, sink: Census) -> bool:
    """Count a plain JSONL record of a config not kept in ``sink`` without building its
    :class:`Run` (the fast path of :func:`_read_csv_census` for a record: string names
    without control characters, a number or plain decimal value and ``ppl`` inside their
    ranges, ``rep`` a whole number 0 .. 10^6, ``cold`` blank, a boolean or a boolean word);
    False, with nothing counted, for any other record (it takes the full path)."""
    get = d.get
    if "mean" in d or "median" in d:
        return False
    raw = []
    for f in NAME_FIELDS:
        v = get(f)
        if v is None:
            v = ""
        elif type(v) is not str:
            return False
        raw.append(v)
    j = "".join(raw)
    if " " in j or not raw[0] or not j.isprintable():
        names = _fast_names(raw)
        if names is None:
            return False
    else:
        names = raw
    if names[0] in sink.kept:
        return False
    lim = value_limit(names[4], metric_lower_is_better(names[4] or rate))
    x = _fast_number(get(rate))
    if x is None or not (x > 0 and (x > lim.low if lim.low_open else x >= lim.low)
                         and x <= lim.high):
        return False
    r = get("rep")
    if r is None or r == "":
        rep = None
    elif type(r) is int and 0 <= r <= REP.high:
        rep = r
    elif type(r) is str and len(r) <= 7 and r.isascii() and r.isdigit() and int(r) <= REP.high:
        rep = int(r)
    else:
        return False
    q = get("ppl")
    if q is not None and q != "":
        y = _fast_number(q)
        if y is None or not PPL.low <= y <= PPL.high:
            return False
    c = get("cold")
    if not (c is None or c == "" or type(c) is bool
            or (type(c) is str and c.strip().lower() in _BOOLS)):
        return False
    sink.rows += 1
    sink.count_names(names, rep, x)
    return True


def _fast_number(v) -> float | None:
    """``v`` as :func:`planner.io._parse.to_float` reads it when it is a float, a modest int or
    a plain decimal string; None otherwise (or not finite)."""
    if type(v) is float:
        return v if v == v and v not in (float("inf"), float("-inf")) else None
    if type(v) is int:
        return float(v) if -10**15 < v < 10**15 else None
    if type(v) is str and _PLAIN(v) is not None:
        return float(v)
    return None


#: Columns that identify one run: two rows equal in all columns and carrying one of these
#: are the same run written twice. Without them (``config,tps``, or ``config,instance,tps``:
#: an instance or a session holds many runs), equal values are two runs whose rounded TPS
#: agree, which is common and legitimate.
_RUN_IDS = ("rep", "timestamp")


def _duplicate_key(r: Run) -> tuple | None:
    """The columns two rows share when they are one run written twice (None: a row without a
    rep or a timestamp, never a duplicate)."""
    return _dup_fields(r.config, r.instance, r.session, r.run_group, r.rep, r.tps, r.metric,
                       r.workload, r.phase, r.timestamp)


def _dup_fields(config, instance, session, run_group, rep, tps, metric, workload, phase,
                timestamp) -> tuple | None:
    """:func:`_duplicate_key` from the values themselves (the fast paths have no Run)."""
    if rep is None and not timestamp:
        return None
    return (config, instance, session, run_group, rep, tps, metric, workload, phase,
            timestamp)


def _rep_key(config, instance, session, run_group, rep, metric, workload, phase
             ) -> tuple | None:
    """The columns two runs claiming one rep share (None: no rep, or a warm-up pass, rep
    -1, of which there may be any number)."""
    if rep is None or rep < 0:
        return None
    return (config, instance, session, run_group, rep, metric, workload, phase)


def _screen_key(config, instance, session, run_group, rep, tps, metric, workload, phase,
                timestamp) -> tuple | None:
    """The key the fast paths hash to screen for what :func:`check_duplicates` refuses: a
    run's rep without its value (two runs claiming one rep, or one run written twice), else
    the duplicate key. Equal keys only send the table to the full read, which decides."""
    return (_rep_key(config, instance, session, run_group, rep, metric, workload, phase)
            or _dup_fields(config, instance, session, run_group, rep, tps, metric, workload,
                           phase, timestamp))


def check_duplicates(runs: list[Run], path: str) -> None:
    """Refuse a run written twice, and two runs that claim one rep.

    A row equal to an earlier one in every identifying column (its TPS included) is one run
    written twice; two rows of one config with the same instance, session, run group, phase
    and ``rep`` (0 or more; -1 marks warm-up passes, of which there may be any number) but
    different values cannot both be that rep (the cold first-run flag and the run order
    rest on it), so either is refused with the earlier line named.

    Raises
    ------
    InputError
        Naming the file, the later row's line and the field (``tps`` or ``rep``).
    """
    seen: dict[tuple, int] = {}
    reps: dict[tuple, tuple[int, float]] = {}
    for r in runs:
        key = _duplicate_key(r)
        if key is None:
            continue
        if key in seen:
            raise InputError(f"duplicate row (same config, instance, rep and TPS as line "
                             f"{seen[key]}); remove it or give it a distinct rep/instance",
                             file=path, line=r.line, field="tps")
        seen[key] = r.line
        rk = _rep_key(r.config, r.instance, r.session, r.run_group, r.rep, r.metric,
                      r.workload, r.phase)
        if rk is not None:
            if rk in reps:
                line, value = reps[rk]
                raise InputError(f"rep {r.rep} of {r.config!r}"
                                 + (f" on instance {r.instance!r}" if r.instance else "")
                                 + f" is already line {line} ({value:g}): two runs cannot be "
                                 "one rep; give each its own rep (or session/instance)",
                                 file=path, line=r.line, field="rep")
            reps[rk] = (r.line, r.tps)


