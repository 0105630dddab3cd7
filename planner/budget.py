"""How to spend a GPU budget across several comparisons: read a plan, size each comparison,
allocate the budget.

A *plan* (TOML or CSV) lists comparisons to settle, each ``baseline`` vs ``candidate`` with an
expected Δ (``delta_tps`` / ``delta_pct``, optionally ``delta_sd`` in the same unit, or a saved
``planner draft --json`` projection + ``policy``), and a budget (``total_usd`` or ``max_runs``,
``price_per_hour``, the ``assurance`` target).

Each comparison is sized by :func:`planner.repeats.plan_repeats`: for every design (separate
allocations, paired, sequential) the assurance (probability that the planned runs end in a
*correct decisive* verdict, averaged over the expected-Δ distribution and the noise prior),
the false-claim rate, GPU-hours and dollars, and the cheapest design reaching the target.

Allocation rule
---------------
Each comparison has one *candidate purchase*: the row :func:`planner.repeats.plan_repeats`
recommends (the cheapest design and runs per arm whose assurance reaches the target with a
false-claim rate ≤ 5 %, within ``max_runs_per_arm``). A comparison without such a design is
never bought (status ``unreachable``; ``reason`` says whether the target is out of reach or
only reachable by designs that claim falsely too often). Sequential purchases are costed at
their expected stop; ``worst_case_cost_usd`` (per purchase and in ``totals``, with
``worst_case_exceeds_budget``) is the cost if every look is needed. The purchases are then
chosen by an exact 0/1 knapsack that **maximises the expected number of decisive, correct
verdicts** (the sum of the bought assurances) subject to total cost ≤ ``total_usd`` (or total
runs ≤ ``max_runs``); ties go to the cheaper set. Costs are integer cents (runs for
``max_runs``), so the knapsack is exact. The comparisons left out are *not worth buying at this
budget*; ``value_per_usd`` (assurance per dollar) shows how close each one came.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import math
import re
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from planner._parse import parse_number
from planner.errors import InputError

SCHEMA = "spec-planner/budget/1"

#: Baseline level when nothing else is known: the published N = 4 repeats on HF a10g-small.
DEFAULT_BASELINE_TPS = 307.08
DEFAULT_PLATFORM = "hf-a10g-small"
DEFAULT_PRICE_PER_HOUR = 1.0
DEFAULT_ASSURANCE = 0.8
DEFAULT_RULE = "verdict"
DEFAULT_ROPE = "0.1%"
DEFAULT_DESIGNS = ("separate", "paired", "sequential")

ALLOCATION_RULE = (
    "each comparison's candidate purchase is its cheapest design reaching the assurance "
    "target with a false-claim rate <= 5 % (the 'planner repeats' recommendation); an exact 0/1 knapsack then picks the purchases that maximise the expected number "
    "of decisive correct verdicts (sum of assurances) within the budget; ties go to the "
    "cheaper set")

_COMPARISON_FIELDS = ("name", "baseline", "candidate", "delta_tps", "delta_pct", "delta_sd",
                      "projection", "policy", "platform", "prior", "rule", "rope",
                      "baseline_tps", "designs")
_BUDGET_FIELDS = ("total_usd", "max_runs", "price_per_hour", "assurance", "minutes_per_run",
                  "startup_minutes", "max_runs_per_arm")
#: budget fields that have a command-line option of ``planner budget``
_CLI_OPTION = {"total_usd": "--total-usd", "max_runs": "--max-runs",
               "price_per_hour": "--price-per-hour", "assurance": "--assurance"}
_PLAN_FIELDS = ("title", "runs", "baseline_tps", "platform", "prior", "rule", "rope", "designs")


# --------------------------------------------------------------------------------------------
# plan reading
# --------------------------------------------------------------------------------------------

@dataclass
class Comparison:
    """One comparison of a plan (after validation)."""

    index: int
    name: str
    baseline: str
    candidate: str
    line: int | None = None
    delta_tps: float | None = None
    delta_pct: float | None = None
    delta_sd: float | None = None
    projection: str | None = None
    policy: str | None = None
    platform: str | None = None
    prior: str | None = None
    rule: str | None = None
    rope: str | None = None
    baseline_tps: float | None = None
    designs: tuple[str, ...] | None = None
    lines: dict = field(default_factory=dict)


@dataclass
class Budget:
    """The ``[budget]`` table."""

    total_usd: float | None = None
    max_runs: int | None = None
    price_per_hour: float = DEFAULT_PRICE_PER_HOUR
    assurance: float = DEFAULT_ASSURANCE
    minutes_per_run: float | None = None
    startup_minutes: float | None = None
    max_runs_per_arm: int = 40
    lines: dict = field(default_factory=dict)
    #: fields given on the command line (errors then name the option, not a plan line)
    cli: set = field(default_factory=set)
    #: the plan file and its ``[budget]`` header line (for error locations)
    path: str | None = None
    header_line: int | None = None

    def where(self, f: str) -> dict:
        """``InputError`` location of budget field ``f``: its plan line, or the command-line
        option (``--total-usd``) when the value came from there."""
        if f in self.cli:
            return {"field": _CLI_OPTION.get(f, "--" + f.replace("_", "-"))}
        return {"file": self.path, "line": self.lines.get(f, self.header_line),
                "field": f"budget.{f}"}


@dataclass
class Plan:
    """A validated plan: comparisons, budget and plan-wide defaults."""

    path: str
    comparisons: list[Comparison]
    budget: Budget
    title: str = ""
    runs: str | None = None
    baseline_tps: float | None = None
    platform: str = DEFAULT_PLATFORM
    prior: str | None = None
    rule: str = DEFAULT_RULE
    rope: str = DEFAULT_ROPE
    designs: tuple[str, ...] = DEFAULT_DESIGNS
    lines: dict = field(default_factory=dict)


def _toml_lines(text: str) -> dict:
    """Map TOML keys to 1-based line numbers (tomllib gives none).

    Returns ``{("comparison", k): header_line, ("comparison", k, key): line,
    ("budget", key): line, ("plan", key): line, ("budget",): header_line}``; ``k`` is the
    0-based index of a ``[[comparison]]`` block. Only simple ``key = value`` lines are located.
    """
    out: dict = {}
    section: tuple = ("plan",)
    counts: dict[str, int] = {}
    key_re = re.compile(r'^\s*("?)([A-Za-z0-9_\-]+)\1\s*=')
    for no, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if s.startswith("[["):
            name = s.strip("[] \t").split("#")[0].strip().strip("[]").strip()
            k = counts.get(name, 0)
            counts[name] = k + 1
            section = (name, k)
            out[section] = no
            continue
        if s.startswith("["):
            name = s.split("]")[0].strip("[ \t")
            section = (name,)
            out[section] = no
            continue
        m = key_re.match(raw)
        if m:
            out.setdefault(section + (m.group(2),), no)
    return out


def _num(v: Any, *, path: str, line: int | None, fld: str, positive: bool = False,
         integer: bool = False, allow_zero: bool = True) -> float:
    return parse_number(v, path=path, line=line, field=fld, positive=positive,
                        allow_zero=allow_zero, integer=integer)


def _designs(v: Any, *, path: str, line: int | None, fld: str) -> tuple[str, ...]:
    items = v.replace(";", ",").split(",") if isinstance(v, str) else v
    if not isinstance(items, (list, tuple)):
        raise InputError(f"expected a list of designs, got {v!r}", file=path, line=line,
                         field=fld)
    out = tuple(str(x).strip() for x in items if str(x).strip())
    bad = [d for d in out if d not in DEFAULT_DESIGNS]
    if bad or not out:
        raise InputError(f"unknown design {bad[0] if bad else '(none)'!r}; expected some of "
                         f"{', '.join(DEFAULT_DESIGNS)}", file=path, line=line, field=fld)
    return out


def _comparison(raw: dict, k: int, *, path: str, lines: dict, where: Callable) -> Comparison:
    """Validate one comparison mapping (TOML table or CSV row)."""
    name = str(raw.get("name") or "").strip()
    label = f"comparison #{k + 1}" + (f" '{name}'" if name else "")

    def err(msg: str, fld: str) -> InputError:
        return InputError(f"{label}: {msg}", file=path, line=where(k, fld), field=fld)

    unknown = [f for f in raw if f not in _COMPARISON_FIELDS and raw[f] not in (None, "")]
    if unknown:
        near = difflib.get_close_matches(unknown[0], _COMPARISON_FIELDS, n=1)
        raise err("unknown field" + (f"; did you mean '{near[0]}'?" if near else
                                     f" (known: {', '.join(_COMPARISON_FIELDS)})"), unknown[0])
    for req in ("name", "baseline", "candidate"):
        v = raw.get(req)
        if v is None or (isinstance(v, str) and not v.strip()):
            raise err("missing required field", req)
        if not isinstance(v, str):
            raise err(f"must be a string, got {v!r}", req)
    c = Comparison(index=k, name=name, baseline=raw["baseline"].strip(),
                   candidate=raw["candidate"].strip(), line=where(k, None),
                   lines={f: where(k, f) for f in raw})
    if c.baseline == c.candidate:
        raise err("baseline and candidate name the same config", "candidate")
    given = [f for f in ("delta_tps", "delta_pct", "projection") if raw.get(f) not in (None, "")]
    if not given:
        raise err("needs an expected delta: delta_tps, delta_pct or projection (+ policy)",
                  "delta_tps")
    if len(given) > 1:
        raise err(f"give only one of delta_tps, delta_pct, projection (got {', '.join(given)})",
                  given[1])
    for f in ("delta_tps", "delta_pct"):
        if raw.get(f) not in (None, ""):
            setattr(c, f, _num(raw[f], path=path, line=where(k, f), fld=f))
    if raw.get("delta_sd") not in (None, ""):
        if c.projection is not None or "projection" in given:
            raise err("delta_sd goes with delta_tps/delta_pct (a projection carries its own "
                      "uncertainty)", "delta_sd")
        c.delta_sd = _num(raw["delta_sd"], path=path, line=where(k, "delta_sd"), fld="delta_sd",
                          positive=True)
    if "projection" in given:
        c.projection = str(raw["projection"])
        if raw.get("policy") in (None, ""):
            raise err("a projection needs the policy name", "policy")
        c.policy = str(raw["policy"])
    if raw.get("baseline_tps") not in (None, ""):
        c.baseline_tps = _num(raw["baseline_tps"], path=path, line=where(k, "baseline_tps"),
                              fld="baseline_tps", positive=True, allow_zero=False)
    for f in ("platform", "prior", "rule", "rope"):
        if raw.get(f) not in (None, ""):
            setattr(c, f, str(raw[f]).strip())
    if raw.get("designs") not in (None, ""):
        c.designs = _designs(raw["designs"], path=path, line=where(k, "designs"), fld="designs")
    return c


def _budget(raw: dict, *, path: str, where: Callable, cli: set | frozenset = frozenset(),
            header_line: int | None = None) -> Budget:
    unknown = [f for f in raw if f not in _BUDGET_FIELDS]
    if unknown:
        near = difflib.get_close_matches(unknown[0], _BUDGET_FIELDS, n=1)
        raise InputError("unknown budget field" + (f"; did you mean '{near[0]}'?" if near else
                         f" (known: {', '.join(_BUDGET_FIELDS)})"), file=path,
                         line=where(unknown[0]), field=f"budget.{unknown[0]}")
    b = Budget(lines={f: where(f) for f in raw if f not in cli}, cli=set(cli), path=path,
               header_line=header_line)

    def num(f, **kw):
        loc = b.where(f)
        kw.setdefault("allow_zero", True)
        return parse_number(raw[f], path=loc.get("file"), line=loc.get("line"),
                            field=loc["field"], **kw)

    if raw.get("total_usd") is not None:
        b.total_usd = num("total_usd", positive=True, allow_zero=False)
    if raw.get("max_runs") is not None:
        b.max_runs = num("max_runs", positive=True, integer=True, allow_zero=False)
    if raw.get("price_per_hour") is not None:
        b.price_per_hour = num("price_per_hour", positive=True, allow_zero=False)
    if raw.get("assurance") is not None:
        b.assurance = num("assurance")
    if not 0.0 < b.assurance < 1.0:
        raise InputError(f"assurance target must be in (0, 1), got {raw.get('assurance')!r}",
                         **b.where("assurance"))
    for f in ("minutes_per_run", "startup_minutes"):
        if raw.get(f) is not None:
            setattr(b, f, num(f, positive=True, allow_zero=(f == "startup_minutes")))
    if raw.get("max_runs_per_arm") is not None:
        b.max_runs_per_arm = num("max_runs_per_arm", positive=True, integer=True,
                                 allow_zero=False)
    return b


def read_plan(path: str | Path, *, overrides: dict | None = None) -> Plan:
    """Read and validate a plan file (TOML, or CSV with the comparison columns).

    Parameters
    ----------
    path : str or Path
        ``.toml``: optional ``[plan]`` defaults (``title``, ``runs``, ``baseline_tps``,
        ``platform``, ``prior``, ``rule``, ``rope``, ``designs``), a ``[budget]`` table and
        ``[[comparison]]`` blocks. ``.csv``: one comparison per row with the columns
        ``name, baseline, candidate, delta_tps | delta_pct | projection (+ policy)``, optional
        ``delta_sd, platform, prior, rule, rope, baseline_tps, designs``; the budget then comes
        from ``overrides``.
    overrides : dict, optional
        Budget fields given on the command line (``total_usd``, ``max_runs``,
        ``price_per_hour``, ``assurance``, ...); they replace the file's values.

    Returns
    -------
    Plan

    Raises
    ------
    InputError
        Syntax errors, missing or unknown fields, duplicate comparison names, an assurance
        outside (0, 1), no budget, or (with ``runs``) a config absent from the runs table. The
        message names the file, the line and the field. The file is only read.
    """
    p = Path(path)
    spath = str(path)
    try:
        text = p.read_text(encoding="utf-8-sig")  # a UTF-8 BOM (Excel, Notepad) is dropped
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", file=spath) from None
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    is_csv = p.suffix.lower() == ".csv" or (p.suffix.lower() != ".toml" and
                                            text.lstrip().lower().startswith("name,"))
    if is_csv:
        plan = _read_csv_plan(text, spath, overrides)
    else:
        plan = _read_toml_plan(text, spath, overrides)
    if not plan.comparisons:
        raise InputError("the plan lists no comparisons", file=spath,
                         field="comparison" if not is_csv else "name")
    seen: dict[str, int] = {}
    for c in plan.comparisons:
        if c.name in seen:
            raise InputError(f"comparison #{c.index + 1}: duplicate name '{c.name}' (also "
                             f"comparison #{seen[c.name] + 1})", file=spath,
                             line=c.lines.get("name", c.line), field="name")
        seen[c.name] = c.index
    b = plan.budget
    if b.total_usd is None and b.max_runs is None:
        raise InputError("no budget: give total_usd or max_runs in [budget] (or --total-usd / "
                         "--max-runs)", file=spath, line=plan.lines.get(("budget",)),
                         field="budget.total_usd")
    _check_platforms_priors(plan)
    if plan.runs:
        _check_configs(plan)
    return plan


def _check_platforms_priors(plan: Plan) -> None:
    """Every ``platform`` must be a known one (it picks the noise prior: a typo must not fall
    back to a weak prior) and ``prior`` must not be ``weak`` / ``none`` (sizing needs a noise
    prior, as in ``planner repeats``)."""
    from models.noise import PLATFORM_ALIASES, known_platforms

    def check(platform, prior, label, line_platform, line_prior, fp, fr):
        if platform is not None and platform not in PLATFORM_ALIASES:
            near = difflib.get_close_matches(platform, list(PLATFORM_ALIASES), n=1)
            raise InputError(f"{label}unknown platform {platform!r} (known: "
                             f"{', '.join(known_platforms())})"
                             + (f"; did you mean '{near[0]}'?" if near else ""),
                             file=plan.path, line=line_platform, field=fp)
        if prior is not None and prior.strip().lower() in ("weak", "none"):
            raise InputError(f"{label}sizing needs a noise prior (a platform or a calibrate "
                             f"file), not {prior!r}, as in 'planner repeats'",
                             file=plan.path, line=line_prior, field=fr)

    check(plan.platform, plan.prior, "", plan.lines.get(("plan", "platform")),
          plan.lines.get(("plan", "prior")), "platform", "prior")
    for c in plan.comparisons:
        check(c.platform, c.prior, f"comparison #{c.index + 1} '{c.name}': ",
              c.lines.get("platform", c.line), c.lines.get("prior", c.line), "platform", "prior")


def _read_toml_plan(text: str, spath: str, overrides: dict) -> Plan:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise InputError(f"invalid TOML: {exc}", file=spath,
                         line=int(m.group(1)) if m else None) from None
    lines = _toml_lines(text)
    top = dict(doc.get("plan", {}))
    for k in _PLAN_FIELDS:  # plan defaults may also sit at the top level
        if k in doc and not isinstance(doc[k], (dict, list)):
            top.setdefault(k, doc[k])
            lines.setdefault(("plan", k), lines.get(("plan", k)))
    unknown_top = [k for k in doc if k not in ("plan", "budget", "comparison") + _PLAN_FIELDS]
    if unknown_top:
        raise InputError("unknown top-level key (expected [plan], [budget], [[comparison]])",
                         file=spath, line=lines.get(("plan", unknown_top[0]),
                                                    lines.get((unknown_top[0],))),
                         field=unknown_top[0])
    comps_raw = doc.get("comparison", [])
    if not isinstance(comps_raw, list):
        raise InputError("comparisons must be [[comparison]] blocks", file=spath,
                         line=lines.get(("comparison",)), field="comparison")

    def where_c(k, f):
        if f is None:
            return lines.get(("comparison", k))
        return lines.get(("comparison", k, f), lines.get(("comparison", k)))

    comps = [_comparison(dict(r), k, path=spath, lines=lines, where=where_c)
             for k, r in enumerate(comps_raw)]
    braw = doc.get("budget", {})
    if not isinstance(braw, dict):
        raise InputError("[budget] must be a table", file=spath, line=lines.get(("plan", "budget")),
                         field="budget")
    braw = dict(braw)
    braw.update(overrides)
    budget = _budget(braw, path=spath,
                     where=lambda f: lines.get(("budget", f), lines.get(("budget",))),
                     cli=set(overrides), header_line=lines.get(("budget",)))
    plan = Plan(path=spath, comparisons=comps, budget=budget, lines=lines)
    for k, v in top.items():
        line = lines.get(("plan", k))
        if k not in _PLAN_FIELDS:
            raise InputError("unknown plan field", file=spath, line=line, field=f"plan.{k}")
        if k == "baseline_tps":
            plan.baseline_tps = _num(v, path=spath, line=line, fld="plan.baseline_tps",
                                     positive=True, allow_zero=False)
        elif k == "designs":
            plan.designs = _designs(v, path=spath, line=line, fld="plan.designs")
        else:
            setattr(plan, k, str(v))
    return plan


def _read_csv_plan(text: str, spath: str, overrides: dict) -> Plan:
    rdr = csv.DictReader(io.StringIO(text))
    if not rdr.fieldnames:
        raise InputError("empty file", file=spath)
    cols = [c.strip() for c in rdr.fieldnames]
    for req in ("name", "baseline", "candidate"):
        if req not in cols:
            raise InputError("missing column", file=spath, line=1, field=req)
    comps = []
    for k, row in enumerate(rdr):
        raw = {(kk or "").strip(): (vv.strip() if isinstance(vv, str) else vv)
               for kk, vv in row.items() if kk is not None}
        if not any(raw.values()):
            continue
        line = rdr.line_num
        comps.append(_comparison(raw, len(comps), path=spath, lines={},
                                 where=lambda _k, _f, _l=line: _l))
    budget = _budget(dict(overrides), path=spath, where=lambda f: None, cli=set(overrides))
    return Plan(path=spath, comparisons=comps, budget=budget)


def _check_configs(plan: Plan) -> None:
    """With a ``runs`` table in the plan, every baseline / candidate must be one of its configs."""
    from planner.runs import read_runs

    rp = Path(plan.runs)
    if not rp.is_absolute():
        rp = Path(plan.path).parent / rp
    if not rp.exists():
        raise InputError(f"runs table not found: {plan.runs}", file=plan.path,
                         line=plan.lines.get(("plan", "runs")), field="plan.runs")
    table = read_runs(rp)
    have = set(table.configs)
    for c in plan.comparisons:
        for f in ("baseline", "candidate"):
            cfg = getattr(c, f)
            if cfg not in have:
                near = difflib.get_close_matches(cfg, list(have), n=1, cutoff=0.6)
                raise InputError(
                    f"comparison #{c.index + 1} '{c.name}': config '{cfg}' is not in the runs "
                    f"table {plan.runs} ({len(have)} configs)"
                    + (f"; did you mean '{near[0]}'?" if near else ""),
                    file=plan.path, line=c.lines.get(f, c.line), field=f)


# --------------------------------------------------------------------------------------------
# expected delta
# --------------------------------------------------------------------------------------------

def _projection_delta(c: Comparison, plan: Plan, baseline_tps: float, sims: int,
                      rng: np.random.Generator) -> tuple[np.ndarray | float, dict]:
    """Δ (TPS) from a saved ``planner draft --json`` output and a policy name."""
    pp = Path(c.projection)
    if not pp.is_absolute():
        pp = Path(plan.path).parent / pp
    line = c.lines.get("projection", c.line)
    if not pp.exists():
        raise InputError(f"comparison '{c.name}': projection file not found: {c.projection}",
                         file=plan.path, line=line, field="projection")
    try:
        doc = json.loads(pp.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"comparison '{c.name}': projection is not JSON ({exc})",
                         file=plan.path, line=line, field="projection") from None
    pols = doc.get("policies") if isinstance(doc, dict) else None
    if isinstance(pols, dict):
        pols = [{"name": k, **v} for k, v in pols.items()]
    if not isinstance(pols, list):
        raise InputError(f"comparison '{c.name}': {c.projection} has no 'policies' (is it "
                         "'planner draft --json' output?)", file=plan.path, line=line,
                         field="projection")
    names = [str(_first(p, "label", "name", "policy", default="")) for p in pols]
    short = [str(_first(p, "policy", "name", default="")) for p in pols]
    if c.policy in names:
        k = names.index(c.policy)
    elif c.policy in short and short.count(c.policy) == 1:
        k = short.index(c.policy)
    else:
        near = difflib.get_close_matches(c.policy, names, n=1)
        raise InputError(f"comparison '{c.name}': policy '{c.policy}' is not in "
                         f"{c.projection} (has {', '.join(names[:8])})"
                         + (f"; did you mean '{near[0]}'?" if near else ""),
                         file=plan.path, line=c.lines.get("policy", c.line), field="policy")
    pol = pols[k]
    war = pol.get("worth_a_run")
    info: dict = {"source": "projection", "projection": c.projection, "policy": names[k],
                  "worth_a_run": war.get("worth") if isinstance(war, dict) else war}
    if pol.get("is_baseline"):
        raise InputError(f"comparison '{c.name}': policy '{c.policy}' is the projection's "
                         "baseline (Δ = 0)", file=plan.path,
                         line=c.lines.get("policy", c.line), field="policy")

    def dist(v):
        """(draws or None, centre, sd) of a number / {draws | point/mean, sd | ci} mapping."""
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return None, float(v), 0.0
        if isinstance(v, dict):
            if isinstance(v.get("draws"), list) and v["draws"]:
                d = np.asarray(v["draws"], float)
                return d, float(d.mean()), float(d.std())
            mean = _first(v, "point", "mean", "median")
            sd = v.get("sd")
            lo, hi = _first(v, "ci_low", "hdi_low"), _first(v, "ci_high", "hdi_high")
            if sd is None and lo is not None and hi is not None:
                sd = (float(hi) - float(lo)) / (2 * 1.96)
            if mean is not None:
                return None, float(mean), float(sd or 0.0)
        return None, None, None

    ref = 0.0
    scale = 1.0
    if pol.get("delta_tps") is not None:
        draws, mean, sd = dist(pol["delta_tps"])
    elif pol.get("speedup_vs_baseline") is not None:
        # the projection's speed ratio applied to this comparison's baseline level
        draws, mean, sd = dist(pol["speedup_vs_baseline"])
        ref, scale = 1.0, baseline_tps
        info["note"] = (f"speedup vs the projection's baseline applied to {baseline_tps:g} TPS")
    else:
        draws, mean, sd = dist(pol.get("projected_tps"))
        base_pol = next((p for p in pols if p.get("is_baseline")), None)
        ref = None
        if base_pol is not None:
            _, ref, _ = dist(base_pol.get("projected_tps"))
        if ref is None:
            settings = doc.get("settings", {}) if isinstance(doc.get("settings"), dict) else {}
            ref = _first(settings, "baseline_tps", default=doc.get("baseline_tps"))
        if ref is None:
            ref = baseline_tps
            info["note"] = ("projected TPS minus the plan's baseline_tps (the projection "
                            "names no baseline)")
    if mean is None:
        raise InputError(f"comparison '{c.name}': policy '{c.policy}' has no projected_tps / "
                         "delta_tps mean", file=plan.path, line=line, field="projection")
    if draws is not None:
        delta = (draws - ref) * scale
    elif sd and sd > 0:
        delta = rng.normal((mean - ref) * scale, sd * scale, sims)
    else:
        delta = float((mean - ref) * scale)
    return delta, info


def expected_delta(c: Comparison, plan: Plan, baseline_tps: float, *, sims: int,
                   rng: np.random.Generator) -> tuple[np.ndarray | float, dict]:
    """Δ in TPS (a number, or draws when uncertain) and a description of where it came from."""
    if c.projection is not None:
        return _projection_delta(c, plan, baseline_tps, sims, rng)
    if c.delta_tps is not None:
        mean, sd, unit = c.delta_tps, c.delta_sd or 0.0, "tps"
        to_tps = 1.0
    else:
        mean, sd, unit = c.delta_pct, c.delta_sd or 0.0, "pct"
        to_tps = baseline_tps / 100.0
    info = {"source": f"delta_{unit}", "given": mean, "given_sd": c.delta_sd}
    if sd > 0:
        return rng.normal(mean * to_tps, sd * to_tps, sims), info
    return float(mean * to_tps), info


# --------------------------------------------------------------------------------------------
# repeats results
# --------------------------------------------------------------------------------------------

def _first(d: dict, *keys, default=None):
    for k in keys:
        if k in d and d[k] is not None:
            return d[k]
    return default


def normalise_curve(curve: Any) -> dict:
    """An assurance-vs-runs curve as ``{runs_per_arm, assurance, false_claim_rate, cost_usd,
    gpu_hours}`` lists, from a dict of lists or a list of point dicts."""
    keys = {"runs_per_arm": ("runs_per_arm", "n", "runs", "n_per_arm"),
            "assurance": ("assurance", "power"),
            "false_claim_rate": ("false_claim_rate", "false_claims", "fcr"),
            "cost_usd": ("cost_usd", "cost", "expected_cost_usd"),
            "gpu_hours": ("gpu_hours", "expected_gpu_hours")}
    out: dict = {k: [] for k in keys}
    if isinstance(curve, dict):
        for k, alts in keys.items():
            v = _first(curve, *alts)
            out[k] = list(v) if isinstance(v, (list, tuple, np.ndarray)) else []
    elif isinstance(curve, list):
        for pt in curve:
            if isinstance(pt, dict):
                for k, alts in keys.items():
                    out[k].append(_first(pt, *alts))
    n = len(out["runs_per_arm"])
    for k in keys:
        if len(out[k]) != n:
            out[k] = [None] * n
    return out


def design_label(e: dict | None) -> str:
    """Display name of a design row: ``sequential`` says its layout (``sequential (paired)``)."""
    if not e:
        return "—"
    name = str(e.get("design") or "?")
    lay = e.get("layout")
    return f"{name} ({lay})" if lay and lay != name else name


_ROW_KEYS = ("design", "layout", "runs_per_arm", "assurance", "false_claim_rate", "cost_usd",
             "per_look_hdi_prob", "batch")


def _same_row(r: dict, rec: dict) -> bool:
    """``r`` is the recommended row ``rec`` (the same object, or equal on the identifying
    fields: design, layout, runs per arm, assurance, false-claim rate, cost, HDI mass)."""
    return r is rec or all(r.get(k) == rec.get(k) for k in _ROW_KEYS)


def normalise_repeats(res: dict, target: float | None = None) -> dict:
    """Bring a :func:`planner.repeats.plan_repeats` result to the shape the renderers use.

    Sequential rows are grouped per layout (``sequential`` separate and paired are two
    entries, each with ``layout`` and a display ``label``). The recommended entry is the very
    row :func:`planner.repeats.plan_repeats` recommends (cheapest with assurance ≥ target and
    false-claim rate ≤ 5 %), never another row of the same design.

    Returns
    -------
    dict
        ``designs``: list of ``{design, layout, label, runs_per_arm, assurance,
        false_claim_rate, gpu_hours, cost_usd, reaches_target, false_claim_ok, curve}`` and
        ``recommended`` (one of them or None).
    """
    from planner.repeats import MAX_FALSE_CLAIM

    designs_raw = res.get("designs", [])
    if isinstance(designs_raw, dict):
        designs_raw = [{"design": k, **v} for k, v in designs_raw.items()]
    tgt = target if target is not None else _first(res, "target", "assurance_target")
    if tgt is None and isinstance(res.get("inputs"), dict):
        tgt = res["inputs"].get("target")
    rec = res.get("recommended")
    names = [(str(_first(d, "design", "name", default="?")), d.get("layout"))
             for d in designs_raw]
    if len(set(names)) < len(names) or not any("curve" in d for d in designs_raw):
        designs_raw = _group_rows(designs_raw, rec)
    designs = []
    rec_entry = None
    for d in designs_raw:
        curve = normalise_curve(_first(d, "curve", "assurance_curve", "points", default={}))
        e = {"design": str(_first(d, "design", "name", default="?")),
             "runs_per_arm": _first(d, "runs_per_arm", "n_per_arm", "n"),
             "assurance": _first(d, "assurance", "power"),
             "false_claim_rate": _first(d, "false_claim_rate", "false_claims"),
             "gpu_hours": _first(d, "gpu_hours", "expected_gpu_hours"),
             "cost_usd": _first(d, "cost_usd", "expected_cost_usd", "cost"),
             "curve": curve}
        reach = _first(d, "reaches_target", "meets_target", "feasible")
        if reach is None and tgt is not None and e["assurance"] is not None:
            reach = e["assurance"] >= tgt - 1e-12
        e["reaches_target"] = bool(reach) if reach is not None else None
        for k in ("expected_runs_per_arm", "max_runs_per_arm", "max_cost_usd",
                  "max_gpu_hours", "layout", "batch", "per_look_hdi_prob", "false_claim_ok",
                  "within_budget", "runs_total", "note", "notes"):
            if k in d:
                e[k] = d[k]
        if e.get("false_claim_ok") is None and e["false_claim_rate"] is not None:
            e["false_claim_ok"] = bool(e["false_claim_rate"] <= MAX_FALSE_CLAIM + 1e-12)
        e["label"] = design_label(e)
        designs.append(e)
        if isinstance(rec, dict) and rec_entry is None and (d.get("_is_rec") or (
                "_is_rec" not in d and _same_row(d, rec))):
            rec_entry = e
    for d in designs_raw:
        d.pop("_is_rec", None)
    recommended = rec_entry
    if recommended is None and isinstance(rec, str):
        recommended = next((e for e in designs if e["design"] == rec), None)
    if recommended is None and isinstance(rec, dict):
        recommended = {"design": rec.get("design"), "runs_per_arm": rec.get("runs_per_arm"),
                       "assurance": rec.get("assurance"),
                       "false_claim_rate": rec.get("false_claim_rate"),
                       "gpu_hours": rec.get("gpu_hours"), "cost_usd": rec.get("cost_usd"),
                       "reaches_target": True, "curve": normalise_curve(rec.get("curve", {}))}
        for k in ("layout", "batch", "per_look_hdi_prob", "max_runs_per_arm", "max_cost_usd",
                  "max_gpu_hours", "expected_runs_per_arm", "false_claim_ok"):
            if k in rec:
                recommended[k] = rec[k]
        recommended["label"] = design_label(recommended)
    return {"designs": designs, "recommended": recommended, "target": tgt,
            "reason": res.get("reason"), "beyond_cap": res.get("beyond_cap")}


def _group_rows(rows: list[dict], rec: Any) -> list[dict]:
    """Group a flat table of design rows (several runs-per-arm rows per design, as
    :func:`planner.repeats.plan_repeats` returns) into one entry per design and layout
    (sequential separate / paired apart) with a curve.

    The entry of a design is the recommended row when it belongs to that design (flagged
    ``_is_rec``), else its ``minimal`` row (fewest runs that reach the target), else its
    cheapest row reaching the target with a false-claim rate ≤ 5 %, else its row of highest
    assurance; the curve is all its rows sorted by runs per arm."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        key = (str(_first(r, "design", "name", default="?")), r.get("layout"))
        groups.setdefault(key, []).append(r)
    out = []
    for (name, layout), rs in groups.items():
        pts = sorted((r for r in rs if r.get("runs_per_arm") is not None),
                     key=lambda r: r["runs_per_arm"])
        pick = None
        is_rec = False
        if isinstance(rec, dict):
            pick = next((r for r in rs if r is rec), None) or \
                next((r for r in rs if _same_row(r, rec)), None)
            is_rec = pick is not None
        if pick is None:
            pick = next((r for r in rs if r.get("minimal")), None)
        if pick is None:
            ok = [r for r in rs if r.get("meets_target") and r.get("false_claim_ok", True)]
            pick = min(ok, key=lambda r: r.get("cost_usd") or 0) if ok else \
                max(rs, key=lambda r: r.get("assurance") or 0)
        curve = {k: [r.get(k) for r in pts] for k in ("runs_per_arm", "assurance",
                                                       "false_claim_rate", "cost_usd",
                                                       "gpu_hours")}
        out.append({**pick, "design": name, "curve": curve, "_is_rec": is_rec})
    return out


