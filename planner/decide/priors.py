r"""Which noise prior a comparison uses, and the noise a user states.

Resolution order (:func:`resolve_prior`):

1. Stated noise wins: ``cv`` (run-to-run CV), ``cv_instance`` (between instances),
   ``aa_runs`` (an A/A sample of one config) -- see :func:`stated_prior`.
2. ``spec`` (the ``prior`` option): ``weak``/``none`` (weakly informative, the data must carry
   the noise), a platform name (that platform's embedded prior, by the user's explicit choice),
   or a JSON file (:data:`PRIOR_FILE_FORMAT`).
3. ``auto`` / none: the hierarchy (:mod:`models.stats.noise_hierarchy`) for the runs' platform,
   metric and workload -- the cell's own prior, or a known platform's prior borrowed with fewer
   degrees of freedom for an unseen metric or workload, or, for an unknown platform (quick forms
   without a platform, tables without a platform column), the population prior over platforms
   (:func:`models.stats.population.population_noise_prior`: a joint prior of the session and
   run-to-run scales learned from every platform with repeated runs; named ``population`` in
   the verdict's JSON). One platform's prior is never applied to another.

Stated noise, the maths
-----------------------
* ``cv = c`` (relative, e.g. ``2%``): :math:`\sigma^2 \sim` Scaled-Inv-:math:`\chi^2(\nu_c,
  s_c^2)`, :math:`s_c = \sqrt{\log(1+c^2)}`, with :math:`\nu_c =` :data:`STATED_DF` unless given
  as ``2%:df``: a stated CV is taken as known to about :math:`\pm 1/\sqrt{2\nu_c}` = 10 % of
  itself, as if measured from 51 runs (``20%`` is Scaled-Inv-chi2(50, 19.8 %), its 95 % range
  16.6-24.6 %; ``20%:5`` states six runs' worth of confidence, 12.4-49 %).
* ``aa_runs = x_1..x_n`` (n >= 2 runs of one config): :math:`\sigma^2 \sim`
  Scaled-Inv-:math:`\chi^2(n-1, s^2)` with :math:`s` the sample SD of :math:`\log x_i`
  (the posterior of a variance under :math:`p(\sigma^2) \propto 1/\sigma^2`).
* ``cv_instance``: the same conversion for :math:`\tau`. When it is not given, :math:`\tau` is
  the platform's (known platform) or, for an unknown platform, taken as included in the stated
  run-to-run noise: :math:`\tau \sim` Scaled-Inv-:math:`\chi^2(100, \max(c/20, 0.002\,\%))`,
  i.e. 0.25 % of the variance.

The log scale: a CV :math:`c` is the log-SD :math:`\sqrt{\log(1+c^2)}` of a log-normal run
with that CV (2 % -> 0.019998, 20 % -> 0.198; it was :math:`\log(1+c)`, 0.182 for 20 %, which
took a stated 20 % for 18 % and called a same-config pair 1.95 SD apart decisive, issue 20).

Commands spell these options ``--cv``, ``--cv-instance``, ``--aa-runs``, ``--prior``; this
module names the plain fields (``cv`` ...), so :class:`planner.errors.InputError` says
``field="cv"`` and the command layer adds ``--``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from models.stats.noise import NoisePrior

from planner.errors import InputError

__all__ = ["PriorChoice", "resolve_prior", "stated_prior", "parse_cv", "parse_runs_list",
           "prior_file_entry", "KNOWN_NOISE_DF", "known_run_prior",
           "build_hierarchy", "PRIOR_FILE_FORMAT", "STATED_DF", "PRIOR_HELP", "CV_HELP",
           "CV_INSTANCE_HELP", "AA_RUNS_HELP"]
# the model imports (SciPy) are inside the functions: the command modules import the help texts
# below at start-up

#: Degrees of freedom of a stated CV: +-10 % on the scale (1/sqrt(2 * 50) = 0.1).
STATED_DF = 50.0
#: Degrees of freedom of tau when only the run-to-run noise is stated (tau negligible).
_ABSORBED_DF = 100.0
#: Floor of that absorbed tau: 0.002 % (the exact engine's grid starts at 0.001 %).
_ABSORBED_FLOOR = 2e-5

#: The ``--prior FILE`` format, for ``--help`` and docs/model.md.
PRIOR_FILE_FORMAT = (
    'JSON {"tau": {"kind": "inv_chi2", "scale": 0.008, "df": 8}, "sigma": {"kind": '
    '"inv_chi2", "scale": 0.001, "df": 2}} (scales are relative SDs on the log scale, '
    '0.008 = 0.8 %; kind inv_chi2 (Scaled-Inv-chi2, df > 0) or half_normal (no df); '
    'the JSON result of planner calibrate is accepted as is)')

#: Help texts of the options, shared by ``verdict``, ``repeats`` and ``budget``.
PRIOR_HELP = ("Noise prior: auto (default: the noise hierarchy for the runs' platform, metric "
              "and workload; an unknown platform gets the population prior over platforms), weak, a platform "
              "(hf-a10g-small, local-a10g, published-n4) or a FILE: " + PRIOR_FILE_FORMAT)
CV_HELP = ("Your run-to-run noise as a CV, e.g. 2% (or 0.02): a Scaled-Inv-chi2 prior with 50 df "
           "(known to +-10 %, as if from 51 runs); '2%:5' gives the df (5: as if from 6 runs). "
           "Overrides the prior's run-to-run scale.")
CV_INSTANCE_HELP = ("Your between-instance (allocation/machine) noise as a CV, same syntax. "
                    "Without it: the platform's, or included in the run-to-run CV for an unknown "
                    "platform.")
AA_RUNS_HELP = ("TPS of repeated runs of ONE config (an A/A sample), comma-separated: the "
                "run-to-run noise is learned from them (n-1 df).")


@dataclass(frozen=True)
class PriorChoice:
    """The resolved noise prior and its description (what the verdict JSON puts under ``prior``).

    Unpacks as ``prior, label`` (``prior`` None means weakly informative with the data carrying
    the noise), as :func:`resolve_prior` returned before the hierarchy.

    Attributes
    ----------
    prior : NoisePrior or None
    level : str
        ``cell``, ``family``, ``platform``, ``unknown-platform``, ``stated``, ``file``,
        ``named`` (a platform named by the user) or ``weak``.
    cell : str
        ``platform/metric/workload`` the prior was chosen for (``*`` = not given).
    n_runs, n_cells, n_groups : int
        Runs, replicate cells and run groups behind it (0 when not from data).
    source : str
        Where the numbers come from.
    label : str
        Short label (``platform:local-a10g``, ``hierarchy:local-a10g/probe_wall/...``, ``weak``).
    notes : tuple of str
        What a report should say about the choice (e.g. the unknown-platform warning).
    """

    prior: NoisePrior | None
    level: str
    cell: str
    n_runs: int = 0
    n_cells: int = 0
    n_groups: int = 0
    source: str = ""
    label: str = ""
    notes: tuple = ()

    def __iter__(self):
        return iter((self.prior, self.label))

    def to_dict(self) -> dict:
        """JSON fields added to the verdict's ``prior`` (beside the prior's own dict)."""
        return {"level": self.level, "cell": self.cell, "n_runs": self.n_runs,
                "n_cells": self.n_cells, "n_groups": self.n_groups,
                "description": self.describe()}

    def describe(self) -> str:
        """One line for reports: which prior, for which cell, from how many runs."""
        what = {"cell": "fitted on this cell", "family": "borrowed from the metric family",
                "platform": "the platform's prior", "unknown-platform":
                "unknown platform: the population prior over platforms", "stated": "stated by the user",
                "file": "from a file", "named": "named by the user",
                "weak": "weakly informative"}.get(self.level, self.level)
        n = (f", from {self.n_runs} runs in {self.n_cells} repeated cells"
             f" ({self.n_groups} run groups)" if self.n_runs else "")
        if self.level == "unknown-platform" and self.n_runs:
            n = (f", fitted on {self.n_runs} runs in {self.n_cells} repeated-run groups of "
                 f"{self.n_groups} platforms")
        return f"{self.label} ({what}; {self.cell}{n})"


def _canon(platform: str | None) -> str:
    from planner.io.platforms import noise_cell as platform_key  # the prior's cell

    return platform_key(platform) or platform or ""


_HIERARCHY = None


def _hierarchy():
    global _HIERARCHY
    from models.stats.noise_hierarchy import load_hierarchy

    if _HIERARCHY is None:
        _HIERARCHY = load_hierarchy()
    return _HIERARCHY


#: df of a scale stated as known (``2%:known``, what ``planner repeats --known-noise``
#: states): above :data:`models.stats.assurance.KNOWN_DF` (1e6), so the assurance reads the scale as
#: exact. Not a df a user types: :data:`planner.io.limits.PRIOR_DF` stops at 1e5.
KNOWN_NOISE_DF = 1e9


def _population():
    """The population prior over platforms (:func:`models.stats.population.population_noise_prior`)."""
    from models.stats.population import population_noise_prior

    return population_noise_prior()


def _population_fit() -> dict:
    """The shipped population fit's counts: ``units``, ``platforms``, ``n_runs``."""
    from models.stats.population import _stored

    f = _stored()["fit"]
    return {"units": f["units"], "platforms": f["platforms"], "n_runs": f.get("n_runs", 0)}


