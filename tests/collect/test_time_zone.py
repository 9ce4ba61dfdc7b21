"""Score dates stored with a time zone fall into the window of their date in the source's
``time_zone`` (UTC by default), whatever the login's own default: the same loans in the same
windows on every run, on PostgreSQL and on MariaDB."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from riskmon.collect import CollectRequest, Population, Source, Variable, collect
from riskmon.plan import DateWindow

from .loans import model_config

MARCH = DateWindow(dt.date(2025, 3, 1), dt.date(2025, 3, 31))
#: score (a tag) -> instant, in UTC
ROWS = {
    0.11: "2025-02-28 20:00:00",  # February in UTC, 1 March 05:00 in Tokyo
    0.12: "2025-03-01 00:30:00",  # March in both
    0.13: "2025-03-15 12:00:00",  # March in both
    0.14: "2025-03-31 22:30:00",  # March in UTC, 1 April 07:30 in Tokyo
}


def _load(url: str, column_type: str) -> None:
    engine = create_engine(url)
    with engine.begin() as connection:
        if engine.dialect.name == "mysql":
            connection.execute(text("SET time_zone = '+00:00'"))
        connection.execute(
            text(
                f"CREATE TABLE loans (loan_id INTEGER, score_date {column_type}, "
                "pd_score DOUBLE PRECISION, bad INTEGER, income DOUBLE PRECISION, "
                "region VARCHAR(8), grade INTEGER, channel VARCHAR(8))"
            )
        )
        for i, (score, instant) in enumerate(ROWS.items()):
            stamp = f"{instant}+00:00" if engine.dialect.name == "postgresql" else instant
            connection.execute(
                text("INSERT INTO loans VALUES (:i, :d, :s, NULL, 50.0, 'N', 1, 'web')"),
                {"i": i, "d": stamp, "s": score},
            )
    engine.dispose()


def _scores(url: str, **source: Any) -> list[float]:
    model = model_config(url, weighted=False)
    model = model.model_copy(update={"source": model.source.model_copy(update=source)})
    request = CollectRequest(
        populations=[Population("current", MARCH, labeled=False)],
        variables=[Variable("score_values", "pd_score")],
        score_date="score_date",
        label="bad",
    )
    with Source(model) as source_:
        table = collect(source_, request, strategy="union_all").table("current", "score_values")
    return sorted(float(x) for x in table.labels)


@pytest.mark.postgres
def test_postgresql_reads_in_utc_whatever_the_login_default(postgres_url: str) -> None:
    _load(postgres_url, "TIMESTAMP WITH TIME ZONE")
    tokyo_login = f"{postgres_url}?options=-c%20timezone%3DAsia/Tokyo"
    assert _scores(tokyo_login) == [0.12, 0.13, 0.14]
    assert _scores(tokyo_login, time_zone="Asia/Tokyo") == [0.11, 0.12, 0.13]


@pytest.mark.mariadb
def test_mariadb_reads_in_utc_whatever_the_login_default(mariadb_url: str) -> None:
    _load(mariadb_url, "TIMESTAMP NULL")
    tokyo_login = f"{mariadb_url}?init_command=SET%20time_zone%3D%27%2B09:00%27"
    assert _scores(tokyo_login) == [0.12, 0.13, 0.14]
    assert _scores(tokyo_login, time_zone="UTC") == [0.12, 0.13, 0.14]
