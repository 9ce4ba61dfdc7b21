"""The migration family's figures: the migration matrix of the obligors' grades over the
horizon, its bandwidths and the ECB stability test, from the collect pass's migrations (and,
frozen with the baseline, the same into the baseline's last window); the rules, the report
section and the declaration are in :mod:`riskmon.figures.migration`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from riskmon.config import ModelConfig
from riskmon.figures._family import finite, measured
from riskmon.figures._views import MigrationCounts, RunTables
from riskmon.figures.rating import MIN_GRADES, grade_source, grades_best_first
from riskmon.metrics import Binning, matrix_weighted_bandwidth, migration_stability_test
from riskmon.records import (
    ALL,
    BASELINE,
    CURRENT,
    MIGRATION,
    MIGRATION_APPEARED,
    MIGRATION_DEFAULTED,
    MIGRATION_LEFT,
    BinRecord,
    FigureRecord,
)

#: the margins after the K grades: rows (start) and columns (end)
ROW_MARGINS = ("no grade", "appeared")
COLUMN_MARGINS = ("no grade", "left", "defaulted")


@dataclass(frozen=True)
class Grid:
    """One segment's migrations as a (K + 2) × (K + 3) grid of obligors and of weights: the K
    grades best first, then the margins (:data:`ROW_MARGINS`, :data:`COLUMN_MARGINS`)."""

    labels: list[str]
    n: np.ndarray
    w: np.ndarray

    @property
    def k(self) -> int:
        return len(self.labels)

    @property
    def graded(self) -> np.ndarray:
        return self.n[: self.k, : self.k]


def grid(
    cells: Mapping[tuple[int, int], Sequence[float]], binning: Binning, best_first: bool
) -> Grid:
    """The grid of ``cells`` keyed by the grades' bins (missing and unseen bins: no grade)."""
    k = binning.n_value_bins
    labels = [str(label) for label in binning.labels[:k]]
    if not best_first:
        labels.reverse()

    def position(key: int) -> int:
        if key == MIGRATION_DEFAULTED:
            return k + 2
        if key in (MIGRATION_APPEARED, MIGRATION_LEFT):  # one code: the axis tells them apart
            return k + 1
        if key >= k:
            return k
        return key if best_first else k - 1 - key

    n = np.zeros((k + 2, k + 3))
    w = np.zeros((k + 2, k + 3))
    for (start, end), (count, weight) in cells.items():
        i, j = position(start), position(end)
        n[i, j] += float(count)
        w[i, j] += float(weight)
    return Grid(labels, n, w)


def adjusted_p(p: float, n_tests: int) -> float:
    """A cell's p-value Bonferroni-adjusted for the ``n_tests`` cells tested, as the
    ``migration_stability`` rule judges the smallest of them: min(1, p · n)."""
    return min(1.0, p * n_tests)


def _stability(graded: np.ndarray) -> tuple[float | None, str | None, list[dict[str, Any]]]:
    """The smallest Bonferroni-adjusted p that a cell holds more than its neighbour nearer the
    diagonal, why it is undefined, and every tested cell."""
    from scipy.special import ndtr  # the normal CDF; scipy loaded only when a figure needs it

    if graded.shape[0] < 3:
        return None, "the stability test needs at least 3 grades", []
    result, reason = measured(lambda: migration_stability_test(graded))
    if result is None:
        return None, reason, []
    cells = []
    k = graded.shape[0]
    for i in range(k):
        for j in range(k):
            z = float(result.statistic[i, j])
            if np.isnan(z):
                continue
            cells.append({"from": i + 1, "to": j + 1, "z": z, "p": float(ndtr(z))})
    if not cells:
        return None, reason or "no cell two or more grades off the diagonal could be tested", []
    smallest = min(c["p"] for c in cells)
    return adjusted_p(smallest, len(cells)), None, cells


def migration_figures(
    g: Grid,
    *,
    population: str,
    segment: str,
    weighted: bool,
    params: dict[str, Any],
    counts: dict[str, Any] | None = None,
    baseline: Mapping[str, float | None] | None = None,
) -> list[FigureRecord]:
    """The figures of one segment's migrations (also the baseline's, ``population`` BASELINE);
    ``counts`` (the margins, the rows left out) go with ``migration_rerated``."""
    graded = g.graded
    rerated = float(graded.sum())
    empty = "no obligor graded at both ends of the horizon" if rerated == 0 else None
    if g.k < MIN_GRADES:  # a bandwidth divides by the farthest grade an obligor can reach: 0
        empty = f"one grade only: a migration is measured over {MIN_GRADES} grades or more"
    base = dict(baseline or {})

    def figure(name: str, value: Any, reason: str | None, **more: Any) -> FigureRecord:
        value = finite(None if value is None else float(value))
        why = None if value is not None else (reason or "not defined on these migrations")
        return FigureRecord(
            name, value, population, segment=segment, reason=why, params=params | more
        )

    out = [figure("migration_rerated", rerated, None, **(counts or {}))]
    mwb, why = (None, empty) if empty else measured(lambda: matrix_weighted_bandwidth(graded))
    upper, lower = mwb if mwb is not None else (None, None)
    out.append(figure("migration_mwb_upper", upper, why, baseline=base.get("upper")))
    out.append(figure("migration_mwb_lower", lower, why, baseline=base.get("lower")))
    if weighted:
        exposure = g.w[: g.k, : g.k]
        mwb_w, why_w = (
            (None, empty) if empty else measured(lambda: matrix_weighted_bandwidth(exposure))
        )
        up_w, low_w = mwb_w if mwb_w is not None else (None, None)
        out.append(figure("migration_mwb_upper_exposure", up_w, why_w))
        out.append(figure("migration_mwb_lower_exposure", low_w, why_w))
        if population == CURRENT:
            out.append(figure("migration_within_one_exposure", _within_one(exposure), empty))
    if population != CURRENT:
        return out
    out.append(figure("migration_within_one", _within_one(graded), empty))
    p, reason, cells = (None, empty, []) if empty else _stability(graded)
    out.append(figure("migration_stability_p", p, reason, cells=cells))
    return out


