"""The rank report kind: N configs by P(fastest), each mean with its HDI and its gap to the
best; HTML draws a forest plot (each config's HDI, its runs beside it) as inline SVG."""

from __future__ import annotations

from typing import TypedDict

from planner.report.escape import md, term

__all__ = ["SCHEMA", "headline", "render_terminal", "render_markdown", "render_html",
           "forest_svg"]


class _Diff(TypedDict):
    mean: float
    hdi_low: float
    hdi_high: float


class _Row(TypedDict):
    config: str
    n: int
    mean: float
    hdi_low: float
    hdi_high: float
    diff_pct: _Diff
    p_fastest: float
    tied_with_best: bool


class SCHEMA(TypedDict):
    """The fields the views read; ``planner report`` checks a saved result against it."""
    configs: list[_Row]
    best: str
    label: str
    contenders: list[str]
    rope: dict
    hdi_prob: float


def _unit(r) -> str:
    u = (r.get("rope") or {}).get("unit") or "TPS"
    return "TPS" if u == "%" else u


def headline(r) -> list[str]:
    rows = r["configs"]
    best = rows[0]
    unit = _unit(r)
    hp = int(round(100 * r["hdi_prob"]))
    first = (f"{best['config']} is the fastest of {len(rows)}: P(fastest) "
             f"{best['p_fastest']:.2f}, {best['mean']:.4g} {unit} "
             f"({hp} % HDI {best['hdi_low']:.4g} to {best['hdi_high']:.4g})")
    if r["label"] == "fastest":
        second = (f"decisive: every other config is slower beyond the ROPE "
                  f"(±{r['rope']['pct']:.3g} %)")
    else:
        others = [c for c in r["contenders"] if c != best["config"]]
        second = (f"undecided: {len(others)} config(s) cannot be told apart from it at the "
                  f"ROPE (±{r['rope']['pct']:.3g} %): " + ", ".join(others[:6])
                  + (" ..." if len(others) > 6 else ""))
    return [first, second]


def _diff(row) -> str:
    d = row["diff_pct"]
    if d["mean"] == 0 and d["hdi_low"] == 0 and d["hdi_high"] == 0:
        return "best"
    return f"{d['mean']:+.2f} % [{d['hdi_low']:+.2f}, {d['hdi_high']:+.2f}]"


def render_terminal(r) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    if not con.is_terminal:  # a pipe or a file: room for the names and intervals
        con = Console(width=max(con.width, 150))
    for line in headline(r):
        con.print(term(line, "bold"))
    unit = _unit(r)
    t = Table(show_header=True, header_style="bold")
    for h in ("#", "config", "n", f"mean {unit}", "HDI", "vs best (HDI)", "P(fastest)",
              "tied"):
        t.add_column(h, justify="right" if h not in ("config", "tied") else "left",
                     no_wrap=h != "config")
    for i, x in enumerate(r["configs"], 1):
        t.add_row(str(i), term(x["config"]), str(x["n"]), f"{x['mean']:.4g}",
                  f"{x['hdi_low']:.4g}..{x['hdi_high']:.4g}", _diff(x),
                  f"{x['p_fastest']:.3f}", "yes" if x["tied_with_best"] else "")
    con.print(t)
    for n in r.get("notes") or []:
        con.print(term(f"note: {n}", "dim"))


def render_markdown(r) -> str:
    unit = _unit(r)
    lines = ["# Ranking", ""] + [md(x) + "  " for x in headline(r)]
    lines += ["", f"| # | config | n | mean {unit} | HDI | vs best % (HDI) | P(fastest) | "
              "tied with best |", "|---|---|---|---|---|---|---|---|"]
    for i, x in enumerate(r["configs"], 1):
        lines.append(f"| {i} | {md(x['config'])} | {x['n']} | {x['mean']:.4g} | "
                     f"{x['hdi_low']:.4g} to {x['hdi_high']:.4g} | {md(_diff(x))} | "
                     f"{x['p_fastest']:.3f} | {'yes' if x['tied_with_best'] else ''} |")
    notes = r.get("notes") or []
    if notes:
        lines += ["", "## Notes", ""] + [f"- {md(n)}" for n in notes]
    return "\n".join(lines) + "\n"


