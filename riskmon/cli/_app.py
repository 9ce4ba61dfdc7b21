"""What the commands share: the application object, the metric store, errors and number display.

Cheap to import (click and the standard library): ``riskmon --help`` imports every command
module, and each imports the rest of riskmon only when its command runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import click

from riskmon.heap import set_aside_imports

if TYPE_CHECKING:
    from riskmon.config import RiskmonConfig
    from riskmon.store import MetricStore

#: the environment variable naming the configuration file; riskmon.config.CONFIG_ENV_VAR,
#: written out so that the CLI starts without importing the configuration model
CONFIG_ENV_VAR = "RISKMON_CONFIG"


class _CliError(click.ClickException):
    """A one-line error with a chosen exit code."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares a class default

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"riskmon: error: {self.format_message()}", err=True, file=file)


def asks_for_json(args: Sequence[str]) -> bool:
    """Whether a command line asks for ``--format json`` (read before click parses it, so
    that a usage error is answered in JSON too)."""
    for i, arg in enumerate(args):
        if arg == "--format=json" or (arg == "--format" and args[i + 1 : i + 2] == ["json"]):
            return True
    return False


def echo_json_error(message: str, exit_code: int) -> None:
    """The JSON document a failed ``--format json`` command prints on stdout."""
    click.echo(json.dumps({"error": message, "exit_code": exit_code}, indent=2))


@dataclass
class _App:
    """What the commands share: where the configuration is, loaded on first use."""

    config_path: str | None
    _configs: dict[bool, RiskmonConfig] = field(default_factory=dict, init=False)

    def config(self, *, required: bool = True, sources: bool = True) -> RiskmonConfig:
        """The validated configuration.

        With ``required`` false, a missing *default* config file (no --config, no
        $RISKMON_CONFIG) means the defaults: an embedded SQLite store and no models. With
        ``sources`` false (commands that read the metric store only), a source may refer to
        environment variables that are not set: its credentials are not needed.

        A command has imported what it needs once it has read its configuration: the imports
        are then set aside from the garbage collector's walks (:mod:`riskmon.heap`).
        """
        try:
            return self._config(required=required, sources=sources)
        finally:
            set_aside_imports()

    def _config(self, *, required: bool, sources: bool) -> RiskmonConfig:
        from riskmon.config import RiskmonConfig, load_config, resolve_config_path

        if not sources and True in self._configs:
            return self._configs[True]  # already read with its sources: nothing is missing
        if sources not in self._configs:
            path = resolve_config_path(self.config_path)
            implicit = self.config_path is None and CONFIG_ENV_VAR not in os.environ
            if not required and implicit and not path.exists():
                self._configs[sources] = RiskmonConfig()
            else:
                self._configs[sources] = load_config(path, need_sources=sources)
        config = self._configs[sources]
        if config.families:
            from riskmon.figures import load_families

            load_families(config.families)
        return config


@contextmanager
def _store(app: _App) -> Iterator[MetricStore]:
    """The configured metric store, checked to be migrated, closed afterwards."""
    from riskmon.store import MetricStore
    from riskmon.store.engine import opened_store
    from riskmon.store.migrate import check_schema

    with opened_store(app.config(sources=False).store.url) as engine:
        check_schema(engine)
        yield MetricStore(engine)


def _show(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{int(value)}" if float(value).is_integer() and abs(value) >= 1 else f"{value:.4f}"
