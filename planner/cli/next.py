"""``planner next``: what to buy next (or stop), and ``--watch DIR`` to re-evaluate as runs
land."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from planner.cli._options import (AaRuns, ConfigColumn, Cv, CvInstance, Format, Html, Instance,
                                  Json, LowerIsBetter, Md, Metric, Platform, Prior, Rope, RunGroup,
                                  Seed, Store, TABLE_OPTIONS, TpsColumn, Workload, noted)
from planner.defaults import DEFAULT_ASSURANCE, DEFAULT_ROPE
from planner.errors import InputError

_OPTIONS = {"rope": "--rope", "a": "--a", "b": "--b", "configs": "--configs",
            "prior": "--prior", "cv": "--cv", "cv_instance": "--cv-instance",
            "aa_runs": "--aa-runs", "seed": "--seed", "sims": "--sims",
            "max_runs": "--plan-max-runs", "designs": "--design", "target": "--assurance",
            "watch": "--watch", "interval": "--interval", "timeout": "--timeout",
            "store": "--store", "baseline": "--baseline", **TABLE_OPTIONS}


def register(app: typer.Typer) -> None:
    """Register this module's command(s) on the ``planner`` typer app."""
    @app.command(name="next")
    def next_(
        ctx: typer.Context,
        runs: Optional[Path] = typer.Argument(None, help="Runs table (CSV/JSON/JSONL) or a "
                                              "tool's result file; optional with --watch."),
        a: Optional[str] = typer.Option(None, "--a", help="Config A."),
        b: Optional[str] = typer.Option(None, "--b", help="Config B."),
        configs: Optional[str] = typer.Option(None, "--configs", help="Rank these configs "
                                              "and advise on the best against its closest "
                                              "rival (instead of --a/--b)."),
        rope: Rope = DEFAULT_ROPE,
        prior: Prior = None,
        cv: Cv = None,
        cv_instance: CvInstance = None,
        aa_runs: AaRuns = None,
        platform: noted(Platform, 'Its noise prior and cost model apply.') = None,
        metric: Metric = None,
        workload: Workload = None,
        run_group: RunGroup = None,
        format: Format = None,
        tps_column: TpsColumn = None,
        config_column: ConfigColumn = None,
        instance: Instance = None,
        lower_is_better: LowerIsBetter = None,
        design: str = typer.Option("auto", "--design", help="Designs of the plan: auto "
                                   "(separate and paired where the platform allows) or a "
                                   "list of separate, paired."),
        plan_max_runs: int = typer.Option(100, "--plan-max-runs", min=1, max=200,
                                          help="Cap on runs per arm of the designs "
                                          "(repeats --max-runs)."),
        assurance: float = typer.Option(DEFAULT_ASSURANCE, "--assurance",
                                        help="Assurance the plan's recommendation reaches."),
        sims: int = typer.Option(200, "--sims", min=100, max=20000,
                                 help="Simulated outcomes per action (repeats --sims)."),
        seed: Seed = 0,
        watch: Optional[Path] = typer.Option(None, "--watch", help="A results folder (any "
                                             "format planner ingest reads): re-evaluate as "
                                             "files land; exit 0 decided, 3 budget spent, "
                                             "4 timeout."),
        interval: float = typer.Option(10.0, "--interval", min=0.01, help="--watch: seconds "
                                       "between polls."),
        timeout: Optional[float] = typer.Option(None, "--timeout", min=0.0, help="--watch: "
                                                "give up after this many seconds (exit 4)."),
        max_usd: Optional[float] = typer.Option(None, "--max-usd", min=0.0, help="--watch: "
                                                "the budget in $ of the runs that land."),
        max_runs: Optional[int] = typer.Option(None, "--max-runs", min=1, help="--watch: "
                                               "the budget in runs that land."),
        baseline: Optional[str] = typer.Option(None, "--baseline", help="A saved baseline "
                                               "as config A."),
        store: Store = None,
        as_json: Json = False,
        md: Md = None,
        html: Html = None,
    ) -> None:
        """What to buy next: each action's cost to a decision and P(decided)."""
        from models.errors import ModelInputError
        from planner.cli._options import as_option, command_params

        params = command_params(ctx, locals())
        try:
            rc = _next(**locals())
        except ModelInputError as exc:
            raise as_option(exc, _OPTIONS) from None
        if rc:
            raise typer.Exit(rc)


def _designs(text: str):
    if text == "auto":
        return None
    out = tuple(x.strip() for x in text.split(","))
    for d in out:
        if d not in ("separate", "paired"):
            raise InputError(f"unknown design {d!r} (auto, separate, paired)", field="--design")
    return out


