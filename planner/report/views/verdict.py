"""The verdict report kind: terminal, Markdown and HTML views and the saved-JSON schema.

Every view takes the JSON object of a verdict (:meth:`planner.decide.verdict.Verdict.to_dict`,
or a saved ``--json`` output read back), never the live fit, and opens with
:func:`headline` (:func:`lead_sentence`). A result with ``runs`` (each run of both arms) also
shows them: :mod:`planner.report.runs`.
"""

from __future__ import annotations

import math

from typing import Literal, NotRequired, TypedDict

from planner.report import runs as _runs
from planner.report.escape import md, term
from planner.report.wording import tidy

__all__ = ["SCHEMA", "headline", "render_terminal", "render_markdown", "render_html",
           "lead_sentence", "diagnostics_line", "classical_note", "delta_png"]


class _Interval(TypedDict):
    mean: float
    hdi_low: float
    hdi_high: float


class _Scale(TypedDict):
    pct: dict[str, float]
    tps: dict[str, float]


class _Test(TypedDict):
    p: float | None
    significant: bool | None
    note: NotRequired[str]


class _ZTest(_Test):
    z: float | None
    sigma_tps: NotRequired[float | None]


class _Welch(_Test):
    t: float | None
    df: float | None


class _Paired(_Welch):
    n_pairs: int


class _Classical(TypedDict):
    delta_tps: NotRequired[float | None]
    z_test: _ZTest
    welch: _Welch
    paired_t: NotRequired[_Paired | None]


class _Cold(TypedDict):
    config: str
    rep: int | None
    instance: NotRequired[str | None]
    tps: NotRequired[float]


class _Rope(TypedDict):
    pct: float
    tps: float
    value: NotRequired[float]
    unit: NotRequired[str]


class _PriorScale(TypedDict):
    kind: NotRequired[str]
    scale: NotRequired[float]
    df: NotRequired[float | None]


class _Prior(TypedDict):
    label: str
    tau: NotRequired[_PriorScale | None]
    sigma: NotRequired[_PriorScale | None]
    n_runs: NotRequired[int | None]
    n_cells: NotRequired[int | None]
    n_groups: NotRequired[int | None]


class _Diagnostics(TypedDict):
    engine: NotRequired[str]
    ok: NotRequired[bool]
    grid_points: NotRequired[int]
    grid_edge_mass: NotRequired[float]
    r_hat_max: NotRequired[float | None]
    ess_bulk_min: NotRequired[float | None]
    ess_tail_min: NotRequired[float | None]
    divergences: NotRequired[int | None]


class _Curve(TypedDict):
    delta_pct: list[float]
    density: list[float]


class _DeltaLog(TypedDict):
    mean: float
    sd: float
    hdi_low: NotRequired[float]
    hdi_high: NotRequired[float]


class SCHEMA(TypedDict):
    """The fields of a saved verdict result the views read, with their types (checked by
    :func:`planner.report.render.check_schema` before rendering; other fields pass)."""
    label: Literal["B better", "A better", "equivalent", "undecided", "B faster", "B slower"]
    a: str
    b: str
    n_a: int
    n_b: int
    mean_tps_a: float
    mean_tps_b: float
    hdi_prob: float
    level_tps_a: NotRequired[float]
    more_runs_per_arm: NotRequired[int | None]
    delta_pct: _Interval
    delta_tps: _Interval
    delta_log: NotRequired[_DeltaLog]
    delta_curve: NotRequired[_Curve | None]
    rope: _Rope
    p_b_gt_a: float
    p_b_gt_a_beyond_rope: float
    p_a_gt_b_beyond_rope: float
    p_equivalent: float
    engine: str
    likelihood: str
    prior: _Prior
    classical: _Classical
    sigma_instance: _Scale
    sigma_run: _Scale
    diagnostics: _Diagnostics
    more_runs_note: NotRequired[str | None]
    cold_runs: NotRequired[list[_Cold] | None]
    notes: NotRequired[list[str]]
    direction: NotRequired[Literal["higher_is_better", "lower_is_better"]]
    direction_source: NotRequired[str | None]
    metric: NotRequired[str | None]
    seed: NotRequired[int | None]
    runs: NotRequired[list[_runs.Run] | None]
    runs_truncated: NotRequired[_runs.Truncated | None]


