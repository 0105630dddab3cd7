"""Renderers of the budget result (schema ``spec-planner/budget/1``): rich terminal and
Markdown. Both read only the dict of the JSON result (``BudgetPlan.to_dict()`` or a saved
``planner budget --json``)."""

from __future__ import annotations

from planner.results.repeat_plan import design_label

__all__ = ["HEADERS", "owned", "cost_cell", "plan_delta", "simulated_delta", "comparison_rows", "worst_case_line",
           "render_terminal", "render_markdown"]

_STATUS_STYLE = {"buy": "bold green", "over budget": "yellow", "unreachable": "red"}


def _f(x, fmt: str, none: str = "—") -> str:
    return none if x is None else format(x, fmt)


def owned(r: dict) -> bool:
    """The plan's runs cost no money (a price of $0/h: owned hardware, e.g. ``local-a10g``):
    GPU-hours are the cost, and no ``$0.00`` is shown beside them (as
    :func:`planner.report.views.repeats.owned`)."""
    return not (r.get("budget") or {}).get("price_per_hour")


def cost_cell(r: dict, x) -> str:
    """A cost cell: ``$1.23``, ``—`` when None, or ``owned`` on owned hardware (the GPU-h
    column beside it is the cost)."""
    if owned(r):
        return "owned"
    return "$" + _f(x, ".2f")


def plan_delta(c: dict) -> str:
    """The comparison's Δ as its plan states it (``delta_tps = 0.44`` + ``delta_sd = 1.64`` ->
    ``+0.44±1.64 TPS``; ``delta_pct``: ``%``; a projection: the policy's speed-up)."""
    d = c["delta"]
    src = d.get("source")
    if src in ("delta_tps", "delta_pct") and d.get("given") is not None:
        s = f"{d['given']:+g}" + (f"±{d['given_sd']:g}" if d.get("given_sd") else "")
        return s + (" TPS" if src == "delta_tps" else " %")
    if src == "projection":
        s = f"{d.get('policy')}"
        if d.get("speedup") is not None:
            s += f" ×{d['speedup']:.3f}" + (f"±{d['speedup_sd']:.3f}" if d.get("speedup_sd")
                                              else "")
        return s
    return "—"


def simulated_delta(c: dict) -> str:
    """Mean of the simulated Δ draws the sizing used, in % and TPS (the plan's Δ in TPS at
    the baseline level, with its noise)."""
    d = c["delta"]
    return f"{d['mean_pct']:+.2f}% ({d['mean_tps']:+.2f} TPS)"


def _label(e: dict) -> str:
    """Design name; a sequential design says its layout: ``sequential (paired)``."""
    return e.get("label") or design_label(e)


def comparison_rows(r: dict) -> list[list[str]]:
    """One row per comparison: name, the plan's Δ, the simulated mean Δ, design, runs/arm,
    assurance, false claims, GPU-h, expected $, status. Sequential designs name their
    layout; their runs (``≈``), GPU-h and cost are expectations (stopping early); their worst case
    (every look to the cap) is in the summary (:func:`worst_case_line`)."""
    rows = []
    for c in r["comparisons"]:
        rec = c.get("recommended")
        if rec is None:
            best = max(c["designs"], key=lambda e: e.get("assurance") or 0, default=None)
            rows.append([c["name"], plan_delta(c), simulated_delta(c), "—", "—",
                         f"max {best['assurance']:.2f}" if best else "—",
                         "—", "—", "—", c["status"]])
            continue
        seq = rec.get("design") == "sequential"
        rows.append([c["name"], plan_delta(c), simulated_delta(c), _label(rec),
                     ("≈" if seq else "") + format(rec["runs_per_arm"], ".3g"),
                     _f(rec["assurance"], ".2f"), _f(rec.get("false_claim_rate"), ".3f"),
                     _f(rec.get("gpu_hours"), ".2f"), cost_cell(r, rec.get("cost_usd")),
                     c["status"]])
    return rows


HEADERS = ["comparison", "Δ (plan)", "simulated mean Δ", "design", "runs/arm", "assurance",
           "false claims", "GPU-h", "expected cost", "status"]


def _budget_line(r: dict) -> str:
    b = r["budget"]
    parts = []
    if b.get("total_usd") is not None:
        parts.append(f"${b['total_usd']:.2f}")
    if b.get("max_runs") is not None:
        parts.append(f"{b['max_runs']} runs")
    price = (" on owned hardware ($0/h: the cost is GPU-hours)" if owned(r)
             else f" at ${b['price_per_hour']:.2f}/h")
    if owned(r) and b.get("total_usd") is not None and b.get("max_runs") is None:
        price += " (a dollar budget limits nothing at $0/h: set max_runs)"
    return (" and ".join(parts) + price + ", assurance target "
            f"{b['assurance_target']:g}, ≤ {b['max_runs_per_arm']} runs per arm")


