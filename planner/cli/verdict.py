"""``planner verdict``: is this delta real?"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from planner.cli._options import (AaRuns, Cold, ConfigColumn, Cv, CvInstance, Format, Html,
                                  Instance, Json, LowerIsBetter, Md, Metric, Platform, Prior, Rope,
                                  RunGroup, Seed, Store, TABLE_OPTIONS, TpsColumn, Workload, noted)
from planner.defaults import DEFAULT_ROPE
from planner.errors import InputError

#: Plain field of the decision layer -> option of ``planner verdict`` (``a`` and ``b`` are
#: added per call: the values of ``--a``/``--b`` or of ``--a-runs``/``--b-runs``).
_OPTIONS = {"rope": "--rope", "engine": "--engine", "likelihood": "--likelihood",
            "paired": "--paired", "sessions": "--sessions", "a_runs": "--a-runs", "b_runs": "--b-runs",
            "a_summary": "--a-summary", "b_summary": "--b-summary", "prior": "--prior",
            "cv": "--cv", "cv_instance": "--cv-instance", "aa_runs": "--aa-runs",
            "seed": "--seed", **TABLE_OPTIONS}


def _floats(text: str, opt: str) -> list[float]:
    """The values of a quick-form option (``--a 308.49``, ``--a-runs 308.1,307.9``), each
    by the one number grammar (:func:`planner.io._parse.to_float`: ``3_00`` or ``0x1c5`` is
    refused, not read as another number); their range is checked with the runs they make
    (:func:`planner.io.runs.validate_run`).

    Raises
    ------
    InputError
        An empty position, a token that is not a number, or no value at all.
    """
    from planner.io._parse import refuse_decimal_comma, to_float

    refuse_decimal_comma(text, field=opt)  # '308,5' is 308.5, not two runs
    out = []
    toks = text.replace(";", ",").split(",")
    for k, tok in enumerate(toks):
        if not tok.strip():
            if len(toks) > 1:
                raise InputError(f"empty value at position {k + 1} in {text!r}", field=opt)
            continue
        try:
            x = to_float(tok)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"not a number: {tok!r}", field=opt) from None
        if x != x or x in (float("inf"), float("-inf")):  # named by the option typed
            raise InputError(f"not a finite number: {tok!r}", field=opt)
        out.append(x)
    if not out:
        raise InputError("no TPS values given", field=opt)
    return out


def register(app: typer.Typer) -> None:
    """Register this module's command(s) on the ``planner`` typer app."""
    @app.command()
    def verdict(
        ctx: typer.Context,
        runs: Optional[Path] = typer.Argument(None, help="Runs table (CSV/JSON/JSONL). Omit for "
                                              "the quick forms."),
        a: Optional[str] = typer.Option(None, "--a", help="Config A (baseline), or a single TPS "
                                        "value (quick form)."),
        b: Optional[str] = typer.Option(None, "--b", help="Config B (candidate), or a single TPS "
                                        "value."),
        a_runs: Optional[str] = typer.Option(None, "--a-runs", help="Comma-separated TPS of A."),
        b_runs: Optional[str] = typer.Option(None, "--b-runs", help="Comma-separated TPS of B."),
        a_summary: Optional[str] = typer.Option(None, "--a-summary", help="A as summary "
                                                "statistics: mean=80.3,sd=0.3,n=3 or median=,"
                                                "min=,max=,n= (planner.io.summaries)."),
        b_summary: Optional[str] = typer.Option(None, "--b-summary", help="B as summary "
                                                "statistics (as --a-summary)."),
        paired: bool = typer.Option(False, "--paired", help="Quick forms: the k-th runs of A and B "
                                    "share an instance."),
        sessions: Optional[str] = typer.Option(
            None, "--sessions", help="Quick forms, every run on one machine: per-arm (A's runs "
            "in one server session, B's in another), per-run (each run a fresh process or "
            "server) or shared (A and B interleaved in one session). Without it each arm's "
            "runs are one session on a machine of its own (no platform) or each run its own "
            "allocation (a platform with noise data)."),
        rope: Rope = DEFAULT_ROPE,
        engine: str = typer.Option("exact", "--engine", help="exact | mcmc"),
        likelihood: str = typer.Option("normal", "--likelihood", help="normal | student-t (mcmc)"),
        prior: Prior = None,
        cv: Cv = None,
        cv_instance: CvInstance = None,
        aa_runs: AaRuns = None,
        platform: noted(Platform,
                         'Quick forms without it: unknown platform, weak noise prior.') = None,
        metric: Metric = None,
        workload: Workload = None,
        run_group: RunGroup = None,
        format: Format = None,
        tps_column: TpsColumn = None,
        config_column: ConfigColumn = None,
        instance: Instance = None,
        cold: Cold = None,
        lower_is_better: LowerIsBetter = None,
        seed: noted(Seed, '(MCMC draws and the "to settle" simulation)') = 0,
        as_json: Json = False,
        md: Md = None,
        html: noted(Html, '(posterior plot inline)') = None,
        idata: Optional[Path] = typer.Option(None, "--idata", help="With --engine mcmc: also "
                                             "write the fit as ArviZ InferenceData (NetCDF: "
                                             "posterior, sample_stats, observed_data)."),
        baseline: Optional[str] = typer.Option(None, "--baseline", help="A saved baseline "
                                               "(planner baseline save) as config A: compare "
                                               "--b in RUNS against it."),
        store: Store = None,
    ) -> None:
        """Posterior verdict on B vs A: P(B > A), HDI of Δ, ROPE, label."""
        from models.errors import ModelInputError
        from planner.cli._options import as_option, command_params

        params = command_params(ctx, locals())  # what the input record shows

        # A's and B's values come from --a/--b or from --a-runs/--b-runs: name what was typed
        options = {**_OPTIONS, "a": "--a" if a_runs is None else "--a-runs",
                   "b": "--b" if b_runs is None else "--b-runs"}
        try:
            _verdict(**locals())
        except ModelInputError as exc:
            raise as_option(exc, options) from None