def parse_cv(text: str | float, *, field: str = "cv") -> tuple[float, float]:
    """Parse a stated CV: ``2%``, ``0.02`` (a fraction), ``2%:30`` (with its df) or
    ``2%:known`` (an exact scale, df :data:`KNOWN_NOISE_DF`).

    The value and the df are read by the one number grammar
    (:func:`planner.io._parse.to_float`: ``2_0%`` is refused) and checked against
    :data:`planner.io.limits.NOISE_CV` (0.0001 % .. 99 %) and :data:`planner.io.limits.PRIOR_DF`
    (> 0 .. 10^5), the ranges every reader and ``planner calibrate`` apply.

    Returns
    -------
    log_sd, df : float
        :math:`\\sqrt{\\log(1 + c^2)}` (the log-SD of a log-normal run with CV c) and the
        degrees of freedom (:data:`STATED_DF` by default).

    Raises
    ------
    InputError
        Not a number, or the CV or df outside its range (naming ``field``).
    """
    from planner.io._parse import to_float
    from planner.io.limits import check

    s = str(text).strip()
    df = STATED_DF
    if ":" in s:
        s, d = s.split(":", 1)
        if d.strip(" ").lower() == "known":
            return _cv_log_sd(_parse_cv_value(s, text, field)), KNOWN_NOISE_DF
        try:
            df = to_float(d)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"df after ':' is not a number: {text!r}", field=field) from None
        df = check("df", df, field=field)
    return _cv_log_sd(_parse_cv_value(s, text, field)), df


