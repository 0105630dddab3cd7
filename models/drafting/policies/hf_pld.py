"""``hf-pld``: Hugging Face / Spec-Bench prompt lookup (windows max_n..1, first match)."""

from models.drafting.policies import N_WINDOW, Param, Policy
from models.drafting.policies._common import depth, lookup_walk


def _drafter(p: dict):
    from models.drafting.lookup import HFPromptLookup

    return HFPromptLookup(max_matching_ngram_size=p.pop("max_n", 2),
                          prompt_lookup_num_tokens=p.pop("depth", 10))


POLICY = Policy(
    "hf-pld", "Hugging Face / Spec-Bench prompt lookup: windows from max_matching_ngram_size "
    "down to 1, FIRST match, draft prompt_lookup_num_tokens (max_n, depth)",
    (Param("max_n", 2, True, N_WINDOW, ("max_matching_ngram_size",), "longest match window"),
     Param("depth", 10, True, depth().range,
           ("D", "prompt_lookup_num_tokens", "num_speculative_tokens"), "draft tokens per step")),
    lambda ctx, p: lookup_walk(ctx, "hf-pld", p),
    aliases=("hf-prompt-lookup", "spec-bench-pld"), drafter=_drafter,
    vllm="HF generate(prompt_lookup_num_tokens=, max_matching_ngram_size=)", synchronous=True)
