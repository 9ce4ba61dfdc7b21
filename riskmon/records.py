"""The names and records every layer shares: what a run computes, judges and stores.

This module sits at the bottom of the package (it imports nothing of riskmon's), so that the
computation (:mod:`riskmon.figures`, :mod:`riskmon.evaluate`) and the metric store both speak
of the same records without one importing the other.

Conventions, the same in memory, in the store and in reports:

- ``variable`` is :data:`SCORE` for the model's score on its baseline bins, else a
  characteristic's name (or a table of the score such as :data:`GAINS`, :data:`CURVE`);
- ``segment`` is :data:`ALL` (``""``) for the whole population, else ``"column=value"``;
- ``population`` is :data:`CURRENT` (the stability window), :data:`PERFORMANCE` (the matured
  cohort) or :data:`BASELINE` (the frozen development sample).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

#: the score on its baseline bins (PSI)
SCORE = "score"
#: the score on its distinct values or its grid (KS, AUC, Gini, lift)
SCORE_RANKING = "score_ranking"
#: the gains table of the score, riskiest group first
GAINS = "gains"
#: the score merged into the points of its ROC, KS and CAP curves
CURVE = "curve"
#: the calibration grades (master scale), when not the score's own bins
GRADE = "pd_grade"
#: the score split at the cut-off: declined and accepted loans
CUTOFF = "score_cutoff"
#: the score on the coarse grid it is crossed with each challenger on
CHALLENGER_GRID = "challenger_grid"
#: the score at the cut-off (the policy decision) crossed with the final decision or override
#: column: ``override:decision`` (a name no characteristic can take)
OVERRIDE = "override:decision"
#: the values of ``columns.decision``, and of ``columns.override``
DECISIONS = ("accept", "decline")
OVERRIDES = ("low_side", "high_side", "none")
#: the prefix of a challenger's variable: ``challenger:NAME``, the joint table of the score's
#: grid and the challenger's (a name no characteristic can take)
CHALLENGER = "challenger:"


def challenger_variable(name: str) -> str:
    """The variable of the joint (score, challenger) table of the challenger called ``name``."""
    return f"{CHALLENGER}{name}"


#: a migration cell's ``from`` for an obligor not scored at the start of the horizon
MIGRATION_APPEARED = -1
#: a migration cell's ``to`` for an obligor scored at the start and not at the end
MIGRATION_LEFT = -1
#: a migration cell's ``to`` for an obligor whose start row's label is 1 (it defaulted)
MIGRATION_DEFAULTED = -2
#: the migration matrix's cells (bins of the current population)
MIGRATION = "migration"
#: an LGD, CCF or EAD model's joint table of estimate segment × realised segment (the ECB's 12
#: segments), whose cells carry the back-testing sums
BACKTEST = "backtest"
#: an LGD, CCF or EAD model's grades (``columns.grade``), whose bins carry the back-testing sums
BACKTEST_GRADE = "backtest_grade"
#: a CCF model's realised values below 0 (floored at 0) and from 0
BACKTEST_FLOOR = "backtest_floor"


#: riskmon's own tables of the score, stored beside the variables a user configured
_SCORE_TABLES = (SCORE_RANKING, GAINS, CURVE, GRADE, CUTOFF, CHALLENGER_GRID, MIGRATION)
INTERNAL_VARIABLES = frozenset({*_SCORE_TABLES, BACKTEST, BACKTEST_GRADE, BACKTEST_FLOOR})


def is_internal_variable(name: str) -> bool:
    """Whether ``name`` is one of riskmon's own tables (the score's ranking, grid, grades,
    cut-off, a challenger's joint table, the migration matrix, or a name starting with ``_``)
    rather than the score or a configured characteristic.

    >>> is_internal_variable("score_ranking"), is_internal_variable("challenger:new")
    (True, True)
    >>> is_internal_variable("score"), is_internal_variable("income")
    (False, False)
    """
    return name in INTERNAL_VARIABLES or name.startswith((CHALLENGER, "_"))


@dataclass(frozen=True)
class Exclusions:
    """One population's loans read and why some were left out, each loan counted once, in this
    order: no score (NULL), a score NaN or infinite, a score outside the model's
    ``score_range``, a weight NULL or negative, a weight of 0; the rest were used."""

    read: int
    null_score: int = 0
    non_finite_score: int = 0
    invalid_weight: int = 0
    zero_weight: int = 0
    #: used loans that repeat the id and score date of another (counted, not removed; None:
    #: not counted)
    duplicates: int | None = None
    #: loans whose score lies outside the model's ``score_range`` (None: no range configured)
    out_of_range: int | None = None
    #: a CCF model's facilities under the EAD approach (``columns.ead_approach`` set), left out
    #: of its back-test (None: no such column)
    ead_approach: int | None = None

    @property
    def invalid(self) -> int:
        """Loans left out for invalid data (a zero weight is valid: it counts for nothing)."""
        return (
            self.null_score + self.non_finite_score + (self.out_of_range or 0) + self.invalid_weight
        )

    @property
    def used(self) -> int:
        return self.read - self.invalid - self.zero_weight - (self.ead_approach or 0)


@dataclass(frozen=True)
class LevelCount:
    """One level of a categorical characteristic: its loans and their summed weight."""

    level: str
    n: int
    weight: float


@dataclass(frozen=True)
class LevelCensus:
    """The levels in a categorical characteristic's last bin (unseen, or "other") in one
    population, the largest first: ``n_levels`` distinct levels in all, of which ``levels``
    lists the first (``complete``: all of them)."""

    levels: tuple[LevelCount, ...]
    n_levels: int

    @property
    def complete(self) -> bool:
        return len(self.levels) == self.n_levels


#: the loans scored in the stability window ending at the as-of date
CURRENT = "current"
#: the loans scored one performance window earlier, whose outcome has matured
PERFORMANCE = "performance"
#: every loan of the development window (the expected distribution of PSI/CSI)
BASELINE = "baseline"
#: the loans of the development window with a label (goods and bads of the baseline)
DEVELOPMENT = "development"
#: the segment key of the whole population
ALL = ""


class Status(str, Enum):
    """The verdict of an alert rule; a run's status is the worst of its alerts'."""

    NOT_EVALUABLE = "NOT_EVALUABLE"
    GREEN = "GREEN"
    AMBER = "AMBER"
    RED = "RED"

    def __str__(self) -> str:
        return self.value

    @property
    def severity(self) -> int:
        """-1 for NOT_EVALUABLE, then 0 GREEN, 1 AMBER, 2 RED."""
        return _SEVERITY[self]

    @classmethod
    def worst(cls, statuses: Iterable[str]) -> Status:
        """The most severe status (NOT_EVALUABLE only when nothing could be evaluated).

        >>> Status.worst(["GREEN", "AMBER", "NOT_EVALUABLE"])
        <Status.AMBER: 'AMBER'>
        >>> Status.worst([])
        <Status.NOT_EVALUABLE: 'NOT_EVALUABLE'>
        """
        return max((cls(s) for s in statuses), key=_SEVERITY.__getitem__, default=cls.NOT_EVALUABLE)


_SEVERITY = {Status.NOT_EVALUABLE: -1, Status.GREEN: 0, Status.AMBER: 1, Status.RED: 2}

#: the state of a run that failed; a succeeded run's state is its worst alert status
FAILED = "FAILED"


@dataclass(frozen=True, slots=True)
class FigureRecord:
    """One figure: a value, or None with the reason it is not available, and the parameters
    that produced it."""

    name: str
    value: float | None
    population: str
    variable: str = ""
    segment: str = ""
    reason: str | None = None
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BinRecord:
    """One bin of one variable in a run.

    ``extra`` holds the per-bin fields a figure family needs beyond counts, shares, WOE and
    contribution (a grade's mean PD, a cell's p-value), so that a new family needs no new
    column.
    """

    variable: str
    population: str
    bin_index: int
    label: str
    n_total: int
    total: float
    segment: str = ""
    lower: float | None = None
    upper: float | None = None
    n_bads: int | None = None
    bads: float | None = None
    expected_share: float | None = None
    actual_share: float | None = None
    woe: float | None = None
    contribution: float | None = None
    smoothed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AlertRecord:
    """The outcome of one alert rule: its status, the value it judged, the thresholds it
    used, and a message that says why."""

    rule: str
    status: Status
    value: float | None
    thresholds: dict[str, Any]
    message: str
    variable: str = ""
    segment: str = ""


class AlertLike(Protocol):
    """What is read of an alert, whether just judged (:class:`AlertRecord`) or read back from
    the store with its notification state."""

    @property
    def rule(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def value(self) -> float | None: ...
    @property
    def thresholds(self) -> Mapping[str, Any]: ...
    @property
    def message(self) -> str: ...
    @property
    def variable(self) -> str: ...
    @property
    def segment(self) -> str: ...


#: rules named by :func:`why`, at most; places named per rule, at most
WHY_RULES = 6
WHY_PLACES = 3


def why(alerts: Iterable[AlertLike]) -> str | None:
    """Which alerts give a run its status, rule by rule: "RED by ks_band; csi (income, region);
    psi (40 places: score in channel=c01, …)" — the rules judged on all loans first, then by
    how many places they flag. None when the run is GREEN or could not be judged."""
    chosen = list(alerts)
    worst = Status.worst(a.status for a in chosen)
    if worst not in (Status.RED, Status.AMBER):
        return None
    places: dict[str, list[str]] = {}
    for a in chosen:
        if a.status == worst:
            place = " in ".join(p for p in (a.variable, a.segment) if p)
            places.setdefault(a.rule, []).append(place)
    ranked = sorted(places.items(), key=lambda item: ("" not in item[1], -len(item[1]), item[0]))
    parts = []
    for rule, where in ranked[:WHY_RULES]:
        named = [p or "all loans" for p in where]
        if named == ["all loans"]:
            parts.append(rule)
        elif len(named) <= WHY_PLACES:
            parts.append(f"{rule} ({', '.join(named)})")
        else:
            parts.append(f"{rule} ({len(named)} places: {', '.join(named[:2])}, …)")
    more = len(ranked) - WHY_RULES
    tail = f"; and {more} more rule{'s' if more > 1 else ''}" if more > 0 else ""
    return f"{worst} by {'; '.join(parts)}{tail}"


@dataclass(frozen=True)
class RunCounts:
    """Row counts of a run's populations."""

    n_current: int
    n_matured: int
    n_unmatured: int