def _cv_log_sd(c: float) -> float:
    """The log-SD of a log-normal run whose CV is ``c`` (a fraction): sqrt(log(1 + c^2))."""
    return math.sqrt(math.log1p(c * c))


def _parse_cv_value(s: str, text, field: str) -> float:
    """The CV of ``s`` (``2%`` or ``0.02``) as a fraction in :data:`planner.io.limits.NOISE_CV`."""
    from planner.io._parse import to_float
    from planner.io.limits import check

    pct = s.endswith("%")
    try:
        v = to_float(s[:-1] if pct else s)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"not a CV such as '2%' or '0.02': {text!r}", field=field) from None
    return check("cv", v / 100.0 if pct else v, field=field)


def parse_runs_list(text: str, *, field: str = "aa_runs") -> list[float]:
    """Comma-separated TPS values (an A/A sample), each by the one number grammar
    (:func:`planner.io._parse.to_float`) and in :data:`planner.io.limits.TPS`.

    Raises
    ------
    InputError
        A token that is not a number or a value outside the TPS range (naming its position
        and ``field``), or fewer than 2 values.
    """
    from planner.io._parse import refuse_decimal_comma, to_float
    from planner.io.limits import TPS

    refuse_decimal_comma(str(text), field=field)  # '308,5' is 308.5, not two runs
    out = []
    for k, tok in enumerate(str(text).replace(";", ",").split(",")):
        try:
            x = to_float(tok)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"not a number at position {k + 1}: {tok.strip()!r}",
                             field=field) from None
        out.append(TPS.check(x, field=f"{field} (position {k + 1})"))
    if len(out) < 2:
        raise InputError("an A/A sample needs at least 2 runs of one config", field=field)
    return out


