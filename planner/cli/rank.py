"""``planner rank``: which of N configs is fastest (one joint fit, P(fastest) for each)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from planner.cli._options import (CONFIG_COLUMN_HELP, FORMAT_HELP, INSTANCE_HELP,
                                  TABLE_OPTIONS, TPS_COLUMN_HELP)
from planner.cli.baseline import STORE_HELP
from planner.defaults import DEFAULT_ROPE

#: Plain field of the decision layer -> option of ``planner rank``.
_OPTIONS = {"rope": "--rope", "configs": "--configs", "prior": "--prior", "cv": "--cv",
            "cv_instance": "--cv-instance", "aa_runs": "--aa-runs", "seed": "--seed",
            "draws": "--draws", "baseline": "--baseline", "store": "--store",
            "run_group": "--run-group", "workload": "--workload", **TABLE_OPTIONS}

BASELINE_HELP = ("A saved baseline (planner baseline save) to rank with the configs, as "
                 "config baseline:NAME.")

def split_configs(text: str | None) -> list[str] | None:
    """The configs of ``--configs A,B,C`` (None: every config the filters keep).

    Raises
    ------
    InputError
        An empty item, fewer than two configs.
    """
    if text is None:
        return None
    from planner.errors import InputError

    items = [c.strip() for c in text.split(",")]
    if any(not c for c in items):
        raise InputError(f"empty config name in {text!r}", field="--configs")
    return items


def register(app: typer.Typer) -> None:
    """Register this module's command(s) on the ``planner`` typer app."""
    @app.command()
    def rank(
        ctx: typer.Context,
        runs: Path = typer.Argument(..., help="Runs table (CSV/JSON/JSONL) or a tool's "
                                    "result file."),
        configs: Optional[str] = typer.Option(None, "--configs", help="Configs to rank, "
                                              "comma-separated (default: every config the "
                                              "filters keep)."),
        rope: str = typer.Option(DEFAULT_ROPE, "--rope", help="ROPE half-width: '0.5%' or "
                                 "TPS '1.5' (at the best's level)."),
        prior: Optional[str] = typer.Option(None, "--prior", help="Noise prior: auto, weak, a "
                                            "platform name or a calibrate JSON file."),
        cv: Optional[str] = typer.Option(None, "--cv", help="Stated run-to-run CV."),
        cv_instance: Optional[str] = typer.Option(None, "--cv-instance",
                                                  help="Stated between-instance CV."),
        aa_runs: Optional[str] = typer.Option(None, "--aa-runs", help="A/A runs giving the "
                                              "noise."),
        platform: Optional[str] = typer.Option(None, "--platform", help="Keep rows of this "
                                               "platform (its noise prior)."),
        metric: Optional[str] = typer.Option(None, "--metric", help="Keep rows of this metric."),
        workload: Optional[str] = typer.Option(None, "--workload", help="Keep rows of this "
                                               "workload."),
        run_group: Optional[str] = typer.Option(None, "--run-group", help="Keep rows of this "
                                                "run_group (experiment)."),
        format: Optional[str] = typer.Option(None, "--format", help=FORMAT_HELP),
        tps_column: Optional[str] = typer.Option(None, "--tps-column", help=TPS_COLUMN_HELP),
        config_column: Optional[str] = typer.Option(None, "--config-column",
                                                    help=CONFIG_COLUMN_HELP),
        instance: Optional[str] = typer.Option(None, "--instance", help=INSTANCE_HELP),
        cold: Optional[bool] = typer.Option(None, "--cold/--no-cold", help="Model the "
                                            "cold-start indicator (default: when a run is "
                                            "flagged)."),
        lower_is_better: Optional[bool] = typer.Option(
            None, "--lower-is-better/--higher-is-better", help="The metric's direction "
            "(default: from the metric or column name)."),
        baseline: Optional[str] = typer.Option(None, "--baseline", help=BASELINE_HELP),
        store: Optional[Path] = typer.Option(None, "--store", help=STORE_HELP),
        draws: int = typer.Option(20000, "--draws", min=100, max=1_000_000,
                                  help="Posterior draws for P(fastest)."),
        seed: int = typer.Option(0, "--seed", min=0, help="Seed of the P(fastest) draws."),
        as_json: bool = typer.Option(False, "--json", help="Print the JSON result."),
        md: Optional[Path] = typer.Option(None, "--md", help="Also write a Markdown report."),
        html: Optional[Path] = typer.Option(None, "--html", help="Also write an HTML report "
                                            "(a forest plot of the configs and their runs)."),
    ) -> None:
        """Rank N configs: P(fastest), each mean's HDI and its gap to the best."""
        from models.errors import ModelInputError
        from planner.cli._options import as_option, command_params

        params = command_params(ctx, locals())
        try:
            _rank(**locals())
        except ModelInputError as exc:
            raise as_option(exc, _OPTIONS) from None


def _rank(runs, configs, rope, prior, cv, cv_instance, aa_runs, platform, metric, workload,
          run_group, format, tps_column, config_column, instance, cold, lower_is_better,
          baseline, store, draws, seed, as_json, md, html, params=None, **_) -> None:
    from planner.decide.comparison import Selection
    from planner.decide.rank import from_table, rank as do_rank
    from planner.io.limits import check as check_limit
    from planner.io.runs import read_runs
    from planner.report.output import emit, guard_outputs, input_record

    check_limit("seed", seed, field="--seed")
    guard_outputs([("--md", md), ("--html", html)], [runs, store])
    names = split_configs(configs)
    table = read_runs(runs, format=format, metric=metric, tps_column=tps_column,
                      instance=instance, config_column=config_column)
    base_cfg = None
    if baseline is not None:
        from planner.cli.baseline import appended, baseline_runs

        from planner.cli.baseline import check_matches

        base_cfg, base_runs = baseline_runs(store, baseline, run_group)
        check_matches(table, base_runs, baseline, platform=platform, metric=metric,
                      workload=workload, run_group=run_group)
        table = appended(table, base_runs)
        if names is not None and base_cfg not in names:
            names = [base_cfg] + names
    sel = Selection(platform, metric, workload, run_group)
    if names is None and base_cfg is not None:
        kept = table.filter(platform=platform, metric=metric, workload=workload,
                            run_group=run_group, blank_platform=True).measured().configs
        names = [base_cfg] + [c for c in kept if c != base_cfg]
    fld = from_table(table, names, selection=sel, prior=prior, cv=cv, cv_instance=cv_instance,
                     aa_runs=aa_runs, use_cold=cold, lower_is_better=lower_is_better,
                     value_name=tps_column, baseline=base_cfg)
    res = do_rank(fld, rope=rope, seed=seed, draws=draws)
    emit(res.to_dict(), as_json=as_json, md=md, html=html, inputs=[runs],
         record=input_record(params or {}))
