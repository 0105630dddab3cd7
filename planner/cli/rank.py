"""``planner rank``: which of N configs is fastest (one joint fit, P(fastest) for each)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from planner.cli._options import (AaRuns, Cold, ConfigColumn, Cv, CvInstance, Format, Html,
                                  Instance, Json, LowerIsBetter, Md, Metric, Platform, Prior, Rope,
                                  RunGroup, Seed, Store, TABLE_OPTIONS, TpsColumn, Workload, noted)
from planner.defaults import DEFAULT_ROPE

#: Plain field of the decision layer -> option of ``planner rank``.
_OPTIONS = {"rope": "--rope", "configs": "--configs", "prior": "--prior", "cv": "--cv",
            "cv_instance": "--cv-instance", "aa_runs": "--aa-runs", "seed": "--seed",
            "draws": "--draws", "baseline": "--baseline", "store": "--store",
            "run_group": "--run-group", "workload": "--workload", **TABLE_OPTIONS}

BASELINE_HELP = ("A saved baseline (planner baseline save) to rank with the configs, as "
                 "config baseline:NAME.")


def _draws_range() -> str:
    from planner.io.limits import DRAWS

    return DRAWS.describe()


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
        rope: noted(Rope, "(at the best's level)") = DEFAULT_ROPE,
        prior: Prior = None,
        cv: Cv = None,
        cv_instance: CvInstance = None,
        aa_runs: AaRuns = None,
        platform: noted(Platform, 'Its noise prior applies.') = None,
        metric: Metric = None,
        workload: Workload = None,
        run_group: RunGroup = None,
        format: Format = None,
        tps_column: TpsColumn = None,
        config_column: ConfigColumn = None,
        instance: Instance = None,
        cold: Cold = None,
        lower_is_better: LowerIsBetter = None,
        baseline: Optional[str] = typer.Option(None, "--baseline", help=BASELINE_HELP),
        store: Store = None,
        draws: int = typer.Option(20000, "--draws", help="Posterior draws for P(fastest), "
                                  f"{_draws_range()}."),
        seed: noted(Seed, '(the P(fastest) draws)') = 0,
        as_json: Json = False,
        md: Md = None,
        html: noted(Html, '(a forest plot of the configs and their runs)') = None,
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
    check_limit("draws", draws, field="--draws")   # the project's error, not Click's
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
