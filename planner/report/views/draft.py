"""The draft report kind (``planner draft``): terminal, Markdown and HTML views, the PNG
next to its Markdown, and the saved-JSON schema.

Every function takes the JSON object of a result
(:meth:`planner.decide.draft.DraftResult.to_dict`, or a saved ``--json`` output read back)
and every view opens with :func:`headline` (the worth-a-run verdict). The sweep
(``planner draft sweep``) is its own kind: :mod:`planner.report.views.draft_sweep`.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated, NotRequired, TypedDict

from msgspec import Meta

from planner.report.escape import md, term

__all__ = ["SCHEMA", "POLICY_HEADERS", "VLLM_HEADERS", "RESTS_ON_HEADERS", "NOT_FROM_CAPTURE",
           "rests_on_rows", "rests_on_summary", "policy_rows",
           "vllm_rows", "headline", "settings_line", "footnotes", "evidence_line",
           "extrapolation_line", "render_terminal", "render_markdown", "render_html",
           "markdown_plot", "md_table", "rich_table", "console", "print_table",
           "table_fits"]


class _Interval(TypedDict):
    point: float
    ci_low: float
    ci_high: float
    pi_low: NotRequired[float | None]
    pi_high: NotRequired[float | None]


class _Policy(TypedDict):
    label: str
    tokens_per_forward: _Interval
    projected_tps: _Interval
    mean_acceptance_length: float
    frac_tokens_from_lookup: float
    step_ms: float
    worth_a_run: dict[str, object] | None
    vllm_counters: NotRequired[dict[str, object] | None]


class _Capture(TypedDict):
    path: str
    n_prompts: int
    n_tokens: int


class _Noise(TypedDict):
    sigma_tps: float
    label: NotRequired[str | None]


class _Settings(TypedDict):
    bootstrap: int
    seed: int
    baseline: str
    cost_model: dict[str, object]
    noise: _Noise


class _Worth(TypedDict):
    verdict: str
    best_policy: NotRequired[str]


class SCHEMA(TypedDict):
    """The fields of a saved draft result the views read, with their types."""
    capture: _Capture
    settings: _Settings
    policies: Annotated[list[_Policy], Meta(min_length=1)]
    worth_a_run: NotRequired[_Worth | None]
    rests_on: NotRequired[list[dict[str, object]]]


POLICY_HEADERS = ["policy", "tokens/forward [95 %]", "new prompt set [90 % PI]",
                  "mean acc. len", "lookup frac", "step ms",
                  "projected TPS [95 %]", "gain TPS", "runs/arm", "cost $", "verdict"]
VLLM_HEADERS = ["policy", "convention", "drafts", "draft tokens", "accepted",
                "draft acceptance rate", "mean acceptance length",
                "per-position acceptance rate"]
_POSITIONS_SHOWN = 8
RESTS_ON_HEADERS = ["constant", "value", "plausible range", "flips at", "what it means",
                    "source"]


def _val(x) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def rests_on_rows(r: dict) -> list[list[str]]:
    """One row of :data:`RESTS_ON_HEADERS` per constant of the result's ``rests_on``
    (:class:`planner.results.rests_on.RestsOn` objects); none for results saved before it."""
    out = []
    for e in r.get("rests_on") or []:
        rng = ("-" if e.get("low") is None or e.get("high") is None else
               f"[{_val(e['low'])}, {_val(e['high'])}]" + (f" {e['unit']}" if e.get("unit")
                                                          else ""))
        alts = e.get("alternatives") or {}
        if e.get("low") is None and alts:
            rng = "; ".join(f"{k}: {v}" for k, v in alts.items())
        out.append([e["name"], _val(e["value"]), rng,
                    "-" if e.get("flip_at") is None else _val(e["flip_at"]), e["note"],
                    e["source"]])
    return out


def rests_on_summary(r: dict) -> str | None:
    """One line under the headline: the constants whose range holds a flip point (None when
    the conclusion holds over every range, or the result has no ``rests_on``)."""
    flips = [e for e in r.get("rests_on") or [] if e.get("flip_at") is not None]
    cats = [e for e in r.get("rests_on") or [] if e.get("flip_at") is None and
            e.get("low") is None and e.get("alternatives") and any(
                str(v).split(" (")[0] != str(e["conclusion"]).split(" (")[0]
                for v in e["alternatives"].values())]
    if not r.get("rests_on") or any(str(e.get("note", "")).startswith("not evaluated")
                                    for e in r["rests_on"]):
        return None
    if not flips and not cats:
        return ("rests on: the conclusion holds over every constant's plausible range "
                "(see 'rests on')")
    return "rests on: " + "; ".join(e["note"] for e in flips + cats)


def _ci(d: dict, nd: int = 3) -> str:
    return f"{d['point']:.{nd}f} [{d['ci_low']:.{nd}f}, {d['ci_high']:.{nd}f}]"


def _num(x, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def headline(r: dict) -> list[str]:
    """The sentence every view of a draft result opens with: its worth-a-run verdict, else
    the best projected policy and its TPS."""
    w = r.get("worth_a_run")
    if w and w.get("verdict"):
        return [str(w["verdict"])]
    best = max(r["policies"], key=lambda p: p["projected_tps"]["point"], default=None)
    if best is None:
        return ["no drafting policy replayed"]
    t = best["projected_tps"]
    return [f"best projected: {best['label']}, {t['point']:.1f} TPS "
            f"[{t['ci_low']:.1f}, {t['ci_high']:.1f}]"]


def settings_line(r: dict) -> str:
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
    by_src: dict[str, list[str]] = {}   # every marked row named, one line per source
    for p in r["policies"]:
        if _not_from_capture(p):
            src = p.get("numbers_from") or "the MTP acceptance curve (" + \
                str(r.get("acceptance", {}).get("source")) + ")"
            by_src.setdefault(src, []).append(p["label"])
    for src, labels in by_src.items():
        out.append(f"{NOT_FROM_CAPTURE} {', '.join(labels)}: not from this capture's own "
                   f"tokens; numbers from {src}.")
    st = (r.get("acceptance") or {}).get("stack") or {}
    if st.get("note") and any(_not_from_capture(p) for p in r["policies"]):
        out.append(f"MTP curve: {st['note']}.")
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


def md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table of text cells (each escaped: :func:`planner.report.escape.md`)."""
    return (["| " + " | ".join(md(h) for h in headers) + " |", "|" + "---|" * len(headers)]
            + ["| " + " | ".join(md(c) for c in row) + " |" for row in rows])


