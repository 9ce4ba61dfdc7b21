"""What a collect pass asks for: its populations, variables, PD and target."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics import (
    PD_SUMS,
    TARGET_MOMENTS,
    WEIGHTED_PD_SUMS,
    WEIGHTED_TARGET_MOMENTS,
    Binning,
)
from riskmon.plan import DateWindow


@dataclass(frozen=True)
class Variable:
    """One count table per population and segment: a column on its bins, or on raw values."""

    name: str
    column: str
    binning: Binning | None = None  # None: group on the column's distinct values (the score)
    #: also sum the PD's powers per cell (the grades a calibration pass tests)
    sums: bool = False
    #: binned on the request's PD (a scorecard's points mapped to a PD), not on ``column``
    on_pd: bool = False
    #: also sum the moments of the request's continuous target per cell (its bins)
    moments: bool = False
    #: a joint table: each loan keyed ``bin * crossed.binning.n_bins + crossed bin`` (the score
    #: crossed with a challenger's bins); its count table is on those integer keys
    crossed: Variable | None = None

    @property
    def n_keys(self) -> int | None:
        """How many keys the variable is grouped on (None: a column's distinct values)."""
        if self.binning is None:
            return None
        if self.crossed is None:
            return self.binning.n_bins
        assert self.crossed.binning is not None, "a variable is crossed with a binned one"
        return self.binning.n_bins * self.crossed.binning.n_bins


@dataclass(frozen=True)
class PdSource:
    """Where each loan's PD comes from: a column, or a scorecard's points mapped to a PD
    (``points`` at good:bad ``odds``, doubling every ``pdo`` points)."""

    column: str
    points: float | None = None
    odds: float | None = None
    pdo: float | None = None
    #: a PD NULL or outside [0, 1] fails the collect; else (a score taken for a PD because its
    #: baseline values were) the loans are counted and calibration is not available
    strict: bool = True

    @property
    def from_points(self) -> bool:
        return self.points is not None

    def of(self, values: Any) -> Any:
        """The PD of each value of ``column`` (numpy): the points mapped, or the values."""
        if self.points is None:
            return values
        assert self.odds is not None
        assert self.pdo is not None
        return 1.0 / (1.0 + self.odds * np.exp((values - self.points) * (np.log(2.0) / self.pdo)))


@dataclass(frozen=True)
class Population:
    """Loans scored in a window; ``labeled`` populations count goods and bads."""

    name: str
    window: DateWindow
    labeled: bool
    #: a population of the request over the same window, whose loans are this one's: this one
    #: is not read again, its tables are made from that one's rows (every statement groups on
    #: the label, so the rows are the same; a freeze's baseline beside its development window)
    copy_of: str | None = None


@dataclass(frozen=True)
class CollectRequest:
    """Everything one collect pass reads from a source."""

    populations: Sequence[Population]
    variables: Sequence[Variable]
    score_date: str
    #: the binary outcome's column; None for a model without one (LGD, CCF, EAD: every
    #: population unlabeled)
    label: str | None
    weight: str | None = None
    segments: Sequence[str] = ()
    pd: PdSource | None = None  # the PD summed for variables with ``sums``
    #: the score column: with ``exclude_invalid``, loans without a score (and with a weight
    #: NULL or negative) are left out of every table and counted (:class:`Exclusions`)
    score: str | None = None
    exclude_invalid: bool = False
    #: the score's valid values: a loan scored outside is invalid like a NULL score
    score_range: tuple[float, float] | None = None
    #: the id column: used loans repeating an id and score date are counted (``Exclusions``)
    id: str | None = None
    #: categorical variables whose last bin's levels are named (:mod:`.census`), in the
    #: population ``census_population``
    census: Sequence[str] = ()
    census_population: str | None = None
    #: a continuous target's column (the realised LGD, CCF or exposure; NULL until realised):
    #: its moments, against the ``score`` (the prediction), summed for variables with
    #: ``moments``
    target: str | None = None
    #: a second prediction's column (an LGD estimate without its downturn component), counted
    #: and summed beside the score in the target's moments
    downturn: str | None = None
    #: a flag column: loans where it is 1 (true) are left out of every table and counted
    #: (:class:`Exclusions`' ``ead_approach``): a CCF model's facilities under the EAD approach
    ead_approach: str | None = None
    #: each population is one score day, grouped on the score date in one statement per
    #: disjoint group of days (:mod:`.days`)
    by_day: bool = False
    #: populations none of whose loans is left out, as counted on the reading's one snapshot
    #: (:func:`.exclusions.known_usable`): their statements do not test the loans again
    all_usable: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        windows = {p.name: p for p in self.populations}
        for population in self.populations:
            source = windows.get(population.copy_of or population.name)
            if source is None or source.window != population.window or source.copy_of:
                raise ValueError(
                    f"population {population.name!r} is a copy of {population.copy_of!r}, "
                    "which must be a population of the request over the same window, read itself"
                )
        if self.target is None:
            if self.downturn is not None:
                raise ValueError(f"a second prediction {self.downturn!r} needs a target column")
            return
        if self.score is None:
            raise ValueError(
                f"a target's moments are taken against the score: target {self.target!r} "
                "needs the request's score column"
            )
        unbinned = [v.name for v in self.variables if v.moments and v.binning is None]
        if unbinned:
            raise ValueError(f"moments are summed on bins, got variable(s) {unbinned!r} unbinned")

    def variable(self, name: str) -> Variable:
        return next(v for v in self.variables if v.name == name)

    def copies(self) -> dict[str, list[str]]:
        """Per population read, the populations made from its rows (:attr:`Population.copy_of`)."""
        out: dict[str, list[str]] = {}
        for population in self.populations:
            if population.copy_of is not None:
                out.setdefault(population.copy_of, []).append(population.name)
        return out

    def read(self) -> CollectRequest:
        """The request as read: without the populations that are copies of another (its census,
        of a copy, taken on the population it copies)."""
        copies = {p.name: p.copy_of for p in self.populations if p.copy_of is not None}
        if not copies:
            return self
        return replace(
            self,
            populations=[p for p in self.populations if p.copy_of is None],
            census_population=copies.get(self.census_population or "", self.census_population),
        )

    @property
    def columnar(self) -> frozenset[str]:
        """The variables whose cells the aggregate holds in columns, a row at a time: by day,
        those on raw values (a ``GROUP BY`` returns each of their keys once; about a key a
        loan or two)."""
        if not self.by_day:
            return frozenset()
        return frozenset(v.name for v in self.variables if not (v.binning or v.sums or v.moments))

    @property
    def n_sums(self) -> int:
        """How many PD sums a cell of a ``sums`` variable carries."""
        if self.pd is None:
            return 0
        return len(PD_SUMS) + (len(WEIGHTED_PD_SUMS) if self.weight else 0)

    @property
    def n_moments(self) -> int:
        """How many target moments a cell of a ``moments`` variable carries."""
        if self.target is None:
            return 0
        return len(TARGET_MOMENTS) + (len(WEIGHTED_TARGET_MOMENTS) if self.weight else 0)


class ColumnDataError(InvalidDataError):
    """A value read from a source column cannot be used (non-numeric where numbers belong)."""

    def __init__(self, column: str, message: str):
        super().__init__(message)
        self.column = column
