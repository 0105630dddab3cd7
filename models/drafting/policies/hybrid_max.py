"""``hybrid-max``: upper bound, the better of MTP and a lookup each step (not runnable)."""

from models.drafting.policies import Policy
from models.drafting.policies import _hybrid as h

POLICY = Policy("hybrid-max", "upper bound: the better of MTP and a lookup each step",
                h.PARAMS, h.walker("max"), aliases=("max",), stochastic=True, fill=h.fill,
                check=h.check, vllm="none (a ceiling)")
