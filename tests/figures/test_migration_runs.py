"""Rating migrations in nightly runs: the stored matrix, bandwidths, share within one grade and
stability test equal the ECB's formulas computed here, obligor by obligor, with pandas; a rating
system whose obligors start jumping grades turns RED against its baseline, a steady one does not;
too few re-rated obligors are NOT_EVALUABLE; the report draws the matrix."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from riskmon.config import ModelConfig
from riskmon.records import CURRENT, Status
from riskmon.report import render_run_report
from riskmon.run import run_model

from .books import book_model, fresh_store, report_config, write_loans

EDGES = [0.01, 0.02, 0.04, 0.08, 0.16]
AS_OF = dt.date(2025, 3, 31)
#: from this month on the ``pd_jumpy`` obligors move far more between months
JUMPY_FROM = dt.date(2024, 4, 1)


def _book(seed: int, n_obligors: int = 1500) -> pd.DataFrame:
    """Obligors re-scored on the 15th of every month from 2022-06 to 2025-03; each one's PD
    wanders in logit space. ``pd_steady`` keeps the same volatility throughout, ``pd_jumpy``
    moves five times as much from :data:`JUMPY_FROM`. A few obligors enter late, leave early."""
    rng = np.random.default_rng(seed)
    months = pd.date_range("2022-06-15", "2025-03-15", freq="MS") + pd.Timedelta(days=14)
    rows = []
    level = rng.normal(-3.6, 1.0, n_obligors)
    jumpy = level.copy()
    first = rng.integers(0, 6, n_obligors) * (rng.random(n_obligors) < 0.1)
    last = len(months) - 1 - rng.integers(0, 6, n_obligors) * (rng.random(n_obligors) < 0.1)
    for m, month in enumerate(months):
        step = rng.normal(0, 0.12, n_obligors)
        level = level + step
        factor = 5.0 if month.date() >= JUMPY_FROM else 1.0
        jumpy = jumpy + step * factor
        live = (m >= first) & (m <= last)
        pd_steady = 1 / (1 + np.exp(-level))
        pd_jumpy = 1 / (1 + np.exp(-jumpy))
        rows.append(
            pd.DataFrame(
                {
                    "obligor_id": np.arange(n_obligors)[live],
                    "score_date": month.date(),
                    "pd_steady": np.round(pd_steady[live], 6),
                    "pd_jumpy": np.round(pd_jumpy[live], 6),
                    "default_12m": (rng.random(int(live.sum())) < pd_steady[live]).astype(int),
                    "segment": np.where(np.arange(n_obligors)[live] % 3 == 0, "sme", "retail"),
                    "exposure": np.round(rng.gamma(2.0, 5000.0, int(live.sum())), 2),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


@pytest.fixture(scope="module")
def book_url(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, pd.DataFrame]:
    url = f"sqlite:///{tmp_path_factory.mktemp('migration') / 'book.db'}"
    book = _book(seed=5)
    write_loans(url, book)
    return url, book


def _model(url: str, score: str, **extra: Any) -> ModelConfig:
    columns = {
        "id": "obligor_id",
        "score_date": "score_date",
        "score": score,
        "label": "default_12m",
        "weight": "exposure",
        "segments": ["segment"],
    }
    model: dict[str, Any] = {
        "columns": columns,
        "calibration": {"grades": EDGES},
        "rating": {"migration": True},
        "baseline": {"start": "2023-07-01", "end": "2023-12-31"},
    }
    return book_model(url, **(model | extra))


def _grades(frame: pd.DataFrame, score: str) -> pd.Series:
    """Grade 1..K of each row, by pandas."""
    cut = pd.cut(frame[score], [-np.inf, *EDGES, np.inf], right=True, labels=False)
    return cut.astype(int) + 1


def _matrix(book: pd.DataFrame, score: str, start: tuple[str, str], end: tuple[str, str]) -> Any:
    """The migration matrix between two monthly snapshots, and the obligors that defaulted,
    straight from the rows."""

    def snapshot(window: tuple[str, str]) -> pd.DataFrame:
        lo, hi = (dt.date.fromisoformat(d) for d in window)
        part = book[book["score_date"].map(lambda d: lo <= d <= hi)]
        return part.assign(grade=_grades(part, score)).set_index("obligor_id")

    then, now = snapshot(start), snapshot(end)
    alive = then[then["default_12m"] == 0]
    both = alive[["grade"]].join(now[["grade"]].rename(columns={"grade": "grade_now"}), how="inner")
    k = len(EDGES) + 1
    matrix = np.zeros((k, k))
    for a, b in zip(both["grade"], both["grade_now"], strict=True):
        matrix[a - 1, b - 1] += 1
    return matrix, int((then["default_12m"] == 1).sum())


def _mwb(n: np.ndarray) -> tuple[float, float]:
    """The ECB's upper and lower MWB, written out term by term."""
    k = n.shape[0]
    up_num = up_den = low_num = low_den = 0.0
    for i in range(1, k + 1):
        reach = max(abs(i - k), abs(i - 1))
        for j in range(1, k + 1):
            if j > i:
                up_num += (j - i) * n[i - 1, j - 1]
                up_den += reach * n[i - 1, j - 1]
            if j < i:
                low_num += (i - j) * n[i - 1, j - 1]
                low_den += reach * n[i - 1, j - 1]
    return up_num / up_den, low_num / low_den


