"""The dataclasses of the report pages that no figure family owns: the header, the summary,
the segments table, the appendix, the page itself and the index. A family's section has its
own context dataclass, in its module; the page holds it as a :class:`PageSection`."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from riskmon.charts import Sparkline
from riskmon.report._evidence import Evidence


@dataclass(frozen=True)
class Window:
    """A named range of score dates, both ends inclusive."""

    name: str
    start: dt.date | None
    end: dt.date | None
    note: str


@dataclass(frozen=True)
class Threshold:
    """One alert rule and the levels it used."""

    rule: str
    figure: str
    levels: str


@dataclass(frozen=True)
class Header:
    """The header: what was measured, on which loans, against which baseline."""

    windows: tuple[Window, ...]
    stability_window: str | None
    performance_window: str | None
    bad_definition: str | None
    weight: str | None
    #: what every statement of the run's reading saw (one snapshot, or not)
    snapshot: str | None
    score_direction: str | None
    #: what the model predicts (pd, lgd, ccf, ead)
    kind: str
    n_current: int | None
    n_matured: int | None
    n_unmatured: int | None
    baseline_version: int | None
    baseline_frozen_at: dt.datetime | None
    started_at: dt.datetime
    finished_at: dt.datetime | None
    config_note: str | None
    thresholds: tuple[Threshold, ...]


@dataclass(frozen=True)
class AlertRow:
    status: str
    rule: str
    message: str
    variable: str
    segment: str


@dataclass(frozen=True)
class SummaryRow:
    """A line of the summary: one headline figure."""

    key: str
    label: str
    value: float | None
    reason: str | None
    baseline: float | None
    previous: float | None
    format: str  # decimal | percent | count | ratio
    band: str
    status: str | None  # None: no alert rule judges this figure
    flag: str | None  # spelled-out warning, e.g. KS outside its band
    trend: Sparkline


@dataclass(frozen=True)
class Finding:
    """What one rule found in a run: its RED or AMBER alerts, grouped (the report opens with
    them, the index lists them)."""

    status: str  # the worst of its alerts
    rule: str
    #: what the alert means, in plain words (``Rule.finding``)
    statement: str
    figure: str  # what the rule judges
    #: where it holds at that status ("all loans", "income", "channel=web"), the first few
    places: tuple[str, ...]
    n_places: int  # all of them
    n_judged: int  # places the rule judged (GREEN, AMBER or RED)
    lesser: int  # further places at a milder status that is not GREEN
    worst_place: str
    worst_value: float | None
    #: the baseline's value of the figure the rule compares against, where it is worst
    baseline: float | None
    baseline_figure: str | None
    message: str  # the worst alert's message
    anchor: str | None  # the report section that shows the figure


@dataclass(frozen=True)
class Unjudged:
    """A rule that could not be judged in some place, and why (its first reason)."""

    rule: str
    n_places: int
    first_place: str
    reason: str


@dataclass(frozen=True)
class Verdict:
    """The report's opening line: the run's status and what gives it."""

    status: str
    text: str


@dataclass(frozen=True)
class SegmentRow:
    """A row of the segments table: the headline figures of one segment."""

    segment: str
    n_current: float | None
    psi: float | None
    psi_status: str | None
    n_matured: float | None
    bad_rate: float | None
    ks: float | None
    ks_status: str | None
    auc: float | None
    auc_status: str | None
    gini: float | None
    unmatured_share: float | None


@dataclass(frozen=True)
class Parameter:
    """A line of the appendix: a parameter that changes a figure, as stored with it."""

    name: str
    value: str


@dataclass(frozen=True)
class Appendix:
    #: the definitions of the figures the report shows, from their families' declarations
    formulas: tuple[Parameter, ...]
    parameters: tuple[Parameter, ...]
    run_version: str
    baseline_version: str | None
    report_version: str
    config_hash: str


@dataclass(frozen=True)
class ReportLink:
    """One stored run of a model, and its report (href None: no report file for it)."""

    as_of: dt.date
    run_status: str
    overall: str  # the worst alert of a succeeded run; NOT_EVALUABLE otherwise
    href: str | None
    #: its latest review in words, and how many reviews it has (a later one supersedes)
    review: str | None = None
    n_reviews: int = 0


@dataclass(frozen=True)
class Navigation:
    """The links at the top of a run report: the model's previous and next runs, the index."""

    index: str
    previous: ReportLink | None
    next: ReportLink | None


@dataclass(frozen=True)
class PageSection:
    """A section of the model run report, in page order: its link in the table of contents,
    the partial that renders it, and that partial's context (``section`` in the template)."""

    name: str
    title: str
    anchor: str
    template: str
    context: Any


@dataclass(frozen=True)
class SegmentsTable:
    """The segments section: the segments listed, and what it says of those it leaves out
    (None: it lists them all)."""

    rows: tuple[SegmentRow, ...]
    note: str | None


@dataclass(frozen=True)
class RunReportContext:
    """Everything the model run report (``model_run.html``) shows."""

    model: str
    as_of: dt.date
    run_status: str
    error: str | None
    overall: str
    #: which alerts give the run its status, rule by rule (None: GREEN, or not judged)
    why: str | None
    #: its opening line, the findings (RED and AMBER, by rule) and the rules not judged
    verdict: Verdict
    findings: tuple[Finding, ...]
    unjudged: tuple[Unjudged, ...]
    header: Header
    alerts: tuple[AlertRow, ...]
    summary: tuple[SummaryRow, ...]
    #: the families' sections and the segments table, in page order (none for a failed run)
    sections: tuple[PageSection, ...]
    appendix: Appendix
    nav: Navigation
    #: its reviews, provenance, configuration changes and threshold register
    evidence: Evidence


@dataclass(frozen=True)
class IndexEntry:
    """One model on the index page."""

    model: str
    configured: bool
    as_of: dt.date | None
    run_status: str | None
    overall: str
    error: str | None
    n_current: int | None
    ks: float | None
    ks_status: str | None
    auc: float | None
    gini: float | None
    psi: float | None
    psi_status: str | None
    n_runs: int
    href: str | None
    #: which alerts give its newest run its status, rule by rule
    why: str | None
    #: the findings of its newest run (its AMBER and RED alerts, grouped by rule)
    findings: tuple[Finding, ...]
    #: how many AMBER and RED alerts they group
    n_alerts: int
    #: every stored run that has finished, newest first, with its report
    reports: tuple[ReportLink, ...]
    #: its RED runs that no review has answered
    unreviewed_red: int = 0
    #: an LGD, CCF or EAD model's back-test of its newest run (None for a PD model)
    backtest: BacktestLine | None = None


@dataclass(frozen=True)
class BacktestLine:
    """A back-tested model's line on the index: its portfolio's closed facilities, mean
    estimate and realised value, the t-test's p and the gAUC."""

    n: float | None
    mean_estimate: float | None
    mean_realised: float | None
    p: float | None
    p_status: str | None
    gauc: float | None


@dataclass(frozen=True)
class IndexContext:
    """Everything the index page (``index.html``) shows."""

    models: tuple[IndexEntry, ...]
    report_version: str
