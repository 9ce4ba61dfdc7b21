"""Calibration over all grades at once: the Hosmer–Lemeshow χ² test with fixed PDs.

Grades k = 1..K (ordered, best first) with N_k obligors, D_k defaults and PD p_k:

    χ² = Σ_k (D_k − N_k·p_k)² / (N_k·p_k·(1 − p_k))

With PDs fixed before the outcome was known (out of sample), χ² has K degrees of freedom under
H0 (every PD right); estimated on the same data it would have K − 2, which does not apply to a
monitoring run. The χ² approximation needs enough expected defaults and survivors per grade
(about 5 each); grades short of that are pooled with their neighbours, or the test refused.
A grade whose PD is 0 or 1 has no variance, N·p·(1 − p) = 0: its term is not defined and it is
left out (its defaults are tested alone by the Jeffreys and binomial tests, defined there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._validation import (
    FloatArray,
    check_default_counts,
    check_grade_pds,
    not_available,
)

#: the expected defaults (and survivors) a grade needs for the χ² approximation
DEFAULT_MIN_EXPECTED = 5.0
#: how grades short of ``min_expected`` are treated
Merge = Literal["adjacent", "refuse"]
_MERGES = ("adjacent", "refuse")


@dataclass(frozen=True)
class HosmerLemeshowResult:
    """The Hosmer–Lemeshow test over a rating scale.

    Attributes
    ----------
    statistic : float
        χ² over the groups; ``float(result)`` gives it. NaN when the test is not available.
    pvalue : float
        P(χ²_dof >= statistic): small when some PDs are off.
    dof : int
        Degrees of freedom: the number of groups tested.
    groups : tuple of tuples of int
        The grades (positions in the input, from 0) tested together, in order; a grade alone
        unless it was pooled with its neighbours.
    excluded : tuple of int
        Grades left out because they hold no obligors (N = 0).
    certain : tuple of int
        Grades left out because their PD is 0 or 1: the variance N·p·(1 − p) of their term
        is 0.
    min_expected : float
        The expected defaults and survivors each group had to reach.
    merge : {"adjacent", "refuse"}
    """

    statistic: float
    pvalue: float
    dof: int
    groups: tuple[tuple[int, ...], ...]
    excluded: tuple[int, ...]
    certain: tuple[int, ...]
    min_expected: float
    merge: Merge

    def __float__(self) -> float:
        return self.statistic


def hosmer_lemeshow_test(
    defaults: Any,
    n: Any,
    pd: Any,
    *,
    min_expected: float = DEFAULT_MIN_EXPECTED,
    merge: Merge = "adjacent",
) -> HosmerLemeshowResult:
    """Hosmer–Lemeshow χ² test of the PDs of a rating scale, PDs fixed ex ante.

    χ² = Σ_k (D_k − N_k·p_k)² / (N_k·p_k·(1 − p_k)) over the groups, with as many degrees of
    freedom as groups (the PDs were not fitted to these outcomes).

    Grades with N = 0 carry no information and are left out (``excluded``); so are grades
    whose PD is exactly 0 or 1 (``certain``), whose term divides by N·p·(1 − p) = 0. Every other
    grade
    must expect at least ``min_expected`` defaults (N·p) and survivors (N·(1 − p)). When one
    does not, ``merge`` decides:

    - ``"adjacent"`` (default): grades are pooled in their order, best first, each group
      closing as soon as it reaches ``min_expected`` both ways; a short remainder at the end
      joins the last group. A pooled group adds up N and D, and its PD is the N-weighted mean
      PD, so its expected defaults are the sum of its grades'. ``groups`` says which grades
      were pooled.
    - ``"refuse"``: the test is not available (NaN, with a
      :class:`~riskmon.errors.DegenerateDataWarning` naming the grades).

    ``min_expected=0`` tests every non-empty grade on its own. When all grades together do not
    reach ``min_expected``, the test is not available either way.

    Parameters
    ----------
    defaults : array-like of float
        D_k, defaults per grade (non-integer effective counts allowed), 0 <= D_k <= N_k.
    n : array-like of float
        N_k, obligors per grade at the start of the horizon.
    pd : array-like of float
        p_k, the PD of each grade, in [0, 1]; not read for a grade with N = 0, so the mean PD
        of an empty grade may be NaN.
    min_expected : float, default 5.0
    merge : {"adjacent", "refuse"}, default "adjacent"

    Returns
    -------
    HosmerLemeshowResult

    References
    ----------
    Hosmer, D. W. & Lemeshow, S. (1980). Goodness of fit tests for the multiple logistic
    regression model. Communications in Statistics — Theory and Methods 9(10), 1043–1069.
    Basel Committee on Banking Supervision (2005). Studies on the validation of internal rating
    systems, Working Paper 14, section 5.

    Examples
    --------
    Three grades of 100 obligors with PDs 5 %, 10 % and 20 %: the first expects 5 defaults.

    >>> r = hosmer_lemeshow_test([7, 10, 16], [100, 100, 100], [0.05, 0.10, 0.20])
    >>> round(r.statistic, 4), r.dof, r.groups
    (1.8421, 3, ((0,), (1,), (2,)))
    >>> r = hosmer_lemeshow_test([2, 10, 16], [50, 100, 100], [0.05, 0.10, 0.20])
    >>> r.dof, r.groups
    (2, ((0, 1), (2,)))

    A grade whose PD is 1 is left out:

    >>> r = hosmer_lemeshow_test([7, 10, 16, 20], [100, 100, 100, 20], [0.05, 0.10, 0.20, 1.0])
    >>> round(r.statistic, 4), r.dof, r.certain
    (1.8421, 3, (3,))
    """
    d, total = check_default_counts(defaults, n)
    p = check_grade_pds(pd, total, closed=True)
    if not (np.isfinite(min_expected) and min_expected >= 0):
        raise InvalidDataError(f"Expected min_expected >= 0, got {min_expected!r}")
    minimum = float(min_expected)
    if merge not in _MERGES:
        raise InvalidDataError(f"Expected merge in {_MERGES!r}, got {merge!r}")
    empty = total == 0
    excluded = tuple(int(k) for k in np.flatnonzero(empty))
    sure = ~empty & ((p == 0) | (p == 1))
    certain = tuple(int(k) for k in np.flatnonzero(sure))
    kept = np.flatnonzero(~empty & ~sure)
    nan = float("nan")
    singles = tuple((int(k),) for k in kept)

    def unavailable(reason: str) -> HosmerLemeshowResult:
        not_available(f"The Hosmer–Lemeshow test is not available: {reason}", stacklevel=4)
        return HosmerLemeshowResult(
            nan, nan, len(singles), singles, excluded, certain, minimum, merge
        )

    if kept.size == 0:
        if certain:
            return unavailable(
                "every grade holding obligors has a PD of 0 or 1, whose variance N·p·(1 − p) is 0"
            )
        return unavailable("no grade holds obligors")
    expected = total[kept] * p[kept]
    short = np.minimum(expected, total[kept] - expected) < minimum
    if short.any() and merge == "refuse":
        grades = [int(k) for k in kept[short]]
        return unavailable(f"grade(s) {grades} expect fewer than {minimum:g} defaults or survivors")
    groups = _pool(total[kept], expected, minimum)
    if groups is None:
        return unavailable(
            f"all grades together expect fewer than {minimum:g} defaults or survivors"
        )
    statistic = _chi_square(d[kept], total[kept], expected, groups)
    from scipy.special import chdtrc  # the χ² survival function, as scipy.stats.chi2.sf

    return HosmerLemeshowResult(
        statistic=statistic,
        pvalue=float(chdtrc(len(groups), statistic)),
        dof=len(groups),
        groups=tuple(tuple(int(kept[i]) for i in group) for group in groups),
        excluded=excluded,
        certain=certain,
        min_expected=minimum,
        merge=merge,
    )


def _pool(total: FloatArray, expected: FloatArray, minimum: float) -> list[list[int]] | None:
    """Adjacent grades pooled, in order, until each group expects ``minimum`` defaults and
    survivors; None when even all grades together do not."""
    groups: list[list[int]] = []
    current: list[int] = []
    n_sum = e_sum = 0.0
    for i in range(total.size):
        current.append(i)
        n_sum += total[i]
        e_sum += expected[i]
        if min(e_sum, n_sum - e_sum) >= minimum:
            groups.append(current)
            current, n_sum, e_sum = [], 0.0, 0.0
    if current:  # a short remainder joins the last group
        if not groups:
            return None
        groups[-1].extend(current)
    return groups


def _chi_square(
    d: FloatArray, total: FloatArray, expected: FloatArray, groups: list[list[int]]
) -> float:
    """Σ over groups of (D − E)² / (E·(1 − p̄)), p̄ = E / N the group's N-weighted mean PD."""
    statistic = 0.0
    for group in groups:
        n_g, d_g, e_g = total[group].sum(), d[group].sum(), expected[group].sum()
        statistic += float((d_g - e_g) ** 2 / (e_g * (1 - e_g / n_g)))
    return statistic
