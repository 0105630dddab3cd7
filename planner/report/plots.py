"""Report plots (matplotlib, Agg backend, no pyplot state): PNG bytes for inline embedding.

* :func:`delta_plot` — density of Δ (posterior, or the expected-Δ distribution of a plan) with
  the ROPE band and the HDI / interval;
* :func:`assurance_plot` — assurance vs runs per arm, one line per design, with the target;
* :func:`cost_plot` — expected cost vs assurance, one line per design;
* :func:`budget_plot` — cost of every comparison's recommended purchase, coloured by status,
  hatched per sequential layout, labelled with assurance and design;
* :func:`tpf_plot` — tokens/forward per drafting policy (a draft result);
* :func:`draft_tps_plot` — projected TPS per drafting policy, the baseline marked;
* :func:`sweep_plot` — projected TPS (and gain) against tokens/forward of every sweep row;
* :func:`runs_plot` — every run per config and instance, cold first runs and outliers marked.

All take plain lists / dicts from a JSON result and return PNG ``bytes``.
"""

from __future__ import annotations

import base64
import io
import math
from typing import Sequence

import matplotlib

matplotlib.use("Agg", force=False)
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

#: Colours per design label (colour-blind safe, Okabe–Ito); each sequential layout has its
#: own colour, and sequential lines are dashed.
DESIGN_COLOURS = {"separate": "#0072B2", "paired": "#D55E00", "sequential": "#009E73",
                  "sequential (separate)": "#009E73", "sequential (paired)": "#CC79A7"}
_EXTRA_COLOURS = ("#56B4E9", "#E69F00", "#000000", "#F0E442")
#: Bar hatches of the budget overview per sequential layout (its colours are the status).
LAYOUT_HATCHES = {"sequential (separate)": "...", "sequential (paired)": "///"}
STATUS_COLOURS = {"buy": "#009E73", "over budget": "#E69F00", "unreachable": "#999999"}
_DPI = 100


def _fig(w: float = 3.9, h: float = 2.9, *, left: float = 0.17, right: float = 0.97,
         bottom: float = 0.16, top: float = 0.9) -> Figure:
    # fixed margins: much faster than constrained / tight layout
    fig = Figure(figsize=(w, h), dpi=_DPI)
    fig.subplots_adjust(left=left, right=right, bottom=bottom, top=top)
    FigureCanvasAgg(fig)
    return fig


def _png(fig: Figure) -> bytes:
    import warnings

    buf = io.BytesIO()
    with warnings.catch_warnings():
        # a name in a script the bundled font lacks (CJK, emoji) draws as boxes; matplotlib
        # also prints a warning per glyph, noise on a report's stderr
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from",
                                category=UserWarning)
        fig.savefig(buf, format="png", dpi=_DPI)
    return buf.getvalue()


def _legend_below(ax) -> None:
    """The legend in two columns under the axes' label, where it covers no data."""
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
              frameon=False)


