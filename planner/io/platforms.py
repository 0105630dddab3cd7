"""The platforms registry: where benchmark runs execute, what an allocation costs there, and
which measured noise describes it.

A **platform** (``hf-a10g-small``, ``local-a10g``, ...) is named in runs tables, plans and
``--platform``. It declares its canonical name, the other spellings it is known by, its cost
**flavor** (price per hour, minutes per run, start-up minutes per allocation, whether each
allocation is billed per started minute) and the cell of the embedded noise priors
(``models/data/noise_priors.json``, read by :func:`models.stats.noise.platform_prior`) that
describes its run-to-run noise, or none when no noise was measured there.

Every other module derives from :data:`PLATFORMS` and :data:`FLAVORS`: the cost models
(:func:`planner.decide.costs.cost_model`), the runs table's platform folding
(:func:`canonical_platform`), a plan file's platform check, the noise prior of a platform
(:func:`platform_prior`) and the ``--platform`` help (:func:`platform_help`). Adding a
platform is one :class:`Platform` line in :data:`PLATFORMS` (and, for a new price, one
:class:`Flavor` line in :data:`FLAVORS`).

Names match ignoring letter case, surrounding blanks and ``_`` for ``-`` (``HF_A10G_Small``
is ``hf-a10g-small``).

Sources of the prices and run times (looked up 2026-11-30)
----------------------------------------------------------
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

from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

__all__ = ["FLAVORS", "PLATFORMS", "PLATFORM_ALIASES", "PRICES_CHECKED", "PRICING_URL",
           "Flavor", "LiveMapping", "Platform", "canonical_platform", "find_flavor", "fold", "known_platforms",
           "lookup", "noise_cell", "platform_flavor", "platform_help", "platform_key", "platform_prior"]

#: Date the prices and billing rules above were looked up.
PRICES_CHECKED = "2026-11-30"
PRICING_URL = "https://huggingface.co/docs/hub/jobs-pricing"


@dataclass(frozen=True)
class Flavor:
    """The cost of runs on one kind of hardware.

    Parameters
    ----------
    name : str
        Label (``a10g-small``), lower case.
    price_per_hour : float
        $ per hour (>= 0; 0 for owned hardware).
    minutes_per_run : float
        Wall minutes of one benchmark run (> 0).
    startup_minutes : float
        Minutes billed per allocation before its first run (download, compile; >= 0).
    billed_per_minute : bool
        Each allocation's minutes are rounded up to whole minutes (HF Jobs); else exact.
    source : str
        Where the numbers come from.
    """

    name: str
    price_per_hour: float
    minutes_per_run: float
    startup_minutes: float
    billed_per_minute: bool
    source: str


@dataclass(frozen=True)
class Platform:
    """Where runs execute.

    Parameters
    ----------
    name : str
        Canonical name, lower case (``hf-a10g-small``).
    flavor : str
        Its cost flavor (a :attr:`Flavor.name` of :data:`FLAVORS`).
    noise : str or None
        Its cell of the embedded noise priors (``models/data/noise_priors.json``), None when
        no noise was measured there (a prior must then be given).
    aliases : tuple of str
        Other spellings (lower case).
    help : str
        One line for ``--help`` and the docs.
    """

    name: str
    flavor: str
    noise: str | None
    aliases: tuple[str, ...] = ()
    help: str = ""


#: Cost flavors (sources in the module docstring).
FLAVORS: tuple[Flavor, ...] = (
    Flavor("a10g-small", 1.00, 3.0, 5.0, True,
           f"HF Jobs a10g-small $1.00/h billed per minute ({PRICING_URL}, checked "
           f"{PRICES_CHECKED}); first job 6-10 min incl. download and compile -> start-up "
           "5 min; benchmark 3 min"),
    Flavor("a10g-large", 1.50, 3.0, 5.0, True,
           f"HF Jobs a10g-large $1.50/h billed per minute ({PRICING_URL}, checked "
           f"{PRICES_CHECKED}); same run times as a10g-small assumed"),
    Flavor("local-a10g", 0.0, 2.5, 2.0, False,
           "owned local A10G: no price; server start ~2 min, 128x512 decode at ~450 TPS "
           "~2.5 min"),
)

#: The platforms: one line each.
PLATFORMS: tuple[Platform, ...] = (
    Platform("hf-a10g-small", "a10g-small", "hf-a10g-small",
             ("hf-job-a10g-small", "hf", "official"),
             "HF Jobs a10g-small (each job a fresh allocation; the official runs)"),
    Platform("published-n4", "a10g-small", "published-n4", (),
             "HF a10g-small priced, with only the published N = 4 repeats as its noise"),
    Platform("local-a10g", "local-a10g", "local-a10g", ("local",),
             "an owned A10G (one machine re-used across runs and days)"),
    Platform("hf-a10g-large", "a10g-large", None, (),
             "HF Jobs a10g-large (no measured noise: a prior or the stated noise is needed)"),
)


def fold(name: str) -> str:
    """``name`` as platform names are matched: blanks trimmed, lower case, ``_`` as ``-``."""
    return name.strip().lower().replace("_", "-")


def lookup(name: str | None) -> Platform | None:
    """The registered platform a name denotes (its name or an alias, folded by :func:`fold`),
    or None."""
    if not name:
        return None
    key = fold(name)
    for p in PLATFORMS:
        if key == p.name or key in p.aliases:
            return p
    return None


def canonical_platform(name: str) -> str:
    """Platform label with aliases and, for a registered platform, letter case folded
    (``hf-job-a10g-small`` and ``HF-A10G-Small`` are ``hf-a10g-small``); another label is
    kept as written."""
    p = lookup(name)
    return p.name if p is not None else name


def platform_key(name: str | None) -> str | None:
    """The canonical name of a registered platform with measured noise (one whose noise
    prior is known), or None (not registered, no noise data, or empty)."""
    p = lookup(name)
    return p.name if p is not None and p.noise is not None else None


def noise_cell(name: str | None) -> str | None:
    """The noise-prior cell that describes a registered platform (:attr:`Platform.noise`),
    or None (not registered, no measured noise, or empty). The cell's name is the one the
    noise models are keyed by (``models.stats.noise``, the noise hierarchy)."""
    p = lookup(name)
    return p.noise if p is not None else None


def known_platforms() -> list[str]:
    """Canonical names of the platforms with measured noise, sorted."""
    return sorted(p.name for p in PLATFORMS if p.noise is not None)


def platform_prior(name: str):
    """The embedded noise prior of a platform: that of its :attr:`Platform.noise` cell.

    Returns
    -------
    models.stats.noise.NoisePrior

    Raises
    ------
    KeyError
        Not a registered platform with measured noise.
    """
    from models.stats.noise import platform_prior as cell_prior

    cell = noise_cell(name)
    if cell is None:
        raise KeyError(name)
    return cell_prior(cell)


def find_flavor(name: str) -> Flavor | None:
    """The flavor of a platform (or alias), or the flavor of that name; None if neither."""
    p = lookup(name)
    key = p.flavor if p is not None else fold(name)
    for f in FLAVORS:
        if f.name == key:
            return f
    return None


def platform_flavor() -> dict[str, str]:
    """Canonical platform name -> its flavor's name, in registry order."""
    return {p.name: p.flavor for p in PLATFORMS}


