"""Alembic environment of the metric store.

The connection comes from outside when riskmon (or a test) runs a migration
(``config.attributes["connection"]``); the ``alembic`` command line falls back to
``sqlalchemy.url`` in alembic.ini, then to ``$RISKMON_STORE_URL``, then to riskmon's default.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection, create_engine, pool

from riskmon.config import DEFAULT_STORE_URL
from riskmon.store.models import Base

config = context.config
target_metadata = Base.metadata


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        # SQLite cannot ALTER most things in place; batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        include_object=_include_object,
    )


def _include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    # A table in the database that the models do not know belongs to another component
    # sharing the database: not riskmon's to create or drop (migration 0005 drops the one
    # table riskmon's scheduler once kept there, by name).
    return not (type_ == "table" and reflected and compare_to is None)


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
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()


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
