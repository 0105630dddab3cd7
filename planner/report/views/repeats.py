"""The repeats report kind (``planner repeats``): terminal, Markdown and HTML views and the
saved-JSON schema.

Every view reads only the dict of the JSON result (``RepeatPlan.to_dict()`` or a saved
``planner repeats --json``) and opens with :func:`headline`: the recommendation and, when
no design within the cap reaches the target, the beyond-cap answer. A ``repeats --runs``
result with ``runs`` also shows them (:mod:`planner.report.runs`).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from planner.report import runs as _runs
from planner.report.escape import md, term
from planner.report.wording import count, tidy

__all__ = ["SCHEMA", "owned", "rows", "footnotes", "headline", "question_lines",
           "recommendation", "render_terminal", "render_markdown", "render_html",
           "simulation_text"]


#: A design's simulated share of each label (a TypedDict, so an edited one is named by key).
_Labels = TypedDict("_Labels", {k: NotRequired[float] for k in (
    "undecided", "B better", "A better", "equivalent", "B faster", "B slower")})


class _Design(TypedDict):
    design: str
    runs_per_arm: float
    instances: float
    assurance: float | None
    false_claim_rate: float | None
    wrong_sign_rate: float | None
    gpu_hours: float
    cost_usd: float | None
    meets_target: bool
    false_claim_ok: bool
    within_budget: bool
    assurance_se: NotRequired[float | None]
    runs_per_instance: NotRequired[int | None]
    pairs_per_instance: NotRequired[int | None]
    layout: NotRequired[str]
    batch: NotRequired[int]
    per_look_hdi_prob: NotRequired[float]
    max_runs_per_arm: NotRequired[int]
    false_claim_rate_se: NotRequired[float | None]
    labels: NotRequired[_Labels]
    allocations: NotRequired[int | float | None]
    runs_total: NotRequired[int | float | None]
    expected_runs_per_arm: NotRequired[float]
    looks: NotRequired[int]
    p_stop_early: NotRequired[float]
    max_cost_usd: NotRequired[float | None]
    max_gpu_hours: NotRequired[float | None]


class _CostModel(TypedDict):
    price_per_hour: float | None
    minutes_per_run: float
    startup_minutes: float
    billed_per_minute: NotRequired[bool]


class _Rope(TypedDict):
    pct: float
    tps: float


class _Inputs(TypedDict):
    sims: int
    rule: str
    level: NotRequired[float | None]
    rope: _Rope
    target: float
    prior: dict[str, object]
    seed: int
    baseline_tps: float
    cost_model: _CostModel


class _Effect(TypedDict):
    kind: str
    mean_tps: float
    mean_pct: float
    sd_pct: NotRequired[float | None]
    p_positive: NotRequired[float | None]
    delta_log: NotRequired[float | None]


class _Interval(TypedDict):
    mean: float
    hdi_low: float
    hdi_high: float


class _Existing(TypedDict):
    a: NotRequired[str]
    b: NotRequired[str]
    n_a: int
    n_b: int
    level_tps_a: float
    label: str
    direction: NotRequired[str | None]
    metric: NotRequired[str | None]
    delta_pct: _Interval
    p_b_gt_a: NotRequired[float]


class _Candidate(TypedDict):
    runs_per_instance: NotRequired[int]
    runs_per_arm: NotRequired[int | float | None]
    cost_usd: NotRequired[float | None]
    assurance: NotRequired[float | None]


class _Allocation(TypedDict):
    mode: NotRequired[str]
    tau: NotRequired[float | None]
    sigma: NotRequired[float | None]
    startup_minutes: NotRequired[float]
    minutes_per_run: NotRequired[float]
    r_star: NotRequired[float | None]
    candidates: NotRequired[list[_Candidate]]
    runs_per_instance: NotRequired[int | None]
    reason: NotRequired[str]


class _BeyondCap(TypedDict):
    design: NotRequired[str]
    runs_per_arm: NotRequired[float | None]
    gpu_hours: NotRequired[float | None]
    cost_usd: NotRequired[float | None]
    assurance: NotRequired[float | None]
    assurance_se: NotRequired[float | None]
    note: NotRequired[str]


class SCHEMA(TypedDict):
    """The fields of a saved repeats result the views read, with their types."""
    inputs: _Inputs
    effect: _Effect
    designs: list[_Design]
    recommended: _Design | None
    reason: str
    beyond_cap: NotRequired[_BeyondCap | None]
    existing: NotRequired[_Existing | None]
    allocation: NotRequired[_Allocation | None]
    simulated_experiments: NotRequired[int]
    more_runs_per_arm: NotRequired[float | None]  # expected runs of a sequential design
    notes: NotRequired[list[str]]
    runs: NotRequired[list[_runs.Run] | None]
    runs_truncated: NotRequired[_runs.Truncated | None]

#: First prefix of an adaptive Monte-Carlo size (:attr:`models.stats.assurance.Adaptive.first`);
#: the prefixes double from it (250, 500, 1,000, ... below the full size).
_ADAPTIVE_FIRST = 250

_HEAD = ("design", "runs/arm", "alloc.", "runs/alloc.", "assurance ±SE", "false claim",
         "wrong sign", "GPU-h", "$", "flags")


def owned(res: dict) -> bool:
    """The runs cost no money (a price of $0/h: owned hardware): GPU-hours are the cost, and
    no dollar figure is shown."""
    cm = (res.get("inputs") or {}).get("cost_model") or {}
    return not cm.get("price_per_hour")


def _usd(res: dict, x, fmt: str = ".2f") -> str:
    """``$x``, or ``owned`` when the runs cost no money."""
    if owned(res):
        return "owned"
    if x is None:
        return "—"
    return "$" + (format(x, fmt) if x < 1000 else format(x, ".0f"))


def _design_name(r: dict) -> str:
    if r["design"] == "sequential":
        base = "sep" if r["layout"] == "separate" else "pair"
        strict = "" if r["per_look_hdi_prob"] == 0.95 else \
            f" {100 * r['per_look_hdi_prob']:g}%"
        return f"seq-{base} b{r['batch']}{strict}"
    if r["design"] == "separate":
        rpi = r.get("runs_per_instance") or 1
        return "separate" + ("" if rpi == 1 else f" ×{rpi}")
    return f"paired ×{r['pairs_per_instance']}"


def _fmt_p(p, se=None) -> str:
    if p is None:
        return "–"
    return f"{p:.3f}" + (f"±{se:.3f}" if se is not None else "")


def simulation_text(res: dict) -> str:
    """How many simulated experiments the rates of a repeats result rest on.

    ``planner repeats`` without runs sizes its Monte-Carlo adaptively
    (:class:`models.stats.assurance.Adaptive`, docs/planning.md "Adaptive Monte-Carlo sizes"): a
    rate far from its threshold stops at a prefix of 250, 500, 1,000, ... experiments below
    ``inputs.sims`` and the recommended design is simulated again in full. With runs already
    bought (``existing``) every design is simulated in full; with known noise (the note
    ``noise known``) fixed designs get exact rates. Read from the saved dict alone.
    """
    n = int(res["inputs"]["sims"])
    exact = any(str(x).startswith("noise known") for x in res.get("notes") or [])
    if exact:
        return (f"fixed designs: exact rates (noise known, no simulation); sequential designs: "
                f"{n:,} simulated experiments each")
    ends, k = [], _ADAPTIVE_FIRST
    while k < n:
        ends.append(k)
        k *= 2
    if res.get("existing") or not ends:
        return f"{n:,} simulated experiments per design (every design in full)"
    stop = f"{ends[0]:,}" if len(ends) == 1 else f"{ends[0]:,}–{ends[-1]:,}"
    return (f"up to {n:,} simulated experiments per design; rates far from their threshold "
            f"stop at {stop} (adaptive), the recommended design is simulated in full "
            "(± = Monte-Carlo SE)")


def rows(res: dict, se: bool = False) -> list[tuple[str, ...]]:
    """Table rows (strings) in display order (``se``: append Monte-Carlo SEs to the
    false-claim rate too; the assurance always shows its SE)."""
    out = []
    rec = res.get("recommended")
    for r in res["designs"]:
        seq = r["design"] == "sequential"
        runs = f"{r['runs_per_arm']:.1f}≤{r['max_runs_per_arm']}" if seq else \
            f"{r['runs_per_arm']}"
        alloc = f"{r['instances']:.1f}" if seq else f"{r.get('allocations', r['instances'])}"
        cost = _usd(res, r["cost_usd"])
        hours = f"{r['gpu_hours']:.2f}"
        flags = []
        if rec is not None and r == rec:
            flags.append("◀ REC")
        elif r.get("minimal"):
            flags.append("min")
        if r["meets_target"]:
            flags.append("✓")
        if not r["false_claim_ok"]:
            flags.append("FC>5%")
        if not r["within_budget"]:
            flags.append("$>cap")
        per = (f"{r['runs_per_instance']}" if r.get("runs_per_instance") else
               count(r["pairs_per_instance"], "pair") if r.get("pairs_per_instance") else "–")
        out.append((_design_name(r), runs, alloc, per,
                    _fmt_p(r["assurance"], r.get("assurance_se")),
                    _fmt_p(r["false_claim_rate"],
                           r.get("false_claim_rate_se", r.get("false_claim_se")) if se else None),
                    _fmt_p(r["wrong_sign_rate"]), hours, cost, " ".join(flags)))
    return out


def footnotes(res: dict) -> list[str]:
    """Explanations of the sequential rows and the abbreviations."""
    out = []
    for r in res["designs"]:
        if r["design"] != "sequential":
            continue
        fe = r.get("fixed_equivalent")
        same = (f"the fixed {fe['design']} plan of the same assurance needs "
                f"{count(fe['runs_per_arm'], 'run')}/arm" + ("" if owned(res) else f" (${fe['cost_usd']:.2f})")) if fe else \
            "no fixed plan within the cap reaches its assurance"
        cap = (f"{r['max_gpu_hours']:.2f} GPU-h" if owned(res) and r.get("max_gpu_hours")
               is not None else f"${r['max_cost_usd']:.2f}")
        exp = (f"{r['gpu_hours']:.2f} GPU-h" if owned(res) else f"${r['cost_usd']:.2f}")
        out.append(f"{_design_name(r)}: batches of {r['batch']} runs/arm, {r['looks']} looks, cap "
                   f"{r['max_runs_per_arm']}/arm ({cap} at the cap); expected "
                   f"{r['expected_runs_per_arm']:.1f} runs/arm, {exp}; stops early "
                   f"in {100 * r['p_stop_early']:.0f}%; false-claim rate under optional stopping "
                   f"{r['false_claim_rate']:.3f} at a {100 * r['per_look_hdi_prob']:g}% HDI per "
                   f"look" + (" (> 5%: use a stricter per-look HDI)" if not r["false_claim_ok"]
                              else "") + f"; {same}")
    out.append("separate ×k: k runs of one config per allocation; paired ×k: k A/B pairs per "
               "allocation; seq: sequential (runs/arm, alloc., GPU-h and $ are expectations, "
               "'≤' the cap); ✓ meets the target; FC: false claim; min: smallest fixed design "
               "meeting the target" + ("; $ 'owned': owned hardware at $0/h, its cost is the "
                                       "GPU-hours" if owned(res) else ""))
    return [tidy(x) for x in out]


def _unit(res: dict) -> str:
    """The unit of the compared values: ``TPS``, or for runs already bought of a latency or
    duration its metric's unit (:func:`planner.io.limits.metric_unit`)."""
    from planner.io.limits import metric_unit

    ex = res.get("existing") or {}
    return metric_unit(ex.get("metric"), ex.get("direction") == "lower_is_better")


