"""The calibrate report kind (``planner calibrate``, schema ``spec-planner/noise-prior/1``):
terminal, Markdown and HTML views and the saved-JSON schema, from the JSON object alone;
every view opens with :func:`headline` (the fitted noise scales)."""

from __future__ import annotations

from typing import Annotated, NotRequired, TypedDict

from msgspec import Meta

from planner.report.escape import md, term

__all__ = ["SCHEMA", "headline", "rows", "render_terminal", "render_markdown", "render_html"]


class _Range(TypedDict):
    median: float
    low: float
    high: float


class _Uncapped(TypedDict):
    tau: NotRequired[float | None]
    sigma: NotRequired[float | None]


class _Population(TypedDict):
    cells: NotRequired[int]
    df_total: NotRequired[float]
    neg_loglik: NotRequired[float]


class _Posterior(TypedDict):
    tau_pct: _Range
    sigma_pct: _Range
    uncapped_df: NotRequired[_Uncapped | None]


class _Law(TypedDict):
    df: Annotated[float, Meta(gt=0)]
    scale: float


class _Prior(TypedDict):
    tau: _Law
    sigma: _Law


class SCHEMA(TypedDict):
    """The fields of a saved calibrate result the views read, with their types."""
    runs_used: int
    groups: int
    cold_dropped: int
    runs_left_out: NotRequired[int]
    posterior: _Posterior
    prior: _Prior
    prior_pct: NotRequired[dict[str, _Range] | None]
    grid_edge_mass: float
    ok: NotRequired[bool]
    platform: NotRequired[str | None]
    metric: NotRequired[str | None]
    workload: NotRequired[str | None]
    sigma_method: NotRequired[str | None]
    sigma_note: NotRequired[str | None]
    split_note: NotRequired[str | None]
    tau_note: NotRequired[str | None]
    conflict_note: NotRequired[str | None]
    sigma_population: NotRequired[_Population | None]


def _iv(d: dict) -> str:
    return f"median {d['median']:.3f}%  95% [{d['low']:.3f}, {d['high']:.3f}]"


def _left(r: dict) -> str:
    from planner.results.counts import count

    n = r.get("runs_left_out") or 0
    return (f", {count(n, 'run')} left out: one run of its config in its group (instances "
            "linked by shared configs), no spread to learn from" if n else "")


def headline(r: dict) -> list[str]:
    """The sentence every view opens with: how many runs, and the two fitted scales."""
    p = r["posterior"]
    from planner.results.counts import count

    return [f"noise from {count(r['runs_used'], 'run')} in {count(r['groups'], 'group')} "
            f"({r['cold_dropped']} cold first runs dropped{_left(r)}): sigma_instance "
            f"{_iv(p['tau_pct'])}, sigma_run {_iv(p['sigma_pct'])}"]


def _prior_cell(r: dict, name: str) -> str:
    """A written prior scale as median and 95 % range (%), then its Scaled-Inv-chi2."""
    pr = r["prior"][name]
    law = f"Scaled-Inv-chi2(df={pr['df']:.3g}, scale {100 * pr['scale']:.3f}%)"
    q = (r.get("prior_pct") or {}).get(f"{name}_pct")
    if not q:
        return law
    return f"{_iv(q)}  = {law}"


def rows(r: dict) -> list[list[str]]:
    """Quantity / value rows (Markdown and HTML)."""
    p = r["posterior"]
    out = [["runs used", f"{r['runs_used']} in {r['groups']} groups "
                          f"({r['cold_dropped']} cold first runs dropped{_left(r)})"],
           ["platform / metric / workload", f"{r.get('platform') or '?'} / "
                                            f"{r.get('metric') or '?'} / "
                                            f"{r.get('workload') or '?'}"],
           ["sigma_instance", _iv(p["tau_pct"])],
           ["sigma_run", _iv(p["sigma_pct"])],
           ["prior sigma_instance (written)", _prior_cell(r, "tau")],
           ["prior sigma_run (written)", _prior_cell(r, "sigma")],
           ["sigma method", str(r.get("sigma_method") or "")]]
    if r.get("sigma_note"):
        out.append(["why the prior differs", r["sigma_note"]])
    if r.get("split_note"):
        out.append(["instance vs run noise", r["split_note"]])
    if r.get("tau_note"):
        out.append(["sigma_instance not learned", r["tau_note"]])
    if r.get("conflict_note"):
        out.append(["runs vs fit", r["conflict_note"]])
    return out + [["grid edge mass", f"{r['grid_edge_mass']:.1e}"
                   + ("" if r.get("ok", True) else " (not ok)")]]


def render_terminal(r: dict) -> None:
    """Print the fitted noise and the prior written for a new experiment."""
    from rich.console import Console

    # lines as they are (no wrapping at the console width: a note is read, or grepped, whole)
    con = Console(soft_wrap=True)
    for line in headline(r):
        con.print(term(line, "bold"))
    for line in ["prior written for a new experiment (same terms):",
                 f"  sigma_instance: {_prior_cell(r, 'tau')}",
                 f"  sigma_run:      {_prior_cell(r, 'sigma')}"]:
        con.print(term(line))
    if r.get("sigma_note"):
        con.print(term(f"  {r['sigma_note']}"))
    for key in ("conflict_note", "split_note", "tau_note"):
        if r.get(key):
            con.print(term(f"note: {r[key]}"))


def render_markdown(r: dict) -> str:
    """The calibration as Markdown: headline and a table."""
    lines = ["# Noise calibration: `planner calibrate`", ""] + [f"**{md(x)}**" for x in
                                                               headline(r)]
    lines += ["", "| quantity | value |", "|---|---|"]
    lines += [f"| {md(k)} | {md(v)} |" for k, v in rows(r)]
    return "\n".join(lines) + "\n"


def render_html(r: dict) -> str:
    """HTML page of a calibrate result (no plot)."""
    from planner.report import html as h

    body = ["<h1>Noise calibration</h1>", h.lead(headline(r)),
            h.table(["quantity", "value"], [[h.e(k), h.e(v)] for k, v in rows(r)])]
    return h.page("noise calibration", "\n".join(body))
