"""Daily cells: a collect pass's sums kept per population and score day, so that a run reads
only the days it has not summed before.

Everything a count table holds is a sum over loans — rows, weights, PD sums, the target's
moments, the loans read and left out, the used loans repeating an id and score date (within
one day) — so a window's tables are the sums of its days' cells. A pass reads its *fresh* days
(:func:`fresh_days`: the days without a stored cell, and those read before they settled, for
late or corrected rows), each run of consecutive days in statements of its own, grouped on
the score date (:class:`~riskmon.collect.selection.QueryColumns` in day mode), and
:func:`merge` adds the stored days' cells. A variable grouped on its raw values (the score's
distinct values, for the exact ranking) is kept by day too where the baseline's distinct scores
are few enough (:attr:`DayPlan.raw_by_day`, chosen by :func:`riskmon.cells.day_plan`); else
it is read over the whole windows (:meth:`DayPlan.whole`).

A cell is keyed by the population it was read for (``current``, ``performance``, ...): a day
read for the performance cohort holds the labels as they were when the cohort's outcome window
closed (or during its restatement days), not the labels the day had as a current population.

A day's cells and their JSON: :mod:`.daycells`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import pickle
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from riskmon.collect.aggregate import Aggregate, Key
from riskmon.collect.daycells import (
    CellKey,
    Column,
    DayCells,
    Group,
    add_up_by_key,
    add_up_column,
)
from riskmon.collect.request import CollectRequest, Population
from riskmon.plan import ONE_DAY, DateWindow
from riskmon.records import Exclusions, LevelCount

#: between a population's name and its day in a day population's name: ``current@2024-03-31``
SEPARATOR = "@"

#: the layout of a day's cells, in the digest: cells of an earlier layout are read again
#: (2: the census's levels added; 3: cells kept in columns, the score's values by day)
CELLS_FORMAT = 3


def day_population(population: Population, day: dt.date) -> Population:
    """The loans of ``population`` scored on ``day``."""
    return Population(
        f"{population.name}{SEPARATOR}{day}", DateWindow(day, day), population.labeled
    )


def split_name(name: str) -> tuple[str, dt.date]:
    """(population, day) of a day population's name."""
    population, _, day = name.rpartition(SEPARATOR)
    return population, dt.date.fromisoformat(day)


def as_day(value: Any) -> dt.date:
    """The day of a score date as a driver returns it (a date, a timestamp, ISO text)."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        return dt.date.fromisoformat(value[:10])
    to_date = getattr(value, "date", None)  # pandas' Timestamp, numpy's datetime64 wrappers
    if callable(to_date):
        day = to_date()
        if isinstance(day, dt.date):
            return day
    raise TypeError(f"expected a score date, got {value!r}")


def days_of(window: DateWindow) -> list[dt.date]:
    """Every day of ``window``, oldest first."""
    return [
        window.start + dt.timedelta(days=i) for i in range((window.end - window.start).days + 1)
    ]


def ranges(days: Iterable[dt.date]) -> list[DateWindow]:
    """``days`` as the fewest windows of consecutive days."""
    out: list[DateWindow] = []
    for day in sorted(set(days)):
        if out and out[-1].end + ONE_DAY == day:
            out[-1] = DateWindow(out[-1].start, day)
        else:
            out.append(DateWindow(day, day))
    return out


def fresh_days(
    window: DateWindow,
    read_on: Mapping[dt.date, dt.date],
    *,
    lag_days: int,
    restatement_days: int,
    full: bool = False,
) -> list[dt.date]:
    """The days of ``window`` a pass reads: every day with ``full``; else each day without a
    stored cell, and each whose cell was read (``read_on``: day -> the date it was read) before
    the day *settled*: ``restatement_days`` after its loans' outcome was due (``lag_days``
    after the day: 0 for the current population, the outcome window for a cohort), the time
    late and corrected rows are given to arrive. A night re-reads its newest days until they
    settle; a backfill of past dates reads each day once."""
    days = days_of(window)
    if full:
        return days
    return [
        d
        for d in days
        if d not in read_on or not settled(d, read_on[d], lag_days, restatement_days)
    ]


def settled(day: dt.date, read_on: dt.date, lag_days: int, restatement_days: int) -> bool:
    """Whether ``day``, read on ``read_on``, had settled then: ``restatement_days`` after its
    loans' outcome was due (``lag_days`` after the day)."""
    return read_on >= day + dt.timedelta(days=lag_days + restatement_days)


