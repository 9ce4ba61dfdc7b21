"""Runs on legal but degenerate books that used to fail: a baseline whose every loan has the
same score. Each figure that cannot be computed is not available with its reason."""

from __future__ import annotations

from pathlib import Path

from riskmon.records import CURRENT
from riskmon.run import run_model

from ..run.legal_data import AS_OF, Features, book, model
from .books import fresh_store, write_loans


def test_a_baseline_of_one_score_has_one_grade_and_no_concentration(tmp_path: Path) -> None:
    """Every baseline loan has the same PD: the score's baseline bins are one grade, over which
    no concentration is measured (HI divides by ln K = 0)."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    write_loans(url, book({"baseline": "equal_pds"}))
    outcome = run_model(model(url, Features(weights=True)), AS_OF, store=fresh_store(tmp_path))
    assert outcome.ok, outcome.error
    rating = {f.name: f for f in outcome.figures if f.name.startswith("rating_")}
    assert set(rating) == {
        "rating_herfindahl",
        "rating_concentration_p",
        "rating_shift_p",
        "rating_herfindahl_exposure",
    }
    for figure in rating.values():
        assert figure.population == CURRENT
        assert figure.value is None
        assert figure.reason == "one grade only: a concentration is measured over 2 grades or more"
