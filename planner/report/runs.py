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

from typing import Annotated, Literal, NotRequired, TypedDict

from msgspec import Meta

from planner.report.escape import md, term
from planner.results.verdict import OUTLIER_MIN_RUNS, OUTLIER_Z

__all__ = ["Run", "Truncated", "OUTLIER_RULE", "groups", "print_strips", "markdown_table",
           "html_section"]


class Run(TypedDict):
    """One run of a saved result's ``runs``."""
    config: str
    arm: Literal["a", "b"]
    instance: str | None
    session: str | None
    rep: int | None
    cold: bool
    #: a rate or a duration: > 0 (an edited -1e308 reached the plot, an overflow warning)
    value: Annotated[float, Meta(gt=0)]
    outlier: bool
    unstable: NotRequired[bool]


#: A saved result's ``runs_truncated``: the runs left out, a count (>= 0).
Truncated = Annotated[int, Meta(ge=0)]


_BARS = "▁▂▃▄▅▆▇█"
#: Runs listed per cell of the Markdown table (the rest counted).
_MD_SHOWN = 24


#: Runs drawn in one terminal strip (the rest summarised: count, median, range).
_STRIP_SHOWN = 48
#: Groups (instances / sessions) listed per config in the terminal and the tables; the rest
#: are counted on one line.
_GROUPS_SHOWN = 16
#: The outlier rule as every medium states it (the flags are the decision layer's:
#: :data:`planner.results.verdict.OUTLIER_Z` and ``OUTLIER_MIN_RUNS``, Iglewicz & Hoaglin
#: 1993).
OUTLIER_RULE = (f"outliers: robust z beyond {OUTLIER_Z:g} within the run's instance and "
                f"session, in groups of at least {OUTLIER_MIN_RUNS} warm runs (median and "
                "MAD of log values; Iglewicz & Hoaglin 1993; a smaller group is never marked: "
                "its MAD rests on one or two gaps between runs); the model keeps "
                "every run, outliers included (a run marked cold gets its own cold-start "
                "term): check an outlier for a fault rather than drop it; an unstable group "
                "(SD above 10 times the prior's median run-to-run scale) is kept too, its "
                "spread read as run-to-run noise")


def _arm_label(arm: str, config: str) -> str:
    """``A fa2`` (the arm, then its config); ``A`` alone when the config is named as its arm
    (the quick forms' configs "A" and "B" were shown "A A")."""
    return arm.upper() if config == arm.upper() else f"{arm.upper()} {config}"


def _group_label(run: dict, split: bool) -> str:
    inst, sess = run.get("instance"), run.get("session")
    if inst and sess and split:
        return f"{inst} / {sess}"
    return inst or sess or "runs"


def groups(r: dict) -> list[tuple[str, str, str, list[dict]]]:
    """``(arm, config, group, runs)`` per config (A first) and instance -- ``instance /
    session`` where one config has several sessions on an instance, the session where there
    is no instance -- in the order of the result; ``runs`` in rep order where reps are known.
    A config whose every group holds one run (each run its own instance, as in the quick
    forms) is one group, ``N instances, one run each``."""
    runs = [x for x in r.get("runs") or [] if isinstance(x, dict)]
    sessions: dict[tuple, set] = {}
    for run in runs:
        sessions.setdefault((run["arm"], run["config"], run.get("instance")),
                            set()).add(run.get("session"))
    split = {k[:2] for k, v in sessions.items() if k[2] and len(v) > 1}
    out: dict[tuple, list] = {}
    for run in runs:
        g = _group_label(run, (run["arm"], run["config"]) in split)
        out.setdefault((run["arm"], run["config"], g), []).append(run)
    order = list(out)
    keys = sorted(order, key=lambda k: (k[0] != "a", order.index(k)))
    res = [(a, c, g, sorted(out[(a, c, g)], key=lambda x: (x.get("rep") is None,
                                                          x.get("rep") or 0)))
           for a, c, g in keys]
    merged: list = []
    for arm, config in dict.fromkeys((a, c) for a, c, _, _ in res):
        mine = [x for x in res if x[0] == arm and x[1] == config]
        if len(mine) > 1 and all(len(x[3]) == 1 for x in mine):
            word = "instances" if mine[0][3][0].get("instance") else "sessions"
            merged.append((arm, config, f"{len(mine)} {word}, one run each",
                           [x[3][0] for x in mine]))
        else:
            merged += mine
    return merged


