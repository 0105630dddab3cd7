"""Renderers of the budget result (schema ``spec-planner/budget/1``): rich terminal and
Markdown. Both read only the dict of the JSON result (``BudgetPlan.to_dict()`` or a saved
``planner budget --json``)."""

from __future__ import annotations

from planner.repeat_plan import design_label

__all__ = ["HEADERS", "comparison_rows", "render_terminal", "render_markdown"]

_STATUS_STYLE = {"buy": "bold green", "over budget": "yellow", "unreachable": "red"}


def _f(x, fmt: str, none: str = "—") -> str:
    return none if x is None else format(x, fmt)


def _delta(c: dict) -> str:
    d = c["delta"]
    s = f"{d['mean_tps']:+.2f}"
    if d.get("sd_tps"):
        s += f"±{d['sd_tps']:.2f}"
    return s


def _delta_pct(c: dict) -> str:
    return f"{c['delta']['mean_pct']:+.2f}%"


def _label(e: dict) -> str:
    """Design name; a sequential design says its layout: ``sequential (paired)``."""
    return e.get("label") or design_label(e)


def _worst(e: dict) -> str:
    """Worst-case cost of a purchase: a sequential design run to its cap (every look); a
    fixed design costs what it costs."""
    worst = e.get("worst_case_cost_usd", e.get("max_cost_usd", e.get("cost_usd")))
    return "$" + _f(worst, ".2f")


def comparison_rows(r: dict) -> list[list[str]]:
    """One row per comparison: name, Δ, design, runs/arm, assurance, false claims, GPU-h,
    expected $, worst-case $, status. Sequential designs name their layout; their cost is the
    expected one (stopping early), the worst case runs every look to the cap."""
    rows = []
    for c in r["comparisons"]:
        rec = c.get("recommended")
        if rec is None:
            best = max(c["designs"], key=lambda e: e.get("assurance") or 0, default=None)
            rows.append([c["name"], _delta(c), _delta_pct(c), "—", "—",
                         f"max {best['assurance']:.2f}" if best else "—",
                         "—", "—", "—", "—", c["status"]])
            continue
        rows.append([c["name"], _delta(c), _delta_pct(c), _label(rec),
                     format(rec["runs_per_arm"], ".3g"), _f(rec["assurance"], ".2f"),
                     _f(rec.get("false_claim_rate"), ".3f"), _f(rec.get("gpu_hours"), ".2f"),
                     "$" + _f(rec.get("cost_usd"), ".2f"), _worst(rec), c["status"]])
    return rows


HEADERS = ["comparison", "Δ TPS", "Δ %", "design", "runs/arm", "assurance", "false claims",
           "GPU-h", "cost", "worst case", "status"]


def _budget_line(r: dict) -> str:
    b = r["budget"]
    parts = []
    if b.get("total_usd") is not None:
        parts.append(f"${b['total_usd']:.2f}")
    if b.get("max_runs") is not None:
        parts.append(f"{b['max_runs']} runs")
    return (" and ".join(parts) + f" at ${b['price_per_hour']:.2f}/h, assurance target "
            f"{b['assurance_target']:g}, ≤ {b['max_runs_per_arm']} runs per arm")


def _totals_line(r: dict) -> str:
    t = r["totals"]
    s = (f"buy {t['bought']} of {t['comparisons']} comparisons: {t['runs']} runs, "
         f"{t['gpu_hours']:.2f} GPU-h, ${t['cost_usd']:.2f}; expected decisive verdicts "
         f"{t['expected_decisive']:.2f}, expected false claims {t['expected_false_claims']:.2f}")
    if t.get("budget_left_usd") is not None:
        s += f"; ${t['budget_left_usd']:.2f} left"
    s += f" (all comparisons would cost ${t['cost_all_usd']:.2f})"
    worst = t.get("worst_case_cost_usd")
    if worst is not None and worst > t["cost_usd"] + 5e-3:
        # sequential purchases are counted at their expected stop; each may run to its cap
        s += (f"; worst case (every sequential purchase runs to its cap): "
              f"${worst:.2f}, {t.get('worst_case_runs', 0)} runs — ")
        if t.get("worst_case_exceeds_budget"):
            s += "EXCEEDS the budget" + (
                f" ({', '.join(t['worst_case_exceeds'])})" if t.get("worst_case_exceeds") else "")
        else:
            s += "within the budget"
    return s


