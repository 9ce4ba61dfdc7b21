"""The two-sample KS p-value as ``scipy.stats.ks_2samp`` (``method="auto"``) defines it:
exact for samples of at most :data:`KS_EXACT_MAX_N` rows, from the asymptotic Kolmogorov
distribution (``scipy.stats.kstwo``) beyond."""

from __future__ import annotations

import math

import numpy as np

#: scipy's ``ks_2samp(method="auto")`` computes the exact p-value when both samples have at
#: most this many rows, and the asymptotic one beyond (scipy.stats._stats_py.MAX_AUTO_N)
KS_EXACT_MAX_N = 10_000


def _ks_exact_pvalue(n1: int, n2: int, d: float) -> float:
    """P(D >= d) for two samples of n1 and n2 rows without ties (exact).

    Counts the lattice paths of a random interleaving of the two samples that leave the band
    |i/n1 − j/n2| < d, by carrying the probability mass anti-diagonal by anti-diagonal and
    adding up the mass that exits (summing small positive terms keeps tiny p-values
    accurate). d is first rounded to the lattice h/lcm(n1, n2), as scipy does.
    """
    g = math.gcd(n1, n2)
    lcm = (n1 // g) * n2
    h = round(d * lcm)
    if h == 0:
        return 1.0
    limit = h * g  # inside the band iff |i·n2 − j·n1| < h·g
    if n1 > n2:
        n1, n2 = n2, n1
    total = n1 + n2
    i = np.arange(n1 + 2, dtype=np.int64)
    mass = np.zeros(n1 + 2)
    mass[0] = 1.0
    outside = 0.0
    lo, hi = 0, 0  # cells of the current anti-diagonal that may hold mass
    for s in range(total):
        remaining = total - s
        cells = i[lo : hi + 1]
        here = mass[lo : hi + 1].copy()
        mass[lo : hi + 1] = 0.0
        mass[lo : hi + 1] += here * ((n2 - (s - cells)) / remaining)
        mass[lo + 1 : hi + 2] += here * ((n1 - cells) / remaining)
        hi = min(hi + 1, n1, s + 1)
        lo = max(lo, s + 1 - n2)
        window = slice(lo, hi + 1)
        out = np.abs(i[window] * total - (s + 1) * n1) >= limit
        outside += float(mass[window][out].sum())
        mass[window][out] = 0.0
        inside = np.flatnonzero(~out)
        if inside.size == 0:
            break
        lo, hi = lo + int(inside[0]), lo + int(inside[-1])
    return min(max(outside, 0.0), 1.0)


def ks_pvalue(n_bads: int, n_goods: int, d: float) -> tuple[float, str]:
    if max(n_bads, n_goods) <= KS_EXACT_MAX_N:
        return _ks_exact_pvalue(n_bads, n_goods, d), "exact"
    en = float(np.round(n_bads * n_goods / (n_bads + n_goods)))
    p = _kstwo_sf_special(en, d)
    if p is None:
        # imported here: collecting alone should not load scipy; and scipy.stats costs a
        # second to import, so only the cases scipy.special cannot answer pay for it
        from scipy import stats

        p = float(stats.kstwo.sf(d, en))
    return min(max(p, 0.0), 1.0), "asymptotic"


#: above this n, scipy.stats.kstwo.sf answers from scipy.special alone when n·d² is large
_KSTWO_SPECIAL_MIN_N = 140
#: n·d² at and above which kstwo.sf is 0, and at and above which it is 2·smirnov(n, d)
_KSTWO_ZERO_NX2, _KSTWO_SMIRNOV_NX2 = 370.0, 2.2


def _kstwo_sf_special(n: float, d: float) -> float | None:
    """``scipy.stats.kstwo.sf(d, n)`` where scipy itself computes it with scipy.special
    (Simard & L'Ecuyer 2011: large n and n·d²), else None.

    The branches and their order are those of scipy's ``_kolmogn`` for the survival function,
    so the value is the same to the bit; the other cases are left to scipy.stats.
    """
    from scipy.special import smirnov  # imported here: collecting alone should not load scipy

    t = n * d
    if n <= _KSTWO_SPECIAL_MIN_N or not 0.0 < d < 0.5 or t <= 1.0 or t >= n - 1:
        return None
    nx_squared = t * d
    if nx_squared >= _KSTWO_ZERO_NX2:
        return 0.0
    if nx_squared >= _KSTWO_SMIRNOV_NX2:
        return float(2 * smirnov(n, d))
    return None
