"""``tree``: an MTP chain plus a lookup branch verified together."""

from models.drafting.policies import Policy
from models.drafting.policies import _hybrid as h

POLICY = Policy("tree", "MTP chain plus a lookup branch verified together", h.PARAMS,
                h.walker("tree"), aliases=("hybrid-tree",), stochastic=True, fill=h.fill,
                check=h.check, vllm="tree verification (MTP chain + lookup branch)",
                synchronous=True)
