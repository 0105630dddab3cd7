"""``suffix-first``: the lookup when its match is long enough, else MTP."""

from models.drafting.policies import Policy
from models.drafting.policies import _hybrid as h

POLICY = Policy("suffix-first", "lookup when its match is long enough, else MTP", h.PARAMS,
                h.walker("suffix-first"), aliases=("hybrid-suffix-first",), stochastic=True,
                fill=h.fill, check=h.check, vllm="ArcticInference suffix + MTP", synchronous=True)