def _small(x: float, unit: str) -> str:
    """A ROPE half-width in the values' unit: two decimals in TPS, three significant figures
    in another unit (a 0.1 % ROPE of a 1.7 s duration is 0.0017 s, not 0.00 s)."""
    return f"{x:.2f}" if unit == "TPS" or abs(x) >= 1 else f"{x:.3g}"


def headline(res: dict) -> list[str]:
    """The sentences every view of a repeats result opens with: the recommendation (or why
    there is none) and the beyond-cap answer (:func:`recommendation`)."""
    return recommendation(res)


def question_lines(res: dict) -> list[str]:
    """Lines describing the question of a repeats result (claim, noise prior, rule, ROPE)."""
    inp, eff = res["inputs"], res["effect"]
    u = _unit(res)
    rule = inp["rule"] + (f":{inp['level']:g}" if inp.get("level") else "")
    lines = []
    if eff["kind"] == "fixed":
        lines.append(f"Δ = {eff['mean_tps']:+.2f} {u} ({_pct(eff['mean_pct'])}%) at "
                     f"{inp['baseline_tps']:.2f} {u}"
                     + (" (given by --delta, not the posterior of the runs)"
                        if eff.get("source") in ("delta", "--delta") else ""))
    else:
        # with runs bought, the effect is the simulations' draws of the posterior: their
        # mean and sd are a sample's, of a heavy-tailed posterior, not the verdict's
        # centre and HDI (shown on the 'already bought' line), which is said
        drawn = bool(res.get("existing"))
        lines.append(("Δ drawn per simulation from the runs' posterior: mean" if drawn else
                      "Δ ~ distribution: mean")
                     + f" {eff['mean_tps']:+.2f} {u} ({_pct(eff['mean_pct'])}%)"
                     f" at {inp['baseline_tps']:.2f} {u}, sd {_pct(eff['sd_pct'], '')}%, "
                     f"P(Δ>0) {eff['p_positive']:.2f}"
                     + (" (a sample of a heavy-tailed posterior: the verdict's centre and "
                        "HDI are on the 'already bought' line)" if drawn else ""))
    lines.append(f"rule {rule}, ROPE ±{_pct(inp['rope']['pct'], '')}% "
                 f"(±{_small(inp['rope']['tps'], u)} {u}), "
                 f"target assurance {inp['target']:g}, prior {inp['prior']['label']}, "
                 f"{simulation_text(res)}, seed {inp['seed']}")
    cm = inp["cost_model"]
    if owned(res):
        lines.append(f"cost: owned hardware: $0/h, so the cost is GPU time: "
                     f"{cm['startup_minutes']:g} min start-up per allocation + "
                     f"{cm['minutes_per_run']:g} min per run (GPU-h below; no $)")
    else:
        lines.append(f"cost: {cm['startup_minutes']:g} min start-up per allocation + "
                     f"{cm['minutes_per_run']:g} min per run at ${cm['price_per_hour']:g}/h"
                     + (" (billed per minute)" if cm["billed_per_minute"] else ""))
    if res.get("existing"):
        ex = res["existing"]
        lines.append(f"already bought: {ex['n_a']} runs of A (level {ex['level_tps_a']:.2f} "
                     f"{_unit(res)}, "
                     f"the baseline above), {ex['n_b']} of B → current verdict "
                     f"'{ex['label']}', Δ {_pct(ex['delta_pct']['mean'])}% "
                     f"[{_pct(ex['delta_pct']['hdi_low'])}, {_pct(ex['delta_pct']['hdi_high'])}]; "
                     "runs below are runs to ADD")
    return [tidy(x) for x in lines]


