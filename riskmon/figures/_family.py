"""What a figure family declares, and the views of a run it works on.

A :class:`Family` is one module's worth of figures (discrimination, stability, …): the figures
it makes and at which scope, how it turns count tables into records (:attr:`Family.compute`),
its alert rules (:class:`Rule`, with the levels it reads from the configured thresholds and how
to describe them), its report sections (:class:`Section`), the lines it adds to the report's
summary (:class:`Headline`), its columns in ``riskmon history`` (:class:`HistoryColumn`) and
the parameters the report's appendix lists (:class:`Parameter`).

Families see a run through small protocols (:class:`RunTables`, :class:`BaselineView`,
:class:`History`), so that they depend on count tables and records only — never on how the
tables were collected or where the records are stored.
"""

from __future__ import annotations

import datetime as dt
import math
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from riskmon.config import Band, Drop, ModelConfig, PValueLevels, Thresholds
from riskmon.errors import DegenerateDataWarning
from riskmon.metrics import Binning, CountTable, PdTable
from riskmon.plan import DateWindow
from riskmon.records import (
    ALL,
    CURRENT,
    PERFORMANCE,
    AlertLike,
    AlertRecord,
    BinRecord,
    Exclusions,
    FigureRecord,
    Figures,
    LevelCensus,
    Status,
)

#: where a figure or a rule applies: once per segment (the whole population included), once per
#: characteristic (whole population), or once per run
Scope = Literal["segment", "variable", "run"]


# --------------------------------------------------------------------------- views of a run


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


# --------------------------------------------------------------------------- evaluation


@dataclass
class Judge:
    """What alert rules read (the run's figures, its baseline, the thresholds) and write."""

    thresholds: Thresholds
    figures: Figures
    baseline: BaselineView
    previous_n_current: int | None
    n_current: int
    #: the baseline's loans per current window (its loans over its window, scaled)
    expected_n_current: float | None = None
    alerts: list[AlertRecord] = field(default_factory=list)

    def add(
        self,
        rule: str,
        status: Status,
        value: float | None,
        thresholds: Mapping[str, object],
        message: str,
        variable: str = "",
        segment: str = "",
    ) -> None:
        self.alerts.append(
            AlertRecord(rule, status, value, dict(thresholds), message, variable, segment)
        )

    def in_sample(self) -> str | None:
        """Why the cohort is not judged against the baseline: it overlaps the development
        window (unless ``thresholds.judge_in_sample``), or None."""
        overlap = self.figures.get("cohort_in_sample", PERFORMANCE)
        if self.thresholds.judge_in_sample or overlap is None or not overlap.value:
            return None
        return (
            f"in-sample: the performance cohort ({overlap.params.get('cohort')}) overlaps the "
            f"development window ({overlap.params.get('development')}) by {overlap.value:.0%}, "
            f"so its figures are not out-of-sample evidence (thresholds.judge_in_sample: true "
            f"judges it)"
        )

    def too_few_bads(self, segment: str) -> str | None:
        """Why the cohort (of ``segment``) has too few bads to judge, or None."""
        n_bads = self.figures.get("n_bads", PERFORMANCE, segment=segment)
        count = 0 if n_bads is None or n_bads.value is None else int(n_bads.value)
        if count < self.thresholds.min_bads:
            return (
                f"only {count} bads in the performance cohort{where('', segment)} "
                f"(minimum {self.thresholds.min_bads})"
            )
        return None


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True)
class FigureSpec:
    """A figure a family makes: its stored name, the population and scope it is made for."""

    name: str
    population: str
    scope: Scope
    label: str
    #: a number of loans (or of bads, of breaks): shown as a whole number
    count: bool = False
    #: its p-value, critical value or interval counts loans (rows): with a weight column the
    #: figure is weighted but its test is not, and says so (:func:`mark_row_tests`)
    rows_test: bool = False


