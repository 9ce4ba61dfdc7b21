"""What each report page shows, as one frozen dataclass per page, read from the metric store.

Nothing here comes from the state of a run in memory: a report rendered today from the store
and one rendered by the nightly run right after it stored its figures are the same page. Each
figure family of :mod:`riskmon.figures` builds its own sections from the stored figures, bins
and alerts; this module adds the header (from the plan the run stored: its windows and
columns), the findings (:mod:`riskmon.report._findings`), the summary, the segments and the
appendix. The configuration is read only to say when the model's configuration changed after
the run.

Figure values stay numbers (or None with the reason they are not available); the templates
format them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from itertools import groupby
from urllib.parse import quote

from riskmon.config import ModelConfig
from riskmon.errors import EXIT_USAGE, RiskmonError
from riskmon.figure_table import Figures
from riskmon.figures import (
    CATALOG,
    SEGMENTS_ORDER,
    Alerts,
    Bins,
    Catalog,
    FrozenBaseline,
    RunView,
)
from riskmon.records import ALL, CURRENT, PERFORMANCE, SCORE, AlertLike, Status, why
from riskmon.report._evidence import evidence, open_red_runs
from riskmon.report._findings import findings, unjudged, verdict
from riskmon.report._header import History, header, model_kind
from riskmon.report._summary import appendix, segments, summary
from riskmon.report.pages import (
    AlertRow,
    Appendix,
    BacktestLine,
    Finding,
    Header,
    IndexContext,
    IndexEntry,
    Navigation,
    PageSection,
    Parameter,
    ReportLink,
    RunReportContext,
    SegmentRow,
    SegmentsTable,
    SummaryRow,
    Threshold,
    Unjudged,
    Verdict,
    Window,
)
from riskmon.store import MetricStore, ReviewRecord, RunRecord

__all__ = [
    "AlertRow",
    "Appendix",
    "Finding",
    "Header",
    "IndexContext",
    "IndexEntry",
    "Navigation",
    "NoRunError",
    "PageSection",
    "Parameter",
    "ReportLink",
    "RunReportContext",
    "SegmentRow",
    "SegmentsTable",
    "SummaryRow",
    "Threshold",
    "Unjudged",
    "Verdict",
    "Window",
    "find_run",
    "index_entry",
    "run_report_context",
]


class NoRunError(RiskmonError):
    """The store holds no run to report on."""

    exit_code = EXIT_USAGE


def find_run(store: MetricStore, model: str, as_of: dt.date | None) -> RunRecord:
    """The run of ``model`` as of ``as_of`` (the newest run, of any status, when None)."""
    run = store.latest_run(model, status=None) if as_of is None else store.run(model, as_of)
    if run is None:
        when = "" if as_of is None else f" as of {as_of}"
        raise NoRunError(f"no run of model {model!r}{when} in the metric store")
    return run


def run_report_context(
    store: MetricStore, run: RunRecord, *, model: ModelConfig | None
) -> RunReportContext:
    """The model run report of ``run``, read from ``store``; ``model`` is its configuration,
    if the model is still configured."""
    alerts = store.alerts(run.id)
    # a report shows the baseline's and the run's bins of the whole population only
    stored_baseline = (
        store.baseline(run.baseline_id, segments=False) if run.baseline_id is not None else None
    )
    succeeded = run.status == "succeeded"
    figures, by_rule = store.figures(run.id) if succeeded else Figures(), Alerts(alerts)
    view = RunView(
        figures=figures,
        alerts=by_rule,
        bins=Bins(store.bins(run.id, segment=ALL) if succeeded else []),
        baseline=FrozenBaseline(stored_baseline) if stored_baseline is not None else None,
        history=History(store, run.model, run.as_of),
    )
    shown, note = chosen_segments(segments(figures, by_rule), alerts)
    kind = model_kind(run, model)
    catalog = CATALOG.for_kind(kind)
    # the segments table holds a PD model's figures; a back-test shows its segments itself
    table = SegmentsTable(shown if kind == "pd" else (), note)
    sections = page_sections(catalog, view, table) if succeeded else ()
    overall = Status.worst(a.status for a in alerts) if succeeded else Status.NOT_EVALUABLE
    found = findings(alerts, view.baseline, rule_anchors(sections)) if succeeded else ()
    return RunReportContext(
        model=run.model,
        as_of=run.as_of,
        run_status=run.status,
        error=run.error,
        overall=overall,
        why=why(alerts) if succeeded else None,
        verdict=verdict(overall, found, alerts),
        findings=found,
        unjudged=unjudged(alerts) if succeeded else (),
        header=header(run, model, stored_baseline, alerts),
        alerts=_alert_rows(alerts),
        summary=summary(catalog, view) if succeeded else (),
        sections=sections,
        appendix=appendix(run, figures, stored_baseline),
        nav=navigation(store, run),
        evidence=evidence(store, run, model, alerts),
    )


def rule_anchors(sections: Sequence[PageSection]) -> dict[str, str]:
    """The anchor of the section of the page that shows each rule's figure: its family's first
    section on the page."""
    shown = {s.name: s.anchor for s in sections}
    anchors: dict[str, str] = {}
    for family in CATALOG:
        on_page = [shown[s.name] for s in family.sections if s.name in shown]
        for rule in family.rules:
            if on_page:
                anchors[rule.name] = on_page[0]
    return anchors


def page_sections(
    catalog: Catalog, view: RunView, segments_table: SegmentsTable
) -> tuple[PageSection, ...]:
    """Every section the catalog (of the model's kind) declares that applies to the run (its
    context is not None), and the segments table when the run has segments, in their declared
    order."""
    ordered: list[tuple[int, PageSection]] = [
        (s.order, PageSection(s.name, s.title, s.anchor, s.template, s.build(view)))
        for s in catalog.sections
    ]
    if segments_table.rows:
        own = PageSection("segments", "Segments", "segments", "_segments.html", segments_table)
        ordered.append((SEGMENTS_ORDER, own))
    ordered.sort(key=lambda pair: pair[0])
    return tuple(section for _, section in ordered if section.context is not None)


#: where the index is from a run report (reports sit one folder below it)
INDEX_FROM_REPORT = "../index.html"


def report_links(
    store: MetricStore, model: str, href: Callable[[dt.date], str | None]
) -> list[ReportLink]:
    """Every finished run of ``model``, oldest first, with the href of its report."""
    statuses = store.run_alert_statuses(model)
    reviews: dict[int, list[ReviewRecord]] = {}
    for review in store.reviews(model=model):
        reviews.setdefault(review.run_id, []).append(review)
    return [
        ReportLink(
            as_of=run.as_of,
            run_status=run.status,
            overall=Status.worst(statuses.get(run.id, []))
            if run.status == "succeeded"
            else Status.NOT_EVALUABLE,
            href=href(run.as_of),
            review=review_text(reviews[run.id][-1]) if run.id in reviews else None,
            n_reviews=len(reviews.get(run.id, [])),
        )
        for run in store.runs(model, details=False)
        if run.status in ("succeeded", "failed")
    ]


def review_text(review: ReviewRecord) -> str:
    """A review in a line: "accepted by A. Reviewer on 2026-11-26, assessment 2 – minor …"."""
    text = f"{review.decision} by {review.reviewer} on {review.reviewed_at:%Y-%m-%d}"
    return text + (f", assessment {review.assessment_text}" if review.assessment else "")


def navigation(store: MetricStore, run: RunRecord) -> Navigation:
    """The previous and next runs of ``run``'s model, linked beside its report."""
    links = report_links(store, run.model, lambda day: quote(f"{day.isoformat()}.html"))
    earlier = [link for link in links if link.as_of < run.as_of]
    later = [link for link in links if link.as_of > run.as_of]
    return Navigation(
        index=INDEX_FROM_REPORT,
        previous=earlier[-1] if earlier else None,
        next=later[0] if later else None,
    )


