"""Alembic environment of the metric store.

The connection comes from outside when riskmon (or a test) runs a migration
(``config.attributes["connection"]``, from :func:`riskmon.store.migrate.migration_connection`);
the ``alembic`` command line falls back to ``sqlalchemy.url`` in alembic.ini, then to
``$RISKMON_STORE_URL``, then to riskmon's default.

Each migration runs in a transaction of its own, with its version bump
(``transaction_per_migration``): on PostgreSQL, and on SQLite, whose migration connection
makes DDL transactional; a migration killed half-way leaves nothing of itself. On SQLite the
foreign keys, off while it migrates, are checked before each migration commits.
"""

from __future__ import annotations

import os
from typing import Any

from alembic import context
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, pool

from riskmon.config import DEFAULT_STORE_URL
from riskmon.errors import StoreError
from riskmon.store.engine import foreign_key_violations, store_engine
from riskmon.store.integrity import riskmon_object
from riskmon.store.migrate import migration_connection
from riskmon.store.models import Base

config = context.config
target_metadata = Base.metadata


def _configure(connection: Connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        # SQLite cannot ALTER most things in place; batch mode copies the table instead.
        render_as_batch=sqlite,
        include_object=riskmon_object,
        transaction_per_migration=True,
        # SQLite's DDL is transactional on the migration connection (see the docstring)
        transactional_ddl=True if sqlite else None,
        on_version_apply=_foreign_keys_hold if sqlite else (),
    )


def _foreign_keys_hold(*, ctx: MigrationContext, step: Any, **_: Any) -> None:
    assert ctx.connection is not None
    violations = foreign_key_violations(ctx.connection)
    if violations:
        raise StoreError(
            f"after migration {step.up_revision_id}, rows of the store refer to missing rows "
            f"({'; '.join(violations)}): the migration was rolled back; `riskmon db check` "
            f"lists such rows"
        )


def run_migrations_online() -> None:
    outside = config.attributes.get("connection")
    if outside is not None:
        _configure(outside)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = (
        config.get_main_option("sqlalchemy.url")
        or os.environ.get("RISKMON_STORE_URL")
        or DEFAULT_STORE_URL
    )
    engine = store_engine(url, poolclass=pool.NullPool)
    with migration_connection(engine) as connection:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


def run_migrations_offline() -> None:
    url = (
        config.get_main_option("sqlalchemy.url")
        or os.environ.get("RISKMON_STORE_URL")
        or DEFAULT_STORE_URL
    )
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
