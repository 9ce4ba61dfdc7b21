"""Reviews of runs: a validator's decisions, only ever appended.

:class:`Reviews` adds a review (:meth:`Reviews.add_review`) and reads them back; it has no
method that changes or deletes one, and neither has any other part of the store. A later
review of the same run supersedes an earlier one in display only: both stay stored.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from riskmon.errors import ConfigError
from riskmon.store import models as m
from riskmon.store._session import StoreSession, _utc
from riskmon.store.records import ASSESSMENTS, ReviewRecord


def _record(review: m.Review, model: str, as_of: dt.date) -> ReviewRecord:
    reviewed = _utc(review.reviewed_at)
    assert reviewed is not None
    return ReviewRecord(
        id=review.id,
        run_id=review.run_id,
        model=model,
        as_of=as_of,
        decision=review.decision,
        assessment=review.assessment,
        reviewer=m.read_text(review.reviewer),
        note=None if review.note is None else m.read_text(review.note),
        reviewed_at=reviewed,
    )


class Reviews(StoreSession):
    """Appends reviews of runs and reads them back."""

    def add_review(
        self,
        run_id: int,
        *,
        decision: str,
        reviewer: str,
        assessment: int | None = None,
        note: str | None = None,
    ) -> ReviewRecord:
        """Append a review of run ``run_id``; the stored review, with its id and time."""
        if decision not in m.REVIEW_DECISIONS:
            raise ConfigError(
                f"--decision: expected one of {', '.join(m.REVIEW_DECISIONS)}, got {decision!r}"
            )
        if assessment is not None and assessment not in ASSESSMENTS:
            raise ConfigError(f"--assessment: expected 1, 2, 3 or 4, got {assessment!r}")
        if not reviewer.strip():
            raise ConfigError("--by: expected the reviewer's name, got an empty text")
        with self._session() as session:
            review = m.Review(
                run_id=run_id,
                decision=decision,
                assessment=assessment,
                reviewer=m.stored_text(reviewer),
                note=None if note is None else m.stored_text(note),
            )
            session.add(review)
            session.flush()
            found = session.execute(
                select(m.Model.name, m.Run.as_of)
                .join(m.Run, m.Run.model_id == m.Model.id)
                .where(m.Run.id == run_id)
            ).one()
            return _record(review, found.name, found.as_of)

    def reviews(self, *, model: str | None = None, run_id: int | None = None) -> list[ReviewRecord]:
        """Stored reviews (of ``model``, of run ``run_id``), oldest first."""
        query = (
            select(m.Review, m.Model.name, m.Run.as_of)
            .join(m.Run, m.Run.id == m.Review.run_id)
            .join(m.Model, m.Model.id == m.Run.model_id)
            .order_by(m.Review.reviewed_at, m.Review.id)
        )
        if model is not None:
            query = query.where(m.Model.name == model)
        if run_id is not None:
            query = query.where(m.Review.run_id == run_id)
        with self._session() as session:
            return [_record(r, name, as_of) for r, name, as_of in session.execute(query)]