@dataclass(frozen=True)
class RunPlanRecord:
    """What a run measured, as it planned it: its windows (score dates, both ends inclusive),
    the model's columns and score direction, and the snapshot its source read. Stored with the
    run, so that its report never re-plans it from a configuration that may have changed."""

    current: tuple[dt.date, dt.date]
    performance: tuple[dt.date, dt.date]
    stability_window: str
    performance_window: str
    score: str
    score_direction: str
    label: str
    weight: str | None
    snapshot: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The plan as a JSON object (dates as ISO text)."""
        return {
            "current": [d.isoformat() for d in self.current],
            "performance": [d.isoformat() for d in self.performance],
            "stability_window": self.stability_window,
            "performance_window": self.performance_window,
            "score": self.score,
            "score_direction": self.score_direction,
            "label": self.label,
            "weight": self.weight,
            "snapshot": self.snapshot,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunPlanRecord:
        """The plan :meth:`to_json` wrote."""

        def window(key: str) -> tuple[dt.date, dt.date]:
            start, end = data[key]
            return dt.date.fromisoformat(start), dt.date.fromisoformat(end)

        return cls(
            current=window("current"),
            performance=window("performance"),
            stability_window=str(data["stability_window"]),
            performance_window=str(data["performance_window"]),
            score=str(data["score"]),
            score_direction=str(data["score_direction"]),
            label=str(data["label"]),
            weight=data.get("weight"),
            snapshot=data.get("snapshot"),
        )
