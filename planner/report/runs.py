"""The runs themselves in a report: each config's runs per instance (or session), cold first
runs and outliers marked, as the verdict and ``repeats --runs`` results carry them (``runs``:
one object per run; ``runs_truncated``: how many more the result left out).

* terminal: :func:`print_strips`, one compact strip per config and instance (a sparkline of
  the runs in order, their mean, the cold and outlying values spelled out);
* Markdown: :func:`markdown_table`, one row per config and instance;
* HTML: :func:`html_section`, a plot (:func:`planner.report.plots.runs_plot`) and the table.

A result without ``runs`` renders nothing here.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from planner.report.escape import md, term

__all__ = ["Run", "groups", "print_strips", "markdown_table", "html_section"]


class Run(TypedDict):
    """One run of a saved result's ``runs``."""
    config: str
    arm: Literal["a", "b"]
    instance: str | None
    session: str | None
    rep: int | None
    cold: bool
    value: float
    outlier: bool


_BARS = "▁▂▃▄▅▆▇█"
#: Runs listed per cell of the Markdown table (the rest counted).
_MD_SHOWN = 24


def groups(r: dict) -> list[tuple[str, str, str, list[dict]]]:
    """``(arm, config, group, runs)`` per config (A first) and instance, else session, in
    the order of the result; ``runs`` in rep order where reps are known."""
    out: dict[tuple, list] = {}
    for run in r.get("runs") or []:
        g = run.get("instance") or run.get("session") or "runs"
        out.setdefault((run["arm"], run["config"], g), []).append(run)
    keys = sorted(out, key=lambda k: (k[0] != "a", list(out).index(k)))
    return [(a, c, g, sorted(out[(a, c, g)], key=lambda x: (x.get("rep") is None,
                                                             x.get("rep") or 0)))
            for a, c, g in keys]


def _fmt(x: float) -> str:
    return f"{x:.2f}" if abs(x) >= 1 else f"{x:.4g}"


def _truncated(r: dict) -> str:
    n = r.get("runs_truncated")
    return f" ({n:,} more run{'s' if n != 1 else ''} not saved in the result)" if n else ""


def print_strips(con, r: dict, unit: str = "") -> None:
    """Print the runs on the rich console ``con``: per config a line ``A config``, then one
    strip per instance ``gpu-0  ▃▄▆▅  n=4  mean 454.30  cold 452.10  outlier 460.20``, the
    bars scaled over all runs shown (cold runs blue, outliers red)."""
    gs = groups(r)
    if not gs:
        return
    from rich.text import Text

    vals = [x["value"] for _, _, _, rs in gs for x in rs]
    lo, hi = min(vals), max(vals)
    u = f" {unit}" if unit else ""
    con.print(term(f"runs per instance ({_fmt(lo)}..{_fmt(hi)}{u} from ▁ to █; cold first "
                   f"runs blue, outliers red){_truncated(r)}:", "bold"))
    last = None
    for arm, config, g, rs in gs:
        if (arm, config) != last:
            con.print(term(f"  {arm.upper()} {config}"), overflow="fold")
            last = (arm, config)
        bars = Text()
        for x in rs:
            k = 0 if hi == lo else round((x["value"] - lo) / (hi - lo) * (len(_BARS) - 1))
            bars.append(_BARS[k], style="red" if x.get("outlier") else
                        "blue" if x.get("cold") else "")
        mean = sum(x["value"] for x in rs) / len(rs)
        tail = f"  n={len(rs)}  mean {_fmt(mean)}"
        cold = [_fmt(x["value"]) for x in rs if x.get("cold")]
        odd = [_fmt(x["value"]) for x in rs if x.get("outlier")]
        if cold:
            tail += "  cold " + " ".join(cold)
        if odd:
            tail += "  outlier " + " ".join(odd)
        con.print(Text.assemble(term(f"    {g}  "), bars, term(tail)), overflow="fold")


def _cell(rs: list[dict]) -> str:
    shown = [_fmt(x["value"]) + (" (cold)" if x.get("cold") else "")
             + (" (outlier)" if x.get("outlier") else "") for x in rs[:_MD_SHOWN]]
    more = len(rs) - len(shown)
    return ", ".join(shown) + (f", ... {more} more" if more > 0 else "")


def markdown_table(r: dict) -> list[str]:
    """Lines of a ``## Runs`` section (none without ``runs``): config, instance, the runs in
    order (cold and outlying ones marked), mean."""
    gs = groups(r)
    if not gs:
        return []
    lines = ["", "## Runs", "", f"Each config's runs per instance, in order{_truncated(r)}.", "",
             "| arm | config | instance | runs | mean |", "|---|---|---|---|---|"]
    for arm, config, g, rs in gs:
        mean = sum(x["value"] for x in rs) / len(rs)
        lines.append(f"| {arm.upper()} | {md(config)} | {md(g)} | {md(_cell(rs))} | "
                     f"{_fmt(mean)} |")
    return lines


def html_section(r: dict, unit: str = "") -> str:
    """The ``Runs`` section of a page ("" without ``runs``): the plot of every run per
    config and instance (cold first runs and outliers marked) and the table."""
    gs = groups(r)
    if not gs:
        return ""
    from planner.report import html as h
    from planner.report.plots import runs_plot

    png = runs_plot([(f"{arm.upper()} {config}", g, [(x["value"], bool(x.get("cold")),
                                                      bool(x.get("outlier"))) for x in rs])
                     for arm, config, g, rs in gs], unit=unit)
    rows = [[h.e(arm.upper()), f"<code>{h.e(config)}</code>", h.e(g), h.e(_cell(rs)),
             _fmt(sum(x["value"] for x in rs) / len(rs))] for arm, config, g, rs in gs]
    return ("<h2>Runs</h2>" + f"<p class=\"sub\">Each config's runs per instance, in order"
            f"{h.e(_truncated(r))}: cold first runs as hollow squares, outliers as red "
            "crosses.</p>"
            + f"<div class=\"plots\">{h.img(png, 'runs per instance')}</div>"
            + h.table(["arm", "config", "instance", "runs", "mean"], rows, {4}))
