"""Per-bin extra fields (JSON) for any figure family, and each run's plan (windows, columns).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("bin_stats") as batch:
        batch.add_column(sa.Column("extra", sa.JSON(), nullable=True))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("plan", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("plan")
    with op.batch_alter_table("bin_stats") as batch:
        batch.drop_column("extra")
