"""The only code that reads and writes the metric store.

A run's life: :meth:`MetricStore.claim_run` takes the (model, as-of date) row — the database's
unique constraint makes that atomic across processes — then :meth:`MetricStore.complete_run`
writes every figure, bin and alert of the run in one transaction (replacing those of an earlier
run of the same date), or :meth:`MetricStore.fail_run` records the error. Figures are never
written outside that one transaction, so a failed or killed run leaves no partial figures.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from sqlalchemy import Engine, delete, func, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from riskmon import __version__
from riskmon.errors import StoreError
from riskmon.records import AlertRecord, BinRecord, FigureRecord, RunCounts
from riskmon.redact import mask_url, redact
from riskmon.store import models as m
from riskmon.store.engine import store_engine

#: a run whose heartbeat is older than this is taken to belong to a dead process
DEFAULT_STALE_AFTER = dt.timedelta(minutes=30)


class RunInProgressError(StoreError):
    """Another process is computing the same (model, as-of date) right now."""


class StoreConflict(StoreError):
    """A write broke one of the store's unique constraints (another process wrote first)."""


@dataclass(frozen=True)
class BaselineBinRecord:
    """The baseline's counts in one bin: all loans, and the labeled loans' goods and bads."""

    bin_index: int
    label: str
    n_total: int
    total: float
    segment: str = ""
    n_goods: int | None = None
    goods: float | None = None
    n_bads: int | None = None
    bads: float | None = None
    share: float | None = None


@dataclass(frozen=True)
class BaselineVariableRecord:
    """One variable of a baseline: its frozen binning and its bins."""

    variable: str
    kind: str
    binning: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)
    bins: tuple[BaselineBinRecord, ...] = ()


@dataclass(frozen=True)
class StoredBaseline:
    """A frozen baseline version, as read back."""

    id: int
    model: str
    version: int
    window_start: dt.date
    window_end: dt.date
    frozen_at: dt.datetime
    config_hash: str
    n_rows: int
    n_bads: int | None
    riskmon_version: str
    variables: dict[str, BaselineVariableRecord]
    figures: tuple[FigureRecord, ...]

    def figure(self, name: str, variable: str = "", segment: str = "") -> FigureRecord | None:
        """The baseline figure ``name`` (of ``variable`` and ``segment``), if stored."""
        for f in self.figures:
            if (f.name, f.variable, f.segment) == (name, variable, segment):
                return f
        return None


@dataclass(frozen=True)
class RunRecord:
    """A stored run, as read back."""

    id: int
    model: str
    as_of: dt.date
    status: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    n_current: int | None
    n_matured: int | None
    n_unmatured: int | None
    error: str | None
    riskmon_version: str
    config_hash: str
    baseline_id: int | None


@dataclass(frozen=True)
class StoredAlert:
    """An alert as stored, with its notification state."""

    id: int
    run_id: int
    rule: str
    status: str
    value: float | None
    thresholds: dict[str, Any]
    message: str
    variable: str
    segment: str
    notify_state: str
    notify_attempts: int
    notify_error: str | None


@dataclass(frozen=True)
class DeliveryRecord:
    """One notification of a run to one channel."""

    run_id: int
    channel: str
    state: str
    attempts: int
    last_error: str | None
    last_attempt_at: dt.datetime
    sent_at: dt.datetime | None


@dataclass(frozen=True)
class HistoryPoint:
    """One figure of one succeeded run."""

    as_of: dt.date
    value: float | None
    reason: str | None
    run_id: int


def default_owner() -> str:
    """Who holds a run: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_is_dead(owner: str) -> bool:
    """Whether a run's owner was a process on this host that no longer exists."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, under another user
        return False
    return False


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    # SQLite hands back naive datetimes; everything riskmon writes is UTC.
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=dt.timezone.utc)