def lead_sentence(r: dict) -> str:
    """The verdict in one sentence a TPS racer acts on: the effect in %, its HDI, and what it
    means against the practical margin (the ROPE)."""
    d, rope = r["delta_pct"], r["rope"]["pct"]
    hp = int(round(100 * r["hdi_prob"]))
    lower = r.get("direction") == "lower_is_better"
    word = ("lower (faster)" if d["mean"] < 0 else "higher (slower)") if lower else \
        ("faster" if d["mean"] > 0 else "slower")
    size = (f"B is {abs(d['mean']):.2f} % {word} than A" if abs(d["mean"]) >= 0.005 else
            "B and A are within 0.01 % of each other")  # not "0.00 % slower"
    # the table's decimals (:func:`_fmt_iv`): three when the whole interval is within ±0.05 %
    nd = 3 if max(abs(d["hdi_low"]), abs(d["hdi_high"])) < 0.05 else 2
    while nd < 4 and any(f"{abs(x):.{nd}f}" == f"{rope:.{nd}f}" for x in
                         (d["hdi_low"], d["hdi_high"])):
        nd += 1  # an end that prints as the margin: enough digits to show which side it is
    eff = (f"{size} ({_levels(r)}{hp} % HDI of Δ {d['hdi_low']:+.{nd}f} .. "
           f"{d['hdi_high']:+.{nd}f} %)")
    label = r["label"]
    if not r.get("diagnostics", {}).get("ok", True):
        return (f"No verdict: the fit failed its diagnostics (see the diagnostics line), so "
                f"its estimate ({eff}) is not to be trusted; check the runs for an outlier or "
                "a wrong unit, or state your noise (--cv), before buying more runs.")
    if r.get("more_runs_code") == "no_spread":
        return (f"No verdict: each arm's runs hold one value, so they do not measure the noise "
                f"({eff}: that interval rests on the gap alone); give the values at full "
                "precision (separate measurements), or state your run-to-run noise (--cv).")
    if label == "equivalent":
        return f"{eff}; all of it inside your ±{_rope_pct(rope)} % practical margin: no real difference."
    if label == "undecided":
        more = r.get("more_runs_note")
        if d["hdi_low"] < 0 < d["hdi_high"]:
            # the sign itself is open: lead with the interval, not with a point estimate
            return (f"Not settled: B may be faster or slower than A ({_levels(r)}{hp} % HDI of Δ "
                    f"{d['hdi_low']:+.{nd}f} .. {d['hdi_high']:+.{nd}f} %, centre "
                    f"{d['mean']:+.{nd}f} %), "
                    f"and the interval straddles your ±{_rope_pct(rope)} % practical margin"
                    + (f" ({more})." if more else "."))
        return (f"{eff}; that interval straddles your ±{_rope_pct(rope)} % practical margin: "
                "not settled" + (f" ({more})." if more else "."))
    return f"{eff}; beyond your ±{_rope_pct(rope)} % practical margin: {label}."


def headline(r: dict) -> list[str]:
    """The sentences every view of a verdict opens with (:func:`lead_sentence`)."""
    return [tidy(lead_sentence(r))]


