"""The policy grammar (``NAME`` or ``NAME:KEY=VALUE,...``), parameter validation, defaults and
the ``--help`` / docs texts, all derived from the policy registry
(:mod:`models.drafting.policies`): a policy is declared once, there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from models.drafting.policies import DRAFT_DEPTH as _DEPTH_RANGE
from models.drafting.policies import LOOKUP_THRESHOLD as _THRESHOLD_RANGE
from models.drafting.policies import MTP_K as _K_RANGE
from models.drafting.policies import N_WINDOW as _N_RANGE
from models.drafting.policies import Policy, Range, registry, resolve
from planner.errors import InputError
from planner.io.limits import Limit
from planner.results.counts import plural

__all__ = ["PolicySpec", "parse_policy", "validate_policy", "POLICY_GRAMMAR", "registry",
           "default_policies", "default_specs", "is_stochastic", "lookup_policy",
           "lookup_profile", "policy_help", "policy_table", "check_range", "N_WINDOW",
           "DRAFT_DEPTH", "MTP_K", "LOOKUP_THRESHOLD"]

_LIMITS: dict[int, Limit] = {}


def limit_of(r: Range) -> Limit:
    """The :class:`planner.io.limits.Limit` of a registry range (whole numbers)."""
    if id(r) not in _LIMITS:
        _LIMITS[id(r)] = Limit(r.label, r.unit, r.low, r.high, integer=True, why=r.why)
    return _LIMITS[id(r)]


#: Ranges of the policy parameters (``-p pld:n=..``, ``--n``, ``--depth``, ``--k``, the
#: draft-sweep lists), as declared in :mod:`models.drafting.policies`.
N_WINDOW = limit_of(_N_RANGE)
DRAFT_DEPTH = limit_of(_DEPTH_RANGE)
MTP_K = limit_of(_K_RANGE)
LOOKUP_THRESHOLD = limit_of(_THRESHOLD_RANGE)


@dataclass
class PolicySpec:
    """A drafting policy and its parameters.

    ``name`` a registered policy (:func:`models.drafting.policies.registry`); ``params``
    under the canonical names of its declaration.
    """

    name: str
    params: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``NAME(KEY=VALUE,...)``, the keys in the declaration's order (so ``pld:depth=12``
        and ``pld:n=2,depth=12`` are one policy, ``pld(n=2,depth=12)``, as the sweep labels
        it; the order the keys were typed in used to make two labels of one policy)."""
        if not self.params:
            return self.name
        pol = registry().get(self.name)
        order = {q.name: i for i, q in enumerate(pol.params)} if pol is not None else {}
        keys = sorted(self.params, key=lambda k: order.get(k, len(order)))
        return self.name + "(" + ",".join(f"{k}={self.params[k]}" for k in keys) + ")"


def default_policies() -> tuple:
    """Names of the policies run when none is given (declared ``default=True``)."""
    return tuple(n for n, p in registry().items() if p.default)


def is_stochastic(name: str) -> bool:
    """Is the policy MTP-based (replicated, resting on an acceptance curve)?"""
    return registry()[name].stochastic


_INT_RE = re.compile(r"^-?\d+$")


def _num(v: str):
    """A policy parameter's value: an int, a float by the one number grammar
    (:func:`planner.io._parse.to_float`; ``3_00`` and ``0x10`` stay text and are refused by the
    range checks), or the text itself (``lookup=pld``)."""
    from planner.io._parse import to_float

    if _INT_RE.match(v) and len(v) <= 30:  # longer: a float (inf), refused by the range check
        return int(v)
    try:
        return to_float(v)
    except ValueError:
        return v


#: The one grammar of a policy spec (``--policy``, plan files), for ``--help`` and errors.
POLICY_GRAMMAR = ("NAME or NAME:KEY=VALUE,KEY=VALUE,... (a ':' needs at least one pair; "
                  "no space, no empty item)")


