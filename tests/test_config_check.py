"""`riskmon config check --connect`: the store and every source, checked read-only, one line
each; and source queries that end in a ``;`` and a comment."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from riskmon.cli import cli
from riskmon.collect import Source
from riskmon.collect.source import one_statement
from riskmon.errors import ConfigError, SourceError, StoreError

from .collect.loans import load, loan_frame, model_config


def _model(name: str, url: str, **changes: Any) -> dict[str, Any]:
    document = model_config(url).model_dump(mode="json", by_alias=True, exclude_none=True)
    return {**document, "name": name, **changes}


def _check(config: Path, *args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["-c", str(config), "config", "check", *args])
    return result.exit_code, result.output.splitlines()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def deployment(tmp_path: Path, postgres_url: str) -> Path:
    """A migrated store and four models: on SQLite, on PostgreSQL, through a query, and one
    whose characteristic column does not exist."""
    sqlite = f"sqlite:///{tmp_path / 'loans.db'}"
    load(sqlite, loan_frame(seed=2, n=300))
    load(postgres_url, loan_frame(seed=2, n=300))
    wrong = model_config(sqlite).model_dump(mode="json", by_alias=True)["characteristics"]
    wrong[0]["column"] = "incomee"
    query = {"url": sqlite, "query": "SELECT * FROM loans WHERE loan_id >= 0; -- every loan\n"}
    document = {
        "store": {"url": "sqlite:///riskmon.db"},
        "models": [
            _model("on_sqlite", sqlite),
            _model("on_postgres", postgres_url),
            _model("by_query", sqlite, source=query),
            _model("mistyped", sqlite, characteristics=wrong),
        ],
    }
    path = tmp_path / "riskmon.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    assert CliRunner().invoke(cli, ["-c", str(path), "db", "upgrade"]).exit_code == 0
    return path


@pytest.mark.postgres
def test_connect_checks_the_store_and_every_source_per_model(
    deployment: Path, tmp_path: Path
) -> None:
    before = _digest(tmp_path / "loans.db")
    code, lines = _check(deployment, "--connect")
    assert code == SourceError.exit_code != 0, lines
    checks = lines[lines.index(next(x for x in lines if x.startswith("store: connected"))) :]
    assert checks[1:] == [
        "model on_sqlite: source connected, table loans has all 9 columns",
        "model on_postgres: source connected, table loans has all 9 columns",
        "model by_query: source connected, query has all 9 columns",
        "model mistyped: source FAILED: model 'mistyped', column 'incomee' "
        "(characteristics[0]): not found in the source (it has: bad, channel, exposure, grade, "
        "income, loan_id, pd_score, region, score_date)",
        "riskmon: error: 1 of 5 connection checks failed",
    ]
    assert _digest(tmp_path / "loans.db") == before  # read, never written


def test_without_connect_nothing_is_opened(tmp_path: Path) -> None:
    missing = tmp_path / "loans.db"
    document = {
        "store": {"url": "sqlite:///store.db"},
        "models": [_model("m", "sqlite:///loans.db")],
    }
    config = tmp_path / "riskmon.yaml"
    config.write_text(yaml.safe_dump(document))
    code, lines = _check(config)
    assert code == 0, lines
    assert not any("connected" in line or "FAILED" in line for line in lines)
    assert not missing.exists()
    assert not (tmp_path / "store.db").exists()


def test_connect_reports_a_missing_store_and_source_without_creating_them(tmp_path: Path) -> None:
    document = {
        "store": {"url": "sqlite:///store.db"},
        "models": [_model("m", "sqlite:///loans.db")],
    }
    config = tmp_path / "riskmon.yaml"
    config.write_text(yaml.safe_dump(document))
    code, lines = _check(config, "--connect")
    assert code == StoreError.exit_code != 0
    store, source = (tmp_path / "store.db"), (tmp_path / "loans.db")
    assert f"store: FAILED: metric store sqlite:///{store}: the file {store} does not exist" in (
        "\n".join(lines)
    )
    assert f"model m: source FAILED: model 'm': cannot use source URL sqlite:///{source}" in (
        "\n".join(lines)
    )
    assert lines[-1] == "riskmon: error: 2 of 2 connection checks failed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["riskmon.yaml"]


@pytest.mark.parametrize(
    ("query", "statement"),
    [
        ("SELECT * FROM loans;", "SELECT * FROM loans"),
        ("SELECT * FROM loans; -- all of them", "SELECT * FROM loans"),
        ("SELECT * FROM loans ; /* all */ ;\n-- twice\n", "SELECT * FROM loans "),
        ("SELECT * FROM loans -- no semicolon", "SELECT * FROM loans -- no semicolon"),
        ("SELECT 'a;b' AS x FROM loans;", "SELECT 'a;b' AS x FROM loans"),
        ("SELECT 'it''s; fine' AS x", "SELECT 'it''s; fine' AS x"),
        ('SELECT 1 AS "semi;colon"', 'SELECT 1 AS "semi;colon"'),
        ("SELECT 1; DELETE FROM loans", None),
        ("SELECT 1; -- c\nDELETE FROM loans", None),
        ("SELECT 'x'';'; DROP TABLE loans; --'", None),
    ],
)
def test_one_statement_and_what_may_follow_it(query: str, statement: str | None) -> None:
    assert one_statement(query) == statement


def test_a_query_ending_in_a_semicolon_and_a_comment_is_read(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, loan_frame(seed=4, n=200))
    source = {"url": url, "query": "SELECT * FROM loans -- all\n; -- the end"}
    with Source(model_config(url, source=source)) as reader:
        assert {c.name for c in reader.check_columns().columns} >= {"pd_score", "bad"}
    two = {"url": url, "query": "SELECT * FROM loans; SELECT 1"}
    with (
        Source(model_config(url, source=two)) as reader,
        pytest.raises(SourceError, match="must be one SELECT"),
    ):
        reader.check_columns()


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n   # and another\n"])
def test_an_empty_file_fails_naming_it(tmp_path: Path, text: str) -> None:
    config = tmp_path / "riskmon.yaml"
    config.write_text(text)
    code, lines = _check(config)
    assert code == ConfigError.exit_code == 2, lines
    expected = (
        f"riskmon: error: {config}: the file is empty: expected a mapping with at least "
        "`models` (config/riskmon.example.yaml documents every key)"
    )
    assert lines == [expected]


def test_check_echoes_every_setting_that_changes_a_run(tmp_path: Path) -> None:
    plain = _model("plain", "sqlite:///loans.db")
    plain["columns"].pop("weight")
    full = _model(
        "full",
        "sqlite:///loans.db",
        challengers=[{"column": "pd_new", "name": "new_pd"}, "pd_old"],
        calibration={
            "points_to_pd": {"points": 600, "odds": 11, "pdo": 37},
            "grades": [0.02, 0.1],
            "default_correlation": 0.03,
            "cutoff": 560,
            "costs": {"false_accept": 5, "false_decline": 1},
        },
        rating={"migration": True, "horizon": "6 months", "min_rerated": 50},
        thresholds={"consecutive": 3},
    )
    config = tmp_path / "riskmon.yaml"
    config.write_text(yaml.safe_dump({"models": [plain, full]}))
    code, lines = _check(config)
    assert code == 0, lines
    first, second = lines.index("model plain:"), lines.index("model full:")
    plain_lines, full_lines = lines[first:second], lines[second:]

    def line(lines: list[str], head: str) -> str:
        (found,) = [x for x in lines if x.startswith(f"  {head}: ")]
        return found.removeprefix(f"  {head}: ")

    assert "weight: none" in line(plain_lines, "score")
    assert "weight: exposure" in line(full_lines, "score")
    assert line(plain_lines, "challengers") == "none"
    assert line(full_lines, "challengers") == "new_pd (column pd_new), pd_old"
    assert line(plain_lines, "calibration").startswith("on when the score is a PD; PD the score")
    assert line(full_lines, "calibration") == (
        "on; PD from points (600 points at 11:1 odds, 37 points to double); grades: master "
        "scale, PD upper edges 0.02, 0.1; default correlation 0.03, confidence 0.99"
    )
    assert line(plain_lines, "cut-off") == "none"
    assert line(full_lines, "cut-off") == "560 (costs: a bad accepted 5, a good declined 1)"
    assert line(plain_lines, "rating migration") == "off"
    assert line(full_lines, "rating migration") == (
        "on, over 6 months, judged from 50 re-rated obligors"
    )
    assert "consecutive: 1 " in line(plain_lines, "thresholds")
    assert "consecutive: 3 " in line(full_lines, "thresholds")
