"""Passwords are masked wherever a URL or DSN may be quoted, and known secrets wherever they
appear."""

from __future__ import annotations

import logging
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import riskmon.redact
from riskmon.config import parse_config
from riskmon.redact import (
    MASK,
    RedactingFilter,
    database_url,
    mask_url,
    redact,
    register_secret,
    split_password,
)


@pytest.fixture(autouse=True)
def _no_known_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests start from no registered secret (other tests' configurations register
    theirs in the same process), and leave none behind."""
    monkeypatch.setattr(riskmon.redact, "_known", set())
    monkeypatch.setattr(riskmon.redact, "_pattern", None)


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
        ("notified email:risk@example.com", "notified email:risk@example.com"),
        ("mailto:risk:team@example.com", "mailto:risk:team@example.com"),
        ("postgresql://u:pa/ss@host/db", "postgresql://u:***@host/db"),
        (
            "postgresql+psycopg://risk:p@ssW0rd@host/loans",
            "postgresql+psycopg://risk:***@host/loans",
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


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("postgresql+psycopg://risk:p@ssW0rd@host/loans", "p@ssW0rd"),
        ("postgresql://u:pa/ss@host/db", "pa/ss"),
        ("postgresql://u:a b:c#d?e@host:5432/db?sslmode=require", "a b:c#d?e"),
        ("postgresql://u:p%40ss@h/db", "p%40ss"),
        ("postgresql://u@h/db", None),
        ("sqlite:////var/lib/riskmon.db", None),
    ],
)
def test_the_password_is_everything_to_the_last_at(url: str, password: str | None) -> None:
    rest, found = split_password(url)
    assert found == password
    if password is not None:
        assert password not in rest
        assert mask_url(url) == url.replace(f":{password}@", f":{MASK}@")


def test_sqlalchemy_gets_the_password_as_a_field_and_the_right_host() -> None:
    url = database_url("postgresql+psycopg://risk:p@ss/w rd%21@db.example:5433/loans?a=b")
    assert (url.username, url.password) == ("risk", "p@ss/w rd!")
    assert (url.host, url.port) == ("db.example", 5433)
    assert (url.database, dict(url.query)) == ("loans", {"a": "b"})


def test_configured_secrets_are_masked_wherever_they_appear() -> None:
    parse_config(
        {
            "smtp": {"password": "smtp secret with spaces"},
            "store": {"url": "postgresql://risk:store pass@db/riskmon"},
            "models": [],
        },
        source="test",
    )
    text = "auth failed for 'smtp secret with spaces'; tried store pass, then store%20pass"
    assert redact(text) == f"auth failed for '{MASK}'; tried {MASK}, then {MASK}"


def test_short_values_are_not_masked_everywhere() -> None:
    register_secret("ab")
    assert redact("a table") == "a table"
    assert redact("postgresql://u:ab@h/db") == "postgresql://u:***@h/db"


@given(st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=4))
def test_a_registered_secret_never_survives_redaction(secret: str) -> None:
    register_secret(secret)
    for text in (secret, f"x{secret}y", f"'{secret}' and {secret}", f"//u:{secret}@h"):
        assert secret not in redact(text)


def test_tracebacks_in_log_records_are_redacted() -> None:
    register_secret("tr4ceback-secret")
    logger = logging.getLogger("riskmon.test.traceback")
    handler_filter = RedactingFilter()
    try:
        raise RuntimeError("login tr4ceback-secret refused")
    except RuntimeError:
        record = logger.makeRecord(logger.name, logging.ERROR, __file__, 1, "x", None, None)
        record.exc_info = sys.exc_info()
    handler_filter.filter(record)
    assert record.exc_text is not None
    assert "tr4ceback-secret" not in logging.Formatter().format(record)
