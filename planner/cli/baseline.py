"""``planner baseline``: save, list and show baselines (a config's runs kept to compare
against with ``verdict --baseline`` and ``rank --baseline``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from planner.cli._options import (ConfigColumn, Format, Instance, Json, Metric, Platform, RunGroup,
                                  Store, TABLE_OPTIONS, TpsColumn, Workload, noted)
from planner.errors import InputError

_OPTIONS = {"config": "--config", "store": "--store", "name": "NAME",
            "baseline": "NAME", **TABLE_OPTIONS}
_ACTIONS = ("save", "list", "show", "delete", "export")


def register(app: typer.Typer) -> None:
    """Register this module's command(s) on the ``planner`` typer app."""
    @app.command()
    def baseline(
        action: str = typer.Argument(..., help="save NAME RUNS --config C | list | show NAME "
                                     "| delete NAME | export NAME -o RUNS.csv"),
        name: Optional[str] = typer.Argument(None, help="Baseline name."),
        runs: Optional[Path] = typer.Argument(None, help="save: the runs table holding the "
                                              "config."),
        config: Optional[str] = typer.Option(None, "--config", help="save: the config whose "
                                             "runs are kept."),
        store: Store = None,
        output: Optional[Path] = typer.Option(None, "-o", "--output", help="export: the runs "
                                              "CSV to write (feed it to planner calibrate)."),
        platform: noted(Platform, '(save only)') = None,
        metric: noted(Metric, '(save only)') = None,
        workload: noted(Workload, '(save only)') = None,
        run_group: noted(RunGroup, '(save only)') = None,
        format: Format = None,
        tps_column: TpsColumn = None,
        config_column: ConfigColumn = None,
        instance: Instance = None,
        as_json: Json = False,
    ) -> None:
        """Save, list and show baselines: a config's runs kept to compare against."""
        from models.errors import ModelInputError
        from planner.cli._options import as_option

        try:
            _baseline(**locals())
        except ModelInputError as exc:
            raise as_option(exc, _OPTIONS) from None


def _baseline(action, name, runs, config, store, output, platform, metric, workload,
              run_group, format, tps_column, config_column, instance, as_json, **_) -> None:
    from datetime import datetime, timezone

    from planner.io import baseline_store as bs

    if action not in _ACTIONS:
        raise InputError(f"unknown action {action!r} ({', '.join(_ACTIONS)})", field="ACTION")
    path = store if store is not None else bs.default_path()
    if action == "list":
        items = [b.to_dict() for b in bs.list_baselines(path)]
        if as_json:
            print(json.dumps({"store": str(path), "baselines": items}, indent=2))
            return
        print(f"{len(items)} baseline(s) in {path}")
        for b in items:
            print(f"  {b['name']}: {b['config']} ({b['n_runs']} runs; {b['platform'] or '-'}"
                  f", {b['metric'] or '-'}, {b['workload'] or '-'}; saved {b['saved_at']})")
        return
    if not name:
        raise InputError(f"baseline {action} needs a NAME", field="NAME")
    if action == "save":
        if runs is None or config is None:
            raise InputError("baseline save NAME RUNS --config C: give the runs table and "
                             "the config", field="--config" if runs is not None else "RUNS")
        from planner.io.runs import read_runs

        table = read_runs(runs, format=format, metric=metric, tps_column=tps_column,
                          instance=instance, config_column=config_column)
        rows = table.filter(platform=platform, metric=metric, workload=workload,
                            run_group=run_group, blank_platform=True)
        if config not in rows.configs:
            from planner.io.hints import closest

            near = closest(config, rows.configs)
            raise InputError(f"no config {config!r} in the rows kept"
                             + (f"; did you mean {near!r}?" if near else ""),
                             file=str(runs), field="--config")
        kept = rows.measured().select([config]).runs
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        # saving under a name in use replaces that baseline (as criterion's
        # --save-baseline): say so, with what it held, instead of a plain "saved"
        old = next((x for x in (bs.list_baselines(path) if Path(path).is_file() else [])
                    if x.name == name), None)
        b = bs.save(path, name, kept, config=config, source=runs, saved_at=stamp)
        if as_json:
            print(json.dumps({"store": str(path), **b.to_dict(),
                              "replaced": old.to_dict() if old else None}, indent=2))
        else:
            print(f"{'replaced' if old else 'saved'} baseline {name!r}: {b.n_runs} runs of "
                  f"{config} ({b.platform or '-'}, {b.metric or '-'}, {b.workload or '-'}) "
                  f"in {path}" + (f" (it held {old.n_runs} runs of {old.config}, saved "
                                  f"{old.saved_at})" if old else ""))
        return
    if action == "delete":
        gone = bs.delete(path, name)
        if not gone:
            raise InputError(f"no baseline {name!r}", file=str(path), field="NAME")
        print(f"deleted baseline {name!r} from {path}")
        return
    b, kept = bs.load(path, name)
    if action == "export":
        if output is None:
            raise InputError("baseline export NAME -o RUNS.csv: name the CSV to write",
                             field="--output")
        from planner.io.writer import write_runs_csv
        from planner.report.output import guard_outputs

        guard_outputs([("--output", output)], [path])
        write_runs_csv(kept, output)
        print(f"wrote {len(kept)} runs of baseline {name!r} to {output}")
        return
    out = {"store": str(path), **b.to_dict(),
           "runs": [{"instance": r.instance or None, "session": r.session or None,
                     "rep": r.rep, "cold": r.cold, "value": r.tps} for r in kept]}
    if as_json:
        print(json.dumps(out, indent=2))
        return
    print(f"baseline {b.name!r}: config {b.config}, {b.n_runs} runs, platform "
          f"{b.platform or '-'}, metric {b.metric or '-'}, workload {b.workload or '-'}")
    print(f"  from {b.source or '-'} (sha256 {(b.sha256 or '-')[:12]}), saved {b.saved_at}")
    vals = [r.tps for r in kept]
    print(f"  values: {', '.join(f'{v:g}' for v in vals[:12])}"
          + (f" ... ({len(vals)} in all)" if len(vals) > 12 else ""))


