"""Engine profiles of Apache Spark (a Thrift server, through PyHive's ``hive://``), Databricks
SQL and the cloud warehouses (Trino, Snowflake, BigQuery).

Spark is run in riskmon's tests (a Thrift server in ``local[2]`` mode); no Databricks, Trino,
Snowflake or BigQuery server is, so their profiles are only as good as the tests can make them
without one: every statement riskmon writes for them compiles with their SQLAlchemy dialect and
parses with an independent parser of their SQL (``tests/collect/test_warehouse_sql.py``).

None of these engines gives one reading a snapshot: each statement reads the tables as they are
when it starts, so a table written during a collect may be counted differently by its
statements. A Delta table (Spark, Databricks) can be read as of one version
(``source.pin``); otherwise the run records that its reading was not snapshot-isolated.
"""

from __future__ import annotations

import re
from dataclasses import replace

from sqlalchemy import Connection

from riskmon.collect.fingerprint import spark_row_hash
from riskmon.collect.profile import EngineProfile

#: what a time zone name may hold where an engine takes it only as text in the statement
_ZONE = re.compile(r"[A-Za-z0-9_+\-/]+")


def _zone(zone: str) -> str:
    if not _ZONE.fullmatch(zone):
        raise ValueError(f"not a time zone name: {zone!r}")
    return zone


def _seconds(seconds: float) -> int:
    return max(1, int(seconds))


NOT_SNAPSHOT = (
    "not snapshot-isolated: each statement read the table as it was when the statement started"
)


# ---------------------------------------------------------------------- Spark (Thrift server)
#: the message of a Spark error inside the Thrift status PyHive's exception prints
_SPARK_MESSAGE = re.compile(r"errorMessage=(['\"])(?:Error running query: )?(.*?)\1[,)]", re.S)


def _spark_message(text: str) -> str:
    """Spark's own message (``[TABLE_OR_VIEW_NOT_FOUND] The table or view ...``) rather than
    the Thrift status and Java stack trace around it."""
    found = _SPARK_MESSAGE.search(text)
    if found is None:
        return text
    message = found.group(2).replace("\\n", "\n")
    return message.removeprefix("org.apache.spark.sql.AnalysisException: ")


def _spark_guard(connection: Connection, seconds: float) -> None:
    # the Thrift server cancels a statement running longer than this, in this session
    connection.exec_driver_sql(f"SET spark.sql.thriftServer.queryTimeout={_seconds(seconds)}s")


def _spark_time_zone(connection: Connection, zone: str) -> None:
    connection.exec_driver_sql(f"SET TIME ZONE '{_zone(zone)}'")


SPARK = EngineProfile(
    name="spark",
    dialects=frozenset({"hive"}),
    default_shape="packed",
    snapshot=f"Spark SQL, no transactions: {NOT_SNAPSHOT}",
    read_only=False,
    statement_timeout=True,
    grouping_sets=True,
    # Spark compares strings byte by byte, as Python does
    categories_by_text=True,
    guard=_spark_guard,
    session_time_zone=_spark_time_zone,
    time_travel=True,
    # the Thrift server cancels a statement past queryTimeout: "... but found TIMEDOUT"
    timeout_markers=("timedout",),
    error_text=_spark_message,
    row_hash=spark_row_hash,
)


# ---------------------------------------------------------------------- Databricks SQL
def _databricks_guard(connection: Connection, seconds: float) -> None:
    connection.exec_driver_sql(f"SET STATEMENT_TIMEOUT = {_seconds(seconds)}")


# Spark's profile, with the time limit a SQL warehouse takes (only its documented parameters)
DATABRICKS = replace(
    SPARK,
    name="databricks",
    dialects=frozenset({"databricks"}),
    snapshot=f"Databricks SQL: {NOT_SNAPSHOT}",
    guard=_databricks_guard,
    timeout_markers=("statement_timeout", "timedout", "timed out"),
)


# ---------------------------------------------------------------------- Trino
def _trino_guard(connection: Connection, seconds: float) -> None:
    connection.exec_driver_sql(f"SET SESSION query_max_execution_time = '{_seconds(seconds)}s'")


def _trino_time_zone(connection: Connection, zone: str) -> None:
    connection.exec_driver_sql(f"SET TIME ZONE '{_zone(zone)}'")


TRINO = EngineProfile(
    name="trino",
    dialects=frozenset({"trino"}),
    default_shape="packed",
    snapshot=f"Trino: {NOT_SNAPSHOT}",
    statement_timeout=True,
    # GROUPING SETS would group on expressions with positional parameters, which
    # group_by_position does not rewrite; packed is not measured on Trino (no server here)
    grouping_sets=False,
    categories_by_text=True,
    group_by_position=True,
    guard=_trino_guard,
    session_time_zone=_trino_time_zone,
    timeout_markers=("exceeded_time_limit", "maximum execution time"),
)


# ---------------------------------------------------------------------- Snowflake
def _snowflake_guard(connection: Connection, seconds: float) -> None:
    connection.exec_driver_sql(
        f"ALTER SESSION SET STATEMENT_TIMEOUT_IN_SECONDS = {_seconds(seconds)}"
    )


def _snowflake_time_zone(connection: Connection, zone: str) -> None:
    connection.exec_driver_sql(f"ALTER SESSION SET TIMEZONE = '{_zone(zone)}'")


SNOWFLAKE = EngineProfile(
    name="snowflake",
    dialects=frozenset({"snowflake"}),
    default_shape="packed",
    snapshot=f"Snowflake, each statement READ COMMITTED: {NOT_SNAPSHOT}",
    statement_timeout=True,
    grouping_sets=True,
    # the default collation compares text exactly
    categories_by_text=True,
    guard=_snowflake_guard,
    session_time_zone=_snowflake_time_zone,
    timeout_markers=("statement reached its statement or warehouse timeout",),
)


# ---------------------------------------------------------------------- BigQuery
BIGQUERY = EngineProfile(
    name="bigquery",
    dialects=frozenset({"bigquery"}),
    # a query is billed by the bytes of the columns it scans: GROUPING SETS scans them once
    default_shape="grouping_sets",
    snapshot=f"BigQuery: {NOT_SNAPSHOT}",
    grouping_sets=True,
    categories_by_text=True,
)


__all__ = [
    "BIGQUERY",
    "DATABRICKS",
    "NOT_SNAPSHOT",
    "SNOWFLAKE",
    "SPARK",
    "TRINO",
]