def _verdict(runs, a, b, a_runs, b_runs, a_summary, b_summary, paired, sessions, rope, engine,
             likelihood,
             prior, cv, cv_instance, aa_runs, platform, metric, workload, run_group, format,
             tps_column, config_column, instance, cold, lower_is_better, seed, as_json, md, html,
             idata, params=None, baseline=None, store=None, **_) -> None:
    from planner.decide.priors import prior_file_entry
    from planner.report.output import emit, input_record
    from planner.report.views.verdict import render_markdown, render_terminal
    from planner.io.runs import read_runs

    if engine not in ("exact", "mcmc"):
        raise InputError(f"unknown engine {engine!r} (exact or mcmc)", field="--engine")
    if likelihood not in ("normal", "student-t"):
        raise InputError(f"unknown likelihood {likelihood!r}", field="--likelihood")
    from planner.io.limits import check as check_limit
    from planner.report.output import guard_outputs

    check_limit("seed", seed, field="--seed")  # the range every other command applies
    prior_path = Path(prior) if prior and Path(prior).exists() else None
    guard_outputs([("--md", md), ("--html", html), ("--idata", idata, "netcdf")],
                  [runs, prior_path])
    if idata is not None and engine != "mcmc":
        raise InputError("--idata needs --engine mcmc (the exact engine has no draws)",
                         field="--idata")
    if runs is not None and (a_summary is not None or b_summary is not None):
        raise InputError("--a-summary/--b-summary are quick forms without a RUNS file; in "
                         "a file give mean, sd, n columns", field="--a-summary")
    if runs is not None and (a_runs is not None or b_runs is not None):
        raise InputError("--a-runs/--b-runs are the quick form without a RUNS file; with a "
                         "file give --a CONFIG --b CONFIG", field="--a-runs")
    if runs is not None and paired:
        raise InputError("--paired pairs --a-runs/--b-runs by position; in a RUNS file the "
                         "pairs are the rows that share an instance (its instance column)",
                         field="--paired")
    if runs is not None and sessions is not None:
        raise InputError("--sessions states the session layout of the quick forms; in a RUNS "
                         "file give instance and session columns", field="--sessions")
    if runs is None and baseline is not None:
        raise InputError("--baseline NAME stands for config A of a RUNS file (planner "
                         "baseline save); with typed-in runs give A's runs as --a-runs",
                         field="--baseline")
    if runs is None and instance is not None:
        raise InputError("--instance names the machine of a tool's result file; for runs "
                         "typed in on one machine state their layout with --sessions "
                         "per-arm|per-run|shared", field="--instance")
    if runs is None and (a_runs is not None or b_runs is not None) and \
            (a is not None or b is not None):
        raise InputError("give either --a/--b values or --a-runs/--b-runs, not both",
                         field="--a")
    from planner.decide import comparison
    from planner.decide.verdict import judge
    from planner.report.progress import waiting
    from planner.io.summaries import summary_notes

    prior_settings = dict(prior=prior, cv=cv, cv_instance=cv_instance, aa_runs=aa_runs,
                          use_cold=cold, lower_is_better=lower_is_better)
    if runs is None and (a_summary is not None or b_summary is not None):
        comp = comparison.from_values(
            None if a_runs is None else _floats(a_runs, "--a-runs"),
            None if b_runs is None else _floats(b_runs, "--b-runs"),
            a_summary=a_summary, b_summary=b_summary, paired=paired, platform=platform,
            layout=sessions, **prior_settings)
    elif runs is None:
        if a_runs is not None or b_runs is not None:
            if a_runs is None or b_runs is None:
                raise InputError("give both --a-runs and --b-runs", field="--a-runs")
            va, vb = _floats(a_runs, "--a-runs"), _floats(b_runs, "--b-runs")
        elif a is not None and b is not None:
            va, vb = _floats(a, "--a"), _floats(b, "--b")
        else:
            raise InputError("give a RUNS file with --a/--b configs, or TPS values: "
                             "--a 308.49 --b 308.05, or --a-runs ... --b-runs ...",
                             field="--a")
        comp = comparison.from_values(va, vb, paired=paired, platform=platform,
                                      layout=sessions, **prior_settings)
    else:
        if baseline is not None:  # a saved baseline's runs are config A (planner.cli.baseline)
            from planner.cli.baseline import baseline_runs

            if a is not None:
                raise InputError("give either --baseline NAME or --a CONFIG: the baseline is "
                                 "config A", field="--baseline")

            a, base_runs = baseline_runs(store, baseline, run_group)
        if a is None or b is None:
            raise InputError("give --a CONFIG and --b CONFIG", field="--a")
        # only A's and B's runs are kept; every row is still validated, and the census of
        # the others words the filter and config errors as the whole table would
        with waiting("reading the runs table...", quiet=as_json):
            table = read_runs(runs, format=format, metric=metric, tps_column=tps_column,
                              instance=instance, configs=[a, b], config_column=config_column)
            if baseline is not None:
                from planner.cli.baseline import appended

                table = appended(table, base_runs)
            comp = comparison.from_table(
                table, a, b, selection=comparison.Selection(platform, metric, workload,
                                                            run_group),
                value_name=tps_column, **prior_settings)
    s_notes = summary_notes(comp.table, comp.a, comp.b, likelihood)
    with waiting("fitting the model by MCMC (20-35 s)..." if engine == "mcmc" else
                 "fitting the model...", quiet=as_json):
        res = judge(comp, rope=rope, engine=engine, seed=seed, likelihood=likelihood,
                    extra_notes=s_notes)
    table, a_name, b_name, pr = comp.table, comp.a, comp.b, comp.prior

    def render_html(result: dict) -> str:  # the HTML renderer loads only for --html
        from planner.report.render import render_html as page

        return page(result)

    if idata is not None:
        with waiting("repeating the MCMC fit for --idata (20-35 s)...", quiet=as_json):
            _write_idata(idata, table, a_name, b_name, pr, seed=seed, likelihood=likelihood,
                         lower_is_better=res.direction == "lower_is_better",
                         use_cold=cold)
    out = res.to_dict()
    out["notes"] = [_spelled(n) for n in out.get("notes") or []]
    record = input_record(params or {})
    entry = prior_file_entry(prior)
    if entry is not None:  # a --prior file is an input like RUNS: its name and sha256
        record["files"].append(entry)
    emit(out, as_json=as_json, terminal=render_terminal, md=md, md_renderer=render_markdown,
         html=html, html_renderer=render_html, inputs=[runs, prior_path], record=record)