def baseline_runs(store: Path | None, name: str, run_group: str | None = None):
    """(config label, runs) of saved baseline ``name``: its runs relabelled
    ``baseline:NAME`` (:func:`planner.io.baseline_store.as_config`), ``run_group`` set when
    the new runs are filtered by one; ``verdict --baseline`` makes them config A and ``rank
    --baseline`` one more config.

    Raises
    ------
    InputError
        No store, no such baseline, a corrupted store (naming the file), no data folder.
    """
    from planner.io.baseline_store import as_config, baseline_config, default_path, load

    path = store if store is not None else default_path()
    _, runs = load(path, name)
    return baseline_config(name), as_config(runs, name, run_group)


def check_matches(table, base_runs, name: str, *, platform=None, metric=None, workload=None,
                  run_group=None) -> None:
    """Refuse a saved baseline whose platform, metric or workload is not the new runs'.

    ``table`` is the new runs (a :class:`planner.io.table.RunsTable`, the baseline not yet
    appended), read with the same filters as the comparison. Without this check the mix was
    the table's own "rows mix" error, which named line 0 of the new runs' file for a row that
    came from the store.

    Raises
    ------
    InputError
        The baseline's value of a column differs from every value of the rows kept (names
        both and the option that selects one; field ``--baseline``).
    """
    try:
        kept = table.filter(platform=platform, metric=metric, workload=workload,
                            run_group=run_group, blank_platform=True).runs
    except InputError:
        return  # the comparison names the empty selection itself
    from planner.io.platforms import canonical_platform

    for col in ("platform", "metric", "workload"):
        new = sorted({getattr(r, col) for r in kept if getattr(r, col)})
        old = sorted({getattr(r, col) for r in base_runs if getattr(r, col)})
        same = (lambda v: canonical_platform(v)) if col == "platform" else (lambda v: v)
        if new and old and not {same(v) for v in old} & {same(v) for v in new}:
            raise InputError(f"baseline {name!r} holds {col} {', '.join(old)}; the rows kept "
                             f"of {table.path} hold {', '.join(new)}: compare within one "
                             f"{col} (--{col}) or save a baseline of it",
                             field="--baseline")


def appended(table, runs):
    """``table`` (a :class:`planner.io.table.RunsTable`) with ``runs`` appended."""
    from planner.io.table import RunsTable

    return RunsTable(list(table.runs) + list(runs), table.path)