def _decimals(vals) -> int:
    """Decimals that tell the runs apart, as hyperfine prints its times: 2, or more when the
    runs differ only in later digits (1.2001 .. 1.2034 s: 4), at most 6."""
    import math

    vals = [v for v in vals if isinstance(v, (int, float)) and math.isfinite(v)]
    if not vals:
        return 2
    spread = max(vals) - min(vals)
    top = max(abs(v) for v in vals)
    if spread > 0:
        return max(2, min(6, 1 - math.floor(math.log10(spread))))
    return 2 if top >= 1 or top == 0 else max(2, min(6, 2 - math.floor(math.log10(top))))


def _fmt(x: float, nd: int = 2) -> str:
    return f"{x:.{nd}f}"


def _median(xs: list[float]) -> float:
    ys = sorted(xs)
    n = len(ys)
    return ys[n // 2] if n % 2 else 0.5 * (ys[n // 2 - 1] + ys[n // 2])


def _truncated(r: dict) -> str:
    n = r.get("runs_truncated")
    return f" ({n:,} more run{'s' if n != 1 else ''} not saved in the result)" if n else ""


def _shown(gs: list) -> tuple[list, list[str]]:
    """The groups listed (at most :data:`_GROUPS_SHOWN` per config) and, per config with
    more, the line counting the rest."""
    keep, rest, seen = [], [], {}
    for g in gs:
        k = (g[0], g[1])
        seen[k] = seen.get(k, 0) + 1
        if seen[k] <= _GROUPS_SHOWN:
            keep.append(g)
    for (arm, config), n in seen.items():
        if n > _GROUPS_SHOWN:
            more = [g for g in gs if (g[0], g[1]) == (arm, config)][_GROUPS_SHOWN:]
            runs = sum(len(g[3]) for g in more)
            rest.append(f"{_arm_label(arm, config)}: {n - _GROUPS_SHOWN} more groups "
                        f"({runs:,} run{'s' if runs != 1 else ''}) not listed")
    return keep, rest


def _unstable(rs: list[dict]) -> bool:
    return any(x.get("unstable") for x in rs)


def _counts(gs: list) -> str:
    """``2 cold first runs, 1 outlier`` over the groups ("" when none)."""
    cold = sum(1 for g in gs for x in g[3] if x.get("cold"))
    odd = sum(1 for g in gs for x in g[3] if x.get("outlier"))
    wide = sum(1 for g in gs if _unstable(g[3]))
    parts = [f"{cold} cold first run{'s' if cold != 1 else ''}" if cold else "",
             f"{odd} outlier{'s' if odd != 1 else ''}" if odd else "",
             f"{wide} unstable group{'s' if wide != 1 else ''}" if wide else ""]
    return ", ".join(p for p in parts if p)


def print_strips(con, r: dict, unit: str = "") -> None:
    """Print the runs on the rich console ``con``: per config a line ``A config``, then one
    strip per instance ``gpu-0  ▃▄▆▅  n=4  mean 454.30  cold 452.10  outlier 460.20``, the
    bars scaled over all runs shown (cold runs blue, outliers red, each also spelled out
    after the strip), then the outlier rule and how the verdict treats them."""
    gs = groups(r)
    if not gs:
        return
    from rich.text import Text

    vals = [x["value"] for _, _, _, rs in gs for x in rs]
    lo, hi = min(vals), max(vals)
    nd = _decimals(vals)
    u = f" {unit}" if unit else ""
    con.print(term(f"runs per instance / session ({_fmt(lo, nd)}..{_fmt(hi, nd)}{u} from ▁ "
                   f"to █; cold first runs blue, outliers red){_truncated(r)}:", "bold"))
    keep, rest = _shown(gs)
    last = None
    for arm, config, g, rs in keep:
        if (arm, config) != last:
            con.print(term(f"  {_arm_label(arm, config)}"), overflow="fold")
            last = (arm, config)
        bars = Text()
        for x in rs[:_STRIP_SHOWN]:
            k = 0 if hi == lo else round((x["value"] - lo) / (hi - lo) * (len(_BARS) - 1))
            bars.append(_BARS[k], style="red" if x.get("outlier") else
                        "blue" if x.get("cold") else "")
        if len(rs) > _STRIP_SHOWN:
            bars.append(f"…+{len(rs) - _STRIP_SHOWN:,}", style="dim")
        v = [x["value"] for x in rs]
        tail = f"  n={len(rs):,}  mean {_fmt(sum(v) / len(v), nd)}"
        if len(rs) > _STRIP_SHOWN:
            tail += f"  median {_fmt(_median(v), nd)}  range {_fmt(min(v), nd)}..{_fmt(max(v), nd)}"
        cold = [_fmt(x["value"], nd) for x in rs if x.get("cold")]
        odd = [_fmt(x["value"], nd) for x in rs if x.get("outlier")]
        if cold:
            tail += "  cold " + " ".join(cold[:8]) + (" …" if len(cold) > 8 else "")
        if odd:
            tail += "  outlier " + " ".join(odd[:8]) + (" …" if len(odd) > 8 else "")
        if _unstable(rs):
            tail += "  UNSTABLE (spread far above the prior)"
        con.print(Text.assemble(term(f"    {g}  "), bars, term(tail)), overflow="fold")
    for line in rest:
        con.print(term(f"  {line}", "dim"), overflow="fold")
    counts = _counts(gs)
    con.print(term(f"  {counts + '; ' if counts else ''}{OUTLIER_RULE}", "dim"),
              overflow="fold")


def _cell(rs: list[dict], nd: int = 2) -> str:
    shown = [_fmt(x["value"], nd) + (" (cold)" if x.get("cold") else "")
             + (" (outlier)" if x.get("outlier") else "") for x in rs[:_MD_SHOWN]]
    more = len(rs) - len(shown)
    if more > 0:
        v = [x["value"] for x in rs]
        return (", ".join(shown) + f", ... {more:,} more (median {_fmt(_median(v), nd)}, "
                f"range {_fmt(min(v), nd)}..{_fmt(max(v), nd)})")
    return ", ".join(shown)


def _table_rows(gs: list, nd: int) -> list[tuple[str, str, str, str, str]]:
    return [(arm.upper(), config, g + (" (unstable: spread far above the prior)"
                                       if _unstable(rs) else ""), _cell(rs, nd),
             _fmt(sum(x["value"] for x in rs) / len(rs), nd)) for arm, config, g, rs in gs]


def markdown_table(r: dict) -> list[str]:
    """Lines of a ``## Runs`` section (none without ``runs``): config, instance, the runs in
    order (cold and outlying ones marked), mean; then the outlier rule."""
    gs = groups(r)
    if not gs:
        return []
    nd = _decimals([x["value"] for g in gs for x in g[3]])
    keep, rest = _shown(gs)
    lines = ["", "## Runs", "",
             f"Each config's runs per instance / session, in order{md(_truncated(r))}.",
             "", "| arm | config | instance / session | runs | mean |", "|---|---|---|---|---|"]
    lines += [f"| {arm} | {md(config)} | {md(g)} | {md(cell)} | {mean} |"
              for arm, config, g, cell, mean in _table_rows(keep, nd)]
    counts = _counts(gs)
    lines += [""] + [f"- {md(x)}" for x in rest] + [
        f"- {md((counts + '; ' if counts else '') + OUTLIER_RULE)}."]
    return lines


def html_section(r: dict, unit: str = "") -> str:
    """The ``Runs`` section of a page ("" without ``runs``): the plot of every run per
    config and instance (cold first runs and outliers marked), the table, the outlier
    rule."""
    gs = groups(r)
    if not gs:
        return ""
    from planner.report import html as h
    from planner.report.plots import runs_plot

    nd = _decimals([x["value"] for g in gs for x in g[3]])
    keep, rest = _shown(gs)
    png = runs_plot([(_arm_label(arm, config), g, [(x["value"], bool(x.get("cold")),
                                                      bool(x.get("outlier"))) for x in rs])
                     for arm, config, g, rs in keep], unit=unit)
    rows = [[h.e(arm), f"<code>{h.e(config)}</code>", h.e(g), h.e(cell), h.e(mean)]
            for arm, config, g, cell, mean in _table_rows(keep, nd)]
    counts = _counts(gs)
    return ("<h2>Runs</h2>"
            + f"<p class=\"sub\">Each config's runs per instance / session, in order"
            f"{h.e(_truncated(r))}: cold first runs as hollow squares, outliers as red "
            "crosses.</p>"
            + f"<div class=\"plots\">{h.img(png, 'runs per instance')}</div>"
            + h.table(["arm", "config", "instance / session", "runs", "mean"], rows, {4})
            + "".join(f"<p class=\"note\">{h.e(x)}</p>" for x in rest)
            + f"<p class=\"note\">{h.e((counts + '; ' if counts else '') + OUTLIER_RULE)}."
              "</p>")