def parse_policy(text: str, defaults: dict | None = None) -> PolicySpec:
    """Parse ``name`` or ``name:key=val,key=val`` (e.g. ``pld:n=3,depth=16``), the one grammar
    :data:`POLICY_GRAMMAR`: ``pld:`` and ``pld:,`` are both refused.

    Names, aliases and parameter spellings are the registry's: each parameter's aliases
    (``D`` for ``depth``, ``K`` for ``k``, vLLM's ``speculative_config`` names such as
    ``num_speculative_tokens`` and ``prompt_lookup_min``, Hugging Face's
    ``max_matching_ngram_size`` / ``prompt_lookup_num_tokens``) are stored under the
    canonical name. ``-`` in a key reads as ``_``.

    Raises
    ------
    InputError
        Unknown policy, malformed parameters, a parameter the policy does not take, or one
        given twice (also under two spellings).
    """
    bad = next((i for i, c in enumerate(text) if c.isspace()), None)
    if bad is not None:
        raise InputError(f"policy {text!r}: whitespace {text[bad]!r} at position {bad + 1} "
                         f"(grammar {POLICY_GRAMMAR})", field="policy")
    raw_name, sep, rest = text.partition(":")
    pol = resolve(raw_name)
    if pol is None:
        raise InputError(f"unknown policy {text!r} (one of {', '.join(registry())})",
                         field="policy")
    name = pol.name
    params = dict(defaults or {})
    given: dict = {}
    if sep and not rest:
        raise InputError(f"policy {text!r}: ':' with no parameters (write {name}, or "
                         f"{name}:key=value; grammar {POLICY_GRAMMAR})", field="policy")
    if rest:
        for kv in rest.split(","):
            if "=" not in kv or not kv.split("=", 1)[0] or not kv.split("=", 1)[1]:
                raise InputError(f"policy {text!r}: parameter {kv!r} is not key=value "
                                 f"(grammar {POLICY_GRAMMAR})", field="policy")
            raw, v = kv.split("=", 1)
            k = pol.canonical(raw.replace("-", "_"))
            if k not in pol.keys:
                takes = ", ".join(pol.keys) or "no parameters"
                raise InputError(f"policy {name} does not take {raw!r} (takes: {takes})",
                                 field="policy")
            if k in given:
                raise InputError(f"policy {name}: {k} given twice ({given[k]!r} and {raw!r})",
                                 field="policy")
            given[k] = raw
            params[k] = _num(v)
    return PolicySpec(name, params)


def default_specs(texts, overrides: dict | None = None) -> list[PolicySpec]:
    """Parse policy texts (default :func:`default_policies`) and fill each one's defaults:
    a parameter not given takes ``overrides[name]`` when not None (the run-wide values, e.g.
    one depth for every lookup), else its declared default when the declaration shows it
    (:meth:`models.drafting.policies.Policy.fill_defaults`).

    Raises
    ------
    InputError
        As :func:`parse_policy`.
    """
    specs = []
    for text in (list(texts) or list(default_policies())):
        sp = parse_policy(text)
        registry()[sp.name].fill_defaults(sp.params, overrides)
        twin = next((t for t, o in specs if o.label == sp.label), None)
        if twin is not None:  # it was run twice, two identical rows
            raise InputError(f"policy {text!r} is {sp.label}, already given as {twin!r}",
                             field="policy")
        specs.append((text, sp))
    return [sp for _, sp in specs]


def check_range(v, lim: Limit, fld: str) -> None:
    """``v`` (a policy parameter, None when not set) is a whole number in ``lim``."""
    if v is None:
        return
    if not isinstance(v, int) or isinstance(v, bool):
        raise InputError(f"must be a whole number in {lim.describe()}, got {v!r}", field=fld)
    lim.check(v, field=fld)


