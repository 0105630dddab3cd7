"""``mtp``: an MTP / EAGLE chain of depth k, accepted along the capture's curves."""

from models.drafting.policies import Policy
from models.drafting.policies._common import K_MTP


def _walk(ctx, params):
    from models.drafting.walk import walk

    k = params.get("k", 7)
    return walk(ctx.lengths, mode="mtp", n_rep=ctx.mc_reps, seed=ctx.rng,
                curves=ctx.curves[:, :k], cost=ctx.step_ms, start=ctx.start), {}


POLICY = Policy("mtp", "MTP / EAGLE chain of depth k (num_speculative_tokens)", (K_MTP,),
                _walk, aliases=("eagle",), stochastic=True, default=True,
                vllm="method=mtp / eagle (num_speculative_tokens)")
