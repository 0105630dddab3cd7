"""Whole-process speed: each ``planner`` command from the shell prompt back to the prompt.

Usage::

    python bench/bench_process.py [--runs 5] [--quick] [--only NAME ...] [--no-cold] [--stages]

Every row runs as a separate process, next to its baseline in the same run (so a loaded
machine slows both alike):

* ``draft-big``: ``planner draft BIG.jsonl --policy pld --n 2 --depth 24`` on the shipped
  ``ar_reference_bf16`` capture repeated 40 times (2.6 M completion tokens, ~23 MB JSONL),
  against the straightforward pure-Python replay of the same file (``json`` per line,
  ``pld_reference_replay``); target >= 3x faster than that replay;
* ``scale-51M``: 100,000 prompts x 512 tokens (51.2 M tokens, resampled from the real
  (prompt, completion) pairs of the four P128 captures) read from a JSONL file, PLD n=2
  D=24 profile + walk; target <= 30 s and <= 2 GiB peak RSS, file parse included;
* ``verdict-quick``, ``verdict-readme``, ``verdict-sessions``, ``repeats``, ``budget``,
  ``draft``: against the floor ``python -c "import numpy"``. ``verdict-sessions`` is the
  12-run table of ``tests/planner/decide/test_one_answer.py`` (:data:`SESSIONS`: one
  machine, two server sessions per config, rep 0 of each session cold; sessions modelled,
  four cold groups, a 161,250-point posterior), written to the temporary folder.

Before timing, the bytecode of ``models/`` and ``planner/`` is written (``compileall``), as
an installed package has it: with ``PYTHONDONTWRITEBYTECODE`` set (as in some shells and
CI) every run would otherwise compile each edited module from source again, a cost no user
pays. Both a command and its baseline import these packages.

The kernels run on numba's JIT with its on-disk cache, the default path. Medians of
``--runs`` runs after one warm-up run (numba cache warm), and the peak RSS of each child
(``os.wait4``; Linux reports KiB). ``--stages`` adds where a ``draft-big`` process spends
its CPU: the same pipeline as ``planner draft`` (imports, the kernels' first dispatch,
capture parse, PLD profile, walks, bootstrap, worth-a-run sizing), one stage after another
in one fresh process (median of ``--runs`` processes). A second table runs the numba
commands once each with a fresh, empty ``NUMBA_CACHE_DIR`` (numba's first-run compile
time). The big inputs are written to a temporary folder, removed at the end (``--keep``
keeps it).
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "captures"
P128 = ["ar_reference_bf16", "ar_reference_int4_frontier_specoff",
        "mtp_spec_on_k7_int4_frontier", "mtp_spec_on_k6_int4_qat_body"]

#: The pure-Python baseline of ``draft-big``: read the file with json, replay PLD.
REFERENCE_REPLAY = """
import json, sys
from models.drafting.lookup import pld_reference_replay
prompts, comps = [], []
with open(sys.argv[1], encoding="utf-8") as fh:
    for line in fh:
        if line.strip():
            r = json.loads(line)
            prompts.append(r["prompt_token_ids"]); comps.append(r["completion_token_ids"])
steps = pld_reference_replay(prompts, comps, 2, 24)
n = sum(len(c) for c in comps); f = sum(len(s) for s in steps)
print(f"tokens/forward {n / f:.4f}")
"""

#: ``verdict-sessions``: one machine, each config in two server sessions, rep 0 of each cold
#: (``tests/planner/decide/test_one_answer.py``'s SESSIONS table).
SESSIONS = "config,tps,instance,session,rep,phase,platform,metric,workload\n" + "".join(
    f"{c},{v},m1,{c}{s},{k},measure,local-a10g,decode_wall,128x512\n"
    for c, s, vals in (("A", 1, (450.2, 452.1, 452.6)), ("A", 2, (449.0, 451.3, 451.0)),
                       ("B", 1, (450.0, 452.9, 452.2)), ("B", 2, (451.1, 452.0, 452.4)))
    for k, v in enumerate(vals))

#: ``scale-51M``: parse the file (load_capture), then PLD profile + walk in batches of
#: 8,192 requests (profiles of 51 M positions at once would not fit in 2 GiB), summary.
SCALE_REPLAY = """
import sys
from models.drafting import PLD, draft_profiles, load_capture, summarize
cap = load_capture(sys.argv[1])
tokens = forwards = 0.0
for a in range(0, len(cap), 8192):
    c = cap.completions[a:a + 8192]
    s = summarize(draft_profiles(cap.prompts[a:a + 8192], c, PLD(2, 24)).walk())
    n = sum(len(x) for x in c)
    tokens += n
    forwards += n / s.tokens_per_forward
