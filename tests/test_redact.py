"""Passwords are masked wherever a URL or DSN may be quoted."""

from __future__ import annotations

import logging

import pytest

from riskmon.redact import RedactingFilter, mask_url, redact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "postgresql+psycopg://risk:s3cret@db:5432/loans",
            "postgresql+psycopg://risk:***@db:5432/loans",
        ),
        (
            "failed: mysql://root:pw@127.0.0.1/x (timeout)",
            "failed: mysql://root:***@127.0.0.1/x (timeout)",
        ),
        ("host=db user=risk password=s3cret dbname=x", "host=db user=risk password=*** dbname=x"),
        ("PWD='a b c';UID=risk", "PWD=***;UID=risk"),
        ("postgresql//risk:s3cret@db/loans", "postgresql//risk:***@db/loans"),
        ("sqlite:///riskmon.db", "sqlite:///riskmon.db"),
        (
            "KS 0.42 at 12:30, notify risk-team@example.com",
            "KS 0.42 at 12:30, notify risk-team@example.com",
        ),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_mask_url_keeps_everything_but_the_password() -> None:
    assert (
        mask_url("postgresql://u:p%40ss@h/db?sslmode=require")
        == "postgresql://u:***@h/db?sslmode=require"
    )
    assert mask_url("sqlite:////var/lib/riskmon.db") == "sqlite:////var/lib/riskmon.db"


def test_log_records_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("riskmon.test")
    logger.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO, logger="riskmon.test"):
        logger.info("connecting to %s", "postgresql://risk:s3cret@db/loans")
    assert caplog.messages == ["connecting to postgresql://risk:***@db/loans"]
