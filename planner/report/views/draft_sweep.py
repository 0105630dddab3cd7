"""The draft-sweep report kind (``planner draft sweep``): terminal, Markdown and HTML views
and the saved-JSON schema. Every view reads the JSON object of a sweep
(:meth:`planner.decide.draft.SweepResult.to_dict`, or a saved ``--json`` output) and opens
with :func:`headline` (the best configuration and its projected TPS)."""

from __future__ import annotations

from pathlib import PurePath
from typing import NotRequired, TypedDict

from planner.report.escape import md, term
from planner.report.views.draft import (
    NOT_FROM_CAPTURE,
    RESTS_ON_HEADERS,
    console,
    evidence_line,
    md_table,
    rests_on_rows,
    rests_on_summary,
    print_table,
)

__all__ = ["SCHEMA", "SWEEP_HEADERS", "headline", "sweep_rows", "sweep_footnotes",
           "render_terminal", "render_markdown", "render_html"]

SWEEP_HEADERS = ["rank", "policy", "params", "tokens/forward [95 %]", "step ms",
                 "TPS [95 %]", "x AR", "gain TPS [95 %]", "runs/arm", "verdict"]


class _Row(TypedDict):
    policy: str
    params: dict[str, object]
    tokens_per_forward: float
    step_ms: float
    projected_tps: float
    speedup_vs_ar: float | None
    from_capture: NotRequired[bool]
    tokens_per_forward_ci: NotRequired[list[float]]
    projected_tps_ci: NotRequired[list[float]]
    gain_tps: NotRequired[float | None]
    gain_ci: NotRequired[list[float] | None]
    worth: NotRequired[bool | None]
    runs_per_arm: NotRequired[int | None]
    is_baseline: NotRequired[bool]


class SCHEMA(TypedDict):
    """The fields of a saved sweep result the views read, with their types."""
    capture: str
    n_prompts: int
    cost_model: str
    acceptance: str
    mc_replicates: int
    seed: int
    rows: list[_Row]
    rests_on: NotRequired[list[dict[str, object]]]


def _params(row: dict) -> str:
    return ",".join(f"{a}={b}" for a, b in row["params"].items())


def headline(r: dict) -> list[str]:
    """The sentences every view of a sweep opens with: the best configuration, its projected
    TPS and speed-up over plain decoding, out of how many, and the worth-a-run verdict."""
    rows = r["rows"]
    if not rows:
        return ["no configuration replayed"]
    b = rows[0]
    x = "" if b.get("speedup_vs_ar") is None else f"{b['speedup_vs_ar']:.2f}x plain decoding, "
    # the row's label, as every table and the worth-a-run line name it ("mtp k=7" beside
    # "mtp(k=7)" read as two policies)
    name = b.get("label") or f"{b['policy']} {_params(b)}"
    out = [f"best of {len(rows)} configurations: {name}, "
           f"{b['projected_tps']:.1f} TPS projected ({x}"
           f"{b['tokens_per_forward']:.3f} tokens/forward)"]
    w = r.get("worth_a_run")
    if w and w.get("verdict"):
        out.append(f"against {r.get('baseline', 'ar')}: {w['verdict']}")
    return out


def _ci(x: float, ci, nd: int) -> str:
    if not ci:
        return f"{x:.{nd}f}"
    return f"{x:.{nd}f} [{ci[0]:.{nd}f}, {ci[1]:.{nd}f}]"


def _verdict(row: dict) -> str:
    if row.get("is_baseline"):
        return "baseline"
    code = row.get("verdict_code")
    if code is None and row.get("worth") is None:
        return "-"
    return {"worth": "worth", "upper_bound": "upper bound",
            "too_little_evidence": "too little evidence"}.get(code, "not worth")


def sweep_rows(r: dict, top: int | None = None) -> list[list[str]]:
    """Rows of :data:`SWEEP_HEADERS`, best first (``top`` rows, default all); results saved
    before intervals and verdicts show '-' there."""
    rows = r["rows"] if top is None else r["rows"][:top]
    mark = lambda row: (f" {NOT_FROM_CAPTURE}" if not row.get("from_capture",  # noqa: E731
                                                               row["policy"] != "mtp") else "")
    out = []
    for i, row in enumerate(rows, 1):
        g = row.get("gain_tps")
        n = row.get("runs_per_arm")
        out.append([str(i), row["policy"] + mark(row), _params(row),
                    _ci(row["tokens_per_forward"], row.get("tokens_per_forward_ci"), 3),
                    f"{row['step_ms']:.2f}",
                    _ci(row["projected_tps"], row.get("projected_tps_ci"), 1),
                    "-" if row.get("speedup_vs_ar") is None else f"{row['speedup_vs_ar']:.2f}",
                    "-" if g is None else (f"{g:+.1f}" + ("" if not row.get("gain_ci") else
                                           f" [{row['gain_ci'][0]:+.1f}, "
                                           f"{row['gain_ci'][1]:+.1f}]")),
                    "-" if n is None else str(n), _verdict(row)])
    return out