print(f"{int(tokens)} tokens, tokens/forward {tokens / forwards:.4f}")
"""

#: ``--stages``: the stages of ``planner draft BIG.jsonl --policy pld --n 2 --depth 24`` in
#: one process, CPU seconds each (what ``run_draft`` does for one lookup policy).
STAGES = """
import sys, time
t = [time.process_time()]
out = []
def lap(name):
    now = time.process_time(); out.append((name, now - t[0])); t[0] = now
import numpy as np
import planner.cli, planner.decide.draft as pd
lap("python, numpy, CLI imports")
from models.drafting import capture
capture._parse_token_arrays(np.frombuffer(b"[1]", np.uint8), np.array([0, 3]),
                            np.empty(1, np.int32), np.empty(1, np.int64))
lap("first kernel dispatch (numba import + cache load)")
from models.drafting import PLD, draft_profiles, walk, bootstrap_ratios
from models.drafting.cost import load_cost_model
cap = capture.load_capture(sys.argv[1])
lap("capture parse (kernel)")
b = draft_profiles(cap, PLD(2, 24))
lap("PLD profile (kernel)")
cost = load_cost_model("F")
L = b.lengths
w0 = walk(L, mode="ar", cost=cost.step_ms, trace=False)
w = walk(L, mode="lookup", lookup=b, cost=cost.step_ms, trace=False)
lap("walks ar + pld (kernel)")
st = {"tpf0": (w0.tokens, w0.forwards), "rate0": (w0.tokens, w0.time_ms),
      "tpf1": (w.tokens, w.forwards), "rate1": (w.tokens, w.time_ms)}
boot = bootstrap_ratios(st, n_boot=2000, seed=np.random.default_rng(0), groups=cap.groups)
lap("bootstrap 2000 x prompts (kernel)")
from models.stats.noise import platform_prior
from planner.decide.costs import cost_model
g = cost.tps(boot["rate1"], 1.0) - cost.tps(boot["rate0"], 1.0)
pd.worth_a_run(g, 0.57, baseline_tps=float(cost.tps(1.0, 1.0)),
               prior=platform_prior("hf-a10g-small"), cost=cost_model("hf-a10g-small"))
lap("worth-a-run sizing (imports + assurance kernels)")
for name, v in out:
    print(f"{name}\t{v:.4f}")
