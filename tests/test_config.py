"""Configuration: the documented example loads; every mistake names its file and key path."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

from riskmon.config import (
    RiskmonConfig,
    key_path,
    load_config,
    parse_config,
    resolve_config_path,
)
from riskmon.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[1] / "config" / "riskmon.example.yaml"


def _minimal_model(**overrides: Any) -> dict[str, Any]:
    model: dict[str, Any] = {
        "name": "retail_pd",
        "source": {"url": "sqlite:///loans.db", "table": "scored_loans"},
        "columns": {"id": "loan_id", "score_date": "score_date", "score": "pd", "label": "bad"},
        "score_direction": "higher_is_riskier",
        "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
    }
    model.update(overrides)
    return model


def _error(data: Any, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(data, source="riskmon.yaml", env=env or {})
    return str(info.value)


def test_the_documented_example_loads_with_its_defaults() -> None:
    config = load_config(EXAMPLE)
    (model,) = config.models
    # relative paths are the configuration file's neighbours
    assert config.store.url == f"sqlite:///{EXAMPLE.parent / 'riskmon.db'}"
    assert config.store.reports_dir == EXAMPLE.parent / "reports"
    assert model.source.table == "scored_loans"
    assert model.columns.segments == ["channel"]
    assert model.higher_is_riskier
    assert [(c.name, c.kind) for c in model.characteristics] == [
        ("income", "numeric"),
        ("region", "categorical"),
    ]
    assert model.baseline.start == dt.date(2024, 1, 1)
    assert (model.stability_window.count, model.stability_window.unit) == (1, "month")
    assert str(model.performance_window) == "12 months"
    assert model.thresholds.ks == (0.20, 0.75)
    assert (model.thresholds.psi.amber, model.thresholds.psi.red) == (0.10, 0.25)
    assert [c.notify_on for c in model.notify] == ["red", "change"]


def test_every_key_of_the_example_is_documented_by_a_comment() -> None:
    """A key is documented by a comment on its line, a comment block right above it, or by
    its parent's comment naming it."""
    lines = EXAMPLE.read_text().splitlines()
    comment_above: dict[int, str] = {}
    block: list[str] = []
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("#"):
            block.append(stripped)
            continue
        comment_above[number] = " ".join(block)
        block = [] if stripped else block
    key_line = re.compile(r"^(?P<indent>\s*)(?:- )?(?P<key>\w+):")
    parents: list[tuple[int, str]] = []  # (indent, documentation) of enclosing keys
    undocumented = []
    for number, line in enumerate(lines):
        match = key_line.match(line)
        if not match or line.lstrip().startswith("#"):
            continue
        indent, key = len(match["indent"]), match["key"]
        while parents and parents[-1][0] >= indent:
            parents.pop()
        own = comment_above.get(number, "") + (line.split("#", 1)[1] if "#" in line else "")
        inherited = parents[-1][1] if parents else ""
        if not own and key not in inherited:
            undocumented.append(key)
        parents.append((indent, own))
    assert undocumented == []


def test_defaults_fill_everything_optional() -> None:
    config = parse_config({"models": [_minimal_model()]}, source="x.yaml", env={})
    model = config.models[0]
    assert model.bins.score == 10
    assert model.bins.characteristics == 10
    assert str(model.stability_window) == "1 month"
    assert model.schedule is None
    assert model.notify == []
    assert model.characteristics == []
    assert RiskmonConfig().store.url == "sqlite:///riskmon.db"


def test_environment_variables_are_interpolated_with_defaults() -> None:
    source = {"url": "${LOANS}", "table": "t"}
    config = parse_config(
        {"store": {"url": "${STORE:-sqlite:///s.db}"}, "models": [_minimal_model(source=source)]},
        source="x.yaml",
        env={"LOANS": "postgresql://risk:pw@db/loans"},
    )
    assert config.models[0].source.url == "postgresql://risk:pw@db/loans"
    assert config.store.url == "sqlite:///s.db"


def test_an_unset_environment_variable_names_the_key() -> None:
    message = _error({"models": [_minimal_model(source={"url": "${LOANS_DB_URL}", "table": "t"})]})
    assert message == (
        "riskmon.yaml: models[0].source.url: environment variable LOANS_DB_URL is not set "
        "(referenced as ${LOANS_DB_URL})"
    )


def test_missing_score_direction_names_the_key_path() -> None:
    model = _minimal_model()
    del model["score_direction"]
    ok = _minimal_model(name="other")
    message = _error({"models": [ok, model]})
    assert message == "riskmon.yaml: models[1].score_direction: required key is missing"


def test_a_bad_cron_expression_says_what_was_expected() -> None:
    message = _error({"models": [_minimal_model(schedule="0 25 * * *")]})
    assert message.startswith("riskmon.yaml: models[0].schedule: expected a 5-field cron")
    assert "'0 25 * * *'" in message


