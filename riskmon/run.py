"""One monitoring run of a model as of a date: plan → collect → compute → evaluate → store.

:func:`run_model` is the one entry point the CLI, the scheduler and notebooks call. It claims
(model, as-of date) in the store — a second process gets :class:`RunInProgressError` — keeps a
heartbeat while it works, and either stores every figure, bin and alert, with the run's plan
(windows, columns, the source's snapshot), in one transaction, or records the run as failed
with its error and no figures. It never raises for a failed run: the outcome says what happened.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from riskmon.baseline import CollectedRun, FrozenBins, RunBaseline, for_run
from riskmon.cells import day_plan, keep_cells
from riskmon.collect import ALL, CollectedTables, Source, Strategy, collect
from riskmon.config import ModelConfig, RiskmonConfig, model_fingerprint
from riskmon.errors import RiskmonError, describe_failure
from riskmon.evaluate import AlertKey, check_rule_levels, evaluate, key_of, red_by_levels
from riskmon.figure_table import Figures
from riskmon.figures import CATALOG, FrozenBaseline
from riskmon.heap import set_aside_imports
from riskmon.notify import due_channels, notify_run
from riskmon.outcome import RunOutcome
from riskmon.plan import DateWindow, RunPlan, beyond_calendar, plan_record, plan_run, planned_record
from riskmon.provenance import run_provenance
from riskmon.records import (
    CURRENT,
    FAILED,
    PERFORMANCE,
    AlertRecord,
    BinRecord,
    RunCounts,
    RunPlanRecord,
    Status,
)
from riskmon.redact import redact
from riskmon.report import render_index, render_run_report
from riskmon.store import (
    MetricStore,
    RunAlreadySucceeded,
    RunInProgressError,
    StoredBaseline,
    default_owner,
)

log = logging.getLogger(__name__)

#: seconds between two heartbeats of a running run
HEARTBEAT_SECONDS = 30.0


@contextmanager
def _heartbeat(
    store: MetricStore, run_id: int, owner: str, every: float, *, grace: float | None = None
) -> Iterator[None]:
    """Refresh the run's heartbeat in the background (its owner is alive); not while its source
    reading is stuck ``grace`` s past its deadline, so another process can take the claim over."""
    stop = threading.Event()
    run_thread = threading.get_ident()  # the run's readings happen on the calling thread

    def beat() -> None:
        stalled = False
        while not stop.wait(every):
            if Source.stalled(run_thread, grace):
                if not stalled:
                    log.error("run %s: its source reading is stuck past its deadline", run_id)
                stalled = True
                continue
            stalled = False
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


def _baseline_volume(baseline: StoredBaseline, current: DateWindow) -> float | None:
    """The baseline's loans scaled to the current window's days (a first run's volume)."""
    days = (baseline.window_end - baseline.window_start).days + 1
    if days <= 0 or not baseline.n_rows:
        return None
    return baseline.n_rows * ((current.end - current.start).days + 1) / days


def _previous_red(store: MetricStore, model: ModelConfig, as_of: dt.date) -> list[set[AlertKey]]:
    """The alerts RED by their levels in each of the model's runs before ``as_of`` that
    ``thresholds.consecutive`` looks back on, newest first (none when it looks back on none)."""
    back = model.thresholds.consecutive - 1
    if back <= 0:
        return []
    runs = store.runs(model.name, details=False)
    earlier = [r for r in runs if r.as_of < as_of and r.status == "succeeded"]
    return [
        {key_of(a) for a in store.alerts(run.id) if red_by_levels(a)}
        for run in reversed(earlier[-back:])
    ]


def compute_run(
    model: ModelConfig,
    collected: CollectedTables,
    bins: FrozenBins,
    baseline: FrozenBaseline,
) -> tuple[Figures, Sequence[BinRecord]]:
    """Every figure and bin of a run from its count tables (and its migrations), the bins they
    were collected on and the baseline they are compared with, held in columns."""
    return CATALOG.compute(CollectedRun(model, collected, bins, baseline))


def run_model(
    model: ModelConfig,
    as_of: dt.date,
    *,
    store: MetricStore,
    strategy: Strategy = "auto",
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
    force: bool = False,
    notify: bool = True,
    full: bool = False,
) -> RunOutcome:
    """Run ``model`` as of ``as_of`` and store the result; never raises for a failed run.

    A date that has succeeded already is not computed again (the outcome is ``done``) unless
    ``force``. With ``notify``, the deliveries due to the model's channels are queued with the
    stored run, for :func:`riskmon.notify.notify_run` (or the next process) to send. Days
    read before (:mod:`riskmon.cells`) are read again only with ``full`` or ``force``.
    """
    owner = default_owner()
    beyond = beyond_calendar(model, as_of)
    if beyond is not None:  # nothing to claim: no run of that date can exist
        log.error("%s as of %s: %s", model.name, as_of, beyond)
        return RunOutcome(model.name, as_of, "failed", error=beyond)
    record = planned_record(model, as_of)  # None when the dates cannot be planned: fails below
    claimed = _claim(model, as_of, store, owner, record, force=force)
    if isinstance(claimed, RunOutcome):
        return claimed
    run_id = claimed
    try:
        log.info("%s as of %s: run %s started", model.name, as_of, run_id)
        plan = plan_run(model, as_of)
        # a level thresholds.rules would not set fails the run before it reads a loan
        check_rule_levels(model, CATALOG.for_kind(model.kind).rules)
        record = plan_record(model, plan)
        # the heartbeat lasts until the results are committed, so the claim never looks stale
        with _heartbeat(store, run_id, owner, heartbeat_seconds):
            with Source(model) as source:
                record = replace(record, snapshot=source.snapshot)
                baseline = for_run(model, source, store, plan)
                days = day_plan(model, store, baseline, full=full or force)
                collected = collect(
                    source,
                    baseline.request,
                    strategy=strategy,
                    migrations=baseline.migrations,
                    vintages=baseline.vintages,
                    days=None if days is None else days.plan,
                )
                provenance = run_provenance(model, source, collected, baseline.stored)
            figures, bins = compute_run(model, collected, baseline.bins, baseline.frozen)
            counts, day_cells = _counts(collected), collected.day_cells
            del collected  # its count tables (hundreds of MB at 5,000 segments) are done with
            alerts = _judge(model, as_of, store, figures, counts, baseline, plan)
            state = Status.worst(a.status for a in alerts)
            store.complete_run(
                run_id,
                counts=counts,
                figures=figures,
                bins=bins,
                alerts=alerts,
                baseline_id=baseline.stored.id,
                plan=record.to_json(),
                owner=owner,
                notify=due_channels(model, store, as_of, state) if notify else None,
                provenance=provenance,
            )
        keep_cells(store, model, days, day_cells)
    except RunInProgressError as exc:  # taken over while it ran: the new owner's results stand
        log.warning("%s as of %s: %s", model.name, as_of, exc)
        return RunOutcome(model.name, as_of, "skipped", run_id=run_id, error=str(exc))
    except Exception as exc:  # every failure is recorded on the run, then reported
        return _failed(model, as_of, store, run_id, owner, record, exc, notify=notify)
    except BaseException:  # interrupted (Ctrl-C, SystemExit): the run is marked, then re-raised
        _record_failure(store, run_id, "interrupted before it finished", owner, record, None)
        raise
    log.info("%s as of %s: run %s succeeded, %s", model.name, as_of, run_id, state)
    return RunOutcome(
        model.name,
        as_of,
        "succeeded",
        run_id=run_id,
        alert_status=state,
        counts=counts,
        figures=figures,
        alerts=tuple(alerts),
        baseline_version=baseline.stored.version,
    )


def _counts(collected: CollectedTables) -> RunCounts:
    """The run's loans: the current population's, and the cohort's matured and not."""
    current = collected.counts[(CURRENT, ALL)]
    cohort = collected.counts[(PERFORMANCE, ALL)]
    return RunCounts(
        n_current=current.n_rows,
        n_matured=cohort.n_rows - cohort.n_unlabeled,
        n_unmatured=cohort.n_unlabeled,
    )


def _judge(
    model: ModelConfig,
    as_of: dt.date,
    store: MetricStore,
    figures: Figures,
    counts: RunCounts,
    baseline: RunBaseline,
    plan: RunPlan,
) -> list[AlertRecord]:
    """Every rule of the catalog on the run's figures, against its baseline and the model's
    earlier runs."""
    # an empty month is compared with the last one that had loans, not with nothing
    previous = store.latest_run(model.name, before=as_of, with_loans=True)
    return evaluate(
        model,
        figures,
        baseline.frozen,
        previous_n_current=previous.n_current if previous is not None else None,
        n_current=counts.n_current,
        expected_n_current=_baseline_volume(baseline.stored, plan.current),
        previous_red=_previous_red(store, model, as_of),
    )


def _claim(
    model: ModelConfig,
    as_of: dt.date,
    store: MetricStore,
    owner: str,
    record: RunPlanRecord | None,
    *,
    force: bool,
) -> int | RunOutcome:
    """The run's id once (model, as_of) is claimed; else the outcome saying why it is not
    computed here: succeeded already (``done``), or held by another process (``skipped``)."""
    try:
        return store.claim_run(
            model.name,
            as_of,
            score_direction=model.score_direction,
            config_hash=model_fingerprint(model),
            owner=owner,
            plan=record.to_json() if record is not None else None,
            force=force,
        )
    except RunAlreadySucceeded as exc:  # computed once already: its stored status stands
        log.info("%s as of %s: %s", model.name, as_of, exc)
        try:
            stored = Status.worst(a.status for a in store.alerts(exc.run_id))
        except RiskmonError:
            stored = Status.NOT_EVALUABLE
        return RunOutcome(
            model.name, as_of, "done", run_id=exc.run_id, error=str(exc), alert_status=stored
        )
    except RunInProgressError as exc:
        log.warning("%s as of %s: %s", model.name, as_of, exc)
        return RunOutcome(model.name, as_of, "skipped", error=str(exc))


def _failed(
    model: ModelConfig,
    as_of: dt.date,
    store: MetricStore,
    run_id: int,
    owner: str,
    record: RunPlanRecord | None,
    exc: Exception,
    *,
    notify: bool,
) -> RunOutcome:
    """Record the run as failed with ``exc`` in words (and the failure's deliveries due); a
    stop signal meanwhile records it as interrupted instead, and goes on."""
    try:
        # a defect's traceback goes to the log (secrets masked there too), not to the report
        error, defect = redact(describe_failure(exc)), not isinstance(exc, RiskmonError)
        log.error(
            "%s as of %s: run %s failed: %s", model.name, as_of, run_id, error, exc_info=defect
        )
        due = _due_on_failure(model, store, as_of) if notify else None
        _record_failure(store, run_id, error, owner, record, due)
    except BaseException:
        _record_failure(store, run_id, "interrupted before it finished", owner, record, None)
        raise
    return RunOutcome(model.name, as_of, "failed", run_id=run_id, error=error)


def _due_on_failure(model: ModelConfig, store: MetricStore, as_of: dt.date) -> list[str] | None:
    """The channels due to hear that the run failed; None when the store cannot tell (the
    failure's notification is then decided when it is sent)."""
    try:
        return due_channels(model, store, as_of, FAILED)
    except RiskmonError:
        return None


def _record_failure(
    store: MetricStore,
    run_id: int,
    error: str,
    owner: str,
    plan: RunPlanRecord | None,
    notify: list[str] | None,
) -> None:
    try:
        store.fail_run(
            run_id, error, owner=owner, plan=plan.to_json() if plan else None, notify=notify
        )
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
    force: bool = False,
    full: bool = False,
    index: bool = True,
) -> list[RunOutcome]:
    """Run each named model (every model when ``names`` is empty), one after the other.

    After each run: its HTML report is written from the store (``report``), then the configured
    channels are notified (``notify``); neither can fail the run (a report not written is said
    in the outcome's ``report_error``). Then, with ``report`` and ``index``, every model's index
    is rewritten (a caller of many dates writes it once)."""
    set_aside_imports()  # what the imports left, out of the collector's walks (riskmon.heap)
    models = [config.model(name) for name in names] if names else list(config.models)
    outcomes = []
    for model in models:
        outcome = run_model(
            model, as_of, store=store, strategy=strategy, force=force, notify=notify, full=full
        )
        if report and outcome.run_id is not None and outcome.status in ("succeeded", "failed"):
            path, error = _render_report(config, store, outcome)
            outcome = replace(outcome, report_path=path, report_error=error)
        if notify:
            notify_run(
                config,
                model,
                outcome,
                store,
                report_path=Path(outcome.report_path) if outcome.report_path else None,
            )
        outcomes.append(outcome)
    if report and index:
        _render_index(config, store)
    return outcomes


def _render_report(
    config: RiskmonConfig, store: MetricStore, outcome: RunOutcome
) -> tuple[str | None, str | None]:
    """The report's path, or None and why it could not be written."""
    try:
        path = render_run_report(config, store, outcome.model, outcome.as_of, run_id=outcome.run_id)
    except Exception as exc:  # a report that cannot be written never undoes a stored run
        error = redact(describe_failure(exc))
        log.error(
            "%s as of %s: the report could not be written: %s", outcome.model, outcome.as_of, error
        )
        return None, error
    return str(path), None


def _render_index(config: RiskmonConfig, store: MetricStore) -> None:
    try:
        render_index(config, store)
    except Exception as exc:  # the runs are stored; the index is rewritten by the next run
        log.error("the report index could not be written: %s", redact(str(exc)))


__all__ = ["compute_run", "run_model", "run_models"]