@pytest.mark.parametrize("score", ["pd_steady", "pd_jumpy"])
def test_stored_figures_match_the_ecb_formulas_on_the_obligors(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path, score: str
) -> None:
    url, book = book_url
    store = fresh_store(tmp_path)
    outcome = run_model(_model(url, score), AS_OF, store=store)
    assert outcome.ok, outcome.error
    got = {f.name: f for f in outcome.figures if f.name.startswith("migration_") and not f.segment}
    matrix, defaulted = _matrix(
        book, score, ("2024-03-01", "2024-03-31"), ("2025-03-01", "2025-03-31")
    )
    assert got["migration_rerated"].value == matrix.sum()
    assert got["migration_rerated"].params["defaulted"] == defaulted
    assert got["migration_rerated"].params["then"] == "2024-03-01 to 2024-03-31"
    assert got["migration_rerated"].params["now"] == "2025-03-01 to 2025-03-31"
    upper, lower = _mwb(matrix)
    assert got["migration_mwb_upper"].value == pytest.approx(upper, rel=1e-12)
    assert got["migration_mwb_lower"].value == pytest.approx(lower, rel=1e-12)
    rows, cols = np.indices(matrix.shape)
    within = matrix[np.abs(rows - cols) <= 1].sum() / matrix.sum()
    assert got["migration_within_one"].value == pytest.approx(within, rel=1e-12)
    # the baseline's: December 2023 against December 2022
    base, _ = _matrix(book, score, ("2022-12-01", "2022-12-31"), ("2023-12-01", "2023-12-31"))
    assert got["migration_mwb_upper"].params["baseline"] == pytest.approx(_mwb(base)[0], rel=1e-12)
    # the stability test, cell by cell: z of the ECB's formula, p = Φ(z), Bonferroni over cells
    cells = got["migration_stability_p"].params["cells"]
    shares = matrix / matrix.sum(axis=1, keepdims=True)
    for cell in cells:
        i, j = cell["from"] - 1, cell["to"] - 1
        q = shares[i, j - 1] if j > i else shares[i, j + 1]
        p = shares[i, j]
        z = (q - p) / math.sqrt((p * (1 - p) + q * (1 - q) + 2 * p * q) / matrix[i].sum())
        assert cell["z"] == pytest.approx(z, rel=1e-9)
        assert cell["p"] == pytest.approx(stats.norm.cdf(z), rel=1e-9)
    smallest = min(c["p"] for c in cells)
    assert got["migration_stability_p"].value == pytest.approx(min(1, smallest * len(cells)))
    # the matrix's cells are stored with their row shares, per segment too
    stored = [b for b in store.bins(outcome.run_id or 0) if b.variable == "migration"]
    whole = {(b.extra["row"], b.extra["col"]): b.n_total for b in stored if not b.segment}
    k = matrix.shape[0]
    assert {c: n for c, n in whole.items() if c[0] < k and c[1] < k and n} == {
        (i, j): int(matrix[i, j]) for i in range(k) for j in range(k) if matrix[i, j]
    }
    assert any(b.segment == "segment=sme" for b in stored)
    # the alerts: the steady system is GREEN, the one whose obligors jump grades is RED
    bandwidth = next(a for a in outcome.alerts if a.rule == "migration_bandwidth")
    change = max(
        abs(upper - _mwb(base)[0]) / _mwb(base)[0], abs(lower - _mwb(base)[1]) / _mwb(base)[1]
    )
    assert bandwidth.value == pytest.approx(change, rel=1e-9)
    expected = Status.RED if change >= 0.5 else Status.AMBER if change >= 0.25 else Status.GREEN
    assert bandwidth.status == expected
    assert bandwidth.status == (Status.GREEN if score == "pd_steady" else Status.RED)


