"""The budget report kind (schema ``spec-planner/budget/1``): terminal, Markdown and HTML
views and the saved-JSON schema. Every view reads only the dict of the JSON result
(``BudgetPlan.to_dict()`` or a saved ``planner budget --json``) and opens with
:func:`headline` (what to buy, its runs, hours and cost)."""

from __future__ import annotations

from typing import Annotated, NotRequired, TypedDict

from msgspec import Meta

from planner.report.escape import md, term
from planner.report.wording import tidy
from planner.results.repeat_plan import design_label

__all__ = ["SCHEMA", "HEADERS", "owned", "cost_cell", "plan_delta", "simulated_delta",
           "comparison_rows", "worst_case_line", "headline", "render_terminal",
           "render_markdown", "render_html"]


class _Curve(TypedDict):
    runs_per_arm: NotRequired[list[float | None]]
    assurance: NotRequired[list[float | None]]
    false_claim_rate: NotRequired[list[float | None]]
    cost_usd: NotRequired[list[float | None]]
    gpu_hours: NotRequired[list[float | None]]


class _Design(TypedDict):
    design: str
    runs_per_arm: NotRequired[float | None]
    assurance: NotRequired[float | None]
    false_claim_rate: NotRequired[float | None]
    gpu_hours: NotRequired[float | None]
    cost_usd: NotRequired[float | None]
    label: NotRequired[str]
    curve: NotRequired[_Curve | None]
    runs_total: NotRequired[float | None]
    expected_runs_per_arm: NotRequired[float | None]
    max_runs_per_arm: NotRequired[int | None]
    max_cost_usd: NotRequired[float | None]
    max_gpu_hours: NotRequired[float | None]
    batch: NotRequired[int | None]
    per_look_hdi_prob: NotRequired[float | None]
    worst_case_cost_usd: NotRequired[float | None]
    worst_case_runs_per_arm: NotRequired[float | None]


class _DeltaCurve(TypedDict):
    delta_pct: NotRequired[list[float]]
    density: NotRequired[list[float]]
    point_pct: NotRequired[float | None]
    interval_pct: NotRequired[list[float] | None]


class _Delta(TypedDict):
    mean_pct: float
    mean_tps: float
    source: NotRequired[str]
    sd_tps: NotRequired[float | None]
    given: NotRequired[float | None]
    given_sd: NotRequired[float | None]
    sd_pct: NotRequired[float | None]


class _Comparison(TypedDict):
    name: str
    baseline: str
    candidate: str
    platform: str
    prior: str
    prior_source: NotRequired[str]
    rule: str
    rope: str
    rope_pct: NotRequired[float | None]
    baseline_tps: float
    delta: _Delta
    recommended: _Design | None
    designs: list[_Design]
    status: str
    reason: NotRequired[str | None]
    line: NotRequired[int | None]
    delta_curve: NotRequired[_DeltaCurve | None]
    value_per_usd: NotRequired[float | None]


class _Budget(TypedDict):
    total_usd: NotRequired[float | None]
    max_runs: NotRequired[int | None]
    price_per_hour: float | None
    assurance_target: float
    max_runs_per_arm: int
    one_run_usd: NotRequired[float | None]


class _Totals(TypedDict):
    comparisons: Annotated[int, Meta(ge=1)]
    bought: Annotated[int, Meta(ge=0)]
    runs: Annotated[int, Meta(ge=0)]
    gpu_hours: float
    cost_usd: float
    expected_decisive: float
    expected_false_claims: float
    reachable: NotRequired[int]
    budget_left_usd: NotRequired[float | None]
    worst_case_cost_usd: NotRequired[float | None]
    worst_case_runs: NotRequired[int | float | None]
    worst_case_gpu_hours: NotRequired[float | None]
    cost_all_usd: NotRequired[float | None]
    runs_all: NotRequired[int | None]
    max_runs: NotRequired[int | None]


