"""Weights whose sums overflow a double fail the run naming the weight column and the range,
instead of a NaN deep in a figure (``cannot convert float NaN to integer``) or a run that
passes with figures built on infinite sums. SQLite and DuckDB sum to inf, which riskmon
refuses; PostgreSQL and MariaDB refuse the overflowing SUM themselves ("value out of range"),
which fails the run with the database's own words."""

from __future__ import annotations

from pathlib import Path

import pytest

from riskmon.run import run_model

from ..run.legal_data import AS_OF, Features, book, model
from .books import fresh_store, write_loans

#: engines whose SUM of doubles raises on overflow (an error of the query, from the database)
DATABASE_REFUSES = {"postgresql", "mysql"}


@pytest.mark.parametrize("strategy", ["stream", "auto"])
@pytest.mark.parametrize(
    ("heavy", "weight", "formula"),
    [
        # two weights that sum past 1.8e308: Σw is infinite
        (2, 1e308, "Σw "),
        # three weights whose squares do (Σw², the calibration's effective sample size)
        (3, 1e200, "Σw² "),
    ],
)
def test_weights_whose_sums_overflow_fail_the_run_naming_the_column(
    tmp_path: Path,
    database: tuple[str, str],
    strategy: str,
    heavy: int,
    weight: float,
    formula: str,
) -> None:
    dialect, url = database
    loans = book()
    loans["exposure"] = loans["exposure"].astype(float)
    loans.loc[loans.index[:heavy], "exposure"] = weight
    write_loans(url, loans)
    store = fresh_store(tmp_path)
    outcome = run_model(
        model(url, Features(weights=True)),
        AS_OF,
        store=store,
        strategy=strategy,  # type: ignore[arg-type]
    )
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert "NaN" not in outcome.error
    if dialect in DATABASE_REFUSES:
        assert "out of range" in outcome.error
        return
    assert "column 'exposure' (columns.weight)" in outcome.error
    assert f"sum {formula}" in outcome.error
    assert "±1.8e+308" in outcome.error
    # the first run freezes the baseline: it reads the development window, whose loans the
    # baseline population counts too (a copy of its rows, not read again)
    assert "development population" in outcome.error
    (stored,) = store.runs("legal")
    assert stored.status == "failed"
    assert stored.error == outcome.error


def test_large_weights_whose_sums_stay_finite_still_run(tmp_path: Path) -> None:
    loans = book()
    loans["exposure"] = loans["exposure"].astype(float)
    loans.loc[loans.index[:40], "exposure"] = 1e100
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    write_loans(url, loans)
    outcome = run_model(model(url, Features(weights=True)), AS_OF, store=fresh_store(tmp_path))
    assert outcome.status == "succeeded", outcome.error
