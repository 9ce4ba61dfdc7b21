"""Create and migrate the metric store with Alembic, configured in code.

The migration scripts ship inside the package (``riskmon.migrations``), so an installed riskmon
migrates its store without a checkout or an ``alembic.ini``; :mod:`riskmon.shipped` finds them
in a checkout too.
"""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from riskmon.errors import StoreError
from riskmon.redact import mask_url, redact
from riskmon.shipped import shipped_folder
from riskmon.store.engine import sqlite_file


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration for the shipped migrations, bound to ``connection``."""
    config = Config()
    config.set_main_option("script_location", str(shipped_folder("migrations")))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest migration riskmon ships."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, "riskmon ships at least one migration"
    return head


def current_revision(engine: Engine) -> str | None:
    """The store's migration revision (None for an empty database)."""
    with _connect(engine) as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Create or migrate the store's schema up to ``revision``."""
    with _connect(engine) as connection:
        command.upgrade(alembic_config(connection), revision)
        connection.commit()


def downgrade(engine: Engine, revision: str = "base") -> None:
    """Migrate the store's schema down to ``revision`` (``base`` drops every table)."""
    with _connect(engine) as connection:
        command.downgrade(alembic_config(connection), revision)
        connection.commit()


def check_models(engine: Engine) -> None:
    """Raise unless the migrated schema matches the models (``alembic check``)."""
    with _connect(engine) as connection:
        command.check(alembic_config(connection))


def check_schema(engine: Engine) -> None:
    """Raise StoreError unless the store is migrated to the revision this riskmon needs.

    A SQLite store whose file does not exist is not created by the check.
    """
    file = sqlite_file(engine)
    if file is not None and not file.exists():
        raise StoreError(
            f"metric store {mask_url(engine.url.render_as_string(hide_password=False))}: "
            f"the file {file.absolute()} does not exist: run `riskmon db upgrade`"
        )
    current, head = current_revision(engine), head_revision()
    if current != head:
        state = "empty" if current is None else f"at revision {current}"
        raise StoreError(
            f"metric store {mask_url(engine.url.render_as_string(hide_password=False))} is "
            f"{state}, riskmon needs revision {head}: run `riskmon db upgrade`"
        )


def _connect(engine: Engine) -> Connection:
    try:
        return engine.connect()
    except SQLAlchemyError as exc:
        raise StoreError(
            f"cannot connect to the metric store "
            f"{mask_url(engine.url.render_as_string(hide_password=False))}: "
            f"{redact(str(getattr(exc, 'orig', None) or exc)).splitlines()[0]}"
        ) from None
