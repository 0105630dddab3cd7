"""Renderers of the ``planner calibrate`` result (schema ``spec-planner/calibrate/...``):
plain terminal lines and Markdown, from the JSON object alone."""

from __future__ import annotations

__all__ = ["rows", "render_terminal", "render_markdown"]


def _prior_cell(r: dict, name: str) -> str:
    """A written prior scale as median and 95 % range (%), then its Scaled-Inv-chi2."""
    pr = r["prior"][name]
    law = f"Scaled-Inv-chi2(df={pr['df']:.3g}, scale {100 * pr['scale']:.3f}%)"
    q = (r.get("prior_pct") or {}).get(f"{name}_pct")
    if not q:
        return law
    return f"median {q['median']:.3f}%  95% [{q['low']:.3f}, {q['high']:.3f}]  = {law}"


def rows(r: dict) -> list[list[str]]:
    """Quantity / value rows (shared with the HTML page)."""
    p, pr = r["posterior"], r["prior"]
    iv = lambda d: f"median {d['median']:.3f}%  95% [{d['low']:.3f}, {d['high']:.3f}]"  # noqa: E731
    out = [["runs used", f"{r['runs_used']} in {r['groups']} groups "
                          f"({r['cold_dropped']} cold first runs dropped)"],
            ["platform / metric / workload", f"{r.get('platform') or '?'} / "
                                             f"{r.get('metric') or '?'} / "
                                             f"{r.get('workload') or '?'}"],
            ["sigma_instance", iv(p["tau_pct"])],
            ["sigma_run", iv(p["sigma_pct"])],
            ["prior sigma_instance (written)", _prior_cell(r, "tau")],
            ["prior sigma_run (written)", _prior_cell(r, "sigma")],
            ["sigma method", str(r.get("sigma_method", ""))]]
    if r.get("sigma_note"):
        out.append(["why the prior differs", r["sigma_note"]])
    if r.get("split_note"):
        out.append(["instance vs run noise", r["split_note"]])
    if r.get("tau_note"):
        out.append(["sigma_instance not learned", r["tau_note"]])
    return out + [
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
    print("prior written for a new experiment (same terms):")
    print(f"  sigma_instance: {_prior_cell(r, 'tau')}")
    print(f"  sigma_run:      {_prior_cell(r, 'sigma')}")
    if r.get("sigma_note"):
        print(f"  {r['sigma_note']}")
    if r.get("split_note"):
        print(f"note: {r['split_note']}")
    if r.get("tau_note"):
        print(f"note: {r['tau_note']}")


def render_markdown(r: dict) -> str:
    """The calibration as a Markdown table."""
    lines = ["# Noise calibration: `planner calibrate`", "", "| quantity | value |", "|---|---|"]
    lines += [f"| {k} | {v.replace('|', '/')} |" for k, v in rows(r)]
    return "\n".join(lines) + "\n"
