"""``planner repeats``: how many runs to buy for an A/B TPS comparison."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from planner.cli._options import (AaRuns, ConfigColumn, Cv, CvInstance, Format, Html, Instance,
                                  Json, LowerIsBetter, Md, Metric, Rope, RunGroup, Seed,
                                  TABLE_OPTIONS, TpsColumn, Workload, command_params, noted)
from planner.defaults import (BASELINE_TPS, DEFAULT_ASSURANCE, DEFAULT_ROPE,
                              DEFAULT_RULE, MAX_SIMS, check_assurance, check_sims)
from planner.errors import InputError

#: Plain field of the decision layer -> option of ``planner repeats``.
_OPTIONS = {"delta": "--delta", "baseline_tps": "--baseline-tps", "rule": "--rule",
            "rope": "--rope", "target": "--assurance", "designs": "--design",
            "max_runs": "--max-runs", "max_cost": "--max-cost", "price_per_hour": "--price",
            "minutes_per_run": "--minutes-per-run", "startup_minutes": "--startup-minutes",
            "flavor": "--flavor", "runs_per_instance": "--runs-per-instance",
            "pairs_per_instance": "--pairs-per-instance", "batch": "--batch", "sims": "--sims",
            "cv": "--cv", "cv_instance": "--cv-instance", "aa_runs": "--aa-runs",
            "prior": "--prior", "a": "--a", "b": "--b", **TABLE_OPTIONS}
# --known-noise states its scales as known: ``2%:known`` (planner.decide.priors.KNOWN_NOISE_DF,
# 1e9, above models.stats.assurance.KNOWN_DF = 1e6; a typed df stops at limits.PRIOR_DF)

#: between-instance CV taken with --known-noise when --cv-instance is not given (the
#: between-instance noise is then included in --cv; the engine's grid starts at 0.001 %)
_KNOWN_NOISE_TAU = "0.002%"


def _designs(text: str) -> tuple[str, ...]:
    from planner.io._parse import split_items
    from planner.decide.repeats import DESIGNS

    if text == "auto":
        return DESIGNS
    # the one list grammar (planner.io._parse.LIST_GRAMMAR): no space, no empty item
    out = tuple(split_items(text, field="--design", what="design list"))
    for d in out:
        if d not in DESIGNS:
            raise InputError(f"unknown design {d!r} (auto, {', '.join(DESIGNS)})",
                             field="--design")
    return out


def register(app: typer.Typer) -> None:
    """Register this module's command(s) on the ``planner`` typer app."""
    @app.command()
    def repeats(
        ctx: typer.Context,
        delta: Optional[float] = typer.Option(None, "--delta", help="Effect B − A: TPS at "
                                              "--baseline-tps, or % with --relative."),
        relative: bool = typer.Option(False, "--relative", help="--delta is in % of TPS."),
        baseline_tps: Optional[float] = typer.Option(
            None, "--baseline-tps", help=f"TPS level of A (default {BASELINE_TPS:g}; with "
            "--runs: A's level from its runs)."),
        platform: Optional[str] = typer.Option(None, "--platform", help="hf-a10g-small | "
                                               "local-a10g | published-n4 (noise prior and cost "
                                               "model); default: the platform of the --runs "
                                               "rows, else hf-a10g-small."),
        prior: Optional[str] = typer.Option(None, "--prior", help="Override the noise prior: "
                                            "a platform name or a calibrate JSON file."),
        cv: Cv = None,
        cv_instance: CvInstance = None,
        aa_runs: AaRuns = None,
        known_noise: bool = typer.Option(False, "--known-noise", help="Take --cv (and "
                                         "--cv-instance, default: included in --cv) as exact: "
                                         "fixed designs then get exact assurance and "
                                         "false-claim rates (no simulation)."),
        runs: Optional[Path] = typer.Option(None, "--runs", help="Runs already bought (CSV/JSON/"
                                            "JSONL); with --a and --b."),
        a: Optional[str] = typer.Option(None, "--a", help="Config A (with --runs)."),
        b: Optional[str] = typer.Option(None, "--b", help="Config B (with --runs)."),
        metric: noted(Metric, '(with --runs)') = None,
        workload: noted(Workload, '(with --runs)') = None,
        run_group: noted(RunGroup, '(with --runs)') = None,
        format: Format = None,
        tps_column: TpsColumn = None,
        config_column: ConfigColumn = None,
        instance: Instance = None,
        lower_is_better: noted(LowerIsBetter, 'With --runs only.') = None,
        rule: str = typer.Option(DEFAULT_RULE, "--rule", help="verdict | superiority[:0.95] | "
                                 "equivalence"),
        rope: Rope = DEFAULT_ROPE,
        assurance: float = typer.Option(DEFAULT_ASSURANCE, "--assurance", help="Target assurance in (0, 1)."),
        design: str = typer.Option("auto", "--design", help="auto | separate | paired | "
                                   "sequential (comma-separated list allowed)."),
        max_runs: int = typer.Option(40, "--max-runs", help="Cap on runs per arm."),
        max_cost: Optional[float] = typer.Option(None, "--max-cost", help="Cap in $."),
        price: Optional[float] = typer.Option(None, "--price", help="$ per hour (default: the "
                                              "platform's flavor, a10g-small $1.00)."),
        flavor: Optional[str] = typer.Option(None, "--flavor", help="a10g-small | a10g-large | "
                                             "local-a10g (cost defaults)."),
        minutes_per_run: Optional[float] = typer.Option(
            None, "--minutes-per-run", help="Minutes of one benchmark run, (0, 1440] (default: "
            "the platform's or --flavor's cost model)."),
        startup_minutes: Optional[float] = typer.Option(
            None, "--startup-minutes", help="Minutes of start-up per allocation (server start, "
            "model load), [0, 1440] (default: the platform's or --flavor's cost model)."),
        runs_per_instance: Optional[int] = typer.Option(
            None, "--runs-per-instance", help="Runs of one config per allocation in separate "
            "designs (default: 1, or with --design auto chosen from the noise and the start-up "
            "vs run minutes, Kalibera & Jones 2013)."),
        pairs_per_instance: Optional[int] = typer.Option(None, "--pairs-per-instance",
                                                         help="A/B pairs per allocation in "
                                                         "paired designs (default: all)."),
        batch: Optional[int] = typer.Option(None, "--batch", help="Runs per arm per look "
                                            "(sequential)."),
        sims: int = typer.Option(2000, "--sims", help="Simulated experiments per design "
                                 f"(100 .. {MAX_SIMS:,})."),
        seed: Seed = 0,
        as_json: Json = False,
        md: Md = None,
        html: noted(Html, '(plots inline)') = None,
    ) -> None:
        """How many runs to buy: assurance, false-claim rate and cost of designs."""
        from models.errors import ModelInputError
        from planner.cli._options import as_option

        params = command_params(ctx, locals())  # what the input record shows
        if runs is None and baseline_tps is None:
            # the default level, recorded as typed (with --runs the level is A's, from its
            # runs, and no --baseline-tps is recorded)
            params["baseline_tps"] = BASELINE_TPS
        try:
            _repeats(**locals())
        except ModelInputError as exc:
            raise as_option(exc, _OPTIONS) from None


