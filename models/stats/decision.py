r"""The decision rule of an A/B comparison: four labels from the posterior of Δ.

With :math:`\Delta = \mu_B - \mu_A` (log TPS), a region of practical equivalence (ROPE)
:math:`(-r, r)`, :math:`r \ge 0`, and the highest-density interval :math:`[L, U]` of mass
:math:`h` (0.95 by default) of the posterior :math:`p(\Delta \mid y)`, the rules are

``verdict`` (and ``equivalence``, which reads the same labels)
    .. math::

        \text{label} = \begin{cases}
            \text{B better}  & L > r, \\
            \text{A better}  & U < -r, \\
            \text{equivalent} & r > 0 \text{ and } -r < L \le U < r, \\
            \text{undecided} & \text{otherwise};
        \end{cases}

    the HDI-versus-ROPE rule (J. K. Kruschke, "Rejecting or accepting parameter values in
    Bayesian estimation", *Adv. Methods Pract. Psychol. Sci.* 1 (2018) 270-280), with strict
    inequalities and no equivalence for a zero-width ROPE.

``superiority``
    "B better" when :math:`P(\Delta > r \mid y) \ge \ell` (the ``level``, 0.95 by default),
    else "undecided"; the rule never says "A better" or "equivalent".

The label a *true* Δ deserves (:func:`target_labels`, what a simulated experiment should
reach) is B better for :math:`\Delta > r`, A better for :math:`\Delta < -r`, equivalent
otherwise; under ``superiority`` only B better can be reached (:math:`\Delta > r`), under
``equivalence`` only equivalent (:math:`|\Delta| < r`).

Labels have integer codes (:data:`UNDECIDED` 0, :data:`B_BETTER` 1, :data:`A_BETTER` 2,
:data:`EQUIVALENT` 3) for array work: the assurance kernels of :mod:`models.stats.assurance`
return them, decide by CDF and density values instead of an HDI search, and are tested
against :func:`label_code` on random mixtures.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["UNDECIDED", "B_BETTER", "A_BETTER", "EQUIVALENT", "LABEL_NAMES", "LABEL_CODES",
           "LABELS", "RULES", "label_code", "label_from", "target_labels"]

#: Integer label codes (arrays of labels are int8 of these).
UNDECIDED, B_BETTER, A_BETTER, EQUIVALENT = 0, 1, 2, 3
#: Code -> label name.
LABEL_NAMES = {UNDECIDED: "undecided", B_BETTER: "B better", A_BETTER: "A better",
               EQUIVALENT: "equivalent"}
#: Label name -> code.
LABEL_CODES = {name: code for code, name in LABEL_NAMES.items()}
#: The label names in reporting order (decisive directions first).
LABELS = ("B better", "A better", "equivalent", "undecided")
#: The decision rules.
RULES = ("verdict", "superiority", "equivalence")


def _check_rule(rule: str) -> None:
    if rule not in RULES:
        raise ValueError(f"unknown decision rule {rule!r}; expected one of {', '.join(RULES)}")


def label_code(hdi_low: float, hdi_high: float, rope: float, *, rule: str = "verdict",
               p_gt_rope: float | None = None, level: float = 0.95) -> int:
    """The label code of one posterior of Δ under ``rule``.

    Parameters
    ----------
    hdi_low, hdi_high : float
        The HDI of Δ (log scale); used by ``verdict`` and ``equivalence``.
    rope : float
        ROPE half-width r (log scale, >= 0).
    rule : {"verdict", "superiority", "equivalence"}
    p_gt_rope : float, optional
        P(Δ > r | y); required by ``superiority``.
    level : float
        Posterior probability ``superiority`` requires (0.95 by default).

    Returns
    -------
    int
        One of :data:`UNDECIDED`, :data:`B_BETTER`, :data:`A_BETTER`, :data:`EQUIVALENT`.

    Raises
    ------
    ValueError
        An unknown ``rule``, or ``superiority`` without ``p_gt_rope``.
    """
    _check_rule(rule)
    if rule == "superiority":
        if p_gt_rope is None or math.isnan(p_gt_rope):
            raise ValueError("the superiority rule needs p_gt_rope = P(delta > rope)")
        return B_BETTER if p_gt_rope >= level else UNDECIDED
    if hdi_low > rope:
        return B_BETTER
    if hdi_high < -rope:
        return A_BETTER
    if rope > 0 and hdi_low > -rope and hdi_high < rope:
        return EQUIVALENT
    return UNDECIDED


def label_from(summary, ok: bool = True, *, rule: str = "verdict", level: float = 0.95) -> str:
    """The label name of a :class:`models.stats.tps_model.DeltaSummary`.

    Parameters
    ----------
    summary : DeltaSummary
        Reads ``hdi_low``, ``hdi_high``, ``rope`` and, for ``superiority``, ``p_gt_rope``.
    ok : bool
        False when the fit's diagnostics failed: the label is then "undecided".
    rule, level
        As in :func:`label_code`.

    Returns
    -------
    str
        One of :data:`LABELS`.
    """
    if not ok:
        _check_rule(rule)
        return LABEL_NAMES[UNDECIDED]
    p = summary.p_gt_rope if rule == "superiority" else None
    return LABEL_NAMES[label_code(summary.hdi_low, summary.hdi_high, summary.rope, rule=rule,
                                  p_gt_rope=p, level=level)]


def target_labels(delta: np.ndarray, rope: float, rule: str) -> np.ndarray:
    """The label each true Δ deserves under ``rule``.

    Parameters
    ----------
    delta : ndarray
        True Δ (log scale), any shape.
    rope : float
        ROPE half-width (log scale).
    rule : {"verdict", "superiority", "equivalence"}
        Unknown names are read as ``verdict``.

    Returns
    -------
    ndarray of int8, shape of ``delta``
        B better if Δ > rope, A better if Δ < −rope, else equivalent; -1 (nothing to reach)
        where the rule cannot call the deserved label (superiority: Δ <= rope; equivalence:
        |Δ| >= rope).
    """
    t = np.full(delta.shape, EQUIVALENT, np.int8)
    t[delta > rope] = B_BETTER
    t[delta < -rope] = A_BETTER
    if rule == "superiority":
        t[delta <= rope] = -1  # nothing to reach
    if rule == "equivalence":
        t[np.abs(delta) >= rope] = -1
    return t
