"""Advice shared by the verdict's "to settle" and ``planner repeats --runs`` that needs no
simulation (so a verdict whose advice the Normal screen settles imports no planner kernels)."""

from __future__ import annotations

__all__ = ["session_advice"]


def session_advice(post, data=None) -> str | None:
    """What helps when the offset between sessions or instances dominates: more runs in the
    same sessions average out the run-to-run noise only.

    Parameters
    ----------
    post : exact fit
        Its posterior medians of tau (between sessions or instances) and sigma (run to run).
    data : models.stats.tps_model.TPSData, optional
        The runs: when A and B share a server session (or, without a session column, an
        instance), the offset cancels between them and more runs there *do* narrow Δ, so
        there is no advice.

    Returns
    -------
    str or None
        None when the run-to-run noise is the larger term or the arms share a session.
    """
    tau = post.scale_summary("tau")["median"]
    sig = post.scale_summary("sigma")["median"]
    if not tau > sig:
        return None
    if data is not None:
        unit = data.session if data.session is not None else data.instance
        if set(unit[data.config == 0].tolist()) & set(unit[data.config == 1].tolist()):
            return None
    return (f"more runs in the same server sessions cannot settle it: the offset between "
            f"sessions or instances (sigma_instance about {100 * tau:.2g} %) is larger than the "
            f"run-to-run noise (sigma_run about {100 * sig:.2g} %) and does not average out "
            "within a session; runs in new server sessions or on new instances, or A/B pairs "
            "interleaved in one session (where the offset cancels), are what helps")