def forest_svg(r, width: int = 760) -> str:
    """An inline SVG forest plot: per config (best first) its HDI as a bar, its mean as a
    dot and its runs as small ticks beside it, on one shared axis."""
    from planner.report.html import e

    rows = r["configs"]
    runs = r.get("runs") or []
    by = {}
    for x in runs:
        by.setdefault(x["config"], []).append(float(x["value"]))
    lo = min([x["hdi_low"] for x in rows] + [v for vs in by.values() for v in vs])
    hi = max([x["hdi_high"] for x in rows] + [v for vs in by.values() for v in vs])
    pad = 0.05 * (hi - lo or abs(hi) or 1.0)
    lo, hi = lo - pad, hi + pad
    left, right, rh = 260, 20, 26
    h = 30 + rh * len(rows) + 30
    span = width - left - right

    def X(v):
        return left + span * (v - lo) / (hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" '
           f'role="img" aria-label="forest plot of the configs">']
    for i, x in enumerate(rows):
        y = 30 + rh * i + rh / 2
        col = "#05603f" if i == 0 else ("#0072B2" if x["tied_with_best"] else "#888")
        name = x["config"] if len(x["config"]) <= 38 else x["config"][:36] + "…"
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" '
                   f'font-size="12">{e(name)} ({x["p_fastest"]:.2f})</text>')
        out.append(f'<line x1="{X(x["hdi_low"]):.1f}" x2="{X(x["hdi_high"]):.1f}" '
                   f'y1="{y:.1f}" y2="{y:.1f}" stroke="{col}" stroke-width="4"/>')
        out.append(f'<circle cx="{X(x["mean"]):.1f}" cy="{y:.1f}" r="4" fill="{col}"/>')
        for v in by.get(x["config"], []):
            out.append(f'<line x1="{X(v):.1f}" x2="{X(v):.1f}" y1="{y + 6:.1f}" '
                       f'y2="{y + 11:.1f}" stroke="#444" stroke-width="1"/>')
    ya = 30 + rh * len(rows) + 8
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{ya}" y2="{ya}" stroke="#999"/>')
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        out.append(f'<text x="{X(v):.1f}" y="{ya + 16}" text-anchor="middle" '
                   f'font-size="11">{v:.4g}</text>')
    out.append("</svg>")
    return "".join(out)


def render_html(r) -> str:
    from planner.report import html as h

    unit = _unit(r)
    rows = [[str(i), h.e(x["config"]), str(x["n"]), h.e(f"{x['mean']:.4g}"),
             h.e(f"{x['hdi_low']:.4g} to {x['hdi_high']:.4g}"), h.e(_diff(x)),
             h.e(f"{x['p_fastest']:.3f}"), "yes" if x["tied_with_best"] else ""]
            for i, x in enumerate(r["configs"], 1)]
    notes = "".join(f"<p class=\"note\">{h.e(n)}</p>" for n in r.get("notes") or [])
    body = ("<h1>Ranking</h1>" + h.lead(headline(r))
            + h.tag(r["label"], "buy" if r["label"] == "fastest" else "undecided")
            + "<h2>Forest plot</h2><p class=\"sub\">each config's HDI (bar), mean (dot) and "
              "runs (ticks); green the best, blue those tied with it at the ROPE</p>"
            + forest_svg(r)
            + "<h2>Configs</h2>"
            + h.table(["#", "config", "n", f"mean {unit}", "HDI", "vs best %", "P(fastest)",
                       "tied"], rows, {0, 2, 3, 6})
            + notes)
    return h.page("ranking", body)
