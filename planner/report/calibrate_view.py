"""Renderers of the ``planner calibrate`` result (schema ``spec-planner/calibrate/...``):
plain terminal lines and Markdown, from the JSON object alone."""

from __future__ import annotations

__all__ = ["rows", "render_terminal", "render_markdown"]


def rows(r: dict) -> list[list[str]]:
    """Quantity / value rows (shared with the HTML page)."""
    p, pr = r["posterior"], r["prior"]
    iv = lambda d: f"median {d['median']:.3f}%  95% [{d['low']:.3f}, {d['high']:.3f}]"  # noqa: E731
    return [["runs used", f"{r['runs_used']} in {r['groups']} groups "
                          f"({r['cold_dropped']} cold first runs dropped)"],
            ["platform / metric / workload", f"{r.get('platform') or '?'} / "
                                             f"{r.get('metric') or '?'} / "
                                             f"{r.get('workload') or '?'}"],
            ["sigma_instance", iv(p["tau_pct"])],
            ["sigma_run", iv(p["sigma_pct"])],
            ["prior tau", f"Scaled-Inv-chi2(df={pr['tau']['df']:.3g}, "
                          f"{100 * pr['tau']['scale']:.3f}%)"],
            ["prior sigma", f"Scaled-Inv-chi2(df={pr['sigma']['df']:.3g}, "
                            f"{100 * pr['sigma']['scale']:.3f}%)"],
            ["sigma method", str(r.get("sigma_method", ""))],
            ["grid edge mass", f"{r['grid_edge_mass']:.1e}" + ("" if r.get("ok") else
                                                                 " (not ok)")]]


def render_terminal(r: dict) -> None:
    """Print the fitted noise and prior."""
    p = r["posterior"]
    print(f"noise from {r['runs_used']} runs in {r['groups']} groups "
          f"({r['cold_dropped']} cold first runs dropped)")
    print(f"  sigma_instance: median {p['tau_pct']['median']:.3f}%  95% "
          f"[{p['tau_pct']['low']:.3f}, {p['tau_pct']['high']:.3f}]")
    print(f"  sigma_run:      median {p['sigma_pct']['median']:.3f}%  95% "
          f"[{p['sigma_pct']['low']:.3f}, {p['sigma_pct']['high']:.3f}]")
    pr = r["prior"]
    print(f"  prior: tau ~ Scaled-Inv-chi2(df={pr['tau']['df']:.3g}, "
          f"{100 * pr['tau']['scale']:.3f}%), sigma ~ Scaled-Inv-chi2(df="
          f"{pr['sigma']['df']:.3g}, {100 * pr['sigma']['scale']:.3f}%)")


def render_markdown(r: dict) -> str:
    """The calibration as a Markdown table."""
    lines = ["# Noise calibration: `planner calibrate`", "", "| quantity | value |", "|---|---|"]
    lines += [f"| {k} | {v.replace('|', '/')} |" for k, v in rows(r)]
    return "\n".join(lines) + "\n"
