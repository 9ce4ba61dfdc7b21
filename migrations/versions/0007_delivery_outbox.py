"""Deliveries as an outbox: queued ``pending`` with their run, ``sending`` while a process has
taken one, then ``sent`` or ``failed``.

Only the check constraint on ``deliveries.state`` changes: every existing row is ``sent`` or
``failed``, which both versions allow. The downgrade turns the deliveries a downgraded riskmon
would not know into ``failed`` ones, which it retries.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OUTBOX_STATES = "state IN ('pending', 'sending', 'sent', 'failed')"
EARLIER_STATES = "state IN ('sent', 'failed')"


def _state_check(condition: str) -> None:
    with op.batch_alter_table("deliveries") as batch:
        batch.drop_constraint(op.f("ck_deliveries_state"), type_="check")
        batch.create_check_constraint(op.f("ck_deliveries_state"), condition)


def upgrade() -> None:
    _state_check(OUTBOX_STATES)


def downgrade() -> None:
    op.execute(
        sa.text(
            "UPDATE deliveries SET state = 'failed', "
            "last_error = 'queued, not sent before the store was downgraded' "
            "WHERE state IN ('pending', 'sending')"
        )
    )
    _state_check(EARLIER_STATES)