def _pct(x: float, sign: str = "+") -> str:
    """A percentage as the verdict prints it: two decimals, three below 0.05 % (a Δ of
    0.014 % is not "+0.01"); ``sign`` "" for a scale or a margin."""
    return f"{x:{sign}.{2 if abs(x) >= 0.05 or x == 0 else 3}f}"


def recommendation(res: dict) -> list[str]:
    """Lines stating the recommended design (or why there is none) and the beyond-cap search."""
    rec = res.get("recommended")
    out = []
    if rec is not None:
        what = _design_name(rec)
        n = rec["runs_per_arm"]
        nn = f"{n:.1f} expected" if rec["design"] == "sequential" else f"{n}"
        ex = res.get("existing") or {}
        lead = "Recommended" if ex.get("label", "undecided") == "undecided" else (
            f"No more runs needed: the runs bought already give '{ex['label']}'. To check that "
            f"it holds, the cheapest addition is")
        out.append(f"{lead}: {what}, {nn} {'run' if nn == '1' else 'runs'} per arm — "
                   f"assurance {rec['assurance']:.3f}, "
                   f"false-claim {rec['false_claim_rate']:.3f}, {rec['gpu_hours']:.2f} GPU-h"
                   + ("" if owned(res) else f", ${rec['cost_usd']:.2f}")
                   + f" ({res['reason']})")
    else:
        out.append(f"No recommendation: {res['reason']}")
    b = res.get("beyond_cap")
    if b:
        if b.get("runs_per_arm"):
            # a Normal approximation with the noise taken as known (optimistic): two
            # significant figures, no Monte Carlo SE (the approximation's error is larger)
            out.append(f"Beyond the cap, by a Normal approximation (noise taken as known, so "
                       f"optimistic): {b['design']} needs roughly {_sig2(b['runs_per_arm'])} "
                       f"runs per arm (about {_sig2(b['gpu_hours'])} GPU-h"
                       + ("" if owned(res) else f", ${_sig2(b['cost_usd'])}") + ")")
        else:
            # the search covers one layout only: say which, so a paired design the table can
            # still reach with a higher --max-runs is not read as ruled out too
            out.append(f"Beyond the cap, {b['design']} designs only (Normal approximation): "
                       f"{b['note']} (assurance {b['assurance']:.3f})")
    return [tidy(x) for x in out]


