"""What the three MTP + lookup hybrids share: parameters, defaults, checks and the walk."""

from __future__ import annotations

from dataclasses import replace

from models.drafting.policies import LOOKUP_THRESHOLD, MTP_K, Param, resolve
from models.drafting.policies._common import (K_MTP, MAX_N, MIN_N, N, SUFFIX_OPTIONS,
                                              check_windows, depth)

#: Hybrid-only keys: never passed to the lookup drafter.
OWN = ("lookup", "threshold", "tree_depth", "easy_threshold", "gamma", "k")

PARAMS = (
    Param("k", 7, True, MTP_K, ("K", "num_speculative_tokens"), "MTP chain depth"),
    Param("lookup", "suffix", True, None, (), "lookup drafter: pld, hf-pld, ngram or suffix"),
    Param("threshold", None, False, LOOKUP_THRESHOLD, (),
          "suffix-first: lookup when match_len >= threshold (default n for pld, else 3)"),
    Param("tree_depth", None, False, depth().range, (), "tree: cap on the lookup branch"),
    Param("easy_threshold", None, False, None, (), "match length of the easiness state",
          brief=False),
    Param("lookup_k", None, False, MTP_K, (), "ngram draft tokens inside the hybrid",
          brief=False),
    Param(N.name, N.default, False, N.range, (), N.help, brief=False),
    replace(depth(None, vllm=False), brief=False),
    Param(MIN_N.name, MIN_N.default, False, MIN_N.range, ("prompt_lookup_min",), MIN_N.help,
          brief=False),
    Param(MAX_N.name, MAX_N.default, False, MAX_N.range, ("prompt_lookup_max",), MAX_N.help,
          brief=False),
    *SUFFIX_OPTIONS,
)
assert K_MTP.range is PARAMS[0].range
LOOKUPS = ("pld", "hf-pld", "ngram", "suffix")


def fill(params: dict, ov: dict) -> None:
    """Defaults of a hybrid: k (7), the lookup (the run's, default suffix), the given
    threshold / tree_depth / lookup_k; a pld lookup takes n (2) and depth (24), a suffix
    lookup the given depth."""
    params.setdefault("k", ov.get("k") if ov.get("k") is not None else 7)
    params.setdefault("lookup", ov.get("lookup") or "suffix")
    for key in ("threshold", "tree_depth", "lookup_k"):
        if ov.get(key) is not None:
            params.setdefault(key, ov[key])
    if params["lookup"] == "pld":
        params.setdefault("n", ov.get("n") if ov.get("n") is not None else 2)
        params.setdefault("depth", ov.get("depth") if ov.get("depth") is not None else 24)
    elif ov.get("depth") is not None and params["lookup"] == "suffix":
        params.setdefault("depth", ov["depth"])


def check(params: dict):
    lk = params.get("lookup", "suffix")
    if lk not in LOOKUPS:
        return "lookup", f"hybrid lookup must be pld, hf-pld, ngram or suffix, got {lk!r}"
    return check_windows(params)


def walker(kind: str):
    """The walk of hybrid ``kind`` (``max``, ``suffix-first``, ``tree``)."""

    def _walk(ctx, prm):
        from models.drafting.hybrid import run_hybrid

        k = prm.get("k", 7)
        lk_name = prm.get("lookup", "suffix")
        lk_params = {kk: v for kk, v in prm.items() if kk not in OWN}
        dflt = lk_params.get("n", 2) if lk_name == "pld" else 3
        thr = prm.get("threshold", dflt)
        easy_thr = prm.get("easy_threshold", dflt)
        g, gnote = ctx.gamma_for(lk_name, lk_params, easy_thr)
        batch = ctx.profile(lk_name, lk_params).profiles()
        lists = ([p.accept_len for p in batch], [p.match_len for p in batch],
                 [p.proposed for p in batch])
        if ctx.cache is None or g == 0:
            res = run_hybrid(kind, ctx.lengths, ctx.curves[:, :k], lists, n_rep=ctx.mc_reps,
                             seed=ctx.rng, threshold=thr, tree_depth=prm.get("tree_depth"),
                             gamma=g, easy_threshold=easy_thr, cost=ctx.step_ms,
                             start=ctx.start)
        else:
            res = _cached_hybrid(ctx, kind, k, lk_name, lk_params, lists, thr, easy_thr, g,
                                 prm.get("tree_depth"))
        extra = {"gamma": g, "easy_threshold": easy_thr, "threshold": thr}
        if gnote:
            extra["correlation_note"] = gnote
        return res, extra

    return _walk


def _cached_hybrid(ctx, kind, k, lk_name, lk_params, lists, thr, easy_thr, g, tree_depth):
    """:func:`models.drafting.hybrid.run_hybrid` with the easiness state and its fitted
    (hard, easy) curves kept in ``ctx.cache``: they depend on the lookup, the easiness
    threshold, gamma and K, not on the hybrid's own threshold or tree depth, so a sweep over
    those fits them once (the same numbers, step for step: tested against run_hybrid)."""
    import numpy as np

    from models.drafting.hybrid import easiness_state, fit_conditioned
    from models.drafting.walk import walk

    key = ("hybrid-fit", k, lk_name, repr(sorted(lk_params.items())), easy_thr, g, ctx.start)
    if key not in ctx.cache:
        state = easiness_state(lists[1], lists[2], easy_thr)
        ctx.cache[key] = (state, fit_conditioned(ctx.lengths, np.asarray(
            ctx.curves[:, :k], float), state, g, start=ctx.start))
    state, cv = ctx.cache[key]
    res = walk(ctx.lengths, mode=kind, n_rep=ctx.mc_reps, seed=ctx.rng, curves=cv, state=state,
               lookup=lists, threshold=thr, tree_depth=tree_depth, cost=ctx.step_ms,
               start=ctx.start)
    res.meta.update(gamma=g, easy_threshold=easy_thr, threshold=thr, tree_depth=tree_depth)
    return res


def lookup_of(params: dict):
    """The lookup policy declaration of a hybrid's parameters."""
    return resolve(params.get("lookup", "suffix"))
