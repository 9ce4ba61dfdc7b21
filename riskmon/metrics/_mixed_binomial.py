"""The default count of a grade under the binomial law (ρ = 0) or the Vasicek one-factor mixture
of binomials (asset correlation ρ > 0): its tails, and the critical count of the binomial test.

With ρ > 0 each tail is an integral over the systematic factor (adaptive quadrature), so the
critical count — the smallest count whose upper tail is at most α — is first located on a cheap
fixed Gauss–Hermite rule and then settled by the exact tails around that guess: the same count a
bisection on the exact tails finds, in a handful of quadratures instead of one per halving.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

#: where, as quantiles of the Beta law behind P(Bin(N, p) ≥ D), the conditional tail probability
#: turns from 0 to 1: the integration over the systematic factor breaks there, so that the
#: quadrature cannot step over a narrow turn (large N, small correlation)
_TURN_QUANTILES = (1e-9, 1e-4, 0.01, 0.25, 0.5, 0.75, 0.99, 1 - 1e-4, 1 - 1e-9)
#: accuracy asked of the quadrature: relative, and absolute for pieces that hold next to
#: nothing (refining those only meets rounding), and how many subintervals it may use
_QUAD_RELATIVE_TOLERANCE = 1e-10
_QUAD_ABSOLUTE_TOLERANCE = 1e-30
_QUAD_SUBINTERVALS = 200
_SQRT_2PI = math.sqrt(2 * math.pi)
#: the PDs whose default count is certain: none defaults, every obligor defaults
_CERTAIN_PDS = (0.0, 1.0)
#: beyond |z| = 38.5 the normal density is below the smallest double: the integral stops there
_Z_RANGE = 38.5
#: fixed breaks that keep the bulk of φ resolved when every turn lies far out (tiny ρ)
_Z_BREAKS = (-_Z_RANGE, -8.0, -4.0, -2.0, 0.0, 2.0, 4.0, 8.0, _Z_RANGE)
#: nodes of the Gauss–Hermite rule that only guesses where the critical count lies
_GUESS_NODES = 64


def critical_count(n: float, pd: float, rho: float, alpha: float) -> int:
    """The smallest whole d with P(X >= d) <= alpha (the tail falls with d)."""
    top = math.ceil(n + 1)  # P(X >= 0) = 1 > alpha; P(X >= n + 1) = 0

    def exact(d: int) -> bool:
        return tail(d, n, pd, rho, upper=True) <= alpha

    if top <= 1 or rho == 0 or pd in _CERTAIN_PDS:  # an empty grade's PD may be NaN
        return _first_true(exact, 0, top)
    guess = _first_true(_guessed_tail(n, pd, rho, alpha), 0, top)
    return _first_true_near(exact, guess, top)


def _first_true(significant: Callable[[int], bool], safe: int, known: int) -> int:
    """By bisection, the smallest d in (safe, known] where ``significant`` holds, given that it
    holds at ``known`` (or is taken to), not at ``safe``, and holds on once it holds."""
    while known - safe > 1:
        mid = (safe + known) // 2
        if significant(mid):
            known = mid
        else:
            safe = mid
    return known


def _first_true_near(significant: Callable[[int], bool], guess: int, top: int) -> int:
    """:func:`_first_true` over (0, top], searched outwards from ``guess`` in doubling steps
    first, so that a close guess costs a few evaluations."""
    safe, known, step = 0, top, 1
    if guess < top and not significant(guess):
        safe = guess
        while safe + step < known and not significant(safe + step):
            safe, step = safe + step, step * 2
        known = min(safe + step, known)
    else:
        known = guess
        while known - step > safe and significant(known - step):
            known, step = known - step, step * 2
        safe = max(known - step, safe)
    return _first_true(significant, safe, known)


def _guessed_tail(n: float, pd: float, rho: float, alpha: float) -> Callable[[int], bool]:
    """Whether P(X >= d) <= alpha, the Vasicek mixture integrated on a fixed Gauss–Hermite
    rule: cheap, and close enough to start the exact search from."""
    from scipy.special import betainc, ndtr, ndtri

    nodes, weights = np.polynomial.hermite_e.hermegauss(_GUESS_NODES)
    weights = weights / _SQRT_2PI
    conditional = ndtr((ndtri(pd) - math.sqrt(rho) * nodes) / math.sqrt(1 - rho))

    def significant(d: int) -> bool:
        return float(weights @ betainc(d, n - d + 1, conditional)) <= alpha

    return significant


def tail(x: float, n: float, pd: float, rho: float, *, upper: bool) -> float:
    """P(X >= x) (``upper``) or P(X <= x) for X binomial (ρ = 0) or Vasicek-mixed binomial."""
    from scipy.special import betainc, betaincc

    if upper:  # P(X >= x) = I_p(x, n − x + 1)
        if x <= 0 or x >= n + 1:
            return 1.0 if x <= 0 else 0.0
        a, b = x, n - x + 1
    else:  # P(X <= x) = 1 − I_p(x + 1, n − x)
        if x >= n:
            return 1.0
        a, b = x + 1, n - x
    if rho == 0 or pd in _CERTAIN_PDS:  # a PD of 0 or 1 is certain whatever the correlation
        return float(betainc(a, b, pd) if upper else betaincc(a, b, pd))
    return vasicek_mixture(a, b, pd, rho, complement=not upper)


def vasicek_mixture(a: float, b: float, pd: float, rho: float, *, complement: bool) -> float:
    """E[I_p(Z)(a, b)] (or E[1 − I_p(Z)(a, b)] when ``complement``) over the systematic factor
    Z ~ N(0, 1), p(z) the Vasicek conditional PD: ∫ φ(z)·I_p(z)(a, b) dz, by adaptive
    quadrature piece by piece between the points where I_p(z)(a, b) turns and fixed breaks
    across the bulk of φ.
    """
    from scipy.integrate import quad
    from scipy.special import betainc, betaincinv, ndtr, ndtri

    threshold, load, idio = float(ndtri(pd)), math.sqrt(rho), math.sqrt(1 - rho)
    # 1 − I_p(a, b) = I_(1−p)(b, a), and 1 − p(z) = Φ(−(...)): the complement is computed
    # without subtracting from 1, which would drown its small values in rounding
    sign, first, second = (-1.0, b, a) if complement else (1.0, a, b)

    def integrand(z: float) -> float:
        density = math.exp(-z * z / 2) / _SQRT_2PI
        return density * float(betainc(first, second, ndtr(sign * (threshold - load * z) / idio)))

    # p(z) = q where z = (Φ⁻¹(PD) − √(1 − ρ)·Φ⁻¹(q)) / √ρ
    turns = (threshold - idio * ndtri(betaincinv(a, b, np.asarray(_TURN_QUANTILES)))) / load
    inside = (float(z) for z in turns if abs(z) < _Z_RANGE)
    bounds = sorted({*_Z_BREAKS, *inside})
    total = 0.0
    for low, high in itertools.pairwise(bounds):
        piece, _ = quad(
            integrand,
            low,
            high,
            epsabs=_QUAD_ABSOLUTE_TOLERANCE,
            epsrel=_QUAD_RELATIVE_TOLERANCE,
            limit=_QUAD_SUBINTERVALS,
        )
        total += piece
    return min(max(total, 0.0), 1.0)
