"""Baseline bins per segment, with the labeled loans' goods and bads apart from all loans.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("baseline_bins", schema=None) as batch_op:
        # existing bins describe the whole population: segment ""
        batch_op.add_column(
            sa.Column("segment", sa.String(length=200), nullable=False, server_default="")
        )
        batch_op.add_column(sa.Column("n_goods", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("goods", sa.Double(), nullable=True))
        batch_op.alter_column("share", existing_type=sa.Double(), nullable=True)
        batch_op.drop_constraint("uq_baseline_bins_variable_id_bin_index", type_="unique")
        batch_op.create_unique_constraint(
            "uq_baseline_bins_variable_id_segment_bin_index",
            ["variable_id", "segment", "bin_index"],
        )


def downgrade() -> None:
    with op.batch_alter_table("baseline_bins", schema=None) as batch_op:
        batch_op.drop_constraint("uq_baseline_bins_variable_id_segment_bin_index", type_="unique")
        batch_op.create_unique_constraint(
            "uq_baseline_bins_variable_id_bin_index", ["variable_id", "bin_index"]
        )
        batch_op.alter_column("share", existing_type=sa.Double(), nullable=False)
        batch_op.drop_column("goods")
        batch_op.drop_column("n_goods")
        batch_op.drop_column("segment")
