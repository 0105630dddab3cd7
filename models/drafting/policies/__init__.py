"""Drafting policies: one declaration per policy, one registry line each.

A policy is a :class:`Policy` in its own module of this package (``POLICY = Policy(...)``):
its name and aliases, its parameters (:class:`Param`: default, range, vLLM / Hugging Face
names, help), a one-line help, whether it is stochastic (MTP-based: Monte-Carlo replicated,
its figures rest on an acceptance curve), and how it walks a capture (``walk(ctx, params)``,
:class:`WalkContext`). Parsing, validation, ``--help`` and the docs table are derived from
these declarations by the decision layer (:mod:`planner.decide.draft.policy`); nothing else
lists policies.

Registry: :data:`MODULES` (one line per policy, in display order). Adding a policy is one
module here plus its name in :data:`MODULES` (docs/architecture.md "Adding a drafting
policy"). :func:`register` adds a declaration at run time (tests, plug-ins).

This package imports nothing heavy at import time: the walk functions import the models
they run (numpy, numba kernels) when called.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Range", "Param", "Policy", "WalkContext", "MODULES", "registry", "register",
           "unregister", "resolve", "N_WINDOW", "DRAFT_DEPTH", "MTP_K", "LOOKUP_THRESHOLD"]


@dataclass(frozen=True)
class Range:
    """Plausible range of a whole-number policy parameter (inclusive), with its reason."""

    label: str
    unit: str
    low: int
    high: int
    why: str = ""


#: The lookup window n: 16 tokens already matches only verbatim repeats (vLLM's
#: prompt_lookup_max is typically 4-8).
N_WINDOW = Range("match window n", "tokens", 1, 16, "16 tokens matches only verbatim repeats")
#: The draft depth: 64 draft tokens is twice the longest run the shipped captures accept
#: (the verify step's staircase makes deeper drafts costlier than any acceptance they gain).
DRAFT_DEPTH = Range("draft depth", "tokens", 1, 64,
                    "twice the longest accepted run of the shipped captures")
#: The MTP chain K: the embedded stack-F curve is measured to K=7, 16 leaves room for others.
MTP_K = Range("MTP chain depth K", "tokens", 1, 16,
              "the stack-F curve is measured to K=7; 16 leaves room for other curves")
#: A suffix-first threshold is a match length, bounded like the depth.
LOOKUP_THRESHOLD = Range("lookup threshold", "tokens", 1, 64,
                         "a match length, bounded like the draft depth")


@dataclass(frozen=True)
class Param:
    """One parameter of a policy.

    Attributes
    ----------
    name : str
        Canonical name (labels, JSON).
    default : object
        Value the policy uses when the parameter is not given (documentation and the walk).
    shown : bool
        The default is written into the spec when parsed with defaults (so it appears in the
        label and the JSON, e.g. ``pld(n=2,depth=24)``); otherwise the drafter's own default
        applies silently (``ngram``).
    range : Range, optional
        Whole-number range checked by validation.
    aliases : tuple of str
        Other spellings accepted in a spec: short names (``D``, ``K``), vLLM
        ``speculative_config`` names, Hugging Face ``generate`` names.
    help : str
    brief : bool
        Listed in the one-paragraph ``--help`` (the rest: in the docs table only).
    """

    name: str
    default: Any = None
    shown: bool = False
    range: Range | None = None
    aliases: tuple = ()
    help: str = ""
    brief: bool = True


@dataclass
class WalkContext:
    """What a policy's walk needs from the run (built by the decision layer).

    Attributes
    ----------
    lengths : numpy.ndarray, int64, shape (P,)
        Completion lengths.
    step_ms : callable
        The cost model's step time (:meth:`models.drafting.cost.ForwardCostModel.step_ms`).
    start : int
        First walked position (see :mod:`models.drafting.walk`).
    mc_reps : int
        Monte-Carlo replicates of stochastic policies.
    rng : numpy.random.Generator
        This policy's own stream.
    curves : numpy.ndarray, shape (P, Kmax)
        Per-prompt MTP survival curves.
    profile : callable(name, params) -> ProfileBatch
        Cached lookup profile of a lookup policy on the capture.
    gamma_for : callable(lookup, lookup_params, easy_threshold) -> (gamma, note or None)
        Easiness correlation of the hybrids.
    cache : dict, optional
        Shared by the walks of one run (the hybrids' fitted easiness curves, which depend on
        the lookup, not on a hybrid's threshold or tree depth); None: nothing kept.
    """

    lengths: Any
    step_ms: Callable
    start: int
    mc_reps: int
    rng: Any
    curves: Any
    profile: Callable
    gamma_for: Callable
    cache: dict | None = None


@dataclass(frozen=True)
class Policy:
    """One drafting policy (see the package docstring).

    Attributes
    ----------
    name : str
    help : str
        One line: what the policy is (``--help``, docs table).
    params : tuple of Param
    walk : callable(WalkContext, dict) -> (WalkResult, dict)
        Walk the capture with these parameters; the dict holds extra JSON fields.
    aliases : tuple of str
        Other names of the policy (``prompt-lookup`` for ``pld``).
    stochastic : bool
        MTP-based: replicated, figures rest on an acceptance curve.
    default : bool
        One of the policies run when none is given.
    drafter : callable(dict) -> lookup policy, optional
        Lookup policies: the :mod:`models.drafting.lookup` object of these parameters
        (raises ValueError / TypeError on bad values). Hybrids use it for their lookup side.
    fill : callable(dict, dict) -> None, optional
        Fill defaults into parsed parameters from the run's overrides (``{param: value or
        None}``) when the rule is not the plain one (hybrids: depends on the lookup).
    check : callable(dict) -> str or None, optional
        Cross-parameter check; returns ``(field, message)`` of a violation or None.
    vllm : str
        How vLLM / Hugging Face name it (docs table).
    synchronous : bool
        Every step consults a host-side lookup, so the step is charged the cost model's
        ``sync_factor`` (the walk's synchronous modes: the lookup policies, ``suffix-first``,
        ``tree``); what re-pricing a result under another sync factor reads.
    """

    name: str
    help: str
    params: tuple
    walk: Callable
    aliases: tuple = ()
    stochastic: bool = False
    default: bool = False
    drafter: Callable | None = None
    fill: Callable | None = None
    check: Callable | None = None
    vllm: str = ""
    synchronous: bool = False

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def keys(self) -> tuple:
        """Canonical parameter names, in declaration order."""
        return tuple(p.name for p in self.params)

    def canonical(self, key: str) -> str:
        """The canonical name of a parameter spelling (itself when unknown)."""
        for p in self.params:
            if key == p.name or key in p.aliases:
                return p.name
        return key

    def fill_defaults(self, params: dict, overrides: dict | None = None) -> None:
        """Fill ``params`` in place: each parameter not given takes the run's override
        (``overrides[name]`` when not None) or, when :attr:`Param.shown`, its default."""
        if self.fill is not None:
            self.fill(params, overrides or {})
            return
        ov = overrides or {}
        for p in self.params:
            if ov.get(p.name) is not None:
                params.setdefault(p.name, ov[p.name])
            elif p.shown:
                params.setdefault(p.name, p.default)


#: The registry: one module per policy, in display order (``--help``, docs, defaults).
MODULES = (
    "ar",
    "pld",
    "hf_pld",
    "ngram",
    "suffix",
    "mtp",
    "hybrid_max",
    "suffix_first",
    "tree",
)

_REGISTRY: dict[str, Policy] = {}


def _load() -> dict[str, Policy]:
    if not _REGISTRY:
        for m in MODULES:
            pol = importlib.import_module(f"{__name__}.{m}").POLICY
            _REGISTRY[pol.name] = pol
    return _REGISTRY


def registry() -> dict[str, Policy]:
    """Every registered policy, name -> :class:`Policy`, in display order."""
    return dict(_load())


def register(policy: Policy) -> None:
    """Add a policy declaration at run time (a name already taken is refused).

    Raises
    ------
    ValueError
        The name or an alias is taken.
    """
    reg = _load()
    taken = {a for p in reg.values() for a in (p.name, *p.aliases)}
    clash = {policy.name, *policy.aliases} & taken
    if clash:
        raise ValueError(f"policy name(s) already registered: {', '.join(sorted(clash))}")
    reg[policy.name] = policy


def unregister(name: str) -> None:
    """Remove a policy added by :func:`register`."""
    _load().pop(name, None)


def resolve(name: str) -> Policy | None:
    """The policy of a name or alias (case-insensitive), or None."""
    low = name.lower()
    for p in _load().values():
        if low == p.name or low in p.aliases:
            return p
    return None
