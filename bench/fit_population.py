"""Fit the population prior over platforms (models/stats/population.py) and write
models/data/population_prior.json.

Data: every runs table with repeated runs: the shipped examples/runs/tps_runs.csv (local A10G
cells, official hf-a10g-small rows) and models/data/public_runs.csv (public repeated runs of
other hardware and serving stacks, sourced in models/data/public_runs.md) when present.

Units: one config of one (platform, metric, workload) on one instance; its sessions are its
(run_group, session) groups; warm runs only (cold first runs and warmups dropped, as the noise
hierarchy does). A platform's units weigh at most PLATFORM_CAP in total.

Usage:
    python bench/fit_population.py            # fit and write the JSON
    python bench/fit_population.py --check    # fit and compare with the shipped JSON
    python bench/fit_population.py --exclude-platform P   # a leave-one-platform-out fit
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("examples/runs/tps_runs.csv", "models/data/public_runs.csv")
OUT = ROOT / "models/data/population_prior.json"
#: Sessions left out of the units, (platform, config, session), each for a reason its source
#: gives: the issue-1863 reading of vllm.cpp's grouped 14B model, which vllm.cpp#2095 says "may
#: not be the one 1863 used" (another model file: not a session of the unit's config; the dense
#: model's 1863 reading, same commit and file, stays). It was the second of the only two units
#: whose session offsets are 100x their run noise; without it the ratio's fit keeps its heavy
#: tail (t df 0.5) but weighs it as one unit, not two (docs/model.md, population section).
DROP_SESSIONS = (("rx9060xt-vllmcpp-rocm", "vllmcpp:4b1154bc5:grouped", "issue1863-recorded"),)


def canon(platform: str) -> str:
    from planner.io.platforms import noise_cell

    return noise_cell(platform) or (platform or "?").strip().lower()


_TABLES_READ: dict = {}


def units_from_tables(paths=TABLES, exclude: tuple = (), drop: tuple = DROP_SESSIONS):
    """Units (models.stats.population.Unit) of every table that exists, sorted by key.

    ``exclude``: platforms left out (leave one platform out); ``drop``: (platform, config,
    session) triples left out (:data:`DROP_SESSIONS`, plus ``--drop-session``)."""
    from models.stats.population import unit_from_sessions
    from planner.io.runs import read_runs

    groups: dict = {}
    used = []
    for rel in paths:
        p = ROOT / rel
        if not p.exists():
            continue
        used.append(rel)
        if rel not in _TABLES_READ:  # a leave-one-platform-out study refits 30 times
            _TABLES_READ[rel] = read_runs(p).measured()
        t = _TABLES_READ[rel]
        # cold first runs: the shipped table's (its platforms model them with the cold term);
        # in public tables only the rows a source marks cold (a user's quick-form runs carry
        # whatever cold starts their set-up has, and so does the population's noise)
        cold = t.cold_flags() if rel == TABLES[0] else [r.cold is True for r in t.runs]
        for r, c in zip(t.runs, cold, strict=True):
            plat = canon(r.platform)
            if c or plat in exclude or (plat, r.config, r.session) in drop:
                continue
            # sessions within one instance: the quick forms' offset is between two sessions of
            # one box; sessions on other machines (every official HF job, one config over four
            # local GPUs) measure the between-instance scale, which is not the session's
            key = (plat, r.metric or "?", r.workload or "?", r.config, r.instance or f"#{r.line}")
            sess = (r.run_group, r.session)
            groups.setdefault(key, {}).setdefault(sess, []).append(r.tps)
    units = []
    for key in sorted(groups):
        sessions = [groups[key][s] for s in sorted(groups[key])]
        units.append(unit_from_sessions(key[0], "/".join(key[:4]), sessions))
    return units, used


#: The ratio family shipped (models.stats.population.FAMILIES).
FAMILY = "t"


def fit(exclude: tuple = (), family: str | None = None, drop: tuple | None = None, *,
        marginals: bool = True, **kw):
    """The population fit as written to models/data/population_prior.json; ``marginals=False``
    leaves out the tau / sigma marginal summaries (200,000 draws each; a leave-one-platform-out
    study reads only ``prior`` and the NoisePrior it builds computes them again)."""
    from models.stats.population import SCHEMA, PLATFORM_CAP, _marginals, fit_population

    drop = DROP_SESSIONS if drop is None else drop
    units, used = units_from_tables(exclude=exclude, drop=drop)
    pp, info = fit_population(units, family=family or FAMILY, **kw)
    marg = {}
    if marginals:
        tau, sigma = _marginals(pp)
        marg = {"marginals": {"tau": tau.to_dict(), "sigma": sigma.to_dict()}}
    return {
        "schema": SCHEMA,
        "prior": pp.to_dict(),
        **marg,
        "source": (f"population prior over platforms, fitted by empirical Bayes (bench/"
                   f"fit_population.py) on {info['units']} repeated-run units of "
                   f"{len(info['platforms'])} platforms ({', '.join(used)}); each platform "
                   f"weighs at most {PLATFORM_CAP:g} units"),
        "fit": {**info, "tables": used, "excluded_platforms": sorted(exclude),
                "dropped_sessions": ["|".join(d) for d in drop]},
        "describe": pp.describe(),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--exclude-platform", action="append", default=[])
    ap.add_argument("--family", default=FAMILY)
    ap.add_argument("--drop-session", action="append", default=[],
                    help="PLATFORM|CONFIG|SESSION, a sensitivity fit without that session too")
    ap.add_argument("--keep-all-sessions", action="store_true",
                    help="a sensitivity fit without DROP_SESSIONS")
    a = ap.parse_args()
    d = fit(tuple(a.exclude_platform), a.family,
            (() if a.keep_all_sessions else DROP_SESSIONS)
            + tuple(tuple(x.split("|")) for x in a.drop_session))
    if a.check:
        shipped = json.loads(OUT.read_text())
        bad = [k for k in shipped["prior"]
               if not math.isclose(shipped["prior"][k], d["prior"][k], rel_tol=1e-3, abs_tol=1e-3)]
        print("differs: " + ", ".join(bad) if bad else "reproduces the shipped fit")
        sys.exit(1 if bad else 0)
    text = json.dumps(d, indent=1, sort_keys=True) + "\n"
    if a.exclude_platform:
        print(text)
    else:
        OUT.write_text(text)
        print(d["describe"])
        print(json.dumps(d["fit"]["se"], indent=1))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
