"""Frozen baselines in the metric store: each model's versions, with their variables, bins and
figures, saved in one transaction and never changed afterwards.

Versions are unique per model, and a version is taken by the transaction that writes the
baseline, under that unique constraint: a process asking for a given version (the first
baseline is version 1) gets :class:`~riskmon.store.StoreConflict` when another wrote it first,
and leaves nothing behind; one asking for "the next version" takes the next free one.
:meth:`Baselines.freezing` lets a process wait while another freezes a model's baseline.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from itertools import groupby
from operator import itemgetter
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from riskmon import __version__
from riskmon.figure_table import Figures
from riskmon.records import FigureRecord
from riskmon.store import models as m
from riskmon.store._session import (
    INSERT_BATCH,
    StoreConflict,
    StoreSession,
    _utc,
    full_text,
    insert_records,
    insert_rows,
    read_column,
    shared_rows,
    stored_row,
)
from riskmon.store.records import (
    BaselineBinRecord,
    BaselineBins,
    BaselineVariableRecord,
    StoredBaseline,
)

log = logging.getLogger(__name__)

#: first key of PostgreSQL's advisory locks on a model's baseline (the second is the model's id):
#: an arbitrary 32-bit number, "rsk1", that other users of the database are unlikely to take
BASELINE_LOCK_KEY = 0x72736B31
#: how often "the next version" is tried again after another process took the one it chose
NEXT_VERSION_ATTEMPTS = 5


class Baselines(StoreSession):
    """Saves and reads baseline versions."""

    @contextmanager
    def freezing(self, model: str, score_direction: str) -> Iterator[None]:
        """Hold ``model``'s baseline lock while in the block: a second process asking for it
        waits until the first is done (its baseline committed) — on PostgreSQL, with an
        advisory lock on a connection of its own. Other databases take no lock: there the
        unique version decides, and the second process's baseline is not stored."""
        if self.engine.dialect.name != "postgresql":
            yield
            return
        model_id = self.ensure_model(model, score_direction)
        with self._session() as probe:  # a StoreError, like every other store failure
            probe.execute(select(1))
        connection = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        try:
            keys = {"key": BASELINE_LOCK_KEY, "model": model_id}
            taken = connection.scalar(text("SELECT pg_try_advisory_lock(:key, :model)"), keys)
            if not taken:
                log.info("%s: waiting for another process freezing its baseline", model)
                connection.execute(text("SELECT pg_advisory_lock(:key, :model)"), keys)
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:key, :model)"), keys)
        finally:
            connection.close()

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
        version: int | None = None,
    ) -> StoredBaseline:
        """Store a baseline of ``model`` as ``version``, or as the next version when None, in
        one transaction; earlier versions and the runs that point at them stay as they are.

        Raises :class:`StoreConflict` when ``version`` is taken (by another process), having
        stored nothing. The next version is tried again when another process takes it first.
        """
        model_id = self.ensure_model(model, score_direction)

        def insert(version: int | None) -> int:
            with self._session() as session:
                if version is None:
                    latest = session.scalar(
                        select(func.max(m.Baseline.version)).where(m.Baseline.model_id == model_id)
                    )
                    version = (latest or 0) + 1
                baseline = m.Baseline(
                    model_id=model_id,
                    version=version,
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
                        **stored_row(
                            m.BaselineVariable,
                            {
                                "baseline_id": baseline.id,
                                "variable": variable.variable,
                                "kind": variable.kind,
                                "binning": variable.binning,
                                "params": variable.params,
                            },
                        )
                    )
                    session.add(row)
                    session.flush()
                    bins = variable.bins.rows()  # in columns: inserted without records
                    insert_rows(
                        session,
                        m.BaselineBin,
                        (dict(zip(_BIN_FIELDS, v, strict=True), variable_id=row.id) for v in bins),
                    )
                insert_records(
                    session,
                    m.BaselineFigure,
                    figures,
                    skip={"population"},  # a baseline's figures are of its sample
                    baseline_id=baseline.id,
                )
                baseline_id: int = baseline.id
            return baseline_id

        for attempt in range(1, NEXT_VERSION_ATTEMPTS + 1):
            try:
                baseline_id = insert(version)
                break
            except StoreConflict:
                if version is not None or attempt == NEXT_VERSION_ATTEMPTS:
                    raise
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

    def baseline(self, baseline_id: int, *, segments: bool = True) -> StoredBaseline | None:
        """A baseline version with its variables, bins and figures (with ``segments`` false,
        the bins and figures of the whole population only: what a report reads)."""
        with self._session() as session:
            row = session.execute(
                select(m.Baseline, m.Model.name)
                .join(m.Model, m.Model.id == m.Baseline.model_id)
                .where(m.Baseline.id == baseline_id)
            ).first()
            if row is None:
                return None
            baseline, model = row
            bins_of = _bins_by_variable(session, baseline_id, segments=segments)
            variables: dict[str, BaselineVariableRecord] = {}
            for var in session.scalars(
                select(m.BaselineVariable)
                .where(m.BaselineVariable.baseline_id == baseline_id)
                .order_by(m.BaselineVariable.id)
            ):
                name = full_text(var.variable, var.variable_full)
                variables[name] = BaselineVariableRecord(
                    variable=name,
                    kind=var.kind,
                    binning=dict(var.binning),
                    params=dict(var.params or {}),
                    bins=bins_of.get(var.id, BaselineBins()),
                )
            figures = _figures(session, baseline_id, segments=segments)
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


