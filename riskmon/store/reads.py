"""Reading the metric store: runs, their figures, bins and alerts, and a figure's history."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import fields
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import defer

from riskmon.figure_table import Figures
from riskmon.records import BinRecord, FigureRecord
from riskmon.store import models as m
from riskmon.store._session import (
    INSERT_BATCH,
    StoreSession,
    _utc,
    full_column,
    read_column,
    read_row,
    shared_rows,
)
from riskmon.store.records import HistoryPoint, RunRecord, StoredAlert

#: a history point's columns, as :class:`HistoryPoint` names them
_POINT_COLUMNS = (m.Run.as_of, m.Figure.value, m.Figure.reason, m.Run.id.label("run_id"))


def _runs() -> Select[m.Run, str]:
    """Runs with their model's name."""
    return select(m.Run, m.Model.name).join(m.Model, m.Model.id == m.Run.model_id)


def _run_record(run: m.Run, model: str, *, details: bool = True) -> RunRecord:
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
        plan=None if not details or run.plan is None else dict(run.plan),
        owner=run.owner,
        provenance=None if not details or run.provenance is None else dict(run.provenance),
    )


class Reads(StoreSession):
    """Looks up runs and what they stored."""

    def model_names(self) -> list[str]:
        """The names of every model the store knows, sorted."""
        with self._session() as session:
            return list(session.scalars(select(m.Model.name).order_by(m.Model.name)))

    def runs(self, model: str | None = None, *, details: bool = True) -> list[RunRecord]:
        """Stored runs, oldest as-of date first. Without ``details`` their plan and provenance
        are not read (None in the records): their JSON is most of a run's row (about 20 KB of
        provenance a run), so a list of a year of daily runs reads in a fraction of the time."""
        query = _runs().order_by(m.Model.name, m.Run.as_of)
        if model is not None:
            query = query.where(m.Model.name == model)
        if not details:
            query = query.options(
                defer(m.Run.plan, raiseload=True), defer(m.Run.provenance, raiseload=True)
            )
        with self._session() as session:
            return [_run_record(run, name, details=details) for run, name in session.execute(query)]

    def run(self, model: str, as_of: dt.date) -> RunRecord | None:
        """The run of ``model`` as of ``as_of``, if any."""
        return self._first_run(_runs().where(m.Model.name == model, m.Run.as_of == as_of))

    def run_by_id(self, run_id: int) -> RunRecord | None:
        """The run with id ``run_id``, if any."""
        return self._first_run(_runs().where(m.Run.id == run_id))

    def latest_run(
        self,
        model: str,
        *,
        before: dt.date | None = None,
        status: str | None = "succeeded",
        with_loans: bool = False,
    ) -> RunRecord | None:
        """The newest run of ``model`` (as-of date before ``before``; with ``status``; with
        ``with_loans``, one whose current population had loans)."""
        query = _runs().where(m.Model.name == model).order_by(m.Run.as_of.desc()).limit(1)
        if before is not None:
            query = query.where(m.Run.as_of < before)
        if status is not None:
            query = query.where(m.Run.status == status)
        if with_loans:
            query = query.where(m.Run.n_current > 0)
        return self._first_run(query)

    def _first_run(self, query: Select[m.Run, str]) -> RunRecord | None:
        with self._session() as session:
            row = session.execute(query).first()
            return None if row is None else _run_record(row[0], row[1])

    def figures(self, run_id: int, *, segment: str | None = None) -> Figures:
        """Every figure of a run (of one ``segment``, "" the whole population), held in
        columns as they are read (a run of 5,000 segments has about 240,000)."""
        columns = [f.name for f in fields(FigureRecord)]
        query = (
            select(*(read_column(m.Figure, c, json="params") for c in columns))
            .where(m.Figure.run_id == run_id)
            .where(*(() if segment is None else (m.Figure.segment == m.key_of(segment),)))
            .order_by(m.Figure.id)
        )
        rows = self._shared(query, "params", share=False)  # held as tuples: nothing to share
        return Figures(FigureRecord(**row) for row in rows)

    def bins(self, run_id: int, *, segment: str | None = None) -> list[BinRecord]:
        """Every bin statistic of a run (of one ``segment``, "" the whole population); equal
        texts and ``extra`` fields are one object each (:func:`shared_rows`: read-only)."""
        columns = [f.name for f in fields(BinRecord)]
        # plain rows, not ORM objects: a run has hundreds of bins and a report reads them all
        query = (
            select(*(read_column(m.BinStat, c, json="extra") for c in columns))
            .where(m.BinStat.run_id == run_id)
            .where(*(() if segment is None else (m.BinStat.segment == m.key_of(segment),)))
            .order_by(m.BinStat.id)
        )
        return [BinRecord(**row) for row in self._shared(query, "extra")]

    def alerts(self, run_id: int) -> list[StoredAlert]:
        """Every alert of a run, with its notification state; equal texts and thresholds are
        one object each (:func:`shared_rows`: read-only)."""
        columns = [f.name for f in fields(StoredAlert)]
        query = (
            select(*(read_column(m.Alert, c, json="thresholds") for c in columns))
            .where(m.Alert.run_id == run_id)
            .order_by(m.Alert.id)
        )
        return [StoredAlert(**row) for row in self._shared(query, "thresholds")]

    def _shared(
        self, query: Select[Any], document: str, *, share: bool = True
    ) -> Iterator[dict[str, Any]]:
        """The rows of ``query`` (its column ``document`` read by :func:`json_text`),
        streamed in batches (:func:`shared_rows`; ``share``: equal documents one object)."""
        with self._session() as session:
            rows = session.execute(query.execution_options(yield_per=INSERT_BATCH))
            yield from shared_rows(rows, {document}, share=share)

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
        query = self._history_query(model, name, population, segment).where(
            m.Figure.variable == m.key_of(variable)
        )
        with self._session() as session:
            return [HistoryPoint(**read_row(row._asdict())) for row in session.execute(query)]

    def history_by_variable(
        self,
        model: str,
        name: str,
        *,
        population: str,
        segment: str = "",
        until: dt.date | None = None,
    ) -> dict[str, list[HistoryPoint]]:
        """A figure of every variable over the succeeded runs of ``model`` (up to ``until``),
        by variable, each oldest first: one query where a report reads a figure for each of
        its characteristics."""
        query = self._history_query(model, name, population, segment)
        if until is not None:
            query = query.where(m.Run.as_of <= until)
        found: dict[str, list[HistoryPoint]] = {}
        with self._session() as session:
            for row in session.execute(query.add_columns(full_column(m.Figure.variable))):
                data = read_row(row._asdict())
                variable = data.pop("variable")
                found.setdefault(variable, []).append(HistoryPoint(**data))
        return found

    @staticmethod
    def _history_query(
        model: str, name: str, population: str, segment: str
    ) -> Select[dt.date, float | None, str | None, int]:
        """The points of figure ``name`` of ``population`` and ``segment`` over the succeeded
        runs of ``model``, oldest first."""
        return (
            select(*_POINT_COLUMNS)
            .join(m.Figure, m.Figure.run_id == m.Run.id)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .where(
                m.Model.name == model,
                m.Run.status == "succeeded",
                m.Figure.name == name,
                m.Figure.segment == m.key_of(segment),
                m.Figure.population == population,
            )
            .order_by(m.Run.as_of)
        )

    def run_alert_statuses(self, model: str) -> dict[int, list[str]]:
        """The statuses the alerts of each run of ``model`` have, each once, by run id (one
        query, grouped in the store: a year of runs of a hundred alerts each is 36,500 alerts
        but at most four statuses a run)."""
        query = (
            select(m.Alert.run_id, m.Alert.status)
            .join(m.Run, m.Run.id == m.Alert.run_id)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .where(m.Model.name == model)
            .group_by(m.Alert.run_id, m.Alert.status)
        )
        found: dict[int, list[str]] = {}
        with self._session() as session:
            for run_id, status in session.execute(query):
                found.setdefault(run_id, []).append(status)
        return found

    def figure_keys(self, model: str) -> set[tuple[str, str, str, str]]:
        """Every (figure, population, variable, segment) the succeeded runs of ``model`` hold."""
        query = (
            select(
                m.Figure.name,
                m.Figure.population,
                full_column(m.Figure.variable),
                full_column(m.Figure.segment),
            )
            .distinct()
            .join(m.Run, m.Run.id == m.Figure.run_id)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .where(m.Model.name == model, m.Run.status == "succeeded")
        )
        with self._session() as session:
            return {
                (row[0], row[1], m.read_text(row[2]), m.read_text(row[3]))
                for row in session.execute(query)
            }

    def count_rows(self, table: str) -> int:
        """Number of rows in one of the store's tables (used by checks and tests)."""
        tables = (m.Figure, m.BinStat, m.Alert, m.Run, m.Delivery, m.Baseline)
        model = {cls.__tablename__: cls for cls in tables}[table]
        with self._session() as session:
            return session.execute(select(func.count()).select_from(model)).scalar_one()