print(f"numba imported\t{int('numba' in sys.modules)}")
"""

FLOOR = [sys.executable, "-c", "import numpy"]


def planner(*args: str) -> list:
    return [sys.executable, "-m", "planner", *args]


def make_inputs(tmp: Path, n_scale: int) -> dict:
    """Write BIG.jsonl (bf16 capture x 40) and SCALE.jsonl (n_scale x <= 512 tokens)."""
    big = tmp / "BIG.jsonl"
    with gzip.open(EX / "ar_reference_bf16.jsonl.gz", "rb") as fh:
        one = fh.read()
    big.write_bytes(one * 40)
    import json
    pairs = []
    for f in P128:
        with gzip.open(EX / f"{f}.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                pairs.append(('"prompt_token_ids":' + json.dumps(r["prompt_token_ids"],
                                                                 separators=(",", ":"))
                              + ',"completion_token_ids":'
                              + json.dumps(r["completion_token_ids"][:512],
                                           separators=(",", ":")) + "}\n").encode())
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(pairs), size=n_scale)
    scale = tmp / "SCALE.jsonl"
    with open(scale, "wb") as out:
        for i, j in enumerate(idx.tolist()):
            out.write(b'{"id":"syn-%d",' % i + pairs[j])
    ref = tmp / "reference_replay.py"
    ref.write_text(REFERENCE_REPLAY)
    sc = tmp / "scale_replay.py"
    sc.write_text(SCALE_REPLAY)
    stages = tmp / "draft_stages.py"
    stages.write_text(STAGES)
    return {"big": big, "scale": scale, "ref": ref, "scale_py": sc, "stages": stages}


def stage_table(script: Path, big: Path, env: dict, runs: int) -> None:
    """Print the median CPU seconds of each ``draft-big`` stage over ``runs`` processes."""
    per: dict = {}
    imported = set()
    for i in range(runs + 1):
        out = subprocess.run([sys.executable, str(script), str(big)], cwd=ROOT, env=env,
                             capture_output=True, text=True, check=True).stdout
        if i == 0:
            continue  # warm-up
        for line in out.splitlines():
            name, v = line.split("\t")
            if name == "numba imported":
                imported.add(v == "1")
                continue
            per.setdefault(name, []).append(float(v))
    total = sum(statistics.median(v) for v in per.values())
    print(f"\ndraft-big stages (one process, CPU s, median of {runs}; numba "
          f"imported: {'yes' if True in imported else 'no'}):")
    for name, v in per.items():
        m = statistics.median(v)
        print(f"  {name:48s} {m:6.3f}  {100 * m / total:5.1f} %")
    print(f"  {'sum':48s} {total:6.3f}")


def run_once(cmd: list, env: dict) -> tuple:
    """Wall seconds, peak RSS (MiB), exit code and CPU seconds (user + system) of one child."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.stderr.write(f"  ! {' '.join(map(str, cmd[2:]))} exited {p.returncode}: "
                         f"{err.decode(errors='replace').strip().splitlines()[-1:]}\n")
    return dt, ru.ru_maxrss / 1024.0, p.returncode, ru.ru_utime + ru.ru_stime