def _levels(r: dict) -> str:
    """``1.213 s vs 1.203 s, Δ -0.010 s; `` -- A's and B's means and Δ in a latency's or
    duration's own unit, as hyperfine prints times (3 decimals in s, 1 in ms); "" for a
    rate (TPS) or plain numbers, whose sentence gives Δ in % only."""
    u = _unit(r)
    if r.get("direction") != "lower_is_better" or u not in ("s", "ms", "us", "µs", ""):
        return ""
    if not u:  # plain numbers: as the table prints them, no unit; Δ to the means' decimals
        a, b, d = r["mean_tps_a"], r["mean_tps_b"], r["delta_tps"]["mean"]
        nd = max(len(x.partition(".")[2]) for x in (_num(a), _num(b)))
        dd = f"{d:+.{nd}f}" if d == 0 or abs(d) >= 10 ** -nd else f"{d:+.3g}"
        return f"{_num(a)} vs {_num(b)}, Δ {dd}; "
    d = r["delta_tps"]["mean"]
    # the means to as many decimals as Δ's two leading digits need: a TPOT of 3.237 vs
    # 3.308 ms printed "3.2 ms vs 3.3 ms, Δ +0.0712 ms" (a 0.1 gap beside its Δ of 0.07)
    nd = 3 if u == "s" else 1
    if d != 0 and math.isfinite(d):
        nd = min(6, max(nd, 1 - math.floor(math.log10(abs(d)))))
    return (f"{_hf(r['mean_tps_a'], u, nd=nd)} vs {_hf(r['mean_tps_b'], u, nd=nd)}, Δ "
            f"{_hf(d, u, '+', nd=nd)}; ")


def _hf(x: float, u: str, sign: str = "", nd: int | None = None) -> str:
    """A time as hyperfine prints it: ``1.203 s``, ``12.3 ms`` (``nd`` decimals when given);
    three significant digits when that would show no digit (``0.000412 s``)."""
    nd = (3 if u == "s" else 1) if nd is None else nd
    if x != 0 and abs(x) < 10 ** -nd:
        return f"{x:{sign}.3g} {u}"
    return f"{x:{sign}.{nd}f} {u}"


def _rope_pct(x: float) -> str:
    """A ROPE in % with two decimals, or two significant digits below 0.01 % (a ROPE of
    0.001 % is not '±0.00 %')."""
    if x == 0:  # --rope 0: "±0 %", not "±0.00 %" (a margin that looks rounded away)
        return "0"
    return f"{x:.2f}" if x >= 0.01 else f"{x:.2g}"


def _num(x: float, u: str = "") -> str:
    """Two decimals (three for seconds, as hyperfine prints times: 1.203 s), or four
    significant digits below 1 (small latencies: a TPOT σ of 0.0034 ms is not 0.00)."""
    if abs(x) >= 1:
        if u == "s":  # seconds: 4 significant digits (1.203 s), as hyperfine prints times
            import math

            return f"{x:.{max(2, 3 - math.floor(math.log10(abs(x))))}f}"
        return f"{x:.2f}"
    return f"{x:.4g}"


def _fmt_iv(d: dict, unit: str, nd: int = 2) -> str:
    top = max(abs(d["hdi_low"]), abs(d["hdi_high"]))
    if unit == "" and top < 0.1:
        nd = max(nd, 4)  # small-valued metrics (seconds, ms) would print as 0.00
    elif unit == "%" and top < 0.05:
        nd = max(nd, 3)  # an interval within ±0.05 % is not "+0.00 .. +0.01 %"
    return f"{d['mean']:+.{nd}f}{unit}  [{d['hdi_low']:+.{nd}f}, {d['hdi_high']:+.{nd}f}]"


def _unit(r: dict) -> str:
    """The values' unit in the views: the result's ``metric`` read by
    :func:`planner.io.limits.metric_unit` (``ms``, ``s``, ``bytes``; ``TPS`` for a rate); ''
    for a lower-is-better metric of no known unit (plain numbers), which is printed bare."""
    from planner.io.limits import metric_unit

    u = metric_unit(r.get("metric"), r.get("direction") == "lower_is_better")
    return "" if u == "units" else u


def _with_unit(x: float, u: str) -> str:
    """``x`` by :func:`_num`, then its unit when known."""
    return f"{_num(x, u)} {u}" if u else _num(x)


def _direction_row(r: dict) -> tuple[str, str]:
    d = r.get("direction", "higher_is_better")
    src = {"given": "given", "metric": "from the metric name",
           "assumed": "assumed: plain numbers"}.get(r.get("direction_source", ""), "")
    text = "lower is better (B faster / B slower)" if d == "lower_is_better" else \
        "higher is better (B better / A better)"
    return ("direction", text + (f" — {src}" if src else ""))


