"""``planner shift``: public-to-private risk of a submission. Parses options, calls
:mod:`planner.decide.shift`, renders."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from planner.cli._options import (Html, Json, Md, Seed)

#: Plain field of :func:`planner.decide.shift.run_shift` -> option of ``planner shift``.
_OPTIONS = {"public_tps": "--public-tps", "public-tps": "--public-tps", "runs": "--run",
            "x": "--x", "x_pct": "--x", "k": "--k", "level": "--level", "draws": "--draws",
            "n_draws": "--draws", "seed": "--seed", "evidence": "--evidence",
            "submission": "--submission", "drafter_tuned": "--drafter-tuned"}


def register(app: typer.Typer) -> None:
    """Register ``planner shift`` on the typer app."""
    @app.command()
    def shift(
        ctx: typer.Context,
        public_tps: Optional[float] = typer.Option(None, "--public-tps",
                                                   help="Public score, TPS."),
        runs: Optional[List[float]] = typer.Option(None, "--run", help="A public run's TPS "
                                                   "(repeat for several runs)."),
        public_capture: Optional[Path] = typer.Option(None, "--public-capture",
                                                      help="Capture of the public prompts "
                                                      "(default: the calibration set's "
                                                      "measured counters)."),
        private_capture: Optional[Path] = typer.Option(None, "--private-capture",
                                                       help="Capture of the private-proxy "
                                                       "prompts."),
        evidence: Optional[str] = typer.Option(None, "--evidence", help="Without a private "
                                               "capture: official or proxy shipped pairs "
                                               "(default: official)."),
        submission: Optional[str] = typer.Option(None, "--submission", help="The "
                                                 "submission's label; 'drafterft' in it "
                                                 "marks a drafter fine-tuned on public-like "
                                                 "prompts (the official fit's covariate)."),
        drafter_tuned: Optional[bool] = typer.Option(None, "--drafter-tuned/--no-drafter-tuned",
                                                     help="Whether the drafter was fine-tuned "
                                                     "on public-like prompts (overrides the "
                                                     "label; default: from --submission, "
                                                     "else not tuned)."),
        x: float = typer.Option(5.0, "--x", help="Drop threshold X in %."),
        k: Optional[int] = typer.Option(None, "--k", help="With a private capture: MTP "
                                        "chain depth, 1..7 (default: 7)."),
        level: float = typer.Option(0.90, "--level", help="Interval level."),
        draws: int = typer.Option(20000, "--draws", help="Monte-Carlo draws "
                                  "(100..1,000,000)."),
        seed: Seed = 0,
        as_json: Json = False,
        md: Md = None,
        html: Html = None,
    ) -> None:
        """P(private score more than X % below public): the public-to-private risk.

        One recommended answer (without captures: the fit on the official verifier pairs;
        with captures: your captures' projection when it agrees with that fit), the other
        modes as checks, and what the answer rests on (where P crosses 0.5)."""
        from models.errors import ModelInputError
        from planner.cli._options import as_option, command_params
        from planner.errors import InputError
        from planner.report.output import emit, guard_outputs, input_record
        from planner.report.views.shift import render_html, render_markdown, render_terminal
        from planner.decide.shift import run_shift

        params = command_params(ctx, locals())  # what the input record shows
        caps = [p for p in (public_capture, private_capture) if p]
        guard_outputs([("--md", md), ("--html", html)], caps)
        if (public_tps is None) == (not runs):
            raise InputError("give exactly one of --public-tps (one score) or --run (repeat "
                             "for several runs)", field="--public-tps" if public_tps is None
                             else "--run")
        # options that only one mode reads are refused in the other, not silently ignored
        if private_capture is None and public_capture is not None:
            raise InputError("--public-capture is read against a private capture: give "
                             "--private-capture too (without one the shipped public/private "
                             "pairs are used, which need no capture)", field="--public-capture")
        if private_capture is not None and evidence is not None:
            raise InputError("--evidence picks the shipped pairs used without a private "
                             "capture; with --private-capture the captures are the evidence",
                             field="--evidence")
        if evidence is not None and evidence not in ("official", "proxy"):  # was accepted
            raise InputError(f"unknown evidence {evidence!r} (official or proxy)",
                             field="--evidence")
        if private_capture is None and k is not None:
            raise InputError("--k sets the MTP depth the captures are projected at; without "
                             "--private-capture the shipped pairs give the ratio (their own "
                             "stacks)", field="--k")
        if evidence is None:
            evidence = "official"
            if private_capture is None:  # the default it was; with captures it is not used
                params["evidence"] = evidence
        if k is None:
            k = 7
            if private_capture is not None:  # recorded as when it was the option's default
                params["k"] = k
        try:
            res = run_shift(public_tps, runs=runs or None, public_capture=public_capture,
                            private_capture=private_capture, evidence=evidence, x_pct=x, k=k,
                            level=level, n_draws=draws, seed=seed, submission=submission,
                            drafter_tuned=drafter_tuned)
        except ModelInputError as exc:
            raise as_option(exc, _OPTIONS) from None
        emit(res.to_dict(), as_json=as_json, terminal=render_terminal, md=md, html=html,
             md_renderer=render_markdown, html_renderer=render_html, inputs=caps,
             record=input_record(params))