# --------------------------------------------------------------------------------------------
# allocation
# --------------------------------------------------------------------------------------------

def knapsack(values: Sequence[float], weights: Sequence[int], capacity: int) -> list[int]:
    """Exact 0/1 knapsack: indices maximising total value with total weight ≤ capacity.

    Ties in value go to the lighter set. Weights are non-negative integers.
    """
    n = len(values)
    cap = max(int(capacity), 0)
    if n == 0:
        return []
    w = [max(int(x), 0) for x in weights]
    # scale values to integers to make ties exact (1e-9 resolution)
    v = [int(round(x * 1e9)) for x in values]
    neg = -(1 << 62)
    best = np.full(cap + 1, neg, dtype=np.int64)  # best[c]: max value at total weight exactly c
    best[0] = 0
    take = np.zeros((n, cap + 1), dtype=bool)
    for i in range(n):
        if v[i] <= 0 or w[i] > cap:
            continue
        prev = best[:cap + 1 - w[i]]
        cand = np.full(cap + 1, neg, dtype=np.int64)
        cand[w[i]:] = np.where(prev > neg, prev + v[i], neg)
        better = cand > best
        take[i] = better
        best = np.where(better, cand, best)
    # best value, lightest weight achieving it
    top = best.max()
    c = int(np.nonzero(best == top)[0][0])
    chosen = []
    for i in range(n - 1, -1, -1):
        if take[i, c]:
            chosen.append(i)
            c -= w[i]
    return sorted(chosen)