def freeze(tables: RunTables) -> list[FigureRecord]:
    """The baseline's migration figures per segment (its re-rated obligors and bandwidths),
    which a run's bandwidths are compared with."""
    migrations = tables.migrations
    found = _grade(tables, BASELINE)
    if migrations is None or found is None:
        return []
    _, _, binning, best_first = found
    weighted = tables.model.columns.weight is not None
    figures: list[FigureRecord] = []
    for segment, counts in sorted(migrations.segments.items()):
        g = grid(counts.cells, binning, best_first)
        params = {"horizon": str(tables.model.migration_horizon)}
        figures += migration_figures(
            g,
            population=BASELINE,
            segment=segment,
            weighted=weighted,
            params=params,
            counts=_margins(g),
        )
    return figures


def _within_one(matrix: np.ndarray) -> float | None:
    """The share of a K × K matrix's mass on or next to the diagonal."""
    total = float(matrix.sum())
    rows, cols = np.indices(matrix.shape)
    return float(matrix[np.abs(rows - cols) <= 1].sum()) / total if total > 0 else None


def _grade(tables: RunTables, population: str = CURRENT) -> tuple[str, str, Binning, bool] | None:
    """The variable the grades of ``population`` are read from, what they are, their bins and
    their order (the score's bins run riskiest first when higher scores are safer)."""
    variable, what = grade_source(tables, population)
    if not tables.has(population, variable):
        return None
    binning = tables.table(population, variable).binning
    assert binning is not None
    best_first = grades_best_first(variable, tables.model)
    return variable, what, binning, best_first


def _params(model: ModelConfig, what: str, labels: list[str]) -> dict[str, Any]:
    return {
        "grades": what,
        "labels": labels,
        "horizon": str(model.migration_horizon),
        "min_rerated": model.rating.min_rerated,
    }


def compute(tables: RunTables) -> tuple[list[FigureRecord], list[BinRecord]]:
    """The migration figures and the matrix's cells per segment of the current population."""
    migrations = tables.migrations
    found = _grade(tables)
    if migrations is None or found is None:
        return [], []
    _, what, binning, best_first = found
    weighted = tables.model.columns.weight is not None
    figures: list[FigureRecord] = []
    bins: list[BinRecord] = []
    for segment, counts in sorted(migrations.segments.items()):
        g = grid(counts.cells, binning, best_first)
        params = _params(tables.model, what, g.labels)
        tallies = _margins(g) | (_unlinked(migrations) if segment == ALL else {})
        base = {
            side: _value(tables.baseline.figure(f"migration_mwb_{side}", segment=segment))
            for side in ("upper", "lower")
        }
        base_n = tables.baseline.figure("migration_rerated", segment=segment)
        tallies |= {"baseline_rerated": _value(base_n)}
        if base_n is None:
            tallies |= {
                "baseline_reason": f"baseline version {tables.baseline.version} was frozen "
                "without migrations; `riskmon baseline freeze` counts them"
            }
        made = migration_figures(
            g,
            population=CURRENT,
            segment=segment,
            weighted=weighted,
            params=params,
            counts=tallies,
            baseline=base,
        )
        figures += made
        stability = next(f for f in made if f.name == "migration_stability_p")
        bins += _cells(g, segment, stability)
    return figures, bins


def _value(figure: FigureRecord | None) -> float | None:
    return None if figure is None else figure.value


def _margins(g: Grid) -> dict[str, Any]:
    k = g.k
    return {
        "appeared": float(g.n[k + 1].sum()),
        "left": float(g.n[:, k + 1].sum()),
        "defaulted": float(g.n[:, k + 2].sum()),
        "ungraded": float(g.n[k].sum() + g.n[:k, k].sum()),
    }


def _unlinked(migrations: MigrationCounts) -> dict[str, Any]:
    return {
        "then": migrations.windows[0],
        "now": migrations.windows[1],
        "duplicates_start": migrations.duplicates[0],
        "duplicates_end": migrations.duplicates[1],
        "no_obligor_start": migrations.no_obligor[0],
        "no_obligor_end": migrations.no_obligor[1],
    }


def _cells(g: Grid, segment: str, stability: FigureRecord) -> list[BinRecord]:
    """The grid's non-empty cells (and every tested cell), row by row."""
    tested = {(c["from"] - 1, c["to"] - 1): c for c in stability.params.get("cells", [])}
    row_labels = [*g.labels, *ROW_MARGINS]
    column_labels = [*g.labels, *COLUMN_MARGINS]
    width = len(column_labels)
    out = []
    for i in range(g.n.shape[0]):
        total = float(g.n[i].sum())
        for j in range(width):
            test = tested.get((i, j))
            if g.n[i, j] == 0 and test is None:
                continue
            extra: dict[str, Any] = {"row": i, "col": j}
            if test is not None:
                extra |= {"z": test["z"], "p": test["p"]}
            out.append(
                BinRecord(
                    variable=MIGRATION,
                    population=CURRENT,
                    bin_index=i * width + j,
                    label=f"{row_labels[i]} → {column_labels[j]}",
                    n_total=int(g.n[i, j]),
                    total=float(g.w[i, j]),
                    segment=segment,
                    actual_share=float(g.n[i, j]) / total if total else None,
                    extra=extra,
                )
            )
    return out
