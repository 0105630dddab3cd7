"""Self-contained HTML reports (one file, no external resources): plots are inline base64 PNG
(:mod:`planner.report.plots`), styles are inline, there is no JavaScript.

:func:`render_html` renders any of the JSON results below, chosen by ``command`` / ``schema``:

* ``verdict`` (``spec-planner/verdict/1``): posterior of Δ with the ROPE band and the HDI;
* ``repeats``: assurance vs runs per design and expected cost vs assurance;
* ``budget`` (``spec-planner/budget/1``): the plan table, totals, the skipped comparisons, an
  overview bar chart and, per comparison, the expected-Δ distribution with the ROPE, the
  assurance curves and the cost curve;
* ``draft`` / ``draft-sweep``: the policies table, vLLM's counters and the tokens/forward
  intervals; the ranked grid and its scatter plot;
* ``calibrate``: the fitted noise and prior.
"""

from __future__ import annotations

import html as _h
import math
from datetime import datetime, timezone

_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:24px auto;
max-width:1180px;color:#1d1d1f;padding:0 16px;line-height:1.4}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin:1.2em 0 .3em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.sub{color:#666;font-size:.9em}.tag{display:inline-block;padding:1px 8px;border-radius:10px;
font-weight:600;font-size:.85em}
.buy{background:#d6f5e8;color:#05603f}.over{background:#fdf0d5;color:#8a5a00}
.unreachable{background:#eee;color:#555}
.Bbetter{background:#d6f5e8;color:#05603f}.Abetter{background:#fde0dc;color:#8a1c0e}
.equivalent{background:#dff0fb;color:#0b4f78}.undecided{background:#fdf0d5;color:#8a5a00}
.plots{display:flex;flex-wrap:wrap;gap:6px}.plots3 img{width:calc((100% - 12px) / 3);height:auto;box-sizing:border-box}.plots img{border:1px solid #eee;max-width:100%}
code{font-size:.85em;background:#f4f4f6;padding:0 3px;border-radius:3px;word-break:break-all}
.note{color:#555;font-size:.88em}.nw{white-space:nowrap}
"""


def _e(x) -> str:
    return _h.escape("" if x is None else str(x))


def _f(x, fmt: str, none: str = "—") -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return none
    return format(x, fmt)


def _img(png: bytes, alt: str) -> str:
    from planner.report.plots import data_uri

    return f'<img src="{data_uri(png)}" alt="{_e(alt)}" class="plot">'


def _page(title: str, body: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n{body}\n"
            f"<p class=\"note\">spec-planner report, generated {stamp}.</p></body></html>\n")


def _table(headers: list[str], rows: list[list[str]], num_cols: set[int] = frozenset()) -> str:
    """Rows are already-escaped HTML cells."""
    th = "".join(f"<th>{_e(h)}</th>" for h in headers)
    trs = []
    for r in rows:
        tds = "".join(f"<td class=\"num\">{c}</td>" if i in num_cols else f"<td>{c}</td>"
                      for i, c in enumerate(r))
        trs.append(f"<tr>{tds}</tr>")
    return f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(trs)}</tbody></table>"


# ------------------------------------------------------------------------------- verdict

def verdict_delta_png(r: dict) -> bytes:
    """The Δ posterior plot of a verdict result (``delta_curve`` when present, else the Normal
    from ``delta_log.mean/sd``)."""
    from planner.report import plots

    dc = r.get("delta_curve")
    if dc and dc.get("delta_pct") and dc.get("density"):
        xs, ys = dc["delta_pct"], dc["density"]
    else:
        xs, ys = plots.normal_pct_curve(r["delta_log"]["mean"], r["delta_log"]["sd"])
    hp = int(round(100 * r.get("hdi_prob", 0.95)))
    return plots.delta_plot(xs, ys, rope_pct=r["rope"]["pct"],
                            interval=(r["delta_pct"]["hdi_low"], r["delta_pct"]["hdi_high"]),
                            mean=r["delta_pct"]["mean"], interval_label=f"{hp}% HDI",
                            title="posterior of Δ = B − A", size=(6.4, 3.4))


def render_verdict(r: dict) -> str:
    """HTML page of a verdict result."""
    from planner.report.views.verdict import _rows, diagnostics_line

    lab = r["label"]
    body = [f"<h1>Verdict: <span class=\"tag {lab.replace(' ', '')}\">{_e(lab)}</span></h1>",
            f"<p class=\"sub\">B = <code>{_e(r['b'])}</code> vs A = <code>{_e(r['a'])}</code>"
            "</p>",
            f"<div class=\"plots\">{_img(verdict_delta_png(r), 'posterior of delta')}</div>",
            _table(["quantity", "value"], [[f"<span class=\"nw\">{_e(k)}</span>", _e(v)]
                                           for k, v in _rows(r)]),
            f"<p class=\"sub\">{_e(diagnostics_line(r))}</p>"]
    if r.get("notes"):
        body.append("<ul>" + "".join(f"<li>{_e(n)}</li>" for n in r["notes"]) + "</ul>")
    return _page(f"verdict: {lab}", "\n".join(body))


# ------------------------------------------------------------------------------- repeats

def render_repeats(r: dict) -> str:
    """HTML page of a ``planner repeats`` result (a saved ``spec-planner/repeats/1`` dict;
    one entry per design from :meth:`planner.results.repeat_plan.RepeatPlan.design_curves`)."""
    from planner.results.repeat_plan import RepeatPlan
    from planner.report import plots
    from planner.report.views.repeats import headline, owned

    entries, rec = RepeatPlan.from_dict(r).design_curves()
    norm = {"designs": entries, "recommended": rec, "target": r["inputs"]["target"]}
    tgt = norm["target"]
    rec = norm["recommended"]
    free = owned(r)  # owned hardware ($0/h): GPU-hours are the cost, no dollars shown

    def usd(x):
        return "owned" if free else "$" + _f(x, ".2f")

    rows = [[_e(e.get("label", e["design"])), _f(e["runs_per_arm"], "g"), _f(e["assurance"], ".3f"),
             _f(e["false_claim_rate"], ".3f"), _f(e["gpu_hours"], ".2f"), usd(e["cost_usd"]),
             "yes" if e.get("reaches_target") else "no"] for e in norm["designs"]]
    body = ["<h1>Repeats plan</h1>",
            "<p class=\"sub\">" + "<br>".join(_e(x) for x in headline(r)) + "</p>",
            "<p>Recommended: <b>"
            + (_e(rec.get("label", rec["design"])) if rec else "none reaches the target") + "</b>"
            + (f", {rec['runs_per_arm']:g} runs per arm, assurance {_f(rec['assurance'], '.2f')}, "
               f"{_f(rec['gpu_hours'], '.2f')} GPU-h"
               + ("" if free else f", ${_f(rec['cost_usd'], '.2f')}") if rec else "") + "</p>",
            _table(["design", "runs/arm", "assurance", "false claims", "GPU-h", "cost",
                    "reaches target"], rows, {1, 2, 3, 4, 5}),
            "<div class=\"plots\">"
            + _img(plots.assurance_plot(norm["designs"], target=tgt), "assurance vs runs")
            + _img(plots.cost_plot(norm["designs"], target=tgt, recommended=rec,
                                   value="gpu_hours" if free else "cost_usd"),
                   ("expected GPU-hours" if free else "expected cost") + " vs assurance")
            + "</div>"]
    return _page("repeats plan", "\n".join(body))


# ------------------------------------------------------------------------------- budget

def _status_tag(st: str) -> str:
    cls = {"buy": "buy", "over budget": "over", "unreachable": "unreachable"}.get(st, "")
    return f"<span class=\"tag {cls}\">{_e(st)}</span>"


def _comparison_section(c: dict, target: float, r: dict | None = None) -> str:
    from planner.report import plots

    dc = c.get("delta_curve") or {}
    rope = c.get("rope_pct") or 0.0
    dpng = plots.delta_plot(dc.get("delta_pct") or [], dc.get("density") or [], rope_pct=rope,
                            interval=tuple(dc["interval_pct"]) if dc.get("interval_pct")
                            else None,
                            point=dc.get("point_pct"), mean=None if dc.get("point_pct") is not None
                            else c["delta"]["mean_pct"], interval_label="95% interval",
                            title=f"expected Δ: {c['name']}")
    apng = plots.assurance_plot(c["designs"], target=target, title="assurance vs runs per arm")
    from planner.report.views.budget import cost_cell, owned, plan_delta, simulated_delta

    free = r is not None and owned(r)  # owned hardware: GPU-hours are the cost
    cpng = plots.cost_plot(c["designs"], target=target, recommended=c.get("recommended"),
                           title=("expected GPU-hours" if free else "expected cost")
                           + " vs assurance", value="gpu_hours" if free else "cost_usd")

    d = c["delta"]
    src = d.get("source", "")
    if src == "projection":
        src = f"projection {d.get('projection')}"
    rows = [[_e(e.get("label", e["design"])), _f(e.get("runs_per_arm"), "g"), _f(e.get("assurance"), ".3f"),
             _f(e.get("false_claim_rate"), ".3f"), _f(e.get("gpu_hours"), ".2f"),
             cost_cell(r or {"budget": {"price_per_hour": 1}}, e.get("cost_usd")),
             "yes" if e.get("reaches_target") else "no"]
            for e in c["designs"]]
    return (f"<section id=\"c-{_e(c['name'])}\"><h3>{_e(c['name'])} {_status_tag(c['status'])}"
            f"</h3><p class=\"sub\"><code>{_e(c['baseline'])}</code> → "
            f"<code>{_e(c['candidate'])}</code> · {_e(c['platform'])} · prior {_e(c['prior'])} · "
            f"rule {_e(c['rule'])} · ROPE {_e(c['rope'])} (±{rope:.3g}%) · baseline "
            f"{c['baseline_tps']:.1f} TPS · Δ (plan, {_e(src)}) {_e(plan_delta(c))} · simulated "
            f"mean Δ {_e(simulated_delta(c))}"
            + (f" ± {d['sd_tps']:.2f} TPS" if d.get("sd_tps") else "") + "</p>"
            + (f"<p class=\"note\">{_e(c['reason'])}</p>" if c.get("reason") else "")
            + _table(["design", "runs/arm", "assurance", "false claims", "GPU-h", "cost",
                      "reaches target"], rows, {1, 2, 3, 4, 5})
            + f"<div class=\"plots plots3\">{_img(dpng, 'expected delta ' + c['name'])}"
            f"{_img(apng, 'assurance vs runs ' + c['name'])}"
            f"{_img(cpng, 'cost vs assurance ' + c['name'])}</div></section>")


def render_budget(r: dict) -> str:
    """HTML page of a budget result."""
    from planner.report import plots
    from planner.report.views.budget import HEADERS, _budget_line, _skipped, _totals_line, \
        _SEQ_NOTE, _has_sequential, _paired_note, comparison_rows, worst_case_line

    b = r["budget"]
    rows = []
    for c, row in zip(r["comparisons"], comparison_rows(r)):
        cells = [_e(x) for x in row[:-1]] + [_status_tag(row[-1])]
        cells[0] = f"<a href=\"#c-{_e(c['name'])}\">{cells[0]}</a>"
        rows.append(cells)
    body = [f"<h1>{_e(r.get('title') or 'Budget plan')}</h1>",
            f"<p class=\"sub\">plan <code>{_e(r['plan'])}</code> · {_e(_budget_line(r))}</p>",
            _table(HEADERS, rows, {1, 2, 4, 5, 6, 7, 8}),
            f"<p><b>Totals:</b> {_e(_totals_line(r))}.</p>"]
    worst = worst_case_line(r)
    if worst:
        body.append(f"<p><b>Worst case:</b> {_e(worst)}.</p>")
    if _has_sequential(r):
        body.append(f"<p class=\"note\">{_e(_SEQ_NOTE)}.</p>")
    if _paired_note(r):
        body.append(f"<p class=\"note\">{_e(_paired_note(r))}.</p>")
    sk = _skipped(r)
    if sk:
        body.append("<p><b>Not worth buying at this budget:</b></p><ul>"
                    + "".join(f"<li>{_e(s)}</li>" for s in sk) + "</ul>")
    body.append(f"<p class=\"note\">Allocation rule: {_e(r['allocation_rule'])}. Sizing: "
                f"{_e(r['repeats_engine'])}, {r['sims']} simulations per design, seed "
                f"{r['seed']}.</p>")
    body.append("<div class=\"plots\">"
                + _img(plots.budget_plot(r["comparisons"], total_usd=b.get("total_usd")),
                       "budget overview") + "</div>")
    body.append("<h2>Comparisons</h2>")
    body += [_comparison_section(c, b["assurance_target"], r) for c in r["comparisons"]]
    return _page(r.get("title") or "budget plan", "\n".join(body))


# ------------------------------------------------------------------------------- draft

def render_draft(r: dict) -> str:
    """HTML page of a ``planner draft`` result: policies, vLLM's counters, the verdict and the
    tokens/forward intervals."""
    from pathlib import PurePath

    from planner.report.views import draft as v
    from planner.report import plots

    name = PurePath(r["capture"]["path"]).name
    body = [f"<h1>planner draft: <code>{_e(name)}</code></h1>",
            f"<p class=\"sub\">{_e(v.headline(r))}</p>"]
    if v.evidence_line(r):
        body.append(f"<p class=\"tag over\">{_e(v.evidence_line(r))}.</p>")
    if r.get("worth_a_run"):
        w = r["worth_a_run"]
        best = "" if "basis" in w else f" (best: <code>{_e(w['best_policy'])}</code>)"
        body.append(f"<p><b>{_e(w['verdict'])}</b>{best}</p>")  # basis: the verdict says
    body.append(_table(v.POLICY_HEADERS, [[_e(c) for c in row] for row in v.policy_rows(r)],
                       {1, 2, 3, 4, 5, 6, 7, 8, 9}))
    notes = v.footnotes(r)
    if notes:
        body.append("<p class=\"note\">" + "<br>".join(_e(n) for n in notes) + "</p>")
    vr = v.vllm_rows(r)
    if vr:
        body += ["<h2>vLLM spec-decode counters of the replay</h2>",
                 _table(v.VLLM_HEADERS, [[_e(c) for c in row] for row in vr],
                        {2, 3, 4, 5, 6}),
                 "<p class=\"note\">Draft acceptance rate = accepted / draft tokens; mean "
                 "acceptance length = 1 + accepted / drafts; per-position rate i = drafts "
                 "accepting at least i tokens / drafts.</p>"]
    body.append("<div class=\"plots\">" + _img(plots.tpf_plot(r["policies"]),
                                                "tokens per forward") + "</div>")
    return _page(f"planner draft: {name}", "\n".join(body))


def render_sweep(r: dict) -> str:
    """HTML page of a ``planner draft sweep`` result."""
    from planner.report.views import draft as v
    from planner.report import plots

    body = [f"<h1>{_e(v._sweep_title(r))}</h1>",
            f"<p class=\"sub\">{r['n_prompts']} prompts · cost model {_e(r['cost_model'])} · "
            f"MTP acceptance {_e(r['acceptance'])} · seed {r['seed']}</p>",
            "<div class=\"plots\">" + _img(plots.sweep_plot(r["rows"]), "sweep") + "</div>",
            _table(v.SWEEP_HEADERS, [[_e(c) for c in row] for row in v.sweep_rows(r)],
                   {0, 3, 4, 5, 6})]
    notes = v.sweep_footnotes(r)
    if notes:
        body.append("<p class=\"note\">" + "<br>".join(_e(n) for n in notes) + "</p>")
    return _page("planner draft sweep", "\n".join(body))


# ------------------------------------------------------------------------------- calibrate

def render_calibrate(r: dict) -> str:
    """HTML page of a ``planner calibrate`` result (no plot)."""
    from planner.report.views.calibrate import rows

    body = ["<h1>Noise calibration</h1>",
            _table(["quantity", "value"], [[_e(k), _e(v)] for k, v in rows(r)])]
    return _page("noise calibration", "\n".join(body))


def render_shift(r: dict) -> str:
    """HTML page of a ``planner shift`` result (:func:`planner.report.views.shift.render_html`)."""
    from planner.report.views.shift import render_html as page

    return page(r)


_PAGES = {"verdict": render_verdict, "repeats": render_repeats, "budget": render_budget,
          "draft": render_draft, "draft-sweep": render_sweep, "calibrate": render_calibrate,
          "shift": render_shift}


def render_html(result: dict) -> str:
    """Render any result (verdict, repeats, budget, draft, draft sweep, calibrate) as one
    self-contained HTML page, chosen by :func:`planner.report.render.kind_of`.

    Raises
    ------
    planner.errors.InputError
        The result is none of these.
    """
    from planner.report.render import kind_of

    return _PAGES[kind_of(result)](result)