def console(width: int):
    """A rich console; ``width`` columns when the output is not a terminal."""
    from rich.console import Console

    con = Console()
    return con if con.is_terminal else Console(width=width)


def rich_table(title: str, headers: list[str], rows: list[list[str]]):
    """A rich table of text cells, each printed literally."""
    from rich.table import Table

    t = Table(title=term(title), title_justify="left")
    for j, h in enumerate(headers):
        # the first column (the policy label, the constant's name) on one line, so rich
        # narrows the others, wrapping at their spaces, instead of cutting a label to
        # "suffix-first(k=7,lookup=suff…" (print_table checks that the words fit)
        t.add_column(term(h), no_wrap=j == 0)
    for row in rows:
        t.add_row(*[term(c) for c in row])
    return t


def table_fits(width: int, headers: list[str], rows: list[list[str]]) -> bool:
    """Whether a rich table of these cells fits ``width`` columns with every word whole
    (each column at least its longest word, plus rich's 3 columns of border and padding)."""
    need = 1
    for j, h in enumerate(headers):
        cells = [h] + [row[j] for row in rows if j < len(row)]
        need += 3 + max((len(w) for c in cells for w in str(c).split()), default=1)
    return need <= width


def print_table(con, title: str, headers: list[str], rows: list[list[str]]) -> None:
    """Print the cells as a rich table when it fits the console with every word whole;
    else (a narrow terminal, where rich would cut every figure to "3.8…") one block per row:
    its first cell, then ``header: value`` lines."""
    if table_fits(con.width, headers, rows):
        con.print(rich_table(title, headers, rows))
        return
    con.print(term(title, "bold"))
    for row in rows:
        con.print(term(str(row[0]), "bold"))
        for h, c in zip(headers[1:], row[1:]):
            if str(c).strip():
                con.print(term(f"  {h}: {c}"))


def render_terminal(r: dict) -> None:
    """Print a draft result: headline, the policies table, vLLM's counters."""
    con = console(190)
    for line in headline(r):
        con.print(term(line, "bold"))
    if rests_on_summary(r):
        con.print(term(rests_on_summary(r), "bold"))
    con.print(term(f"capture {PurePath(r['capture']['path']).name}: {settings_line(r)}"))
    ev = evidence_line(r)
    if ev:
        con.print(term(ev, "bold"))
    print_table(con, "drafting policies (95 % bootstrap intervals)", POLICY_HEADERS,
                policy_rows(r))
    for note in footnotes(r):
        con.print(term(note))
    if extrapolation_line(r):
        con.print(term(extrapolation_line(r)))
    ro = rests_on_rows(r)
    if ro:
        print_table(con, "rests on: the constants that decide it, their plausible ranges "
                    "and where the conclusion flips", RESTS_ON_HEADERS, ro)
    vr = vllm_rows(r)
    if vr:
        print_table(con, "vLLM spec-decode counters of the replay (per run)", VLLM_HEADERS,
                    vr)


