"""The plan file of ``planner budget``: comparisons to settle and the budget, read from TOML
or CSV and validated.

A plan lists comparisons, each ``baseline`` vs ``candidate`` with an expected Δ
(``delta_tps`` / ``delta_pct``, optionally ``delta_sd`` in the same unit, or a saved
``planner draft --json`` ``projection`` + ``policy``), plan-wide defaults (``[plan]``:
``title``, ``runs``, ``baseline_tps``, ``platform``, ``prior``, ``rule``, ``rope``,
``designs``) and a ``[budget]`` table (``total_usd`` or ``max_runs``, ``price_per_hour``,
``assurance``, ``minutes_per_run``, ``startup_minutes``, ``max_runs_per_arm``).

Every error is an :class:`~planner.errors.InputError` naming the file, the line and the plan
field (``budget.total_usd``, ``delta_tps``); a budget value given by the caller instead of the
file (``overrides``) is reported by its plain field name (``total_usd``), which the command
line spells as its option.
"""

from __future__ import annotations

import csv
import difflib
import io
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from planner.io._parse import HUGE_INTEGER, parse_number
from planner.io.files import read_text
from planner.defaults import (DEFAULT_ASSURANCE, DEFAULT_PLATFORM, DEFAULT_ROPE, DEFAULT_RULE,
                              check_assurance)
from planner.errors import InputError
from planner.io.limits import LIMITS

__all__ = ["DEFAULT_DESIGNS", "Comparison", "Budget", "Plan", "read_plan"]

DEFAULT_DESIGNS = ("separate", "paired", "sequential")

_COMPARISON_FIELDS = ("name", "baseline", "candidate", "delta_tps", "delta_pct", "delta_sd",
                      "projection", "policy", "platform", "prior", "rule", "rope",
                      "baseline_tps", "designs")
_BUDGET_FIELDS = ("total_usd", "max_runs", "price_per_hour", "assurance", "minutes_per_run",
                  "startup_minutes", "max_runs_per_arm")
_PLAN_FIELDS = ("title", "runs", "baseline_tps", "platform", "prior", "rule", "rope", "designs")


@dataclass
class Comparison:
    """One comparison of a plan (after validation).

    ``delta_tps`` / ``delta_pct`` / ``delta_sd`` are TPS or % of ``baseline_tps``; the fields
    left ``None`` fall back to the plan's defaults. ``line`` is the ``[[comparison]]`` header
    (or CSV row) and ``lines`` the line of each given field.
    """

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
    """The ``[budget]`` table.

    ``total_usd`` ($) and / or ``max_runs`` (runs of both arms) limit the purchases;
    ``price_per_hour`` ($/h), ``minutes_per_run`` and ``startup_minutes`` (min) override the
    cost model of each comparison's platform (``None``: the platform's value,
    :func:`planner.decide.costs.cost_model`); ``assurance`` is the target; ``max_runs_per_arm`` caps
    every design.
    """

    total_usd: float | None = None
    max_runs: int | None = None
    price_per_hour: float | None = None
    assurance: float = DEFAULT_ASSURANCE
    minutes_per_run: float | None = None
    startup_minutes: float | None = None
    max_runs_per_arm: int = 40
    lines: dict = field(default_factory=dict)
    #: fields given by the caller, not the file (errors then name the plain field, no line)
    cli: set = field(default_factory=set)
    #: the plan file and its ``[budget]`` header line (for error locations)
    path: str | None = None
    header_line: int | None = None

    def where(self, f: str) -> dict:
        """``InputError`` location of budget field ``f``: its plan line (field
        ``budget.f``), or only the plain field ``f`` when the caller gave the value (the
        command line then names its option)."""
        if f in self.cli:
            return {"field": f}
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
    x = parse_number(v, path=path, line=line, field=fld, positive=positive,
                     allow_zero=allow_zero, integer=integer)
    # the plausible range of the quantity (planner.io.limits): delta_tps, baseline_tps...
    name = fld.split(".")[-1]
    return LIMITS[name].check(x, field=fld, file=path, line=line) if name in LIMITS else x


def _designs(v: Any, *, path: str, line: int | None, fld: str) -> tuple[str, ...]:
    from planner.io._parse import split_items

    if isinstance(v, str):  # "separate;paired" (a CSV cell) or "separate,paired": one grammar
        try:                # with the --design option (no space, no empty item)
            items = split_items(v.replace(";", ","), field=fld, what="design list")
        except InputError as exc:
            raise InputError(exc.message, file=path, line=line, field=fld) from None
    else:
        items = v
    if not isinstance(items, (list, tuple)) or \
            not all(isinstance(x, str) and x and not any(c.isspace() for c in x)
                    for x in items):
        raise InputError(f"expected a list of design names (no blank or padded item), "
                         f"got {v!r}", file=path, line=line, field=fld)
    out = tuple(items)
    bad = [d for d in out if d not in DEFAULT_DESIGNS]
    if not out:
        raise InputError(f"no design given; expected some of {', '.join(DEFAULT_DESIGNS)}",
                         file=path, line=line, field=fld)
    if bad:
        raise InputError(f"unknown design {bad[0]!r}; expected some of "
                         f"{', '.join(DEFAULT_DESIGNS)}", file=path, line=line, field=fld)
    return out