def _sig2(x: float) -> str:
    """``x`` to two significant figures with thousands separators (3961 -> '4,000')."""
    if not x:
        return "0"
    r = float(f"{float(x):.2g}")
    return f"{r:,.0f}" if abs(r) >= 10 else f"{r:g}"


def render_terminal(res: dict) -> None:
    """Print a repeats result (schema ``spec-planner/repeats/1``): headline, question, the
    designs table, footnotes, notes, runs; every value printed as text."""
    from rich.console import Console
    from rich.table import Table

    con = Console()
    if not con.is_terminal:
        con = Console(width=130)
    for line in headline(res):
        con.print(term(line, "bold"))
    for line in question_lines(res):
        con.print(term(line))
    t = Table(title="planner repeats: designs", title_justify="left")
    for h in _HEAD:
        t.add_column(h, justify="left" if h in ("design", "") else "right")
    rec = res.get("recommended")
    for r, cells in zip(res["designs"], rows(res)):
        style = "bold green" if rec is not None and r == rec else None
        t.add_row(*[term(c) for c in cells], style=style)
    con.print(t)
    for line in footnotes(res):
        con.print(term(line, "dim"))
    for n in res.get("notes") or []:
        con.print(term(f"note: {tidy(n)}", "dim"))
    _runs.print_strips(con, res, _unit(res))