def _total_runs(design: str, runs_per_arm: float) -> int:
    """Runs of both arms (expected, rounded up, for sequential designs)."""
    return int(math.ceil(2 * float(runs_per_arm) - 1e-9))


def allocate(items: list[dict], budget: Budget) -> dict:
    """Choose which comparisons to buy (see the module docstring for the rule).

    Parameters
    ----------
    items : list of dict
        Per comparison: ``recommended`` (dict with ``cost_usd``, ``runs_per_arm``,
        ``assurance``) or None.
    budget : Budget

    Returns
    -------
    dict
        ``bought`` (indices), ``capacity`` and ``unit`` (``cents`` or ``runs``).
    """
    idx = [i for i, it in enumerate(items) if it.get("recommended")]
    vals = [float(items[i]["recommended"]["assurance"] or 0.0) for i in idx]
    if budget.total_usd is not None:
        wts = [int(math.ceil(float(items[i]["recommended"]["cost_usd"]) * 100 - 1e-6))
               for i in idx]
        cap, unit = int(math.floor(budget.total_usd * 100 + 1e-6)), "cents"
    else:
        wts = [_total_runs(items[i]["recommended"]["design"],
                           items[i]["recommended"]["runs_per_arm"]) for i in idx]
        cap, unit = int(budget.max_runs), "runs"
    if budget.total_usd is not None and budget.max_runs is not None:
        # both limits: knapsack on dollars, then drop the least valuable per dollar over runs
        chosen = [idx[j] for j in knapsack(vals, wts, cap)]
        runs = lambda ch: sum(_total_runs(items[i]["recommended"]["design"],  # noqa: E731
                                          items[i]["recommended"]["runs_per_arm"]) for i in ch)
        while chosen and runs(chosen) > budget.max_runs:
            worst = min(chosen, key=lambda i: items[i]["recommended"]["assurance"] /
                        max(items[i]["recommended"]["cost_usd"], 1e-9))
            chosen.remove(worst)
        return {"bought": sorted(chosen), "capacity": cap, "unit": unit}
    return {"bought": sorted(idx[j] for j in knapsack(vals, wts, cap)), "capacity": cap,
            "unit": unit}


