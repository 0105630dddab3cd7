"""The population prior over platforms, measured held out: power and false claims on the
public cases (leave one platform out), the issue-20 quick-form cases, and A/A tables drawn
from the fitted hierarchy.

For each public case (tests/fixtures/public_cases.csv) the population prior is refitted
without any run of the case's platform (bench/fit_population.py's fit with that platform
excluded), and the case is judged by the exact engine under it, exactly as ``planner verdict``
reads the quick form (no platform: each arm's runs one session; ROPE 0.1 %). Welch's t and
the z-test on the same cases come from bench/bench_public_cases.py.

Usage: python bench/bench_population.py [--sim 400] [--json OUT] [--no-lopo]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

ROPE = math.log1p(0.001)
#: The ratio family refitted (bench/fit_population.py's --family; None: its FAMILY).
FAMILY = None
#: (platform, config, session) triples left out of every refit (None: fit_population's
#: DROP_SESSIONS; --keep-all-sessions and --drop-session for sensitivity runs).
DROP: tuple | None = None
#: Warm-started two-round refits (--quick, for screening families; the shipped figures use
#: full refits).
QUICK = False
ONLY_MULTI = False

#: The quick-form cases of issue 20 (values, and the label wanted).
ISSUE_CASES = [
    ("63.6,63.7 vs 61.8,61.6 (confirmed -3 %)", [63.6, 63.7], [61.8, 61.6], {}, "A better"),
    ("35.73,35.76,35.94 vs 34.43,34.47,35.23 (confirmed -3 %)", [35.73, 35.76, 35.94],
     [34.43, 34.47, 35.23], {}, "A better"),
    ("197 vs 340, --cv 20 % (a same-config pair)", [197.0], [340.0], {"cv": "20%"},
     "undecided"),
    ("10,000 runs 308.0..308.6 vs 309.0..309.6", list(np.linspace(308.0, 308.6, 10000)),
     list(np.linspace(309.0, 309.6, 10000)), {}, "B better or undecided"),
]


def _label(post, lower: bool = False) -> tuple[str, int, tuple]:
    from models.stats.decision import label_from

    s = post.delta(0, 1, ROPE)
    lab = label_from(s)
    raw = {"B better": 1, "A better": -1}.get(lab, 0)
    return lab, (-raw if lower else raw), (s.hdi_low, s.hdi_high)


def prior_without(platform: str | None, cache: dict):
    """The population NoisePrior fitted without ``platform``'s runs (None: the shipped one)."""
    from models.stats.population import PopulationPrior, population_noise_prior

    if platform is None and FAMILY is None and DROP is None:
        return population_noise_prior()
    if platform not in cache:
        from fit_population import fit

        kw = {}
        if platform and QUICK:
            # screening: warm-started from the fit on every platform, two rounds
            if "_full" not in cache:
                cache["_full"] = fit((), FAMILY, DROP, marginals=False)["fit"]["theta"]
            kw = {"start": list(cache["_full"].values()), "rounds": 2}
        d = fit((platform,) if platform else (), FAMILY, DROP, marginals=False, **kw)
        cache[platform] = population_noise_prior(PopulationPrior.from_dict(d["prior"]),
                                                 source=f"population without {platform}")
    return cache[platform]


def judge_values(a, b, prior, *, a_summary=None, b_summary=None, cv=None, lower=False):
    from models.stats.tps_exact import fit_exact
    from planner.decide.comparison import from_values

    comp = from_values(a or None, b or None, a_summary=a_summary, b_summary=b_summary, cv=cv,
                       lower_is_better=lower)
    pr = comp.prior if cv is not None else prior
    return _label(fit_exact(comp.data(), pr), lower)