def validate_policy(spec: PolicySpec) -> None:
    """Range checks of every declared parameter with a range (K 1..16, depth 1..64, n
    1..16, thresholds 1..64) and the policy's own cross-checks (``min_n <= max_n``, a
    hybrid's lookup).

    Raises
    ------
    InputError
    """
    pol = registry()[spec.name]
    for prm in pol.params:
        if prm.range is not None:
            check_range(spec.params.get(prm.name), limit_of(prm.range), prm.name)
    if pol.check is not None:
        bad = pol.check(spec.params)
        if bad is not None:
            raise InputError(bad[1], field=bad[0])


def lookup_policy(name: str, params: dict):
    """The :mod:`models.drafting.lookup` object of a lookup policy (``pld``, ``hf-pld``,
    ``ngram``, ``suffix``: a declaration with a ``drafter``). Keys that only a hybrid reads
    (lookup, threshold, tree_depth, easy_threshold, gamma, k) are ignored; defaults are the
    declarations' (vLLM defaults, docs/drafting_lookup.md).

    Raises
    ------
    InputError
        Not a lookup policy, an unknown parameter or an invalid value.
    """
    from models.drafting.policies._hybrid import OWN

    pol = registry().get(name)
    if pol is None or pol.drafter is None:
        raise InputError(f"{name} is not a lookup policy", field="policy")
    p = dict(params)
    try:
        obj = pol.drafter(p)  # takes its own keys out of p
    except (ValueError, TypeError) as exc:
        raise InputError(f"bad parameters for {name}: {exc}", field="policy") from None
    for key in OWN:
        p.pop(key, None)
    if p:
        raise InputError(f"unknown {plural(len(p), 'parameter')} for {name}: {', '.join(sorted(p))}",
                         field="policy")
    return obj


def lookup_profile(capture, name: str, params: dict):
    """The capture's :class:`models.drafting.lookup.ProfileBatch` for a lookup policy (what
    :func:`models.drafting.walk.walk` takes as is)."""
    from models.drafting import lookup as lk

    return lk.draft_profiles(capture, policy=lookup_policy(name, params))


def profile_lists(batch):
    """Per-prompt (accept_len, match_len, proposed) lists of a profile batch (views), as the
    hybrids take them."""
    profs = batch.profiles()
    return ([p.accept_len for p in profs], [p.match_len for p in profs],
            [p.proposed for p in profs])


def _param_words(pol: Policy) -> str:
    out = []
    for p in pol.params:
        if p.brief:
            names = [a for a in p.aliases if len(a) > 1]
            out.append(p.name + (f" = {'/'.join(names)}" if names else ""))
    more = sum(not p.brief for p in pol.params)
    return ", ".join(out) + (f" (+{more} more, docs/drafting.md)" if more else "")


def policy_help() -> str:
    """The ``--policy`` help: the grammar, then every registered policy with its help and
    parameters (vLLM / Hugging Face names after ``=``)."""
    items = [f"{n} ({p.help}" + (f"; {_param_words(p)})" if p.params else ")")
             for n, p in registry().items()]
    return (f"repeatable; {POLICY_GRAMMAR}: 'pld:', 'pld:,' and 'pld: n=2' are refused. "
            "Unknown keys are refused. " + "; ".join(items) + ".")


def policy_table() -> str:
    """docs/drafting.md's policy table (Markdown), from the registry."""
    rows = ["| policy | aliases | what it is | parameters (default; range; other names) | "
            "stochastic | vLLM / HF |", "|---|---|---|---|---|---|"]
    for n, p in registry().items():
        prm = []
        for q in p.params:
            bits = [] if q.default is None else [f"{q.default}"]
            if q.range is not None:
                bits.append(f"{q.range.low}..{q.range.high}")
            if q.aliases:
                bits.append("/".join(q.aliases))
            prm.append(f"`{q.name}`" + (f" ({'; '.join(bits)})" if bits else ""))
        rows.append(f"| `{n}` | {', '.join(p.aliases) or '-'} | {p.help} | "
                    f"{', '.join(prm) or '-'} | {'yes' if p.stochastic else 'no'} | "
                    f"{p.vllm or '-'} |")
    return "\n".join(rows) + "\n"