def test_an_unknown_key_is_an_error() -> None:
    message = _error({"models": [_minimal_model(tresholds={"ks": [0.2, 0.7]})]})
    assert message == "riskmon.yaml: models[0].tresholds: unknown key"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"score_direction": "up"},
            "models[0].score_direction: Input should be 'higher_is_riskier' or 'higher_is_safer'",
        ),
        ({"stability_window": "fortnight"}, "models[0].stability_window: expected a period like"),
        (
            {"baseline": {"start": "2024-06-30", "end": "2024-01-01"}},
            "models[0].baseline: expected end >= start",
        ),
        ({"thresholds": {"ks": [0.8, 0.2]}}, "models[0].thresholds.ks: expected [low, high]"),
        (
            {"thresholds": {"psi": {"amber": 0.3, "red": 0.2}}},
            "models[0].thresholds.psi: expected amber <= red",
        ),
        (
            {"bins": {"score": 1}},
            "models[0].bins.score: Input should be greater than or equal to 2",
        ),
        (
            {"source": {"url": "sqlite:///x.db"}},
            "models[0].source: expected exactly one of 'table' or 'query'",
        ),
        (
            {"notify": [{"email": "risk@x.com", "webhook": "http://h/x"}]},
            "models[0].notify[0]: expected exactly one",
        ),
        ({"name": "retail pd"}, "models[0].name: expected a name of lowercase letters, digits"),
        (
            {"source": {"url": "hive://h/default", "query": "SELECT 1", "pin": "latest"}},
            "models[0].source: 'pin' goes with 'table' (a Delta table), not with 'query'",
        ),
        (
            {"source": {"url": "hive://h/default", "table": "t", "pin": {"version": -1}}},
            "models[0].source.pin.version: Input should be greater than or equal to 0",
        ),
        (
            {"source": {"url": "hive://h/default", "table": "t", "pin": {}}},
            "models[0].source.pin: expected 'latest', or exactly one of 'version' or 'timestamp'",
        ),
    ],
)
def test_invalid_values_name_the_key_path(change: dict[str, Any], expected: str) -> None:
    assert _error({"models": [_minimal_model(**change)]}).startswith(f"riskmon.yaml: {expected}")


def test_duplicate_model_names_are_rejected() -> None:
    message = _error({"models": [_minimal_model(), _minimal_model()]})
    assert message == "riskmon.yaml: models: expected unique model names, got ['retail_pd'] twice"


def test_several_errors_are_all_reported_one_per_line() -> None:
    model = _minimal_model(bins={"score": 0})
    del model["columns"]
    lines = _error({"models": [model]}).splitlines()
    assert lines == [
        "riskmon.yaml: models[0].columns: required key is missing",
        "riskmon.yaml: models[0].bins.score: Input should be greater than or equal to 2",
    ]


def test_a_password_never_appears_in_an_error() -> None:
    source = {"url": "postgresql://risk:hunter2@db", "table": "t", "query": "SELECT 1"}
    message = _error({"models": [_minimal_model(source=source)]})
    assert "hunter2" not in message
    bad_url = {"url": "postgresql//risk:hunter2@db/loans", "table": "t"}
    message = _error({"models": [_minimal_model(source=bad_url)]})
    assert "hunter2" not in message
    assert "models[0].source.url" in message


def test_yaml_syntax_errors_give_the_line(tmp_path: Path) -> None:
    path = tmp_path / "riskmon.yaml"
    path.write_text("models:\n  - name: [unclosed\n")
    with pytest.raises(ConfigError, match=r"riskmon.yaml: invalid YAML at line 3"):
        load_config(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope.yaml: configuration file not found"):
        load_config(tmp_path / "nope.yaml")


def test_config_path_resolution_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RISKMON_CONFIG", raising=False)
    assert resolve_config_path(None) == Path("riskmon.yaml")
    monkeypatch.setenv("RISKMON_CONFIG", "/etc/riskmon/prod.yaml")
    assert resolve_config_path(None) == Path("/etc/riskmon/prod.yaml")
    assert resolve_config_path("explicit.yaml") == Path("explicit.yaml")


def test_key_path_formatting() -> None:
    assert key_path(("models", 1, "source", "url")) == "models[1].source.url"
    assert key_path(("models", 0, "notify", 2)) == "models[0].notify[2]"
    assert key_path(()) == ""


def test_a_model_is_a_pd_model_unless_it_says_otherwise() -> None:
    config = parse_config({"models": [_minimal_model()]}, source="x.yaml", env={})
    assert config.models[0].kind == "pd"
    # a continuous target (LGD, CCF, EAD) needs its realised value, and has no label
    message = _error({"models": [_minimal_model(kind="lgd")]})
    assert "models[0]: columns.realised: required for a model of kind 'lgd'" in message
    message = _error({"models": [_minimal_model(kind="sev")]})
    assert "models[0].kind" in message
