"""Plots of a draft and a draft-sweep result (matplotlib, Agg, PNG bytes): projected TPS and the
gain over the baseline (baseline marked) beside tokens/forward, legends off the data.

* :func:`draft_overview_plot` -- a draft result: per policy, projected TPS with its 95 %
  bootstrap interval (the baseline a dotted line, the gain over it on the top axis) beside
  tokens/forward with its interval;
* :func:`sweep_overview_plot` -- a sweep: every row's projected TPS against its
  tokens/forward with intervals, one colour per policy family, rows worth a run filled,
  the baseline a dotted line and the gain on the right-hand axis; the legend sits below.

Both read plain lists / dicts of the JSON result. Kept apart from :mod:`planner.report.plots`
(shared with other report kinds) so each file stays one concern.
"""

from __future__ import annotations

from typing import Sequence

from planner.report.plots import _EXTRA_COLOURS, _fig, _png

__all__ = ["draft_overview_plot", "sweep_overview_plot", "FAMILY_COLOURS"]

#: One colour per policy family (Okabe-Ito), the baseline grey.
FAMILY_COLOURS = {"ar": "#999999", "pld": "#0072B2", "hf-pld": "#56B4E9", "ngram": "#009E73",
                  "suffix": "#E69F00", "mtp": "#D55E00", "suffix-first": "#CC79A7",
                  "tree": "#000000", "hybrid-max": "#F0E442"}


def _short(label: str, n: int = 34) -> str:
    return label if len(label) <= n else label[:n - 1] + "…"


def draft_overview_plot(policies: Sequence[dict]) -> bytes:
    """Projected TPS (and gain over the baseline, baseline dotted) beside tokens/forward,
    one row per policy, 95 % bootstrap intervals; a new-prompt-set 90 % interval, when the
    row has one, as a thin grey bar behind.

    Parameters
    ----------
    policies : sequence of dict
        ``policies`` of a draft result (``label``, ``projected_tps`` and
        ``tokens_per_forward`` with ``point``, ``ci_low``, ``ci_high``, optional ``pi_low``
        / ``pi_high``; ``worth_a_run`` None for the baseline, else with ``worth``).
    """
    n = len(policies)
    fig = _fig(9.0, max(2.6, 0.34 * n + 1.6), left=0.24, right=0.98, bottom=0.22, top=0.78)
    ax_t = fig.add_subplot(1, 2, 1)
    ax_f = fig.add_subplot(1, 2, 2, sharey=ax_t)
    base = next((p["projected_tps"]["point"] for p in policies
                 if p.get("worth_a_run") is None), None)
    for y, p in enumerate(policies):
        w = p.get("worth_a_run")
        col = "#444444" if w is None else (
            FAMILY_COLOURS.get(p.get("policy", ""), _EXTRA_COLOURS[y % 4]))
        filled = w is not None and w.get("worth")
        for ax, key in ((ax_t, "projected_tps"), (ax_f, "tokens_per_forward")):
            t = p[key]
            if t.get("pi_low") is not None and t.get("pi_high") is not None:
                ax.plot([t["pi_low"], t["pi_high"]], [y, y], color="#BBBBBB", lw=5,
                        solid_capstyle="butt", zorder=1)
            ax.errorbar([t["point"]], [y], xerr=[[t["point"] - t["ci_low"]],
                                                 [t["ci_high"] - t["point"]]],
                        fmt="o", capsize=3, color=col, mfc=col if filled or w is None
                        else "white", zorder=2)
    ax_t.set_yticks(range(n), [_short(p["label"]) for p in policies], fontsize=7)
    ax_t.invert_yaxis()
    ax_t.margins(x=0.08)
    ax_t.set_xlabel("projected TPS (95 % bootstrap interval)", fontsize=8)
    ax_f.set_xlabel("tokens / forward", fontsize=8)
    ax_f.tick_params(labelleft=False)
    for ax in (ax_t, ax_f):
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=7)
    if base is not None:
        ax_t.axvline(base, color="#444444", ls=":", lw=1)
        ax_t.secondary_xaxis("top", functions=(lambda x: x - base, lambda g: g + base)) \
            .set_xlabel(f"gain over the baseline ({base:.1f} TPS, dotted), TPS", fontsize=8)
    # the key below the axes: filled = worth a run, hollow = not, grey bar = new prompt set
    ax_t.plot([], [], "o", color="#0072B2", label="worth a run")
    ax_t.plot([], [], "o", color="#0072B2", mfc="white", label="not worth a run")
    ax_t.plot([], [], color="#BBBBBB", lw=5, label="new prompt set 90 % PI")
    ax_t.plot([], [], "o", color="#444444", label="baseline")
    fig.legend(fontsize=7, loc="lower center", ncol=4, frameon=False,
               bbox_to_anchor=(0.6, 0.0))
    return _png(fig)


