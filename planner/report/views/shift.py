"""The shift report kind (``planner shift``): terminal, Markdown and HTML views and the
saved-JSON schema; they read only the result dict (``ShiftResult.to_dict()`` or its saved
JSON) and open with :func:`headline`."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from planner.report.escape import md, term

__all__ = ["SCHEMA", "headline", "evidence_line", "render_terminal", "render_markdown",
           "render_html", "rests_rows", "check_lines", "REST_HEAD"]


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
    recommended: NotRequired[dict | None]
    checks: NotRequired[list[dict]]
    official_fit: NotRequired[dict | None]
    rests_on: NotRequired[list[dict]]


def evidence_line(r: dict) -> str | None:
    """The too-little-evidence note of a result, None when its captures are large enough
    (or it has none)."""
    ev = r.get("evidence")
    return ev["note"] if ev and ev.get("level") != "ok" else None


def headline(r: dict) -> list[str]:
    """The sentences every view opens with: the recommended answer (:func:`_recommended`;
    :func:`_answer` for results saved before it existed), then one line per check."""
    if not r.get("recommended"):
        return [_answer(r)]
    return [_recommended(r)] + check_lines(r)


def _ask(r: dict) -> str:
    return f"P(private more than {r['inputs']['x_pct']:g} % below public)"


def _block_line(r: dict, b: dict, lvl: str) -> str:
    t = b["private_tps"]
    if b.get("p_drop") is None:
        caps = [c for c in (r.get("evidence") or {}).get("captures", [])
                if c["level"] != "ok"]
        size = "; ".join(f"{c['prompts']} prompts, {c['tokens']} tokens" for c in caps)
        p = f"{_ask(r)} withheld: too little evidence ({size})"
    else:
        iv = b.get("p_drop_interval")
        p = f"{_ask(r)} = {b['p_drop']:.2f}" + (
            f" [{iv[0]:.2f}, {iv[1]:.2f}]" if iv else "")
    return (f"private {t['point']:.1f} TPS [{t['pi_low']:.1f}, {t['pi_high']:.1f}] "
            f"({lvl} % interval); {p}")


def _recommended(r: dict) -> str:
    lvl = f"{100 * r['inputs']['level']:.4g}"
    b = r["recommended"]
    return (f"public {r['public']['tps']:.1f} TPS -> " + _block_line(r, b, lvl)
            + f" -- recommended: {b['label']}")


def check_lines(r: dict) -> list[str]:
    """One line per check mode (the modes not recommended)."""
    lvl = f"{100 * r['inputs']['level']:.4g}"
    return [f"check, {b['label']}: " + _block_line(r, b, lvl) for b in r.get("checks") or []]


REST_HEAD = ["rests on", "value", "range", "flips at", "conclusion", "note", "source"]


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def rests_rows(r: dict) -> list[list[str]]:
    """The ``rests_on`` entries as table rows (categorical ones list their alternatives)."""
    rows = []
    for x in r.get("rests_on") or []:
        rng = ("-" if x["low"] is None else f"[{_fmt(x['low'])}, {_fmt(x['high'])}] "
               f"{x['unit']}".strip())
        note = x["note"]
        if x.get("alternatives"):
            note += " (" + ", ".join(f"{k}: {_fmt(v)}" for k, v in x["alternatives"].items()) \
                + ")"
        rows.append([x["name"], _fmt(x["value"]), rng, _fmt(x["flip_at"]), x["conclusion"],
                     note, x["source"]])
    return rows


def fit_lines(r: dict) -> list[str]:
    """The official fit in two sentences (None for results saved before it existed)."""
    f = r.get("official_fit")
    if not f:
        return []
    a, t, lo, l0 = (f["allocation_cv"], f["shift_sd"], f["lopo"], f["lopo_without_covariate"])
    c = f["coefficients"]
    ft = c.get("drafter_tuned_log_ratio")
    return [f"official fit on {f['pairs']} verifier pairs: mean log ratio "
            f"{c['intercept_log_ratio']:+.4f}"
            + (f", drafter tuned on public-like prompts {ft:+.4f}" if ft is not None else "")
            + f"; allocation noise {100 * a['mean']:.2f} % per run [{100 * a['low']:.2f}, "
            f"{100 * a['high']:.2f}], prompt-set shift between submissions "
            f"{100 * t['mean']:.2f} % [{100 * t['low']:.2f}, {100 * t['high']:.2f}]; "
            f"drafter tuned: {'yes' if f['drafter_tuned'] else 'no'} "
            f"({f['drafter_tuned_source']})",
            f"leave-one-pair-out: {lo['covered']}/{lo['n']} inside the "
            f"{100 * lo['level']:.4g} % interval, P(invalid) Brier {lo['brier']:.3f}, log "
            f"score {lo['log_score']:.3f} (without the covariate {l0['brier']:.3f} / "
            f"{l0['log_score']:.3f}; the held-in invalid rate {lo['base_rate_brier']:.3f}; "
            "a coin 0.250 / -0.693)"]


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
        # measured counters of these very prompts: one number, not a zero-width interval
        iv = ("" if tp["pi_low"] == tp["pi_high"] == tp["point"] else
              f" [{tp['pi_low']:.3f}, {tp['pi_high']:.3f}]")
        return (f"private capture {r['inputs']['private_capture']} ({p['n_prompts']} prompts): "
                f"tokens/forward {tp['point']:.3f}{iv} "
                f"({p.get('source') or 'content model'}); public "
                f"{r['public']['tokens_per_forward']:.3f} "
                f"({r['public']['source']})")
    f = r.get("official_fit")
    if p["evidence"] == "official" and f:
        return (f"no private capture: evidence 'official', the fit on {f['pairs']} official "
                "verifier pairs (models/data/official_private_pairs.csv)")
    return f"no private capture: shipped public/private pairs, evidence '{p['evidence']}'"


def _val_rows(r: dict) -> list[list[str]]:
    rows = []
    for v in r["validation"]:
        if "group" in v:
            rows.append([v["group"], v.get("check", "content model, leave-one-group-out"),
                         f"{v['predicted']:.3f} tokens/forward",
                         f"{v['measured']:.3f}", f"[{v['pi_low']:.3f}, {v['pi_high']:.3f}]",
                         "yes" if v["covered"] else "no", "-"])
            continue
        pred = v.get("predicted_drop_pct")
        pi = v.get("p_invalid")
        kind = v.get("check") or (f"{v['mode']}{', in-sample' if v.get('in_sample') else ''}")
        rows.append([v["config"], kind,
                     "-" if pred is None else f"{pred:.1f} % drop"
                     + ("" if pi is None else f", P(invalid) {pi:.2f}"),
                     f"{v['observed_drop_pct']:.1f} % drop"
                     + (f" ({v['verdict']})" if v.get("verdict") else ""),
                     f"[{v['pi_low_pct']:.1f}, {v['pi_high_pct']:.1f}] %",
                     "yes" if v["covered"] else "no",
                     "-" if pi is None or not v.get("verdict") else
                     f"{(pi - (v['verdict'] == 'invalid')) ** 2:.3f}"])
    return rows


_VHEAD = ["held out", "check", "predicted", "measured", "interval", "covered", "Brier"]


def _ratio_line(r: dict) -> str:
    ra = r["ratio"]
    p = r["private"]
    run = ("capture" if p["mode"] == "capture" else p.get("evidence") or "evidence")
    return (f"private/public ratio ({run} mode) {ra['point']:.3f} [{ra['pi_low']:.3f}, "
            f"{ra['pi_high']:.3f}]")


def _why(r: dict) -> str | None:
    rec = r.get("recommended")
    return f"why {rec['label']}: {rec['why']}" if rec else None


def render_terminal(r: dict) -> None:
    """Print the result with rich (every value as text)."""
    from rich.console import Console

    from planner.report.views.draft import print_table

    con = Console()
    for i, line in enumerate(headline(r)):
        con.print(term(line, "bold" if i == 0 else ""))
    if _why(r):
        con.print(term(_why(r)))
    con.print(term(_source(r)))
    if evidence_line(r):
        con.print(term(evidence_line(r), "bold yellow"))
    con.print(term(_ratio_line(r)))
    for line in fit_lines(r):
        con.print(term(line))
    # a table that cannot fit the terminal with its words whole is printed one block per
    # row (at 80 columns rich cut the constants' names to "officia…")
    if r.get("rests_on"):
        print_table(con, "rests on", REST_HEAD, rests_rows(r))
    print_table(con, "validation (held-out)", _VHEAD, _val_rows(r))
    con.print(term(f"trust: {r['trust']}"))


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    return (["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            + ["| " + " | ".join(md(c) for c in row) + " |" for row in rows])


def render_markdown(r: dict) -> str:
    """Markdown report."""
    ev = evidence_line(r)
    lines = ["# planner shift", ""] + [f"**{md(x)}**" for x in headline(r)]
    lines += [""] + ([md(_why(r)), ""] if _why(r) else [])
    lines += [md(_source(r)), ""]
    lines += [f"**{md(ev)}.**", ""] if ev else []
    lines += [md(_ratio_line(r)), ""] + [md(x) + "  " for x in fit_lines(r)]
    if r.get("rests_on"):
        lines += ["", "## Rests on", ""] + _md_table(REST_HEAD, rests_rows(r))
    lines += ["", "## Validation (held out)", ""] + _md_table(_VHEAD, _val_rows(r))
    lines += ["", f"Trust: {md(r['trust'])}", ""]
    return "\n".join(lines)


def _modes_plot(r: dict) -> bytes | None:
    """Private TPS interval of every mode (recommended first, blue), the public score and the
    (1 - X/100) line."""
    from planner.report import plots

    blocks = ([r["recommended"]] if r.get("recommended") else []) + list(r.get("checks") or [])
    if not blocks:
        return None
    fig = plots._fig(7.0, max(2.0, 0.4 * len(blocks) + 1.2), left=0.4, bottom=0.25, top=0.92)
    ax = fig.add_subplot()
    for y, b in enumerate(blocks):
        t = b["private_tps"]
        ax.errorbar([t["point"]], [y], xerr=[[t["point"] - t["pi_low"]],
                                             [t["pi_high"] - t["point"]]], fmt="o", capsize=3,
                    color="#0072B2" if y == 0 else "#888888")
    pub = r["public"]["tps"]
    thr = pub * (1 - r["inputs"]["x_pct"] / 100)
    ax.axvline(pub, color="#444444", ls=":", lw=1)
    ax.axvline(thr, color="#D55E00", ls="--", lw=1)
    ax.set_yticks(range(len(blocks)), [("recommended: " if i == 0 else "check: ")
                                       + b["label"][:38] for i, b in enumerate(blocks)],
                  fontsize=7)
    ax.set_ylim(len(blocks) - 0.4, -0.6)
    ax.set_xlabel(f"private TPS ({100 * r['inputs']['level']:.4g} % interval); dotted: "
                  f"public {pub:.1f}, dashed: {r['inputs']['x_pct']:g} % below", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    return plots._png(fig)


def render_html(r: dict) -> str:
    """HTML page in the shared frame: headline (recommended answer and checks), why, a plot of
    the modes, the official fit, what it rests on, held-out checks, trust."""
    from planner.report import html as h

    rec = r.get("recommended")
    body = ["<h1>planner shift</h1>", h.lead(headline(r))]
    if rec:
        p = rec.get("p_drop")
        body.append("<p>" + h.tag(f"recommended: {rec['label']}",
                                  "over" if p is not None and p >= 0.5 else "buy")
                    + f" <span class=\"sub\">{h.e(rec['why'])}</span></p>")
    body.append(f"<p class=\"sub\">{h.e(_source(r))}</p>")
    if evidence_line(r):
        body.append(f"<p class=\"tag over\">{h.e(evidence_line(r))}.</p>")
    png = _modes_plot(r)
    if png is not None:
        body.append("<div class=\"plots\">" + h.img(png, "private TPS per mode") + "</div>")
    body.append(f"<p>{h.e(_ratio_line(r))}</p>")
    if fit_lines(r):
        body += ["<h2>Official fit</h2>",
                 "<p class=\"note\">" + "<br>".join(h.e(x) for x in fit_lines(r)) + "</p>"]
    if r.get("rests_on"):
        body += ["<h2>Rests on</h2>",
                 h.table(REST_HEAD, [[h.e(c) for c in row] for row in rests_rows(r)], {1, 3})]
    body += ["<h2>Validation (held out)</h2>",
             h.table(_VHEAD, [[h.e(c) for c in row] for row in _val_rows(r)], {2, 3, 4, 6}),
             f"<p class=\"note\">Trust: {h.e(r['trust'])}</p>"]
    return h.page("planner shift", "\n".join(body))
