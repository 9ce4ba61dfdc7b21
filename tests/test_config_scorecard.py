"""The scorecard's own attributes in the configuration: read in their two forms, checked at
load time with errors naming the key path."""

from __future__ import annotations

from typing import Any

import pytest

from riskmon.config import parse_config
from riskmon.errors import ConfigError


def _model(characteristic: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "models": [
            {
                "name": "app",
                "source": {"url": "sqlite:///loans.db", "table": "loans"},
                "columns": {"id": "i", "score_date": "d", "score": "s", "label": "y"},
                "score_direction": "higher_is_safer",
                "baseline": {"start": "2024-01-01", "end": "2024-06-30"},
                "characteristics": [characteristic],
                **extra,
            }
        ]
    }


def _error(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(data, source="riskmon.yaml", env={})
    return str(info.value)


def test_numeric_bins_and_categorical_attributes_give_points_in_bin_order() -> None:
    income = {
        "name": "income",
        "kind": "numeric",
        "bins": [{"upper": 20000, "points": 12}, {"upper": 50000, "points": 20}, {"points": 30}],
        "missing_points": 4,
        "special": [-999, {"value": 0, "points": 2}],
    }
    (model,) = parse_config(_model(income), source="t", env={}).models
    (c,) = model.characteristics
    assert c.edges == (20000.0, 50000.0)
    assert c.special_values == (-999.0, 0.0)
    assert c.attribute_points() == (12, 20, 30, 4, None, 2)
    region = {"name": "region", "kind": "categorical", "attributes": {"north": 20, "other": 5}}
    (model,) = parse_config(_model(region), source="t", env={}).models
    (c,) = model.characteristics
    assert c.level_groups == (("north",),)
    assert c.attribute_points() == (20, None, 5)


@pytest.mark.parametrize(
    ("characteristic", "says"),
    [
        (
            {"kind": "numeric", "bins": [{"upper": 5, "points": 1}, {"upper": 3}]},
            "bins[1].upper: expected edges increasing, got 3 after 5",
        ),
        (
            {"kind": "numeric", "bins": [{"points": 1}, {"upper": 3}]},
            "bins[0].upper: expected an upper edge",
        ),
        (
            {"kind": "categorical", "attributes": [{"levels": ["a"]}, {"levels": ["b", "a"]}]},
            "attributes[1].levels: expected every level once, got 'a' in attributes[0] too",
        ),
        (
            {"kind": "numeric", "bins": [{"upper": 1, "points": "many"}]},
            "characteristics[0].bins[0].points: Input should be a valid number",
        ),
        ({"kind": "categorical", "bins": [{"upper": 1}]}, "bins: expected 'attributes'"),
        (
            {"kind": "numeric", "special": ["none"]},
            "special[0].value: expected a number for a numeric characteristic",
        ),
        (
            {"kind": "categorical", "attributes": {"a": 1}, "special": ["a"]},
            "special: expected values other than the attributes' levels",
        ),
    ],
)
def test_bad_attributes_are_refused_naming_the_key(
    characteristic: dict[str, Any], says: str
) -> None:
    message = _error(_model({"name": "x", **characteristic}))
    assert says in message
    assert "riskmon.yaml: models[0].characteristics[0]" in message


def test_a_decision_column_needs_a_cutoff_and_excludes_an_override_column() -> None:
    columns = {"id": "i", "score_date": "d", "score": "s", "label": "y", "decision": "final"}
    message = _error(_model({"name": "x", "kind": "numeric"}, columns=columns))
    assert "columns.decision: expected calibration.cutoff too" in message
    both = {**columns, "override": "o"}
    assert "at most one of 'decision' or 'override'" in _error(
        _model({"name": "x", "kind": "numeric"}, columns=both)
    )
