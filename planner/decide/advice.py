"""Advice shared by the verdict's "to settle" and ``planner repeats --runs`` that needs no
simulation (so a verdict whose advice the Normal screen settles imports no planner kernels)."""

from __future__ import annotations

__all__ = ["session_advice"]


def session_advice(post) -> str | None:
    """What helps when the offset between sessions or instances dominates: more runs in the
    same sessions average out the run-to-run noise only (None when the run-to-run noise is
    the larger term). ``post``: an exact fit (posterior medians of tau and sigma)."""
    tau = post.scale_summary("tau")["median"]
    sig = post.scale_summary("sigma")["median"]
    if not tau > sig:
        return None
    return (f"more runs in the same server sessions cannot settle it: the offset between "
            f"sessions or instances (sigma_instance about {100 * tau:.2g} %) is larger than the "
            f"run-to-run noise (sigma_run about {100 * sig:.2g} %) and does not average out "
            "within a session; runs in new server sessions or on new instances are what helps")
