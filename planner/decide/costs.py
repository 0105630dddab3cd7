"""Cost model of benchmark runs: minutes per run, start-up per allocation, price per hour.

A design with allocations :math:`j = 1..J`, allocation :math:`j` holding :math:`k_j` runs,
costs

.. math::

    \\text{minutes}_j = \\text{startup} + k_j \\cdot \\text{minutes\\_per\\_run},\\qquad
    \\$ = \\frac{\\text{price per hour}}{60} \\sum_j \\lceil \\text{minutes}_j \\rceil

(billed per started minute of each job), and GPU-hours :math:`= \\sum_j \\text{minutes}_j / 60`.

The numbers of each platform and flavor (price per hour, minutes per run, start-up minutes,
billing per started minute) and their sources are declared in the platforms registry,
:mod:`planner.io.platforms`; this module turns them into cost models.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Mapping, Sequence

from planner.errors import InputError
from planner.io import platforms
from planner.io.platforms import PRICES_CHECKED, PRICING_URL

__all__ = ["CostModel", "FLAVORS", "PLATFORM_FLAVOR", "PRICES_CHECKED", "PRICING_URL",
           "cost_model"]


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


def _model(f: platforms.Flavor) -> CostModel:
    return CostModel(f.name, f.price_per_hour, f.minutes_per_run, f.startup_minutes,
                     f.billed_per_minute, f.source)


#: Flavor name -> its default cost model (:data:`planner.io.platforms.FLAVORS`; a live view of
#: the registry).
FLAVORS: Mapping[str, CostModel] = platforms.LiveMapping(
    lambda: {f.name: _model(f) for f in platforms.FLAVORS})

#: Canonical platform name -> its flavor's name (:data:`planner.io.platforms.PLATFORMS`; a
#: live view of the registry).
PLATFORM_FLAVOR: Mapping[str, str] = platforms.LiveMapping(platforms.platform_flavor)


def cost_model(platform_or_flavor: str = "a10g-small", *, price_per_hour: float | None = None,
               minutes_per_run: float | None = None, startup_minutes: float | None = None
               ) -> CostModel:
    """The default cost model of a platform (or one of its aliases) or flavor, with optional
    overrides. Every command prices runs through this function, so one platform has one cost
    model (``repeats --platform``, the ``platform`` of a ``budget`` comparison).

    Parameters
    ----------
    platform_or_flavor : str
        A platform of :data:`planner.io.platforms.PLATFORMS` (or one of its aliases, such as
        ``hf``) or a flavor of :data:`planner.io.platforms.FLAVORS` (letter case, blanks and
        ``_`` for ``-`` ignored).
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
    flavor = platforms.find_flavor(platform_or_flavor)
    if flavor is None:
        raise InputError(f"unknown platform or flavor {platform_or_flavor!r} (platforms: "
                         f"{', '.join(PLATFORM_FLAVOR)}; flavors: {', '.join(FLAVORS)})",
                         field="flavor")
    cm = _model(flavor)
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