def data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` for an ``<img src>``."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def normal_pct_curve(mean_log: float, sd_log: float, points: int = 200) -> tuple[list, list]:
    """Density of Δ in % when log(1 + Δ%/100) ~ Normal(mean_log, sd_log) (for a verdict
    result without ``delta_curve``)."""
    sd = max(float(sd_log), 1e-12)
    xs_log = [mean_log - 4.5 * sd + 9 * sd * k / (points - 1) for k in range(points)]
    xs, ys = [], []
    for x in xs_log:
        p = 100.0 * math.expm1(x)
        dens_log = math.exp(-0.5 * ((x - mean_log) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
        xs.append(p)
        ys.append(dens_log / (100.0 * (1.0 + p / 100.0)))  # Jacobian d(log)/d(pct)
    return xs, ys


def _design_style(e: dict, seen: dict) -> tuple[str, str, str]:
    """(label, colour, line style) of a design entry: the label names a sequential design's
    layout (``sequential (paired)``), each label its own colour, sequential lines dashed."""
    from planner.results.repeat_plan import design_label

    lab = e.get("label") or design_label(e)
    col = seen.get(lab) or DESIGN_COLOURS.get(lab)
    if col is None or (lab not in seen and col in seen.values()):
        col = next((c for c in _EXTRA_COLOURS if c not in seen.values()), "#666666")
    seen[lab] = col
    return lab, col, "--" if e.get("design") == "sequential" else "-"


def delta_plot(x_pct: Sequence[float], density: Sequence[float], *, rope_pct: float,
               interval: tuple[float, float] | None = None, mean: float | None = None,
               point: float | None = None, interval_label: str = "95% HDI",
               title: str = "", xlabel: str = "Δ = B − A (% of A)",
               size: tuple[float, float] = (3.9, 2.9)) -> bytes:
    """Density of Δ with the ROPE band shaded and the interval marked.

    Parameters
    ----------
    x_pct, density : sequence of float
        The curve (Δ in %). May be empty when ``point`` is given.
    rope_pct : float
        ROPE half-width in %.
    interval : (float, float), optional
        HDI (or central interval) in %.
    mean : float, optional
        Marked with a dashed line.
    point : float, optional
        A point value of Δ (no distribution), drawn as a vertical line.
    size : (float, float)
        Figure size in inches (100 dpi).
    """
    fig = _fig(*size, left=0.12 if size[0] > 5 else 0.17)
    ax = fig.add_subplot()
    xs, ys = list(x_pct), list(density)
    lo_x = [*(xs or []), *(interval or ()), -rope_pct, rope_pct]
    if point is not None:
        lo_x.append(point)
    ax.axvspan(-rope_pct, rope_pct, color="#56B4E9", alpha=0.25, lw=0,
               label=f"ROPE ±{rope_pct:.3g}%")
    if xs:
        ax.plot(xs, ys, color="#222222", lw=1.6)
        if interval is not None:
            sel = [(x, y) for x, y in zip(xs, ys) if interval[0] <= x <= interval[1]]
            if sel:
                ax.fill_between([s[0] for s in sel], [s[1] for s in sel], color="#CC79A7",
                                alpha=0.35, lw=0, label=f"{interval_label} [{interval[0]:+.3g}, "
                                                        f"{interval[1]:+.3g}]%")
        ax.set_ylim(0, 1.45 * max(ys))  # room for the legend
        ax.set_ylabel("density")
    else:
        ax.set_yticks([])
    if point is not None:
        ax.axvline(point, color="#D55E00", lw=2, label=f"expected Δ {point:+.3g}%")
    if mean is not None:
        ax.axvline(mean, color="#222222", ls="--", lw=1, label=f"mean {mean:+.3g}%")
    ax.axvline(0, color="#666666", lw=0.6)
    span = (max(lo_x) - min(lo_x)) or 1.0
    ax.set_xlim(min(lo_x) - 0.08 * span, max(lo_x) + 0.08 * span)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left", frameon=False)
    return _png(fig)


def _sequential_marks(ax, e: dict, pts: list, col: str, lab: str, *, cap: str,
                      horizontal: bool) -> None:
    """A sequential design as points, not a line: each variant simulated (``pts``, the
    per-look strictness tried) a hollow diamond, the design itself a filled one with a bar to
    its cap (runs per arm: to the right; cost: up to the worst case, every look run). A line
    through variants of different strictness read as a curve of runs, which it is not."""
    x0 = e.get("runs_per_arm") if horizontal else e.get("assurance")
    y0 = e.get("assurance") if horizontal else e.get("gpu_hours" if cap == "max_gpu_hours"
                                                      else "cost_usd")
    others = [p for p in pts if (p[0], p[1]) != (x0, y0)]
    if others:
        ax.plot([p[0] for p in others], [p[1] for p in others], "D", ms=5, mfc="none",
                mec=col, mew=1.2, ls="none")
    if x0 is None or y0 is None:
        return
    top = e.get(cap)
    if top is not None:
        if horizontal:
            ax.plot([x0, top], [y0, y0], color=col, lw=1.2, ls=":")
            ax.plot([top], [y0], "|", color=col, ms=8, mew=1.4)
        else:
            ax.plot([x0, x0], [y0, top], color=col, lw=1.2, ls=":")
            ax.plot([x0], [top], "_", color=col, ms=8, mew=1.4)
    ax.plot([x0], [y0], "D", ms=6, color=col, ls="none", label=lab)
    if top is not None and not getattr(ax, "_planner_cap_key", False):
        ax.plot([], [], color="#666666", lw=1.2, ls=":", label="sequential: to its cap")
        ax._planner_cap_key = True


def assurance_plot(designs: Sequence[dict], *, target: float | None = None,
                   title: str = "") -> bytes:
    """Assurance vs runs per arm, one line per design (``curve`` of each design); the
    recommended point of each design is marked. The legend sits below the axes, off the
    curves."""
    fig = _fig(3.9, 3.7, bottom=0.37)
    ax = fig.add_subplot()
    seen: dict = {}
    for e in designs:
        cv = e.get("curve") or {}
        n, a = cv.get("runs_per_arm") or [], cv.get("assurance") or []
        pts = [(x, y) for x, y in zip(n, a) if x is not None and y is not None]
        lab, col, ls = _design_style(e, seen)
        if e.get("design") == "sequential":
            _sequential_marks(ax, e, pts, col, lab, cap="max_runs_per_arm", horizontal=True)
            continue
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=col, lw=1.6, ls=ls,
                    label=lab)
        if e.get("runs_per_arm") is not None and e.get("assurance") is not None:
            ax.plot([e["runs_per_arm"]], [e["assurance"]], "o", color=col, ms=5,
                    label=None if pts else lab)
    if target is not None:
        ax.axhline(target, color="#666666", ls=":", lw=1, label=f"target {target:g}")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("runs per arm")
    ax.set_ylabel("assurance")
    if title:
        ax.set_title(title, fontsize=10)
    _legend_below(ax)
    ax.grid(alpha=0.3)
    return _png(fig)


def cost_plot(designs: Sequence[dict], *, target: float | None = None,
              recommended: dict | None = None, title: str = "",
              value: str = "cost_usd") -> bytes:
    """Expected cost vs assurance, one line per design; the recommended purchase is starred.
    ``value``: ``cost_usd`` (USD) or ``gpu_hours`` (owned hardware, where runs cost no
    money). The legend sits below the axes, off the curves."""
    from planner.results.repeat_plan import design_label

    fig = _fig(3.9, 3.7, bottom=0.37)
    ax = fig.add_subplot()
    seen: dict = {}
    for e in designs:
        cv = e.get("curve") or {}
        a, c = cv.get("assurance") or [], cv.get(value) or []
        pts = [(x, y) for x, y in zip(a, c) if x is not None and y is not None]
        lab, col, ls = _design_style(e, seen)
        if e.get("design") == "sequential":
            _sequential_marks(ax, e, pts, col, lab, horizontal=False,
                              cap="max_gpu_hours" if value == "gpu_hours" else "max_cost_usd")
            continue
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=col, lw=1.6, ls=ls,
                    label=lab)
        elif e.get("assurance") is not None and e.get(value) is not None:
            ax.plot([e["assurance"]], [e[value]], "o", color=col, label=lab)
    if recommended and recommended.get("assurance") is not None:
        ax.plot([recommended["assurance"]], [recommended[value]], "*", ms=13,
                color="#000000",
                label=f"recommended ({recommended.get('label') or design_label(recommended)})")
    if target is not None:
        ax.axvline(target, color="#666666", ls=":", lw=1, label=f"target {target:g}")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("assurance")
    ax.set_ylabel("expected GPU-hours" if value == "gpu_hours" else "expected cost (USD)")
    if title:
        ax.set_title(title, fontsize=10)
    _legend_below(ax)
    ax.grid(alpha=0.3)
    return _png(fig)


def budget_plot(comparisons: Sequence[dict], *, total_usd: float | None = None) -> bytes:
    """Horizontal bars: cost of each comparison's recommended purchase (best design when
    unreachable), coloured by status, with the assurance written at the bar end."""
    n = len(comparisons)
    hgt = max(2.2, 0.3 * n + 1.1)
    fig = _fig(7.6, hgt, left=0.2, right=0.74, bottom=0.55 / hgt + 0.05, top=1 - 0.35 / hgt)
    ax = fig.add_subplot()
    from planner.results.repeat_plan import design_label

    names, costs, cols, labels, hatches, used = [], [], [], [], [], set()
    for c in comparisons:
        rec = c.get("recommended")
        best = rec or max(c.get("designs") or [{}], key=lambda e: e.get("assurance") or 0)
        names.append(c["name"])
        costs.append(float(best.get("cost_usd") or 0.0))
        cols.append(STATUS_COLOURS.get(c.get("status"), "#999999"))
        a = best.get("assurance")
        design = (best.get("label") or design_label(best)) if best.get("design") else ""
        hatches.append(LAYOUT_HATCHES.get(design, ""))
        used.add(design)
        labels.append(("" if a is None else f"{a:.2f}") + ("" if rec else " (max)")
                      + (f", {design}" if design else ""))
    ys = list(range(n))[::-1]
    bars = ax.barh(ys, costs, color=cols, edgecolor="#333333", linewidth=0.4)
    for bar, h in zip(bars, hatches):
        bar.set_hatch(h)
    for y, cst, lab in zip(ys, costs, labels):
        ax.text(cst, y, " " + lab, va="center", fontsize=7)
    ax.set_yticks(ys, names, fontsize=8)
    ax.set_xlabel("expected cost of the recommended purchase (USD); label: assurance, design")
    handles = [Patch(color=v, label=k) for k, v in STATUS_COLOURS.items()]
    handles += [Patch(facecolor="white", edgecolor="#333333", hatch=h, label=k)
                for k, h in LAYOUT_HATCHES.items() if k in used]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              frameon=False)
    ax.set_xlim(0, max(costs + [0.01]) * 1.6)  # room for the labels
    ax.grid(axis="x", alpha=0.3)
    if total_usd is not None:
        ax.set_title(f"budget ${total_usd:.2f}", fontsize=10)
    return _png(fig)


def tpf_plot(policies: Sequence[dict], samples: dict | None = None) -> bytes:
    """Tokens/forward per drafting policy.

    Parameters
    ----------
    policies : sequence of dict
        ``policies`` of a draft result (``label``, ``tokens_per_forward`` with ``point``,
        ``ci_low``, ``ci_high``).
    samples : dict of str to array, optional
        Bootstrap draws per label (a live result): drawn as histograms; without them (a saved
        JSON) each policy's point and 95 % interval.
    """
    fig = _fig(7.0, 3.5, left=0.1 if samples else 0.3, bottom=0.16)
    ax = fig.add_subplot()
    if samples:
        for lab, s in samples.items():
            if float(s.max() - s.min()) > 0:
                ax.hist(s, bins=50, alpha=0.55, label=lab, density=True)
            else:
                ax.axvline(float(s[0]), ls="--", color="k", lw=1)
        ax.set_ylabel("density")
        if any(float(s.max() - s.min()) > 0 for s in samples.values()):
            ax.legend(fontsize=7)
    else:
        for y, p in enumerate(policies):
            t = p["tokens_per_forward"]
            ax.errorbar([t["point"]], [y], xerr=[[t["point"] - t["ci_low"]],
                                                 [t["ci_high"] - t["point"]]],
                        fmt="o", capsize=3)
        ax.set_yticks(range(len(policies)), [p["label"] for p in policies], fontsize=7)
    ax.set_xlabel("tokens / forward (bootstrap over prompts)")
    return _png(fig)


def sweep_plot(rows: Sequence[dict]) -> bytes:
    """Projected TPS of every sweep row against its tokens/forward, one colour per policy,
    plain decoding (TPS / speed-up of any row) as a dotted line, and the gain over it
    (x plain decoding) on the right-hand axis."""
    fig = _fig(6.0, 3.6, left=0.12, right=0.88, bottom=0.3)
    ax = fig.add_subplot()
    colours = {"ar": "#999999", "pld": "#0072B2", "mtp": "#D55E00"}
    for pol in dict.fromkeys(r["policy"] for r in rows):
        pts = [(r["tokens_per_forward"], r["projected_tps"]) for r in rows
               if r["policy"] == pol]
        ax.scatter(*zip(*pts), s=14, label=pol,
                   color=colours.get(pol) or _EXTRA_COLOURS[len(colours) % 4])
    base = next((r["projected_tps"] / r["speedup_vs_ar"] for r in rows
                 if r.get("speedup_vs_ar")), None)
    if base:
        ax.axhline(base, color="#444444", ls=":", lw=1,
                   label=f"plain decoding {base:.1f} TPS")
        ax.secondary_yaxis("right", functions=(lambda y: y / base, lambda g: g * base)) \
            .set_ylabel("gain (x plain decoding)")
    ax.set_xlabel("tokens / forward")
    ax.set_ylabel("projected TPS")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=4,
              frameon=False)
    return _png(fig)


def draft_tps_plot(policies: Sequence[dict]) -> bytes:
    """Projected TPS per drafting policy with its 95 % interval, the baseline policy's TPS
    as a dotted line and the gain over it (TPS) on the top axis."""
    n = len(policies)
    fig = _fig(7.0, max(2.4, 0.32 * n + 1.4), left=0.3, bottom=0.2, top=0.8)
    ax = fig.add_subplot()
    base = next((p["projected_tps"]["point"] for p in policies
                 if p.get("worth_a_run") is None), None)
    for y, p in enumerate(policies):
        t = p["projected_tps"]
        ax.errorbar([t["point"]], [y], xerr=[[t["point"] - t["ci_low"]],
                                             [t["ci_high"] - t["point"]]],
                    fmt="o", capsize=3, color="#444444" if p.get("worth_a_run") is None
                    else "#0072B2")
    ax.set_yticks(range(n), [p["label"] if len(p["label"]) <= 40 else p["label"][:39] + "…"
                             for p in policies], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("projected TPS (95 % bootstrap interval)")
    if base is not None:
        ax.axvline(base, color="#444444", ls=":", lw=1)
        ax.secondary_xaxis("top", functions=(lambda x: x - base, lambda g: g + base)) \
            .set_xlabel(f"gain over the baseline ({base:.1f} TPS, dotted), TPS", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def runs_plot(groups: Sequence[tuple[str, str, Sequence[tuple[float, bool, bool]]]], *,
              unit: str = "") -> bytes:
    """Every run of a result, per config and instance: one column of points per
    ``(config, instance, runs)`` group (``runs``: ``(value, cold, outlier)`` in run order,
    spread left to right), A's configs blue, B's orange; cold first runs hollow squares,
    outliers red crosses. The legend sits below the axes, off the data."""
    n = len(groups)
    fig = _fig(max(5.0, min(11.0, 1.2 + 0.55 * n)), 3.6, left=0.12, bottom=0.36, top=0.93)
    ax = fig.add_subplot()
    labelled = set()
    for i, (config, group, runs) in enumerate(groups):
        col = "#E69F00" if config.startswith("B ") else "#0072B2"
        k = len(runs)
        xs = [i + (0.0 if k == 1 else -0.3 + 0.6 * j / (k - 1)) for j in range(k)]
        warm = [(x, v) for x, (v, cold, odd) in zip(xs, runs) if not cold and not odd]
        if warm:
            name = config if len(config) <= 60 else config[:59] + "…"
            ax.plot(*zip(*warm), "o", ms=4, color=col,
                    label=None if config in labelled else name)
            labelled.add(config)
        cold = [(x, v) for x, (v, c, _) in zip(xs, runs) if c]
        if cold:
            ax.plot(*zip(*cold), "s", ms=6, mfc="none", mec=col, mew=1.3)
        odd = [(x, v) for x, (v, _, o) in zip(xs, runs) if o]
        if odd:
            ax.plot(*zip(*odd), "x", ms=7, color="#D55E00", mew=1.6)
    ax.plot([], [], "s", ms=6, mfc="none", mec="#444444", label="cold first run")
    ax.plot([], [], "x", ms=7, color="#D55E00", label="outlier")
    ax.set_xticks(range(n), [g[1] if len(g[1]) <= 18 else g[1][:17] + "…" for g in groups],
                  rotation=30, ha="right", fontsize=7)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylabel(unit or "value")
    ax.set_title("runs per config and instance", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=2,
              frameon=False)
    return _png(fig)