def stated_prior(*, cv: str | None = None, cv_instance: str | None = None,
                 aa_runs: str | Sequence[float] | None = None,
                 base: NoisePrior | None = None) -> NoisePrior | None:
    """The noise prior a user states (None when nothing is stated).

    Parameters
    ----------
    cv : str, optional
        Run-to-run CV (``2%``, ``0.02``, ``2%:df``).
    cv_instance : str, optional
        Between-instance CV, same syntax.
    aa_runs : str or sequence of float, optional
        TPS of repeated runs of one config (one instance): sigma ~ Scaled-Inv-chi2(n-1, s).
    base : NoisePrior, optional
        The platform's prior: supplies tau when only the run-to-run noise is stated.

    Raises
    ------
    InputError
        Bad values, or both ``cv`` and ``aa_runs`` (two statements of one scale).
    """
    import numpy as np

    from models.stats.noise import NoisePrior, ScalePrior
    from models.stats.noise_hierarchy import WIDE

    if cv is None and cv_instance is None and aa_runs is None:
        return None
    if cv is not None and aa_runs is not None:
        raise InputError("give either cv or aa_runs (both state the run-to-run noise)",
                         field="aa_runs")
    parts = []
    sigma = None
    if cv is not None:
        s, df = parse_cv(cv, field="cv")
        sigma = ScalePrior("inv_chi2", s, df)
        parts.append(f"run-to-run CV {100 * math.expm1(s):.3g}% (df {df:g})")
    elif aa_runs is not None:
        from planner.io.limits import TPS, check

        x = parse_runs_list(aa_runs) if isinstance(aa_runs, str) else \
            [TPS.check(v, field=f"aa_runs (position {k + 1})") for k, v in enumerate(aa_runs)]
        if len(x) < 2:
            raise InputError("an A/A sample needs at least 2 runs of one config",
                             field="aa_runs")
        sd = float(np.std(np.log(x), ddof=1))
        if sd <= 0:
            raise InputError("the A/A runs are all equal: no spread to learn the noise from",
                             field="aa_runs")
        # the spread must be a noise scale a prior can hold (limits.NOISE_SCALE: a log-SD of
        # 0.0001 % .. log 2), the rule of a prior file and of planner calibrate
        check("noise_scale", sd, field="aa_runs (log-SD of the runs)")
        sigma = ScalePrior("inv_chi2", sd, float(len(x) - 1))
        parts.append(f"A/A sample of {len(x)} runs: log-SD {100 * sd:.3g}% (df {len(x) - 1})")
    if cv_instance is not None:
        s, df = parse_cv(cv_instance, field="cv_instance")
        tau = ScalePrior("inv_chi2", s, df)
        parts.append(f"between-instance CV {100 * math.expm1(s):.3g}% (df {df:g})")
    elif base is not None:
        tau = base.tau
        parts.append(f"tau from {base.name}")
    else:
        ref = sigma.scale if sigma is not None else 0.0
        tau = ScalePrior("inv_chi2", max(ref / 20.0, _ABSORBED_FLOOR), _ABSORBED_DF)
        parts.append("between-instance noise taken as included in the stated run-to-run noise")
    if sigma is None:  # only cv_instance stated
        sigma = base.sigma if base is not None else WIDE.sigma
        parts.append(f"sigma from {base.name if base is not None else 'the wide prior'}")
    return NoisePrior(tau=tau, sigma=sigma, name="stated", source="; ".join(parts))


def known_run_prior(cv: float, *, field: str = "sigma_tps", what: str = "stated") -> NoisePrior:
    """A noise prior holding one run's total CV as known: the sizing's noise when a user
    states the sd of one run (``planner draft --sigma-tps``).

    Parameters
    ----------
    cv : float
        Relative sd of one run on a new allocation (a fraction: 0.01 = 1 %), between
        instances and within one together.
    field : str
        The input named by the error.
    what : str
        How the figure was given, for the prior's ``source``.

    Returns
    -------
    NoisePrior
        sigma: Scaled-Inv-chi2(:data:`KNOWN_NOISE_DF`, sqrt(log(1 + cv^2))), read as exact by
        the assurance; tau: the absorbed floor (the stated sd includes it), as
        :func:`stated_prior` does for a CV stated without a platform.

    Raises
    ------
    InputError
        ``cv`` outside :data:`planner.io.limits.NOISE_CV` (0.0001 % .. 99 %).
    """
    from models.stats.noise import NoisePrior, ScalePrior
    from planner.io.limits import NOISE_CV

    c = float(cv)
    if not NOISE_CV.low <= c <= NOISE_CV.high:
        # the rule of a stated CV (0.0001 % .. 99 %), worded for an sd given in TPS: no
        # "did you mean a fraction" hint, which fits a CV typed as a percentage
        raise InputError(f"one run's sd is {100 * c:.4g} % of the baseline: a run's sd must "
                         f"lie within {100 * NOISE_CV.low:g} % .. {100 * NOISE_CV.high:g} % of "
                         "its level", field=field)
    s = _cv_log_sd(c)
    return NoisePrior(tau=ScalePrior("inv_chi2", max(s / 20.0, _ABSORBED_FLOOR), _ABSORBED_DF),
                      sigma=ScalePrior("inv_chi2", s, KNOWN_NOISE_DF), name="stated",
                      source=f"{what}: one run's CV {100 * c:.3g} % (known)")