# --------------------------------------------------------------------------------------------
# the budget command
# --------------------------------------------------------------------------------------------

def _delta_curve(delta: np.ndarray | float, baseline_tps: float, points: int = 200) -> dict:
    """Density of the expected Δ on a grid (in % of baseline), for plots; a point mass gives
    an empty curve and the value in ``point_pct``."""
    d = np.atleast_1d(np.asarray(delta, float))
    pct = 100.0 * d / baseline_tps
    if d.size < 2 or np.std(pct) == 0:
        return {"delta_pct": [], "density": [], "point_pct": float(pct[0]), "interval_pct": None}
    from scipy import stats

    kde = stats.gaussian_kde(pct)
    lo, hi = np.percentile(pct, [0.1, 99.9])
    pad = 0.15 * (hi - lo)
    xs = np.linspace(lo - pad, hi + pad, points)
    return {"delta_pct": xs.tolist(), "density": kde(xs).tolist(), "point_pct": None,
            "interval_pct": np.percentile(pct, [2.5, 97.5]).tolist()}


def _runs_mean(plan: Plan, cfg: str, cache: dict) -> float | None:
    if not plan.runs:
        return None
    if "table" not in cache:
        from planner.runs import read_runs

        rp = Path(plan.runs)
        cache["table"] = read_runs(rp if rp.is_absolute() else Path(plan.path).parent / rp)
    vals = [r.tps for r in cache["table"].measured().runs if r.config == cfg]
    return float(np.mean(vals)) if vals else None


