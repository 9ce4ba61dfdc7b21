"""``riskmon verify --from-store``: recompute a run's figures from its stored count tables.

Each family of the run's model computes again on :class:`StoredTables`, the
:class:`~riskmon.figures.RunTables` of the bins the run stored (and the baseline it was
compared with); nothing is read from the source. A family that asks for a table the run did
not store — the score's count per distinct value behind KS and AUC, the PD sums, the loans left
out, the migrations — cannot be recomputed, and the result names it and what it needed: the
stored bins do not determine its figures. The figures of the families that could be
recomputed are compared with the stored ones one by one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from riskmon.baseline import frozen_bins
from riskmon.config import ModelConfig
from riskmon.figures import CATALOG, BaselineView, FrozenBaseline, chunks
from riskmon.metrics import CountTable, PdTable, TargetTable, VintageTable
from riskmon.plan import DateWindow
from riskmon.records import ALL, BinRecord, Exclusions, LevelCensus, LevelCount
from riskmon.store import MetricStore
from riskmon.verify._compare import FigureDifference, compare_figures, figure_key
from riskmon.verify._runs import run_baseline, stored_run


class NotStored(Exception):
    """A family asked for what the run does not store."""


def _missing(what: str) -> NoReturn:
    raise NotStored(what)


def _table(rows: Sequence[BinRecord], binning: Any) -> CountTable:
    ordered = sorted(rows, key=lambda b: b.bin_index)
    labeled = all(b.n_bads is not None for b in ordered)
    if binning is not None and binning.n_bins != len(ordered):
        binning = None
    return CountTable(
        labels=[b.label for b in ordered],
        total=np.array([b.total for b in ordered], dtype=float),
        n_total=np.array([b.n_total for b in ordered], dtype=np.int64),
        bads=np.array([b.bads for b in ordered], dtype=float) if labeled else None,
        n_bads=np.array([b.n_bads for b in ordered], dtype=np.int64) if labeled else None,
        binning=binning,
    )


@dataclass(frozen=True)
class StoredTables:
    """The count tables a run stored (its bins), as the figure families read tables."""

    model: ModelConfig
    bins: dict[tuple[str, str, str], list[BinRecord]]
    baseline: BaselineView
    binnings: dict[str, Any]
    #: what the run read, from its provenance: table keys, loans per population and segment,
    #: loans read and left out
    collected: dict[str, Any]
    #: each population's window, from the run's provenance
    windows: dict[str, Any]

    def segments(self) -> list[str]:
        keys = sorted({segment for _, _, segment in self._keys})
        return sorted(keys, key=lambda s: (s != ALL, s))

    @property
    def _keys(self) -> set[tuple[str, str, str]]:
        if "tables" not in self.collected:
            _missing("the list of count tables the run read (stored with its provenance)")
        return {(p, v, s) for p, v, s in self.collected["tables"]}

    def has(self, population: str, variable: str, segment: str = ALL) -> bool:
        return (population, variable, segment) in self._keys

    def table(self, population: str, variable: str, segment: str = ALL) -> CountTable:
        rows = self.bins.get((population, variable, segment))
        if rows is None:
            _missing(f"the {population} count table of {variable!r}, which it does not store")
        return _table(rows, self.binnings.get(variable))

    def rows(self, population: str, segment: str = ALL) -> tuple[int, int] | None:
        if "rows" not in self.collected:
            _missing("the loans of each population and segment (stored with its provenance)")
        for p, s, n_rows, n_unlabeled in self.collected["rows"]:
            if (p, s) == (population, segment):
                return int(n_rows), int(n_unlabeled)
        return None

    def ranking(self, population: str, segment: str = ALL) -> tuple[CountTable, CountTable | None]:
        _missing("the score's counts per distinct value (the ranking table)")

    def pd_table(self, population: str, segment: str = ALL) -> PdTable | None:
        _missing("the PD sums per grade")

    def target_table(
        self, population: str, variable: str, segment: str = ALL
    ) -> TargetTable | None:
        _missing("the target's moments")

    @property
    def pd_problem(self) -> str | None:
        if self.collected.get("invalid_pd", 1):
            _missing("the PDs read outside [0, 1], and the message they gave")
        return None

    @property
    def pd_ascending(self) -> bool:
        return self.model.calibration.grades is not None or self.model.higher_is_riskier

    def exclusions(self, population: str) -> Exclusions | None:
        if "exclusions" not in self.collected:
            _missing("the loans read and left out (stored with its provenance)")
        found = self.collected["exclusions"].get(population)
        return None if found is None else Exclusions(**found)

    def window(self, population: str) -> DateWindow | None:
        found = self.windows.get(population)
        if found is None:
            return None
        return DateWindow(
            dt.date.fromisoformat(found["start"]), dt.date.fromisoformat(found["end"])
        )

    def levels(self, variable: str) -> LevelCensus | None:
        if "levels" not in self.collected:
            _missing("the levels in each categorical characteristic's last bin")
        found = self.collected["levels"].get(variable)
        if found is None:
            return None
        counts = tuple(LevelCount(str(a), int(n), float(w)) for a, n, w in found["levels"])
        return LevelCensus(counts, int(found["n_levels"]))

    @property
    def migrations(self) -> Any:
        _missing("the obligors' migrations")

    def vintages(self, segment: str = ALL) -> VintageTable | None:
        _missing("the vintage curves (counts per vintage and month on book)")


@dataclass(frozen=True)
class FromStore:
    """What recomputing a run from its stored count tables found."""

    model: str
    as_of: dt.date
    #: the families recomputed, with the number of figures compared
    recomputed: dict[str, int]
    #: the families that could not be, and what they needed that the run does not store
    not_recomputable: dict[str, str]
    differences: list[FigureDifference]

    @property
    def identical(self) -> bool:
        return not self.differences

    def lines(self) -> list[str]:
        n = sum(self.recomputed.values())
        head = f"{self.model} as of {self.as_of}, from the stored count tables: "
        out = [
            head
            + (
                f"identical — {n} figure(s) of {len(self.recomputed)} famil(ies) agree"
                if self.identical
                else f"{len(self.differences)} figure(s) differ"
            )
        ]
        out += [f"  {d.line()}" for d in self.differences]
        for family, count in self.recomputed.items():
            out.append(f"  recomputed: {family} ({count} figure(s))")
        for family, why in self.not_recomputable.items():
            out.append(f"  not recomputable from the stored tables: {family}: needs {why}")
        return out


def verify_from_store(model: ModelConfig, as_of: dt.date, *, store: MetricStore) -> FromStore:
    """Recompute the figures of ``model``'s run as of ``as_of`` from its stored bins alone."""
    run = stored_run(store, model.name, as_of)
    baseline = run_baseline(store, run)
    grouped: dict[tuple[str, str, str], list[BinRecord]] = {}
    for b in store.bins(run.id):
        grouped.setdefault((b.population, b.variable, b.segment), []).append(b)
    bins = frozen_bins(baseline)
    tables = StoredTables(
        model=model,
        bins=grouped,
        baseline=FrozenBaseline(baseline),
        binnings=dict(bins.binnings),
        collected=dict((run.provenance or {}).get("collected") or {}),
        windows=dict((run.provenance or {}).get("windows") or {}),
    )
    stored = store.figures(run.id)
    recomputed: dict[str, int] = {}
    missing: dict[str, str] = {}
    differences: list[FigureDifference] = []
    for family in CATALOG.for_kind(model.kind).families:
        names = {(f.name, f.population) for f in family.figures}
        if not any((f.name, f.population) in names for f in stored):
            continue  # the family stored nothing for this run: nothing to recompute
        try:
            figures = [f for found, _ in chunks(family.compute(tables)) for f in found]
        except NotStored as exc:
            missing[family.name] = str(exc)
            continue
        keys = {figure_key(f) for f in figures}
        theirs = [f for f in stored if (f.name, f.population) in names or figure_key(f) in keys]
        recomputed[family.name] = len(figures)
        differences += compare_figures(theirs, figures)
    return FromStore(model.name, as_of, recomputed, missing, differences)
