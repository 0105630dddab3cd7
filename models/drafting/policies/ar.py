"""``ar``: no drafting, one token per forward (the usual baseline)."""

from models.drafting.policies import Policy


def _walk(ctx, params):
    from models.drafting.walk import walk

    return walk(ctx.lengths, mode="ar", cost=ctx.step_ms, start=ctx.start, trace=False), {}


POLICY = Policy("ar", "no drafting, one token per forward", (), _walk,
                aliases=("autoregressive",), default=True, vllm="no speculative_config")
