"""What a figure family declares, and the helpers its rules share.

A :class:`Family` is one module's worth of figures (discrimination, stability, …): the figures
it makes and at which scope, how it turns count tables into records (:attr:`Family.compute`),
its alert rules (:class:`Rule`, with the levels it reads from the configured thresholds and how
to describe them), its report sections (:class:`Section`), the lines it adds to the report's
summary (:class:`Headline`), its columns in ``riskmon history`` (:class:`HistoryColumn`) and
the parameters the report's appendix lists (:class:`Parameter`).

Families see a run through the small protocols of :mod:`riskmon.figures._views`
(:class:`RunTables`, :class:`BaselineView`, :class:`History`), which this module re-exports for
the families' modules.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from riskmon.config import Band, Drop, ModelConfig, ModelKind, PValueLevels, Thresholds
from riskmon.errors import DegenerateDataWarning
from riskmon.figure_table import Figures
from riskmon.figures._chunks import Computed
from riskmon.figures._views import Alerts, BaselineView, RunTables, RunView
from riskmon.metrics import CountTable
from riskmon.records import (
    CURRENT,
    PERFORMANCE,
    AlertRecord,
    FigureRecord,
    Status,
)

#: where a figure or a rule applies: once per segment (the whole population included), once per
#: characteristic (whole population), or once per run
Scope = Literal["segment", "variable", "run"]


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
    #: each distinct thresholds mapping an alert used, once: the alerts that used the same
    #: share one copy (40,000 alerts of 5,000 segments held 7 MB of copies of 24 mappings)
    used: dict[tuple[tuple[str, type, str], ...], dict[str, Any]] = field(default_factory=dict)

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
        """Add an alert; its ``thresholds`` copied (an alert keeps those it was judged by),
        the copy shared with the alerts before it that used equal thresholds (read-only)."""
        # by each value's type and repr: 1, 1.0 and True are equal, as are 0.0 and -0.0
        key = tuple((name, type(v), repr(v)) for name, v in thresholds.items())
        copied = self.used.get(key)
        if copied is None:
            copied = self.used[key] = dict(thresholds)
        self.alerts.append(AlertRecord(rule, status, value, copied, message, variable, segment))

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
    #: what a RED or AMBER alert of the rule means, in plain words: the reading of its finding
    #: at the top of the report ("the score's distribution has shifted from the baseline's")
    finding: str = ""
    #: which of its alerts' values is the worst: the highest (a PSI, a drop), the lowest (a
    #: p-value; the default of a rule whose ``tested`` is "p"), or None (the whole
    #: population's alert, else the first)
    worse: Literal["higher", "lower"] | None = None
    #: whether the rule applies to a model (None: to every model of its family's kinds); a
    #: rule that does not apply judges nothing, not even a segment too small to judge
    applies: Callable[[ModelConfig], bool] | None = None

    @property
    def worst(self) -> Literal["higher", "lower"] | None:
        """``worse``, a p-value rule's default included."""
        return self.worse or ("lower" if self.tested == "p" else None)


@dataclass(frozen=True)
class Formula:
    """The definition of a figure (or of a group of figures) that the report's appendix
    repeats: ``term`` as it is named there, ``text`` its formula and conventions. ``text`` may
    hold the inline markup of a formula (``<sub>``, ``<sup>``, ``<em>``), nothing else."""

    order: int
    term: str
    text: str


@dataclass(frozen=True)
class Section:
    """A section of the model run report, declared by its family: the page lists it in its
    table of contents (``title``, linking to ``anchor``) and renders ``template`` with the
    context ``build`` makes from the stored run, as ``section``. A section whose context is
    None does not apply to the run (a model without challengers) and is left out."""

    name: str
    title: str
    anchor: str
    order: int  # among every section of the page; the report's own sections have theirs
    template: str  # a partial of templates/, e.g. "_stability.html"
    build: Callable[[RunView], Any]


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
    #: further rules whose status the line shows too (the worst of them all), e.g. both
    #: directions of a test
    also: tuple[str, ...] = ()
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
    #: its place in the catalog: families compute, and their rules judge, in this order
    order: int
    figures: tuple[FigureSpec, ...]
    compute: Callable[[RunTables], Computed]
    rules: tuple[Rule, ...] = ()
    sections: tuple[Section, ...] = ()
    headlines: tuple[Headline, ...] = ()
    history: tuple[HistoryColumn, ...] = ()
    parameters: tuple[Parameter, ...] = ()
    #: the population a figure is read from by ``riskmon history --figure`` when none is given
    default_population: Mapping[str, str] = field(default_factory=dict)
    #: the kinds of model it applies to (``ModelConfig.kind``): a binary outcome (``pd``), or,
    #: for families of continuous targets, ``lgd``, ``ccf`` or ``ead``
    kinds: frozenset[ModelKind] = frozenset({"pd"})
    #: the folder of its sections' template partials, for a family from outside riskmon (None:
    #: riskmon's own templates folder)
    templates: Path | None = None
    #: the figures it freezes with a baseline, from the development window's tables
    #: (populations BASELINE, every loan, and DEVELOPMENT, its labeled loans; the baseline
    #: itself is not readable yet): each declared in ``figures`` with population BASELINE
    freeze: Callable[[RunTables], list[FigureRecord]] | None = None
    #: the definitions of its figures, listed in the appendix of every report that shows one
    #: (a family that stores figures declares at least one: the catalog checks)
    formulas: tuple[Formula, ...] = ()


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
    lower, upper = table.binning.bounds()
    return [finite(v) for v in lower.tolist()], [finite(v) for v in upper.tolist()]


def characteristics(model: ModelConfig) -> Sequence[str]:
    return [c.name for c in model.characteristics]
