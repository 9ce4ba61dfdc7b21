"""What the aggregate rows of a collect pass must satisfy before they become count tables:
labels 0, 1 or NULL, numeric raw scores, no score in a missing bin, finite sums."""

from __future__ import annotations

import numbers
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.collect.aggregate import Aggregate
from riskmon.collect.request import CollectRequest
from riskmon.metrics import PD_SUMS, TARGET_MOMENTS, WEIGHTED_PD_SUMS, WEIGHTED_TARGET_MOMENTS

#: the largest finite double: a sum beyond it is infinite, and the figures built on it NaN
FLOAT_MAX = float(np.finfo(np.float64).max)


@dataclass(frozen=True)
class Overflow:
    """A population's sum that is not finite: its formula, and the columns it sums."""

    population: str
    formula: str
    columns: tuple[str, ...]

    def message(self) -> str:
        """What was expected and what was found; the caller names the first column."""
        of = ", ".join(repr(c) for c in self.columns)
        of = f" (of {of})" if len(self.columns) > 1 else ""
        return (
            f"expected values whose sum {self.formula}{of} over a population stays within "
            f"±{FLOAT_MAX:.3g} (a double's range), got one that is infinite in the "
            f"{self.population} population (a value infinite, or so large that the sum "
            "overflows): scale the values down (an exposure in thousands) or correct the "
            "outliers"
        )


def overflowing_sum(
    request: CollectRequest, aggregate: Aggregate, weights: dict[str, float]
) -> Overflow | None:
    """The first sum over a population's cells (in absolute value) that is not finite: the
    weights' (``weights``, from :func:`check_cells`), then the PD sums', then the target
    moments'; None when all are finite."""
    if request.weight is not None:
        for population, total in weights.items():
            if not np.isfinite(total):
                return Overflow(population, "Σw", (request.weight,))
    weighted = request.weight is not None
    pd_names = [*PD_SUMS, *(WEIGHTED_PD_SUMS if weighted else ())]
    moment_names = [*TARGET_MOMENTS, *(WEIGHTED_TARGET_MOMENTS if weighted else ())]
    for which, names in (("sums", pd_names), ("moments", moment_names)):
        totals: dict[str, Any] = {}
        with np.errstate(over="ignore", invalid="ignore"):
            for (population, *_), values in aggregate.sum_items(which):
                totals[population] = totals.get(population, 0.0) + np.abs(values)
        for population, total in totals.items():
            for name, value in zip(names, np.atleast_1d(total).tolist(), strict=False):
                if not np.isfinite(value):
                    head = _factors(name)
                    return Overflow(population, _formula(head), _columns(request, head))
    return None


def _factors(name: str) -> str:
    """The factors of a sum's name: ``wp2`` for Σw·p², ``y`` for ``n_y`` (realised targets)."""
    head = name.split("_")[0]
    return "y" if head == "n" else head


def _formula(factors: str) -> str:
    """``wp2`` as ``Σw·p²``."""
    terms: list[str] = []
    for char in factors:
        if char.isdigit():
            terms[-1] += "⁰¹²³⁴"[int(char)]
        else:
            terms.append(char)
    return "Σ" + "·".join(terms)


def _columns(request: CollectRequest, factors: str) -> tuple[str, ...]:
    """The columns a sum is made of (``w`` the weight, ``p`` the PD, ``y`` the target, ``s``
    the score), the weight first."""
    by_letter = {
        "w": request.weight,
        "p": request.pd.column if request.pd is not None else None,
        "y": request.target,
        "s": request.score,
        "u": request.downturn or request.score,
    }
    named = (by_letter[letter] for letter in "wpysu" if letter in factors)
    return tuple(column for column in named if column)


@dataclass(frozen=True)
class CellChecks:
    """What one pass over an aggregate's cells found (:func:`check_cells`)."""

    #: label values other than 0, 1 and NULL
    bad_labels: list[Any]
    #: rows whose raw (unbinned) score is NULL, or in the score's missing bin
    null_scores: int
    #: raw (unbinned) values that are not numbers
    not_numbers: list[Any]
    #: per population, the sum of the weights' absolute values (weighted requests only)
    weights: dict[str, float]


def check_cells(request: CollectRequest, aggregate: Aggregate, score: str) -> CellChecks:
    """One pass over the cells: their labels, the raw variables' keys, the rows in the missing
    bin of the first binned variable of the column ``score`` (every variable of a column sees
    the same rows) and the weights of the first variable (every variable counts the same
    rows)."""
    raw = {v.name for v in request.variables if v.binning is None}
    binned = [
        v
        for v in request.variables
        if v.column == score and v.binning is not None and v.crossed is None
    ]
    missing_variable = binned[0].name if binned else None
    missing = binned[0].binning.missing_index if binned and binned[0].binning else None
    # every variable counts the same rows: the first one's weights are the population's
    first = request.variables[0].name if request.weight is not None and request.variables else None
    labels: set[Any] = set()
    nulls, bad = 0, set()
    weights: dict[str, float] = defaultdict(float)
    for (population, variable), table in aggregate.tables.items():
        counts = table.summed()[0]  # a cell's rows and weight, per its codes
        labels.update(aggregate.labels.values[c] for c in np.unique(counts.codes[:, 1]).tolist())
        if variable in raw or variable == missing_variable:
            # per distinct key: its rows (counts of loans, exact as doubles)
            codes, at = np.unique(counts.codes[:, 2], return_inverse=True)
            key_rows = np.bincount(
                at.reshape(-1), weights=counts.values[:, 0], minlength=len(codes)
            )
            values = aggregate.keys[variable].values
            for code, n in zip(codes.tolist(), key_rows.tolist(), strict=True):
                key = values[code]
                if variable in raw:
                    if key is None:
                        nulls += int(n)
                    elif not _is_number(key):
                        bad.add(key)
                elif key == missing:
                    nulls += int(n)
        if variable == first:  # added cell by cell, in their order, as ever
            weights[population] += sum(abs(w) for w in counts.values[:, 1].tolist())
    for (population, variable, _, label), block in aggregate.blocks.items():
        labels.add(label)  # a block's keys are numbers (``Aggregate.blocks``), never NULL
        if variable == missing_variable and missing is not None:
            nulls += int(np.sum(np.asarray(block.rows)[np.asarray(block.keys) == missing]))
        if variable == first:
            weights[population] += float(np.sum(np.abs(block.weights)))
    bad_labels = [
        label
        for label in labels
        if label is not None and not (_is_number(label) and label in (0, 1))
    ]
    return CellChecks(sorted(bad_labels, key=repr), nulls, sorted(bad, key=repr), dict(weights))


def _is_number(value: Any) -> bool:
    if type(value) in (int, float):  # nearly every value; the ABC check below is slow
        return True
    return isinstance(value, (numbers.Number, np.number)) and not isinstance(value, complex)