def public_cases(lopo: bool = True) -> dict:
    from bench_public_cases import classical, read_cases

    cases = read_cases()
    cache: dict = {}
    rows = []
    for c in cases:
        if ONLY_MULTI and min(c["n_a"], c["n_b"]) < 2:
            continue
        pr = prior_without(c["platform"] if lopo else None, cache)
        lower = not bool(int(c.get("higher_is_better") or 1))
        lab, call, hdi = judge_values(c["a"], c["b"], pr, a_summary=c.get("a_spec"),
                                      b_summary=c.get("b_spec"), lower=lower)
        cl = classical(c)
        rows.append({"case": c["case_id"], "kind": c["kind"], "truth": c["sign"],
                     "platform": c["platform"], "n": (c["n_a"], c["n_b"]), "planner": call,
                     "label": lab, "hdi_pct": [100 * math.expm1(h) for h in hdi],
                     "welch": cl["welch"]["call"], "z": cl["z"]["call"]})
    return {"rows": rows, "summary": summarise(rows)}


def summarise(rows: list[dict]) -> dict:
    out = {}
    for view, keep in (("all", lambda r: True),
                       (">=2 runs per arm", lambda r: min(r["n"]) >= 2)):
        sel = [r for r in rows if keep(r)]
        nulls = [r for r in sel if r["kind"] == "null"]
        effects = [r for r in sel if r["kind"] == "effect"]
        v = {"nulls": len(nulls), "effects": len(effects)}
        for m in ("planner", "welch", "z"):
            judged_n = [r for r in nulls if r[m] is not None]
            judged_e = [r for r in effects if r[m] is not None]
            v[m] = {
                "false_claims": sum(r[m] != 0 for r in judged_n) / max(len(judged_n), 1),
                "nulls_judged": len(judged_n),
                "power": sum(r[m] == r["truth"] for r in judged_e) / max(len(effects), 1),
                "wrong_sign": sum(r[m] == -r["truth"] for r in judged_e),
            }
        out[view] = v
    return out


def issue_cases() -> list[dict]:
    out = []
    prior = prior_without(None, {})
    for name, a, b, kw, want in ISSUE_CASES:
        t = time.perf_counter()
        lab, _, hdi = judge_values(a, b, prior, **kw)
        out.append({"case": name, "label": lab, "want": want,
                    "hdi_pct": [100 * math.expm1(h) for h in hdi],
                    "seconds": time.perf_counter() - t})
    return out


def simulated_aa(n: int, seed: int = 20) -> dict:
    """A/A quick forms drawn from the fitted hierarchy: a platform's (tau, sigma) from the
    population prior, then 2 sessions (A's, B's) of k runs each, k in {2, 3, 5, 10}; the
    share called decisively (should be <= 5 %), overall and by the drawn ratio tau/sigma."""
    from models.stats.tps_exact import fit_exact
    from models.stats.tps_model import TPSData

    prior = prior_without(None, {})
    rng = np.random.default_rng(seed)
    res = {}
    for k in (2, 3, 5, 10):
        tau, sig = prior.joint.rvs(n, rng)
        dec = np.zeros(n, bool)
        for i in range(n):
            off = rng.normal(0, tau[i], 2)
            y = np.concatenate([off[0] + rng.normal(0, sig[i], k), off[1] + rng.normal(0, sig[i], k)])
            d = TPSData.from_arrays(300 * np.exp(y), ["A"] * k + ["B"] * k,
                                    ["A-session"] * k + ["B-session"] * k, None, None,
                                    use_cold=False)
            lab, _, _ = _label(fit_exact(d, prior))
            dec[i] = lab in ("A better", "B better")
        r = tau / sig
        res[f"{k} runs per arm"] = {"decisive": float(dec.mean()),
                                   "ratio>q90": float(dec[r > np.quantile(r, 0.9)].mean())}
    return res


