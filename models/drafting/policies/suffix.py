"""``suffix``: vLLM ``method=suffix`` (SuffixDecoding)."""

from models.drafting.policies import Policy
from models.drafting.policies._common import SUFFIX_OPTIONS, depth, lookup_walk

_OPTION_NAMES = tuple(p.name for p in SUFFIX_OPTIONS)


def _drafter(p: dict):
    from models.drafting.lookup import Suffix

    kw = {}
    if "depth" in p:
        kw["max_spec_tokens"] = p.pop("depth")
    for key in _OPTION_NAMES:
        if key in p:
            kw[key] = p.pop(key)
    return Suffix(**kw)


POLICY = Policy(
    "suffix", "vLLM method=suffix, SuffixDecoding (depth = num_speculative_tokens, ...)",
    (depth(24), *SUFFIX_OPTIONS), lambda ctx, p: lookup_walk(ctx, "suffix", p),
    default=True, drafter=_drafter, vllm="method=suffix (suffix_decoding_*)",
    synchronous=True)