def _skipped(r: dict) -> list[str]:
    out = []
    for c in r["comparisons"]:
        if c["status"] == "buy":
            continue
        v = c.get("value_per_usd")
        extra = f" ({v:.2f} decisive verdicts per $)" if v else ""
        if c["status"] == "unreachable":
            extra = ""  # the reason already names the best design
        out.append(f"{c['name']}: {c['status']} — {c['reason']}{extra}")
    return out


def render_terminal(r: dict, *, elapsed_s: float | None = None) -> None:
    """Print the budget plan as rich tables.

    Parameters
    ----------
    r : dict
        The JSON result.
    elapsed_s : float, optional
        Wall-clock seconds of the sizing (not in the JSON), shown when given.
    """
    from rich.console import Console
    from rich.table import Table

    con = Console()
    if not con.is_terminal:  # piped / redirected: no wrapping needed
        con = Console(width=max(con.width, 140))
    title = r.get("title") or "budget plan"
    from rich import box

    t = Table(title=f"[bold]{title}[/]\n{_budget_line(r)}", title_justify="left",
              box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    short = {"runs/arm": "n/arm", "assurance": "assur.", "false claims": "false",
             "cost": "exp. $", "worst case": "max $"}
    for h in HEADERS:
        t.add_column(short.get(h, h), justify="left" if h in ("comparison", "design", "status")
                     else "right", no_wrap=h != "comparison", overflow="fold")
    for row in comparison_rows(r):
        st = row[-1]
        t.add_row(*row[:-1], f"[{_STATUS_STYLE.get(st, '')}]{st}[/]")
    con.print(t)
    con.print(f"[bold]totals:[/] {_totals_line(r)}")
    sk = _skipped(r)
    if sk:
        con.print("[bold]not worth buying at this budget:[/]")
        for s in sk:
            con.print(f"  • {s}")
    con.print(f"[dim]rule: {r['allocation_rule']}[/dim]")
    took = f"; {elapsed_s:.1f} s" if elapsed_s is not None else ""
    con.print(f"[dim]sizing: {r['repeats_engine']}, {r['sims']} simulations per design, seed "
              f"{r['seed']}{took}[/dim]")


def render_markdown(r: dict) -> str:
    """The budget plan as Markdown (tables of the plan, totals, skipped comparisons, and every
    design per comparison)."""
    lines = [f"# {r.get('title') or 'Budget plan'}", "", f"Budget: {_budget_line(r)}.", "",
             "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for row in comparison_rows(r):
        lines.append("| " + " | ".join(x.replace("|", "/") for x in row) + " |")
    lines += ["", f"**Totals:** {_totals_line(r)}.", ""]
    sk = _skipped(r)
    if sk:
        lines += ["**Not worth buying at this budget:**", ""] + [f"- {s}" for s in sk] + [""]
    lines += [f"Allocation rule: {r['allocation_rule']}.", "", "## Designs per comparison", "",
              "| comparison | baseline → candidate | design | runs/arm | assurance | "
              "false claims | GPU-h | cost | reaches target |", "|---|---|---|---|---|---|---|---|---|"]
    for c in r["comparisons"]:
        for e in c["designs"]:
            lines.append(
                f"| {c['name']} | `{c['baseline']}` → `{c['candidate']}` | {_label(e)} | "
                f"{_f(e.get('runs_per_arm'), 'g')} | {_f(e.get('assurance'), '.2f')} | "
                f"{_f(e.get('false_claim_rate'), '.3f')} | {_f(e.get('gpu_hours'), '.2f')} | "
                f"${_f(e.get('cost_usd'), '.2f')} | "
                f"{'yes' if e.get('reaches_target') else 'no'} |".replace("|`", "| `"))
    lines += ["", f"Sizing: {r['repeats_engine']}, {r['sims']} simulations per design, seed "
              f"{r['seed']}."]
    return "\n".join(lines) + "\n"
