"""``ngram``: vLLM ``method=ngram`` (prompt_lookup_min..max, k draft tokens)."""

from models.drafting.policies import MTP_K, Param, Policy
from models.drafting.policies._common import MAX_N, MIN_N, check_windows, lookup_walk


def _drafter(p: dict):
    from models.drafting.lookup import NGram

    return NGram(prompt_lookup_min=p.pop("min_n", 2), prompt_lookup_max=p.pop("max_n", 6),
                 k=p.pop("lookup_k", p.pop("k", 5)))


POLICY = Policy(
    "ngram", "vLLM method=ngram (min_n, max_n, k = prompt_lookup_min, prompt_lookup_max, "
    "num_speculative_tokens)",
    (MIN_N, MAX_N, Param("k", 5, False, MTP_K, ("K", "num_speculative_tokens"),
                         "draft tokens per step")),
    lambda ctx, p: lookup_walk(ctx, "ngram", p), default=True, drafter=_drafter,
    check=check_windows, vllm="method=ngram", synchronous=True)
