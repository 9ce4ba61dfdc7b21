"""The configuration of a model's source: where its scored loans are read from."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from riskmon.config._base import Strict as _Strict
from riskmon.config._paths import unset_allowed, url_relative_to_config
from riskmon.cron import time_zone
from riskmon.redact import database_url, mask_url

_ENV_REFERENCE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}")


def _database_url(value: str, info: ValidationInfo) -> str:
    from sqlalchemy.exc import ArgumentError

    if unset_allowed(info) and _ENV_REFERENCE.search(value):
        return value  # a source read without its variables: never opened, so never parsed
    try:
        database_url(value)  # registers the password as a secret first
    except (ArgumentError, ValueError):
        raise ValueError(
            f"expected a SQLAlchemy database URL such as "
            f"'postgresql+psycopg://user@host/db', got {mask_url(value)!r}"
        ) from None
    return value


#: a SQLAlchemy URL; a relative SQLite or DuckDB file is relative to the configuration file
DatabaseURL = Annotated[str, AfterValidator(_database_url), AfterValidator(url_relative_to_config)]


class Pin(_Strict):
    """A Delta table read as of one version (the latest when the run starts, or a given one),
    or as of one time (``source.pin``; ``pin: latest`` reads as ``{latest: true}``)."""

    latest: bool = False
    version: int | None = Field(default=None, ge=0)
    timestamp: dt.datetime | None = None

    @model_validator(mode="after")
    def _one(self) -> Pin:
        given = [self.latest, self.version is not None, self.timestamp is not None]
        if sum(given) != 1:
            raise ValueError("expected 'latest', or exactly one of 'version' or 'timestamp'")
        return self


class SourceConfig(_Strict):
    """Where a model's scored loans are read from: a table, or a read-only query."""

    url: DatabaseURL
    table: str | None = None
    schema_: str | None = Field(default=None, alias="schema")
    query: str | None = None
    statement_timeout_seconds: float = Field(default=600.0, gt=0)
    #: riskmon's own wall-clock limit on connecting and on each statement, beside the server's
    #: statement timeout: past it the statement is cancelled where the driver can, its
    #: connection abandoned and the run fails (a server that stopped answering never ends a
    #: statement itself); unset, statement_timeout_seconds + 60 (:attr:`read_deadline`)
    read_deadline_seconds: float | None = Field(default=None, gt=0)
    #: the session time zone riskmon reads in (PostgreSQL, MySQL/MariaDB): a score date stored
    #: with a time zone falls into the window of its date in this zone, whatever the server's
    #: or the login's default
    time_zone: str = "UTC"
    #: count the loans repeating an id and score date (one more GROUP BY on the two; its cost in
    #: benchmarks/collect.md)
    count_duplicate_ids: bool = True
    #: read a Delta table (Spark, Databricks) as of one version for the whole run: "latest"
    #: (the version current when the run starts, recorded with it), a version or a time
    pin: Pin | None = None
    #: keep each score day's sums in the metric store and read, each run, only the days not
    #: summed before or not settled yet; false, every run reads its windows whole
    incremental: bool = True
    #: a day settles this many days after it (a cohort's day: after its outcome was due);
    #: until then a run reads it again, for late or corrected rows
    restatement_days: int = Field(default=7, ge=0)
    _unset_variables: tuple[str, ...] = PrivateAttr(default=())

    @field_validator("pin", mode="before")
    @classmethod
    def _latest(cls, value: Any) -> Any:
        return {"latest": True} if value == "latest" else value

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            time_zone(value)
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        return value

    @property
    def read_deadline(self) -> float:
        """Seconds riskmon waits for the source: ``read_deadline_seconds``, by default a
        minute past ``statement_timeout_seconds``, so that the server's own limit, which ends
        a statement cleanly, comes first."""
        if self.read_deadline_seconds is not None:
            return self.read_deadline_seconds
        return self.statement_timeout_seconds + 60.0

    @property
    def unset_variables(self) -> tuple[str, ...]:
        """Environment variables the source refers to that were unset when the configuration
        was read for a command that needs no source (see ``load_config(need_sources=...)``)."""
        return self._unset_variables

    @model_validator(mode="after")
    def _table_or_query(self) -> SourceConfig:
        if (self.table is None) == (self.query is None):
            raise ValueError("expected exactly one of 'table' or 'query'")
        if self.query is not None and self.schema_ is not None:
            raise ValueError("'schema' goes with 'table', not with 'query'")
        if self.query is not None and self.pin is not None:
            raise ValueError("'pin' goes with 'table' (a Delta table), not with 'query'")
        return self