def session_pairs_aa(max_pairs: int = 30) -> dict:
    """A/A on real data: every pair of sessions of one config (units of bench/fit_population.py
    with two or more sessions), A = one session's runs, B = the other's, judged as quick forms
    with the population prior refitted without the unit's platform (leave one platform out:
    stricter than leave one group out). Share decisive per (platform, metric family); at most
    ``max_pairs`` pairs per unit (the first, in session order)."""
    from models.stats.noise_hierarchy import metric_family
    from fit_population import units_from_tables

    units, _ = units_from_tables()
    cache: dict = {}
    out: dict = {}
    for u in units:
        if u.n.size < 2:
            continue
        plat, metric = u.key.split("/")[0], u.key.split("/")[1]
        fam = f"{plat}/{metric_family(metric)}"
        pr = prior_without(plat, cache)
        # the unit keeps only session summaries: rebuild each session's runs from its mean and
        # within-session SD (the verdict sees them only through these statistics)
        sess = []
        for n, m, W in zip(u.n, u.m, u.W, strict=True):
            n = int(n)
            if n == 1:
                sess.append([math.exp(m)])
                continue
            z = np.linspace(-1, 1, n)
            z = (z - z.mean()) / z.std(ddof=1) * math.sqrt(W / (n - 1))
            sess.append(list(np.exp(m + z)))
        k = 0
        for i in range(len(sess)):
            for j in range(i + 1, len(sess)):
                if k >= max_pairs:
                    break
                lab, _, _ = judge_values(sess[i], sess[j], pr)
                d = out.setdefault(fam, {"pairs": 0, "decisive": 0})
                d["pairs"] += 1
                d["decisive"] += lab in ("A better", "B better")
                k += 1
    for d in out.values():
        d["share"] = d["decisive"] / d["pairs"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", type=int, default=200)
    ap.add_argument("--json")
    ap.add_argument("--no-lopo", action="store_true")
    ap.add_argument("--family", help="refit every prior with this ratio family")
    ap.add_argument("--skip", default="", help="comma list of: issue,pairs,public")
    ap.add_argument("--drop-session", action="append", default=[],
                    help="PLATFORM|CONFIG|SESSION left out of every refit (besides DROP_SESSIONS)")
    ap.add_argument("--keep-all-sessions", action="store_true",
                    help="refit without fit_population's DROP_SESSIONS")
    ap.add_argument("--quick", action="store_true", help="warm-started 2-round refits")
    ap.add_argument("--only-multi", action="store_true",
                    help="public cases with >= 2 runs per arm only")
    a = ap.parse_args()
    global FAMILY, DROP, QUICK, ONLY_MULTI
    QUICK, ONLY_MULTI = a.quick, a.only_multi
    FAMILY = a.family
    if a.drop_session or a.keep_all_sessions:
        from fit_population import DROP_SESSIONS

        DROP = ((() if a.keep_all_sessions else DROP_SESSIONS)
                + tuple(tuple(x.split("|")) for x in a.drop_session))
    skip = set(a.skip.split(","))
    np.seterr(all="ignore")
    t0 = time.perf_counter()
    out = {"issue_cases": issue_cases() if "issue" not in skip else []}
    for r in out["issue_cases"]:
        print(f"{r['case']:60s} {r['label']:10s} (want {r['want']}) HDI "
              f"{r['hdi_pct'][0]:+.2f} .. {r['hdi_pct'][1]:+.2f} %")
    out["session_pairs_aa"] = session_pairs_aa() if "pairs" not in skip else {}
    print(json.dumps(out["session_pairs_aa"], indent=1))
    out["public"] = public_cases(lopo=not a.no_lopo) if "public" not in skip else {
        "rows": [], "summary": {}}
    for r in out["public"]["rows"]:
        print(f"{r['case']:34s} {r['kind']:6s} truth {r['truth']:+d} n={r['n']} planner "
              f"{r['planner']:+d} ({r['label']}, {r['hdi_pct'][0]:+.1f}..{r['hdi_pct'][1]:+.1f} %)"
              f" welch {r['welch']} z {r['z']}")
    print(json.dumps(out["public"]["summary"], indent=1))
    if a.sim:
        out["simulated_aa"] = simulated_aa(a.sim)
        print(json.dumps(out["simulated_aa"], indent=1))
    print(f"({time.perf_counter() - t0:.0f} s)")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
