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
    console,
    evidence_line,
    md_table,
    rich_table,
)

__all__ = ["SCHEMA", "SWEEP_HEADERS", "headline", "sweep_rows", "sweep_footnotes",
           "render_terminal", "render_markdown", "render_html"]

SWEEP_HEADERS = ["rank", "policy", "params", "tokens/forward", "step ms", "TPS", "x AR"]


class _Row(TypedDict):
    policy: str
    params: dict[str, object]
    tokens_per_forward: float
    step_ms: float
    projected_tps: float
    speedup_vs_ar: float
    from_capture: NotRequired[bool]


class SCHEMA(TypedDict):
    """The fields of a saved sweep result the views read, with their types."""
    capture: str
    n_prompts: int
    cost_model: str
    acceptance: str
    mc_replicates: int
    seed: int
    rows: list[_Row]


def _params(row: dict) -> str:
    return ",".join(f"{a}={b}" for a, b in row["params"].items())


def headline(r: dict) -> list[str]:
    """The sentence every view of a sweep opens with: the best configuration, its projected
    TPS and speed-up over plain decoding, out of how many."""
    rows = r["rows"]
    if not rows:
        return ["no configuration replayed"]
    b = rows[0]
    return [f"best of {len(rows)} configurations: {b['policy']} {_params(b)}, "
            f"{b['projected_tps']:.1f} TPS projected ({b['speedup_vs_ar']:.2f}x plain "
            f"decoding, {b['tokens_per_forward']:.3f} tokens/forward)"]


def sweep_rows(r: dict, top: int | None = None) -> list[list[str]]:
    """Rows of :data:`SWEEP_HEADERS`, best first (``top`` rows, default all)."""
    rows = r["rows"] if top is None else r["rows"][:top]
    mark = lambda row: (f" {NOT_FROM_CAPTURE}" if not row.get("from_capture",  # noqa: E731
                                                               row["policy"] != "mtp") else "")
    return [[str(i), row["policy"] + mark(row), _params(row),
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


def _title(r: dict) -> str:
    return f"draft sweep on {PurePath(r['capture']).name} (ranked by projected TPS)"


def _settings(r: dict) -> str:
    return (f"{r['n_prompts']} prompts; cost model {r['cost_model']}; MTP acceptance "
            f"{r['acceptance']}; {r['mc_replicates']} MC replicates, seed {r['seed']}")


def render_terminal(r: dict, top: int = 20) -> None:
    """Print the headline and the best ``top`` rows of a sweep result."""
    con = console(150)
    for line in headline(r):
        con.print(term(line, "bold"))
    con.print(rich_table(_title(r), SWEEP_HEADERS, sweep_rows(r, top)))
    for note in sweep_footnotes(r):
        con.print(term(note))


def render_markdown(r: dict) -> str:
    """A sweep result as Markdown (every row)."""
    lines = [f"# {md(_title(r))}", ""] + [f"**{md(x)}**" for x in headline(r)]
    lines += ["", md(_settings(r)) + ".", ""]
    notes = sweep_footnotes(r)
    return "\n".join(lines + md_table(SWEEP_HEADERS, sweep_rows(r))
                     + ([""] + [md(n) + "  " for n in notes] if notes else [])) + "\n"


def render_html(r: dict) -> str:
    """HTML page of a sweep: headline, the projected TPS and gain of every row (plain
    decoding marked), the ranked table."""
    from planner.report import html as h
    from planner.report import plots

    body = [f"<h1>{h.e(_title(r))}</h1>", h.lead(headline(r)),
            f"<p class=\"sub\">{h.e(_settings(r))}</p>",
            "<div class=\"plots\">" + h.img(plots.sweep_plot(r["rows"]), "sweep") + "</div>",
            h.table(SWEEP_HEADERS, [[h.e(c) for c in row] for row in sweep_rows(r)],
                    {0, 3, 4, 5, 6})]
    notes = sweep_footnotes(r)
    if notes:
        body.append("<p class=\"note\">" + "<br>".join(h.e(n) for n in notes) + "</p>")
    return h.page("planner draft sweep", "\n".join(body))
