"""One monitoring run of a model as of a date: plan → collect → compute → evaluate → store.

:func:`run_model` is the one entry point the CLI, the scheduler and notebooks call. It claims
(model, as-of date) in the store — a second process gets :class:`RunInProgressError` — keeps a
heartbeat while it works, and either stores every figure, bin and alert in one transaction or
records the run as failed with its error and no figures. It never raises for a failed run: the
outcome says what happened.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from riskmon.baseline import (
    FrozenBins,
    baseline_table,
    frozen_bins,
    latest_or_freeze,
    ranking_table,
    variables,
)
from riskmon.collect import (
    ALL,
    CollectedTables,
    CollectRequest,
    Population,
    Source,
    Strategy,
    collect,
)
from riskmon.compute import (
    curve_bins,
    gains,
    iv_figure,
    ranking_figures,
    share_figure,
    stability_figure,
    woe_bins,
)
from riskmon.config import ModelConfig, RiskmonConfig, model_fingerprint
from riskmon.errors import RiskmonError
from riskmon.evaluate import evaluate
from riskmon.notify import notify_run
from riskmon.outcome import RunOutcome
from riskmon.plan import RunPlan, plan_run
from riskmon.records import (
    CURRENT,
    PERFORMANCE,
    SCORE,
    BinRecord,
    FigureRecord,
    RunCounts,
    Status,
)
from riskmon.redact import redact
from riskmon.report import render_index, render_run_report
from riskmon.store.repository import (
    MetricStore,
    RunInProgressError,
    StoredBaseline,
    default_owner,
)

log = logging.getLogger(__name__)

#: seconds between two heartbeats of a running run
HEARTBEAT_SECONDS = 30.0


@dataclass
class _Results:
    figures: list[FigureRecord] = field(default_factory=list)
    bins: list[BinRecord] = field(default_factory=list)


@contextmanager
def _heartbeat(store: MetricStore, run_id: int, owner: str, every: float) -> Iterator[None]:
    """Refresh the run's heartbeat in the background, so others see its owner is alive."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            try:
                store.heartbeat(run_id, owner=owner)
            except RiskmonError as exc:  # a missed beat is not worth failing the run for
                log.warning("heartbeat of run %s failed: %s", run_id, exc)

    thread = threading.Thread(target=beat, name=f"riskmon-heartbeat-{run_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _request(model: ModelConfig, plan: RunPlan, bins: FrozenBins) -> CollectRequest:
    return CollectRequest(
        populations=[
            Population(CURRENT, plan.current, labeled=False),
            Population(PERFORMANCE, plan.performance, labeled=True),
        ],
        variables=variables(model, bins),
        score_date=model.columns.score_date,
        label=model.columns.label,
        weight=model.columns.weight,
        segments=model.columns.segments,
    )


def compute_run(
    model: ModelConfig, collected: CollectedTables, baseline: StoredBaseline
) -> tuple[list[FigureRecord], list[BinRecord]]:
    """Every figure and bin of a run from its count tables and its baseline."""
    bins = frozen_bins(baseline)
    out = _Results()
    for segment in collected.segments():
        counts = collected.counts.get((CURRENT, segment))
        if counts is not None:
            out.figures.append(
                FigureRecord("n_rows", float(counts.n_rows), CURRENT, segment=segment)
            )
        if (CURRENT, SCORE, segment) in collected.tables:
            if _has_baseline(baseline, segment):
                figure, score_bins = stability_figure(
                    baseline_table(baseline, SCORE, segment),
                    collected.table(CURRENT, SCORE, segment),
                    name="psi",
                    variable=SCORE,
                    segment=segment,
                )
                out.figures.append(figure)
                out.bins += score_bins
            else:  # a segment value the development sample never had
                out.figures.append(
                    FigureRecord(
                        "psi",
                        None,
                        CURRENT,
                        variable=SCORE,
                        segment=segment,
                        reason=f"segment {segment} is not in baseline version {baseline.version}",
                    )
                )
        cohort = collected.counts.get((PERFORMANCE, segment))
        if cohort is None:
            continue
        unmatured = cohort.n_unlabeled / cohort.n_rows if cohort.n_rows else None
        out.figures.append(
            FigureRecord(
                "unmatured_share",
                unmatured,
                PERFORMANCE,
                segment=segment,
                reason=None if cohort.n_rows else "no loans in the performance window",
                params={"n_unmatured": cohort.n_unlabeled, "n_scored": cohort.n_rows},
            )
        )
        scores, grid = ranking_table(collected, bins, PERFORMANCE, segment)
        out.figures += ranking_figures(
            scores,
            higher_is_riskier=model.higher_is_riskier,
            population=PERFORMANCE,
            segment=segment,
            grid=grid,
        )
        gain_figures, gain_bins = gains(
            scores, higher_is_riskier=model.higher_is_riskier, segment=segment
        )
        out.figures += gain_figures
        out.bins += gain_bins
        if segment == ALL:
            out.bins += curve_bins(scores, higher_is_riskier=model.higher_is_riskier)
    for characteristic in model.characteristics:
        name = characteristic.name
        current = collected.table(CURRENT, name)
        binning = current.binning
        assert binning is not None
        figure, char_bins = stability_figure(
            baseline_table(baseline, name), current, name="csi", variable=name
        )
        out.figures.append(figure)
        out.bins += char_bins
        out.figures.append(
            share_figure(
                current,
                binning.missing_index,
                name="missing_rate",
                variable=name,
                population=CURRENT,
            )
        )
        if binning.unseen_index is not None:
            out.figures.append(
                share_figure(
                    current,
                    binning.unseen_index,
                    name="unseen_rate",
                    variable=name,
                    population=CURRENT,
                )
            )
        labeled = collected.table(PERFORMANCE, name)
        out.figures.append(iv_figure(labeled, variable=name, population=PERFORMANCE))
        out.bins += woe_bins(labeled, variable=name)
    return out.figures, out.bins


def _has_baseline(baseline: StoredBaseline, segment: str) -> bool:
    return any(b.segment == segment for b in baseline.variables[SCORE].bins)


def run_model(
    config: RiskmonConfig,
    model: ModelConfig,
    as_of: dt.date,
    *,
    store: MetricStore,
    strategy: Strategy = "auto",
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
) -> RunOutcome:
    """Run ``model`` as of ``as_of`` and store the result; never raises for a failed run."""
    owner = default_owner()
    try:
        run_id = store.claim_run(
            model.name,
            as_of,
            score_direction=model.score_direction,
            config_hash=model_fingerprint(model),
            owner=owner,
        )
    except RunInProgressError as exc:
        log.warning("%s as of %s: %s", model.name, as_of, exc)
        return RunOutcome(model.name, as_of, "skipped", error=str(exc))
    try:
        log.info("%s as of %s: run %s started", model.name, as_of, run_id)
        # the heartbeat lasts until the results are committed, so the claim never looks stale
        with _heartbeat(store, run_id, owner, heartbeat_seconds):
            with Source(model) as source:
                baseline = latest_or_freeze(model, source, store)
                plan = plan_run(model, as_of)
                collected = collect(
                    source, _request(model, plan, frozen_bins(baseline)), strategy=strategy
                )
            figures, bins = compute_run(model, collected, baseline)
            current = collected.counts[(CURRENT, ALL)]
            cohort = collected.counts[(PERFORMANCE, ALL)]
            counts = RunCounts(
                n_current=current.n_rows,
                n_matured=cohort.n_rows - cohort.n_unlabeled,
                n_unmatured=cohort.n_unlabeled,
            )
            previous = store.latest_run(model.name, before=as_of)
            alerts = evaluate(
                model, figures, baseline, previous=previous, n_current=counts.n_current
            )
            store.complete_run(
                run_id,
                counts=counts,
                figures=figures,
                bins=bins,
                alerts=alerts,
                baseline_id=baseline.id,
                owner=owner,
            )
    except RunInProgressError as exc:  # taken over while it ran: the new owner's results stand
        log.warning("%s as of %s: %s", model.name, as_of, exc)
        return RunOutcome(model.name, as_of, "skipped", run_id=run_id, error=str(exc))
    except Exception as exc:  # every failure is recorded on the run, then reported
        error = redact(
            f"{type(exc).__name__}: {exc}" if not isinstance(exc, RiskmonError) else str(exc)
        )
        log.error("%s as of %s: run %s failed: %s", model.name, as_of, run_id, error)
        _record_failure(store, run_id, error, owner)
        return RunOutcome(model.name, as_of, "failed", run_id=run_id, error=error)
    except BaseException:  # interrupted (Ctrl-C, SystemExit): the run is marked, then re-raised
        _record_failure(store, run_id, "interrupted before it finished", owner)
        raise
    status = Status.worst(a.status for a in alerts)
    log.info("%s as of %s: run %s succeeded, %s", model.name, as_of, run_id, status)
    return RunOutcome(
        model.name,
        as_of,
        "succeeded",
        run_id=run_id,
        alert_status=status,
        counts=counts,
        figures=tuple(figures),
        alerts=tuple(alerts),
        baseline_version=baseline.version,
    )


def _record_failure(store: MetricStore, run_id: int, error: str, owner: str) -> None:
    try:
        store.fail_run(run_id, error, owner=owner)
    except RiskmonError as exc:  # the store itself is down: the claim goes stale, and is retaken
        log.error("could not record the failure of run %s: %s", run_id, exc)


def run_models(
    config: RiskmonConfig,
    names: Sequence[str],
    as_of: dt.date,
    *,
    store: MetricStore,
    strategy: Strategy = "auto",
    report: bool = True,
    notify: bool = True,
) -> list[RunOutcome]:
    """Run each named model (every model when ``names`` is empty), one after the other.

    After each run: its HTML report is written from the store (``report``), then the configured
    channels are notified (``notify``); neither can fail the run. The index of every model is
    rewritten at the end.
    """
    models = [config.model(name) for name in names] if names else list(config.models)
    outcomes = []
    for model in models:
        outcome = run_model(config, model, as_of, store=store, strategy=strategy)
        if report and outcome.run_id is not None and outcome.status != "skipped":
            outcome = replace(outcome, report_path=_render_report(config, store, outcome))
        if notify:
            notify_run(
                config,
                model,
                outcome,
                store,
                report_path=Path(outcome.report_path) if outcome.report_path else None,
            )
        outcomes.append(outcome)
    if report:
        _render_index(config, store)
    return outcomes


def _render_report(config: RiskmonConfig, store: MetricStore, outcome: RunOutcome) -> str | None:
    try:
        return str(render_run_report(config, store, outcome.model, outcome.as_of))
    except Exception as exc:  # a report that cannot be written never undoes a stored run
        log.error(
            "%s as of %s: the report could not be written: %s",
            outcome.model,
            outcome.as_of,
            redact(str(exc)),
        )
        return None


def _render_index(config: RiskmonConfig, store: MetricStore) -> None:
    try:
        render_index(config, store)
    except Exception as exc:  # the runs are stored; the index is rewritten by the next run
        log.error("the report index could not be written: %s", redact(str(exc)))


__all__ = ["compute_run", "run_model", "run_models"]
