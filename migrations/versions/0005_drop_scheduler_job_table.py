"""Drop the scheduler's pickled job table: `riskmon schedule` keeps its jobs in memory.

APScheduler's database job store kept each job pickled in ``apscheduler_jobs``, and loading a
job unpickles it, which can run any code: whoever could write to the store could run code in
every scheduler. The scheduler now rebuilds its jobs from the configuration on start, and
catches up from the runs table, so the table holds nothing riskmon needs.

The downgrade creates nothing: the table was APScheduler's, which creates it again when an
earlier riskmon starts its scheduler.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: the table APScheduler's SQLAlchemy job store created in the metric store's database
JOB_TABLE = "apscheduler_jobs"


def upgrade() -> None:
    if JOB_TABLE in sa.inspect(op.get_bind()).get_table_names():
        op.drop_table(JOB_TABLE)


def downgrade() -> None:
    pass
