"""Benchmark the lookup-drafting replay engine.

Usage::

    python bench/bench_replay.py [--quick]

Measures, in one run:

1. numba JIT compile / cache-load time of the kernels (first call, reported separately,
   never inside a timed loop);
2. the straightforward pure-Python PLD replay (``pld_reference_replay``) and the fast
   path (numba per-position profile + numba walk) on ``ar_reference_bf16`` (n=2, D=24),
   checking the per-step accepted lengths are identical, and the speed ratio;
3. n-gram and suffix profile throughput;
4. a scale test: 100,000 prompts x 512 tokens synthesised by resampling real
   (prompt, completion) pairs of the four P128 example captures, processed in chunks,
   wall time and peak RSS (``resource.getrusage``; Linux reports KiB).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from models.drafting import NGram, PLD, Suffix, draft_profiles, load_capture, summarize  # noqa: E402
from models.drafting.lookup import pld_reference_replay, profile_arrays  # noqa: E402

EX = ROOT / "examples" / "captures"
P128 = ["ar_reference_bf16", "ar_reference_int4_frontier_specoff",
        "mtp_spec_on_k7_int4_frontier", "mtp_spec_on_k6_int4_qat_body"]


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(fn, repeats):
    ts = []
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, 10,000-prompt scale test")
    ap.add_argument("--scale-prompts", type=int, default=None)
    ap.add_argument("--chunk", type=int, default=8192, help="prompts per chunk in the scale test")
    args = ap.parse_args(argv)
    reps = 3 if args.quick else 7
    n_scale = args.scale_prompts or (10_000 if args.quick else 100_000)

    cap = load_capture(EX / "ar_reference_bf16.jsonl.gz")
    L = cap.n_completion_tokens
    print(f"capture ar_reference_bf16: {len(cap)} prompts, {L:,} completion tokens")

    # 1. JIT (or on-disk cache load) -- first calls, outside any timed loop
    tiny_p, tiny_c = [[1, 2, 3, 1, 2]], [[3, 1, 2, 3]]
    for name, pol in [("pld", PLD(2, 24)), ("ngram", NGram(2, 6, 5)), ("suffix", Suffix())]:
        t0 = time.perf_counter()
        draft_profiles(tiny_p, tiny_c, pol).walk()
        print(f"first call ({name} profile + walk: JIT compile or cache load): "
              f"{time.perf_counter() - t0:.2f} s")

    # 2. reference vs fast PLD
    t_ref, ref = timed(lambda: pld_reference_replay(cap.prompts, cap.completions, 2, 24),
                       max(1, reps // 2))

    def fast():
        b = draft_profiles(cap, PLD(2, 24))
        return b.walk()

    t_fast, w = timed(fast, reps)
    same = all(w.per_request(r).tolist() == ref[r] for r in range(len(cap)))
    s = summarize(w)
    print(f"pure-Python reference PLD replay: {t_ref * 1e3:8.1f} ms  {L / t_ref / 1e6:6.2f} M tok/s")
    print(f"fast PLD (profile + walk)       : {t_fast * 1e3:8.1f} ms  {L / t_fast / 1e6:6.2f} M tok/s")
    print(f"speed ratio fast / reference    : {t_ref / t_fast:6.1f}x   identical steps: {same}")
    print(f"  (vs the 0.3 M tok/s reference figure of the brief: {L / t_fast / 0.3e6:.0f}x)")
    print(f"  PLD n=2 D=24 tokens/forward {s.tokens_per_forward:.4f}, lookup fraction "
          f"{s.frac_from_lookup:.4f}, runs {s.matched_runs}, runs>8 {s.runs_over_cap}, "
          f"beyond cap {100 * s.frac_beyond_cap:.2f} %")
    t_walk, _ = timed(lambda: draft_profiles(cap, PLD(2, 24)), reps)
    print(f"  of which profile only: {t_walk * 1e3:.1f} ms")
    for name, pol in [("ngram 2..6 k=5", NGram(2, 6, 5)), ("suffix (vLLM defaults)", Suffix())]:
        t, _ = timed(lambda pol=pol: draft_profiles(cap, pol).walk(), max(1, reps // 2))
        print(f"fast {name:24s}: {t * 1e3:8.1f} ms  {L / t / 1e6:6.2f} M tok/s")
    print(f"peak RSS so far: {rss_mib():.0f} MiB")

    # 4. scale test
    recs_p, recs_c = [], []
    for f in P128:
        c = load_capture(EX / f"{f}.jsonl.gz")
        recs_p += c.prompts
        recs_c += [x[:512] for x in c.completions]
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(recs_p), size=n_scale)
    plen_all = np.array([len(p) for p in recs_p], np.int64)
    clen_all = np.array([len(c) for c in recs_c], np.int64)
    pair = [np.concatenate([p, c]).astype(np.int32) for p, c in zip(recs_p, recs_c)]
    tot_tok = 0
    tot_steps = 0
    tot_acc = 0
    t0 = time.perf_counter()
    t_build = 0.0
    for a in range(0, n_scale, args.chunk):
        tb = time.perf_counter()
        ix = idx[a:a + args.chunk]
        plen = plen_all[ix]
        clen = clen_all[ix]
        seq = np.concatenate([pair[i] for i in ix])
        seq_off = np.zeros(len(ix) + 1, np.int64)
        seq_off[1:] = np.cumsum(plen + clen)
        comp_off = np.zeros(len(ix) + 1, np.int64)
        comp_off[1:] = np.cumsum(clen)
        t_build += time.perf_counter() - tb
        b = profile_arrays(seq, seq_off, plen, comp_off, PLD(2, 24))
        w = b.walk()
        tot_tok += int(clen.sum())
        tot_steps += int(w.forwards.sum())
        tot_acc += int(w.step_accepted.sum())
    dt = time.perf_counter() - t0
    print(f"scale: {n_scale:,} prompts x 512 = {tot_tok:,} completion tokens (PLD n=2 D=24): "
          f"{dt:.2f} s wall ({t_build:.2f} s building batches), {tot_tok / dt / 1e6:.1f} M tok/s, "
          f"tokens/forward {tot_tok / tot_steps:.4f}, peak RSS {rss_mib():.0f} MiB")
    ok = dt <= 30 and rss_mib() <= 2048
    print("scale target (<= 30 s, <= 2 GB):", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