def render_markdown(r: dict, plot_name: str | None = None) -> str:
    """A draft result as Markdown; ``plot_name`` is the PNG written next to it, if any."""
    lines = [f"# planner draft: {md(PurePath(r['capture']['path']).name)}", ""]
    lines += [f"**{md(x)}**" for x in headline(r)]
    if rests_on_summary(r):
        lines += ["", f"**{md(rests_on_summary(r))}**"]
    lines += ["", md(settings_line(r)) + ".", ""]
    if evidence_line(r):
        lines += [f"**{md(evidence_line(r))}.**", ""]
    lines += md_table(POLICY_HEADERS, policy_rows(r))
    notes = footnotes(r) + ([extrapolation_line(r)] if extrapolation_line(r) else [])
    if notes:
        lines += [""] + [md(n) + "  " for n in notes]
    ro = rests_on_rows(r)
    if ro:
        lines += ["", "## Rests on", "", "The constants that decide the conclusion, their "
                  "plausible ranges and sources, and where in the range it flips (the "
                  "projection re-priced at the range ends, then bisected).", ""]
        lines += md_table(RESTS_ON_HEADERS, ro)
    vr = vllm_rows(r)
    if vr:
        lines += ["", "## vLLM spec-decode counters of the replay", ""]
        lines += md_table(VLLM_HEADERS, vr)
        lines += ["", "Draft acceptance rate = accepted / draft tokens; mean acceptance length "
                  "= 1 + accepted / drafts; per-position rate i = drafts accepting at least i "
                  "tokens / drafts. Convention vllm leaves the prefill token out as a server "
                  "does (`--convention vllm`)."]
    if plot_name:
        lines += ["", f"![projected TPS, gain and tokens/forward per policy]"
                  f"(<{plot_name.replace('>', '%3E')}>)"]
    return "\n".join(lines) + "\n"


def markdown_plot(r: dict, samples: dict | None = None) -> bytes:
    """The PNG next to the Markdown report: projected TPS and gain over the baseline
    (baseline marked) beside tokens/forward, per policy
    (:func:`planner.report.draft_plots.draft_overview_plot`; ``samples`` unused, kept for the
    renderer's signature)."""
    from planner.report.draft_plots import draft_overview_plot

    return draft_overview_plot(r["policies"])


def render_html(r: dict) -> str:
    """HTML page of a draft result: headline, policies, vLLM's counters, the projected TPS
    (baseline marked) and tokens/forward intervals."""
    from planner.report import html as h
    from planner.report.draft_plots import draft_overview_plot

    name = PurePath(r["capture"]["path"]).name
    body = [f"<h1>planner draft: <code>{h.e(name)}</code></h1>", h.lead(headline(r))]
    if rests_on_summary(r):
        body.append(f"<p class=\"tag\">{h.e(rests_on_summary(r))}</p>")
    body.append(f"<p class=\"sub\">{h.e(settings_line(r))}</p>")
    if evidence_line(r):
        body.append(f"<p class=\"tag over\">{h.e(evidence_line(r))}.</p>")
    body.append(h.table(POLICY_HEADERS, [[h.e(c) for c in row] for row in policy_rows(r)],
                        {1, 2, 3, 4, 5, 6, 7, 8, 9}))
    notes = footnotes(r) + ([extrapolation_line(r)] if extrapolation_line(r) else [])
    if notes:
        body.append("<p class=\"note\">" + "<br>".join(h.e(n) for n in notes) + "</p>")
    ro = rests_on_rows(r)
    if ro:
        body += ["<h2>Rests on</h2>", "<p class=\"note\">The constants that decide the "
                 "conclusion, their plausible ranges and sources, and where in the range it "
                 "flips (the projection re-priced at the range ends, then bisected).</p>",
                 h.table(RESTS_ON_HEADERS, [[h.e(c) for c in row] for row in ro], {1, 3})]
    vr = vllm_rows(r)
    if vr:
        body += ["<h2>vLLM spec-decode counters of the replay</h2>",
                 h.table(VLLM_HEADERS, [[h.e(c) for c in row] for row in vr], {2, 3, 4, 5, 6}),
                 "<p class=\"note\">Draft acceptance rate = accepted / draft tokens; mean "
                 "acceptance length = 1 + accepted / drafts; per-position rate i = drafts "
                 "accepting at least i tokens / drafts.</p>"]
    body.append("<div class=\"plots\">"
                + h.img(draft_overview_plot(r["policies"]),
                        "projected TPS and gain over the baseline beside tokens per forward")
                + "</div>")
    return h.page(f"planner draft: {name}", "\n".join(body))
