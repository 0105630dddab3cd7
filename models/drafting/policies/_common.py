"""Pieces shared by several policy declarations (not a policy)."""

from __future__ import annotations

from models.drafting.policies import DRAFT_DEPTH, MTP_K, N_WINDOW, Param


def lookup_walk(ctx, name: str, params: dict):
    """Walk a lookup policy: its cached profile on the capture, one deterministic walk."""
    from models.drafting.walk import walk

    return walk(ctx.lengths, mode="lookup", lookup=ctx.profile(name, params),
                cost=ctx.step_ms, start=ctx.start, trace=False), {}


def depth(default=None, *, shown=False, vllm=True, help="draft tokens per step"):
    """The draft depth parameter (``D``; vLLM's ``num_speculative_tokens`` when ``vllm``)."""
    return Param("depth", default, shown, DRAFT_DEPTH,
                 ("D", "num_speculative_tokens") if vllm else ("D",), help)


#: SuffixDecoding options (vLLM ``suffix_decoding_*``), shared by suffix and the hybrids.
SUFFIX_OPTIONS = (
    Param("max_tree_depth", 24, aliases=("suffix_decoding_max_tree_depth",),
          help="suffix tree depth", brief=False),
    Param("max_spec_tokens", None, help="max speculative tokens (same as depth)", brief=False),
    Param("max_spec_factor", 1.0, aliases=("suffix_decoding_max_spec_factor",),
          help="draft at most factor x match length tokens", brief=False),
    Param("max_spec_offset", 0.0, help="plus this many", brief=False),
    Param("min_token_prob", 0.1, aliases=("suffix_decoding_min_token_prob",),
          help="stop drafting below this frequency estimate", brief=False),
    Param("cache", "fifo", help="cross-request cache: fifo, loo or none", brief=False),
    Param("max_cached_requests", 10000, aliases=("suffix_decoding_max_cached_requests",),
          help="requests kept in the global tree", brief=False),
)

N = Param("n", 2, True, N_WINDOW, (), "match window (last n tokens)")
MIN_N = Param("min_n", 2, False, N_WINDOW, ("prompt_lookup_min",), "shortest match window")
MAX_N = Param("max_n", 6, False, N_WINDOW, ("prompt_lookup_max",), "longest match window")
K_MTP = Param("k", 7, True, MTP_K, ("K", "num_speculative_tokens"), "MTP chain depth")


def check_windows(p: dict):
    """``min_n <= max_n`` when both are given."""
    if p.get("min_n") is not None and p.get("max_n") is not None and p["min_n"] > p["max_n"]:
        return "min_n", f"min_n {p['min_n']} > max_n {p['max_n']}"
    return None
