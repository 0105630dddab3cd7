"""The rank report kind: N configs by P(fastest), each mean with its HDI and its gap to the
best; HTML draws a forest plot (each config's HDI, its runs beside it) as inline SVG."""

from __future__ import annotations

from typing import Annotated, TypedDict

from msgspec import Meta

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
    """The fields the views read; ``planner report`` checks a saved result against it (a
    ranking holds at least two configs)."""
    configs: Annotated[list[_Row], Meta(min_length=2)]
    best: str
    label: str
    contenders: list[str]
    rope: dict
    hdi_prob: float


#: Terminal width (columns) below which the table leaves out each mean's HDI column.
NARROW = 110


def _g4(v: float) -> str:
    """Four significant digits, trailing zeros kept: ``254.0`` and ``256.0`` beside
    ``254.2`` (``:.4g`` printed "254" and "252.3..256", as if less precise)."""
    import math

    v = float(v)
    if v == 0 or not math.isfinite(v) or not 1e-4 <= abs(v) < 1e6:
        return f"{v:.4g}"
    r = float(f"{v:.4g}")  # rounded first: 999.96 is 1000, not "1000.0"
    return f"{r:.{max(0, 3 - math.floor(math.log10(abs(r))))}f}"


def _unit(r) -> str:
    """The metric's unit: the ROPE's when it is given in the metric's unit, else from the
    metric's name and direction (a relative ROPE used to make every metric "TPS": a
    mean_tpot_ms ranking printed "11.51 TPS")."""
    from planner.io.limits import metric_unit

    u = (r.get("rope") or {}).get("unit") or "%"
    if u != "%":
        return u
    return metric_unit(r.get("metric"), r.get("direction") == "lower_is_better")


def headline(r) -> list[str]:
    rows = r["configs"]
    best = rows[0]
    unit = _unit(r)
    hp = int(round(100 * r["hdi_prob"]))
    first = (f"{best['config']} is the fastest of {len(rows)}: P(fastest) "
             f"{best['p_fastest']:.2f}, {_g4(best['mean'])} {unit} "
             f"({hp} % HDI {_g4(best['hdi_low'])} to {_g4(best['hdi_high'])})")
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
    # the config names are what the table is about: on a narrow terminal they fold onto
    # several lines (never squeezed to nothing), and the means' own HDIs (shown only, no
    # decision reads them; the headline gives the best's) make room
    longest = max((len(x["config"]) for x in r["configs"]), default=6)
    narrow = con.width < NARROW
    heads = ["#", "config", "n", f"mean {unit}"] + ([] if narrow else ["HDI"]) + \
        ["vs best (HDI)", "P(fastest)", "tied"]
    for h in heads:
        if h == "config":
            t.add_column(h, justify="left", overflow="fold", min_width=min(longest, 16))
        else:  # the intervals break at their spaces; the short columns never
            short = h in ("#", "n", "P(fastest)", "tied")
            t.add_column(h, justify="left" if h == "tied" else "right", no_wrap=short,
                         min_width=len(h) if short else None)
    for i, x in enumerate(r["configs"], 1):
        cells = [str(i), term(x["config"]), str(x["n"]), f"{_g4(x['mean'])}"]
        if not narrow:
            cells.append(f"{_g4(x['hdi_low'])}..{_g4(x['hdi_high'])}")
        t.add_row(*cells, _diff(x), f"{x['p_fastest']:.3f}",
                  "yes" if x["tied_with_best"] else "")
    con.print(t)
    for n in r.get("notes") or []:
        con.print(term(f"note: {n}", "dim"))


def render_markdown(r) -> str:
    unit = _unit(r)
    lines = ["# Ranking", ""] + [md(x) + "  " for x in headline(r)]
    lines += ["", f"| # | config | n | mean {unit} | HDI | vs best % (HDI) | P(fastest) | "
              "tied with best |", "|---|---|---|---|---|---|---|---|"]
    for i, x in enumerate(r["configs"], 1):
        lines.append(f"| {i} | {md(x['config'])} | {x['n']} | {_g4(x['mean'])} | "
                     f"{_g4(x['hdi_low'])} to {_g4(x['hdi_high'])} | {md(_diff(x))} | "
                     f"{x['p_fastest']:.3f} | {'yes' if x['tied_with_best'] else ''} |")
    notes = r.get("notes") or []
    if notes:
        lines += ["", "## Notes", ""] + [f"- {md(n)}" for n in notes]
    return "\n".join(lines) + "\n"


def _ticks(lo: float, hi: float, most: int = 5) -> list[float]:
    """Round tick values inside [lo, hi]: steps of 1, 2 or 5 times a power of ten."""
    import math

    span = hi - lo
    if not span > 0:
        return [lo]
    raw = span / most
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out, v = [], first
    while v <= hi + 1e-12 * span:
        out.append(round(v, 12) + 0.0)  # no "-0"
        v += step
    return out


