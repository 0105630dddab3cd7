"""``planner ingest`` and ``planner calibrate``: build and learn from runs tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from planner.cli._options import (ConfigColumn, Format, Html, Instance, Json, Md, Metric, Platform,
                                  TABLE_OPTIONS, TpsColumn, Workload, noted)
from planner.errors import InputError


def register(app: typer.Typer) -> None:
    """Register this module's command(s) on the ``planner`` typer app."""
    @app.command()
    def ingest(
        folder: Path = typer.Argument(..., help="Folder of results: one sub-folder per config of "
                                      "vLLM / SGLang / pyperf / hyperfine result files, or "
                                      "harness summary.json folders."),
        output: Path = typer.Option(..., "-o", "--output", help="Runs CSV to write."),
        platform: Optional[str] = typer.Option(None, "--platform", help="Platform of every run "
                                               "(harness default hf-a10g-small)."),
        metric: Optional[str] = typer.Option(None, "--metric", help="Field of the result files "
                                             "to read (default: output-token throughput; "
                                             "latencies such as mean_tpot_ms are "
                                             "lower-is-better). Harness: the metric label "
                                             "(default bench_serving)."),
        workload: Optional[str] = typer.Option(None, "--workload", help="Workload of every run "
                                               "(harness default 128x512)."),
        format: Format = None,
        instance: Instance = None,
    ) -> None:
        """Walk result folders and write a runs table (one row per run)."""
        from planner.io.ingest import ingest as do_ingest
        from planner.io.writer import write_runs_csv
        from planner.results.counts import count

        from planner.report.output import guard_outputs

        guard_outputs([("--output", output, "csv")], [folder])
        runs, stats = do_ingest(folder, platform=platform, metric=metric, workload=workload,
                                format=format, instance=instance)
        if not runs:
            raise InputError(f"all {stats['found']} runs are marked completed: false; nothing "
                             "to write", file=str(folder), field="completed")
        write_runs_csv(runs, output, field="--output")
        skipped = (f"{stats['skipped_incomplete']} incomplete skipped"
                   if "skipped_incomplete" in stats
                   else count(stats['skipped_unrecognised'], "unrecognised file") + " skipped"
                   + _named(stats.get("skipped_files", [])))
        from planner.report.escape import visible  # names from the folder, made inert

        n_cfg = len({r.config for r in runs})
        tail = "" if skipped.startswith("0 ") else f" ({skipped})"
        print(visible(f"wrote {count(len(runs), 'run')} of {count(n_cfg, 'config')} to "
                      f"{output}{tail}"), file=sys.stderr)
        for line in _ingest_notes(runs, stats):
            print(visible(f"note: {line}"), file=sys.stderr)

    @app.command()
    def calibrate(
        ctx: typer.Context,
        runs: Path = typer.Argument(..., help="Runs table with repeated runs, or a vLLM / "
                                    "SGLang / pyperf / hyperfine result file."),
        output: Optional[Path] = typer.Option(None, "-o", "--output",
                                              help="Write the noise prior JSON here (use it "
                                              "with --prior FILE)."),
        platform: noted(Platform, 'The table must hold one.') = None,
        metric: Metric = None,
        workload: Workload = None,
        format: Format = None,
        tps_column: TpsColumn = None,
        config_column: ConfigColumn = None,
        instance: Instance = None,
        keep_cold: bool = typer.Option(False, "--keep-cold", help="Keep cold first runs "
                                       "(dropped by default: the noise model is for warm "
                                       "runs)."),
        max_df: float = typer.Option(10.0, "--max-df", help="Cap on the prior's degrees of "
                                     "freedom (0 < df <= 100,000; a higher cap lets this "
                                     "table outweigh a new user's own runs)."),
        as_json: noted(Json, '(the prior plus its summary)') = False,
        md: Md = None,
        html: Html = None,
    ) -> None:
        """Fit the noise prior (sigma_instance, sigma_run) from your own repeated runs."""
        from planner.cli._options import command_params
        from planner.decide.calibrate import calibrate as do_calibrate
        from planner.report.output import emit, guard_outputs, input_record

        params = command_params(ctx, locals())  # what the input record shows
        from planner.io.runs import read_runs

        from planner.io.limits import check as check_limit

        check_limit("max_df", max_df, field="--max-df")
        guard_outputs([("--md", md), ("--html", html), ("--output", output, "json")], [runs])
        from models.errors import ModelInputError
        from planner.cli._options import as_option

        try:
            table = read_runs(runs, format=format, metric=metric, tps_column=tps_column,
                              instance=instance, config_column=config_column).filter(
                platform=platform, metric=metric, workload=workload)
        except ModelInputError as exc:
            raise as_option(exc, TABLE_OPTIONS) from None
        if len(table) == 0:
            raise InputError("no rows left after --platform/--metric/--workload filters",
                             file=str(runs))
        try:
            res = do_calibrate(table, drop_cold=not keep_cold, max_df=max_df)
        except ModelInputError as exc:
            raise as_option(exc, TABLE_OPTIONS) from None
        if output is not None:
            from planner.io.files import write_atomic

            guard_outputs([("--output", output, "json")], [runs])
            write_atomic(output, json.dumps(res, indent=2), field="--output")
        emit(res, as_json=as_json, md=md, html=html, inputs=[runs],
             record=input_record(params))
        if output is not None and not as_json:
            print(f"  prior written to {output}")


def _ingest_notes(runs, stats: dict) -> list[str]:
    """What the table written holds that a reader should know: configs gathered from
    several folders, metrics mixed, tools' result files the harness mode did not read."""
    from collections import Counter

    from planner.results.counts import count

    notes = [f"config {c!r} gathers runs from {len(fs)} folders ({', '.join(f + '/' for f in fs)}"
             "): one folder per config is the layout read; rename one if they are different "
             "configs" for c, fs in sorted(stats.get("merged", {}).items())]
    metrics = Counter(r.metric for r in runs)
    if len(metrics) > 1:
        notes.append("runs of " + str(len(metrics)) + " metrics in one table ("
                     + ", ".join(f"{m or '(none)'}: {n}" for m, n in sorted(metrics.items()))
                     + "): a comparison keeps one (--metric)")
    other = stats.get("other_results") or []
    if other:
        notes.append(f"{count(len(other), 'benchmark result file')} beside the summary.json "
                     f"files not read{_named(other)}: ingest them on their own (--format)")
    return notes


def _named(files: list[str], most: int = 5) -> str:
    """``: a.json, b.json and 3 more``: the skipped files, named (up to ``most``)."""
    if not files:
        return ""
    more = f" and {len(files) - most} more" if len(files) > most else ""
    return ": " + ", ".join(files[:most]) + more