@dataclass(frozen=True)
class Rule:
    """An alert rule: its name, scope and judgement, and the levels it takes from the
    configured thresholds (``levels``) with how they read in a report (``describe``)."""

    name: str
    scope: Scope
    figure: str  # what it judges, as the report's thresholds table names it
    levels: Callable[[Thresholds], dict[str, Any]]
    describe: Callable[[Mapping[str, Any]], str]
    judge: Callable[[Judge, str], None]  # the segment, the variable, or "" for a run rule
    #: the population a segment rule judges: a segment with fewer than
    #: ``thresholds.min_segment_loans`` loans in it is reported, not judged
    population: str = CURRENT
    #: how the rule's alerts enter multiple-testing control (``thresholds.multiple_testing``):
    #: "p", the alert's value is a p-value judged on its amber and red levels; "noise", the
    #: figure of the rule's name carries the ``noise_p`` of its sampling-noise test; None, not
    tested: Literal["p", "noise"] | None = None
    #: the baseline figures it compares against (each frozen by a family of the catalog, or
    #: the catalog fails at import: a rule whose baseline figure is never frozen could only
    #: ever be NOT_EVALUABLE)
    baseline: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """A section of the model run report: the context field it fills and the function that
    builds its context from a stored run."""

    name: str
    order: int  # among the catalog's sections; the page places it by its {% include %}
    build: Callable[[RunView], Any]
    #: what the section holds for a run that failed (and so has no figures)
    empty: Any = None


@dataclass(frozen=True)
class Headline:
    """A line of the report's summary table (ordered by ``order`` across families)."""

    order: int
    key: str
    label: str
    figure: str
    population: str
    variable: str = ""
    format: str = "decimal"  # decimal | percent | count | ratio
    rule: str | None = None
    with_baseline: bool = True
    flag: Callable[[Alerts], str | None] | None = None
    #: for a line whose figure is chosen per run: its label and variable, or None to leave it out
    choose: Callable[[Figures], tuple[str, str] | None] | None = None


@dataclass(frozen=True)
class HistoryColumn:
    """A column of ``riskmon history``'s default table."""

    order: int
    figure: str
    variable: str
    population: str


@dataclass(frozen=True)
class Parameter:
    """A parameter stored with a figure that the report's appendix lists."""

    order: int
    figure: str
    param: str
    label: str


@dataclass(frozen=True)
class Family:
    """One family of figures, declared once."""

    name: str
    figures: tuple[FigureSpec, ...]
    compute: Callable[[RunTables], tuple[list[FigureRecord], list[BinRecord]]]
    rules: tuple[Rule, ...] = ()
    sections: tuple[Section, ...] = ()
    headlines: tuple[Headline, ...] = ()
    history: tuple[HistoryColumn, ...] = ()
    parameters: tuple[Parameter, ...] = ()
    #: the population a figure is read from by ``riskmon history --figure`` when none is given
    default_population: Mapping[str, str] = field(default_factory=dict)
    #: the figures it freezes with a baseline, from the development window's tables
    #: (populations BASELINE, every loan, and DEVELOPMENT, its labeled loans; the baseline
    #: itself is not readable yet): each declared in ``figures`` with population BASELINE
    freeze: Callable[[RunTables], list[FigureRecord]] | None = None


# --------------------------------------------------------------------------- helpers


def finite(value: float | None) -> float | None:
    """``value``, or None when it is missing, infinite or NaN."""
    return value if value is not None and math.isfinite(value) else None


def ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator > 0 else None


