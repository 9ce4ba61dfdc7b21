"""A categorical characteristic with tens of thousands of levels (a zip code): the baseline keeps
its 50 most frequent levels and an "other" bin, every engine groups it with at most 50 bound
parameters, the loans of levels the baseline never had are counted and the largest named, and
the report stays small. Every figure is recomputed here from the rows with pandas."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from riskmon.baseline import freeze
from riskmon.collect import Source, Strategy
from riskmon.config import ModelConfig, RiskmonConfig, StoreConfig
from riskmon.records import CURRENT, Status
from riskmon.report import render_run_report
from riskmon.run import run_model

from .books import book_model, fresh_store, write_loans

N_LEVELS = 43_001
N_NEW = 30  # levels of the current month the baseline never had
AS_OF = dt.date(2025, 1, 31)


def _book(seed: int = 3) -> pd.DataFrame:
    """Every zip code once in the development window, then 20,000 more loans drawn from a
    skewed law (a few codes hold most loans); January 2025 draws from the same law, plus 30
    new codes."""
    rng = np.random.default_rng(seed)
    codes = np.array([f"Z{i:05d}" for i in range(N_LEVELS)], dtype=object)
    law = 1.0 / np.arange(1, N_LEVELS + 1) ** 1.1
    law /= law.sum()
    development = np.concatenate([codes, rng.choice(codes, 20_000, p=law)])
    new = np.array([f"N{i:03d}" for i in range(N_NEW)], dtype=object)
    january = np.concatenate(
        [rng.choice(codes, 6_000, p=law), rng.choice(new, 400, p=np.r_[0.5, [0.5 / 29] * 29])]
    )
    cohort = rng.choice(codes, 3_000, p=law)
    frames = []
    for start, days, zips in (
        ("2023-07-01", 184, development),
        ("2024-01-01", 31, cohort),
        ("2025-01-01", 31, january),
    ):
        n = len(zips)
        pd_true = np.clip(rng.beta(1.3, 14.0, n), 1e-4, 0.95)
        offsets = pd.to_timedelta(rng.integers(0, days, n), unit="D")
        frames.append(
            pd.DataFrame(
                {
                    "score_date": (pd.Timestamp(start) + offsets).date,
                    "pd_score": np.round(pd_true, 5),
                    "default_12m": (rng.random(n) < pd_true).astype(int),
                    "zip": zips,
                }
            )
        )
    book = pd.concat(frames, ignore_index=True)
    book["loan_id"] = np.arange(len(book))
    return book


@pytest.fixture(scope="module")
def book() -> pd.DataFrame:
    return _book()


def _model(url: str) -> ModelConfig:
    columns = {"id": "loan_id", "score_date": "score_date", "score": "pd_score"}
    return book_model(
        url,
        columns={**columns, "label": "default_12m"},
        characteristics=[{"name": "zip", "kind": "categorical"}],
    )


def test_a_zip_code_with_43001_levels_runs_on_every_engine(
    database: tuple[str, str], book: pd.DataFrame, tmp_path: Path
) -> None:
    _check_zip_codes(database[1], book, tmp_path, "auto")


def test_a_zip_code_with_43001_levels_streams(book: pd.DataFrame, tmp_path: Path) -> None:
    """The streaming reader bins the same 50 levels; the census is the same statement."""
    _check_zip_codes(f"sqlite:///{tmp_path / 'book.db'}", book, tmp_path, "stream")


def _check_zip_codes(url: str, book: pd.DataFrame, tmp_path: Path, strategy: Strategy) -> None:
    write_loans(url, book)
    store = fresh_store(tmp_path)
    model = _model(url)
    outcome = run_model(model, AS_OF, store=store, strategy=strategy)
    assert outcome.ok, outcome.error

    development = book[book.score_date < dt.date(2024, 1, 1)]
    frequent = development.zip.value_counts()
    top = frequent.sort_index().sort_values(ascending=False, kind="stable").index[:50]
    baseline = store.latest_baseline("m")
    assert baseline is not None
    zip_variable = baseline.variables["zip"]
    assert zip_variable.binning == {
        "kind": "categorical",
        "levels": [[level] for level in sorted(top)],
        "other": True,
    }
    assert len(zip_variable.params["other_levels"]) == N_LEVELS - 50

    current = book[book.score_date >= dt.date(2025, 1, 1)]
    assert outcome.run_id is not None
    stored = store.bins(outcome.run_id)
    bins = {b.label: b for b in stored if b.variable == "zip" and b.population == CURRENT}
    assert set(bins) == {*top, "missing", "other"}  # 53 bins, not 43,003
    in_other = ~current.zip.isin(top)
    assert bins["other"].n_total == int(in_other.sum())

    (unseen,) = [f for f in outcome.figures if f.name == "unseen_rate"]
    new = current[~current.zip.isin(development.zip)]
    assert unseen.value == pytest.approx(len(new) / len(current), rel=1e-12)
    assert unseen.params["n_levels"] == N_NEW
    expected = new.zip.value_counts()
    expected = expected.sort_index().sort_values(ascending=False, kind="stable")
    assert unseen.params["largest"] == [[level, int(n)] for level, n in expected[:10].items()]
    assert unseen.params["other_share"] == pytest.approx(in_other.mean(), rel=1e-12)
    assert unseen.params["other_levels"] == current.zip[in_other].nunique()

    (csi,) = [a for a in outcome.alerts if a.rule == "csi" and a.variable == "zip"]
    assert csi.status in (Status.AMBER, Status.RED)  # 6 % of the loans in new levels

    config = RiskmonConfig(store=StoreConfig(url=str(store.engine.url), reports_dir=tmp_path))
    path = render_run_report(config, store, "m")
    html = path.read_text(encoding="utf-8")
    assert path.stat().st_size < 1_000_000
    assert "30 levels the baseline never had" in html
    assert "<code>N000</code>" in html


def test_a_categorical_with_few_levels_names_its_unseen_ones(
    book: pd.DataFrame, tmp_path: Path
) -> None:
    """Without an "other" bin the unseen bin's levels are named straight from the census."""
    region = np.where(book.zip.str.startswith("N"), "north-new", "south")
    region[book.index % 7 == 0] = "east"
    region[(book.score_date >= dt.date(2025, 1, 1)) & (book.index % 11 == 0)] = "west-new"
    book = book.assign(zip=region)
    url = f"sqlite:///{tmp_path / 'book.db'}"
    write_loans(url, book)
    store = fresh_store(tmp_path)
    model = _model(url)
    with Source(model) as source:
        freeze(model, source, store)
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error
    current = book[book.score_date >= dt.date(2025, 1, 1)]
    (unseen,) = [f for f in outcome.figures if f.name == "unseen_rate"]
    new = current.zip[~current.zip.isin(["east", "south"])]
    assert unseen.value == pytest.approx(len(new) / len(current), rel=1e-12)
    counts = new.value_counts()
    assert unseen.params == {
        "n_levels": 2,
        "largest": [[level, int(counts[level])] for level in counts.index],
    }
