"""``planner draft CAPTURE`` and ``planner draft-sweep CAPTURE``: is this drafting idea worth
a run? Parses options, calls :mod:`planner.decide.draft`, renders. No statistics here."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from planner.cli._options import (Html, Json, Md, Seed, noted)
from planner.io import limits as L
from planner.defaults import DEFAULT_PLATFORM
from planner.errors import InputError

#: Plain field of the decision layer -> option of ``planner draft`` / ``draft-sweep`` (policy
#: parameters such as ``k`` stay plain: they may come from ``-p mtp:k=17`` as well as ``--k``).
_OPTIONS = {"flavor": "--platform", "platform": "--platform", "sigma_tps": "--sigma-tps",
            "mc_reps": "--mc-reps", "mc-reps": "--mc-reps", "baseline_tps": "--baseline-tps",
            "baseline-tps": "--baseline-tps", "price_per_hour": "--price-per-hour",
            "minutes_per_run": "--minutes-per-run", "bootstrap": "--bootstrap",
            "run_cap": "--run-cap", "seed": "--seed", "curve": "--curve",
            "sync_factor": "--sync-factor", "drafter_per_token_ms": "--drafter-ms",
            "correlation": "--correlation", "policy": "--policy", "cost_profile": "--cost-profile",
            "cost-profile": "--cost-profile", "run": "--per-prompt",
            "n-values": "--n-values", "depth-values": "--depth-values",
            "k-values": "--k-values"}


class _Progress:
    """Rich progress bar (stderr) with ``advance()`` / ``close()``."""

    def __init__(self, desc: str, total: int):
        from rich.console import Console
        from rich.progress import Progress

        self._p = Progress(console=Console(stderr=True), transient=True)
        self._p.start()
        self._t = self._p.add_task(desc, total=total)

    def advance(self) -> None:
        self._p.advance(self._t)

    def close(self) -> None:
        self._p.stop()


def _progress(enabled: bool):
    import sys

    # only on a terminal: a redirected stderr should carry errors, not progress debris
    enabled = enabled and sys.stderr.isatty()
    return (lambda d, n: _Progress(d, n)) if enabled else None


def _emit(result, as_json: bool, md: Optional[Path], html: Optional[Path], inputs=(),
          record: Optional[dict] = None) -> None:
    """Render a :class:`planner.decide.draft.DraftResult` or :class:`planner.decide.draft.SweepResult`
    through the report layer (:mod:`planner.report.render`): every view reads the JSON
    object; only the PNG next to a draft's Markdown also uses the (non-serialised) bootstrap
    draws."""
    from planner.report.output import emit

    emit(result.to_dict(), as_json=as_json, md=md, html=html, inputs=inputs,
         samples=getattr(result, "samples", None), record=record)


def _sync_range() -> str:
    """The range of ``sync_factor`` as ``--help`` shows it (the decision layer's limit)."""
    from planner.decide.draft.cost_fields import SYNC_FACTOR

    return SYNC_FACTOR.describe()


_COST_FILE_HELP = ("JSON object overriding fields of the cost profile: verify_base_ms "
                   f"({L.VERIFY_BASE_MS.describe()}), verify_per_row_ms, drafter_per_token_ms, "
                   f"host_ms, sync_add_ms (each {L.STEP_MS.describe()}), staircase_rel "
                   "({rows: step}: at M >= rows the verify time gains step x verify_base_ms, "
                   "the steps adding up), "
                   f"sync_factor ({_sync_range()}), harness_efficiency "
                   "(see docs/drafting.md)")

#: Ranges of the policy parameter options as ``--help`` shows them: the text of
#: planner.decide.draft.N_WINDOW / DRAFT_DEPTH / MTP_K / LOOKUP_THRESHOLD ``.describe()``, written out
#: so that ``--help`` does not import the decision layer (tests/planner/cli/test_inputs_draft.py
#: checks they are the same).
_N_RANGE = "[1, 16] tokens"
_DEPTH_RANGE = "[1, 64] tokens"
_K_RANGE = "[1, 16] tokens"
_THRESHOLD_RANGE = "[1, 64] tokens"
#: Rows of ``draft-sweep --top``: at least one, at most far more than the largest grid
#: (16 windows x 64 depths + 16 K + ar = 1,041 rows).
TOP_ROWS = L.Limit("rows shown", "rows", 1, 10_000, integer=True,
                   why="the largest grid has 1,041 rows")


def _policy_help() -> str:
    """``--policy`` help, derived from the policy registry (reading it imports no NumPy)."""
    from planner.decide.draft.policy import policy_help

    return policy_help()


def _number(item: str, field: str, text: str) -> float:
    """One item of a number list (``--curve``) by the one number grammar
    (:func:`planner.io._parse.to_float`), finite."""
    import math

    from planner.io._parse import to_float

    try:
        x = to_float(item)
    except ValueError:
        x = float("nan")
    if not math.isfinite(x):
        raise InputError(f"{text!r}: item {item!r} is not a finite number", field=field)
    return x


def _policy_specs(policy: List[str], n, depth, min_n, max_n, k, lookup_k, threshold,
                  tree_depth, lookup):
    """The specs of ``--policy`` values (default: the registry's default policies), each
    parameter not given filled from its option or its declared default."""
    from planner.decide.draft.policy import default_specs

    return default_specs(policy, {"n": n, "depth": depth, "min_n": min_n, "max_n": max_n,
                                  "k": k, "lookup_k": lookup_k, "threshold": threshold,
                                  "tree_depth": tree_depth, "lookup": lookup})


def _baseline_spec(baseline: str, *args):
    """The spec of ``--baseline`` (:func:`_policy_specs` of one policy); its errors name
    ``--baseline`` (they named ``--policy``, which the user may not have given)."""
    from models.errors import ModelInputError

    try:
        return _policy_specs([baseline], *args)[0]
    except ModelInputError as exc:
        if exc.field in (None, "policy", "--policy"):
            exc.field = "--baseline"
            exc.args = (exc.one_line(),)
        raise


def _params(ctx, values) -> dict:
    """The command's parameters for its input record
    (:func:`planner.cli._options.command_params`); without a CAPTURE, the shipped example
    is the input, recorded by its embedded name (never a machine path)."""
    from planner.cli._options import command_params
    from planner.decide.draft import EMBEDDED_CAPTURE, default_capture_path
    from planner.report.output import NamedFile

    params = command_params(ctx, values)
    if params.get("capture", ...) is None:
        params["capture"] = NamedFile(EMBEDDED_CAPTURE, default_capture_path())
    return params


def register(app: typer.Typer) -> None:
    """Register ``draft`` and ``draft-sweep`` on the planner app."""

    @app.command("draft")
    def draft(
        ctx: typer.Context,
        capture: Optional[Path] = typer.Argument(None, help="capture .jsonl(.gz): one JSON "
                                                 "object per prompt with prompt_token_ids and "
                                                 "completion_token_ids (greedy stream); at least "
                                                 "3 prompts, 4 walked tokens per prompt and 32 "
                                                 "in all (fewer than 12 prompts, 16 tokens per "
                                                 "prompt or 512 tokens: 'too little evidence'). "
                                                 "Default: the shipped AR example "
                                                 "(embedded:draft_default_capture.jsonl.gz)"),
        policy: List[str] = typer.Option([], "--policy", "-p", help=_policy_help()),
        n: Optional[int] = typer.Option(None, "--n", help="pld match window n, "
                                        f"{_N_RANGE}, default 2"),
        depth: Optional[int] = typer.Option(None, "--depth", "--num-speculative-tokens",
                                            help="draft depth of lookup policies, tokens per "
                                            f"step, {_DEPTH_RANGE} (pld default 24, hf-pld "
                                            "10; suffix max_spec_tokens); vLLM's "
                                            "num_speculative_tokens"),
        min_n: Optional[int] = typer.Option(None, "--min-n", help="ngram prompt_lookup_min, "
                                            f"{_N_RANGE}"),
        max_n: Optional[int] = typer.Option(None, "--max-n", help="ngram prompt_lookup_max, "
                                            f"{_N_RANGE}"),
        k: Optional[int] = typer.Option(None, "--k", help="MTP chain depth K, tokens per step, "
                                        f"{_K_RANGE} (default 7; vLLM num_speculative_tokens "
                                        "of method mtp) / ngram draft tokens k"),
        lookup_k: Optional[int] = typer.Option(None, "--lookup-k", help="ngram draft tokens k "
                                               f"inside a hybrid, {_K_RANGE}"),
        lookup: str = typer.Option("suffix", "--lookup", help="lookup drafter of hybrids: pld, "
                                   "hf-pld, ngram or suffix"),
        threshold: Optional[int] = typer.Option(None, "--threshold", help="suffix-first: "
                                                "lookup when match_len >= threshold, "
                                                f"{_THRESHOLD_RANGE}"),
        tree_depth: Optional[int] = typer.Option(None, "--tree-depth", help="tree: cap on the "
                                                 f"lookup branch, {_DEPTH_RANGE}"),
        curve: List[str] = typer.Option([], "--curve", help="MTP survival curve "
                                        "'0.73,0.55,...' (comma list, no spaces), a record id, "
                                        "or a JSON/JSONL file; one only: it applies to every "
                                        "MTP policy"),
        per_prompt: str = typer.Option("B", "--per-prompt", help="embedded stack-F per-prompt "
                                       "counters run: A, B, A+B or none"),
        correlation: str = typer.Option("calibrated", "--correlation", help="hybrids: how "
                                        "MTP acceptance follows lookup easiness: calibrated "
                                        "(from the per-prompt counters), independent, or a "
                                        f"gamma value in {L.GAMMA.describe()}"),
        baseline: str = typer.Option("ar", "--baseline", help="baseline policy (same grammar "
                                     "as --policy)"),
        baseline_tps: Optional[float] = typer.Option(None, "--baseline-tps", help="measured "
                                                     "TPS of the baseline, "
                                                     f"{L.TPS.describe()}; projections scale "
                                                     "it (default: the cost model's absolute "
                                                     "TPS)"),
        bootstrap: int = typer.Option(2000, "--bootstrap", help="bootstrap replicates over "
                                      f"prompts, {L.BOOTSTRAP.describe()}"),
        mc_reps: int = typer.Option(200, "--mc-reps", help="Monte-Carlo replicates of the "
                                    "stochastic (MTP-based) policies, "
                                    f"{L.MC_REPS.describe()}"),
        seed: Seed = 0,
        convention: str = typer.Option("reference", "--convention", help="reference: the "
                                       "first forward counts (reproduces the reference "
                                       "replay); vllm: leave the prefill token out, as "
                                       "vLLM's spec-decode counters do"),
        stop_at_eos: bool = typer.Option(False, "--stop-at-eos", help="cut each completion "
                                         "at its first EOS token (ids 1, 106)"),
        cost_profile: str = typer.Option("F", "--cost-profile", help="step-time model: F "
                                         "(int4 stack F) or bf16head"),
        cost_file: Optional[Path] = typer.Option(None, "--cost-file", help=_COST_FILE_HELP),
        sync_factor: Optional[float] = typer.Option(None, "--sync-factor", help="multiplier "
                                                    "of the whole step time (verify + "
                                                    "drafter + host) of a synchronous step "
                                                    "(a host-side lookup in the loop: the "
                                                    "lookup policies, suffix-first, tree) "
                                                    "over the asynchronous one, "
                                                    f"{_sync_range()}; 1 = a sync costs "
                                                    "nothing. Plausible 1.00-1.26 "
                                                    "(forward_cost.md s1: serialized vs "
                                                    "pipelined steps 1.15-1.26x); default "
                                                    "1.20, their midpoint. The result's "
                                                    "rests_on says where in that range "
                                                    "the verdict flips"),
        drafter_ms: Optional[float] = typer.Option(None, "--drafter-ms",
                                                   help="drafter time per draft token, "
                                                   f"{L.STEP_MS.describe()}"),
        sigma_tps: Optional[float] = typer.Option(None, "--sigma-tps", help="TPS sd of one "
                                                  f"run, {L.SIGMA_TPS.describe()} (default: the "
                                                  "--platform noise prior, one run on a new "
                                                  "allocation; a stated sd, below 99 % of "
                                                  "the baseline TPS, is held as known by "
                                                  "the runs/arm sizing too)"),
        platform: str = typer.Option(DEFAULT_PLATFORM, "--platform", help="platform of the "
                                     "real runs: its noise prior and cost model size the "
                                     "worth-a-run experiment"),
        run_cap: int = typer.Option(40, "--run-cap", help="max runs per arm the sizing "
                                    f"considers, {L.RUNS_PER_ARM.describe()}"),
        minutes_per_run: Optional[float] = typer.Option(None, "--minutes-per-run",
                                                        help="override the platform cost "
                                                        "model's minutes per run, "
                                                        f"{L.MINUTES_PER_RUN.describe()}"),
        price_per_hour: Optional[float] = typer.Option(None, "--price-per-hour",
                                                       help="override the platform cost "
                                                       "model's price per GPU-hour, "
                                                       f"{L.PRICE_PER_HOUR.describe()}"),
        as_json: Json = False,
        md: noted(Md, '(and its PNG)') = None,
        html: Html = None,
    ) -> None:
        """Simulate drafting policies on a capture; project TPS; is it worth a run?"""
        from models.errors import ModelInputError
        from planner.cli._options import as_option

        params = _params(ctx, locals())  # what the input record shows

        try:
            _draft(**locals())
        except ModelInputError as exc:
            raise as_option(exc, _OPTIONS) from None

    def _draft(capture, policy, n, depth, min_n, max_n, k, lookup_k, lookup, threshold,
               tree_depth, curve, per_prompt, correlation, baseline, baseline_tps, bootstrap,
               mc_reps, seed, convention, stop_at_eos, cost_profile, cost_file, sync_factor,
               drafter_ms, sigma_tps, platform, run_cap, minutes_per_run, price_per_hour,
               as_json, md, html, params=None, **_) -> None:
        from planner.decide.draft import NoiseSpec, run_draft, split_items
        from planner.io.limits import check_all
        from planner.report.output import guard_outputs

        bad = next((p for p in policy + [baseline] if p.startswith("=")), None)
        if bad is not None:  # click reads '-p=mtp' as the value '=mtp'
            raise InputError(f"policy {bad!r} starts with '=': a one-letter option takes its "
                             f"value after a space (-p {bad[1:]}, or --policy={bad[1:]})",
                             field="--policy")
        if len(curve) > 1:
            raise InputError(f"--curve given {len(curve)} times: one curve applies to every "
                             "MTP policy (run draft once per curve)", field="--curve")
        curve = curve[0] if curve else None
        inputs = [capture, cost_file] + ([Path(curve)] if curve and Path(curve).exists() else [])
        guard_outputs([("--md", md), ("--md (its plot)",
                                      md.with_suffix(".png") if md and md.name else None),
                       ("--html", html)], inputs)
        check_all([("bootstrap", bootstrap, "--bootstrap"), ("mc_reps", mc_reps, "--mc-reps"),
                   ("seed", seed, "--seed"), ("baseline_tps", baseline_tps, "--baseline-tps"),
                   ("sigma_tps", sigma_tps, "--sigma-tps"),
                   ("price_per_hour", price_per_hour, "--price-per-hour"),
                   ("minutes_per_run", minutes_per_run, "--minutes-per-run"),
                   ("max_runs_per_arm", run_cap, "--run-cap"),
                   ("drafter_ms", drafter_ms, "--drafter-ms")])
        if sync_factor is not None:
            from planner.decide.draft.cost_fields import SYNC_FACTOR

            SYNC_FACTOR.check(sync_factor, field="--sync-factor")
        specs = _policy_specs(policy, n, depth, min_n, max_n, k, lookup_k, threshold,
                              tree_depth, lookup)
        base = _baseline_spec(baseline, n, depth, min_n, max_n, k, lookup_k, threshold,
                              tree_depth, lookup)
        # --lookup by the hybrids' own rule even when no hybrid runs ('nope' was taken)
        from planner.decide.draft.policy import default_specs, validate_policy

        validate_policy(default_specs(["hybrid-max"], {"lookup": lookup})[0])
        cv = acc = None
        if curve is not None:
            if "," in curve or curve.replace(".", "", 1).isdigit():
                from planner.io._parse import refuse_decimal_comma

                refuse_decimal_comma(curve, field="--curve")  # '0,9,0,8': decimal commas
                cv = [_number(x, "--curve", curve)
                      for x in split_items(curve, field="--curve", what="curve")]
            else:
                acc = curve
        if correlation in ("calibrated", "independent"):
            corr = correlation
        else:
            try:
                corr = L.check("correlation", correlation, field="--correlation")
            except InputError as exc:
                raise InputError(f"calibrated, independent or a gamma value in "
                                 f"{L.GAMMA.describe()}, got {correlation!r} ({exc.message})",
                                 field="--correlation") from None
        if convention not in ("reference", "vllm"):
            raise InputError(f"unknown convention {convention!r} (reference or vllm)",
                             field="--convention")
        result = run_draft(
            capture, specs, start=0 if convention == "reference" else 1, baseline=base, baseline_tps=baseline_tps, n_boot=bootstrap,
            seed=seed, mc_reps=mc_reps, stop_at_eos=stop_at_eos, curve=cv, acceptance=acc,
            per_prompt=None if cv is not None or acc is not None else per_prompt,
            correlation=corr, cost_profile=cost_profile,
            cost_file=str(cost_file) if cost_file else None,
            cost_overrides={"sync_factor": sync_factor, "drafter_per_token_ms": drafter_ms},
            noise=NoiseSpec(sigma_tps=sigma_tps), platform=platform, run_cap=run_cap,
            minutes_per_run=minutes_per_run, price_per_hour=price_per_hour,
            progress=_progress(not as_json))
        from planner.report.output import input_record

        _emit(result, as_json, md, html, inputs, record=input_record(params or {}))

    @app.command("draft-sweep")
    def draft_sweep(
        ctx: typer.Context,
        capture: Optional[Path] = typer.Argument(None, help="capture .jsonl(.gz) (as for "
                                                 "planner draft; default the shipped AR "
                                                 "example)"),
        families: str = typer.Option("pld,ngram,suffix,mtp,suffix-first,tree", "--families",
                                     help="policy families to sweep, comma list (no spaces) "
                                     "of pld, ngram, suffix, mtp, suffix-first, tree; the "
                                     "default grid has 68 rows with plain decoding "
                                     "(docs/drafting.md 'Sweeps')"),
        n_values: str = typer.Option("1,2,3,4,5", "--n-values", help="pld match windows n, "
                                     f"comma list (no spaces), each {_N_RANGE}"),
        depth_values: str = typer.Option("4,8,12,16,20,24,28,32", "--depth-values",
                                         "--d-values", help="pld draft depths, comma list (no "
                                         f"spaces), each {_DEPTH_RANGE}; --d-values is the "
                                         "old spelling"),
        ngram_windows: str = typer.Option("1-3,2-4,2-6,3-6", "--ngram-windows", help="ngram "
                                          "(vLLM's) windows min_n-max_n, comma list, each "
                                          f"n {_N_RANGE}"),
        ngram_k: str = typer.Option("3,5,8", "--ngram-k", help="ngram draft tokens k, comma "
                                    f"list, each {_K_RANGE}"),
        suffix_depths: str = typer.Option("24", "--suffix-depths", help="suffix draft "
                                          f"depths (max_spec_tokens), comma list, each "
                                          f"{_DEPTH_RANGE}; each is its own suffix-tree "
                                          "replay"),
        suffix_factors: str = typer.Option("1,2", "--suffix-factors", help="suffix "
                                           "max_spec_factor values (a draft is at most "
                                           "factor x the match length), comma list, each in "
                                           "(0, 16]"),
        k_values: str = typer.Option("1,2,3,4,5,6,7", "--k-values", help="MTP chain depths K, "
                                     f"comma list (no spaces), each {_K_RANGE} (the embedded "
                                     "stack-F curve is measured to K=7); the hybrids use "
                                     "the largest"),
        thresholds: str = typer.Option("2,4,8", "--thresholds", help="suffix-first "
                                       "thresholds (lookup when match_len >= threshold), "
                                       f"comma list, each {_THRESHOLD_RANGE}"),
        tree_depths: str = typer.Option("4,8,24", "--tree-depths", help="tree lookup-branch "
                                        f"depths, comma list, each {_DEPTH_RANGE}"),
        baseline: str = typer.Option("ar", "--baseline", help="baseline policy every row's "
                                     "gain and worth-a-run verdict is against (grammar of "
                                     "planner draft --policy)"),
        baseline_tps: Optional[float] = typer.Option(None, "--baseline-tps", help="measured "
                                                     f"TPS of the baseline, "
                                                     f"{L.TPS.describe()}; projections scale "
                                                     "it"),
        bootstrap: int = typer.Option(1000, "--bootstrap", help="bootstrap replicates over "
                                      f"prompts, {L.BOOTSTRAP.describe()}"),
        mc_reps: int = typer.Option(50, "--mc-reps", help="Monte-Carlo replicates of MTP rows, "
                                    f"{L.MC_REPS.describe()}"),
        seed: Seed = 0,
        convention: str = typer.Option("reference", "--convention", help="reference: the "
                                       "first forward counts (reproduces the reference "
                                       "replay); vllm: leave the prefill token out, as "
                                       "vLLM's spec-decode counters do"),
        stop_at_eos: bool = typer.Option(False, "--stop-at-eos", help="cut each completion "
                                         "at its first EOS token (ids 1, 106)"),
        cost_profile: str = typer.Option("F", "--cost-profile", help="step-time model: F or "
                                         "bf16head"),
        sync_factor: Optional[float] = typer.Option(None, "--sync-factor", help="multiplier "
                                                    "of the whole step time of a "
                                                    "synchronous step over the asynchronous "
                                                    f"one, {_sync_range()} (as planner "
                                                    "draft)"),
        top: int = typer.Option(20, "--top", help="rows shown on the terminal, "
                                f"{TOP_ROWS.describe()}"),
        as_json: Json = False,
        md: Md = None,
        html: Html = None,
    ) -> None:
        """Grid over every drafting family, ranked by projected TPS, with worth-a-run per row.

        Families: pld, vLLM's ngram, suffix, MTP K, suffix-first thresholds, tree depth
        (docs/drafting.md 'Sweeps over every family')."""
        from models.errors import ModelInputError
        from planner.cli._options import as_option

        params = _params(ctx, locals())  # what the input record shows

        try:
            _sweep(**locals())
        except ModelInputError as exc:  # the sweep's K is --k-values (draft's is --k)
            raise as_option(exc, {**_OPTIONS, "k": "--k-values"}) from None

    def _sweep(capture, families, n_values, depth_values, ngram_windows, ngram_k,
               suffix_depths, suffix_factors, k_values, thresholds, tree_depths, baseline, baseline_tps,
               bootstrap, mc_reps, seed, convention, stop_at_eos, cost_profile, sync_factor,
               top, as_json, md, html, params=None, **_) -> None:
        from planner.decide.draft import (DRAFT_DEPTH, LOOKUP_THRESHOLD, MTP_K, N_WINDOW,
                                          run_sweep, split_items)
        from planner.decide.draft.sweep import FAMILIES
        from planner.io.limits import check_all
        from planner.report.views.draft_sweep import render_terminal as render_sweep_terminal
        from planner.report.output import emit, guard_outputs, input_record

        guard_outputs([("--md", md), ("--html", html)], [capture])
        check_all([("mc_reps", mc_reps, "--mc-reps"), ("seed", seed, "--seed"),
                   ("baseline_tps", baseline_tps, "--baseline-tps"),
                   ("bootstrap", bootstrap, "--bootstrap")])
        TOP_ROWS.check(top, field="--top")
        if sync_factor is not None:
            from planner.decide.draft.cost_fields import SYNC_FACTOR

            SYNC_FACTOR.check(sync_factor, field="--sync-factor")

        def once(vals, fld):
            dup = next((v for i, v in enumerate(vals) if v in vals[:i]), None)
            if dup is not None:  # each value is one grid row: twice, it was ranked twice
                raise InputError(f"{dup} is listed twice; give each value once", field=fld)
            return vals

        def ints(s: str, fld: str, lim) -> list[int]:
            return once([lim.check(x, field=fld)
                         for x in split_items(s, field=fld, what="list")], fld)

        def windows(s: str) -> list[tuple]:
            out = []
            for item in split_items(s, field="--ngram-windows", what="list"):
                lo, sep, hi = item.partition("-")
                if not sep:
                    raise InputError(f"window {item!r} is not min_n-max_n (e.g. 2-4)",
                                     field="--ngram-windows")
                a = N_WINDOW.check(lo, field="--ngram-windows")
                b = N_WINDOW.check(hi, field="--ngram-windows")
                if a > b:
                    raise InputError(f"window {item!r}: min_n > max_n", field="--ngram-windows")
                out.append((a, b))
            return once(out, "--ngram-windows")

        def factors(s: str) -> list[float]:
            out = []
            for item in split_items(s, field="--suffix-factors", what="list"):
                f = _number(item, "--suffix-factors", s)
                if not 0 < f <= 16:
                    raise InputError(f"max_spec_factor {item!r} outside (0, 16]",
                                     field="--suffix-factors")
                out.append(f)
            return once(out, "--suffix-factors")

        fams = once(split_items(families, field="--families", what="list"), "--families")
        bad = next((f for f in fams if f not in FAMILIES), None)
        if bad is not None:
            raise InputError(f"unknown family {bad!r} (one of {', '.join(FAMILIES)})",
                             field="--families")
        if convention not in ("reference", "vllm"):
            raise InputError(f"unknown convention {convention!r} (reference or vllm)",
                             field="--convention")
        if baseline.startswith("="):
            raise InputError(f"baseline {baseline!r} starts with '='", field="--baseline")
        base = _baseline_spec(baseline, None, None, None, None, None, None, None, None,
                              "suffix")
        result = run_sweep(capture, families=fams, baseline=base,
                           start=0 if convention == "reference" else 1,
                           n_values=ints(n_values, "--n-values", N_WINDOW),
                           depth_values=ints(depth_values, "--depth-values", DRAFT_DEPTH),
                           ngram_windows=windows(ngram_windows),
                           ngram_k=ints(ngram_k, "--ngram-k", MTP_K),
                           suffix_depths=ints(suffix_depths, "--suffix-depths", DRAFT_DEPTH),
                           suffix_factors=factors(suffix_factors),
                           k_values=ints(k_values, "--k-values", MTP_K),
                           thresholds=ints(thresholds, "--thresholds", LOOKUP_THRESHOLD),
                           tree_depths=ints(tree_depths, "--tree-depths", DRAFT_DEPTH),
                           stop_at_eos=stop_at_eos, seed=seed, mc_reps=mc_reps,
                           n_boot=bootstrap, cost_profile=cost_profile,
                           cost_overrides={"sync_factor": sync_factor},
                           baseline_tps=baseline_tps, progress=_progress(not as_json))

        emit(result.to_dict(), as_json=as_json, md=md, html=html, inputs=[capture],
             terminal=lambda r: render_sweep_terminal(r, top),
             record=input_record(params or {}))
