"""The two-sample KS p-value as ``scipy.stats.ks_2samp`` (``method="auto"``) defines it:
exact for samples of at most :data:`KS_EXACT_MAX_N` rows, from the asymptotic Kolmogorov
distribution (``scipy.stats.kstwo``) beyond."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

#: scipy's ``ks_2samp(method="auto")`` computes the exact p-value when both samples have at
#: most this many rows, and the asymptotic one beyond (scipy.stats._stats_py.MAX_AUTO_N)
KS_EXACT_MAX_N = 10_000


def _ks_exact_pvalue(n1: int, n2: int, d: float) -> float:
    """P(D >= d) for two samples of n1 and n2 rows without ties (exact), by whichever of two
    exact ways costs less for these sizes: row by row of the smaller sample (samples of very
    different sizes: a hundred bads among two thousand goods in 4 ms against 11 ms) or
    anti-diagonal by anti-diagonal (samples of about the same size: two thousand of each in
    27 ms against 100 ms).
    """
    w_rows = 2 * d * max(n1, n2) + 1  # cells of a row inside the band
    w_diagonals = 2 * d * n1 * n2 / (n1 + n2) + 1  # and of an anti-diagonal
    # seconds a row and an anti-diagonal take (NumPy calls and cells), measured
    rows = min(n1, n2) * (2.0e-5 + 1.9e-8 * w_rows)
    diagonals = (n1 + n2) * (5.3e-6 + 1.4e-9 * w_diagonals)
    return _by_rows(n1, n2, d) if rows < diagonals else _by_diagonals(n1, n2, d)


def _by_rows(n1: int, n2: int, d: float) -> float:
    """P(D >= d), counting the paths row by row.

    A random interleaving of the samples is a lattice path from (0, 0) to (n1, n2), all
    C(n1 + n2, n1) of them equally likely; D >= d when the path leaves the band
    |i/n1 − j/n2| < d. The paths inside the band are counted row by row of the smaller sample
    (a row's counts are the cumulative sums of the row below, within the band: one NumPy pass
    a row), and every path that leaves is counted where it first leaves, times its ways on to
    (n1, n2): the sum of those small positive terms keeps a small p-value accurate, and one
    minus the share of paths that stay inside, a p-value near 1 (each is used where it is the
    accurate one). Counts and binomial coefficients are kept as logarithms. d is first rounded
    to the lattice h/lcm(n1, n2), as scipy does.
    """
    g = math.gcd(n1, n2)
    h = round(d * (n1 // g) * n2)
    if h == 0:
        return 1.0
    limit = h * g  # inside the band iff |i·n2 − j·n1| < h·g
    if n1 > n2:
        n1, n2 = n2, n1
    rows = np.arange(n1 + 1, dtype=np.int64)
    first = np.maximum((rows * n2 - limit) // n1 + 1, 0)  # each row's cells inside the band
    last = np.minimum(-(-(rows * n2 + limit) // n1) - 1, n2)
    exits = _Exits()
    # the row's counts as logarithms, less the row's largest (``scale``, kept apart): the counts
    # of one row span more than a double's range where the samples are large
    row, scale = np.zeros(int(last[0] - first[0]) + 1), 0.0
    stayed = True  # some path stays inside up to the current row
    for i in range(n1 + 1):
        if i:
            start, stop = int(first[i - 1]), int(last[i - 1])
            new_start, new_stop = int(first[i]), int(last[i])
            if new_start > start:  # a step up from a cell left of row i's band leaves it
                left = row[: new_start - start]
                exits.add(i, np.arange(start, start + left.size), left + scale)
            if new_stop < new_start:  # no cell of row i is inside: every path has left
                stayed = False
                break
            below = np.full(new_stop - new_start + 1, -np.inf)
            upto = min(new_stop, stop)
            if upto >= new_start:
                below[: upto - new_start + 1] = row[new_start - start : upto - start + 1]
            row = np.logaddexp.accumulate(below)
            top = float(row.max())
            if top == -np.inf:
                stayed = False
                break
            row -= top
            scale += top
        if last[i] < n2:  # a step right from the row's last cell inside leaves the band
            exits.add(i, np.array([last[i] + 1]), row[-1:] + scale)
    # (n1, n2) is the last cell of the last row
    inside = math.exp(row[-1] + scale - _log_binomial(n1 + n2, n1)) if stayed else 0.0
    p = 1.0 - inside if inside < 0.5 else exits.probability(n1, n2)
    return min(max(p, 0.0), 1.0)


def _by_diagonals(n1: int, n2: int, d: float) -> float:
    """P(D >= d), carrying the probability mass anti-diagonal by anti-diagonal.

    Counts the lattice paths of a random interleaving of the two samples that leave the band
    |i/n1 − j/n2| < d, by carrying the probability mass anti-diagonal by anti-diagonal and
    adding up the mass that exits (summing small positive terms keeps tiny p-values
    accurate). d is first rounded to the lattice h/lcm(n1, n2), as scipy does. The band's
    cells on each anti-diagonal are found from its bounds, so that the mass leaving it is read
    from the few cells past either end.
    """
    g = math.gcd(n1, n2)
    lcm = (n1 // g) * n2
    h = round(d * lcm)
    if h == 0:
        return 1.0
    limit = h * g  # inside the band iff |i·n2 − j·n1| < h·g, i.e. |i·total − t·n1| < h·g
    if n1 > n2:
        n1, n2 = n2, n1
    total = n1 + n2
    cells = np.arange(n1 + 1, dtype=np.float64)
    up = n1 - cells  # the paths' steps left in the smaller sample, from each cell
    mass = np.zeros(n1 + 2)
    mass[0] = 1.0
    outside = 0.0
    lo, hi = 0, 0  # the band's cells on the current anti-diagonal
    for s in range(total):
        remaining = total - s
        here = mass[lo : hi + 1]
        moved = here * (up[lo : hi + 1] / remaining)
        mass[lo : hi + 1] = here * ((cells[lo : hi + 1] + (n2 - s)) / remaining)
        mass[lo + 1 : hi + 2] += moved
        t = s + 1  # the anti-diagonal the mass is now on: cells up to hi + 1 may hold some
        new_lo = max(lo, t - n2, (t * n1 - limit) // total + 1)
        new_hi = min(hi + 1, n1, t, -(-(t * n1 + limit) // total) - 1)
        if new_lo > lo:
            outside += float(mass[lo:new_lo].sum())
            mass[lo:new_lo] = 0.0
        if new_hi < hi + 1:
            outside += float(mass[new_hi + 1 : hi + 2].sum())
            mass[new_hi + 1 : hi + 2] = 0.0
        if new_lo > new_hi:
            break
        lo, hi = new_lo, new_hi
    return min(max(outside, 0.0), 1.0)


class _Exits:
    """Where paths first leave the band (i, j) and the logarithm of how many do."""

    def __init__(self) -> None:
        self.i: list[npt.NDArray[np.int64]] = []
        self.j: list[npt.NDArray[np.int64]] = []
        self.log_paths: list[npt.NDArray[np.float64]] = []

    def add(self, i: int, j: Any, log_paths: npt.NDArray[np.float64]) -> None:
        some = np.isfinite(log_paths)  # log 0: no path leaves there
        if some.any():
            self.i.append(np.full(int(some.sum()), i, dtype=np.int64))
            self.j.append(np.asarray(j, dtype=np.int64)[some])
            self.log_paths.append(log_paths[some])

    def probability(self, n1: int, n2: int) -> float:
        """Σ paths leaving at (i, j) × C(n1 + n2 − i − j, n1 − i) / C(n1 + n2, n1)."""
        if not self.log_paths:
            return 0.0
        i = np.concatenate(self.i).astype(np.float64)
        j = np.concatenate(self.j).astype(np.float64)
        on = _log_binomial(n1 + n2 - i - j, n1 - i) - _log_binomial(n1 + n2, n1)
        return float(np.exp(np.concatenate(self.log_paths) + on).sum())


def _log_binomial(n: Any, k: Any) -> Any:
    """log C(n, k), through log B (which scipy computes without cancelling large terms)."""
    from scipy.special import betaln  # imported here: collecting alone should not load scipy

    return -np.log1p(n) - betaln(n - k + 1.0, k + 1.0)


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
