"""Power and false claims on public "is this delta real?" cases: the planner vs Welch vs z.

Run: ``python bench/bench_public_cases.py [--json] [--subprocess] [--fixture PATH]``

Reads ``tests/fixtures/public_cases.csv`` (one row per case; described in
``tests/fixtures/public_cases.md``) and, for every case, computes

(a) the planner's verdict on the quick forms, through the ``planner verdict`` command itself
    (typer ``CliRunner`` in one warm process, or ``python -m planner verdict`` per case with
    ``--subprocess``): ``--a-runs/--b-runs`` (or ``--a-summary/--b-summary`` for cases the
    source gives only as ``mean ± sd, n`` or ``median, min, max, n``), ``--lower-is-better``
    for latencies and durations, every other option at its default (no platform, exact
    engine, ROPE 0.1 %, seed 0). A call is *decisive* when the decision rule's label
    (``rule_label``) is ``B better`` or ``A better``; ``equivalent`` and ``undecided`` are
    not claims of a difference;
(b) Welch's t-test (unequal variances, two-sided, p < 0.05) on the values as printed, or on
    the summary's mean and sd (``median, min, max, n``: mean and sd estimated as in
    :mod:`planner.io.summaries`, Hozo et al. 2005 / Wan et al. 2014); needs >= 2 runs per arm;
(c) the large-sample z-test on the same two means with the standard error from the arms' own
    sample sds (Welch's statistic against the standard normal, two-sided, p < 0.05); needs
    >= 2 runs per arm. There is no known σ for these public platforms, so this is the only
    z-test that applies to them.

For a latency or duration (``higher_is_better`` 0) a lower value of B is "B better": every
method's call is turned into the sign of "B truly better" (+1) / "B truly worse" (-1) before
it is compared with the fixture's ``truth_sign``.

Printed: one line per case with each method's call, then per method the share of nulls
called decisively (false claims), the share of effects called decisively with the right
sign (power) and the wrong-sign calls, over all cases and over the cases with >= 2 runs per
arm, and the same weighted so that every source thread (``group``) counts once.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore")

FIXTURE = ROOT / "tests" / "fixtures" / "public_cases.csv"
ALPHA = 0.05  # the classical tests' two-sided level
METHODS = ("planner", "welch", "z")


def read_cases(path: Path = FIXTURE) -> list[dict]:
    """The fixture's rows, with runs parsed and summaries turned into the CLI's syntax.

    Returns
    -------
    list of dict
        One per case: the CSV fields plus ``a``/``b`` (lists of float, possibly empty),
        ``a_spec``/``b_spec`` (``"mean=..,sd=..,n=.."`` or ``None``), ``hib`` (bool),
        ``sign`` (int), ``n_a``/``n_b`` (run counts, a summary's ``n``).

    Raises
    ------
    ValueError
        A row whose runs do not parse, whose kind, sign or direction is not one of the
        allowed values, or that gives neither runs nor a summary for an arm.
    """
    out = []
    with open(path, newline="", encoding="utf-8") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            c = dict(row)
            try:
                c["a"] = [float(x) for x in row["a_runs"].split(";") if x.strip()]
                c["b"] = [float(x) for x in row["b_runs"].split(";") if x.strip()]
            except ValueError as exc:
                raise ValueError(f"{path}:{line}: a_runs/b_runs: {exc}") from None
            c["a_spec"] = row["a_summary"].replace(";", ",") or None
            c["b_spec"] = row["b_summary"].replace(";", ",") or None
            for arm in "ab":
                if bool(c[arm]) == bool(c[f"{arm}_spec"]):
                    raise ValueError(f"{path}:{line}: give either {arm}_runs or {arm}_summary")
            if row["kind"] not in ("effect", "null"):
                raise ValueError(f"{path}:{line}: kind {row['kind']!r}")
            c["sign"] = int(row["truth_sign"])
            if (row["kind"] == "null") != (c["sign"] == 0) or c["sign"] not in (-1, 0, 1):
                raise ValueError(f"{path}:{line}: truth_sign {c['sign']} for kind {row['kind']}")
            if row["higher_is_better"] not in ("0", "1"):
                raise ValueError(f"{path}:{line}: higher_is_better {row['higher_is_better']!r}")
            c["hib"] = row["higher_is_better"] == "1"
            c["n_a"] = len(c["a"]) if c["a"] else int(_spec(c["a_spec"])["n"])
            c["n_b"] = len(c["b"]) if c["b"] else int(_spec(c["b_spec"])["n"])
            out.append(c)
    return out


def _spec(spec: str) -> dict:
    return {k.strip(): float(v) for k, v in (p.split("=") for p in spec.split(","))}


def arm_stats(values: list[float], spec: str | None) -> tuple[float, float | None, int]:
    """``(mean, sample sd or None, n)`` of an arm from its runs or its summary.

    A ``median, min, max, n`` summary gives the mean ``(min + 2 median + max) / 4`` and the
    sd ``(max - min) / xi(n)``, ``xi(n) = 2 Phi^-1((n - 0.375) / (n + 0.25))`` (Hozo et al.
    2005; Wan et al. 2014, eq. 9), the estimates :mod:`planner.io.summaries` uses on the log
    scale.
    """
    if values:
        n = len(values)
        m = sum(values) / n
        sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else None
        return m, sd, n
    s = _spec(spec)
    n = int(s["n"])
    if "mean" in s:
        return s["mean"], s.get("sd"), n
    from scipy.stats import norm

    xi = 2.0 * norm.ppf((n - 0.375) / (n + 0.25))
    return (s["min"] + 2 * s["median"] + s["max"]) / 4.0, (s["max"] - s["min"]) / xi, n


def classical(case: dict) -> dict:
    """Welch's t and the z-test on one case: ``{"welch": call, "z": call}``, each call
    ``{"p": float | None, "call": -1 | 0 | +1 | None}`` (None: not applicable, < 2 runs)."""
    from scipy import stats

    ma, sa, na = arm_stats(case["a"], case["a_spec"])
    mb, sb, nb = arm_stats(case["b"], case["b_spec"])
    if na < 2 or nb < 2 or sa is None or sb is None:
        na_call = {"p": None, "call": None}
        return {"welch": na_call, "z": dict(na_call)}
    direction = 1 if case["hib"] else -1
    sign = direction * (1 if mb > ma else -1 if mb < ma else 0)
    se = math.sqrt(sa ** 2 / na + sb ** 2 / nb)
    if se == 0:
        p_w = p_z = 0.0 if mb != ma else 1.0
    else:
        p_w = float(stats.ttest_ind_from_stats(mb, sb, nb, ma, sa, na, equal_var=False).pvalue)
        p_z = float(2 * stats.norm.sf(abs(mb - ma) / se))
    return {"welch": {"p": p_w, "call": sign if p_w < ALPHA else 0},
            "z": {"p": p_z, "call": sign if p_z < ALPHA else 0}}


def verdict_args(case: dict, stated: bool = False) -> list[str]:
    """The ``planner verdict`` arguments of a case's quick form (JSON output); ``stated``
    adds ``--sessions`` with the fixture's ``sessions`` column (the layout the source's
    design states) where it is filled."""
    args = ["verdict", "--json"]
    if stated and case.get("sessions"):
        args += ["--sessions", case["sessions"]]
    for arm in "ab":
        if case[arm]:
            args += [f"--{arm}-runs", ",".join(repr(v) for v in case[arm])]
        else:
            args += [f"--{arm}-summary", case[f"{arm}_spec"]]
    args.append("--higher-is-better" if case["hib"] else "--lower-is-better")
    return args


def planner_calls(cases: list[dict], use_subprocess: bool = False,
                  stated: bool = False) -> list[dict]:
    """The planner's verdict on every case: ``{"label", "call", "hdi", "error"}`` each.

    ``call`` is +1 (B better), -1 (B worse) or 0 (equivalent / undecided), None on an error
    (the message in ``error``).
    """
    runner = app = None
    if not use_subprocess:
        from typer.testing import CliRunner

        from planner.cli import app

        runner = CliRunner()
    out = []
    for case in cases:
        args = verdict_args(case, stated)
        if use_subprocess:
            proc = subprocess.run([sys.executable, "-m", "planner", *args], cwd=ROOT,
                                  capture_output=True, text=True)
            code, text = proc.returncode, proc.stdout or proc.stderr
        else:
            res = runner.invoke(app, args)
            code, text = res.exit_code, res.stdout
        if code != 0:
            out.append({"label": None, "call": None, "hdi": None,
                        "error": text.strip().splitlines()[-1] if text.strip() else str(code)})
            continue
        d = json.loads(text)
        label = d.get("rule_label") or d.get("label")
        call = {"B better": 1, "A better": -1}.get(label, 0)
        call *= 1 if case["hib"] else -1  # rule labels speak of the value: higher = better
        dp = d.get("delta_pct") or {}
        out.append({"label": label, "call": call, "error": None,
                    "hdi": (dp.get("hdi_low"), dp.get("hdi_high"))})
    return out


def _share(hits: list[float], weights: list[float]) -> float | None:
    tw = sum(weights)
    return None if tw == 0 else sum(h * w for h, w in zip(hits, weights, strict=True)) / tw


def summarize(cases: list[dict], calls: dict[str, list]) -> dict:
    """Per method: false-claim share on nulls, power and wrong-sign calls on effects.

    Three views: ``all`` (every case; a method that cannot judge a case makes no call on
    it), ``multi`` (cases with >= 2 runs per arm, where all three methods apply) and
    ``by_source`` (``all`` weighted so each source thread counts once).
    """
    groups: dict[str, int] = {}
    for c in cases:
        groups[c["group"]] = groups.get(c["group"], 0) + 1
    res = {}
    for m in calls:
        res[m] = {}
        for view in ("all", "multi", "by_source"):
            keep = [k for k, c in enumerate(cases)
                    if view != "multi" or (c["n_a"] >= 2 and c["n_b"] >= 2)]
            w = {k: (1.0 / groups[cases[k]["group"]] if view == "by_source" else 1.0)
                 for k in keep}
            nulls = [k for k in keep if cases[k]["sign"] == 0]
            effs = [k for k in keep if cases[k]["sign"] != 0]
            mc = calls[m]  # None (not applicable) counts as no call

            def call(k, mc=mc):
                return mc[k] or 0

            res[m][view] = {
                "n_null": len(nulls), "n_effect": len(effs),
                "false_claims": _share([float(call(k) != 0) for k in nulls],
                                       [w[k] for k in nulls]),
                "power": _share([float(call(k) == cases[k]["sign"]) for k in effs],
                                [w[k] for k in effs]),
                "wrong_sign": sum(1 for k in effs if call(k) == -cases[k]["sign"]),
                "not_applicable": sum(1 for k in keep if calls[m][k] is None),
            }
    return res


def _fmt(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:5.1f}%"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixture", type=Path, default=FIXTURE)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--subprocess", action="store_true",
                    help="call `python -m planner verdict` per case (slow) instead of the "
                         "CLI app in this process")
    ap.add_argument("--stated", action="store_true",
                    help="also run the planner with the session layout each source states "
                         "(the fixture's sessions column, verdict --sessions): method "
                         "'stated'")
    ns = ap.parse_args(argv)
    cases = read_cases(ns.fixture)
    pl = planner_calls(cases, ns.subprocess)
    cl = [classical(c) for c in cases]
    calls = {"planner": [p["call"] for p in pl], "welch": [c["welch"]["call"] for c in cl],
             "z": [c["z"]["call"] for c in cl]}
    st = planner_calls(cases, ns.subprocess, stated=True) if ns.stated else None
    if st is not None:
        calls["stated"] = [p["call"] for p in st]
    summary = summarize(cases, calls)
    rows = []
    for i, (c, p, k) in enumerate(zip(cases, pl, cl, strict=True)):
        rows.append({"case_id": c["case_id"], "kind": c["kind"], "truth_sign": c["sign"],
                     "n_a": c["n_a"], "n_b": c["n_b"], "planner_label": p["label"],
                     "planner_call": p["call"], "planner_hdi_pct": p["hdi"],
                     "planner_error": p["error"], "welch_p": k["welch"]["p"],
                     "welch_call": k["welch"]["call"], "z_p": k["z"]["p"],
                     "z_call": k["z"]["call"],
                     **({} if st is None else {"stated_label": st[i]["label"],
                                               "stated_call": st[i]["call"],
                                               "sessions": c.get("sessions") or ""})})
    result = {"cases": rows, "summary": summary}
    if ns.json:
        print(json.dumps(result, indent=1, sort_keys=True))
        return result
    sym = {1: "+", -1: "-", 0: ".", None: "n/a"}
    print(f"{'case':44s} {'kind':6s} truth  n_a n_b  {'planner':16s} {'welch':>10s} {'z':>10s}")
    for r in rows:
        lab = r["planner_label"] or ("ERR " + (r["planner_error"] or ""))[:16]
        wp = "" if r["welch_p"] is None else f"p={r['welch_p']:.3g}"
        zp = "" if r["z_p"] is None else f"p={r['z_p']:.3g}"
        print(f"{r['case_id'][:44]:44s} {r['kind']:6s} {sym[r['truth_sign']]:>5s} "
              f"{r['n_a']:4d} {r['n_b']:3d}  {lab[:12]:12s} {sym[r['planner_call']]:>3s} "
              f"{sym[r['welch_call']]:>3s} {wp:>9s} {sym[r['z_call']]:>3s} {zp:>9s}")
    print()
    for view, title in (("all", "all cases"), ("multi", ">= 2 runs per arm"),
                        ("by_source", "all cases, each source thread weighted once")):
        s0 = summary["planner"][view]
        print(f"{title}: {s0['n_null']} nulls, {s0['n_effect']} effects")
        print(f"  {'method':8s} {'false claims':>13s} {'power':>7s} {'wrong sign':>11s} "
              f"{'n/a':>4s}")
        for m in calls:
            s = summary[m][view]
            print(f"  {m:8s} {_fmt(s['false_claims']):>13s} {_fmt(s['power']):>7s} "
                  f"{s['wrong_sign']:>11d} {s['not_applicable']:>4d}")
    return result


if __name__ == "__main__":
    main()