def _repeats(*, delta, relative, baseline_tps, platform, prior, runs, a, b, metric, workload, rule,
             rope, assurance, design, max_runs, max_cost, price, flavor, minutes_per_run,
             startup_minutes, runs_per_instance, pairs_per_instance, batch, sims, seed, as_json,
             md, html=None, cv=None, cv_instance=None, aa_runs=None, known_noise=False,
             run_group=None, format=None, tps_column=None, config_column=None, instance=None,
             lower_is_better=None, params=None, **_) -> None:
    """The body of ``planner repeats`` (errors name plain fields or options)."""
    from planner.decide.comparison import Selection
    from planner.decide.costs import cost_model
    from planner.decide.priors import prior_file, prior_file_entry, resolve_prior
    from planner.decide.repeats import plan_from, plan_platform, plan_repeats
    from planner.decide.settle import paired_allowed
    from planner.report.output import emit, guard_outputs, input_record
    from planner.report.views.repeats import render_markdown, render_terminal

    _check_options(sims=sims, runs_per_instance=runs_per_instance,
                   pairs_per_instance=pairs_per_instance, batch=batch, runs=runs, a=a, b=b,
                   metric=metric, workload=workload, run_group=run_group,
                   baseline_tps=baseline_tps)
    if runs is None and baseline_tps is None:
        baseline_tps = BASELINE_TPS
    from planner.io.limits import check_all  # plausible ranges: no size or Δ taken unbounded

    check_all([("delta_pct" if relative else "delta_tps", delta, "--delta"),
               ("baseline_tps", baseline_tps, "--baseline-tps"),
               ("max_runs_per_arm", max_runs, "--max-runs"), ("max_cost", max_cost, "--max-cost"),
               ("price_per_hour", price, "--price"),
               ("minutes_per_run", minutes_per_run, "--minutes-per-run"),
               ("startup_minutes", startup_minutes, "--startup-minutes"),
               ("runs_per_instance", runs_per_instance, "--runs-per-instance"),
               ("pairs_per_instance", pairs_per_instance, "--pairs-per-instance"),
               ("batch", batch, "--batch"), ("seed", seed, "--seed")])
    if delta is not None and not relative and baseline_tps is not None:
        from planner.io.limits import check_delta_at

        check_delta_at(delta, baseline_tps, field="--delta", baseline_field="--baseline-tps")
    guard_outputs([("--md", md), ("--html", html)], [runs] + ([Path(prior)] if prior and Path(prior).exists()
                                            else []))
    # runs without a platform (no column, or what 'planner ingest' writes from tools' files)
    # take --platform; without it, and none in the rows, the unknown-platform prior and the
    # default cost model (as 'planner verdict' does)
    table_read = None
    if runs is not None:
        if a is None or b is None:
            raise InputError("--runs needs --a CONFIG and --b CONFIG", field="--a")
        from planner.io.runs import read_runs

        from planner.report.progress import waiting

        # read once, with the same table options as 'planner verdict'
        with waiting("reading the runs table...", quiet=as_json):
            table_read = read_runs(runs, format=format, metric=metric, tps_column=tps_column,
                                   instance=instance, config_column=config_column)
    elif any(v is not None for v in (format, tps_column, config_column, instance,
                                     lower_is_better)):
        raise InputError("--format, --tps-column, --config-column, --instance and "
                         "--lower-is-better read --runs; give --runs", field="--runs")
    stated = cv is not None or cv_instance is not None or aa_runs is not None
    platform, row_platform = plan_platform(platform, table_read, a, b,
                                           Selection(None, metric, workload, run_group),
                                           prior_given=prior is not None, stated=stated)
    designs = _designs(design)
    if design == "auto" and not paired_allowed(platform, prior is not None):
        # that prior pins the within-allocation sigma near 0 (it only knows the total):
        # a paired design would look free of noise
        designs = tuple(d for d in designs if d != "paired")
    check_assurance(assurance, field="--assurance")
    if known_noise:
        if cv is None:
            raise InputError("--known-noise needs --cv (the run-to-run CV taken as exact)",
                             field="--known-noise")
        cv, cv_instance = _exact(cv), _exact(cv_instance or _KNOWN_NOISE_TAU)
    if runs_per_instance is None and design != "auto":
        runs_per_instance = 1
    comp = None
    if table_read is not None:
        from planner.decide.comparison import from_table

        from planner.report.progress import waiting

        with waiting("building the comparison of the runs...", quiet=as_json):
            comp = from_table(
                table_read, a, b, selection=Selection(row_platform, metric, workload,
                                                      run_group),
                prior=prior, cv=cv, cv_instance=cv_instance, aa_runs=aa_runs,
                lower_is_better=lower_is_better, value_name=tps_column)
        pr, label = comp.prior, comp.prior_label
        if design == "auto":
            # the fixed designs the verdict's "to settle" advice weighs (one rule for both)
            from planner.decide.settle import settle_designs

            designs = settle_designs(comp) + ("sequential",)
    else:
        pr, label = resolve_prior(prior, row_platform, None, None, cv=cv,
                                  cv_instance=cv_instance, aa_runs=aa_runs)
    if pr is None:
        raise InputError("repeats needs a noise prior (a platform or a file), not 'weak'",
                         field="prior")
    # the platform's cost model (planner/decide/costs.py), as 'planner budget' prices a comparison
    cm = cost_model(flavor or platform, price_per_hour=price, minutes_per_run=minutes_per_run,
                    startup_minutes=startup_minutes)
    kw = dict(rule=rule, target=assurance, designs=designs, max_runs=max_runs,
              max_cost=max_cost, cost=cm, runs_per_instance=runs_per_instance,
              pairs_per_instance=pairs_per_instance, batch=batch, prior_label=label,
              platform=row_platform)
    with _progress() as prog:
        if comp is not None:
            res = plan_from(comp, rope=rope, delta=delta, relative=relative, sims=sims,
                            seed=seed, progress=prog, **kw)
        else:
            if delta is None:
                raise InputError("give --delta (TPS, or % with --relative), or --runs with "
                                 "--a/--b", field="--delta")
            res = plan_repeats(delta, relative=relative, baseline_tps=baseline_tps,
                               prior=pr, rope=rope, sims=sims, seed=seed, progress=prog,
                               **kw)
    out = res.to_dict()
    record = input_record(params or {})
    entry = prior_file_entry(prior)
    if entry is not None:  # a --prior file is an input like RUNS: its name and sha256
        record["files"].append(entry)
    emit(out, as_json=as_json, terminal=render_terminal, md=md,
         md_renderer=render_markdown, html=html, inputs=[runs, prior_file(prior)],
         record=record)