def sweep_footnotes(r: dict) -> list[str]:
    """Footnotes of a sweep: rows not from the capture's tokens, too little evidence, the
    grid sizes and the baseline of the verdicts."""
    out = []
    grid = r.get("grid") or {}
    if grid.get("sizes"):
        out.append("grid: " + ", ".join(f"{k} {v}" for k, v in grid["sizes"].items())
                   + f" ({grid.get('rows')} rows with plain decoding); gain and verdict "
                   f"against {r.get('baseline', 'ar')}, 95 % bootstrap intervals "
                   f"({r.get('bootstrap')} replicates), sized by the assurance planner as "
                   "planner draft.")
    if any(not row.get("from_capture", row["policy"] != "mtp") for row in r["rows"]):
        out.append(f"{NOT_FROM_CAPTURE} MTP-based rows (mtp, suffix-first, tree): numbers from "
                   f"the MTP acceptance curve {r['acceptance']}, not from this capture's own "
                   "tokens (the capture gives lengths and the lookup drafts).")
    st = r.get("acceptance_stack") or {}
    if st.get("note"):
        out.append(f"MTP curve: {st['note']}.")
    ev = evidence_line(r)
    if ev:
        out.append(ev + ".")
    return out


def _title(r: dict) -> str:
    return f"draft sweep on {PurePath(r['capture']).name} (ranked by projected TPS)"


def _settings(r: dict) -> str:
    return (f"{r['n_prompts']} prompts; cost model {r['cost_model']}; MTP acceptance "
            f"{r['acceptance']}; {r['mc_replicates']} MC replicates, seed {r['seed']}")


def render_terminal(r: dict, top: int = 20) -> None:
    """Print the headline and the best ``top`` rows of a sweep result, and what it rests
    on."""
    con = console(170)
    for line in headline(r):
        con.print(term(line, "bold"))
    if rests_on_summary(r):
        con.print(term(rests_on_summary(r), "bold"))
    print_table(con, _title(r), SWEEP_HEADERS, sweep_rows(r, top))
    for note in sweep_footnotes(r):
        con.print(term(note))
    ro = rests_on_rows(r)
    if ro:
        print_table(con, "rests on: the constants that decide it, their plausible ranges "
                    "and where the conclusion flips", RESTS_ON_HEADERS, ro)


def render_markdown(r: dict) -> str:
    """A sweep result as Markdown (every row)."""
    lines = [f"# {md(_title(r))}", ""] + [f"**{md(x)}**  " for x in headline(r)]
    if rests_on_summary(r):
        lines += ["", f"**{md(rests_on_summary(r))}**"]
    lines += ["", md(_settings(r)) + ".", ""]
    notes = sweep_footnotes(r)
    lines += md_table(SWEEP_HEADERS, sweep_rows(r)) + (
        [""] + [md(n) + "  " for n in notes] if notes else [])
    ro = rests_on_rows(r)
    if ro:
        lines += ["", "## Rests on", ""] + md_table(RESTS_ON_HEADERS, ro)
    return "\n".join(lines) + "\n"


def render_html(r: dict) -> str:
    """HTML page of a sweep: headline, the projected TPS and gain of every row (plain
    decoding marked), the ranked table."""
    from planner.report import html as h
    from planner.report.draft_plots import sweep_overview_plot

    body = [f"<h1>{h.e(_title(r))}</h1>", h.lead(headline(r))]
    if rests_on_summary(r):
        body.append(f"<p class=\"tag\">{h.e(rests_on_summary(r))}</p>")
    body += [f"<p class=\"sub\">{h.e(_settings(r))}</p>",
             "<div class=\"plots\">" + h.img(sweep_overview_plot(r["rows"], r.get(
                 "baseline_tps")), "projected TPS and gain against tokens per forward")
             + "</div>",
             h.table(SWEEP_HEADERS, [[h.e(c) for c in row] for row in sweep_rows(r)],
                     {0, 3, 4, 5, 6, 7, 8})]
    notes = sweep_footnotes(r)
    if notes:
        body.append("<p class=\"note\">" + "<br>".join(h.e(n) for n in notes) + "</p>")
    ro = rests_on_rows(r)
    if ro:
        body += ["<h2>Rests on</h2>",
                 h.table(RESTS_ON_HEADERS, [[h.e(c) for c in row] for row in ro], {1, 3})]
    return h.page("planner draft sweep", "\n".join(body))
