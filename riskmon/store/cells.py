"""Daily cells: a model's collect sums per population and score day, kept between runs.

:class:`DayCellStore` reads the cells of a run's windows (:meth:`DayCellStore.day_cells`) and keeps
the days a run read (:meth:`DayCellStore.keep_day_cells`), in one transaction of its own after the
run is stored: a process killed before it leaves the run stored and no cell written, and the
next run reads those days again. The cells are a cache of what the source holds, never the
only copy of anything: losing them costs a reading, not a figure.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Text, and_, cast, delete, or_, select

from riskmon.store import models as m
from riskmon.store._session import StoreSession

#: (population, day) -> the cells as JSON (``riskmon.collect.daycells.DayCells.to_json``)
CellRows = dict[tuple[str, dt.date], dict[str, Any]]
#: (population, day) -> (the cells' JSON text, the date (UTC) they were read)
StoredCells = dict[tuple[str, dt.date], tuple[str, dt.date]]


class DayCellStore(StoreSession):
    """Reads and keeps a model's daily cells."""

    def day_cells(
        self, model: str, digest: str, windows: Mapping[str, tuple[dt.date, dt.date]]
    ) -> StoredCells:
        """The cells of ``digest`` stored for ``model`` on the days of each population's
        window ``(first day, last day)``, each as its JSON text (the caller decodes only the
        days it has not decoded before) with the date it was read."""
        if not windows:
            return {}
        within = or_(
            *(
                and_(m.DayCell.population == name, m.DayCell.day.between(start, end))
                for name, (start, end) in windows.items()
            )
        )
        query = (
            select(
                m.DayCell.population, m.DayCell.day, cast(m.DayCell.cells, Text), m.DayCell.read_at
            )
            .join(m.Model, m.Model.id == m.DayCell.model_id)
            .where(m.Model.name == model, m.DayCell.digest == digest, within)
        )
        with self._session() as session:
            return {
                (p, day): (cells, read_at.date())
                for p, day, cells, read_at in session.execute(query)
            }

    def keep_day_cells(
        self, model: str, digest: str, cells: CellRows, *, read_at: dt.datetime | None = None
    ) -> None:
        """Keep ``cells`` for ``model``, read at ``read_at`` (default now), replacing those
        stored for the same days, and drop the model's cells of any other digest (bins or
        baseline changed: never used again)."""
        read_at = read_at or m.utcnow()
        if not cells:
            return
        with self._session() as session:
            model_id = session.execute(select(m.Model.id).where(m.Model.name == model)).scalar_one()
            session.execute(
                delete(m.DayCell).where(m.DayCell.model_id == model_id, m.DayCell.digest != digest)
            )
            by_population: dict[str, list[dt.date]] = {}
            for population, day in cells:
                by_population.setdefault(population, []).append(day)
            for population, days in by_population.items():
                for chunk in _chunks(sorted(days)):
                    session.execute(
                        delete(m.DayCell).where(
                            m.DayCell.model_id == model_id,
                            m.DayCell.population == population,
                            m.DayCell.day.in_(chunk),
                        )
                    )
            session.add_all(
                m.DayCell(
                    model_id=model_id,
                    population=population,
                    day=day,
                    digest=digest,
                    cells=data,
                    read_at=read_at,
                )
                for (population, day), data in cells.items()
            )


def _chunks(days: list[dt.date], size: int = 500) -> list[list[dt.date]]:
    return [days[i : i + size] for i in range(0, len(days), size)]
