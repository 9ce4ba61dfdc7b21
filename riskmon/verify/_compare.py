"""Comparing a run's stored figures with recomputed ones, figure by figure."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from riskmon.records import FigureRecord

#: figures agree to this relative tolerance, the golden test's: numpy, scipy and pandas
#: releases reorder sums and change a figure's last digits, which is no change of result
RTOL = 1e-9
#: and to this absolute one: a figure that is the difference of two near-equal values (an AUC
#: change left unexplained) is 0 or ±1e-16 as the sums it comes from were added in one order
#: or another (a window read whole, or summed from its days)
ATOL = 1e-12

FigureKey = tuple[str, str, str, str]


def figure_key(figure: FigureRecord) -> FigureKey:
    """A figure's name, population, variable and segment."""
    return (figure.name, figure.population, figure.variable, figure.segment)


def shown_key(key: FigureKey) -> str:
    """``auc`` [performance], ``csi`` of ``income`` in ``channel=web`` …"""
    name, population, variable, segment = key
    where = f" of {variable}" if variable else ""
    where += f" in {segment}" if segment else ""
    return f"{name} [{population}]{where}"


def same_value(a: float | None, b: float | None) -> bool:
    """Equal to :data:`RTOL` (or :data:`ATOL`); None only equals None."""
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)


@dataclass(frozen=True)
class FigureDifference:
    """A figure stored and recomputed with different values (None: not there)."""

    key: FigureKey
    stored: float | None
    now: float | None
    #: the figure is in only one of the two
    only: str | None = None

    def line(self) -> str:
        if self.only is not None:
            return f"{shown_key(self.key)}: only {self.only}"
        return f"{shown_key(self.key)}: stored {_number(self.stored)}, now {_number(self.now)}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.10g}"


def compare_figures(
    stored: Iterable[FigureRecord], now: Iterable[FigureRecord]
) -> list[FigureDifference]:
    """Every figure whose value differs, or that only one side has, in the stored order."""
    before = {figure_key(f): f for f in stored}
    after = {figure_key(f): f for f in now}
    out = []
    for key, figure in before.items():
        if key not in after:
            out.append(FigureDifference(key, figure.value, None, only="stored"))
        elif not same_value(figure.value, after[key].value):
            out.append(FigureDifference(key, figure.value, after[key].value))
    out += [
        FigureDifference(key, None, f.value, only="recomputed")
        for key, f in after.items()
        if key not in before
    ]
    return out


@dataclass(frozen=True)
class WindowChange:
    """A window whose counts differ between the stored run and the source as it is now."""

    population: str
    start: str
    end: str
    stored: Mapping[str, Any]
    now: Mapping[str, Any]

    @property
    def moved(self) -> bool:
        """Its dates differ: the configuration's windows changed, not the source's rows."""
        keys = ("start", "end")
        return any(self.stored.get(k) != self.now.get(k) for k in keys)

    def line(self) -> str:
        if self.moved:
            return (
                f"{self.population} window {self.stored.get('start')} to "
                f"{self.stored.get('end')} is now {self.start} to {self.end}"
            )
        counts = [
            f"{k} {self.stored.get(k)} → {self.now.get(k)}"
            for k in ("read", "used", "unlabeled", "bads")
            if self.stored.get(k) != self.now.get(k)
        ]
        if self.stored.get("tables_sha256") != self.now.get("tables_sha256"):
            counts.append("count tables differ")
        return f"{self.population} window {self.start} to {self.end}: " + ", ".join(counts)


#: what a window's provenance says of how it was read, not of its loans
_READING = frozenset({"days", "days_read", "days_unchanged"})
_COMPARED = frozenset({"start", "end", "read", "used", "unlabeled", "bads", "tables_sha256"})


def compare_windows(
    stored: Mapping[str, Mapping[str, Any]], now: Mapping[str, Mapping[str, Any]]
) -> list[WindowChange]:
    """The windows whose counts (or count tables) differ (not how many of their days were
    read from the source: a recomputation reads them all)."""
    out = []
    for population in sorted({*stored, *now}):
        before, after = stored.get(population, {}), now.get(population, {})
        if any(before.get(k) != after.get(k) for k in _COMPARED | {*before, *after} - _READING):
            where = after or before
            out.append(
                WindowChange(
                    population, where.get("start", "?"), where.get("end", "?"), before, after
                )
            )
    return out
