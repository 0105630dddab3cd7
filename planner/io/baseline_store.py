"""Saved baselines: a config's runs kept in a local SQLite store, to compare new runs against.

``planner baseline save NAME RUNS --config C`` keeps the runs of C (every column of the runs
table: platform, metric, workload, instance, session, rep, cold, ...) with the input file's
name and SHA-256; ``verdict --baseline NAME`` and ``rank --baseline NAME`` read them back as
a config of their own (:func:`load`).

The store is one SQLite file (the standard library's :mod:`sqlite3`), by default
``$XDG_DATA_HOME/spec-planner/baselines.sqlite``, else ``~/.local/share/spec-planner/
baselines.sqlite`` (the XDG Base Directory specification's default data home); with neither
``XDG_DATA_HOME`` nor ``HOME`` set the caller must name the file (:func:`default_path`
refuses to fall back on ``/``).

Writes are one transaction each (``BEGIN IMMEDIATE``: a second writer waits, up to
:data:`BUSY_TIMEOUT_S`, instead of interleaving), so an interrupted write leaves the store as
it was before it, and two processes saving at once both land. A file that is not a SQLite
database (garbage bytes, a truncated copy) is an :class:`~planner.errors.InputError` naming
the file, never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path

from planner.errors import InputError
from planner.io.rows import Run

__all__ = ["BUSY_TIMEOUT_S", "STORE_NAME", "Baseline", "default_path", "save", "load",
           "list_baselines", "delete", "baseline_config"]

#: Seconds a writer waits for another one's transaction before giving up (SQLite's busy
#: timeout).
BUSY_TIMEOUT_S = 30.0
#: The store's folder and file under the data home.
STORE_NAME = ("spec-planner", "baselines.sqlite")
_SCHEMA_VERSION = 1

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS baselines (
    name TEXT PRIMARY KEY,
    config TEXT NOT NULL,
    platform TEXT, metric TEXT, workload TEXT,
    source TEXT, sha256 TEXT,
    saved_at TEXT NOT NULL,
    n_runs INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    name TEXT NOT NULL REFERENCES baselines(name) ON DELETE CASCADE,
    k INTEGER NOT NULL,
    run TEXT NOT NULL,
    PRIMARY KEY (name, k)
);
"""


@dataclass(frozen=True)
class Baseline:
    """One saved baseline (without its runs: :func:`load` returns them)."""

    name: str
    config: str
    platform: str | None
    metric: str | None
    workload: str | None
    source: str | None
    sha256: str | None
    saved_at: str
    n_runs: int

    def to_dict(self) -> dict:
        return asdict(self)


def default_path(env: dict | None = None) -> Path:
    """The store's default file: ``$XDG_DATA_HOME/spec-planner/baselines.sqlite``, else
    ``$HOME/.local/share/spec-planner/baselines.sqlite``.

    Raises
    ------
    InputError
        Neither ``XDG_DATA_HOME`` nor ``HOME`` is set (a relative ``XDG_DATA_HOME`` is
        ignored, as the XDG specification says): the caller must name the store
        (field ``store``); it never falls back on ``/``.
    """
    env = os.environ if env is None else env
    xdg = env.get("XDG_DATA_HOME") or ""
    if xdg and os.path.isabs(xdg):
        return Path(xdg, *STORE_NAME)
    home = env.get("HOME") or ""
    if not home or not os.path.isabs(home) or os.path.realpath(home) == os.sep:
        raise InputError("no data folder: HOME and XDG_DATA_HOME are unset; name the "
                         "baseline store", field="store")
    return Path(home, ".local", "share", *STORE_NAME)


def _connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """An open, checked connection to the store at ``path``."""
    path = Path(path)
    if not path.exists():
        if not create:
            raise InputError("no baseline store here (save a baseline first)",
                             file=str(path), field="store")
        path.parent.mkdir(parents=True, exist_ok=True)
    elif path.is_dir():
        raise InputError("is a folder, not a baseline store", file=str(path), field="store")
    try:
        con = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as exc:
        raise InputError(f"cannot open the baseline store ({exc})", file=str(path),
                         field="store") from None
    try:
        con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        con.execute("PRAGMA foreign_keys = ON")
        tables = {r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            if not create:
                raise InputError("an empty baseline store (save a baseline first)",
                                 file=str(path), field="store")
            # one transaction: a second process creating the store at once waits, then
            # finds the tables (IF NOT EXISTS)
            con.executescript("BEGIN IMMEDIATE;" + _DDL
                              + f"INSERT OR IGNORE INTO meta VALUES ('schema', "
                                f"'{_SCHEMA_VERSION}'); COMMIT;")
        elif not {"baselines", "runs"} <= tables:
            raise InputError("a SQLite file that is not a baseline store (no baselines "
                             "table)", file=str(path), field="store")
        else:
            row = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() \
                if "meta" in tables else None
            if row is not None and row[0] != str(_SCHEMA_VERSION):
                raise InputError(f"baseline store of schema {row[0]} (this planner reads "
                                 f"{_SCHEMA_VERSION})", file=str(path), field="store")
    except sqlite3.DatabaseError as exc:
        con.close()
        raise InputError(f"not a baseline store: a corrupted or foreign file ({exc})",
                         file=str(path), field="store") from None
    except InputError:
        con.close()
        raise
    return con


def _guard(path: Path, fn):
    """Run ``fn`` and turn any SQLite error into one :class:`InputError` naming the file."""
    try:
        return fn()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"baseline store unreadable: corrupted or foreign file ({exc})",
                         file=str(path), field="store") from None
    except sqlite3.Error as exc:
        raise InputError(f"baseline store error ({exc})", file=str(path),
                         field="store") from None