#: Plain advice in the decision layer's notes -> the option that follows it (the decision
#: layer never spells options; this command adds them where a note says what to do).
_NOTE_OPTIONS = (("say lower is better for a latency or duration", "--lower-is-better"),
                 ("compare with the weak prior", "--prior weak"),
                 ("state your noise (a CV or A/A runs)", "--cv, --aa-runs"))


def _spelled(note: str) -> str:
    """``note`` with the option of each piece of advice it gives in brackets after it."""
    for words, option in _NOTE_OPTIONS:
        if words in note and f"({option})" not in note:
            note = note.replace(words, f"{words} ({option})", 1)
    return note


def _write_idata(path: Path, table, a: str, b: str, prior, *, seed: int, likelihood: str,
                 use_cold, lower_is_better: bool) -> None:
    """Write the verdict's MCMC fit as ArviZ InferenceData (NetCDF). The fit is repeated with
    the verdict's data, prior and seed, so the draws are the verdict's own."""
    from models.stats.noise import WEAK
    from models.stats.tps_mcmc import inference_data
    from planner.decide.comparison import build_data, fit

    data = build_data(table, a, b, use_cold=use_cold, lower_is_better=lower_is_better)
    post, _ = fit(data, prior or WEAK, "mcmc", seed=seed, likelihood=likelihood)
    from planner.io.files import atomic_output

    with atomic_output(path, field="--idata") as tmp:  # a failed write leaves no partial file
        inference_data(post, data).to_netcdf(tmp)