def sweep_overview_plot(rows: Sequence[dict], baseline_tps: float | None = None) -> bytes:
    """Every sweep row's projected TPS against its tokens/forward (95 % intervals on both),
    one colour per family, rows worth a run filled, the baseline dotted, and the gain over
    it (TPS) on the right-hand axis.

    Parameters
    ----------
    rows : sequence of dict
        ``rows`` of a sweep result (``policy``, ``tokens_per_forward``, ``projected_tps``,
        optional ``tokens_per_forward_ci`` / ``projected_tps_ci`` as ``[low, high]``,
        ``worth`` and ``is_baseline``).
    baseline_tps : float, optional
        The baseline's TPS (else the ``is_baseline`` row's, else the first row's TPS over its
        speed-up).
    """
    fig = _fig(7.0, 4.2, left=0.11, right=0.86, bottom=0.3, top=0.95)
    ax = fig.add_subplot()
    base = baseline_tps
    if base is None:
        base = next((r["projected_tps"] for r in rows if r.get("is_baseline")), None)
    if base is None:
        base = next((r["projected_tps"] / r["speedup_vs_ar"] for r in rows
                     if r.get("speedup_vs_ar")), None)
    for fam in dict.fromkeys(r["policy"] for r in rows):
        col = FAMILY_COLOURS.get(fam, _EXTRA_COLOURS[len(fam) % 4])
        pts = [r for r in rows if r["policy"] == fam]
        for filled in (True, False):
            sel = [r for r in pts if bool(r.get("worth")) == filled]
            if not sel:
                continue
            x = [r["tokens_per_forward"] for r in sel]
            y = [r["projected_tps"] for r in sel]
            xe = [[r["tokens_per_forward"] - r.get("tokens_per_forward_ci",
                                                   [r["tokens_per_forward"]] * 2)[0]
                   for r in sel],
                  [r.get("tokens_per_forward_ci", [r["tokens_per_forward"]] * 2)[1]
                   - r["tokens_per_forward"] for r in sel]]
            ye = [[r["projected_tps"] - r.get("projected_tps_ci", [r["projected_tps"]] * 2)[0]
                   for r in sel],
                  [r.get("projected_tps_ci", [r["projected_tps"]] * 2)[1]
                   - r["projected_tps"] for r in sel]]
            ax.errorbar(x, y, xerr=xe, yerr=ye, fmt="o", ms=4, lw=0.8, capsize=0,
                        color=col, mfc=col if filled else "white",
                        label=fam if filled or not any(r.get("worth") for r in pts)
                        else None)
    if base:
        ax.axhline(base, color="#444444", ls=":", lw=1, label=f"baseline {base:.1f} TPS")
        ax.secondary_yaxis("right", functions=(lambda y: y - base, lambda g: g + base)) \
            .set_ylabel("gain over the baseline, TPS", fontsize=8)
    ax.plot([], [], "o", color="#444444", label="filled: worth a run")
    ax.plot([], [], "o", color="#444444", mfc="white", label="hollow: not worth")
    ax.set_xlabel("tokens / forward (95 % bootstrap interval)", fontsize=8)
    ax.set_ylabel("projected TPS", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=5,
              frameon=False)
    return _png(fig)
