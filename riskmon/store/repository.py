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
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import Engine, delete, func, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from riskmon import __version__
from riskmon.errors import StoreError
from riskmon.redact import mask_url, redact
from riskmon.store import models as m
from riskmon.store.engine import store_engine

#: a run whose heartbeat is older than this is taken to belong to a dead process
DEFAULT_STALE_AFTER = dt.timedelta(minutes=30)


class RunInProgressError(StoreError):
    """Another process is computing the same (model, as-of date) right now."""


@dataclass(frozen=True)
class FigureRecord:
    """One figure to store: a value, or None with the reason it is not available."""

    name: str
    value: float | None
    population: str
    variable: str = ""
    segment: str = ""
    reason: str | None = None
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BinRecord:
    """One bin of one variable in a run."""

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


@dataclass(frozen=True)
class AlertRecord:
    """The outcome of one alert rule."""

    rule: str
    status: str
    value: float | None
    thresholds: dict[str, Any]
    message: str
    variable: str = ""
    segment: str = ""


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
class RunCounts:
    """Row counts of a run's populations."""

    n_current: int
    n_matured: int
    n_unmatured: int


def default_owner() -> str:
    """Who holds a run: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


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
        except IntegrityError:
            raise
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
        except IntegrityError:  # created by a concurrent process in the meantime
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
            "finished_at": None,
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
        except IntegrityError:
            pass  # the date has a run already: take it over unless it is live
        with self._session() as session:
            taken = session.execute(
                update(m.Run)
                .where(
                    m.Run.model_id == model_id,
                    m.Run.as_of == as_of,
                    (m.Run.status != "running") | (m.Run.heartbeat_at < now - stale_after),
                )
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

    def heartbeat(self, run_id: int) -> None:
        """Tell other processes this run's owner is alive."""
        with self._session() as session:
            session.execute(update(m.Run).where(m.Run.id == run_id).values(heartbeat_at=m.utcnow()))

    def complete_run(
        self,
        run_id: int,
        *,
        counts: RunCounts,
        figures: Sequence[FigureRecord],
        bins: Iterable[BinRecord] = (),
        alerts: Iterable[AlertRecord] = (),
        baseline_id: int | None = None,
    ) -> None:
        """Store everything a run computed, in one transaction, replacing earlier results."""
        with self._session() as session:
            self._clear_results(session, run_id)
            session.add_all(m.Figure(run_id=run_id, **asdict(f)) for f in figures)
            session.add_all(m.BinStat(run_id=run_id, **asdict(b)) for b in bins)
            session.add_all(m.Alert(run_id=run_id, **asdict(a)) for a in alerts)
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

    def fail_run(self, run_id: int, error: str) -> None:
        """Record a run as failed with its (password-masked) error, and no figures."""
        with self._session() as session:
            self._clear_results(session, run_id)
            session.execute(
                update(m.Run)
                .where(m.Run.id == run_id)
                .values(status="failed", finished_at=m.utcnow(), error=redact(error))
            )

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

    def count_rows(self, table: str) -> int:
        """Number of rows in one of the store's tables (used by checks and tests)."""
        model = {cls.__tablename__: cls for cls in (m.Figure, m.BinStat, m.Alert, m.Run)}[table]
        with self._session() as session:
            return session.execute(select(func.count()).select_from(model)).scalar_one()