#: a baseline bin's fields, in the order of its values (:meth:`BaselineBins.rows`)
_BIN_FIELDS = tuple(f.name for f in fields(BaselineBinRecord))


def _bins_by_variable(
    session: Session, baseline_id: int, *, segments: bool
) -> dict[int, BaselineBins]:
    """Every bin of the baseline (with ``segments`` false, of the whole population only) in one
    query, by variable id, held in columns (:class:`BaselineBins`)."""
    columns = [f.name for f in fields(BaselineBinRecord)]
    texts = [i for i, c in enumerate(columns) if c in ("label", "segment")]
    query = (
        select(
            m.BaselineBin.variable_id,
            *(read_column(m.BaselineBin, c) for c in columns),
        )
        .join(m.BaselineVariable, m.BaselineVariable.id == m.BaselineBin.variable_id)
        .where(m.BaselineVariable.baseline_id == baseline_id)
        .where(*(() if segments else (m.BaselineBin.segment == "",)))
        .order_by(m.BaselineBin.variable_id, m.BaselineBin.segment, m.BaselineBin.bin_index)
    )

    def values(row: Any) -> list[Any]:
        out = list(row[1:])
        for i in texts:  # each text as it was written
            out[i] = m.read_text(out[i])
        return out

    # read in batches and turned into columns as they come: the rows of a variable are
    # consecutive (ordered by its id)
    rows = session.execute(query.execution_options(yield_per=INSERT_BATCH))
    return {
        variable_id: BaselineBins(map(values, group))
        for variable_id, group in groupby(rows, key=itemgetter(0))
    }


def _figures(session: Session, baseline_id: int, *, segments: bool) -> Figures:
    """The baseline's figures (with ``segments`` false, of the whole population only), held
    in columns as they are read."""
    columns = [f.name for f in fields(FigureRecord) if f.name != "population"]
    table = m.BaselineFigure
    query = (
        select(*(read_column(table, c, json="params") for c in columns))
        .where(table.baseline_id == baseline_id)
        .where(*(() if segments else (table.segment == "",)))
        .order_by(table.id)
    )
    rows = session.execute(query.execution_options(yield_per=INSERT_BATCH))
    held = shared_rows(rows, {"params"}, share=False)
    return Figures(FigureRecord(**row, population="baseline") for row in held)