def forest_svg(r, width: int = 900) -> str:
    """An inline SVG forest plot, one row per config (best first): on the left its gap to
    the best (% of the best: the HDI as a bar, the mean as a dot, the ROPE as a shaded band),
    which is what the ranking decides on; on the right its runs (ticks) and posterior mean
    (dot) in the metric's unit, on one axis shared by all configs."""
    from planner.report.html import e

    rows = r["configs"]
    by: dict = {}
    for x in r.get("runs") or []:
        by.setdefault(x["config"], []).append(float(x["value"]))
    rope = float((r.get("rope") or {}).get("pct") or 0.0)
    dlo = min([x["diff_pct"]["hdi_low"] for x in rows] + [-rope])
    dhi = max([x["diff_pct"]["hdi_high"] for x in rows] + [rope])
    vals = [v for vs in by.values() for v in vs] + [x["mean"] for x in rows]
    vlo, vhi = min(vals), max(vals)

    def padded(lo, hi):
        pad = 0.06 * ((hi - lo) or abs(hi) or 1.0)
        return lo - pad, hi + pad

    dlo, dhi = padded(dlo, dhi)
    vlo, vhi = padded(vlo, vhi)
    label_w, gap, right, rh, top = 250, 30, 16, 24, 34
    panel = (width - label_w - gap - right) / 2
    x0a, x0b = label_w, label_w + panel + gap
    h = top + rh * len(rows) + 36

    def XA(v):
        return x0a + panel * (v - dlo) / (dhi - dlo)

    def XB(v):
        return x0b + panel * (v - vlo) / (vhi - vlo)

    unit = _unit(r)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" '
           'role="img" aria-label="forest plot of the configs" font-family="sans-serif">',
           f'<text x="{x0a + panel / 2:.1f}" y="14" text-anchor="middle" font-size="12">'
           'gap to the best, % (HDI; shaded: the ROPE)</text>',
           f'<text x="{x0b + panel / 2:.1f}" y="14" text-anchor="middle" font-size="12">'
           f'runs and posterior mean, {e(unit)}</text>',
           f'<rect x="{XA(-rope):.1f}" y="{top - 8}" width="{max(XA(rope) - XA(-rope), 0.5):.1f}" '
           f'height="{rh * len(rows) + 8}" fill="#dff0fb"/>',
           f'<line x1="{XA(0):.1f}" x2="{XA(0):.1f}" y1="{top - 8}" '
           f'y2="{top + rh * len(rows)}" stroke="#999" stroke-dasharray="3,3"/>']
    for i, x in enumerate(rows):
        y = top + rh * i + rh / 2
        col = "#05603f" if i == 0 else ("#0072B2" if x["tied_with_best"] else "#888")
        name = x["config"] if len(x["config"]) <= 34 else x["config"][:33] + "…"
        d = x["diff_pct"]
        out.append(f'<text x="{label_w - 8}" y="{y + 4:.1f}" text-anchor="end" '
                   f'font-size="12">{e(name)} ({x["p_fastest"]:.2f})</text>')
        out.append(f'<line x1="{XA(d["hdi_low"]):.1f}" x2="{XA(d["hdi_high"]):.1f}" '
                   f'y1="{y:.1f}" y2="{y:.1f}" stroke="{col}" stroke-width="4"/>')
        out.append(f'<circle cx="{XA(d["mean"]):.1f}" cy="{y:.1f}" r="4" fill="{col}"/>')
        for v in by.get(x["config"], []):
            out.append(f'<line x1="{XB(v):.1f}" x2="{XB(v):.1f}" y1="{y - 6:.1f}" '
                       f'y2="{y + 6:.1f}" stroke="#444" stroke-width="1.2"/>')
        out.append(f'<rect x="{XB(x["mean"]) - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" '
                   f'fill="{col}"/>')
    ya = top + rh * len(rows) + 6
    for x0, lo, hi, X in ((x0a, dlo, dhi, XA), (x0b, vlo, vhi, XB)):
        out.append(f'<line x1="{x0:.1f}" x2="{x0 + panel:.1f}" y1="{ya}" y2="{ya}" '
                   'stroke="#999"/>')
        for v in _ticks(lo, hi):
            out.append(f'<line x1="{X(v):.1f}" x2="{X(v):.1f}" y1="{ya}" y2="{ya + 4}" '
                       'stroke="#999"/>')
            out.append(f'<text x="{X(v):.1f}" y="{ya + 15}" text-anchor="middle" '
                       f'font-size="11">{v:.6g}</text>')
    out.append("</svg>")
    return "".join(out)


def render_html(r) -> str:
    from planner.report import html as h

    unit = _unit(r)
    rows = [[str(i), h.e(x["config"]), str(x["n"]), h.e(f"{_g4(x['mean'])}"),
             h.e(f"{_g4(x['hdi_low'])} to {_g4(x['hdi_high'])}"), h.e(_diff(x)),
             h.e(f"{x['p_fastest']:.3f}"), "yes" if x["tied_with_best"] else ""]
            for i, x in enumerate(r["configs"], 1)]
    notes = "".join(f"<p class=\"note\">{h.e(n)}</p>" for n in r.get("notes") or [])
    body = ("<h1>Ranking</h1>" + h.lead(headline(r))
            + h.tag(r["label"], "buy" if r["label"] == "fastest" else "undecided")
            + "<h2>Forest plot</h2><p class=\"sub\">left: each config's gap to the best "
              "(HDI bar, mean dot; shaded: the ROPE); right: its runs (ticks) and posterior "
              "mean; green the best, blue those tied with it at the ROPE</p>"
            + forest_svg(r)
            + "<h2>Configs</h2>"
            + h.table(["#", "config", "n", f"mean {unit}", "HDI", "vs best %", "P(fastest)",
                       "tied"], rows, {0, 2, 3, 6})
            + notes)
    return h.page("ranking", body)