def _one(values) -> str | None:
    vals = sorted({v for v in values if v})
    return vals[0] if len(vals) == 1 else (",".join(vals) if vals else None)


def _sha256(path: Path | None) -> str | None:
    if path is None or not Path(path).is_file():
        return None
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def save(store: Path, name: str, runs: list[Run], *, config: str, source: Path | None = None,
         saved_at: str, replace: bool = True) -> Baseline:
    """Save ``runs`` (one config's) as baseline ``name`` in one transaction.

    Parameters
    ----------
    store : Path
        The SQLite file (created with its folder when missing).
    name : str
        Baseline name (non-empty, no NUL).
    runs : list of Run
        The runs to keep (at least one).
    config : str
        Their config label in the source table.
    source : Path, optional
        The runs file: its name and SHA-256 are kept.
    saved_at : str
        Timestamp (ISO 8601) recorded with the baseline.
    replace : bool
        Overwrite a baseline of the same name (else an error).

    Returns
    -------
    Baseline

    Raises
    ------
    InputError
        A bad name, no runs, an existing name without ``replace``, a store that is not one.
    """
    if not name or "\x00" in name or name != name.strip():
        raise InputError(f"bad baseline name {name!r} (non-empty, no surrounding spaces)",
                         field="name")
    if not runs:
        raise InputError(f"config {config!r} has no runs to save", field="config")
    store = Path(store)
    con = _connect(store, create=True)
    b = Baseline(name, config, _one(r.platform for r in runs), _one(r.metric for r in runs),
                 _one(r.workload for r in runs), str(source) if source is not None else None,
                 _sha256(source), saved_at, len(runs))

    def tx():
        con.execute("BEGIN IMMEDIATE")
        try:
            old = con.execute("SELECT 1 FROM baselines WHERE name = ?", (name,)).fetchone()
            if old and not replace:
                raise InputError(f"baseline {name!r} exists", file=str(store), field="name")
            con.execute("DELETE FROM runs WHERE name = ?", (name,))
            con.execute("DELETE FROM baselines WHERE name = ?", (name,))
            con.execute("INSERT INTO baselines VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (b.name, b.config, b.platform, b.metric, b.workload, b.source,
                         b.sha256, b.saved_at, b.n_runs))
            con.executemany("INSERT INTO runs VALUES (?, ?, ?)",
                            [(name, k, json.dumps(_run_dict(r), sort_keys=True))
                             for k, r in enumerate(runs)])
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise

    try:
        _guard(store, tx)
    finally:
        con.close()
    return b


def _run_dict(r: Run) -> dict:
    d = {k: getattr(r, k) for k in Run.__slots__ if k not in ("extra", "line")}
    return d


def _row(t) -> Baseline:
    return Baseline(*t)


def list_baselines(store: Path) -> list[Baseline]:
    """Every saved baseline, by name.

    Raises
    ------
    InputError
        No store at ``store``, or not a baseline store.
    """
    con = _connect(Path(store), create=False)
    try:
        return _guard(store, lambda: [_row(t) for t in con.execute(
            "SELECT name, config, platform, metric, workload, source, sha256, saved_at, "
            "n_runs FROM baselines ORDER BY name")])
    finally:
        con.close()


def load(store: Path, name: str) -> tuple[Baseline, list[Run]]:
    """Baseline ``name`` and its runs, in the order saved.

    Raises
    ------
    InputError
        No such baseline (the known names listed), or a store that is not one.
    """
    con = _connect(Path(store), create=False)
    try:
        def get():
            row = con.execute(
                "SELECT name, config, platform, metric, workload, source, sha256, saved_at, "
                "n_runs FROM baselines WHERE name = ?", (name,)).fetchone()
            if row is None:
                names = [r[0] for r in con.execute("SELECT name FROM baselines ORDER BY name")]
                raise InputError(f"no baseline {name!r} (saved: "
                                 f"{', '.join(names) if names else 'none'})",
                                 file=str(store), field="baseline")
            runs = [Run(**json.loads(t[0])) for t in con.execute(
                "SELECT run FROM runs WHERE name = ? ORDER BY k", (name,))]
            return _row(row), runs

        try:
            return _guard(store, get)
        except InputError:
            raise
        except (TypeError, ValueError) as exc:  # a run row edited by hand
            raise InputError(f"baseline {name!r} holds an unreadable run ({exc})",
                             file=str(store), field="baseline") from None
    finally:
        con.close()


def delete(store: Path, name: str) -> bool:
    """Remove baseline ``name`` (True when it existed), in one transaction."""
    con = _connect(Path(store), create=False)
    try:
        def tx():
            con.execute("BEGIN IMMEDIATE")
            try:
                n = con.execute("DELETE FROM baselines WHERE name = ?", (name,)).rowcount
                con.execute("DELETE FROM runs WHERE name = ?", (name,))
                con.execute("COMMIT")
                return n > 0
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
        return _guard(store, tx)
    finally:
        con.close()


def baseline_config(name: str) -> str:
    """The config label a baseline's runs take in a comparison: ``baseline:NAME``."""
    return f"baseline:{name}"


def as_config(runs: list[Run], name: str, run_group: str | None = None) -> list[Run]:
    """The baseline's runs relabelled as config :func:`baseline_config` ``(name)``, their
    instances and sessions kept as saved (not prefixed: a baseline run shares its instance
    with new runs of the same instance name and run group, as the same rows in one table
    would), and ``run_group`` set when given (so that a run-group filter of the new runs
    keeps them)."""
    from dataclasses import replace as _replace

    cfg = baseline_config(name)
    out = []
    for r in runs:
        out.append(_replace(r, config=cfg,
                            run_group=run_group if run_group is not None else r.run_group))
    return out