def _read_prior_file(spec: str) -> NoisePrior:
    from models.stats.noise import NoisePrior
    from planner.io.limits import check_noise_prior

    p = Path(spec)
    try:
        from planner.io.files import read_text  # bounded: /dev/zero, a sparse file refused

        from models.files import loads_json

        d = loads_json(read_text(p, spec), spec, InputError)
        # the rule planner calibrate applies to what it writes: kinds, scale and df ranges,
        # no booleans for numbers, no control characters in name/source
        d = check_noise_prior(d, file=spec)
        return NoisePrior.from_dict(d)
    except InputError:  # already one line naming the file and field (a ValueError too)
        raise
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=spec, line=exc.lineno,
                         field="prior") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"not a noise prior ({exc}); expected {PRIOR_FILE_FORMAT}",
                         file=spec, field="prior") from None


#: ``--prior`` words that name no file and no platform (any letter case).
PRIOR_WORDS = ("auto", "weak", "none")


def prior_file(spec: str | None) -> str | None:
    """``spec`` when it names a prior file: not empty, not a word of :data:`PRIOR_WORDS`,
    not a platform name (a platform wins over a same-named file, as in
    :func:`resolve_prior`), and an existing file; else None."""
    if not spec or spec.strip().lower() in PRIOR_WORDS or not Path(spec).is_file():
        return None
    from planner.io.platforms import platform_key

    return None if platform_key(spec) is not None else spec


def prior_file_entry(spec: str | None) -> dict | None:
    """The recorded-inputs entry of a ``--prior`` file: ``{role: "prior", name, sha256}``
    (the shape of :func:`planner.report.output.input_record`'s ``files``), so a saved report
    traces the prior it was computed with; None when ``spec`` names no file (auto, weak, a
    platform name).

    Parameters
    ----------
    spec : str or None
        The ``--prior`` value as given.
    """
    import hashlib

    if prior_file(spec) is None:
        return None
    return {"role": "prior", "name": spec,
            "sha256": hashlib.sha256(Path(spec).read_bytes()).hexdigest()}


def resolve_prior(spec: str | None, platform: str | None, metric: str | None = None,
                  workload: str | None = None, *, cv: str | None = None,
                  cv_instance: str | None = None,
                  aa_runs: str | Sequence[float] | None = None) -> PriorChoice:
    """Resolve the noise prior of a comparison (see the module docstring for the order).

    Parameters
    ----------
    spec : str or None
        ``None``/``auto``, ``weak``/``none``, a platform name or a prior JSON file.
    platform : str or None
        Platform of the runs (column or option); blank/None = unknown.
    metric, workload : str, optional
        The runs' metric and workload; with them ``auto`` picks the hierarchy cell. Without
        them a known platform gets its embedded prior (the behaviour before the hierarchy).
    cv, cv_instance, aa_runs : optional
        Stated noise (:func:`stated_prior`).

    Returns
    -------
    PriorChoice
        Unpacks as ``(prior or None, label)``.

    Raises
    ------
    InputError
        Unreadable or malformed prior file, unknown platform name, bad stated noise, or stated
        noise together with a ``spec`` other than auto.
    """
    from models.stats.noise import WEAK
    from planner.io.platforms import known_platforms, platform_prior

    plat = _canon(platform)
    cell = "/".join([plat or "?", metric or "*", workload or "*"])
    stated_given = cv is not None or cv_instance is not None or aa_runs is not None
    if stated_given:
        if spec not in (None, "auto"):
            raise InputError("give either a prior or stated noise (cv, cv_instance, aa_runs)",
                             field="prior")
        base = None
        if plat in known_platforms():
            base = _auto(plat, metric, workload).prior
        pr = stated_prior(cv=cv, cv_instance=cv_instance, aa_runs=aa_runs, base=base)
        return PriorChoice(pr, "stated", cell, source=pr.source, label="stated")
    word = spec.strip().lower() if spec is not None else None  # words in any case
    if spec is None or word == "auto":
        return _auto(plat, metric, workload)
    if word in PRIOR_WORDS:  # weak, none
        return PriorChoice(None, "weak", cell, source=WEAK.source, label="weak")
    try:
        pr = platform_prior(spec)
        return PriorChoice(pr, "named", f"{_canon(spec)}/*/*", source=pr.source,
                           label=f"platform:{_canon(spec)}")
    except KeyError:
        pass
    if not Path(spec).exists():
        raise InputError(f"unknown prior '{spec}' ({', '.join(known_platforms())}, weak or an "
                         "existing prior file)", field="prior")
    pr = _read_prior_file(spec)
    return PriorChoice(pr, "file", cell, source=pr.source or spec, label=f"file:{spec}")


