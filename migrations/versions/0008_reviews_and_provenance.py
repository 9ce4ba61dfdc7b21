"""Reviews of runs, and each run's provenance.

Adds the ``reviews`` table (a validator's decisions, only ever appended) and the nullable JSON
column ``runs.provenance`` (code version, configuration and its fingerprint, statements, window
counts, baseline). No row is copied: runs stored before have no provenance.

The downgrade refuses a store that holds reviews: they are an audit trail, and dropping the
table would delete them.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # each step only if not done, so that the migration runs again on a store whose version
    # was set back after it (an interrupted run leaves nothing behind: one transaction)
    inspector = sa.inspect(op.get_bind())
    if "reviews" not in inspector.get_table_names():
        _create_reviews()
    if "provenance" not in {c["name"] for c in inspector.get_columns("runs")}:
        op.add_column("runs", sa.Column("provenance", sa.JSON(), nullable=True))


def _create_reviews() -> None:
    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("decision", sa.String(length=32), nullable=False),
        sa.Column("assessment", sa.Integer(), nullable=True),
        sa.Column("reviewer", sa.String(length=200), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("reviewed_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "assessment IS NULL OR assessment BETWEEN 1 AND 4",
            name=op.f("ck_reviews_assessment"),
        ),
        sa.CheckConstraint(
            "decision IN ('accepted', 'action-required', 'escalated')",
            name=op.f("ck_reviews_decision"),
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_reviews_run_id_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
    )


def downgrade() -> None:
    reviews = op.get_bind().execute(sa.text("SELECT COUNT(*) FROM reviews")).scalar_one()
    if reviews:
        raise RuntimeError(
            f"the store holds {reviews} review(s) of runs, an audit trail that a downgrade "
            "below revision 0008 would delete; keep this riskmon, or copy the reviews table "
            "elsewhere and empty it first"
        )
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("provenance")
    op.drop_table("reviews")
