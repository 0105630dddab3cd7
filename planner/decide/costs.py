"""Cost model of benchmark runs: minutes per run, start-up per allocation, price per hour.

A design with allocations :math:`j = 1..J`, allocation :math:`j` holding :math:`k_j` runs,
costs

.. math::

    \\text{minutes}_j = \\text{startup} + k_j \\cdot \\text{minutes\\_per\\_run},\\qquad
    \\$ = \\frac{\\text{price per hour}}{60} \\sum_j \\lceil \\text{minutes}_j \\rceil

(billed per started minute of each job), and GPU-hours :math:`= \\sum_j \\text{minutes}_j / 60`.

Sources (looked up 2026-11-30)
------------------------------
* Hugging Face Jobs, "Pricing and Billing", https://huggingface.co/docs/hub/jobs-pricing :
  "Billing on Jobs is based on hardware usage and is computed by the minute: you get charged
  for every minute the Jobs runs on the requested hardware", billed while the job is
  *Starting* or *Running* (not during build). Hourly prices per flavor are in that page's GPU
  table; the stored copy read here was cut before the A10G rows, so the A10G prices below
  ($1.00/h a10g-small, $1.50/h a10g-large) are the ones given for this project (they match the
  Spaces A10G small/large prices); check the page and override with ``--price``.
* Run times: the first HF job of a submission took ~6-10 min including model download and
  compile; one benchmark (128 prompts x 512 tokens) ~3 min (project notes). Hence start-up
  5 min per allocation (8 - 3, the middle of 6-10 minus one benchmark) and 3 min per run.
* Local A10G (owned g5 node): no price (``0``); a fresh server start with warm caches ~2 min,
  one ``decode_wall`` run of 128 x 512 tokens at ~450 TPS ~2.5 min
  (``examples/runs/tps_runs.md``). GPU-hours still reported.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Sequence

from planner.errors import InputError

__all__ = ["CostModel", "FLAVORS", "PLATFORM_FLAVOR", "PRICES_CHECKED", "PRICING_URL",
           "cost_model"]

#: Date the prices and billing rules above were looked up.
PRICES_CHECKED = "2026-11-30"
PRICING_URL = "https://huggingface.co/docs/hub/jobs-pricing"


@dataclass(frozen=True)
class CostModel:
    """Minutes and dollars of benchmark runs on one hardware flavor.

    Parameters
    ----------
    flavor : str
        Label (``a10g-small``, ``a10g-large``, ``local-a10g``).
    price_per_hour : float
        $ per hour of the flavor (>= 0).
    minutes_per_run : float
        Wall minutes of one benchmark run (> 0).
    startup_minutes : float
        Minutes billed per allocation before the first run (download, compile; >= 0).
    billed_per_minute : bool
        Round each allocation's minutes up to whole minutes (HF Jobs); else exact.
    source : str
        Where the numbers come from.
    """

    flavor: str
    price_per_hour: float
    minutes_per_run: float
    startup_minutes: float
    billed_per_minute: bool = True
    source: str = ""

    def __post_init__(self):
        for name in ("price_per_hour", "startup_minutes"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise InputError(f"must be >= 0, got {v!r}", field=name)
        if not (math.isfinite(self.minutes_per_run) and self.minutes_per_run > 0):
            raise InputError(f"must be > 0, got {self.minutes_per_run!r}",
                             field="minutes_per_run")

    def allocation_minutes(self, runs: int) -> float:
        """Wall minutes of one allocation holding ``runs`` runs."""
        return self.startup_minutes + runs * self.minutes_per_run

    def cost(self, runs_per_allocation: Sequence[int]) -> dict:
        """Cost of a design.

        Parameters
        ----------
        runs_per_allocation : sequence of int
            Runs in each allocation (instance) of the design.

        Returns
        -------
        dict
            ``allocations``, ``runs``, ``gpu_hours`` (h), ``billed_minutes`` (min),
            ``cost_usd`` ($).
        """
        mins = [self.allocation_minutes(k) for k in runs_per_allocation]
        billed = [math.ceil(m - 1e-9) if self.billed_per_minute else m for m in mins]
        return {"allocations": len(mins), "runs": int(sum(runs_per_allocation)),
                "gpu_hours": sum(mins) / 60.0, "billed_minutes": float(sum(billed)),
                "cost_usd": sum(billed) * self.price_per_hour / 60.0}

    def to_dict(self) -> dict:
        """The fields as a dict (JSON-ready)."""
        return asdict(self)


#: Defaults per flavor / platform (see the module docstring for sources).
FLAVORS = {
    "a10g-small": CostModel("a10g-small", 1.00, 3.0, 5.0, True,
                            f"HF Jobs a10g-small $1.00/h billed per minute ({PRICING_URL}, "
                            f"checked {PRICES_CHECKED}); first job 6-10 min incl. download and "
                            "compile -> start-up 5 min; benchmark 3 min"),
    "a10g-large": CostModel("a10g-large", 1.50, 3.0, 5.0, True,
                            f"HF Jobs a10g-large $1.50/h billed per minute ({PRICING_URL}, "
                            f"checked {PRICES_CHECKED}); same run times as a10g-small assumed"),
    "local-a10g": CostModel("local-a10g", 0.0, 2.5, 2.0, False,
                            "owned local A10G: no price; server start ~2 min, 128x512 decode at "
                            "~450 TPS ~2.5 min"),
}

#: Platform -> default flavor.
PLATFORM_FLAVOR = {"hf-a10g-small": "a10g-small", "published-n4": "a10g-small",
                   "local-a10g": "local-a10g", "hf-a10g-large": "a10g-large"}


def cost_model(platform_or_flavor: str = "a10g-small", *, price_per_hour: float | None = None,
               minutes_per_run: float | None = None, startup_minutes: float | None = None
               ) -> CostModel:
    """The default cost model of a platform (or one of its aliases) or flavor, with optional
    overrides. Every command prices runs through this function, so one platform has one cost
    model (``repeats --platform``, the ``platform`` of a ``budget`` comparison).

    Parameters
    ----------
    platform_or_flavor : str
        ``hf-a10g-small`` (or an alias such as ``hf``), ``published-n4``, ``local-a10g``,
        ``hf-a10g-large``, or a flavor of :data:`FLAVORS` (letter case ignored).
    price_per_hour, minutes_per_run, startup_minutes : float, optional
        Overrides ($/h, min, min); ``None`` keeps the flavor's value.

    Returns
    -------
    CostModel

    Raises
    ------
    InputError
        Unknown platform or flavor (field ``flavor``), a price or minutes outside
        :mod:`planner.io.limits` (the field of that value).
    """
    from models.stats.noise import platform_key

    name = platform_key(platform_or_flavor) or platform_or_flavor.strip().lower()
    key = PLATFORM_FLAVOR.get(name, name)
    if key not in FLAVORS:
        raise InputError(f"unknown platform or flavor {platform_or_flavor!r} (platforms: "
                         f"{', '.join(PLATFORM_FLAVOR)}; flavors: {', '.join(FLAVORS)})",
                         field="flavor")
    cm = FLAVORS[key]
    from planner.io.limits import check  # plausible ranges: no 1e308 price or run time

    kw = {}
    if price_per_hour is not None:
        kw["price_per_hour"] = float(check("price_per_hour", price_per_hour))
    if minutes_per_run is not None:
        kw["minutes_per_run"] = float(check("minutes_per_run", minutes_per_run))
    if startup_minutes is not None:
        kw["startup_minutes"] = float(check("startup_minutes", startup_minutes))
    if kw:
        cm = replace(cm, **kw, source=cm.source + " (overridden: " +
                     ", ".join(f"{k}={v:g}" for k, v in kw.items()) + ")")
    return cm
