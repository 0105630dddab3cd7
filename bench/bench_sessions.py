"""Session offsets in the exact engine: false decisive calls on simulated A/A tables and
power on real effects, with and without the session term.

Tables: ``machines`` machines; on each, config A in one server session and config B in
another, ``runs`` runs per session; session offsets N(0, session_sd^2), run noise
N(0, run_sd^2) (log scale), instance effects N(0, 0.5 %^2). The default figures are the
project's measured local A10G session SD 0.11 % and run SD 0.03 % (examples/runs/tps_runs.md).

A/A rows take ``--aa-reps`` tables (default 400: a 5 % rate then has an SE of 1.1 %), effect
rows ``--reps``; ``--seed`` draws another, held-out set of tables; ``--only-with`` skips the
"sessions ignored" column (it halves the time).

Usage: python bench/bench_sessions.py [--reps 200] [--aa-reps 400] [--seed 12345]
       [--prior local-a10g] [--only-with]
"""
import argparse
import time

import numpy as np

from models.stats.decision import label_from
from models.stats.noise import platform_prior
from models.stats.tps_exact import fit_exact
from models.stats.tps_model import TPSData


def table(rng, delta, machines, runs, session_sd, run_sd, with_sessions=True):
    tps, cfg, inst, sess = [], [], [], []
    for m in range(machines):
        u = rng.normal(0, 0.005)
        for c, d in (("A", 0.0), ("B", delta)):
            w = rng.normal(0, session_sd)
            for r in range(runs):
                tps.append(300 * np.exp(u + w + d + rng.normal(0, run_sd)))
                cfg.append(c)
                inst.append(f"m{m}")
                sess.append(f"m{m}/{c}" if with_sessions else f"m{m}")
    return TPSData.from_arrays(tps, cfg, inst, None, sess)


def rates(delta, reps, prior, rope, seed=12345, only_with=False, **kw):
    rng = np.random.default_rng(seed)
    out = {"with sessions": 0, "sessions ignored": 0}
    right = {"with sessions": 0, "sessions ignored": 0}
    cols = (("with sessions", True),) if only_with else (("with sessions", True),
                                                         ("sessions ignored", False))
    for _ in range(reps):
        st = rng.bit_generator.state
        for key, ws in cols:
            rng.bit_generator.state = st
            d = table(rng, delta, with_sessions=ws, **kw)
            s = fit_exact(d, prior).delta(0, 1, rope)
            lab = label_from(s)
            decisive = lab in ("B better", "A better")
            out[key] += decisive
            right[key] += lab == ("B better" if delta > 0 else "A better")
    return {k: (out[k] / reps, right[k] / reps) for k in out}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--aa-reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--prior", default="local-a10g")
    ap.add_argument("--only-with", action="store_true")
    a = ap.parse_args()
    prior = platform_prior(a.prior)
    rope = np.log1p(0.001)
    t0 = time.perf_counter()
    print(f"prior {a.prior}; ROPE 0.1 %; {a.aa_reps} tables per A/A row, {a.reps} per effect "
          f"row; seed {a.seed}")
    print("| case | delta | decisive (with sessions) | decisive (sessions ignored) |")
    print("|---|---|---|---|")
    for name, delta, kw in [
        ("A/A, 2 machines x 5 runs, session 0.11 %", 0.0, dict(machines=2, runs=5, session_sd=0.0011, run_sd=0.0003)),
        ("A/A, 4 machines x 5 runs, session 0.11 %", 0.0, dict(machines=4, runs=5, session_sd=0.0011, run_sd=0.0003)),
        ("A/A, 2 machines x 5 runs, session 1 %", 0.0, dict(machines=2, runs=5, session_sd=0.01, run_sd=0.0003)),
        ("+1 %, 2 machines x 5 runs, session 0.11 %", 0.01, dict(machines=2, runs=5, session_sd=0.0011, run_sd=0.0003)),
        ("+0.5 %, 4 machines x 5 runs, session 0.11 %", 0.005, dict(machines=4, runs=5, session_sd=0.0011, run_sd=0.0003)),
        ("+3 %, 2 machines x 3 runs, session 0.5 %", 0.03, dict(machines=2, runs=3, session_sd=0.005, run_sd=0.002)),
    ]:
        r = rates(delta, a.aa_reps if delta == 0 else a.reps, prior, rope, seed=a.seed,
                  only_with=a.only_with, **kw)
        col = 0 if delta == 0 else 1
        print(f"| {name} | {delta:+.3f} | {r['with sessions'][col]:.3f} | {'-' if a.only_with else format(r['sessions ignored'][col], '.3f')} |")
    print(f"({time.perf_counter() - t0:.1f} s; A/A rows: share decisive; effect rows: share called with the right sign)")


if __name__ == "__main__":
    main()