def measured(compute: Callable[[], Any]) -> tuple[Any, str | None]:
    """Run ``compute``: its result (None when the figure is undefined) and the reasons of any
    DegenerateDataWarning it raised — why it is undefined, or what part of it is (a standard
    error that needs more bads)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateDataWarning)
        result = compute()
    reasons = [str(w.message) for w in caught if issubclass(w.category, DegenerateDataWarning)]
    for other in (w for w in caught if not issubclass(w.category, DegenerateDataWarning)):
        warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
    reason = "; ".join(reasons) or None
    scalar = hasattr(result, "__float__")
    if result is None or (scalar and math.isnan(float(result))):
        return None, reason or "not defined on this data"
    return result, reason


#: what a weighted figure whose test counts loans says of it (``params["approximate"]``)
ROWS_NOT_WEIGHTS = (
    "weighted figure, test on loan counts: its p-value, critical value and interval count "
    "loans (rows), not Kish's effective sample size (Σw)²/Σw², so they are approximate"
)


def mark_row_tests(figures: Sequence[FigureRecord], names: Collection[str]) -> None:
    """Mark the figures of ``names`` (weighted, with a test on loan counts) approximate."""
    for figure in figures:
        if figure.name in names and figure.value is not None:
            figure.params["approximate"] = ROWS_NOT_WEIGHTS


def approximate(figure: FigureRecord) -> str:
    """What an alert on ``figure`` adds when its test is approximate (weighted, on loan
    counts); nothing otherwise."""
    if "approximate" not in figure.params:
        return ""
    return "; approximate: weighted, tested on loan counts"


def as_note(params: dict[str, Any], reason: str | None) -> None:
    """Keep a defined figure's warning as a note in its parameters (its reason stays empty)."""
    if reason:
        params["note"] = reason


def fmt(value: float) -> str:
    return f"{value:.4f}"


def where(variable: str, segment: str) -> str:
    """`` of income in channel=web``: where a figure was measured, for messages."""
    parts = [p for p in (variable and f"of {variable}", segment and f"in {segment}") if p]
    return (" " + " ".join(parts)) if parts else ""


def banded(value: float, amber: float, red: float) -> Status:
    return Status.RED if value >= red else Status.AMBER if value >= amber else Status.GREEN


def within_noise(status: Status, thresholds: Thresholds) -> tuple[Status, str]:
    """The status of a figure riskmon finds within sampling noise: at most
    ``thresholds.within_noise`` (AMBER by default), and what to add to its message when capped."""
    cap = Status(thresholds.within_noise.upper())
    if status.severity <= cap.severity:
        return status, ""
    return cap, f"; {status} by its band, {cap} as within noise (thresholds.within_noise)"


def amber_red(levels: Band | Drop) -> dict[str, Any]:
    """The two levels of a band or a drop, as a rule stores them with its alerts."""
    return {"amber": levels.amber, "red": levels.red}


def p_status(p: float, levels: PValueLevels) -> Status:
    """A test's traffic light: RED below the red level, AMBER below the amber level."""
    return Status.RED if p < levels.red else Status.AMBER if p < levels.amber else Status.GREEN


def p_levels(levels: PValueLevels) -> dict[str, Any]:
    """The two p-value levels, as a rule stores them with its alerts."""
    return {"amber": levels.amber, "red": levels.red}


def describe_p(levels: Mapping[str, Any]) -> str:
    return f"p-value: amber < {levels.get('amber', 0):g}, red < {levels.get('red', 0):g}"


def band_levels(levels: Mapping[str, Any]) -> str:
    return f"amber ≥ {levels.get('amber', 0):g}, red ≥ {levels.get('red', 0):g}"


def drop_levels(levels: Mapping[str, Any]) -> str:
    amber, red = levels.get("amber", 0), levels.get("red", 0)
    return f"lower than baseline by: amber ≥ {amber:.0%}, red ≥ {red:.0%}"


def edges(table: CountTable) -> tuple[list[float | None], list[float | None]]:
    """The lower and upper edges of a numeric table's bins (None for other tables)."""
    k = len(table.labels)
    if table.binning is None or table.binning.kind != "numeric":
        return [None] * k, [None] * k
    frame = table.binning.describe()
    return (
        [finite(float(v)) for v in frame["lower"]],
        [finite(float(v)) for v in frame["upper"]],
    )


def characteristics(model: ModelConfig) -> Sequence[str]:
    return [c.name for c in model.characteristics]
