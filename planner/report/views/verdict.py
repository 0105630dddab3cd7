"""Renderers of the verdict result: rich terminal table and Markdown.

Both take the JSON object of a verdict (:meth:`planner.decide.verdict.Verdict.to_dict`, or a saved
``--json`` output read back), never the live fit.
"""

from __future__ import annotations

__all__ = ["render_terminal", "render_markdown", "lead_sentence", "diagnostics_line"]


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
    eff = f"{size} ({hp} % HDI of Δ {d['hdi_low']:+.2f} .. {d['hdi_high']:+.2f} %)"
    label = r["label"]
    if not r.get("diagnostics", {}).get("ok", True):
        return (f"No verdict: the fit failed its diagnostics (see the diagnostics line), so "
                f"its estimate ({eff}) is not to be trusted; check the runs for an outlier or "
                "a wrong unit, or state your noise (--cv), before buying more runs.")
    if label == "equivalent":
        return f"{eff}; all of it inside your ±{_rope_pct(rope)} % practical margin: no real difference."
    if label == "undecided":
        more = r.get("more_runs_note")
        if d["hdi_low"] < 0 < d["hdi_high"]:
            # the sign itself is open: lead with the interval, not with a point estimate
            return (f"Not settled: B may be faster or slower than A ({hp} % HDI of Δ "
                    f"{d['hdi_low']:+.2f} .. {d['hdi_high']:+.2f} %, centre {d['mean']:+.2f} %), "
                    f"and the interval straddles your ±{_rope_pct(rope)} % practical margin"
                    + (f" ({more})." if more else "."))
        return (f"{eff}; that interval straddles your ±{_rope_pct(rope)} % practical margin: "
                "not settled" + (f" ({more})." if more else "."))
    return f"{eff}; beyond your ±{_rope_pct(rope)} % practical margin: {label}."


def _rope_pct(x: float) -> str:
    """A ROPE in % with two decimals, or two significant digits below 0.01 % (a ROPE of
    0.001 % is not '±0.00 %')."""
    return f"{x:.2f}" if x == 0 or x >= 0.01 else f"{x:.2g}"


def _num(x: float) -> str:
    """Two decimals, or four significant digits below 1 (seconds, small latencies: a TPOT
    σ of 0.0034 ms is not 0.00)."""
    return f"{x:.2f}" if abs(x) >= 1 else f"{x:.4g}"


def _fmt_iv(d: dict, unit: str, nd: int = 2) -> str:
    if unit == "" and max(abs(d["hdi_low"]), abs(d["hdi_high"])) < 0.1:
        nd = max(nd, 4)  # small-valued metrics (seconds, ms) would print as 0.00
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
    return f"{_num(x)} {u}" if u else _num(x)


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
        ("A", f"{r['a']}  (n={r['n_a']}, mean {_with_unit(r['mean_tps_a'], u)})"),
        ("B", f"{r['b']}  (n={r['n_b']}, mean {_with_unit(r['mean_tps_b'], u)})"),
        _direction_row(r),
        (f"Δ = B − A, {u or 'value'} (mean, {hp}% HDI)", _fmt_iv(r["delta_tps"], "")),
        (f"Δ = B − A, % (mean, {hp}% HDI)", _fmt_iv(r["delta_pct"], "%", 3)),
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
        rows.append(("to settle", r["more_runs_note"]))
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


_STYLE = {"B better": "bold green", "A better": "bold red", "equivalent": "bold cyan",
          "undecided": "bold yellow", "B faster": "bold green", "B slower": "bold red"}


def render_terminal(r: dict) -> None:
    """Print a verdict result (schema ``spec-planner/verdict/1``) as a rich table."""
    from rich.console import Console
    from rich.table import Table

    con = Console()
    t = Table(title=f"verdict: [{_STYLE[r['label']]}]{r['label']}[/]", show_header=False,
              title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    for k, v in _rows(r):
        t.add_row(k, v)
    con.print(lead_sentence(r))
    con.print(t)
    con.print(diagnostics_line(r), markup=False, highlight=False)
    for n in r.get("notes", []):
        con.print(f"[dim]note: {n}[/dim]")


def render_markdown(r: dict) -> str:
    """A verdict result as a Markdown report (title, table of quantities, notes)."""
    lines = [f"# Verdict: **{r['label']}**", "", lead_sentence(r), "", "| quantity | value |",
             "|---|---|"]
    esc = lambda x: x.replace("|", "\\|")  # noqa: E731  (a pipe would end the cell)
    lines += [f"| {esc(k)} | {esc(v)} |" for k, v in _rows(r)]
    lines += ["", diagnostics_line(r)]
    if r.get("notes"):
        lines += [""] + [f"- {n}" for n in r["notes"]]
    return "\n".join(lines) + "\n"