def request_digest(request: CollectRequest, *, raw_by_day: bool) -> str:
    """A fingerprint of everything a day's cells depend on but its population's window: the
    columns, variables and their frozen bins, the PD, the target, the exclusions, whether the
    raw values are kept by day. Cells of another digest (a baseline frozen again, a bin
    changed, a column renamed) are not used."""
    layout = (CELLS_FORMAT, raw_by_day)
    payload = pickle.dumps((layout, replace(request, populations=())), protocol=5)
    return hashlib.sha256(payload).hexdigest()


def split(
    aggregate: Aggregate,
    exclusions: Mapping[str, Exclusions],
    read: Sequence[Population],
    invalid_pd: Mapping[str, int],
    levels: Mapping[str, dict[str, list[LevelCount]]],
    prints: Mapping[dt.date, str],
) -> dict[tuple[str, dt.date], DayCells]:
    """The cells of every day population in ``read`` (one without a loan: empty cells), with
    their day's fingerprint in ``prints`` (if taken)."""
    out = {
        (name, day): DayCells(
            exclusions=exclusions.get(p.name),
            invalid_pd=invalid_pd.get(p.name, 0),
            levels=levels.get(p.name, {}),
            fingerprint=prints.get(day),
        )
        for p in read
        for name, day in [split_name(p.name)]
    }
    for (population, *rest), n, w in aggregate.cell_items():
        out[split_name(population)].add(_cell_key(rest), n, w)
    for (population, variable, segments, label), column in aggregate.columns.items():
        out[split_name(population)].cells[(variable, segments, label)] = column.packed()
    for (population, *rest), values in aggregate.sum_items("sums"):
        out[split_name(population)].sums[tuple(rest)] = values.tolist()
    for (population, *rest), values in aggregate.sum_items("moments"):
        out[split_name(population)].moments[tuple(rest)] = values.tolist()
    return out


def merge(
    request: CollectRequest, days: Mapping[tuple[str, dt.date], DayCells]
) -> tuple[Aggregate, dict[str, Exclusions]]:
    """The aggregate and exclusions of ``request``'s populations, summed from their days'
    cells (every day of every window must be in ``days``); the invalid PDs of all days under
    the key ``""`` (as the PD sums count them: over every population).

    A variable without PD sums or moments whose keys are all numbers (bins, a score's values)
    is held in :attr:`Aggregate.blocks`, a column of keys per segment and label, as summed;
    any other cell by cell."""
    aggregate = Aggregate()
    excluded: dict[str, Exclusions] = {}
    in_blocks = {v.name for v in request.variables if not (v.sums or v.moments)}
    for population in request.populations:
        name = population.name
        groups: dict[Group, list[Column]] = {}
        for day in days_of(population.window):
            cell = days[(name, day)]
            if cell.invalid_pd:
                aggregate.count_invalid_pd("", cell.invalid_pd)
            for group, column in cell.cells.items():
                groups.setdefault(group, []).append(column)
            for which, source in (("sums", cell.sums), ("moments", cell.moments)):
                for key, values in source.items():
                    full: Key = (name, *key)
                    aggregate.add_sums(full, which, values)
            if cell.exclusions is not None:
                excluded[name] = _add(excluded.get(name), cell.exclusions)
        summed = {group: add_up_column(columns) for group, columns in groups.items()}
        # a variable is in blocks or in cells as a whole (a group of it not numbers: cells)
        blocks = in_blocks - {variable for (variable, _, _), s in summed.items() if s is None}
        for (variable, segments, label), columns in groups.items():
            kept = aggregate.segment(segments)  # the one tuple of the segment's cells
            total = summed[(variable, segments, label)]
            if total is not None and variable in blocks:
                if len(total.keys):
                    aggregate.blocks[(name, variable, kept, label)] = total
                continue
            if total is None:  # keys of other kinds, added up one by one
                keys, rows, weights = (list(c) for c in zip(*add_up_by_key(columns), strict=True))
            else:
                keys, rows, weights = total.lists()
            cells = (np.zeros(len(keys), np.intp), np.arange(len(keys)))
            aggregate.add_grouped(
                variable,
                aggregate.groups([(name, kept, label)]),
                keys,
                cells,
                np.asarray(rows, np.int64),
                None if weights is None else np.asarray(weights, np.float64),
            )
    return aggregate, excluded


