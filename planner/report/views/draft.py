"""Renderers of the ``planner draft`` and ``planner draft sweep`` results: rich terminal
tables and Markdown.

Every function takes the JSON object of a result (:meth:`planner.decide.draft.DraftResult.to_dict`,
:meth:`planner.decide.draft.SweepResult.to_dict`, or a saved ``--json`` output read back). The row
functions are shared with the HTML page (:mod:`planner.report.html`).
"""

from __future__ import annotations

from pathlib import PurePath

__all__ = ["POLICY_HEADERS", "VLLM_HEADERS", "SWEEP_HEADERS", "NOT_FROM_CAPTURE",
           "policy_rows", "vllm_rows", "sweep_rows", "headline", "footnotes", "sweep_footnotes",
           "evidence_line", "extrapolation_line", "render_terminal", "render_markdown",
           "render_sweep_terminal", "render_sweep_markdown"]

POLICY_HEADERS = ["policy", "tokens/forward [95 %]", "new prompt set [90 % PI]",
                  "mean acc. len", "lookup frac", "step ms",
                  "projected TPS [95 %]", "gain TPS", "runs/arm", "cost $", "verdict"]
VLLM_HEADERS = ["policy", "convention", "drafts", "draft tokens", "accepted",
                "draft acceptance rate", "mean acceptance length",
                "per-position acceptance rate"]
SWEEP_HEADERS = ["rank", "policy", "params", "tokens/forward", "step ms", "TPS", "x AR"]
_POSITIONS_SHOWN = 8


def _ci(d: dict, nd: int = 3) -> str:
    return f"{d['point']:.{nd}f} [{d['ci_low']:.{nd}f}, {d['ci_high']:.{nd}f}]"