def measure(cmd: list, env: dict, runs: int) -> tuple:
    """Median wall s, peak RSS (MiB) and median CPU s of ``runs`` runs after a warm-up."""
    run_once(cmd, env)  # warm-up (page cache, numba cache)
    ts, rss, cpu = [], [], []
    for _ in range(runs):
        dt, mib, _, c = run_once(cmd, env)
        ts.append(dt)
        rss.append(mib)
        cpu.append(c)
    return statistics.median(ts), max(rss), statistics.median(cpu)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs per command (median)")
    ap.add_argument("--quick", action="store_true", help="3 runs, 10,000-prompt scale row")
    ap.add_argument("--only", nargs="*", default=None, help="row names to run")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold-cache table")
    ap.add_argument("--keep", action="store_true", help="keep the temporary inputs")
    ap.add_argument("--stages", action="store_true",
                    help="also break a draft-big process into its stages (CPU s)")
    args = ap.parse_args(argv)
    runs = 3 if args.quick else args.runs
    n_scale = 10_000 if args.quick else 100_000

    import compileall

    for pkg in ("models", "planner"):  # bytecode as installed (see the module docstring)
        compileall.compile_dir(str(ROOT / pkg), quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="planner-bench-"))
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    try:
        t0 = time.perf_counter()
        f = make_inputs(tmp, n_scale)
        print(f"inputs in {tmp} ({time.perf_counter() - t0:.1f} s): BIG.jsonl "
              f"{f['big'].stat().st_size / 1e6:.1f} MB, SCALE.jsonl "
              f"{f['scale'].stat().st_size / 1e6:.1f} MB ({n_scale:,} prompts)")
        py = sys.executable
        sessions = tmp / "sessions_cold.csv"
        sessions.write_text(SESSIONS)
        rows = [
            ("draft-big", planner("draft", str(f["big"]), "--policy", "pld", "--n", "2",
                                  "--depth", "24"),
             [py, str(f["ref"]), str(f["big"])], "pure-Python replay", ">= 3x baseline"),
            (f"scale-{n_scale * 512 / 1e6:.1f}M", [py, str(f["scale_py"]), str(f["scale"])],
             None, None, "<= 30 s, <= 2048 MiB"),
            ("verdict-quick", planner("verdict", "--a", "308.49", "--b", "308.05"),
             FLOOR, "import numpy", "<= 0.5 s"),
            ("verdict-readme", planner(
                "verdict", "examples/runs/tps_runs.csv", "--a", "fa2sw_precache_agentI",
                "--b", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2", "--run-group",
                "validity/free_ceiling_wallclock_realize/ab_out"),
             FLOOR, "import numpy", "<= 0.5 s"),
            ("verdict-sessions", planner("verdict", str(sessions), "--a", "A", "--b", "B"),
             FLOOR, "import numpy", "<= 3 s cpu"),
            ("repeats", planner("repeats", "--delta", "0.44", "--platform", "hf-a10g-small"),
             FLOOR, "import numpy", "<= 3 s"),
            ("budget", planner("budget", "examples/plan.toml"), FLOOR, "import numpy",
             "<= 5 s"),
            ("draft", planner("draft"), FLOOR, "import numpy", "<= 2 s"),
        ]
        if args.only:
            rows = [r for r in rows if any(r[0].startswith(o) for o in args.only)]
        numba_rows = {"draft-big", "verdict-sessions", "repeats", "budget", "draft"}

        print(f"\nwarm numba cache: median of {runs} after a warm-up; "
              f"{platform.machine()} {os.cpu_count()} cores, Python "
              f"{platform.python_version()}, {date.today().isoformat()}")
        head = (f"{'command':16s} {'median s':>9s} {'cpu s':>6s} {'peak MiB':>9s} "
                f"{'baseline':>20s} {'base s':>7s} {'base cpu':>8s} {'ratio':>7s} "
                f"{'cpu ratio':>9s}  target")
        print(head)
        print("-" * len(head))
        for name, cmd, base, base_name, target in rows:
            t, rss, c = measure(cmd, env, runs)
            if base is not None:
                tb, _, cb = measure(base, env, runs)
                if name.startswith("draft-big"):
                    ratio, cratio = f"{tb / t:6.2f}x", f"{cb / c:8.2f}x"
                else:
                    ratio, cratio = f"{t / tb:6.1f}x", f"{c / cb:8.1f}x"
                print(f"{name:16s} {t:9.2f} {c:6.2f} {rss:9.0f} {base_name:>20s} {tb:7.2f} "
                      f"{cb:8.2f} {ratio:>7s} {cratio:>9s}  {target}")
            else:
                print(f"{name:16s} {t:9.2f} {c:6.2f} {rss:9.0f} {'-':>20s} {'-':>7s} {'-':>8s} "
                      f"{'-':>7s} {'-':>9s}  {target}")
        print("ratio: draft-big = baseline / command (speed-up); others = command / floor; "
              "cpu: user + system seconds of the child (what a loaded machine does not inflate "
              "much)")

        if args.stages:
            stage_table(f["stages"], f["big"], env, runs)

        if not args.no_cold:
            print("\ncold numba cache (fresh empty NUMBA_CACHE_DIR, one run each; the "
                  "compile happens once per user and kernel version)")
            print(f"{'command':16s} {'cold s':>9s} {'warm s':>9s} {'compile s':>10s}")
            for name, cmd, *_ in rows:
                if name not in numba_rows:
                    continue
                d = tempfile.mkdtemp(prefix="numba-cold-", dir=tmp)
                cold, _, _, _ = run_once(cmd, dict(env, NUMBA_CACHE_DIR=d))
                warm, _, _, _ = run_once(cmd, dict(env, NUMBA_CACHE_DIR=d))
                print(f"{name:16s} {cold:9.2f} {warm:9.2f} {cold - warm:10.2f}")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
