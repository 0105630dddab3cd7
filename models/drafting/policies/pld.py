"""``pld``: the reference replay's prompt lookup (last n tokens, most recent earlier match)."""

from models.drafting.policies import Policy
from models.drafting.policies._common import N, depth, lookup_walk


def _drafter(p: dict):
    from models.drafting.lookup import PLD

    return PLD(n=p.pop("n", 2), D=p.pop("depth", 24))


POLICY = Policy(
    "pld", "the reference replay's prompt lookup: last n tokens, MOST RECENT earlier match, "
    "draft depth tokens (n, depth)",
    (N, depth(24, shown=True)), lambda ctx, p: lookup_walk(ctx, "pld", p),
    aliases=("prompt-lookup",), default=True, drafter=_drafter,
    vllm="method=ngram-like prompt lookup of the reference replay (n, num_speculative_tokens)",
    synchronous=True)
