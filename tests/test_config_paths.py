"""Paths in the configuration are relative to its file, whatever folder a command starts in;
commands that only read the metric store need no source credentials."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from riskmon.collect import Source
from riskmon.config import load_config, parse_config
from riskmon.errors import ConfigError, SourceError

from . import forkserver
from .collect.loans import load, loan_frame, model_config

REPO_ROOT = Path(__file__).resolve().parents[1]
#: the model's runs cover these dates (the loans are scored from 2024-12-15 to 2025-04-15)
AS_OF = ("2025-02-28", "2025-03-31")


def _model(url: str, **source: Any) -> dict[str, Any]:
    document = model_config(url, performance_window="2 months").model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    document["source"].update(source)
    return document


def test_relative_paths_and_sqlite_urls_are_relative_to_the_config_file(tmp_path: Path) -> None:
    folder = tmp_path / "etc" / "riskmon"
    document = {
        "store": {"url": "sqlite:///history/riskmon.db", "reports_dir": "html"},
        "models": [
            _model("sqlite:///data/loans.db"),
            {**_model("duckdb:///loans.duckdb?memory_limit=1GB"), "name": "duck"},
            {**_model("sqlite:////srv/loans.db"), "name": "absolute"},
            {**_model("postgresql+psycopg://risk@db/loans"), "name": "server"},
            {**_model("sqlite://"), "name": "memory"},
        ],
    }
    config = parse_config(document, source="riskmon.yaml", env={}, config_dir=folder)
    assert config.store.url == f"sqlite:///{folder / 'history' / 'riskmon.db'}"
    assert config.store.reports_dir == folder / "html"
    urls = [m.source.url for m in config.models]
    assert urls == [
        f"sqlite:///{folder / 'data' / 'loans.db'}",
        f"duckdb:///{folder / 'loans.duckdb'}?memory_limit=1GB",
        "sqlite:////srv/loans.db",
        "postgresql+psycopg://risk@db/loans",
        "sqlite://",
    ]


def test_the_default_store_and_reports_are_beside_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "riskmon.yaml"
    path.parent.mkdir()
    path.write_text("models: []\n")
    config = load_config(path)
    assert config.store.url == f"sqlite:///{path.parent / 'riskmon.db'}"
    assert config.store.reports_dir == path.parent / "reports"


def test_a_home_relative_reports_dir_is_expanded(tmp_path: Path) -> None:
    config = parse_config(
        {"store": {"reports_dir": "~/reports"}}, source="x", env={}, config_dir=tmp_path
    )
    assert config.store.reports_dir == Path.home() / "reports"


def _cli(cwd: Path, config: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    """``python -m riskmon -c CONFIG ARGS`` started in ``cwd``, as cron would start it."""
    environment = {**os.environ, "HOME": str(cwd), **(env or {})}
    environment.pop("RISKMON_CONFIG", None)
    environment.pop("LOANS_PASSWORD", None)
    return forkserver.run(
        [sys.executable, "-m", "riskmon", "-c", str(config), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def test_commands_started_elsewhere_read_and_write_beside_the_config(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    folder, home = tmp_path / "deploy", tmp_path / "home"
    folder.mkdir()
    home.mkdir()
    load(f"sqlite:///{folder / 'loans.db'}", loan_frame(seed=5, n=4000))
    store_url = (
        "sqlite:///riskmon.db"
        if backend == "sqlite"
        else str(request.getfixturevalue("postgres_url"))
    )
    config = folder / "riskmon.yaml"
    document = {
        "store": {"url": store_url, "reports_dir": "reports"},
        "models": [_model("sqlite:///loans.db")],
    }
    config.write_text(yaml.safe_dump(document, sort_keys=False))
    relative = Path("..") / "deploy" / "riskmon.yaml"  # a relative --config works too

    assert _cli(home, relative, "db", "upgrade").returncode == 0
    for as_of in AS_OF:
        result = _cli(home, config, "run", "--as-of", as_of)
        assert result.returncode == 0, result.stdout + result.stderr
    history = _cli(home, relative, "history", "retail_pd", "--format", "csv")
    assert history.returncode == 0, history.stderr
    assert [line.split(",")[0] for line in history.stdout.splitlines()[1:]] == list(AS_OF)
    report = _cli(home, config, "report", "retail_pd")
    assert report.returncode == 0, report.stderr
    assert report.stdout.split() == [
        str(folder / "reports" / "retail_pd" / f"{AS_OF[-1]}.html"),
        str(folder / "reports" / "index.html"),
    ]

    assert sorted(p.name for p in home.iterdir()) == []  # nothing where the commands started
    expected = {"loans.db", "riskmon.yaml", "reports"}
    if backend == "sqlite":
        expected |= {"riskmon.db"}
    assert expected <= {p.name for p in folder.iterdir()}


def test_a_mistyped_sqlite_source_leaves_no_file_behind(tmp_path: Path) -> None:
    typo = tmp_path / "laons.db"
    config = parse_config(
        {"models": [_model("sqlite:///laons.db")]}, source="x", env={}, config_dir=tmp_path
    )
    with pytest.raises(SourceError) as info:
        Source(config.models[0])
    assert str(typo) in str(info.value)
    assert "does not exist" in str(info.value)
    assert not typo.exists()


def test_an_sqlite_source_is_opened_read_only(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=1, n=50))
    with Source(model_config(url)) as source:
        raw = source.engine.raw_connection()
        try:
            cursor = raw.cursor()
            cursor.execute("PRAGMA query_only = OFF")  # the file itself is read-only
            with pytest.raises(sqlite3.OperationalError, match=r"readonly database"):
                cursor.execute("DELETE FROM loans")
        finally:
            raw.close()


# ------------------------------------------------------------------ credentials


def _secret_config(folder: Path) -> Path:
    """A config whose source takes its password from $LOANS_PASSWORD, and a store with runs."""
    load(f"sqlite:///{folder / 'loans.db'}", loan_frame(seed=5, n=4000))
    plain = folder / "plain.yaml"
    document = {"store": {"url": "sqlite:///riskmon.db"}, "models": [_model("sqlite:///loans.db")]}
    plain.write_text(yaml.safe_dump(document))
    return plain


def test_read_only_commands_need_no_source_credentials(tmp_path: Path) -> None:
    plain = _secret_config(tmp_path)
    assert _cli(tmp_path, plain, "db", "upgrade").returncode == 0
    assert _cli(tmp_path, plain, "run", "--as-of", AS_OF[-1]).returncode == 0
    # the same deployment, with its source on a server whose password is in the environment
    secret = tmp_path / "riskmon.yaml"
    document = yaml.safe_load(plain.read_text())
    document["models"][0]["source"]["url"] = "postgresql+psycopg://risk:${LOANS_PASSWORD}@db/x"
    secret.write_text(yaml.safe_dump(document))

    for command in (
        ["history", "retail_pd"],
        ["report", "retail_pd"],
        ["report", "--index-only"],
        ["baseline", "show", "retail_pd"],
        ["db", "current"],
    ):
        result = _cli(tmp_path, secret, *command)
        assert result.returncode == 0, (command, result.stderr)
    page = (tmp_path / "reports" / "retail_pd" / f"{AS_OF[-1]}.html").read_text()
    assert "LOANS_PASSWORD" not in page

    for command in (["run", "--as-of", AS_OF[-1]], ["baseline", "freeze"], ["config", "check"]):
        result = _cli(tmp_path, secret, *command)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert "models[0].source.url: environment variable LOANS_PASSWORD is not set" in (
            result.stderr
        )


def test_a_source_read_without_its_variables_refuses_to_open(tmp_path: Path) -> None:
    model = _model("postgresql+psycopg://risk@db/x")
    model["source"]["url"] = "postgresql+psycopg://risk:${LOANS_PASSWORD}@db/x"
    document = {"models": [model]}
    with pytest.raises(ConfigError, match="LOANS_PASSWORD is not set"):
        parse_config(document, source="x", env={})
    config = parse_config(document, source="x", env={}, need_sources=False)
    (model,) = config.models
    assert model.source.unset_variables == ("LOANS_PASSWORD",)
    with pytest.raises(SourceError, match="LOANS_PASSWORD"):
        Source(model)
    # the store and everything else still need their variables
    store = {"url": "postgresql+psycopg://risk:${STORE_PASSWORD}@db/x"}
    with pytest.raises(ConfigError, match=r"store\.url: environment variable STORE_PASSWORD"):
        parse_config({**document, "store": store}, source="x", env={}, need_sources=False)