def platform_help() -> str:
    """The ``--platform`` help: every platform, its aliases and its price."""
    prices = {f.name: f.price_per_hour for f in FLAVORS}
    items = []
    for p in PLATFORMS:
        alias = f" (or {', '.join(p.aliases)})" if p.aliases else ""
        items.append(f"{p.name}{alias}: ${prices.get(p.flavor, 0):g}/h"
                     + ("" if p.noise else ", no noise data"))
    return "Platform: " + "; ".join(items) + "."


class LiveMapping(Mapping):
    """A read-only mapping rebuilt from the registry on every use (a platform added to
    :data:`PLATFORMS` is seen at once)."""

    def __init__(self, build: Callable[[], dict]):
        self._build = build

    def __getitem__(self, key):
        return self._build()[key]

    def __iter__(self) -> Iterator:
        return iter(self._build())

    def __len__(self) -> int:
        return len(self._build())

    def __repr__(self) -> str:
        return repr(self._build())


def _noise_spellings() -> dict[str, str]:
    out = {}
    for p in PLATFORMS:
        if p.noise is not None:
            out[p.name] = p.name
            out.update({a: p.name for a in p.aliases})
    return out


#: Every spelling (name and aliases, lower case) of a platform with measured noise -> its
#: canonical name.
PLATFORM_ALIASES: Mapping[str, str] = LiveMapping(_noise_spellings)
