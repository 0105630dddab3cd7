"""The shift report kind (``planner shift``): terminal, Markdown and HTML views and the
saved-JSON schema; they read only the result dict (``ShiftResult.to_dict()`` or its saved
JSON) and open with :func:`headline`."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from planner.report.escape import md, term

__all__ = ["SCHEMA", "headline", "evidence_line", "render_terminal", "render_markdown",
           "render_html"]


class _Interval(TypedDict):
    point: float
    pi_low: float
    pi_high: float


class _Inputs(TypedDict):
    level: float
    x_pct: float
    private_capture: NotRequired[str | None]


class _Public(TypedDict):
    tps: float
    tokens_per_forward: NotRequired[float | None]
    source: NotRequired[str]


class _Private(TypedDict):
    mode: str
    n_prompts: NotRequired[int | None]
    evidence: NotRequired[str | None]


class SCHEMA(TypedDict):
    """The fields of a saved shift result the views read, with their types."""
    inputs: _Inputs
    public: _Public
    private: _Private
    private_tps: _Interval
    ratio: _Interval
    p_drop: float | None
    p_drop_mc_se: NotRequired[float | None]
    validation: list[dict[str, object]]
    trust: str


def evidence_line(r: dict) -> str | None:
    """The too-little-evidence note of a result, None when its captures are large enough
    (or it has none)."""
    ev = r.get("evidence")
    return ev["note"] if ev and ev.get("level") != "ok" else None


def headline(r: dict) -> list[str]:
    """The sentence every view opens with (:func:`_answer`)."""
    return [_answer(r)]


def _answer(r: dict) -> str:
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
    """Print the result with rich (every value as text)."""
    from rich.console import Console
    from rich.table import Table

    con = Console()
    for line in headline(r):
        con.print(term(line, "bold"))
    con.print(term(_source(r)))
    if evidence_line(r):
        con.print(term(evidence_line(r), "bold yellow"))
    ra = r["ratio"]
    con.print(term(f"private/public ratio {ra['point']:.3f} [{ra['pi_low']:.3f}, "
                   f"{ra['pi_high']:.3f}]"))
    tab = Table(title="validation (held-out)")
    for h in _VHEAD:
        tab.add_column(h)
    for row in _val_rows(r):
        tab.add_row(*[term(c) for c in row])
    con.print(tab)
    con.print(term(f"trust: {r['trust']}"))


def render_markdown(r: dict) -> str:
    """Markdown report."""
    ev = evidence_line(r)
    lines = ["# planner shift", ""] + [f"**{md(x)}**" for x in headline(r)]
    lines += ["", md(_source(r)), ""]
    lines += [f"**{md(ev)}.**", ""] if ev else []
    lines += ["| " + " | ".join(_VHEAD) + " |", "|" + "---|" * len(_VHEAD)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in _val_rows(r)]
    lines += ["", f"Trust: {md(r['trust'])}", ""]
    return "\n".join(lines)


def render_html(r: dict) -> str:
    """HTML page in the shared frame: headline, source, ratio, held-out checks, trust."""
    from planner.report import html as h

    ra = r["ratio"]
    body = ["<h1>planner shift</h1>", h.lead(headline(r)),
            f"<p class=\"sub\">{h.e(_source(r))}</p>"]
    if evidence_line(r):
        body.append(f"<p class=\"tag over\">{h.e(evidence_line(r))}.</p>")
    body += [f"<p>private/public ratio {ra['point']:.3f} [{ra['pi_low']:.3f}, "
             f"{ra['pi_high']:.3f}]</p>", "<h2>Validation (held out)</h2>",
             h.table(_VHEAD, [[h.e(c) for c in row] for row in _val_rows(r)], {1, 2, 3}),
             f"<p class=\"note\">Trust: {h.e(r['trust'])}</p>"]
    return h.page("planner shift", "\n".join(body))