def test_too_few_rerated_obligors_are_not_evaluable_and_the_report_draws_the_matrix(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    store = fresh_store(tmp_path)
    model = _model(url, "pd_steady", rating={"migration": True, "min_rerated": 100_000})
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    rules = {a.rule: a for a in outcome.alerts if a.rule.startswith("migration_")}
    assert set(rules) == {"migration_bandwidth", "migration_stability"}
    for alert in rules.values():
        assert alert.status == Status.NOT_EVALUABLE
        assert "rating.min_rerated: 100000" in alert.message
    config = report_config(store, model, tmp_path)
    html = render_run_report(config, store, "m", AS_OF).read_text()
    assert 'id="migration"' in html
    assert "Migrations over 12 months" in html
    assert html.count('class="cell') >= (len(EDGES) + 1) ** 2


def test_a_model_without_migrations_has_no_migration_figures(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = book_url
    outcome = run_model(_model(url, "pd_steady", rating={}), AS_OF, store=fresh_store(tmp_path))
    assert outcome.ok, outcome.error
    assert not [f for f in outcome.figures if f.name.startswith("migration_")]
    assert not [a for a in outcome.alerts if a.rule.startswith("migration_")]


def test_a_horizon_shorter_than_the_window_is_refused(book_url: tuple[str, pd.DataFrame]) -> None:
    from riskmon.errors import ConfigError

    url, _ = book_url
    with pytest.raises(ConfigError, match=r"rating.horizon: expected at least the stability"):
        _model(url, "pd_steady", rating={"migration": True, "horizon": "2 weeks"})
    assert CURRENT == "current"


def test_the_heat_map_outlines_the_cells_the_rule_finds_by_their_adjusted_p(
    book_url: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    from ..report.htmltree import parse

    url, _ = book_url
    store = fresh_store(tmp_path)
    model = _model(url, "pd_jumpy")
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    (stability,) = [
        f for f in outcome.figures if f.name == "migration_stability_p" and not f.segment
    ]
    cells = stability.params["cells"]
    level = model.thresholds.migration_stability.amber
    # Bonferroni over the cells tested, as the rule's own p (its smallest) is adjusted
    adjusted = {(c["from"], c["to"]) for c in cells if min(1.0, c["p"] * len(cells)) < level}
    unadjusted = {(c["from"], c["to"]) for c in cells if c["p"] < level}
    assert adjusted  # this book has a cell the rule finds...
    assert adjusted != unadjusted  # ...and cells significant only unadjusted
    page = parse(
        render_run_report(report_config(store, model, tmp_path), store, "m", AS_OF).read_text()
    )
    section = page.get("section", id="migration")
    outlined = set()
    for rect in section.iter("rect"):
        if "flagged" in rect.classes():
            start, end = rect.get("title").text().split(":")[0].split(" → ")
            outlined.add((int(start), int(end)))
    assert outlined == adjusted
    listed = {
        (int(row.get("th").text()), int(row.get("td").text()))
        for row in section.get("table", class_="grid flagged-cells").iter("tr")
        if "flagged" in row.classes()
    }
    assert listed == adjusted
    legend = section.get("span", class_="muted legend").text()
    assert f"adjusted p (Bonferroni over the {len(cells)} cells tested) is below 0.05" in legend
