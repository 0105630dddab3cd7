"""Renderers of a saved ``planner shift`` result (terminal, Markdown, HTML); they read only
the result dict (``ShiftResult.to_dict()`` or its saved JSON)."""

from __future__ import annotations

import html as _html

__all__ = ["headline", "evidence_line", "render_terminal", "render_markdown", "render_html"]


def evidence_line(r: dict) -> str | None:
    """The too-little-evidence note of a result, None when its captures are large enough
    (or it has none)."""
    ev = r.get("evidence")
    return ev["note"] if ev and ev.get("level") != "ok" else None


def headline(r: dict) -> str:
    """One-line answer; the probability says "withheld" when the result withholds it."""
    i, t = r["inputs"], r["private_tps"]
    lvl = f"{100 * i['level']:.4g}"  # 0.9999 is a 99.99 % interval, not "100 %"
    ask = f"P(private more than {i['x_pct']:g} % below public)"
    if r["p_drop"] is None:
        caps = [c for c in (r.get("evidence") or {}).get("captures", [])
                if c["level"] != "ok"]
        size = "; ".join(f"{c['prompts']} prompts, {c['tokens']} tokens" for c in caps)
        return (f"public {r['public']['tps']:.1f} TPS -> private {t['point']:.1f} TPS "
                f"[{t['pi_low']:.1f}, {t['pi_high']:.1f}] ({lvl} % interval, not a basis "
                f"for a decision); {ask} withheld: too little evidence ({size})")
    se = r.get("p_drop_mc_se")
    return (f"public {r['public']['tps']:.1f} TPS -> private {t['point']:.1f} TPS "
            f"[{t['pi_low']:.1f}, {t['pi_high']:.1f}] ({lvl} % interval); "
            f"{ask} = {r['p_drop']:.2f}" + (f" ± {se:.2f} (Monte Carlo)" if se and se >= 0.005
                                             else ""))


def _source(r: dict) -> str:
    p = r["private"]
    if p["mode"] == "capture":
        tp = p["tokens_per_forward"]
        return (f"private capture {r['inputs']['private_capture']} ({p['n_prompts']} prompts): "
                f"tokens/forward {tp['point']:.3f} [{tp['pi_low']:.3f}, {tp['pi_high']:.3f}] "
                f"({p.get('source') or 'content model'}); public "
                f"{r['public']['tokens_per_forward']:.3f} "
                f"({r['public']['source']})")
    return f"no private capture: shipped public/private pairs, evidence '{p['evidence']}'"


def _val_rows(r: dict) -> list[list[str]]:
    rows = []
    for v in r["validation"]:
        if "group" in v:
            rows.append([v["group"], f"{v['predicted']:.3f}", f"{v['measured']:.3f}",
                         f"[{v['pi_low']:.3f}, {v['pi_high']:.3f}]",
                         "yes" if v["covered"] else "no"])
        else:
            rows.append([f"{v['config']} ({v['mode']}{', in-sample' if v['in_sample'] else ''})",
                         "-", f"{v['observed_drop_pct']:.1f} % drop",
                         f"[{v['pi_low_pct']:.1f}, {v['pi_high_pct']:.1f}] %",
                         "yes" if v["covered"] else "no"])
    return rows


_VHEAD = ["held out", "predicted", "measured", "interval", "covered"]


def render_terminal(r: dict) -> None:
    """Print the result with rich."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = Console()
    con.print(_source(r))
    con.print(f"[bold]{headline(r)}[/]")
    if evidence_line(r):
        con.print(f"[bold yellow]{escape(evidence_line(r))}[/]")
    ra = r["ratio"]
    con.print(f"private/public ratio {ra['point']:.3f} [{ra['pi_low']:.3f}, {ra['pi_high']:.3f}]")
    tab = Table(title="validation (held-out)")
    for h in _VHEAD:
        tab.add_column(h)
    for row in _val_rows(r):
        tab.add_row(*row)
    con.print(tab)
    con.print(f"trust: {r['trust']}")


def render_markdown(r: dict) -> str:
    """Markdown report."""
    ev = evidence_line(r)
    lines = ["# planner shift", "", _source(r), "", f"**{headline(r)}**", ""]
    lines += [f"**{ev}.**", ""] if ev else []
    lines += ["| " + " | ".join(_VHEAD) + " |", "|" + "---|" * len(_VHEAD)]
    lines += ["| " + " | ".join(row) + " |" for row in _val_rows(r)]
    lines += ["", f"Trust: {r['trust']}", ""]
    return "\n".join(lines)


def render_html(r: dict) -> str:
    """Self-contained HTML report."""
    e = _html.escape
    rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>"
                   for row in _val_rows(r))
    head = "".join(f"<th>{e(h)}</th>" for h in _VHEAD)
    return ("<!doctype html><html><head><meta charset='utf-8'><title>planner shift</title>"
            "</head><body><h1>planner shift</h1>"
            f"<p>{e(_source(r))}</p><p><b>{e(headline(r))}</b></p>"
            + (f"<p><b>{e(evidence_line(r))}.</b></p>" if evidence_line(r) else "") +
            f"<table border='1'><tr>{head}</tr>{rows}</table>"
            f"<p>Trust: {e(r['trust'])}</p></body></html>\n")