def _exact(cv: str) -> str:
    """A stated CV as a known scale (``2%`` -> ``2%:known``; a given df is kept)."""
    return cv if ":" in str(cv) else f"{cv}:known"


def _check_options(*, sims, runs_per_instance, pairs_per_instance, batch, runs, a, b, metric,
                   workload, run_group=None, baseline_tps=None) -> None:
    """Option checks that need no computation (one line, naming the option)."""
    check_sims(sims, field="--sims")
    if runs_per_instance is not None and runs_per_instance < 1:
        raise InputError(f"must be >= 1, got {runs_per_instance}", field="--runs-per-instance")
    if pairs_per_instance is not None and pairs_per_instance < 1:
        raise InputError(f"must be >= 1, got {pairs_per_instance}",
                         field="--pairs-per-instance")
    if batch is not None and batch < 1:
        raise InputError(f"must be >= 1 (runs per arm per look), got {batch}", field="--batch")
    if runs is None:
        given = [o for o, v in (("--a", a), ("--b", b), ("--metric", metric),
                                ("--workload", workload), ("--run-group", run_group))
                 if v is not None]
        if given:
            raise InputError(f"{' and '.join(given)} "
                             f"{'only applies' if len(given) == 1 else 'only apply'} with --runs (the runs already "
                             "bought); without --runs give just --delta", field=given[0])
    elif baseline_tps is not None:
        raise InputError("does not apply with --runs: the TPS level of A is its runs' level "
                         "(give --delta in TPS at that level, or --relative)",
                         field="--baseline-tps")


class _progress:
    """Rich progress (stderr, transient) of simulated experiments; a no-op callable when the
    work finishes in under a second or stderr is not a terminal (a transient bar shows
    nothing there; its updates and refresh thread only cost time)."""

    def __enter__(self):
        import time

        from rich.console import Console
        from rich.progress import (BarColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn)

        self._t0 = time.perf_counter()
        con = Console(stderr=True)
        self._on = con.is_terminal
        self._p = Progress(SpinnerColumn(), TextColumn("[progress.description]{task.description}"),
                           BarColumn(), TextColumn("{task.completed:,} simulated experiments"),
                           TimeElapsedColumn(), console=con, transient=True)
        self._task = None
        self._started = False
        return self

    def __call__(self, stage: str, k: int) -> None:
        import time

        if not self._on:
            return
        if not self._started and time.perf_counter() - self._t0 > 1.0:
            self._p.start()
            self._task = self._p.add_task(stage, total=None)
            self._started = True
        if self._started:
            self._p.update(self._task, advance=k, description=stage)

    def __exit__(self, *exc):
        if self._started:
            self._p.stop()
        return False