def min_run_cost(res_designs: list[dict]) -> float | None:
    """Cheapest cost of a single run implied by the sized designs (cost / total runs)."""
    best = None
    for e in res_designs:
        curve = e.get("curve") or {}
        ns, cs = curve.get("runs_per_arm") or [], curve.get("cost_usd") or []
        pts = list(zip(ns, cs)) or [(e.get("runs_per_arm"), e.get("cost_usd"))]
        for n, cst in pts:
            if n and cst:
                per = float(cst) / (2 * float(n))
                best = per if best is None else min(best, per)
    return best


def _compliant(row: dict, max_false_claim: float) -> bool:
    """A row ``plan_repeats`` would recommend: reaches the target, false-claim rate ≤ 5 %."""
    if row.get("reaches_target") is False or row.get("false_claim_ok") is False:
        return False
    fc = row.get("false_claim_rate")
    return fc is None or (math.isfinite(fc) and fc <= max_false_claim + 1e-12)


def _plan_loc(plan: Plan, c: Comparison, f: str) -> dict:
    """``InputError`` location of comparison field ``f``: the comparison's line of it, else the
    ``[plan]`` default's line, else the ``[[comparison]]`` header."""
    line = c.lines.get(f) or plan.lines.get(("plan", f)) or c.line
    return {"file": plan.path, "line": line, "field": f}


