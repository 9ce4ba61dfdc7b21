"""Daily cells: each model's collect sums per population and score day.

Adds the ``day_cells`` table (``riskmon.collect.days``). A store upgraded to it holds no cells:
its next run reads its windows in full and keeps their days' cells, and the runs after it read
only their fresh days. Dropping the table (downgrade) loses nothing a run cannot read again.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # only if not done, so that the migration runs again on a store whose version was set
    # back after it (an interrupted run leaves nothing behind: one transaction)
    if "day_cells" in sa.inspect(op.get_bind()).get_table_names():
        return
    op.create_table(
        "day_cells",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("population", sa.String(length=200), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("cells", sa.JSON(), nullable=False),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["models.id"],
            name=op.f("fk_day_cells_model_id_models"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_day_cells")),
        sa.UniqueConstraint(
            "model_id", "population", "day", name=op.f("uq_day_cells_model_id_population_day")
        ),
    )


def downgrade() -> None:
    op.drop_table("day_cells")
