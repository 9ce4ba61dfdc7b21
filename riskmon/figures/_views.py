"""The views of a run that figure families work on: its count tables (:class:`RunTables`), its
migrations, its frozen baseline (:class:`BaselineView`), and, for report sections, the stored
run (:class:`RunView`: figures, alerts, bins, baseline and history).

They are small protocols and read-only wrappers, so that families depend on count tables and
records only — never on how the tables were collected or where the records are stored.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from riskmon.config import ModelConfig
from riskmon.figure_table import Figures
from riskmon.metrics import Binning, CountTable, PdTable, TargetTable, VintageTable
from riskmon.plan import DateWindow
from riskmon.records import (
    ALL,
    AlertLike,
    BinRecord,
    Exclusions,
    FigureRecord,
    LevelCensus,
)


class RunTables(Protocol):
    """The count tables of one run, and the baseline they are compared with."""

    @property
    def model(self) -> ModelConfig: ...

    def segments(self) -> list[str]:
        """Every segment with a table, the whole population (``""``) first."""
        ...

    def rows(self, population: str, segment: str = ALL) -> tuple[int, int] | None:
        """(loans, loans without a label) of a population, None when it was not collected."""
        ...

    def has(self, population: str, variable: str, segment: str = ALL) -> bool: ...

    def table(self, population: str, variable: str, segment: str = ALL) -> CountTable: ...

    def ranking(self, population: str, segment: str = ALL) -> tuple[CountTable, CountTable | None]:
        """The score table a population is ranked on, and the grid table behind it (if any)."""
        ...

    def pd_table(self, population: str, segment: str = ALL) -> PdTable | None:
        """The PD sums of a population's grades, None when the model has no PD."""
        ...

    def target_table(
        self, population: str, variable: str, segment: str = ALL
    ) -> TargetTable | None:
        """A continuous target's moments in a variable's bins (``Variable(moments=True)``),
        None when the run read no target."""
        ...

    def vintages(self, segment: str = ALL) -> VintageTable | None:
        """The vintage curves of a segment (``columns.default_date``), None when not read."""
        ...

    @property
    def pd_problem(self) -> str | None:
        """Why the PDs read cannot be tested (a score taken for a PD left [0, 1]), or None."""
        ...

    @property
    def pd_ascending(self) -> bool:
        """Whether the grades' bins run from the lowest PD up (False: a score whose higher
        values are safer, binned on its points)."""
        ...

    @property
    def baseline(self) -> BaselineView: ...

    def exclusions(self, population: str) -> Exclusions | None:
        """A population's loans read and left out, None when they were not counted."""
        ...

    def window(self, population: str) -> DateWindow | None:
        """A population's window of score dates, None when it was not collected."""
        ...

    def levels(self, variable: str) -> LevelCensus | None:
        """The levels in a categorical characteristic's last bin (unseen, or "other") in the
        current population, None when they were not counted."""
        ...

    @property
    def migrations(self) -> MigrationCounts | None:
        """The obligors' migrations over the horizon, None when the model counts none."""
        ...


class MigrationCells(Protocol):
    """One segment's migrations: (from bin, to bin) -> (obligors, summed weight); ``from`` may
    be :data:`~riskmon.records.MIGRATION_APPEARED`, ``to`` ``MIGRATION_LEFT`` or
    ``MIGRATION_DEFAULTED``."""

    @property
    def cells(self) -> Mapping[tuple[int, int], Sequence[float]]: ...


class MigrationCounts(Protocol):
    """Migrations per segment, and per snapshot (start, end) the obligors left out for
    duplicate rows on their latest score date and the rows without an obligor."""

    @property
    def segments(self) -> Mapping[str, MigrationCells]: ...

    @property
    def duplicates(self) -> tuple[int, int]: ...

    @property
    def no_obligor(self) -> tuple[int, int]: ...

    @property
    def windows(self) -> tuple[str, str]:
        """The start and end snapshots' windows of score dates, in words."""
        ...


class BaselineView(Protocol):
    """What figures and rules read of a frozen baseline."""

    @property
    def version(self) -> int: ...

    def figure(self, name: str, variable: str = "", segment: str = "") -> FigureRecord | None: ...

    def has_segment(self, segment: str) -> bool: ...

    def table(self, variable: str, segment: str = ALL) -> CountTable:
        """A variable's distribution over every baseline loan (unlabeled)."""
        ...

    def labeled_table(self, variable: str, segment: str = ALL) -> CountTable:
        """A variable's goods and bads among the baseline's labeled loans."""
        ...

    def missing_rate(self, variable: str) -> float | None:
        """The share of the baseline's loans (whole population) in the variable's missing bin."""
        ...

    def binning(self, variable: str) -> Binning | None:
        """The bins the baseline froze for ``variable``, None when it has none."""
        ...

    def other_levels(self, variable: str) -> frozenset[str]:
        """A categorical variable's baseline levels in its "other" bin (none when it kept
        every level)."""
        ...


class History(Protocol):
    """A figure over the succeeded runs up to the reported one."""

    def series(
        self, name: str, population: str, variable: str = ""
    ) -> tuple[list[tuple[dt.date, float | None]], float | None]:
        """The (date, value) pairs, and the value of the run before the reported one."""
        ...


class Alerts:
    """A run's alerts by (rule, variable, segment)."""

    def __init__(self, records: Iterable[AlertLike]):
        self.by_key = {(a.rule, a.variable, a.segment): a for a in records}

    def get(self, rule: str, variable: str = "", segment: str = "") -> AlertLike | None:
        return self.by_key.get((rule, variable, segment))

    def status(self, rule: str, variable: str = "", segment: str = "") -> str | None:
        alert = self.get(rule, variable, segment)
        return None if alert is None else alert.status


class Bins:
    """A run's bins by (population, variable, segment), each list in bin order."""

    def __init__(self, records: Iterable[BinRecord]):
        self.by_key: dict[tuple[str, str, str], list[BinRecord]] = {}
        for b in records:
            self.by_key.setdefault((b.population, b.variable, b.segment), []).append(b)
        for chosen in self.by_key.values():
            chosen.sort(key=lambda b: b.bin_index)

    def get(self, population: str, variable: str, segment: str = ALL) -> list[BinRecord]:
        return self.by_key.get((population, variable, segment), [])


@dataclass(frozen=True)
class RunView:
    """What a report section reads of a stored run."""

    figures: Figures
    alerts: Alerts
    bins: Bins
    baseline: BaselineView | None
    history: History

    def base(self, name: str, variable: str = "") -> FigureRecord | None:
        return self.baseline.figure(name, variable) if self.baseline is not None else None