def _next(runs, a, b, configs, rope, prior, cv, cv_instance, aa_runs, platform, metric,
          workload, run_group, format, tps_column, config_column, instance, lower_is_better,
          design, plan_max_runs, assurance, sims, seed, watch, interval, timeout, max_usd,
          max_runs, baseline, store, as_json, md, html, params=None, **_) -> int:
    from planner.decide.comparison import Selection, from_table
    from planner.defaults import check_assurance
    from planner.io.limits import check_all
    from planner.io.runs import read_runs
    from planner.io.table import RunsTable
    from planner.report.output import emit, guard_outputs, input_record

    check_all([("seed", seed, "--seed"), ("interval", interval, "--interval"),
               ("timeout", timeout, "--timeout"), ("total_usd", max_usd, "--max-usd"),
               ("max_runs", max_runs, "--max-runs")])
    check_assurance(assurance, field="--assurance")
    guard_outputs([("--md", md), ("--html", html)], [runs, watch])
    designs = _designs(design)
    if runs is None and watch is None:
        raise InputError("give a RUNS file, or a folder to --watch", field="RUNS")
    sel = Selection(platform, metric, workload, run_group)
    base = base_cfg = None
    if baseline is not None:
        from planner.cli.baseline import baseline_runs

        if a is not None:  # it used to be dropped without a word
            raise InputError(f"--baseline {baseline} is config A: give --b only (or drop "
                             "--baseline)", field="--a")
        base_cfg, base = baseline_runs(store, baseline, run_group)
        a = base_cfg
        if runs is not None:
            from planner.cli.baseline import check_matches

            check_matches(read_runs(runs, format=format, metric=metric,
                                    tps_column=tps_column, instance=instance,
                                    config_column=config_column), base, baseline,
                          platform=platform, metric=metric, workload=workload,
                          run_group=run_group)

    def table_of(extra=()):
        rows = []
        if runs is not None:
            rows += read_runs(runs, format=format, metric=metric, tps_column=tps_column,
                              instance=instance, config_column=config_column).runs
        rows += list(base or []) + list(extra)
        return RunsTable(rows, str(runs if runs is not None else watch))

    if configs is not None:
        if a is not None and a != base_cfg or b is not None:
            raise InputError("--configs picks A and B (the best and its closest rival): "
                             "drop --a/--b", field="--configs")
        if watch is not None:
            raise InputError("--watch follows one comparison: give --a and --b",
                             field="--configs")
        from planner.cli.rank import split_configs
        from planner.decide.rank import from_table as rank_field, rank as do_rank

        names = split_configs(configs)
        if base_cfg is not None and base_cfg not in names:
            names = [base_cfg] + names  # as rank --baseline: the saved runs are ranked too
        res = do_rank(rank_field(table_of(), names, selection=sel, prior=prior, cv=cv,
                                 cv_instance=cv_instance, aa_runs=aa_runs,
                                 lower_is_better=lower_is_better, value_name=tps_column),
                      rope=rope, seed=seed)
        rival = next((r["config"] for r in res.configs[1:] if r["tied_with_best"]),
                     res.configs[1]["config"])
        a, b = rival, res.best
    if a is None or b is None:
        raise InputError("give --a CONFIG and --b CONFIG (or --configs)", field="--a")
    if a == b:  # --watch used to poll until its timeout on this
        raise InputError("A and B name the same config", field="--b")

    from planner.decide.costs import cost_model
    from planner.decide.next_run import advise

    def evaluate(table):
        comp = from_table(table, a, b, selection=sel, prior=prior, cv=cv,
                          cv_instance=cv_instance, aa_runs=aa_runs,
                          lower_is_better=lower_is_better, value_name=tps_column)
        return advise(comp, rope=rope, sims=sims, seed=seed, max_runs=plan_max_runs,
                      designs=designs, target=assurance)

    if watch is None:
        adv = evaluate(table_of()).to_dict()
        if configs is not None:
            adv["configs"] = [r["config"] for r in res.configs]
        emit(adv, as_json=as_json, md=md, html=html, inputs=[runs],
             record=input_record(params or {}))
        return 0
    from planner.decide.next_run import watch as watch_loop
    from planner.io.ingest import ingest

    if not watch.is_dir():
        raise InputError("not a folder", file=str(watch), field="--watch")
    from planner.defaults import DEFAULT_PLATFORM

    try:
        cm = cost_model(platform or DEFAULT_PLATFORM)
    except InputError:
        cm = cost_model(DEFAULT_PLATFORM)

    def read():
        try:
            got, _ = ingest(watch, platform=platform, metric=metric, workload=workload,
                            format=format, instance=instance)
        except InputError as exc:
            if "no benchmark result files" in exc.message:
                got = []  # nothing has landed yet
            else:
                raise
        return table_of(got).runs

    def out(line: str) -> None:
        print(line, flush=True)

    return watch_loop(read, lambda rows: evaluate(RunsTable(rows, str(watch))), a=a, b=b,
                      interval=interval, timeout=timeout, max_runs=max_runs, max_usd=max_usd,
                      cost=cm, out=out)