def _auto(plat: str, metric: str | None, workload: str | None) -> PriorChoice:
    from planner.io.platforms import platform_prior

    cell = "/".join([plat or "?", metric or "*", workload or "*"])
    if plat == "published-n4":
        pr = platform_prior(plat)
        return PriorChoice(pr, "platform", cell, 4, 1, 1, pr.source, f"platform:{plat}")
    h = _hierarchy()
    if plat not in h.platforms():
        pr = _population()
        fit = _population_fit()
        note = (f"unknown platform '{plat}'" if plat else "no platform given") + (
            ": the population prior over platforms was used (session and run-to-run noise "
            f"drawn jointly from {fit['units']} repeated-run groups of "
            f"{len(fit['platforms'])} platforms, the session offset scaling with the run "
            "spread the data show); state your noise (a CV, A/A runs or a prior) or name the "
            "platform")
        return PriorChoice(pr, "unknown-platform", cell, fit["n_runs"], fit["units"],
                           len(fit["platforms"]), pr.source, "population", (note,))
    if metric is None:
        # no metric known: the platform's embedded prior, exactly as before the hierarchy
        pr = platform_prior(plat)
        t = h.tau.get(plat, {})
        return PriorChoice(pr, "platform", cell, t.get("n_runs", 0), t.get("n_cells", 0),
                           t.get("n_groups", 0), pr.source, f"platform:{plat}")
    ch = h.choose(plat, metric, workload)
    notes = ()
    if ch.level in ("family", "platform"):
        notes = (f"no repeated runs of {metric}/{workload} on {plat} in the shipped data: the "
                 f"noise prior is borrowed from the {ch.level} with fewer degrees of freedom",)
    return PriorChoice(ch.prior, ch.level, cell, ch.n_runs, ch.n_cells, ch.n_groups, ch.source,
                       f"hierarchy:{cell}", notes)


def build_hierarchy(table, *, exclude_groups: Sequence[str] = (), source: str | None = None):
    """Fit the noise hierarchy from a runs table (warm runs; cold first runs dropped).

    Parameters
    ----------
    table : planner.io.runs.RunsTable
    exclude_groups : sequence of str
        Run groups left out (the leave-one-group-out check).
    source : str, optional
        Provenance recorded in the fit (default: the table's path as given).

    Returns
    -------
    models.stats.noise_hierarchy.NoiseHierarchy
        Tau per platform from the embedded platform priors (``models/data/noise_priors.json``).
    """
    from models.stats.noise import _load_embedded
    from models.stats.noise_hierarchy import fit_hierarchy, replicate_cells

    t = table.measured()
    cold = t.cold_flags()
    ex = set(exclude_groups)
    keep = [k for k, r in enumerate(t.runs) if r.run_group not in ex]
    rs = [t.runs[k] for k in keep]
    cells = replicate_cells([_canon(r.platform) for r in rs], [r.metric for r in rs],
                            [r.workload for r in rs], [r.run_group for r in rs],
                            [r.config for r in rs], [r.instance for r in rs],
                            [r.tps for r in rs], cold[keep])
    emb = _load_embedded()
    tau = {
        "hf-a10g-small": {**{k: emb["hf-a10g-small"][k] for k in ("tau", "sigma", "source")},
                          "measured_on": {"metric": "bench_serving",
                                          "workload": "128x512 public"},
                          "n_runs": 12, "n_cells": 4, "n_groups": 4},
        "local-a10g": {**{k: emb["local-a10g"][k] for k in ("tau", "sigma", "source")},
                       "measured_on": {"metric": "decode_wall", "workload": "128x512"},
                       "n_runs": 268, "n_cells": 88, "n_groups": 38},
    }
    return fit_hierarchy(cells, tau, sources={
        "runs": source or table.path,
        "method": "replicate cells = warm runs of one config on one instance in one run group; "
                  "cold first runs dropped (RunsTable.cold_flags); top-down empirical Bayes",
        "excluded_groups": sorted(ex)})
