"""Who hears about a run: notify_on for each value, across a sequence of real stored runs."""

from __future__ import annotations

import datetime as dt
import doctest
import importlib
import logging
from collections.abc import Callable

import pytest

from riskmon.config import NotifyChannel, RiskmonConfig, StoreConfig
from riskmon.notify import FAILED, channel_key, notify_run, should_notify
from riskmon.outcome import RunOutcome
from riskmon.store import MetricStore

from ..collect.loans import model_config
from .conftest import MODEL, HookServer

POLICIES = ("always", "amber", "red", "change")


@pytest.mark.parametrize(
    ("notify_on", "state", "previous", "expected"),
    [
        ("always", "GREEN", "GREEN", True),
        ("always", "NOT_EVALUABLE", None, True),
        ("always", FAILED, FAILED, True),
        ("amber", "GREEN", "RED", False),
        ("amber", "NOT_EVALUABLE", "RED", False),
        ("amber", "AMBER", "AMBER", True),
        ("amber", "RED", "RED", True),
        ("amber", FAILED, FAILED, True),
        ("red", "AMBER", "GREEN", False),
        ("red", "RED", "RED", True),
        ("red", FAILED, "GREEN", False),
        ("change", "GREEN", None, True),
        ("change", "GREEN", "GREEN", False),
        ("change", "RED", "GREEN", True),
        ("change", "GREEN", "RED", True),
        ("change", FAILED, "GREEN", True),
        ("change", FAILED, FAILED, False),
        ("change", "GREEN", FAILED, True),
    ],
)
def test_should_notify(notify_on: str, state: str, previous: str | None, expected: bool) -> None:
    assert should_notify(notify_on, state=state, previous_state=previous) is expected


def test_should_notify_rejects_an_unknown_policy() -> None:
    with pytest.raises(ValueError, match="Expected notify_on in change, amber, red, always"):
        should_notify("sometimes", state="RED", previous_state=None)


def test_channel_keys_are_stable_and_hold_no_secret() -> None:
    url = "https://hooks.slack.com/services/T000/B000/xoxb-s3cr3t-token"
    key = channel_key(NotifyChannel(webhook=url))
    assert key == channel_key(NotifyChannel(webhook=url, notify_on="red"))
    assert key.startswith("webhook:")
    assert len(key) == len("webhook:") + 12
    assert "s3cr3t" not in key
    assert "hooks" not in key
    assert key != channel_key(NotifyChannel(webhook=url + "x"))
    assert channel_key(NotifyChannel(email="Risk@Example.com")) == "email:risk@example.com"


def _setup(server: HookServer) -> RiskmonConfig:
    notify = [{"webhook": server.url(f"/{p}"), "notify_on": p} for p in POLICIES]
    model = model_config("sqlite:///unused.db", notify=notify)
    return RiskmonConfig(store=StoreConfig(), models=[model])


def test_each_policy_across_a_sequence_of_runs(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    hook_server: Callable[..., HookServer],
) -> None:
    server = hook_server()
    config = _setup(server)
    model = config.models[0]
    sequence = [  # as-of date, alert statuses (or a failure), who hears about it
        (dt.date(2025, 1, 31), ("GREEN", "NOT_EVALUABLE"), {"always", "change"}),
        (dt.date(2025, 2, 28), ("GREEN",), {"always"}),
        (dt.date(2025, 3, 31), ("GREEN", "RED", "AMBER"), {"always", "amber", "red", "change"}),
        (dt.date(2025, 4, 30), ("RED",), {"always", "amber", "red"}),
        (dt.date(2025, 5, 31), "source down", {"always", "amber", "change"}),
        (dt.date(2025, 6, 30), "source down", {"always", "amber"}),
        (dt.date(2025, 7, 31), ("GREEN",), {"always", "change"}),
        (dt.date(2025, 8, 31), ("AMBER", "GREEN"), {"always", "amber", "change"}),
        (dt.date(2025, 9, 30), ("NOT_EVALUABLE",), {"always", "change"}),
    ]
    for as_of, statuses, expected in sequence:
        server.requests.clear()
        if isinstance(statuses, str):
            outcome = stored_run(as_of, error=statuses)
        else:
            outcome = stored_run(as_of, statuses)
        attempts = notify_run(config, model, outcome, store)
        heard = {r.path.strip("/") for r in server.requests}
        assert heard == expected, as_of
        assert all(a.ok and not a.late for a in attempts)
        assert {a.channel for a in attempts} == {
            channel_key(c) for c in model.notify if c.notify_on in expected
        }
        if outcome.ok:
            assert outcome.run_id is not None
            states = {a.notify_state for a in store.alerts(outcome.run_id)}
            assert states == {"sent"}


def test_a_run_nobody_hears_about_is_marked_not_needed(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    hook_server: Callable[..., HookServer],
) -> None:
    server = hook_server()
    model = model_config(
        "sqlite:///unused.db", notify=[{"webhook": server.url(), "notify_on": "red"}]
    )
    outcome = stored_run(dt.date(2025, 3, 31), ("GREEN", "AMBER"))
    assert notify_run(RiskmonConfig(models=[model]), model, outcome, store) == []
    assert server.requests == []
    assert outcome.run_id is not None
    assert store.deliveries(outcome.run_id) == []
    assert {a.notify_state for a in store.alerts(outcome.run_id)} == {"not_needed"}


def test_a_skipped_run_notifies_nobody_and_is_logged(
    store: MetricStore, hook_server: Callable[..., HookServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = hook_server()
    model = model_config(
        "sqlite:///unused.db", notify=[{"webhook": server.url(), "notify_on": "always"}]
    )
    outcome = RunOutcome(MODEL, dt.date(2025, 3, 31), "skipped", error="held by host:1")
    with caplog.at_level(logging.INFO, logger="riskmon.notify"):
        assert notify_run(RiskmonConfig(models=[model]), model, outcome, store) == []
    assert server.requests == []
    (record,) = [r for r in caplog.records if r.name == "riskmon.notify"]
    assert record.levelno == logging.INFO
    assert "skipped" in record.getMessage()


@pytest.mark.parametrize(
    ("statuses", "level"),
    [
        (("GREEN",), logging.INFO),
        (("AMBER", "GREEN"), logging.INFO),
        (("NOT_EVALUABLE",), logging.INFO),
        (("RED", "AMBER"), logging.WARNING),
        ("postgresql://risk:s3cret@db/loans is unreachable", logging.WARNING),
    ],
)
def test_every_run_is_logged_at_its_level(
    store: MetricStore,
    stored_run: Callable[..., RunOutcome],
    caplog: pytest.LogCaptureFixture,
    statuses: tuple[str, ...] | str,
    level: int,
) -> None:
    model = model_config("sqlite:///unused.db")
    as_of = dt.date(2025, 3, 31)
    if isinstance(statuses, str):
        outcome = stored_run(as_of, error=statuses)
    else:
        outcome = stored_run(as_of, statuses)
    with caplog.at_level(logging.DEBUG, logger="riskmon.notify"):
        notify_run(RiskmonConfig(models=[model]), model, outcome, store)
    (record,) = [r for r in caplog.records if r.name == "riskmon.notify"]
    assert record.levelno == level
    message = record.getMessage()
    assert f"{MODEL} as of 2025-03-31" in message
    assert "s3cret" not in caplog.text
    if isinstance(statuses, str):
        assert "failed" in message
        assert "risk:***@db" in message


@pytest.mark.parametrize(
    "module", ["riskmon.notify._policy", "riskmon.notify._delivery", "riskmon.notify._message"]
)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0
