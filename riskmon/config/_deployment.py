"""The deployment around the models: the metric store, the mail server, notification and
scheduler settings, the whole configuration, and the fingerprints of what it computes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator

from riskmon.config._base import Strict as _Strict
from riskmon.config._base import twice as _twice
from riskmon.config._models import DEFAULT_STORE_URL, ConfigPath, ModelConfig
from riskmon.config._register import without_documentation
from riskmon.config._source import DatabaseURL
from riskmon.cron import time_zone
from riskmon.errors import ConfigError
from riskmon.redact import MASK, database_url, mask_url, redact, register_secret


class StoreConfig(_Strict):
    """Where riskmon keeps its history, and where it writes reports."""

    # the defaults are validated too, so that they are relative to the configuration file
    url: DatabaseURL = Field(default=DEFAULT_STORE_URL, validate_default=True)
    reports_dir: ConfigPath = Field(default=Path("reports"), validate_default=True)
    #: where reports_dir is served, for links in notifications (none: reports are attached)
    reports_url: str | None = None


class SmtpConfig(_Strict):
    """The mail server e-mail notifications go through."""

    host: str = "localhost"
    port: int = Field(default=25, ge=1, le=65535)
    username: str | None = None
    password: str | None = None
    sender: str = "riskmon@localhost"
    starttls: bool = False
    ssl: bool = False
    timeout_seconds: float = Field(default=10.0, gt=0)
    #: larger reports are linked (store.reports_url) or left out, not attached
    max_attachment_bytes: int = Field(default=5_000_000, ge=0)

    @field_validator("password")
    @classmethod
    def _secret(cls, value: str | None) -> str | None:
        register_secret(value)
        return value


class NotificationsConfig(_Strict):
    """How long notifying may take: one delivery, and all of a run's."""

    #: one delivery (a webhook POST, an e-mail) in all: connecting, sending, the answer
    delivery_timeout_seconds: float = Field(default=10.0, gt=0)
    #: all of a run's deliveries, retries of earlier runs' included: the longest notifying
    #: can delay the next model's run; what is left is sent again after the model's next run
    run_timeout_seconds: float = Field(default=30.0, gt=0)


def _timezone(value: str) -> str:
    time_zone(value)
    return value


class SchedulerConfig(_Strict):
    """How `riskmon schedule` runs the models' cron schedules."""

    timezone: Annotated[str, AfterValidator(_timezone)] = "UTC"
    #: a run whose time passed less than this long ago still starts (APScheduler misfire)
    misfire_grace_seconds: int = Field(default=3600, ge=1)
    #: on start, run the as-of dates missed since each model's last successful run
    catch_up: bool = True
    #: at most this many missed dates per model are caught up (the newest ones)
    max_catch_up_runs: int = Field(default=31, ge=0)
    #: how many days after today (in ``timezone``) an as-of date given on the command line may
    #: be: a later one is refused as a mistake, its loans not scored yet (1 allows tomorrow,
    #: for a machine whose clock runs ahead of ``timezone``)
    future_slack_days: int = Field(default=1, ge=0, le=3660)


class RiskmonConfig(_Strict):
    """The whole deployment."""

    # validated when missing too, so that its default paths are relative to the config file
    store: StoreConfig = Field(default={}, validate_default=True)
    smtp: SmtpConfig = SmtpConfig()
    notifications: NotificationsConfig = NotificationsConfig()
    scheduler: SchedulerConfig = SchedulerConfig()
    models: list[ModelConfig] = Field(default_factory=list)
    #: modules of figure families kept outside riskmon, each defining ``FAMILY`` (importable
    #: names, e.g. ``acme_risk.score_summary``): added to riskmon's catalog by every command
    families: list[str] = Field(default_factory=list)

    @field_validator("models")
    @classmethod
    def _unique_models(cls, value: list[ModelConfig]) -> list[ModelConfig]:
        names = [m.name for m in value]
        duplicates = _twice(names)
        if duplicates:
            raise ValueError(f"expected unique model names, got {duplicates} twice")
        return value

    def model(self, name: str) -> ModelConfig:
        """The model called ``name``; a ConfigError listing the known names otherwise."""
        for model in self.models:
            if model.name == name:
                return model
        known = ", ".join(m.name for m in self.models) or "none"
        raise ConfigError(f"no model named {name!r} in the configuration (known: {known})")

    def fingerprint(self) -> str:
        """A hash of what the configuration asks riskmon to compute (no secret in it)."""
        return _digest({"models": [_computed(m) for m in self.models]})


def _computed(model: ModelConfig) -> dict[str, Any]:
    """What of a model changes its figures: everything but notification channels, with the
    source's password removed (so that rotating it changes nothing)."""
    # keys at their defaults are left out, so that a key added later changes no fingerprint
    data = model.model_dump(mode="json", by_alias=True, exclude={"notify"}, exclude_defaults=True)
    data["source"]["url"] = _without_password(model.source.url)
    # the threshold register documents levels: it changes no figure
    if "thresholds" in data:
        data["thresholds"] = without_documentation(data["thresholds"])
        if not data["thresholds"]:  # documentation alone: as if thresholds were not given
            del data["thresholds"]
    return data


def _without_password(url: str) -> str:
    # URL.set() treats None as "unchanged"; the URL is a named tuple, so replace the field
    return database_url(url)._replace(password=None).render_as_string(hide_password=False)


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def model_fingerprint(model: ModelConfig) -> str:
    """A hash of what one model's configuration asks riskmon to compute (no secret in it)."""
    return _digest(_computed(model))


def masked_config(model: ModelConfig) -> dict[str, Any]:
    """One model's whole configuration as JSON, every key at its value (defaults included),
    secrets masked: the source's password, each webhook (its URL is the credential), and any
    registered secret wherever it appears. A run stores it with its provenance."""
    data = model.model_dump(mode="json", by_alias=True)
    data["source"]["url"] = mask_url(model.source.url)
    for channel in data.get("notify", []):
        if channel.get("webhook"):
            channel["webhook"] = MASK
    return dict(_redacted(data))


def _redacted(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _redacted(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_redacted(v) for v in data]
    return redact(data) if isinstance(data, str) else data
