"""The configuration reader refuses what only a mistake or an attack writes: alias bombs,
duplicate keys, oversized files, model names that are no plain file name, and command-line
dates out of range. Each is a configuration or usage error (exit 2) naming the cause."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from riskmon.cli import cli
from riskmon.config import load_config, parse_config
from riskmon.config._yaml import MAX_CONFIG_BYTES, MAX_DEPTH, MAX_EXPANDED_NODES
from riskmon.demo import demo_config
from riskmon.errors import EXIT_USAGE, ConfigError
from riskmon.report.render import INDEX
from riskmon.report_files import report_path
from riskmon.store import MetricStore

from .test_config import EXAMPLE, _minimal_model

#: nine levels of nine aliases: 9⁹ (387 million) strings once expanded, 500 bytes on disk
BILLION_LAUGHS = 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9)
)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "riskmon.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _load_error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# --------------------------------------------------------------------------- YAML


def test_an_alias_bomb_is_refused_fast_naming_the_cause(tmp_path: Path) -> None:
    path = _write(tmp_path, BILLION_LAUGHS)
    started = time.perf_counter()
    error = _load_error(path)
    elapsed = time.perf_counter() - started
    assert elapsed < 0.5, f"took {elapsed:.2f} s"
    assert error.path == str(path)
    assert "aliases expand to" in str(error)
    assert f"more than the {MAX_EXPANDED_NODES:,}" in str(error)
    result = _invoke("-c", str(path), "config", "check")
    assert result.exit_code == EXIT_USAGE, result.output
    assert str(path) in result.output
    assert "billion laughs" in result.output


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    error = _load_error(_write(tmp_path, "models: &m [*m]\n"))
    assert "recursive alias" in str(error)
    assert error.key == "models[0]"


def test_aliases_within_bounds_merge_keys_and_interpolation_still_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOANS_TABLE", "scored_loans")
    text = (
        "models:\n"
        "  - &first\n"
        "    name: first_pd\n"
        "    source: &source {url: 'sqlite:///loans.db', table: '${LOANS_TABLE}'}\n"
        "    columns: {id: loan_id, score_date: score_date, score: pd, label: bad}\n"
        "    score_direction: higher_is_riskier\n"
        "    baseline: {start: 2024-01-01, end: 2024-06-30}\n"
        "  - <<: *first\n"
        "    name: second_pd\n"
        "    source: *source\n"
    )
    config = load_config(_write(tmp_path, text))
    assert [m.name for m in config.models] == ["first_pd", "second_pd"]
    assert [m.source.table for m in config.models] == ["scored_loans", "scored_loans"]


def test_nesting_deeper_than_the_bound_is_refused(tmp_path: Path) -> None:
    depth = MAX_DEPTH + 1
    error = _load_error(_write(tmp_path, "models: " + "[" * depth + "]" * depth + "\n"))
    assert f"nested deeper than {MAX_DEPTH} levels" in str(error)


def test_a_duplicate_key_is_refused_with_both_lines_and_its_key_path(tmp_path: Path) -> None:
    text = "scheduler:\n  timezone: UTC\n  catch_up: true\n  timezone: Europe/Paris\nmodels: []\n"
    path = _write(tmp_path, text)
    error = _load_error(path)
    assert error.path == str(path)
    assert error.key == "scheduler.timezone"
    assert "duplicate key 'timezone'" in str(error)
    assert "line 2 and again at line 4" in str(error)
    result = _invoke("-c", str(path), "config", "check")
    assert result.exit_code == EXIT_USAGE, result.output
    assert "scheduler.timezone: duplicate key 'timezone'" in result.output


def test_a_duplicate_key_in_a_flow_mapping_names_both_columns(tmp_path: Path) -> None:
    error = _load_error(_write(tmp_path, "models: [{name: a, name: b}]\n"))
    assert error.key == "models[0].name"
    assert "line 1, column 11 and again at line 1, column 20" in str(error)


def test_an_oversized_file_is_refused_by_its_size(tmp_path: Path) -> None:
    path = _write(tmp_path, "# " + "x" * MAX_CONFIG_BYTES + "\nmodels: []\n")
    error = _load_error(path)
    assert error.path == str(path)
    assert "too large" in str(error)
    assert f"{path.stat().st_size:,} bytes" in str(error)
    result = _invoke("-c", str(path), "config", "check")
    assert result.exit_code == EXIT_USAGE, result.output
    assert "too large" in result.output


def test_a_100_mb_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "riskmon.yaml"
    with path.open("wb") as file:  # sparse: 100 MB long, nothing written
        file.truncate(100 * 1024 * 1024)
    started = time.perf_counter()
    error = _load_error(path)
    assert time.perf_counter() - started < 0.5
    assert "104,857,600 bytes" in str(error)


def test_a_file_not_utf8_is_refused_naming_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "riskmon.yaml"
    path.write_bytes(b"models: []\n# caf\xe9\n")
    assert "expected UTF-8 text, got byte 0xe9" in str(_load_error(path))


def test_the_example_still_loads_and_interpolates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RISKMON_SMTP_PASSWORD", "s3cret-value")
    config = load_config(EXAMPLE)
    assert config.models[0].name == "retail_pd"
    assert config.scheduler.future_slack_days == 1


# --------------------------------------------------------------------------- model names


def _name_error(name: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config({"models": [_minimal_model(name=name)]}, source="riskmon.yaml", env={})
    return str(info.value)


@pytest.mark.parametrize(
    "name", ["retail_pd\n", "index.html", "Retail_PD", "a/b", "..", "", "x" * 101, "pd v2"]
)
def test_a_model_name_outside_the_rule_is_refused(name: str) -> None:
    message = _name_error(name)
    assert "models[0].name" in message
    assert repr(name) in message
    assert "lowercase letters, digits, '_' and '-'" in message


@pytest.mark.parametrize("name", ["index", "con", "nul", "prn", "aux", "com1", "lpt9"])
def test_a_reserved_model_name_is_refused(name: str) -> None:
    message = _name_error(name)
    assert "models[0].name" in message
    assert f"{name!r}, which is reserved" in message


@pytest.mark.parametrize("name", [INDEX, Path(INDEX).stem])
def test_a_model_name_never_takes_the_report_index_path(name: str, tmp_path: Path) -> None:
    # the report writer's paths: <reports_dir>/index.html and <reports_dir>/<name>/<date>.html
    assert report_path(tmp_path, name, dt.date(2025, 1, 31)).parent.name == name
    assert "models[0].name" in _name_error(name)


def test_the_demo_and_example_names_follow_the_rule(tmp_path: Path) -> None:
    names = [m["name"] for m in demo_config(tmp_path)["models"]]
    names += [m["name"] for m in yaml.safe_load(EXAMPLE.read_text())["models"]]
    parsed = parse_config({"models": [_minimal_model(name=n) for n in names]}, source="t", env={})
    assert [m.name for m in parsed.models] == names


# --------------------------------------------------------------------------- dates


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    document: dict[str, Any] = {
        "store": {"url": f"sqlite:///{tmp_path / 'store.db'}"},
        "scheduler": {"future_slack_days": 2},
        "models": [
            _minimal_model(source={"url": f"sqlite:///{tmp_path / 'loans.db'}", "table": "loans"})
        ],
    }
    path = _write(tmp_path, yaml.safe_dump(document))
    assert _invoke("-c", str(path), "db", "upgrade").exit_code == 0
    (tmp_path / "loans.db").touch()
    return path


def _runs(path: Path) -> int:
    url = yaml.safe_load(path.read_text())["store"]["url"]
    store = MetricStore.open(url)
    try:
        return len(store.runs("retail_pd"))
    finally:
        store.engine.dispose()


@pytest.mark.parametrize(
    ("args", "option", "value"),
    [
        (["run", "--as-of", "9999-12-31"], "--as-of", "9999-12-31"),
        (["run", "--as-of", "1899-12-31"], "--as-of", "1899-12-31"),
        (
            ["backfill", "retail_pd", "--from", "2025-01-31", "--to", "9999-12-31"],
            "--to",
            "9999-12-31",
        ),
        (
            ["backfill", "retail_pd", "--from", "0001-01-01", "--to", "2025-01-31"],
            "--from",
            "0001-01-01",
        ),
        (["report", "--as-of", "9999-12-31"], "--as-of", "9999-12-31"),
    ],
)
def test_a_date_out_of_range_is_a_usage_error_and_stores_nothing(
    config_path: Path, args: list[str], option: str, value: str
) -> None:
    result = _invoke("-c", str(config_path), *args)
    assert result.exit_code == EXIT_USAGE, result.output
    assert f"'{option}'" in result.output
    assert repr(value) in result.output
    assert _runs(config_path) == 0


def test_the_latest_date_is_today_plus_the_configured_slack(config_path: Path) -> None:
    today = dt.datetime.now(dt.UTC).date()
    too_late = (today + dt.timedelta(days=3)).isoformat()
    result = _invoke("-c", str(config_path), "run", "--as-of", too_late)
    assert result.exit_code == EXIT_USAGE, result.output
    assert "scheduler.future_slack_days, 2" in result.output
    assert (today + dt.timedelta(days=2)).isoformat() in result.output
    assert _runs(config_path) == 0
    # the last day allowed is taken: the report then finds no run of it
    last = (today + dt.timedelta(days=2)).isoformat()
    result = _invoke("-c", str(config_path), "report", "--as-of", last)
    assert result.exit_code == EXIT_USAGE, result.output
    assert f"no model has a run as of {last}" in result.output