def index_entry(
    store: MetricStore, model: str, *, configured: bool, hrefs: dict[dt.date, str]
) -> IndexEntry:
    """One model's line on the index: its newest run, the alerts that give it its status, and
    every stored run with its report; ``hrefs`` are its reports on disk."""
    runs = store.runs(model, details=False)
    latest = runs[-1] if runs else None
    # the index shows the whole population's figures only
    figures = Figures(store.figures(latest.id, segment=ALL) if latest else [])
    alerts = Alerts(store.alerts(latest.id) if latest else [])
    succeeded = latest is not None and latest.status == "succeeded"
    overall = (
        Status.worst(a.status for a in alerts.by_key.values())
        if succeeded
        else Status.NOT_EVALUABLE
    )
    flagged = (
        [a for a in _by_severity(alerts.by_key.values()) if a.status in (Status.RED, Status.AMBER)]
        if succeeded
        else []
    )
    return IndexEntry(
        model=model,
        configured=configured,
        as_of=latest.as_of if latest else None,
        run_status=latest.status if latest else None,
        overall=overall,
        error=latest.error if latest else None,
        n_current=latest.n_current if latest else None,
        ks=figures.value("ks", PERFORMANCE),
        ks_status=alerts.status("ks_band"),
        auc=figures.value("auc", PERFORMANCE),
        gini=figures.value("gini", PERFORMANCE),
        psi=figures.value("psi", CURRENT, SCORE),
        psi_status=alerts.status("psi", SCORE),
        n_runs=len(runs),
        href=hrefs.get(latest.as_of) if latest else None,
        why=why(flagged),
        findings=findings(alerts.by_key.values()) if succeeded else (),
        n_alerts=len(flagged),
        reports=tuple(reversed(report_links(store, model, hrefs.get))),
        unreviewed_red=len(open_red_runs(store, model)),
        backtest=_backtest_line(figures, alerts),
    )