#: ``plan_repeats`` errors name its command-line options; in a plan they are these fields
_REPEATS_FIELDS = {"--rule": "rule", "--rope": "rope", "--baseline-tps": "baseline_tps",
                   "--design": "designs"}
_REPEATS_BUDGET = {"--assurance": "assurance", "--max-runs": "max_runs_per_arm",
                   "--price-per-hour": "price_per_hour", "--minutes-per-run": "minutes_per_run",
                   "--startup-minutes": "startup_minutes", "--max-cost": "total_usd"}


def _repeats_error_loc(plan: Plan, c: Comparison, fld: str | None) -> dict:
    """Map an error of :func:`planner.repeats.plan_repeats` (its option names) to the plan
    field and line it comes from."""
    if fld == "--delta":
        f = next((x for x in ("delta_tps", "delta_pct", "projection")
                  if getattr(c, x) is not None), "delta_tps")
        return {"file": plan.path, "line": c.lines.get(f, c.line), "field": f}
    if fld in _REPEATS_FIELDS:
        return _plan_loc(plan, c, _REPEATS_FIELDS[fld])
    if fld in _REPEATS_BUDGET:
        return plan.budget.where(_REPEATS_BUDGET[fld])
    if fld == "--sims":
        return {"field": fld}
    return {"file": plan.path, "line": c.line, "field": fld}