class SCHEMA(TypedDict):
    """The fields of a saved budget result the views read, with their types."""
    plan: str
    title: NotRequired[str | None]
    budget: _Budget
    allocation_rule: str
    comparisons: Annotated[list[_Comparison], Meta(min_length=1)]
    totals: _Totals
    repeats_engine: str
    sims: int
    seed: int

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
    return tidy(" and ".join(parts) + price + ", assurance target "
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
          f"expected decisive verdicts {t['expected_decisive']:.2f}; false-claim rates summed "
          f"{t['expected_false_claims']:.2f} (each P(decisive | Δ = 0): the false claims to "
          "expect were no effect real)")
    if t.get("budget_left_usd") is not None and not free:
        s += f"; ${t['budget_left_usd']:.2f} left"
    if reach > t["bought"] and not free:
        s += f" (all {reach} reachable comparisons would cost ${t['cost_all_usd']:.2f}"
        if t.get("max_runs") is not None and t.get("runs_all") is not None and \
                t["runs_all"] > t["max_runs"]:
            s += f" and take {t['runs_all']} runs, over the run budget of {t['max_runs']}"
        s += ")"
    return tidy(s)


_SEQ_NOTE = ("≈: expected runs per arm of a sequential purchase (it stops at the first "
             "decisive look); its GPU-h and cost are expected too")


def _paired_note(r: dict) -> str | None:
    """The paired designs' caveat (``planner.results.repeat_plan.paired_note``) when a purchase is
    paired (a paired design, or a sequential one laid out in pairs), else None."""
    if not any(c.get("status") == "buy" and (
            (c.get("recommended") or {}).get("design") == "paired"
            or (c.get("recommended") or {}).get("layout") == "paired")
            for c in r["comparisons"]):
        return None
    from planner.results.repeat_plan import paired_note

    return "paired purchases: " + (paired_note("here the stated noise") if _noise_line(r)
                                   else paired_note())


def _noise_line(r: dict) -> str | None:
    """The noise the user stated (``--cv``, ``--cv-instance``, ``--aa-runs``), which every
    comparison was sized with, or None when each used its platform's prior."""
    src = {c.get("prior_source") or "" for c in r["comparisons"] if c.get("prior") == "stated"}
    if not src:
        return None
    return "noise stated for every comparison: " + "; ".join(sorted(x for x in src if x) or
                                                              ["(no source recorded)"])


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
    return tidy(s)


def headline(r: dict) -> list[str]:
    """The sentence every view of a budget result opens with: what to buy, with its runs,
    GPU-hours and expected cost (the details follow in :func:`_totals_line`)."""
    t = r["totals"]
    n = t["comparisons"]
    reach = t.get("reachable")
    if reach is None:  # saved before totals had 'reachable'
        reach = sum(1 for c in r["comparisons"] if c.get("recommended") is not None)
    s = f"Buy {t['bought']} of {reach} reachable comparisons"
    if reach < n:
        s += f" ({n - reach} of {n} unreachable)"
    runs = t["runs"]
    return [tidy(s + f": {runs} run{'' if runs == 1 else 's'}, {t['gpu_hours']:.2f} GPU-h"
                 + ("" if owned(r) else f", ${t['cost_usd']:.2f}") + " expected.")]


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
    """Print the budget plan as rich tables (every value printed as text).

    Parameters
    ----------
    r : dict
        The JSON result.
    elapsed_s : float, optional
        Wall-clock seconds of the sizing (not in the JSON), shown when given.
    """
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    con = Console()
    if not con.is_terminal:  # piped / redirected: no wrapping needed
        con = Console(width=max(con.width, 140))
    for line in headline(r):
        con.print(term(line, "bold"))
    title = Text.assemble(term(r.get("title") or "budget plan", "bold"), "\n",
                          term(_budget_line(r)))
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
              padding=(0, 1))
    short = {"runs/arm": "n/arm", "assurance": "assur.", "false claims": "false",
             "expected cost": "exp. $", "simulated mean Δ": "sim. mean Δ"}
    for h in HEADERS:
        t.add_column(short.get(h, h), justify="left" if h in ("comparison", "design", "status")
                     else "right", no_wrap=h != "comparison", overflow="fold")
    for row in comparison_rows(r):
        st = row[-1]
        t.add_row(*[term(c) for c in row[:-1]], term(st, _STATUS_STYLE.get(st)))
    con.print(t)
    con.print(Text.assemble(("totals: ", "bold"), term(_totals_line(r))))
    if _noise_line(r):
        con.print(term(_noise_line(r)))
    worst = worst_case_line(r)
    if worst:
        con.print(Text.assemble(("worst case: ", "bold"), term(worst)))
    if _has_sequential(r):
        con.print(term(_SEQ_NOTE, "dim"))
    if _paired_note(r):
        con.print(term(_paired_note(r), "dim"))
    sk = _skipped(r)
    if sk:
        con.print(term("not worth buying at this budget:", "bold"))
        for s in sk:
            con.print(term(f"  • {s}"))
    con.print(term(f"rule: {r['allocation_rule']}", "dim"))
    took = f"; {elapsed_s:.1f} s" if elapsed_s is not None else ""
    con.print(term(f"sizing: {r['repeats_engine']}, {r['sims']} simulations per design, seed "
                   f"{r['seed']}{took}", "dim"))