#: What the table's rates mean (Markdown and HTML; the terminal's footnotes abbreviate it).
_TERMS = ("Assurance: probability over the noise prior and the effect that the experiment "
          "ends with the right call; false claim: a decisive B/A-better call when Δ = 0; "
          "wrong sign: the planned direction called when Δ has the opposite sign. "
          "± = Monte-Carlo standard error.")


def render_markdown(res: dict) -> str:
    """A repeats result as a Markdown report: headline, question, designs table, notes,
    runs; every value escaped."""
    lines = ["# How many runs: `planner repeats`", ""]
    lines += [f"**{md(x)}**  " for x in headline(res)]
    lines += [""] + [f"- {md(x)}" for x in question_lines(res)]
    lines += ["", "| " + " | ".join(md(h) for h in _HEAD) + " |",
              "|" + "---|" * len(_HEAD)]
    for cells in rows(res, se=True):
        lines.append("| " + " | ".join(md(c) for c in cells) + " |")
    lines += [""] + [f"- {md(x)}" for x in footnotes(res)]
    if res.get("notes"):
        lines += [""] + [f"- {md(tidy(n))}" for n in res["notes"]]
    lines.append("")
    lines.append(_TERMS)
    lines += _runs.markdown_table(res)
    return "\n".join(lines) + "\n"


def render_html(r: dict) -> str:
    """HTML page of a repeats result: headline, question, designs table, the assurance and
    cost curves (one entry per design from
    :meth:`planner.results.repeat_plan.RepeatPlan.design_curves`), notes, runs."""
    from planner.report import html as h
    from planner.report import plots
    from planner.results.repeat_plan import RepeatPlan

    entries, rec = RepeatPlan.from_dict(r).design_curves()
    tgt = r["inputs"]["target"]
    free = owned(r)  # owned hardware ($0/h): GPU-hours are the cost, no dollars shown

    # the same table as the terminal and Markdown views: every design, every column
    table = [[h.e(c) for c in cells] for cells in rows(r, se=True)]
    body = ["<h1>Repeats plan</h1>", h.lead(headline(r)),
            "<p class=\"sub\">" + "<br>".join(h.e(x) for x in question_lines(r)) + "</p>",
            h.table(list(_HEAD), table, set(range(1, len(_HEAD) - 1))),
            "<div class=\"plots\">"
            + h.img(plots.assurance_plot(entries, target=tgt), "assurance vs runs")
            + h.img(plots.cost_plot(entries, target=tgt, recommended=rec,
                                    value="gpu_hours" if free else "cost_usd"),
                    ("expected GPU-hours" if free else "expected cost") + " vs assurance")
            + "</div>",
            "<p class=\"note\">" + "<br>".join(h.e(x) for x in footnotes(r)) + "</p>",
            f"<p class=\"note\">{h.e(_TERMS)}</p>"]
    if r.get("notes"):
        body.append("<ul>" + "".join(f"<li>{h.e(tidy(n))}</li>" for n in r["notes"]) + "</ul>")
    body.append(_runs.html_section(r, _unit(r)))
    return h.page("repeats plan", "\n".join(body))
