"""The report's summary (each family's headline figures against the baseline and the previous
run), the segments table and the appendix of parameters."""

from __future__ import annotations

from collections.abc import Sequence

from riskmon import __version__
from riskmon.charts import sparkline
from riskmon.figure_table import Figures
from riskmon.figures import CATALOG, Alerts, Catalog, Rule, RunView
from riskmon.records import (
    CURRENT,
    PERFORMANCE,
    SCORE,
    AlertLike,
    Status,
)
from riskmon.report.pages import Appendix, Parameter, SegmentRow, SummaryRow
from riskmon.store import RunRecord, StoredBaseline


def summary(catalog: Catalog, run: RunView) -> tuple[SummaryRow, ...]:
    """One row per headline of ``catalog`` (the families of the model's kind), in its order."""
    rows = []
    for headline in catalog.headlines:
        label, variable = headline.label, headline.variable
        if headline.choose is not None:
            chosen = headline.choose(run.figures)
            if chosen is None:
                continue
            label, variable = chosen
        figure = run.figures.get(headline.figure, headline.population, variable)
        series, previous = run.history.series(headline.figure, headline.population, variable)
        judged = [
            (rule, alert)
            for name in ((headline.rule,) if headline.rule else ()) + headline.also
            if (rule := CATALOG.rule(name)) is not None
            and (alert := run.alerts.get(name, variable)) is not None
        ]
        base = run.base(headline.figure) if headline.with_baseline else None
        rows.append(
            SummaryRow(
                key=headline.key,
                label=label,
                value=figure.value if figure else None,
                reason=(figure.reason if figure else "not computed in this run"),
                baseline=base.value if base else None,
                previous=previous,
                format=headline.format,
                band=_bands(judged),
                status=str(Status.worst(a.status for _, a in judged)) if judged else None,
                flag=headline.flag(run.alerts) if headline.flag else None,
                trend=sparkline(series, digits=0 if headline.format == "count" else 3),
            )
        )
    return tuple(rows)


def _bands(judged: Sequence[tuple[Rule, AlertLike]]) -> str:
    """The levels of the rules of a summary line, each named when there are several."""
    if len(judged) == 1:
        rule, alert = judged[0]
        return rule.describe(alert.thresholds)
    return "; ".join(f"{rule.name}: {rule.describe(alert.thresholds)}" for rule, alert in judged)


def segments(figures: Figures, alerts: Alerts) -> tuple[SegmentRow, ...]:
    return tuple(
        SegmentRow(
            segment=s,
            n_current=figures.value("n_rows", CURRENT, segment=s),
            psi=figures.value("psi", CURRENT, SCORE, s),
            psi_status=alerts.status("psi", SCORE, s),
            n_matured=figures.value("n_rows", PERFORMANCE, segment=s),
            bad_rate=figures.value("bad_rate", PERFORMANCE, segment=s),
            ks=figures.value("ks", PERFORMANCE, segment=s),
            ks_status=alerts.status("ks_band", segment=s),
            auc=figures.value("auc", PERFORMANCE, segment=s),
            auc_status=alerts.status("auc_drop", segment=s),
            gini=figures.value("gini", PERFORMANCE, segment=s),
            unmatured_share=figures.value("unmatured_share", PERFORMANCE, segment=s),
        )
        for s in figures.segments()
        if s
    )


def appendix(run: RunRecord, figures: Figures, baseline: StoredBaseline | None) -> Appendix:
    found: dict[str, set[str]] = {}
    for parameter in CATALOG.parameters:
        name, param, label = parameter.figure, parameter.param, parameter.label
        for f in figures.named(name):
            if param in f.params and f.params[param] is not None:
                value = f.params[param]
                shown = f"{value:.4g}" if isinstance(value, float) else str(value)
                found.setdefault(label, set()).add(shown)
    stored = figures.names()
    return Appendix(
        formulas=tuple(Parameter(f.term, f.text) for f in CATALOG.formulas(stored)),
        parameters=tuple(
            Parameter(label, ", ".join(sorted(values))) for label, values in found.items()
        ),
        run_version=run.riskmon_version,
        baseline_version=baseline.riskmon_version if baseline else None,
        report_version=__version__,
        config_hash=run.config_hash,
    )
