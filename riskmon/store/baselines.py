"""Frozen baselines in the metric store: each model's versions, with their variables, bins and
figures, saved in one transaction and never changed afterwards.

Versions are unique per model: when two processes freeze the same model at once, the second
write raises :class:`~riskmon.store.StoreConflict` and leaves nothing behind.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict, fields

from sqlalchemy import func, select

from riskmon import __version__
from riskmon.records import FigureRecord
from riskmon.store import models as m
from riskmon.store._session import StoreSession, _utc
from riskmon.store.records import BaselineBinRecord, BaselineVariableRecord, StoredBaseline


class Baselines(StoreSession):
    """Saves and reads baseline versions."""

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
            # every bin of the baseline in one query, as plain rows, grouped by variable
            bin_fields = [f.name for f in fields(BaselineBinRecord)]
            bins_of: dict[int, list[BaselineBinRecord]] = {}
            for b in session.execute(
                select(m.BaselineBin.variable_id, *(getattr(m.BaselineBin, c) for c in bin_fields))
                .join(m.BaselineVariable, m.BaselineVariable.id == m.BaselineBin.variable_id)
                .where(m.BaselineVariable.baseline_id == baseline_id)
                .order_by(m.BaselineBin.variable_id, m.BaselineBin.segment, m.BaselineBin.bin_index)
            ):
                bins_of.setdefault(b.variable_id, []).append(
                    BaselineBinRecord(**{c: getattr(b, c) for c in bin_fields})
                )
            variables: dict[str, BaselineVariableRecord] = {}
            for var in session.scalars(
                select(m.BaselineVariable)
                .where(m.BaselineVariable.baseline_id == baseline_id)
                .order_by(m.BaselineVariable.id)
            ):
                variables[var.variable] = BaselineVariableRecord(
                    variable=var.variable,
                    kind=var.kind,
                    binning=dict(var.binning),
                    params=dict(var.params or {}),
                    bins=tuple(bins_of.get(var.id, [])),
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
