"""The one-sided Fisher exact test of a 2×2 table, as ``scipy.stats.fisher_exact`` computes it
(``alternative="greater"``), from scipy.special's hypergeometric distribution function: the
same value to the bit, without importing scipy.stats, which costs a run about half a second.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError

#: the largest count read exactly (a double's whole numbers are exact up to 2**53)
_MAX_COUNT = 2.0**53


def fisher_exact_greater(table: Any) -> float:
    """P-value of the one-sided Fisher exact test that the first row's share in the first
    column is greater than the second row's (the odds ratio above 1):
    ``scipy.stats.fisher_exact(table, alternative="greater").pvalue``.

    With the margins fixed, the first row's count in the second column is hypergeometric; the
    p-value is the probability of at most the count seen there. 1.0 where a row or a column
    is empty (no evidence either way), as scipy gives. Counts are read as whole numbers, as
    scipy reads them.

    Examples
    --------
    Eight of ten in the first row against one of six in the second:

    >>> round(fisher_exact_greater([[8, 2], [1, 5]]), 6)
    0.024476
    >>> fisher_exact_greater([[0, 3], [0, 4]])
    1.0
    """
    counts = np.asarray(table, dtype=np.float64)
    if counts.shape != (2, 2):
        raise InvalidDataError(f"Expected a 2×2 table of counts, got shape {counts.shape}")
    if not np.isfinite(counts).all() or (counts < 0).any() or (counts > _MAX_COUNT).any():
        raise InvalidDataError(
            f"Expected counts from 0 to 2**53 (whole numbers a double holds), "
            f"got {counts.tolist()!r}"
        )
    c = counts.astype(np.int64)
    if (c.sum(axis=0) == 0).any() or (c.sum(axis=1) == 0).any():
        return 1.0
    first_row = int(c[0, 0] + c[0, 1])
    second_column = int(c[0, 1] + c[1, 1])
    total = int(c.sum())
    p = _hypergeom_cdf()(int(c[0, 1]), first_row, second_column, total)
    return min(float(p), 1.0)


def _hypergeom_cdf() -> Any:
    """The hypergeometric CDF ``(k, n, N, M)`` (k of the N drawn from M hold one of the n
    marked) as ``scipy.stats.hypergeom.cdf(k, M, n, N)`` evaluates it within the support: its
    ufunc itself where this SciPy has it (scipy.special's ``_hypergeom_cdf``, Boost's), else
    ``hypergeom.cdf``."""
    try:
        from scipy.special._ufuncs import _hypergeom_cdf

        return _hypergeom_cdf
    except ImportError:  # pragma: no cover - an older SciPy
        from scipy.stats import hypergeom

        def cdf(k: int, n: int, drawn: int, total: int) -> Any:
            return hypergeom.cdf(k, total, n, drawn)

        return cdf
