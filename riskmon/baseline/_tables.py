"""The count tables of one collect pass as the figure families read them: the
:class:`~riskmon.figures.RunTables` of a run (compared with its frozen baseline) and of a
freeze (the development window, compared with nothing), one implementation for both."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from riskmon.baseline._bins import FrozenBins
from riskmon.collect import ALL, CollectedTables, MigrationTables
from riskmon.config import ModelConfig
from riskmon.figures import BaselineView
from riskmon.metrics import (
    Binning,
    CountTable,
    PdTable,
    TargetTable,
    VintageTable,
    score_grid_table,
)
from riskmon.plan import DateWindow
from riskmon.records import GRADE, SCORE, SCORE_RANKING, Exclusions, FigureRecord, LevelCensus


def ranking_table(
    collected: CollectedTables, bins: FrozenBins, population: str, segment: str = ALL
) -> tuple[CountTable, CountTable | None]:
    """The score table a population is ranked on, and the grid table behind it (if any)."""
    table = collected.table(population, SCORE_RANKING, segment)
    if bins.ranking_grid is None:
        return table, None
    return score_grid_table(table, top=bins.score_top), table


@dataclass(frozen=True)
class CollectedRun:
    """The count tables of one collect pass as the figure families read them."""

    model: ModelConfig
    collected: CollectedTables
    bins: FrozenBins
    baseline: BaselineView

    @property
    def migrations(self) -> MigrationTables | None:
        return self.collected.migrations

    def window(self, population: str) -> DateWindow | None:
        return self.collected.windows.get(population)

    def exclusions(self, population: str) -> Exclusions | None:
        return self.collected.exclusions.get(population)

    def levels(self, variable: str) -> LevelCensus | None:
        return self.collected.levels.get(variable)

    def segments(self) -> list[str]:
        return self.collected.segments()

    def rows(self, population: str, segment: str = ALL) -> tuple[int, int] | None:
        counts = self.collected.counts.get((population, segment))
        return None if counts is None else (counts.n_rows, counts.n_unlabeled)

    def has(self, population: str, variable: str, segment: str = ALL) -> bool:
        return (population, variable, segment) in self.collected.tables

    def table(self, population: str, variable: str, segment: str = ALL) -> CountTable:
        return self.collected.table(population, variable, segment)

    def ranking(self, population: str, segment: str = ALL) -> tuple[CountTable, CountTable | None]:
        return ranking_table(self.collected, self.bins, population, segment)

    def pd_table(self, population: str, segment: str = ALL) -> PdTable | None:
        if self.rows(population, segment) is None:
            return None
        variable = GRADE if self.model.calibration.grades is not None else SCORE
        return self.collected.pd_tables.get((population, variable, segment))

    def target_table(
        self, population: str, variable: str, segment: str = ALL
    ) -> TargetTable | None:
        return self.collected.target_tables.get((population, variable, segment))

    def vintages(self, segment: str = ALL) -> VintageTable | None:
        return self.collected.vintages.get(segment)

    @property
    def pd_problem(self) -> str | None:
        if not self.collected.invalid_pd:
            return None
        return (
            f"the score {self.model.columns.score!r} was taken for a PD (its baseline values lie "
            f"within [0, 1]), but {self.collected.invalid_pd} loan(s) of this run have a score "
            f"outside [0, 1]: name the PD column (calibration.pd) or set "
            f"calibration.enabled: false"
        )

    @property
    def pd_ascending(self) -> bool:
        # the score's own bins are the grades: ascending PD when higher scores are riskier
        return self.model.calibration.grades is not None or self.model.higher_is_riskier


class Unfrozen:
    """The baseline a freeze compares with: none, it is being frozen. A family's freeze
    computes the baseline's figures from the development window's tables alone; one that
    reads a baseline fails here instead of freezing figures compared with nothing."""

    def _none(self) -> NoReturn:
        raise RuntimeError(
            "a baseline being frozen is compared with no baseline: a family's freeze reads "
            "the development window's tables only"
        )

    @property
    def version(self) -> int:
        self._none()

    def figure(self, name: str, variable: str = "", segment: str = "") -> FigureRecord | None:
        self._none()

    def has_segment(self, segment: str) -> bool:
        self._none()

    def table(self, variable: str, segment: str = ALL) -> CountTable:
        self._none()

    def labeled_table(self, variable: str, segment: str = ALL) -> CountTable:
        self._none()

    def missing_rate(self, variable: str) -> float | None:
        self._none()

    def binning(self, variable: str) -> Binning | None:
        self._none()

    def other_levels(self, variable: str) -> frozenset[str]:
        self._none()
