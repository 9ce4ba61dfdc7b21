"""The ranked view of a labeled score table: goods and bads per distinct score, riskiest first.

Every ranking figure (KS, AUC, curves, lift, cutoffs, costs) starts from this view, so score
direction is decided in exactly one place: ``higher_is_riskier`` is always explicit and never
guessed from the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._counts import CountTable
from riskmon.metrics._validation import FloatArray, IntArray


@dataclass(frozen=True)
class Ranked:
    """Goods and bads per distinct score, ordered from the riskiest score to the safest.

    ``scores`` are in the caller's units (descending when higher is riskier, ascending for
    scorecard points). ``n_goods`` and ``n_bads`` are row counts, used by sample-size
    dependent figures; ``goods`` and ``bads`` are summed weights, used by every figure.
    """

    scores: FloatArray
    goods: FloatArray
    bads: FloatArray
    n_rows_per_score: IntArray
    n_goods: int
    n_bads: int
    higher_is_riskier: bool
    has_ties: bool

    @property
    def total_goods(self) -> float:
        return float(self.goods.sum())

    @property
    def total_bads(self) -> float:
        return float(self.bads.sum())

    @property
    def total(self) -> float:
        return self.total_goods + self.total_bads

    def predicted_bad(self, cutoff: float) -> int:
        """How many leading (riskiest) rows of the table are on the risky side of ``cutoff``.

        The cutoff is inclusive: a score equal to the cutoff is predicted bad.
        """
        cutoff = _check_cutoff(cutoff)
        if self.higher_is_riskier:  # scores descending: count scores >= cutoff
            return int(np.searchsorted(-self.scores, -cutoff, side="right"))
        return int(np.searchsorted(self.scores, cutoff, side="right"))


def _check_cutoff(cutoff: Any) -> float:
    try:
        value = float(cutoff)
    except (TypeError, ValueError):
        raise InvalidDataError(f"Expected a numeric cutoff, got {cutoff!r}") from None
    if np.isnan(value):
        raise InvalidDataError(f"Expected a numeric cutoff, got {cutoff!r}")
    return value


def rank(table: CountTable, *, higher_is_riskier: bool) -> Ranked:
    """The ranked view of a labeled score table (one row per distinct score)."""
    if not table.labeled:
        raise InvalidDataError("Expected a labeled count table (goods and bads), got totals only")
    if table.values is None:
        raise InvalidDataError(
            "Expected a score table (one row per distinct score value), got a binned table"
        )
    bads, n_bads_per_score = table.bads, table.n_bads
    assert bads is not None
    assert n_bads_per_score is not None
    order = slice(None, None, -1) if higher_is_riskier else slice(None)
    n_bads = int(n_bads_per_score.sum())
    return Ranked(
        scores=table.values[order],
        goods=table.goods[order],
        bads=bads[order],
        n_rows_per_score=table.n_total[order],
        n_goods=int(table.n_total.sum()) - n_bads,
        n_bads=n_bads,
        higher_is_riskier=higher_is_riskier,
        has_ties=bool((table.n_total > 1).any()),
    )
