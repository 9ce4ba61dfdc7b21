"""Segments, variables' names and bins' labels of any length and content.

A segment value, a category level (in a bin's label and a segment) or a variable's name over
200 characters, or holding a NUL, failed every run on PostgreSQL (``varchar(200)``; text there
cannot hold U+0000). The ``segment`` and ``variable`` columns, which the unique constraints
cover, now hold a bounded key (``riskmon.store.models.text_key``: the text itself up to 200
characters, else a prefix and a digest), the whole text in a new ``segment_full`` /
``variable_full`` column when the key is not it; a bin's ``label``, in no constraint, becomes
``Text``. A text holding a NUL is stored escaped (``riskmon.store.models.stored_text``).

The upgrade re-keys the rows a store already holds whose key column is not its own key (on
SQLite, which never enforced the 200 characters, a longer text or a NUL; anywhere, a text that
ends like a shortened key). Each step checks what is already done, so an upgrade interrupted
half way runs again from the start (a text that an earlier riskmon stored starting with the
noncharacter U+FDD0, ``ESCAPED``, is taken to be one this upgrade escaped).

The downgrade puts back each whole text that fits in 200 characters; a longer one keeps its
key (200 characters: a prefix and a digest).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from riskmon.store.models import ESCAPED, KEY_LENGTH, key_of, stored_text, text_key

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: the key columns of each table
KEYED = {
    "baseline_variables": ("variable",),
    "baseline_bins": ("segment",),
    "baseline_figures": ("variable", "segment"),
    "figures": ("variable", "segment"),
    "bin_stats": ("variable", "segment"),
    "alerts": ("variable", "segment"),
}
#: the tables whose ``label`` becomes Text
LABELLED = ("baseline_bins", "bin_stats")


def _columns(table: str) -> dict[str, sa.types.TypeEngine[object]]:
    return {c["name"]: c["type"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def upgrade() -> None:
    for table, keys in KEYED.items():
        missing = [k for k in keys if f"{k}_full" not in _columns(table)]
        if missing:
            # ALTER TABLE in place, on SQLite too: a copy of baseline_variables would drop the
            # table its bins cascade from
            with op.batch_alter_table(table, recreate="never") as batch:
                for key in missing:
                    batch.add_column(sa.Column(f"{key}_full", sa.Text(), nullable=True))
    for table in LABELLED:
        if not isinstance(_columns(table)["label"], sa.Text):
            with op.batch_alter_table(table) as batch:
                batch.alter_column(
                    "label",
                    existing_type=sa.String(KEY_LENGTH),
                    type_=sa.Text(),
                    existing_nullable=False,
                )
    for table, keys in KEYED.items():
        for key in keys:
            _rekey(table, key)


def _rekey(table: str, key: str) -> None:
    """Each distinct text of ``table.key`` not yet keyed, whose key is not itself: its key in
    ``key``, the whole text (a NUL escaped) in ``key_full``."""
    bind = op.get_bind()
    column, full = sa.column(key, sa.String()), sa.column(f"{key}_full", sa.Text())
    rows = sa.table(table, column, full)
    texts = bind.execute(sa.select(column).distinct().where(full.is_(None))).scalars().all()
    for text in texts:
        # a text starting with ESCAPED was stored by this upgrade (no earlier riskmon wrote a
        # noncharacter first): an upgrade run again leaves it as it is
        if key_of(text) == text or text.startswith(ESCAPED):
            continue
        stored = stored_text(text)
        new_key = text_key(stored)
        bind.execute(
            sa.update(rows)
            .where(column == text, full.is_(None))
            .values({key: new_key, f"{key}_full": None if new_key == stored else stored})
        )


def downgrade() -> None:
    bind = op.get_bind()
    for table, keys in KEYED.items():
        for key in keys:
            column, full = sa.column(key, sa.String()), sa.column(f"{key}_full", sa.Text())
            bind.execute(
                sa.update(sa.table(table, column, full))
                .where(full.is_not(None), sa.func.length(full) <= KEY_LENGTH)
                .values({key: full})
            )
    for table in LABELLED:
        with op.batch_alter_table(table) as batch:
            batch.alter_column(
                "label",
                existing_type=sa.Text(),
                type_=sa.String(KEY_LENGTH),
                existing_nullable=False,
                postgresql_using=f"left(label, {KEY_LENGTH})",
            )
    for table, keys in KEYED.items():
        # in place (SQLite 3.35+ drops a column), as the columns were added
        with op.batch_alter_table(table, recreate="never") as batch:
            for key in keys:
                batch.drop_column(f"{key}_full")