def _backtest_line(figures: Figures, alerts: Alerts) -> BacktestLine | None:
    """The back-test's portfolio figures, when the run stored them (an LGD, CCF or EAD model)."""
    if figures.get("backtest_n", PERFORMANCE) is None:
        return None
    return BacktestLine(
        n=figures.value("backtest_n", PERFORMANCE),
        mean_estimate=figures.value("backtest_mean_estimate", PERFORMANCE),
        mean_realised=figures.value("backtest_mean_realised", PERFORMANCE),
        p=figures.value("backtest_p", PERFORMANCE),
        p_status=alerts.status("backtest_underestimation"),
        gauc=figures.value("gauc", PERFORMANCE),
    )


#: a rule's not-green alerts of one status listed in a report, segment by segment, at most
#: (the rest are counted in one line; all of them are in the metric store)
ALERTS_PER_RULE = 20


def _alert_rows(alerts: Iterable[AlertLike]) -> tuple[AlertRow, ...]:
    """The run's alerts that are not GREEN, the most severe first: every alert of the whole
    population, and of each rule and status at most :data:`ALERTS_PER_RULE` segments, the
    rest counted."""
    rows: list[AlertRow] = []
    ordered = _by_severity(a for a in alerts if a.status != Status.GREEN)
    for (status, rule, variable, _), group in groupby(
        ordered, key=lambda a: (a.status, a.rule, a.variable, bool(a.segment))
    ):
        chosen = list(group)
        rows += [_alert_row(a) for a in chosen[:ALERTS_PER_RULE]]
        more = len(chosen) - ALERTS_PER_RULE
        if more > 0:
            message = f"{more:,} more segments {status} on this rule (all in the metric store)"
            rows.append(AlertRow(status, rule, message, variable, f"{more:,} more segments"))
    return tuple(rows)


#: segments listed in a report, at most: those with a RED or AMBER alert first, then the largest
SEGMENT_ROWS = 100


def chosen_segments(
    rows: Sequence[SegmentRow], alerts: Iterable[AlertLike]
) -> tuple[tuple[SegmentRow, ...], str | None]:
    """The segments a report lists, and what it says of those it leaves out."""
    if len(rows) <= SEGMENT_ROWS:
        return tuple(rows), None
    worst: dict[str, Status] = {}
    judged: set[str] = set()
    for a in alerts:
        if a.segment:
            status = Status(a.status)
            if status.severity > worst.get(a.segment, Status.GREEN).severity:
                worst[a.segment] = status
            if status != Status.NOT_EVALUABLE:
                judged.add(a.segment)
    flagged = (Status.RED, Status.AMBER)

    def rank(row: SegmentRow) -> tuple[int, float]:
        status = worst.get(row.segment, Status.GREEN)
        return (-status.severity if status in flagged else 0, -(row.n_current or 0))

    shown = sorted(rows, key=rank)[:SEGMENT_ROWS]
    n_flagged = sum(worst.get(r.segment) in flagged for r in rows)
    unjudged = sum(r.segment not in judged for r in rows)
    note = (
        f"{SEGMENT_ROWS} of {len(rows):,} segments are listed: the {n_flagged:,} with a RED or "
        f"AMBER alert first, then the largest by loans now. {unjudged:,} segments were not "
        f"judged by any rule (fewer loans than thresholds.min_segment_loans). Every segment's "
        f"figures and alerts are in the metric store."
    )
    return tuple(shown), note


def _by_severity(alerts: Iterable[AlertLike]) -> list[AlertLike]:
    return sorted(alerts, key=lambda a: (-Status(a.status).severity, a.rule, a.variable, a.segment))


def _alert_row(alert: AlertLike) -> AlertRow:
    return AlertRow(alert.status, alert.rule, alert.message, alert.variable, alert.segment)
