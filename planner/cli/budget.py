"""``planner budget``: which comparisons to pay for, and how many runs each."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from planner.cli._options import (AaRuns, Cv, CvInstance, Html, Json, Md, Seed, noted)
from planner.defaults import MAX_SIMS, MIN_SIMS, check_assurance, check_sims

#: Plain field of the decision layer -> option of ``planner budget`` (a value from the plan
#: file keeps its plan field and line).
_OPTIONS = {"total_usd": "--total-usd", "max_runs": "--max-runs",
            "price_per_hour": "--price-per-hour", "assurance": "--assurance", "sims": "--sims",
            "cv": "--cv", "cv_instance": "--cv-instance", "aa_runs": "--aa-runs"}


def register(app: typer.Typer) -> None:
    """Register this module's command(s) on the ``planner`` typer app."""
    @app.command()
    def budget(
        ctx: typer.Context,
        plan: Path = typer.Argument(..., metavar="PLAN", help="Plan file: TOML (a \\[budget] "
                                    "table and \\[\\[comparison]] blocks) or CSV (one "
                                    "comparison per row)."),
        total_usd: Optional[float] = typer.Option(None, "--total-usd", help="Budget in dollars "
                                                  "(overrides total_usd of the plan's "
                                                  "budget table)."),
        max_runs: Optional[int] = typer.Option(None, "--max-runs", help="Budget as a total "
                                               "number of runs (overrides max_runs of the "
                                               "plan's budget table)."),
        price_per_hour: Optional[float] = typer.Option(None, "--price-per-hour",
                                                       help="GPU price, $/h (default: the plan platform's, "
                                                       "a10g-small $1.00)."),
        assurance: Optional[float] = typer.Option(None, "--assurance", help="Assurance target "
                                                  "in (0, 1) (default 0.8)."),
        cv: noted(Cv, 'Applies to every comparison (none may set its own prior).') = None,
        cv_instance: CvInstance = None,
        aa_runs: AaRuns = None,
        sims: int = typer.Option(2000, "--sims", help="Monte-Carlo simulations per design "
                                 f"({MIN_SIMS} .. {MAX_SIMS:,})."),
        seed: Seed = 0,
        as_json: Json = False,
        md: Md = None,
        html: noted(Html, '(plots inline)') = None,
    ) -> None:
        """Plan a budget: the cheapest design per comparison, then the best set to buy.

        Per comparison the cheapest design reaching the assurance target, then the set of
        comparisons that buys the most decisive verdicts."""
        from models.errors import ModelInputError
        from planner.cli._options import as_option, command_params

        params = command_params(ctx, locals())  # what the input record shows
        try:
            _budget(plan, sims=sims, seed=seed, as_json=as_json, md=md, html=html,
                    params=params,
                    overrides={"total_usd": total_usd, "max_runs": max_runs,
                               "price_per_hour": price_per_hour, "assurance": assurance},
                    stated={"cv": cv, "cv_instance": cv_instance, "aa_runs": aa_runs})
        except ModelInputError as exc:
            raise as_option(exc, _OPTIONS) from None


def _budget(plan: Path, *, sims: int, seed: int, as_json: bool, md: Path | None,
            html: Path | None, overrides: dict, stated: dict | None = None,
            params: dict | None = None) -> None:
    """The body of ``planner budget`` (errors name plain fields, plan fields or options)."""
    from planner.io.plan_file import read_plan
    from planner.report.views.budget import render_markdown, render_terminal
    from planner.report.output import emit, guard_outputs, input_record

    check_sims(sims, field="--sims")
    from planner.io.limits import check

    check("seed", seed, field="--seed")
    # before the (slow) sizing: a report must never overwrite the plan
    guard_outputs([("--md", md), ("--html", html)], [plan])
    if overrides["assurance"] is not None:
        check_assurance(overrides["assurance"], field="--assurance")
    the_plan = read_plan(plan, overrides=overrides)
    inputs = [plan] + _plan_inputs(the_plan)
    guard_outputs([("--md", md), ("--html", html)], inputs)
    stated = {k: v for k, v in (stated or {}).items() if v is not None} or None
    if stated:
        from planner.decide.priors import stated_prior

        stated_prior(**stated)  # bad values fail here, naming the option, before the sizing
    res = _run_with_progress(the_plan, sims=sims, seed=seed, quiet=as_json, stated=stated)

    def html_renderer(r: dict) -> str:
        from planner.report.render import render_html

        return render_html(r)

    out = res.to_dict()
    record = input_record(params or {})
    # a plan's prior files are inputs like the plan: their names and sha256
    record["files"].extend(_prior_entries(the_plan))
    emit(out, as_json=as_json,
         terminal=lambda r: render_terminal(r, elapsed_s=res.elapsed_s), md=md, html=html,
         md_renderer=render_markdown, html_renderer=html_renderer, inputs=inputs,
         record=record)


def _prior_entries(plan) -> list[dict]:
    """The recorded-inputs entries (:func:`planner.decide.priors.prior_file_entry`: role ``prior``,
    name, sha256) of the prior files a plan names (its ``prior`` and each comparison's), once
    each, in plan order; platform names and ``auto`` give none."""
    from planner.decide.priors import prior_file_entry

    out, seen = [], set()
    for spec in [plan.prior] + [c.prior for c in plan.comparisons]:
        if spec is None or spec in seen:
            continue
        seen.add(spec)
        entry = prior_file_entry(spec)
        if entry is not None:
            out.append(entry)
    return out


def _plan_inputs(plan) -> list[Path]:
    """Files a plan refers to (runs table, projections), resolved as the plan resolves them."""
    base = Path(plan.path).parent
    refs = [plan.runs] + [c.projection for c in plan.comparisons]
    return [Path(r) if Path(r).is_absolute() else base / r for r in refs if r]


def _run_with_progress(plan, *, sims: int, seed: int, quiet: bool, stated: dict | None = None):
    """Run :func:`planner.decide.budget.plan_budget` under a rich progress bar (on stderr)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, \
        TimeElapsedColumn

    from planner.decide.budget import plan_budget

    con = Console(stderr=True)
    with Progress(TextColumn("[bold]sizing[/] {task.description}"), BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=con, transient=True,
                  disable=quiet or not con.is_terminal) as prog:
        task = prog.add_task("comparisons", total=len(plan.comparisons))

        def step(name: str) -> None:  # a plan's name, printed literally (not rich markup)
            from rich.markup import escape

            from planner.report.escape import visible

            prog.update(task, advance=1, description=escape(visible(name)))

        return plan_budget(plan, sims=sims, seed=seed, progress=step, stated=stated)