def _cold_row(r: dict) -> tuple[str, str] | None:
    cold = r.get("cold_runs") or []
    if not cold:
        return None
    by: dict[str, dict] = {}
    for c in cold:
        reps = by.setdefault(c["config"], {})
        rep = "?" if c.get("rep") is None else str(c["rep"])
        reps[rep] = reps.get(rep, 0) + 1
    return ("cold first runs", "; ".join(
        f"{k} rep " + ", ".join(rep if n == 1 else f"{rep} (x{n}, one per instance)"
                                for rep, n in v.items()) for k, v in by.items()))


def _rows(r: dict) -> list[tuple[str, str]]:
    """The table's rows (terminal, Markdown, HTML); the noise scales and the engine's
    diagnostics are one line after it (:func:`diagnostics_line`)."""
    hp = int(round(100 * r["hdi_prob"]))
    cl = r["classical"]
    u = _unit(r)
    lower = r.get("direction") == "lower_is_better"
    rows = [
        ("A", f"{r['a']}  (n={r['n_a']:,}, mean {_with_unit(r['mean_tps_a'], u)})"),
        ("B", f"{r['b']}  (n={r['n_b']:,}, mean {_with_unit(r['mean_tps_b'], u)})"),
        _direction_row(r),
        (f"Δ = B − A, {u or 'value'} (mean, {hp}% HDI)",
         _fmt_iv(r["delta_tps"], "", 3 if u == "s" else 2)),
        (f"Δ = B − A, % (mean, {hp}% HDI)", _fmt_iv(r["delta_pct"], "%")),
        ("ROPE", f"±{_rope_pct(r['rope']['pct'])}% = ±{_with_unit(r['rope']['tps'], u)}"),
        ("P(B > A)" + (" (B slower)" if lower else ""), f"{r['p_b_gt_a']:.3f}"),
        ("P(Δ > +ROPE) / P(Δ < −ROPE)",
         f"{r['p_b_gt_a_beyond_rope']:.3f} / {r['p_a_gt_b_beyond_rope']:.3f}"),
        ("P(|Δ| < ROPE) (equivalent)", f"{r['p_equivalent']:.3f}"),
        ("engine / prior", f"{r['engine']} ({r['likelihood']}) / {r['prior']['label']}"),
        (_ztest_name(cl["z_test"]), "n/a (" + cl["z_test"].get("note", "") + ")"
         if cl["z_test"]["z"] is None else f"z={cl['z_test']['z']:+.2f}, p={cl['z_test']['p']:.3g} → "
                                f"{'significant' if cl['z_test']['significant'] else 'not significant'}"),
        ("Welch t", "n/a (" + cl["welch"].get("note", "") + ")" if cl["welch"]["p"] is None else
         f"t={cl['welch']['t']:+.2f}, df={cl['welch']['df']:.1f}, p={cl['welch']['p']:.3g} → "
         f"{'significant' if cl['welch']['significant'] else 'not significant'}"),
    ]
    pt = cl.get("paired_t")
    if pt:
        rows.append((f"paired t ({pt['n_pairs']} pairs)", "n/a (" + pt.get("note", "") + ")"
                     if pt["p"] is None else
                     f"t={pt['t']:+.2f}, df={pt['df']:.0f}, p={pt['p']:.3g} → "
                     f"{'significant' if pt['significant'] else 'not significant'}"))
    cold = _cold_row(r)
    if cold:
        rows.insert(3, cold)
    if r.get("more_runs_note"):
        rows.append(("to settle", tidy(r["more_runs_note"])))
    return rows


def _scale(name: str, s: dict, u: str, meaning: str) -> str:
    """``σ_run 0.0935 % ≈ 0.4244 TPS (run-to-run spread on one machine)``: a noise scale's
    posterior median, relative (3 significant digits) and in the metric's unit (as the
    means: :func:`_num`)."""
    return (f"{name} {s['pct']['median']:.3g} % ≈ {_with_unit(s['tps']['median'], u)} "
            f"({meaning})")