def _cell_key(rest: Sequence[Any]) -> CellKey:
    variable, segments, label, key = rest
    return (variable, segments, label, key)


def _add(total: Exclusions | None, day: Exclusions) -> Exclusions:
    if total is None:
        return day
    total_of: dict[str, Any] = {}
    for name, value in vars(day).items():
        before = getattr(total, name)
        total_of[name] = None if value is None and before is None else (before or 0) + (value or 0)
    return Exclusions(**total_of)


@dataclass(frozen=True)
class DayPlan:
    """What a pass reads by day: each population's fresh days, and the stored cells of the
    other days of its window.

    ``recheck`` holds the stored cells of fresh days read before (with their fingerprint) and
    ``printed`` the days whose fingerprint the pass takes: those, and the fresh days read
    before they settle (a later night checks them). :meth:`unchanged` keeps the cells of the
    days whose rows did not change instead of reading them."""

    fresh: Mapping[str, Sequence[dt.date]]
    stored: Mapping[tuple[str, dt.date], DayCells]
    recheck: Mapping[tuple[str, dt.date], DayCells] = field(default_factory=dict)
    printed: frozenset[dt.date] = frozenset()
    #: the fingerprints taken, by day (:meth:`unchanged`)
    prints: Mapping[dt.date, str] = field(default_factory=dict)
    #: the cells of fresh days found unchanged: kept again, as read now
    confirmed: Mapping[tuple[str, dt.date], DayCells] = field(default_factory=dict)
    #: the variables grouped on raw values read by day too (else over the whole windows)
    raw_by_day: bool = False

    def unchanged_days(self) -> dict[str, int]:
        """Per population, the days found unchanged (their stored cells used)."""
        return {name: sum(p == name for p, _ in self.confirmed) for name in self.fresh}

    def unchanged(self, prints: Mapping[dt.date, str]) -> DayPlan:
        """This plan once the fingerprints ``prints`` are taken: each rechecked day whose
        fingerprint is the one stored with its cells is kept, not read."""
        same = {
            key: cell
            for key, cell in self.recheck.items()
            if cell.fingerprint is not None and cell.fingerprint == prints.get(key[1])
        }
        fresh = {
            name: [day for day in days if (name, day) not in same]
            for name, days in self.fresh.items()
        }
        return replace(
            self, fresh=fresh, stored={**self.stored, **same}, prints=prints, confirmed=same
        )

    def reading(self, request: CollectRequest) -> CollectRequest:
        """``request``'s variables over the fresh days only, one day population each (those
        on raw values only with :attr:`raw_by_day`)."""
        populations = [
            day_population(p, day) for p in request.populations for day in self.fresh[p.name]
        ]
        by_day = [v for v in request.variables if self.raw_by_day or v.binning is not None]
        return replace(request, populations=populations, variables=by_day, by_day=True)

    def whole(self, request: CollectRequest) -> list[CollectRequest]:
        """``request``'s variables grouped on their raw values (the score's distinct values,
        for the exact ranking), read over the whole windows where they are not kept by day
        (none: there are none, or :attr:`raw_by_day`). One request a window, so that each
        statement's ``WHERE`` is one range of score dates (on PostgreSQL an index range scan
        each, 1.0 s for both windows of the 10M-loan benchmark, where the two ranges ``OR``-ed
        in one statement scanned the table in 2.2 s)."""
        raw = [v for v in request.variables if v.binning is None]
        if not raw or self.raw_by_day:
            return []
        return [replace(request, variables=raw, populations=[p]) for p in request.populations]