class MetricStore:
    """Reads and writes runs, figures, bins, alerts and baselines."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    @classmethod
    def open(cls, url: str) -> MetricStore:
        """A store on the database at ``url`` (which ``riskmon db upgrade`` has migrated)."""
        return cls(store_engine(url))

    @property
    def masked_url(self) -> str:
        return mask_url(self.engine.url.render_as_string(hide_password=False))

    @contextmanager
    def _session(self) -> Iterator[Session]:
        """One transaction: committed at the end, rolled back on any error."""
        try:
            with self._sessions.begin() as session:
                yield session
        except StoreError:
            raise
        except IntegrityError as exc:
            detail = redact(str(exc.orig or exc)).splitlines()[0]
            raise StoreConflict(f"metric store {self.masked_url}: {detail}") from exc
        except SQLAlchemyError as exc:
            detail = redact(str(getattr(exc, "orig", None) or exc)).splitlines()[0]
            raise StoreError(f"metric store {self.masked_url}: {detail}") from exc

    # ------------------------------------------------------------------ models
    def ensure_model(self, name: str, score_direction: str) -> int:
        """The id of model ``name``, created on first use."""
        with self._session() as session:
            model_id = session.scalar(select(m.Model.id).where(m.Model.name == name))
            if model_id is not None:
                session.execute(
                    update(m.Model)
                    .where(m.Model.id == model_id)
                    .values(score_direction=score_direction)
                )
                return model_id
        try:
            with self._session() as session:
                model = m.Model(name=name, score_direction=score_direction)
                session.add(model)
                session.flush()
                return model.id
        except StoreConflict:  # created by a concurrent process in the meantime
            with self._session() as session:
                return session.execute(select(m.Model.id).where(m.Model.name == name)).scalar_one()

    def model_names(self) -> list[str]:
        with self._session() as session:
            return list(session.scalars(select(m.Model.name).order_by(m.Model.name)))

    # ------------------------------------------------------------------ runs
    def claim_run(
        self,
        model: str,
        as_of: dt.date,
        *,
        score_direction: str,
        config_hash: str,
        owner: str | None = None,
        stale_after: dt.timedelta = DEFAULT_STALE_AFTER,
    ) -> int:
        """Mark (model, as_of) as running by this process and return the run's id.

        Raises RunInProgressError when another process holds a live claim on it. A claim whose
        heartbeat is older than ``stale_after`` belonged to a killed process and is taken over.
        """
        model_id = self.ensure_model(model, score_direction)
        owner = owner or default_owner()
        now = m.utcnow()
        claim = {
            "status": "running",
            "owner": owner,
            "started_at": now,
            "heartbeat_at": now,
            "error": None,
            "riskmon_version": __version__,
            "config_hash": config_hash,
        }
        try:
            with self._session() as session:
                run = m.Run(model_id=model_id, as_of=as_of, **claim)
                session.add(run)
                session.flush()
                return run.id
        except StoreConflict:
            pass  # the date has a run already: take it over unless it is live
        with self._session() as session:
            holder = session.scalar(
                select(m.Run.owner).where(m.Run.model_id == model_id, m.Run.as_of == as_of)
            )
            takeable = (m.Run.status != "running") | (m.Run.heartbeat_at < now - stale_after)
            if holder is not None and _owner_is_dead(holder):  # killed here: no need to wait
                takeable = takeable | (m.Run.owner == holder)
            taken = session.execute(
                update(m.Run)
                .where(m.Run.model_id == model_id, m.Run.as_of == as_of, takeable)
                .values(**claim)
            )
            if taken.rowcount != 1:  # type: ignore[attr-defined]
                holder = session.scalar(
                    select(m.Run.owner).where(m.Run.model_id == model_id, m.Run.as_of == as_of)
                )
                raise RunInProgressError(
                    f"model {model!r} as of {as_of} is being computed by {holder} right now"
                )
            return session.execute(
                select(m.Run.id).where(m.Run.model_id == model_id, m.Run.as_of == as_of)
            ).scalar_one()

    def heartbeat(self, run_id: int, *, owner: str | None = None) -> None:
        """Tell other processes this run's owner is alive."""
        with self._session() as session:
            session.execute(
                update(m.Run).where(*self._held(run_id, owner)).values(heartbeat_at=m.utcnow())
            )

    @staticmethod
    def _held(run_id: int, owner: str | None) -> list[Any]:
        """The conditions under which ``owner`` still holds run ``run_id``."""
        conditions: list[Any] = [m.Run.id == run_id]
        if owner is not None:
            conditions += [m.Run.owner == owner, m.Run.status == "running"]
        return conditions

    def _take_finish(self, session: Session, run_id: int, owner: str | None) -> None:
        """Raise unless ``owner`` still holds the run (it may have been taken over)."""
        if owner is None:
            return
        held = session.scalar(
            select(func.count()).select_from(m.Run).where(*self._held(run_id, owner))
        )
        if not held:
            holder = session.scalar(select(m.Run.owner).where(m.Run.id == run_id))
            raise RunInProgressError(
                f"run {run_id} is no longer held by {owner} (now {holder}): not written"
            )

    def complete_run(
        self,
        run_id: int,
        *,
        counts: RunCounts,
        figures: Sequence[FigureRecord],
        bins: Iterable[BinRecord] = (),
        alerts: Iterable[AlertRecord] = (),
        baseline_id: int | None = None,
        owner: str | None = None,
    ) -> None:
        """Store everything a run computed, in one transaction, replacing earlier results.

        With ``owner``, nothing is written (RunInProgressError) unless that process still holds
        the run: a process that stalled and was taken over cannot overwrite the new results.
        """
        with self._session() as session:
            self._take_finish(session, run_id, owner)
            self._clear_results(session, run_id)
            session.add_all(m.Figure(run_id=run_id, **asdict(f)) for f in figures)
            session.add_all(m.BinStat(run_id=run_id, **asdict(b)) for b in bins)
            session.add_all(
                m.Alert(run_id=run_id, **(asdict(a) | {"status": str(a.status)})) for a in alerts
            )
            session.execute(
                update(m.Run)
                .where(m.Run.id == run_id)
                .values(
                    status="succeeded",
                    finished_at=m.utcnow(),
                    error=None,
                    baseline_id=baseline_id,
                    n_current=counts.n_current,
                    n_matured=counts.n_matured,
                    n_unmatured=counts.n_unmatured,
                )
            )

    def fail_run(self, run_id: int, error: str, *, owner: str | None = None) -> None:
        """Record that an attempt at a run failed, with its (password-masked) error.

        A first attempt is stored as failed, with no figures. A failed *re-run* of a date that
        had succeeded keeps the earlier results — a passing outage must not erase a month of
        history — and says in the run's error that a re-run failed and when.
        """
        with self._session() as session:
            self._take_finish(session, run_id, owner)
            earlier = session.scalar(
                select(func.count()).select_from(m.Figure).where(m.Figure.run_id == run_id)
            )
            now = m.utcnow()
            if earlier:
                finished = session.scalar(select(m.Run.finished_at).where(m.Run.id == run_id))
                kept = f" finished {_utc(finished):%Y-%m-%d %H:%M} UTC" if finished else ""
                note = (
                    f"a re-run at {now:%Y-%m-%d %H:%M} UTC failed and was discarded; the results "
                    f"are those of the earlier run{kept}. The re-run's error: {error}"
                )
                values: dict[str, Any] = {"status": "succeeded", "error": redact(note)}
            else:
                values = {
                    "status": "failed",
                    "finished_at": now,
                    "error": redact(error),
                    "n_current": None,
                    "n_matured": None,
                    "n_unmatured": None,
                    "baseline_id": None,
                }
            session.execute(update(m.Run).where(m.Run.id == run_id).values(**values))

    @staticmethod
    def _clear_results(session: Session, run_id: int) -> None:
        for table in (m.Figure, m.BinStat, m.Alert):
            session.execute(delete(table).where(table.run_id == run_id))

    def runs(self, model: str | None = None) -> list[RunRecord]:
        """Stored runs, oldest as-of date first."""
        query = (
            select(m.Run, m.Model.name)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .order_by(m.Model.name, m.Run.as_of)
        )
        if model is not None:
            query = query.where(m.Model.name == model)
        with self._session() as session:
            return [self._run_record(run, name) for run, name in session.execute(query)]

    def run(self, model: str, as_of: dt.date) -> RunRecord | None:
        """The run of ``model`` as of ``as_of``, if any."""
        query = (
            select(m.Run, m.Model.name)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .where(m.Model.name == model, m.Run.as_of == as_of)
        )
        with self._session() as session:
            row = session.execute(query).first()
            return None if row is None else self._run_record(row[0], row[1])

    @staticmethod
    def _run_record(run: m.Run, model: str) -> RunRecord:
        started = _utc(run.started_at)
        assert started is not None
        return RunRecord(
            id=run.id,
            model=model,
            as_of=run.as_of,
            status=run.status,
            started_at=started,
            finished_at=_utc(run.finished_at),
            n_current=run.n_current,
            n_matured=run.n_matured,
            n_unmatured=run.n_unmatured,
            error=run.error,
            riskmon_version=run.riskmon_version,
            config_hash=run.config_hash,
            baseline_id=run.baseline_id,
        )

    def figures(self, run_id: int) -> list[FigureRecord]:
        """Every figure of a run."""
        query = select(m.Figure).where(m.Figure.run_id == run_id).order_by(m.Figure.id)
        with self._session() as session:
            return [
                FigureRecord(
                    name=f.name,
                    value=f.value,
                    population=f.population,
                    variable=f.variable,
                    segment=f.segment,
                    reason=f.reason,
                    params=dict(f.params or {}),
                )
                for f in session.scalars(query)
            ]

    # ------------------------------------------------------------------ baselines
    def save_baseline(
        self,
        model: str,
        *,
        score_direction: str,
        window: tuple[dt.date, dt.date],
        config_hash: str,
        n_rows: int,
        n_bads: int | None,
        variables: Sequence[BaselineVariableRecord],
        figures: Sequence[FigureRecord],
    ) -> StoredBaseline:
        """Store a new baseline version of ``model`` (the previous version + 1), in one
        transaction; earlier versions and the runs that point at them stay as they are."""
        model_id = self.ensure_model(model, score_direction)
        with self._session() as session:
            latest = session.scalar(
                select(func.max(m.Baseline.version)).where(m.Baseline.model_id == model_id)
            )
            baseline = m.Baseline(
                model_id=model_id,
                version=(latest or 0) + 1,
                window_start=window[0],
                window_end=window[1],
                config_hash=config_hash,
                n_rows=n_rows,
                n_bads=n_bads,
                riskmon_version=__version__,
            )
            session.add(baseline)
            session.flush()
            for variable in variables:
                row = m.BaselineVariable(
                    baseline_id=baseline.id,
                    variable=variable.variable,
                    kind=variable.kind,
                    binning=variable.binning,
                    params=variable.params,
                )
                session.add(row)
                session.flush()
                session.add_all(
                    m.BaselineBin(variable_id=row.id, **asdict(b)) for b in variable.bins
                )
            session.add_all(
                m.BaselineFigure(
                    baseline_id=baseline.id,
                    name=f.name,
                    variable=f.variable,
                    segment=f.segment,
                    value=f.value,
                    reason=f.reason,
                    params=f.params,
                )
                for f in figures
            )
            baseline_id = baseline.id
        stored = self.baseline(baseline_id)
        assert stored is not None
        return stored

    def latest_baseline(self, model: str) -> StoredBaseline | None:
        """The newest baseline version of ``model``, if it has been frozen."""
        with self._session() as session:
            baseline_id = session.scalar(
                select(m.Baseline.id)
                .join(m.Model, m.Model.id == m.Baseline.model_id)
                .where(m.Model.name == model)
                .order_by(m.Baseline.version.desc())
                .limit(1)
            )
        return None if baseline_id is None else self.baseline(baseline_id)

    def baseline(self, baseline_id: int) -> StoredBaseline | None:
        """A baseline version with its variables, bins and figures."""
        with self._session() as session:
            row = session.execute(
                select(m.Baseline, m.Model.name)
                .join(m.Model, m.Model.id == m.Baseline.model_id)
                .where(m.Baseline.id == baseline_id)
            ).first()
            if row is None:
                return None
            baseline, model = row
            variables: dict[str, BaselineVariableRecord] = {}
            for var in session.scalars(
                select(m.BaselineVariable)
                .where(m.BaselineVariable.baseline_id == baseline_id)
                .order_by(m.BaselineVariable.id)
            ):
                bins = session.scalars(
                    select(m.BaselineBin)
                    .where(m.BaselineBin.variable_id == var.id)
                    .order_by(m.BaselineBin.segment, m.BaselineBin.bin_index)
                )
                variables[var.variable] = BaselineVariableRecord(
                    variable=var.variable,
                    kind=var.kind,
                    binning=dict(var.binning),
                    params=dict(var.params or {}),
                    bins=tuple(
                        BaselineBinRecord(
                            bin_index=b.bin_index,
                            label=b.label,
                            n_total=b.n_total,
                            total=b.total,
                            segment=b.segment,
                            n_goods=b.n_goods,
                            goods=b.goods,
                            n_bads=b.n_bads,
                            bads=b.bads,
                            share=b.share,
                        )
                        for b in bins
                    ),
                )
            figures = tuple(
                FigureRecord(
                    name=f.name,
                    value=f.value,
                    population="baseline",
                    variable=f.variable,
                    segment=f.segment,
                    reason=f.reason,
                    params=dict(f.params or {}),
                )
                for f in session.scalars(
                    select(m.BaselineFigure)
                    .where(m.BaselineFigure.baseline_id == baseline_id)
                    .order_by(m.BaselineFigure.id)
                )
            )
            frozen_at = _utc(baseline.frozen_at)
            assert frozen_at is not None
            return StoredBaseline(
                id=baseline.id,
                model=model,
                version=baseline.version,
                window_start=baseline.window_start,
                window_end=baseline.window_end,
                frozen_at=frozen_at,
                config_hash=baseline.config_hash,
                n_rows=baseline.n_rows,
                n_bads=baseline.n_bads,
                riskmon_version=baseline.riskmon_version,
                variables=variables,
                figures=figures,
            )

    def latest_run(
        self, model: str, *, before: dt.date | None = None, status: str | None = "succeeded"
    ) -> RunRecord | None:
        """The newest run of ``model`` (as-of date before ``before``; with ``status``)."""
        query = (
            select(m.Run, m.Model.name)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .where(m.Model.name == model)
            .order_by(m.Run.as_of.desc())
            .limit(1)
        )
        if before is not None:
            query = query.where(m.Run.as_of < before)
        if status is not None:
            query = query.where(m.Run.status == status)
        with self._session() as session:
            row = session.execute(query).first()
            return None if row is None else self._run_record(row[0], row[1])

    def bins(self, run_id: int) -> list[BinRecord]:
        """Every bin statistic of a run."""
        query = select(m.BinStat).where(m.BinStat.run_id == run_id).order_by(m.BinStat.id)
        columns = [f.name for f in fields(BinRecord)]
        with self._session() as session:
            return [
                BinRecord(**{c: getattr(b, c) for c in columns} | {"extra": dict(b.extra or {})})
                for b in session.scalars(query)
            ]

    def alerts(self, run_id: int) -> list[StoredAlert]:
        """Every alert of a run, with its notification state."""
        query = select(m.Alert).where(m.Alert.run_id == run_id).order_by(m.Alert.id)
        columns = [f.name for f in fields(StoredAlert)]
        with self._session() as session:
            return [
                StoredAlert(**{c: getattr(a, c) for c in columns}) for a in session.scalars(query)
            ]

    def history(
        self,
        model: str,
        name: str,
        *,
        variable: str = "",
        segment: str = "",
        population: str,
    ) -> list[HistoryPoint]:
        """One figure over the succeeded runs of ``model``, oldest first."""
        query = (
            select(m.Run.as_of, m.Figure.value, m.Figure.reason, m.Run.id)
            .join(m.Figure, m.Figure.run_id == m.Run.id)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .where(
                m.Model.name == model,
                m.Run.status == "succeeded",
                m.Figure.name == name,
                m.Figure.variable == variable,
                m.Figure.segment == segment,
                m.Figure.population == population,
            )
            .order_by(m.Run.as_of)
        )
        with self._session() as session:
            return [HistoryPoint(*row) for row in session.execute(query)]

    # ------------------------------------------------------------------ notifications
    def record_delivery(self, run_id: int, channel: str, *, error: str | None) -> None:
        """Record one attempt to notify ``channel`` of a run: sent, or failed with ``error``."""
        now = m.utcnow()
        state = "failed" if error else "sent"
        values: dict[str, Any] = {
            "state": state,
            "last_error": redact(error) if error else None,
            "last_attempt_at": now,
            "sent_at": None if error else now,
        }
        with self._session() as session:
            existing = session.scalar(
                select(m.Delivery).where(m.Delivery.run_id == run_id, m.Delivery.channel == channel)
            )
            if existing is None:
                session.add(m.Delivery(run_id=run_id, channel=channel, attempts=1, **values))
            else:
                for key, value in values.items():
                    setattr(existing, key, value)
                existing.attempts += 1

    def deliveries(self, run_id: int) -> list[DeliveryRecord]:
        """The notifications of a run."""
        query = select(m.Delivery).where(m.Delivery.run_id == run_id).order_by(m.Delivery.id)
        with self._session() as session:
            return [self._delivery(d) for d in session.scalars(query)]

    def failed_deliveries(self, model: str) -> list[DeliveryRecord]:
        """Notifications of ``model``'s runs that failed and have not been sent since."""
        query = (
            select(m.Delivery)
            .join(m.Run, m.Run.id == m.Delivery.run_id)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .where(m.Model.name == model, m.Delivery.state == "failed")
            .order_by(m.Run.as_of, m.Delivery.id)
        )
        with self._session() as session:
            return [self._delivery(d) for d in session.scalars(query)]

    @staticmethod
    def _delivery(d: m.Delivery) -> DeliveryRecord:
        attempted = _utc(d.last_attempt_at)
        assert attempted is not None
        return DeliveryRecord(
            run_id=d.run_id,
            channel=d.channel,
            state=d.state,
            attempts=d.attempts,
            last_error=d.last_error,
            last_attempt_at=attempted,
            sent_at=_utc(d.sent_at),
        )

    def set_notify_state(self, run_id: int, state: str, *, error: str | None = None) -> None:
        """Set the notification state of every alert of a run."""
        values: dict[str, Any] = {
            "notify_state": state,
            "notify_error": redact(error) if error else None,
        }
        if state in ("sent", "failed"):
            values["notify_attempts"] = m.Alert.notify_attempts + 1
        if state == "sent":
            values["notified_at"] = m.utcnow()
        with self._session() as session:
            session.execute(update(m.Alert).where(m.Alert.run_id == run_id).values(**values))

    def count_rows(self, table: str) -> int:
        """Number of rows in one of the store's tables (used by checks and tests)."""
        tables = (m.Figure, m.BinStat, m.Alert, m.Run, m.Delivery, m.Baseline)
        model = {cls.__tablename__: cls for cls in tables}[table]
        with self._session() as session:
            return session.execute(select(func.count()).select_from(model)).scalar_one()