def _comparison(raw: dict, k: int, *, path: str, lines: dict, where: Callable) -> Comparison:
    """Validate one comparison mapping (TOML table or CSV row)."""
    from planner.io.limits import check_name

    # names and labels reach the terminal: no control character (an escape would colour or
    # rewrite it); checked first, since the messages below quote the name
    for f in _COMPARISON_FIELDS:
        if isinstance(raw.get(f), str):
            check_name(raw[f], field=f, file=path, line=where(k, f))
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
        # its range (planner.io.limits) says what 0 and -1 are alike
        c.delta_sd = _num(raw["delta_sd"], path=path, line=where(k, "delta_sd"), fld="delta_sd")
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
        x = parse_number(raw[f], path=loc.get("file"), line=loc.get("line"),
                         field=loc["field"], **kw)
        # sizes taken from values are bounded (planner.io.limits: total_usd, max_runs_per_arm...)
        return LIMITS[f].check(x, **loc) if f in LIMITS else x

    if raw.get("total_usd") is not None:
        b.total_usd = num("total_usd", positive=True, allow_zero=False)
    if raw.get("max_runs") is not None:
        b.max_runs = num("max_runs", positive=True, integer=True, allow_zero=False)
    if raw.get("price_per_hour") is not None:
        b.price_per_hour = num("price_per_hour", positive=True, allow_zero=False)
    if raw.get("assurance") is not None:
        b.assurance = num("assurance")
        check_assurance(raw["assurance"], **b.where("assurance"))
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
    # bounded (planner.io.files); a UTF-8 BOM (Excel, Notepad) is dropped
    text = read_text(p, spath)
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
    pairs: dict = {}
    from planner.io.limits import check_delta_at

    for c in plan.comparisons:
        base = c.baseline_tps if c.baseline_tps is not None else plan.baseline_tps
        if c.delta_tps is not None and base is not None:  # delta and baseline swapped?
            check_delta_at(c.delta_tps, base, field="delta_tps", baseline_field="baseline_tps",
                           file=spath, line=c.lines.get("delta_tps", c.line))
        if c.name in seen:
            raise InputError(f"comparison #{c.index + 1}: duplicate name '{c.name}' (also "
                             f"comparison #{seen[c.name] + 1})", file=spath,
                             line=c.lines.get("name", c.line), field="name")
        seen[c.name] = c.index
        # one A/B question on one platform, whichever arm is called the baseline: bought
        # twice it would be paid twice and counted as two decisive verdicts
        key = (frozenset((c.baseline.strip(), c.candidate.strip())), c.platform)
        if key in pairs:
            other = plan.comparisons[pairs[key]]
            raise InputError(f"comparison #{c.index + 1} '{c.name}' compares the same two "
                             f"configs as #{other.index + 1} '{other.name}' "
                             f"('{c.baseline}' and '{c.candidate}'): one experiment answers "
                             "both; keep one", file=spath,
                             line=c.lines.get("candidate", c.line), field="candidate")
        pairs[key] = c.index
    b = plan.budget
    if b.total_usd is None and b.max_runs is None:
        raise InputError("no budget: give total_usd or max_runs in [budget] (or as overrides "
                         "on the command line)", file=spath, line=plan.lines.get(("budget",)),
                         field="budget.total_usd", remedy="total_usd")
    _check_platforms_priors(plan)
    if plan.runs:
        _check_configs(plan)
    return plan


def _check_platforms_priors(plan: Plan) -> None:
    """Every ``platform`` must be a known one (it picks the noise prior: a typo must not fall
    back to a weak prior) and ``prior`` must not be ``weak`` / ``none`` (sizing needs a noise
    prior, as in ``planner repeats``)."""
    from planner.io.platforms import PLATFORM_ALIASES, known_platforms, platform_key

    def check(platform, prior, label, line_platform, line_prior, fp, fr):
        if platform is not None and platform_key(platform) is None:
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
    # known platforms by their canonical key from here on (letter case and aliases folded)
    if plan.platform is not None:
        plan.platform = platform_key(plan.platform)
    for c in plan.comparisons:
        if c.platform is not None:
            c.platform = platform_key(c.platform)


def _read_toml_plan(text: str, spath: str, overrides: dict) -> Plan:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise InputError(f"invalid TOML: {exc}", file=spath,
                         line=int(m.group(1)) if m else None) from None
    except ValueError:
        raise InputError(HUGE_INTEGER, file=spath) from None
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
    from planner.io.limits import check_name

    for k, v in top.items():
        line = lines.get(("plan", k))
        if k not in _PLAN_FIELDS:
            raise InputError("unknown plan field", file=spath, line=line, field=f"plan.{k}")
        if isinstance(v, str):
            check_name(v, field=f"plan.{k}", file=spath, line=line)
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
    twice = next((c for i, c in enumerate(cols) if c and c in cols[:i]), None)
    if twice is not None:  # csv keeps the last of two equal names silently
        raise InputError(f"column '{twice}' appears twice in the header", file=spath, line=1,
                         field=twice)
    comps = []
    for k, row in enumerate(rdr):
        if row.get(None):  # cells beyond the header's columns (csv puts them under None)
            raise InputError(f"{len(cols) + len(row[None])} cells for {len(cols)} columns",
                             file=spath, line=rdr.line_num)
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
    from planner.io.runs import read_runs

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
