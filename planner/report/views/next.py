"""The next report kind: what to buy next for an A/B comparison, cheapest expected cost to a
decision first, and the verdict if you stop now."""

from __future__ import annotations

from typing import TypedDict

from planner.report.escape import md, term
from planner.results.counts import count
from planner.results.rank import describe_action

__all__ = ["SCHEMA", "headline", "render_terminal", "render_markdown", "render_html"]


class _Current(TypedDict):
    label: str
    decided: bool
    delta_pct: dict


class _Action(TypedDict):
    action: str
    runs: int
    p_decided: float


class SCHEMA(TypedDict):
    """The fields the views read; ``planner report`` checks a saved result against it."""
    a: str
    b: str
    current: _Current
    actions: list[_Action]
    cost_model: dict


def _what(x) -> str:
    return describe_action(x, stop="stop now")


def _cost(r, v) -> str:
    if v is None:
        return "—"
    return f"${v:.2f}" if r["cost_model"].get("unit") == "usd" else f"{v:.2f} GPU-h"


def headline(r) -> list[str]:
    cur = r["current"]
    d = cur["delta_pct"]
    # configs named A and B need no 'B = B' spelled out
    names = "B − A" if (r["a"], r["b"]) == ("A", "B") else f"B = {r['b']} − A = {r['a']}"
    first = (f"if you stop now: {cur['label']} ({names}: "
             f"{d['mean']:+.2f} %, HDI {d['hdi_low']:+.2f} to {d['hdi_high']:+.2f} %)")
    if cur["decided"]:
        return [first, "decided: stop, no run is needed for this call"]
    rec = r.get("recommended")
    if rec is None:
        return [first, "no action reaches a decision within the cap"]
    return [first, f"cheapest to a decision: {_what(rec)} (P(decided) "
                   f"{rec['p_decided']:.2f}, expected cost {_cost(r, rec['expected_cost'])})"]


def _kept(x) -> bool:
    """An action the terminal always shows: stop, one more run, repeats' own plan."""
    return x["action"] in ("stop", "one_more_a", "one_more_b") or \
        bool(x.get("recommended_by_repeats"))


def _rows(r, most: int = 12):
    """The ``most`` cheapest actions, plus (in their place, cheapest first) stopping, one
    more run of A or B and the plan ``repeats --runs`` recommends: with a long design
    ladder these used to fall past the first 12 rows, so the terminal never showed them."""
    acts = r["actions"]
    return [x for i, x in enumerate(acts) if i < most or _kept(x)]


def render_terminal(r) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    if not con.is_terminal:
        con = Console(width=max(con.width, 130))
    for line in headline(r):
        con.print(term(line, "bold"))
    t = Table(show_header=True, header_style="bold")
    for h in ("action", "runs", "cost", "P(decided)", "expected cost to a decision",
              "source"):
        t.add_column(h, justify="left" if h in ("action", "source") else "right")
    for x in _rows(r):
        own = x["cost_usd"] if r["cost_model"].get("unit") == "usd" else x["gpu_hours"]
        t.add_row(term(_what(x)), str(x["runs"]), _cost(r, own), f"{x['p_decided']:.2f}",
                  _cost(r, x["expected_cost"]), x["source"])
    con.print(t)
    left = len(r["actions"]) - len(_rows(r))
    if left > 0:
        con.print(term(f"{count(left, 'more design size')}: the JSON and Markdown reports list every action",
                       "dim"))
    rep = r.get("repeats")
    if rep:
        con.print(term(f"planner repeats on these runs recommends {rep['design']} "
                       f"{rep['runs_per_arm']} per arm (assurance {rep['assurance']:.2f})",
                       "dim"))
    for n in r.get("notes") or []:
        con.print(term(f"note: {n}", "dim"))


def render_markdown(r) -> str:
    lines = [f"# Next run: {md(r['b'])} vs {md(r['a'])}", ""] + \
        [md(x) + "  " for x in headline(r)]
    lines += ["", "| action | runs | cost | P(decided) | expected cost to a decision | source |",
              "|---|---|---|---|---|---|"]
    for x in _rows(r, 40):
        own = x["cost_usd"] if r["cost_model"].get("unit") == "usd" else x["gpu_hours"]
        lines.append(f"| {md(_what(x))} | {x['runs']} | {_cost(r, own)} | "
                     f"{x['p_decided']:.2f} | {_cost(r, x['expected_cost'])} | "
                     f"{md(x['source'])} |")
    notes = r.get("notes") or []
    if notes:
        lines += ["", "## Notes", ""] + [f"- {md(n)}" for n in notes]
    return "\n".join(lines) + "\n"


def render_html(r) -> str:
    from planner.report import html as h

    rows = []
    for x in _rows(r, 40):
        own = x["cost_usd"] if r["cost_model"].get("unit") == "usd" else x["gpu_hours"]
        rows.append([h.e(_what(x)), str(x["runs"]), h.e(_cost(r, own)),
                     h.e(f"{x['p_decided']:.2f}"), h.e(_cost(r, x["expected_cost"])),
                     h.e(x["source"])])
    body = (f"<h1>Next run: {h.e(r['b'])} vs {h.e(r['a'])}</h1>" + h.lead(headline(r))
            + h.table(["action", "runs", "cost", "P(decided)", "expected cost to a decision",
                       "source"], rows, {1, 2, 3, 4})
            + "".join(f"<p class=\"note\">{h.e(n)}</p>" for n in r.get("notes") or []))
    return h.page("next run", body)