def diagnostics_line(r: dict) -> str:
    """The noise scales and the engine's diagnostics in one line, a word on what each means.

    ``diagnostics: σ_instance 0.325 % ≈ 1.48 TPS (machine-to-machine spread), σ_run 0.0935 %
    ≈ 0.4244 TPS (run-to-run spread on one machine); exact grid of 11016 points (no sampling
    error); edge mass 0.0 (no posterior mass at the grid's end: the grid is wide enough)``.
    The σ are posterior medians (their HDIs are in the JSON: ``sigma_instance``,
    ``sigma_run``).
    """
    u = _unit(r)
    scales = ", ".join([
        _scale("σ_instance", r["sigma_instance"], u, "machine-to-machine spread"),
        _scale("σ_run", r["sigma_run"], u, "run-to-run spread on one machine")])
    return f"diagnostics: {scales}; {_diag(r['diagnostics'])}"


def _ztest_name(z: dict) -> str:
    """Row name of the z-test, with the σ it assumed (``z_test.sigma_tps`` of the result)."""
    sd = z.get("sigma_tps")
    return "z-test" if sd is None else f"z-test (σ={sd:.2f} TPS)"


def _diag(d: dict) -> str:
    """The engine's diagnostics in words (exact grid: points and edge mass; MCMC: R-hat, ESS,
    divergences)."""
    ok = d.get("ok", True)
    if d.get("engine") == "exact":
        m = d["grid_edge_mass"]
        edge = ("no posterior mass at the grid's end: the grid is wide enough" if ok else
                "posterior mass at the grid's end: the grid is too narrow")
        return (f"exact grid of {d['grid_points']} points (no sampling error); edge mass "
                f"{'0.0' if m == 0 else f'{m:.2g}'} ({edge})" + ("" if ok else " — FAILED"))
    parts = [f"r_hat max {d.get('r_hat_max', float('nan')):.3f} (chains agree at ≤ 1.01)",
             f"ESS bulk min {d.get('ess_bulk_min', float('nan')):.0f}, tail min "
             f"{d.get('ess_tail_min', float('nan')):.0f} (effective independent draws)",
             f"divergences {d.get('divergences', '?')} (0: the sampler explored the whole "
             "posterior)"]
    return "MCMC " + ", ".join(parts) + ("" if ok else " — FAILED: not decisive")


_DECISIVE = ("B better", "A better", "B faster", "B slower")


def _names(xs: list[str]) -> str:
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def _say(xs: list[str]) -> str:
    return "says" if len(xs) == 1 else "say"


def classical_note(r: dict) -> str | None:
    """Why the classical tests and the verdict differ, when they do (None when they agree,
    or the fit failed): a test calls "significant" at two-sided p < 0.05 whether the means
    differ at all, from these runs' spread (Welch, paired t) or a fixed σ (z-test); the
    verdict asks whether Δ clears the practical margin (the ROPE) with the noise between
    instances and sessions counted, and the prior's noise scales pooled with the runs."""
    if not r.get("diagnostics", {}).get("ok", True):
        return None
    cl = r.get("classical") or {}
    tests = [("the z-test", cl.get("z_test")), ("Welch's t", cl.get("welch")),
             ("the paired t", cl.get("paired_t"))]
    sig = [n for n, t in tests if t and t.get("p") is not None and t.get("significant")]
    non = [n for n, t in tests if t and t.get("p") is not None and not t.get("significant")]
    label, rope = r["label"], _rope_pct(r["rope"]["pct"])
    si = r["sigma_instance"]["pct"]["median"]
    if sig and label == "equivalent":
        return (f"Why {_names(sig)} {_say(sig)} significant and the verdict equivalent: a test asks "
                f"whether the means differ at all (p < 0.05); the verdict finds the whole "
                f"interval of Δ inside your ±{rope} % practical margin, a difference too "
                f"small to matter.")
    dp = r.get("delta_pct") or {}
    lo, hi = dp.get("hdi_low"), dp.get("hdi_high")
    if sig and label not in _DECISIVE and lo is not None and (lo > 0 or hi < 0):
        # the verdict's own interval excludes 0 too: the only difference is the margin
        return (f"Why {_names(sig)} {_say(sig)} significant and the verdict undecided: they "
                f"agree that the means likely differ (the verdict's interval of Δ, "
                f"{lo:+.2f} .. {hi:+.2f} %, excludes 0 as well); a test asks only whether "
                f"they differ at all (p < 0.05), the verdict also whether Δ is beyond your "
                f"±{rope} % practical margin, and part of its interval lies inside it: the "
                f"difference may be too small to matter.")
    if sig and label not in _DECISIVE:
        return (f"Why {_names(sig)} {_say(sig)} significant and the verdict undecided: a test asks "
                f"whether the means differ at all (p < 0.05), from these runs' own spread "
                f"(the z-test from a fixed σ); the verdict asks whether Δ is beyond your "
                f"±{rope} % practical margin and counts the machine-to-machine noise "
                f"(σ_instance ≈ {si:.3g} %) that runs on few instances cannot average out, "
                f"so its interval is wider.")
    if non and not sig and label in _DECISIVE:
        return (f"Why {_names(non)} {_say(non)} not significant and the verdict {label}: the "
                f"verdict pools these runs with the noise prior ({r['prior']['label']}) and "
                f"the model's instance and session structure (runs of A and B on a shared "
                f"instance cancel its machine effect), while a test estimates the noise from "
                f"these few runs alone.")
    return None


