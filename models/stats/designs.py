r"""Designs of a TPS A/B experiment: how the runs of A and B are spread over instances.

Runs follow the hierarchical model of :mod:`models.stats.tps_model`: run :math:`r` of config
:math:`c` on instance :math:`i` has log TPS

.. math::

    y_{ir} = \mu_c + u_i + \varepsilon_{ir}, \qquad u_i \sim \mathcal N(0, \tau^2),
    \quad \varepsilon_{ir} \sim \mathcal N(0, \sigma^2),

so a design matters through which runs share an instance effect :math:`u_i`. A design
(:class:`Layout`) is a list of *instance types*: ``count`` instances, each holding ``a`` runs
of A and ``b`` runs of B (:class:`InstanceType`). Instances of one type are exchangeable,
which is what lets :mod:`models.stats.assurance` reduce a simulated dataset to typed sufficient
statistics. Two families are built here: *separate* (A and B never share an instance;
``runs_per_instance`` runs of one config per instance) and *paired* (A and B interleaved on
shared instances, so :math:`u_i` cancels from Δ). :class:`Existing` holds runs already
measured, analysed together with the simulated new ones (new runs always go on new
instances).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["InstanceType", "Layout", "separate_layout", "paired_layout", "flatten",
           "Existing", "units"]


@dataclass(frozen=True)
class InstanceType:
    """``count`` instances (allocations / sessions), each with ``a`` runs of A, ``b`` of B."""

    count: int
    a: int
    b: int

    @property
    def n(self) -> int:
        return self.a + self.b


@dataclass(frozen=True)
class Layout:
    """A fixed design: how the runs of A and B are spread over instances.

    Attributes
    ----------
    types : tuple of InstanceType
        Instances of the same composition are grouped; order is the simulation order.
    """

    types: tuple

    @property
    def n_a(self) -> int:
        return sum(t.count * t.a for t in self.types)

    @property
    def n_b(self) -> int:
        return sum(t.count * t.b for t in self.types)

    @property
    def n_runs(self) -> int:
        return self.n_a + self.n_b

    @property
    def n_instances(self) -> int:
        return sum(t.count for t in self.types)

    def prefix(self, counts: Sequence[int]) -> "Layout":
        """The layout made of the first ``counts[k]`` instances of each type."""
        return Layout(tuple(InstanceType(int(c), t.a, t.b) for c, t in zip(counts, self.types)))

    def design_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Design matrix X (N, 2) and instance index (N,) in the order of :func:`flatten`."""
        cols, inst = [], []
        i0 = 0
        for t in self.types:
            for i in range(t.count):
                cols += [0] * t.a + [1] * t.b
                inst += [i0 + i] * t.n
            i0 += t.count
        X = np.zeros((len(cols), 2))
        X[np.arange(len(cols)), cols] = 1.0
        return X, np.asarray(inst, int)

    def instances_per_arm(self) -> list[int]:
        """Runs per instance, one entry per instance (for the cost model)."""
        out = []
        for t in self.types:
            out += [t.n] * t.count
        return out


def separate_layout(n: int, runs_per_instance: int = 1) -> Layout:
    """n runs of A and n of B, never sharing an instance; ``runs_per_instance`` runs of one
    config per instance (1 = every run its own allocation, the HF Jobs default)."""
    if n < 1 or runs_per_instance < 1:
        raise ValueError("need n >= 1 and runs_per_instance >= 1")
    r = min(runs_per_instance, n)
    full, rem = divmod(n, r)
    types = [InstanceType(full, r, 0)] + ([InstanceType(1, rem, 0)] if rem else [])
    types += [InstanceType(full, 0, r)] + ([InstanceType(1, 0, rem)] if rem else [])
    return Layout(tuple(types))


def paired_layout(n: int, pairs_per_instance: int | None = None) -> Layout:
    """n runs of A and n of B interleaved on shared instances (A and B share the instance
    effect u); ``pairs_per_instance`` pairs per instance (None = all on one instance)."""
    if n < 1:
        raise ValueError("need n >= 1")
    k = n if not pairs_per_instance else min(pairs_per_instance, n)
    full, rem = divmod(n, k)
    types = [InstanceType(full, k, k)] + ([InstanceType(1, rem, rem)] if rem else [])
    return Layout(tuple(types))


def flatten(layout: Layout, ys: list[np.ndarray]) -> np.ndarray:
    """Concatenate per-type simulated arrays (D, count, a+b) into y (D, N) (order of
    :meth:`Layout.design_arrays`)."""
    return np.concatenate([y.reshape(y.shape[0], -1) for y in ys], axis=1)


# --------------------------------------------------------------------------------------------
# existing runs (planning more runs after some were bought)
# --------------------------------------------------------------------------------------------
def units(data) -> np.ndarray:
    """The instance index of each run for the simulated re-analysis, shape (n_runs,): one
    per (instance, server session) pair when the runs name sessions, else the instance.

    The re-analysis model has an instance level and run noise only; a session nested in an
    instance (:mod:`models.stats.tps_sessions`) is read there as an instance of its own, so
    the offset between two sessions of one machine stays noise the old runs' spread cannot
    measure, as the verdict's fit reads it (merging them would make A's and B's sessions
    one instance and the gap between them evidence).
    """
    inst = np.asarray(data.instance, int)
    if getattr(data, "session", None) is None:
        return inst
    _, idx = np.unique(np.stack([inst, np.asarray(data.session, int)]), axis=1,
                       return_inverse=True)
    return idx.ravel().astype(int)


@dataclass
class Existing:
    """Runs already measured, on the log scale and *centred* by ``centre``.

    New runs are always on new instances. ``X`` (n, 2) one-hot A/B, ``inst`` (n,) instance
    index, ``y`` (n,) log TPS minus ``centre``.
    """

    X: np.ndarray
    inst: np.ndarray
    y: np.ndarray
    centre: float

    @classmethod
    def from_tpsdata(cls, data) -> "Existing":
        """From :class:`models.stats.tps_model.TPSData` with configs 0 = A, 1 = B (no cold
        column); its instances are :func:`units` (each server session its own)."""
        X = np.zeros((data.n_runs, 2))
        X[np.arange(data.n_runs), data.config] = 1.0
        c = float(np.mean(data.y))
        return cls(X, units(data), data.y - c, c)

    @property
    def n_runs(self) -> int:
        return int(self.y.size)