def plan_budget(plan: Plan, *, sims: int = 2000, seed: int = 0,
                progress: Callable[[str], None] | None = None) -> dict:
    """Size every comparison of ``plan`` and allocate the budget.

    Parameters
    ----------
    plan : Plan
        From :func:`read_plan`.
    sims : int
        Monte-Carlo simulations per design (passed to ``plan_repeats``).
    seed : int
        Base seed; comparison k uses ``seed + k``, so results do not depend on plan order
        of the other comparisons.
    progress : callable, optional
        Called with the comparison name after each comparison is sized.

    Returns
    -------
    dict
        JSON-ready result, schema ``spec-planner/budget/1``: ``comparisons`` (each with the
        expected Δ, its density ``delta_curve``, all ``designs`` with curves, ``recommended``,
        ``status`` ``buy`` / ``over budget`` / ``unreachable``, ``value_per_usd``), ``totals``,
        ``not_worth_buying``, ``budget``, ``allocation_rule``.

    Raises
    ------
    InputError
        Bad prior / ROPE / projection, or a budget smaller than the cost of one run.
    """
    from planner.priors import resolve_prior
    from planner.verdict import Rope

    t0 = time.perf_counter()
    b = plan.budget
    if b.path is None:
        b.path = plan.path
    from models.noise import PLATFORM_ALIASES
    from planner.costs import cost_model
    from planner.repeats import MAX_FALSE_CLAIM, plan_repeats

    # the cost model of the sizing (planner/costs.py: start-up per allocation + minutes per
    # run, billed per started minute); the budget must buy at least one run of it
    cm = cost_model("a10g-small", price_per_hour=b.price_per_hour,
                    minutes_per_run=b.minutes_per_run, startup_minutes=b.startup_minutes)
    one_run = cm.cost([1])["cost_usd"]
    if b.total_usd is not None and b.total_usd < one_run - 1e-9:
        raise InputError(f"budget ${b.total_usd:g} is smaller than one run (${one_run:.2f}: "
                         f"{cm.startup_minutes:g} min start-up + {cm.minutes_per_run:g} min "
                         f"at ${cm.price_per_hour:g}/h)", **b.where("total_usd"))
    if b.max_runs is not None and b.max_runs < 2:
        raise InputError(f"must allow at least one run per arm (>= 2), got {b.max_runs}",
                         **b.where("max_runs"))

    engine = "planner.repeats"
    cache: dict = {}
    items = []
    for c in plan.comparisons:
        rng = np.random.default_rng(seed + 7919 * (c.index + 1))
        base = c.baseline_tps or plan.baseline_tps or _runs_mean(plan, c.baseline, cache) \
            or DEFAULT_BASELINE_TPS
        platform = c.platform or plan.platform or DEFAULT_PLATFORM
        rule = c.rule or plan.rule or DEFAULT_RULE
        rope = c.rope or plan.rope or DEFAULT_ROPE
        label = f"comparison #{c.index + 1} '{c.name}'"
        try:
            Rope.parse(rope)
        except InputError as exc:
            raise InputError(f"{label}: {exc.message}", **_plan_loc(plan, c, "rope")) from None
        prior_spec = c.prior or plan.prior
        try:
            prior, prior_label = resolve_prior(prior_spec or "auto", platform)
        except InputError as exc:
            raise InputError(f"{label}: {exc.message.replace(', weak)', ')')}", **_plan_loc(
                plan, c, "prior" if prior_spec else "platform")) from None
        if prior is None:  # read_plan refuses unknown platforms and 'weak'
            raise InputError(f"{label}: sizing needs a noise prior (a platform or a calibrate "
                             "file)", **_plan_loc(plan, c, "prior"))
        delta, dinfo = expected_delta(c, plan, base, sims=sims, rng=rng)
        designs = c.designs or plan.designs
        explicit = c.designs is not None or ("plan", "designs") in plan.lines
        if not explicit and prior_spec is None and \
                PLATFORM_ALIASES.get(platform) == "published-n4":
            # as 'planner repeats': that prior pins the within-allocation sigma near 0 (it only
            # knows the total), so a paired design would look free of noise
            designs = tuple(x for x in designs if x != "paired")
        kw: dict = dict(relative=False, baseline_tps=base, prior=prior, rule=rule, rope=rope,
                        target=b.assurance, designs=designs, max_runs=b.max_runs_per_arm,
                        price_per_hour=cm.price_per_hour, minutes_per_run=cm.minutes_per_run,
                        startup_minutes=cm.startup_minutes,
                        billed_per_minute=cm.billed_per_minute, sims=sims,
                        seed=seed + c.index, prior_label=prior_label,
                        search_beyond_cap=False)  # the doubling search to 5000 runs is slow
        try:
            raw = plan_repeats(delta, **kw)
        except InputError as exc:
            raise InputError(f"{label}: {exc.message}",
                             **_repeats_error_loc(plan, c, exc.field)) from None
        norm = normalise_repeats(raw, b.assurance)
        d = np.atleast_1d(np.asarray(delta, float))
        rec = norm["recommended"]
        refused = None
        if rec is not None and not _compliant(rec, MAX_FALSE_CLAIM):
            refused, rec = rec, None  # only what plan_repeats would recommend is bought
        if rec is not None:
            rec = {**rec, "worst_case_cost_usd": float(rec.get("max_cost_usd") or
                                                       rec["cost_usd"]),
                   "worst_case_runs_per_arm": rec.get("max_runs_per_arm") or
                   rec["runs_per_arm"]}
        item = {
            "name": c.name, "baseline": c.baseline, "candidate": c.candidate,
            "line": c.line, "platform": platform, "prior": prior_label, "rule": rule,
            "rope": rope, "rope_pct": 100 * math.expm1(Rope.parse(rope).log_halfwidth(base)),
            "baseline_tps": base,
            "delta": {**dinfo, "mean_tps": float(d.mean()),
                      "sd_tps": float(d.std()) if d.size > 1 else 0.0,
                      "mean_pct": float(100 * d.mean() / base),
                      "sd_pct": float(100 * d.std() / base) if d.size > 1 else 0.0},
            "delta_curve": _delta_curve(delta, base),
            "designs": norm["designs"],
            "recommended": rec,
            "repeats_reason": norm.get("reason") if refused is None else "",
            "beyond_cap": norm.get("beyond_cap"),
            "repeats_engine": engine,
        }
        items.append(item)
        if progress:
            progress(c.name)
    alloc = allocate(items, b)
    bought = set(alloc["bought"])
    for i, it in enumerate(items):
        rec = it["recommended"]
        if rec is None:
            it["status"] = "unreachable"
            rr = it.get("repeats_reason") or ""
            reach = [e for e in it["designs"] if e.get("reaches_target")]
            if reach and not any(_compliant(e, MAX_FALSE_CLAIM) for e in reach):
                # the target is reachable, but only by designs that claim too often
                low = min(reach, key=lambda e: e.get("false_claim_rate") or 0.0)
                rr = (f"no design is both decisive and safe: the designs reaching assurance "
                      f"{b.assurance:g} have false-claim rates above {MAX_FALSE_CLAIM:g} "
                      f"(lowest: {design_label(low)} at {low['runs_per_arm']:.3g} runs/arm, "
                      f"false-claim {low.get('false_claim_rate') or 0:.3f})")
            elif not rr or rr.startswith("no design up to") or rr.startswith("cheapest"):
                # one statement of the best design (repeats' own reason names it too)
                best = max(it["designs"], key=lambda e: e.get("assurance") or 0, default=None)
                rr = (f"no design reaches assurance {b.assurance:g} within "
                      f"{b.max_runs_per_arm} runs per arm")
                if best is not None and best.get("assurance") is not None:
                    rr += (f" (best: {design_label(best)} at {best['runs_per_arm']:.3g} "
                           f"runs/arm, assurance {best['assurance']:.2f}, "
                           f"${best['cost_usd'] or 0:.2f})")
            it["reason"] = rr
            bc = it.get("beyond_cap")
            if isinstance(bc, dict) and bc.get("runs_per_arm"):
                it["reason"] += (f"; {bc['design']} would need {bc['runs_per_arm']} runs per "
                                 f"arm (${bc.get('cost_usd', float('nan')):.2f})")
            it["value_per_usd"] = None
            continue
        it["value_per_usd"] = (rec["assurance"] / rec["cost_usd"]) if rec["cost_usd"] else None
        if i in bought:
            it["status"] = "buy"
            it["reason"] = ""
        else:
            it["status"] = "over budget"
            it["reason"] = "left out by the knapsack: the budget buys more decisive verdicts " \
                           "elsewhere"
    buy = [items[i] for i in sorted(bought)]
    tot_cost = sum(float(it["recommended"]["cost_usd"]) for it in buy)
    # sequential purchases are costed at their expected stop; each may run to its cap
    worst = sum(float(it["recommended"]["worst_case_cost_usd"]) for it in buy)
    worst_runs = sum(_total_runs(it["recommended"]["design"],
                                 it["recommended"]["worst_case_runs_per_arm"]) for it in buy)
    over = []
    if b.total_usd is not None and worst > b.total_usd + 1e-9:
        over.append("total_usd")
    if b.max_runs is not None and worst_runs > b.max_runs:
        over.append("max_runs")
    totals = {
        "comparisons": len(items),
        "bought": len(buy),
        "runs": sum(_total_runs(it["recommended"]["design"], it["recommended"]["runs_per_arm"])
                    for it in buy),
        "gpu_hours": sum(float(it["recommended"]["gpu_hours"] or 0.0) for it in buy),
        "cost_usd": tot_cost,
        "expected_decisive": sum(float(it["recommended"]["assurance"]) for it in buy),
        "expected_false_claims": sum(float(it["recommended"]["false_claim_rate"] or 0.0)
                                     for it in buy),
        "budget_left_usd": (b.total_usd - tot_cost) if b.total_usd is not None else None,
        "worst_case_cost_usd": worst,
        "worst_case_runs": worst_runs,
        "worst_case_gpu_hours": sum(float(it["recommended"].get("max_gpu_hours") or
                                          it["recommended"]["gpu_hours"] or 0.0) for it in buy),
        "worst_case_exceeds_budget": bool(over),
        "worst_case_exceeds": over,
        "cost_all_usd": sum(float(it["recommended"]["cost_usd"]) for it in items
                            if it["recommended"]),
    }
    return {
        "schema": SCHEMA,
        "command": "budget",
        "plan": plan.path,
        "title": plan.title,
        "budget": {"total_usd": b.total_usd, "max_runs": b.max_runs,
                   "price_per_hour": b.price_per_hour, "assurance_target": b.assurance,
                   "minutes_per_run": b.minutes_per_run, "startup_minutes": b.startup_minutes,
                   "max_runs_per_arm": b.max_runs_per_arm, "unit": alloc["unit"],
                   "one_run_usd": one_run},
        "allocation_rule": ALLOCATION_RULE,
        "comparisons": items,
        "totals": totals,
        "not_worth_buying": [it["name"] for it in items if it["status"] != "buy"],
        "repeats_engine": engine,
        "sims": sims,
        "seed": seed,
        "elapsed_s": time.perf_counter() - t0,
    }