_STYLE = {"B better": "bold green", "A better": "bold red", "equivalent": "bold cyan",
          "undecided": "bold yellow", "B faster": "bold green", "B slower": "bold red"}


def render_terminal(r: dict) -> None:
    """Print a verdict result (schema ``spec-planner/verdict/1``) as a rich table; every
    value is printed as text (:func:`planner.report.escape.term`), never read as markup."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    con = Console()
    title = Text.assemble("verdict: ", term(r["label"], _STYLE.get(r["label"])))
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    for k, v in _rows(r):
        t.add_row(term(k), term(v))
    for line in headline(r):
        con.print(term(line))
    con.print(t)
    why = classical_note(r)
    if why:
        con.print(term(why))
    con.print(term(diagnostics_line(r)))
    for n in r.get("notes") or []:
        con.print(term(f"note: {tidy(n)}", "dim"))
    _runs.print_strips(con, r, _unit(r))


def render_markdown(r: dict) -> str:
    """A verdict result as a Markdown report (headline, table of quantities, notes, runs);
    every value escaped (:func:`planner.report.escape.md`)."""
    lines = [f"# Verdict: **{md(r['label'])}**", ""] + [md(x) for x in headline(r)]
    lines += ["", "| quantity | value |", "|---|---|"]
    lines += [f"| {md(k)} | {md(v)} |" for k, v in _rows(r)]
    why = classical_note(r)
    lines += ["", md(why)] if why else []
    lines += ["", md(diagnostics_line(r))]
    if r.get("notes"):
        lines += [""] + [f"- {md(tidy(n))}" for n in r["notes"]]
    lines += _runs.markdown_table(r)
    return "\n".join(lines) + "\n"


def delta_png(r: dict) -> bytes:
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


def render_html(r: dict) -> str:
    """HTML page of a verdict result: headline, the Δ posterior, the quantities, the runs."""
    from planner.report import html as h

    lab = r["label"]
    body = [f"<h1>Verdict: {h.tag(lab, lab.replace(' ', ''))}</h1>", h.lead(headline(r)),
            f"<p class=\"sub\">B = <code>{h.e(r['b'])}</code> vs A = <code>{h.e(r['a'])}</code>"
            "</p>",
            f"<div class=\"plots\">{h.img(delta_png(r), 'posterior of delta')}</div>",
            h.table(["quantity", "value"], [[f"<span class=\"nw\">{h.e(k)}</span>", h.e(v)]
                                            for k, v in _rows(r)]),
            *([f"<p class=\"why\">{h.e(classical_note(r))}</p>"] if classical_note(r) else []),
            f"<p class=\"sub\">{h.e(diagnostics_line(r))}</p>"]
    if r.get("notes"):
        body.append("<ul>" + "".join(f"<li>{h.e(tidy(n))}</li>" for n in r["notes"]) + "</ul>")
    body.append(_runs.html_section(r, _unit(r)))
    return h.page(f"verdict: {lab}", "\n".join(body))