def _totals_line(r: dict) -> str:
    """The purchases against the comparisons that have one (the reachable ones)."""
    t = r["totals"]
    n = t["comparisons"]
    reach = t.get("reachable")
    if reach is None:  # saved before totals had 'reachable'
        reach = sum(1 for c in r["comparisons"] if c.get("recommended") is not None)
    s = f"buy {t['bought']} of {reach} reachable comparisons"
    if reach < n:
        s += f" ({n - reach} of {n} unreachable: no design reaches the target)"
    free = owned(r)
    s += (f": {t['runs']} runs, {t['gpu_hours']:.2f} GPU-h"
          + ("" if free else f", ${t['cost_usd']:.2f}") + " expected; "
          f"expected decisive verdicts {t['expected_decisive']:.2f}, expected false claims "
          f"{t['expected_false_claims']:.2f}")
    if t.get("budget_left_usd") is not None and not free:
        s += f"; ${t['budget_left_usd']:.2f} left"
    if reach > t["bought"] and not free:
        s += f" (all {reach} reachable comparisons would cost ${t['cost_all_usd']:.2f})"
    return s


_SEQ_NOTE = ("≈: expected runs per arm of a sequential purchase (it stops at the first "
             "decisive look); its GPU-h and cost are expected too")


def _paired_note(r: dict) -> str | None:
    """The paired designs' caveat (``planner.decide.repeats.PAIRED_NOTE``) when a purchase is
    paired (a paired design, or a sequential one laid out in pairs), else None."""
    if not any(c.get("status") == "buy" and (
            (c.get("recommended") or {}).get("design") == "paired"
            or (c.get("recommended") or {}).get("layout") == "paired")
            for c in r["comparisons"]):
        return None
    from planner.decide.repeats import PAIRED_NOTE

    return "paired purchases: " + PAIRED_NOTE


def _has_sequential(r: dict) -> bool:
    return any((c.get("recommended") or {}).get("design") == "sequential"
               for c in r["comparisons"])


def worst_case_line(r: dict) -> str | None:
    """The worst case of the sequential purchases (each runs every look, to its cap), or None
    when no purchase can cost more than expected."""
    t = r["totals"]
    if owned(r):  # no money: the worst case is in GPU-hours and runs
        worst = t.get("worst_case_gpu_hours")
        if worst is None or worst <= t["gpu_hours"] + 5e-3:
            return None
        s = (f"if every sequential purchase runs to its cap: {worst:.2f} GPU-h, "
             f"{t.get('worst_case_runs', 0)} runs — ")
    else:
        worst = t.get("worst_case_cost_usd")
        if worst is None or worst <= t["cost_usd"] + 5e-3:
            return None
        seq = [f"{c['name']} ${c['recommended']['worst_case_cost_usd']:.2f}"
               for c in r["comparisons"] if c["status"] == "buy" and c.get("recommended")
               and c["recommended"].get("worst_case_cost_usd", 0)
               > c["recommended"]["cost_usd"] + 5e-3]
        s = (f"if every sequential purchase runs to its cap: ${worst:.2f}, "
             f"{t.get('worst_case_runs', 0)} runs" + (f" ({', '.join(seq)})" if seq else "")
             + " — ")
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
        extra = f" ({v:.2f} decisive verdicts per $)" if v and not owned(r) else ""
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
             "expected cost": "exp. $", "simulated mean Δ": "sim. mean Δ"}
    for h in HEADERS:
        t.add_column(short.get(h, h), justify="left" if h in ("comparison", "design", "status")
                     else "right", no_wrap=h != "comparison", overflow="fold")
    for row in comparison_rows(r):
        st = row[-1]
        t.add_row(*row[:-1], f"[{_STATUS_STYLE.get(st, '')}]{st}[/]")
    con.print(t)
    con.print(f"[bold]totals:[/] {_totals_line(r)}")
    worst = worst_case_line(r)
    if worst:
        con.print(f"[bold]worst case:[/] {worst}")
    if _has_sequential(r):
        con.print(f"[dim]{_SEQ_NOTE}[/dim]")
    if _paired_note(r):
        con.print(f"[dim]{_paired_note(r)}[/dim]")
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
    worst = worst_case_line(r)
    if worst:
        lines += [f"**Worst case:** {worst}.", ""]
    if _has_sequential(r):
        lines += [_SEQ_NOTE + ".", ""]
    if _paired_note(r):
        lines += [_paired_note(r) + ".", ""]
    sk = _skipped(r)
    if sk:
        lines += ["**Not worth buying at this budget:**", ""] + [f"- {s}" for s in sk] + [""]
    lines += [f"Allocation rule: {r['allocation_rule']}.", "", "## Designs per comparison", "",
              "| comparison | baseline → candidate | design | runs/arm | assurance | "
              "false claims | GPU-h | expected cost | reaches target |",
              "|---|---|---|---|---|---|---|---|---|"]
    for c in r["comparisons"]:
        for e in c["designs"]:
            lines.append(
                f"| {c['name']} | `{c['baseline']}` → `{c['candidate']}` | {_label(e)} | "
                f"{_f(e.get('runs_per_arm'), 'g')} | {_f(e.get('assurance'), '.2f')} | "
                f"{_f(e.get('false_claim_rate'), '.3f')} | {_f(e.get('gpu_hours'), '.2f')} | "
                f"{cost_cell(r, e.get('cost_usd'))} | "
                f"{'yes' if e.get('reaches_target') else 'no'} |".replace("|`", "| `"))
    lines += ["", f"Sizing: {r['repeats_engine']}, {r['sims']} simulations per design, seed "
              f"{r['seed']}."]
    return "\n".join(lines) + "\n"
