"""Re-price a draft projection under other constants without walking again, on the same
bootstrap draws.

A walk (:func:`models.drafting.walk.walk`) sums, per prompt and Monte-Carlo replicate, the
forwards ``F``, the verify rows ``rows``, the GPU drafter tokens ``D``
(``meta["draft_tokens"]``, 0 for a host-lookup drafter) and the modelled time. The step time
(:meth:`models.drafting.cost.ForwardCostModel.step_ms`) is linear in the cost constants::

    time = s * (vb * V + vr * (rows - F) + dr * D + host * F) + add * F

with ``s`` / ``add`` the sync factor and additive sync cost of a synchronous policy (1 / 0
otherwise) and ``V = sum over steps of (1 + staircase(M))``, recovered from the walk's own
time. So any other (vb, vr, dr, host, s, add) prices the same steps exactly (to rounding),
as long as the staircase is the same.

The MTP acceptance can be moved too, to first order: scaling the MTP share of the accepted
draft tokens by ``lam`` (another stack's curve: ``lam = sum s' / sum s``) changes the forwards
of a prompt by ``q = tokens / (tokens + (lam - 1) * mtp_accepted)`` and every per-step sum
with them (the mean step price is unchanged).

Bootstrap replicates are those of :func:`models.drafting.bootstrap.bootstrap_ratios` in
:func:`planner.decide.draft.run.run_draft`: the same generator state replays the same
prompt indices and Monte-Carlo replicate of every statistic (tested: the re-priced draws at
the run's own constants equal the run's to 1e-12).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = ["Repricer", "PolicySums"]

#: Elements of one gathered block (rows x prompts) when summing bootstrap replicates.
_BLOCK = 1 << 20


@dataclass
class PolicySums:
    """Per-prompt sums of one policy's walk (shape (R, P) each, before any aggregation of
    repeated records) and whether its steps are synchronous."""

    tokens: np.ndarray
    forwards: np.ndarray
    rows_extra: np.ndarray  # rows - forwards
    drafter: np.ndarray  # GPU drafter tokens
    base_units: np.ndarray  # V: steps x (1 + staircase)
    mtp_accepted: np.ndarray  # accepted draft tokens from the MTP chain
    sync: bool
    stochastic: bool


def policy_sums(res, cost, sync: bool, stochastic: bool) -> PolicySums:
    """Decompose a walk's time into the cost model's linear features.

    Parameters
    ----------
    res : models.drafting.walk.WalkResult
        A walk priced with ``cost`` (``time_ms`` set).
    cost : models.drafting.cost.ForwardCostModel
    sync : bool
        The policy's steps are synchronous (:attr:`models.drafting.policies.Policy.synchronous`);
        the walk's own mode (``res.meta["mode"]`` in
        :data:`models.drafting.walk.SYNC_MODES`) decides when it has one, so a declaration
        that forgot the flag is still re-priced right.
    stochastic : bool
        MTP-based (its accepted tokens beyond the lookup's come from the MTP chain).
    """
    from models.drafting.walk import SYNC_MODES

    if "mode" in res.meta:
        sync = res.meta["mode"] in SYNC_MODES
    F = np.asarray(res.forwards, float)
    R = F.shape[0]
    extra = np.asarray(res.rows, float) - F
    D = np.broadcast_to(np.asarray(res.meta.get("draft_tokens", 0.0), float), F.shape)
    s = cost.sync_factor if sync else 1.0
    add = cost.sync_add_ms if sync else 0.0
    t = np.asarray(res.time_ms, float)
    V = ((t - add * F) / s - cost.verify_per_row_ms * extra - cost.drafter_per_token_ms * D
         - cost.host_ms * F) / cost.verify_base_ms
    acc = np.asarray(res.tokens, float) - F
    mtp_acc = (acc - np.asarray(res.lookup_tokens, float)) if stochastic else np.zeros_like(F)
    return PolicySums(np.asarray(res.tokens, float).reshape(R, -1), F, extra, np.array(D), V,
                      mtp_acc, sync, stochastic)


class Repricer:
    """Projected rates of every policy of a draft run under other constants.

    Parameters
    ----------
    sums : list of PolicySums
        One per walked policy, in the run's order (baseline first).
    stat_shapes : list of (name, R)
        The statistics passed to ``bootstrap_ratios`` in order with their replicate counts
        (``tpf0``, ``rate0``, ``tpf1``, ...), to replay its draws.
    n_boot : int
    seed : numpy.random.SeedSequence
        The bootstrap's seed (the generator ``run_draft`` built from it).
    groups : list or None
        Strata of the bootstrap (after aggregation of repeated records).
    agg : callable(array (..., P)) -> array (..., C), optional
        Sum of repeated records per distinct prompt (the run's cluster bootstrap).
    """

    def __init__(self, sums, stat_shapes, n_boot: int, seed, groups=None, agg=None):
        from models.drafting.bootstrap import resample_indices

        self.sums = sums
        self.agg = agg or (lambda a: a)
        C = self.agg(sums[0].tokens).shape[-1]
        rng = np.random.default_rng(seed)
        self.idx = resample_indices(C, n_boot, rng, groups)
        self.rep = {}
        for name, R in stat_shapes:
            self.rep[name] = rng.integers(0, R, size=n_boot) if R > 1 else None
        self._lin: dict = {}
        self._tot: dict = {}  # point totals per (policy, lam)

    def _boot_sum(self, X: np.ndarray, i: int) -> np.ndarray:
        """Sum over each bootstrap replicate's prompts of ``X`` (shape (R, C)) at the
        replicate ``rate{i}`` drew; shape (B,)."""
        r = self.rep.get(f"rate{i}")
        B, C = self.idx.shape
        out = np.empty(B)
        step = max(1, _BLOCK // max(C, 1))
        for a in range(0, B, step):
            ix = self.idx[a:a + step]
            rows = X[0][ix] if r is None or X.shape[0] == 1 else X[r[a:a + step, None], ix]
            out[a:a + step] = rows.sum(1)
        return out

    def _features(self, i: int, lam: float = 1.0):
        """(bootstrap sums, totals) of tokens, F, rows-F, D, V of policy ``i`` with its MTP
        share of accepted tokens scaled by ``lam``."""
        key = (i, float(lam))
        if key in self._lin:
            return self._lin[key]
        p = self.sums[i]
        feats = [p.tokens, p.forwards, p.rows_extra, p.drafter, p.base_units]
        if lam != 1.0 and p.stochastic:
            q = p.tokens / np.maximum(p.tokens + (lam - 1.0) * p.mtp_accepted, 1e-12)
            feats = [feats[0]] + [f * q for f in feats[1:]]
        feats = [self.agg(np.atleast_2d(f)) for f in feats]
        boot = [self._boot_sum(f, i) for f in feats]
        tot = [float(f.sum()) for f in feats]
        if len(self._lin) < 256:
            self._lin[key] = (boot, tot)
        return boot, tot

    @staticmethod
    def _time(vals, cost, sync: bool):
        _, F, extra, D, V = vals
        s = cost.sync_factor if sync else 1.0
        add = cost.sync_add_ms if sync else 0.0
        return s * (cost.verify_base_ms * V + cost.verify_per_row_ms * extra
                     + cost.drafter_per_token_ms * D + cost.host_ms * F) + add * F

    def rates(self, i: int, cost, lam: float = 1.0, *, point_only: bool = False):
        """Tokens per modelled ms of policy ``i`` under ``cost`` (and MTP scale ``lam``):
        (bootstrap draws shape (B,) or None with ``point_only``, point over all
        replicates)."""
        p = self.sums[i]
        key = (i, float(lam))
        if point_only and key not in self._lin:
            if key not in self._tot:
                feats = [p.tokens, p.forwards, p.rows_extra, p.drafter, p.base_units]
                if lam != 1.0 and p.stochastic:
                    q = p.tokens / np.maximum(p.tokens + (lam - 1.0) * p.mtp_accepted, 1e-12)
                    feats = [feats[0]] + [f * q for f in feats[1:]]
                self._tot[key] = [float(f.sum()) for f in feats]
            tot = self._tot[key]
            return None, tot[0] / float(self._time(tot, cost, p.sync))
        boot, tot = self._features(i, lam)
        pt = tot[0] / float(self._time(tot, cost, p.sync))
        if point_only:
            return None, pt
        return boot[0] / self._time(boot, cost, p.sync), pt


def with_constants(cost, **changes):
    """A copy of a cost model with some constants changed (no range checks: the plausible
    ranges of :mod:`planner.decide.draft.sensitivity` are inside the model's limits)."""
    return replace(cost, **changes)