def render_markdown(r: dict) -> str:
    """The budget plan as Markdown (headline, tables of the plan, skipped comparisons, and
    every design per comparison); every value escaped."""
    lines = [f"# {md(r.get('title') or 'Budget plan')}", ""] + [f"**{md(x)}**" for x in
                                                                headline(r)]
    lines += ["", f"Budget: {md(_budget_line(r))}.", "",
              "| " + " | ".join(md(h) for h in HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for row in comparison_rows(r):
        lines.append("| " + " | ".join(md(x) for x in row) + " |")
    lines += ["", f"**Totals:** {md(_totals_line(r))}.", ""]
    if _noise_line(r):
        lines += [md(_noise_line(r)) + ".", ""]
    worst = worst_case_line(r)
    if worst:
        lines += [f"**Worst case:** {md(worst)}.", ""]
    if _has_sequential(r):
        lines += [md(_SEQ_NOTE) + ".", ""]
    if _paired_note(r):
        lines += [md(_paired_note(r)) + ".", ""]
    sk = _skipped(r)
    if sk:
        lines += ["**Not worth buying at this budget:**", ""] + [f"- {md(s)}" for s in sk] + [""]
    lines += [f"Allocation rule: {md(r['allocation_rule'])}.", "", "## Designs per comparison",
              "", "| comparison | baseline → candidate | design | runs/arm | assurance | "
              "false claims | GPU-h | expected cost | reaches target |",
              "|---|---|---|---|---|---|---|---|---|"]
    for c in r["comparisons"]:
        for e in c["designs"]:
            lines.append(
                f"| {md(c['name'])} | {md(c['baseline'])} → {md(c['candidate'])} | "
                f"{md(_label(e))} | {_f(e.get('runs_per_arm'), 'g')} | "
                f"{_f(e.get('assurance'), '.2f')} | {_f(e.get('false_claim_rate'), '.3f')} | "
                f"{_f(e.get('gpu_hours'), '.2f')} | {md(cost_cell(r, e.get('cost_usd')))} | "
                f"{'yes' if e.get('reaches_target') else 'no'} |")
    lines += ["", md(f"Sizing: {r['repeats_engine']}, {r['sims']} simulations per design, "
                     f"seed {r['seed']}.")]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------- HTML

def _status_tag(st: str) -> str:
    from planner.report import html as h

    return h.tag(st, {"buy": "buy", "over budget": "over", "unreachable": "unreachable"}.get(
        st, ""))


def _comparison_section(c: dict, target: float, r: dict) -> str:
    from planner.report import html as h
    from planner.report import plots

    dc = c.get("delta_curve") or {}
    rope = c.get("rope_pct") or 0.0
    dpng = plots.delta_plot(dc.get("delta_pct") or [], dc.get("density") or [], rope_pct=rope,
                            interval=tuple(dc["interval_pct"]) if dc.get("interval_pct")
                            else None,
                            point=dc.get("point_pct"), mean=None if dc.get("point_pct") is not None
                            else c["delta"]["mean_pct"], interval_label="95% interval",
                            title=f"expected Δ: {c['name']}")
    apng = plots.assurance_plot(c["designs"], target=target, title="assurance vs runs per arm")
    free = owned(r)  # owned hardware: GPU-hours are the cost
    cpng = plots.cost_plot(c["designs"], target=target, recommended=c.get("recommended"),
                           title=("expected GPU-hours" if free else "expected cost")
                           + " vs assurance", value="gpu_hours" if free else "cost_usd")
    d = c["delta"]
    src = d.get("source", "")
    if src == "projection":
        src = f"projection {d.get('projection')}"
    rows = [[h.e(_label(e)), h.num(e.get("runs_per_arm"), "g"),
             h.num(e.get("assurance"), ".3f"), h.num(e.get("false_claim_rate"), ".3f"),
             h.num(e.get("gpu_hours"), ".2f"), h.e(cost_cell(r, e.get("cost_usd"))),
             "yes" if e.get("reaches_target") else "no"]
            for e in c["designs"]]
    return (f"<section id=\"c-{h.e(c['name'])}\"><h3>{h.e(c['name'])} {_status_tag(c['status'])}"
            f"</h3><p class=\"sub\"><code>{h.e(c['baseline'])}</code> → "
            f"<code>{h.e(c['candidate'])}</code> · {h.e(c['platform'])} · prior {h.e(c['prior'])} · "
            f"rule {h.e(c['rule'])} · ROPE {h.e(c['rope'])} (±{rope:.3g}%) · baseline "
            f"{c['baseline_tps']:.1f} TPS · Δ (plan, {h.e(src)}) {h.e(plan_delta(c))} · simulated "
            f"mean Δ {h.e(simulated_delta(c))}"
            + (f" ± {d['sd_tps']:.2f} TPS" if d.get("sd_tps") else "") + "</p>"
            + (f"<p class=\"note\">{h.e(c['reason'])}</p>" if c.get("reason") else "")
            + h.table(["design", "runs/arm", "assurance", "false claims", "GPU-h", "cost",
                       "reaches target"], rows, {1, 2, 3, 4, 5})
            + f"<div class=\"plots plots3\">{h.img(dpng, 'expected delta ' + c['name'])}"
            f"{h.img(apng, 'assurance vs runs ' + c['name'])}"
            f"{h.img(cpng, 'cost vs assurance ' + c['name'])}</div></section>")


def render_html(r: dict) -> str:
    """HTML page of a budget result: headline, the plan table, totals, the skipped
    comparisons, an overview bar chart and, per comparison, the expected-Δ distribution
    with the ROPE, the assurance curves and the cost curve."""
    from planner.report import html as h
    from planner.report import plots

    b = r["budget"]
    rows = []
    for c, row in zip(r["comparisons"], comparison_rows(r)):
        cells = [h.e(x) for x in row[:-1]] + [_status_tag(row[-1])]
        cells[0] = f"<a href=\"#c-{h.e(c['name'])}\">{cells[0]}</a>"
        rows.append(cells)
    body = [f"<h1>{h.e(r.get('title') or 'Budget plan')}</h1>", h.lead(headline(r)),
            f"<p class=\"sub\">plan <code>{h.e(r['plan'])}</code> · {h.e(_budget_line(r))}</p>",
            h.table(HEADERS, rows, {1, 2, 4, 5, 6, 7, 8}),
            f"<p><b>Totals:</b> {h.e(_totals_line(r))}.</p>"]
    if _noise_line(r):
        body.append(f"<p>{h.e(_noise_line(r))}.</p>")
    worst = worst_case_line(r)
    if worst:
        body.append(f"<p><b>Worst case:</b> {h.e(worst)}.</p>")
    if _has_sequential(r):
        body.append(f"<p class=\"note\">{h.e(_SEQ_NOTE)}.</p>")
    if _paired_note(r):
        body.append(f"<p class=\"note\">{h.e(_paired_note(r))}.</p>")
    sk = _skipped(r)
    if sk:
        body.append("<p><b>Not worth buying at this budget:</b></p><ul>"
                    + "".join(f"<li>{h.e(s)}</li>" for s in sk) + "</ul>")
    body.append(f"<p class=\"note\">Allocation rule: {h.e(r['allocation_rule'])}. Sizing: "
                f"{h.e(r['repeats_engine'])}, {h.e(r['sims'])} simulations per design, seed "
                f"{h.e(r['seed'])}.</p>")
    body.append("<div class=\"plots\">"
                + h.img(plots.budget_plot(r["comparisons"], total_usd=b.get("total_usd")),
                        "budget overview") + "</div>")
    body.append("<h2>Comparisons</h2>")
    body += [_comparison_section(c, b["assurance_target"], r) for c in r["comparisons"]]
    return h.page(r.get("title") or "budget plan", "\n".join(body))