def _num(x, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def headline(r: dict) -> str:
    """One line: capture, bootstrap, baseline, cost model and noise."""
    cap, st = r["capture"], r["settings"]
    anchor = (f"measured {st['baseline_tps']:.1f}" if st.get("baseline_tps")
              else f"model {st['baseline_tps_model']:.1f}")
    dup = cap.get("duplicates")
    n = (f"{cap['n_prompts']} records ({dup['distinct_prompts']} distinct prompts)" if dup
         else f"{cap['n_prompts']} prompts")
    return (f"{n}, {cap['n_tokens']} completion tokens; bootstrap "
            f"{st['bootstrap']} replicates, seed {st['seed']}; baseline {st['baseline']} "
            f"({anchor} TPS); cost model {st['cost_model']['name']}; TPS noise sigma "
            f"{st['noise']['sigma_tps']:.2f} per run"
            + (f" ({st['noise']['label']})" if st["noise"].get("label") else ""))


#: Marker of a row whose numbers do not come from the capture's own tokens.
NOT_FROM_CAPTURE = "†"


def _not_from_capture(p: dict) -> bool:
    # results saved before ``from_capture`` existed: the stochastic (MTP-based) policies
    return not p.get("from_capture", not p.get("stochastic", False))


def _tps(d: dict) -> str:
    """Projected TPS with its bootstrap interval, and the 90 % prediction interval of a row
    projected by the content model on new prompts (``pi_low``/``pi_high``) when it has one."""
    pi = ("" if d.get("pi_low") is None or d.get("pi_high") is None else
          f" PI [{d['pi_low']:.1f}, {d['pi_high']:.1f}]")
    return _ci(d, 1) + pi


def _pi(d: dict) -> str:
    if d.get("pi_low") is None or d.get("pi_high") is None:
        return "-"
    return f"[{d['pi_low']:.3f}, {d['pi_high']:.3f}]"


def evidence_line(r: dict) -> str | None:
    """The too-little-evidence note of a result, None when the capture is large enough."""
    ev = r.get("evidence")
    return ev.get("note") if ev and ev.get("level") != "ok" else None


def extrapolation_line(r: dict) -> str | None:
    """The note that the MTP projection reads the content acceptance model beyond the
    completion positions it was calibrated on (``acceptance.content_model``
    ``share_beyond_calibrated`` > 0), None otherwise (or when no content model was used)."""
    cm = (r.get("acceptance") or {}).get("content_model") or {}
    share = cm.get("share_beyond_calibrated") or 0.0
    if share <= 0:
        return None
    return (f"MTP projection extrapolates: {share:.1%} of the capture's completion tokens lie "
            f"beyond the {cm.get('calibrated_positions', 512)} positions the acceptance model "
            "was calibrated on (not validated there).")


def footnotes(r: dict) -> list[str]:
    """Footnotes of the policies table: which rows are not from the capture's tokens, and
    what the new-prompt-set interval is."""
    out = []
    dup = (r.get("capture") or {}).get("duplicates")
    if dup:
        out.append(f"note: {dup['note']}.")
    seen = set()
    for p in r["policies"]:
        if _not_from_capture(p):
            src = p.get("numbers_from") or "the MTP acceptance curve (" + \
                str(r.get("acceptance", {}).get("source")) + ")"
            if src not in seen:
                seen.add(src)
                out.append(f"{NOT_FROM_CAPTURE} {p['label']}: not from this capture's own "
                           f"tokens; numbers from {src}.")
    if any(p["tokens_per_forward"].get("pi_low") is not None for p in r["policies"]):
        out.append("new prompt set [90 % PI]: prediction interval of tokens/forward on another "
                   "prompt set of this kind (content model; the bootstrap interval when no "
                   "set shift is predicted); the 95 % interval is the bootstrap over these "
                   "prompts.")
    if any(p["projected_tps"].get("pi_low") is not None for p in r["policies"]):
        out.append("projected TPS ... PI [..]: the 90 % prediction interval of tokens/forward on "
                   "a new prompt set mapped through the same cost model; it, not the bootstrap "
                   "interval, is what a run on new prompts can show, and the worth-a-run "
                   "figures integrate over it.")
    return out


def policy_rows(r: dict) -> list[list[str]]:
    """One row of :data:`POLICY_HEADERS` per policy; a row whose numbers do not come from the
    capture's own tokens carries :data:`NOT_FROM_CAPTURE` (see :func:`footnotes`)."""
    out = []
    for p in r["policies"]:
        w = p["worth_a_run"]
        if w is None:
            tail = ["-", "-", "-", "baseline"]
        else:
            verdict = ("upper bound" if p.get("upper_bound") else
                       "too little evidence" if w.get("code") == "too_little_evidence" else
                       "worth" if w["worth"] else "not worth")
            withheld = w.get("code") == "too_little_evidence"
            tail = [f"{w['gain_tps']['point']:+.1f}",
                    "-" if w["gain_tps"]["point"] <= 0 or withheld else
                    str(w["runs_per_arm"] or f">{w['run_cap']}"),
                    "-" if withheld else _num(w["cost_usd"], ".2f"), verdict]
        label = p["label"] + (f" {NOT_FROM_CAPTURE}" if _not_from_capture(p) else "")
        out.append([label, _ci(p["tokens_per_forward"]), _pi(p["tokens_per_forward"]),
                    f"{p['mean_acceptance_length']:.3f}", f"{p['frac_tokens_from_lookup']:.3f}",
                    f"{p['step_ms']:.2f}", _tps(p["projected_tps"]), *tail])
    return out


def vllm_rows(r: dict) -> list[list[str]]:
    """One row of :data:`VLLM_HEADERS` per drafting policy (vLLM's spec-decode counters of the
    replay, per replicate; the first positions of the per-position rate)."""
    out = []
    for p in r["policies"]:
        v = p.get("vllm_counters")
        if not v or not v["num_drafts"]:
            continue
        pos = v["acceptance_rate_per_position"]
        shown = ", ".join(f"{x:.3f}" for x in pos[:_POSITIONS_SHOWN])
        out.append([p["label"], v["convention"], f"{v['num_drafts']:.0f}",
                    f"{v['num_draft_tokens']:.0f}", f"{v['num_accepted_tokens']:.0f}",
                    _num(v["draft_acceptance_rate"], ".4f"),
                    _num(v["mean_acceptance_length"], ".4f"),
                    shown + (", ..." if len(pos) > _POSITIONS_SHOWN else "")])
    return out


def sweep_rows(r: dict, top: int | None = None) -> list[list[str]]:
    """Rows of :data:`SWEEP_HEADERS`, best first (``top`` rows, default all)."""
    rows = r["rows"] if top is None else r["rows"][:top]
    mark = lambda row: (f" {NOT_FROM_CAPTURE}" if not row.get("from_capture",  # noqa: E731
                                                               row["policy"] != "mtp") else "")
    return [[str(i), row["policy"] + mark(row), ",".join(f"{a}={b}" for a, b in row["params"].items()),
             f"{row['tokens_per_forward']:.3f}", f"{row['step_ms']:.2f}",
             f"{row['projected_tps']:.1f}", f"{row['speedup_vs_ar']:.2f}"]
            for i, row in enumerate(rows, 1)]


def sweep_footnotes(r: dict) -> list[str]:
    """Footnotes of a sweep: rows not from the capture's tokens, too little evidence."""
    out = []
    if any(not row.get("from_capture", row["policy"] != "mtp") for row in r["rows"]):
        out.append(f"{NOT_FROM_CAPTURE} mtp rows: numbers from the MTP acceptance curve "
                   f"{r['acceptance']}, not from this capture's own tokens (the capture gives "
                   "lengths).")
    ev = evidence_line(r)
    if ev:
        out.append(ev + ".")
    return out


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    return (["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
            + ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows])


def _console(width: int):
    from rich.console import Console

    con = Console()
    return con if con.is_terminal else Console(width=width)


def _rich_table(title: str, headers: list[str], rows: list[list[str]]):
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for h in headers:
        t.add_column(h)
    for row in rows:
        t.add_row(*row)
    return t


def render_terminal(r: dict) -> None:
    """Print a draft result: the policies table, vLLM's counters, the verdict."""
    con = _console(190)
    con.print(f"capture {PurePath(r['capture']['path']).name}: {headline(r)}")
    ev = evidence_line(r)
    if ev:
        con.print(f"[bold]{ev}[/]", markup=True)
    con.print(_rich_table("drafting policies (95 % bootstrap intervals)", POLICY_HEADERS,
                          policy_rows(r)))
    for note in footnotes(r):
        con.print(note, markup=False)
    if extrapolation_line(r):
        con.print(extrapolation_line(r), markup=False)
    vr = vllm_rows(r)
    if vr:
        con.print(_rich_table("vLLM spec-decode counters of the replay (per run)", VLLM_HEADERS,
                              vr))
    if r.get("worth_a_run"):
        con.print(r["worth_a_run"]["verdict"])


def render_markdown(r: dict, plot_name: str | None = None) -> str:
    """A draft result as Markdown; ``plot_name`` is the PNG written next to it, if any."""
    lines = [f"# planner draft: {PurePath(r['capture']['path']).name}", "",
             headline(r) + ".", ""] + ([f"**{evidence_line(r)}.**", ""] if evidence_line(r)
                                       else []) + _md_table(POLICY_HEADERS, policy_rows(r))
    notes = footnotes(r)
    if notes:
        lines += [""] + [n + "  " for n in notes]
    vr = vllm_rows(r)
    if vr:
        lines += ["", "## vLLM spec-decode counters of the replay", ""]
        lines += _md_table(VLLM_HEADERS, vr)
        lines += ["", "Draft acceptance rate = accepted / draft tokens; mean acceptance length "
                  "= 1 + accepted / drafts; per-position rate i = drafts accepting at least i "
                  "tokens / drafts. Convention vllm leaves the prefill token out as a server "
                  "does (`--convention vllm`)."]
    if r.get("worth_a_run"):
        w = r["worth_a_run"]
        # the verdict names its headline row and basis (results saved before ``basis``: not)
        lines += ["", f"**{w['verdict']}**" + ("" if "basis" in w else
                                               f" (best: `{w['best_policy']}`)")]
    if plot_name:
        lines += ["", f"![tokens/forward per policy]({plot_name})"]
    return "\n".join(lines) + "\n"


def _sweep_title(r: dict) -> str:
    return f"draft sweep on {PurePath(r['capture']).name} (ranked by projected TPS)"


def render_sweep_terminal(r: dict, top: int = 20) -> None:
    """Print the best ``top`` rows of a sweep result."""
    con = _console(150)
    con.print(_rich_table(_sweep_title(r), SWEEP_HEADERS, sweep_rows(r, top)))
    for note in sweep_footnotes(r):
        con.print(note, markup=False)


def render_sweep_markdown(r: dict) -> str:
    """A sweep result as Markdown (every row)."""
    lines = [f"# {_sweep_title(r)}", "",
             f"{r['n_prompts']} prompts; cost model {r['cost_model']}; MTP acceptance "
             f"{r['acceptance']}; {r['mc_replicates']} MC replicates, seed {r['seed']}.", ""]
    notes = sweep_footnotes(r)
    return "\n".join(lines + _md_table(SWEEP_HEADERS, sweep_rows(r))
                     + ([""] + [n + "  " for n in notes] if notes else [])) + "\n"
