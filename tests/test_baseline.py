"""Freezing a baseline: bins, distributions and headline figures, checked against the
metric functions on the raw loans."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from riskmon.baseline import baseline_table, freeze, frozen_bins
from riskmon.cli import cli
from riskmon.collect import Source
from riskmon.metrics import (
    CountTable,
    fit_binning,
    information_value,
    ks_statistic,
    roc_auc,
)
from riskmon.plan import DateWindow
from riskmon.records import SCORE, SCORE_RANKING
from riskmon.store import MetricStore

from .collect.loans import load, loan_frame, model_config

WINDOW = DateWindow(dt.date(2024, 12, 15), dt.date(2024, 12, 31))


@pytest.fixture
def loans(tmp_path: Path) -> tuple[str, pd.DataFrame]:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    frame = loan_frame(seed=21, n=8000)
    load(url, frame)
    return url, frame


def _development(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["score_date"].map(WINDOW.__contains__)]


def test_freeze_fits_bins_like_fit_binning_on_the_raw_loans(
    loans: tuple[str, pd.DataFrame], store: MetricStore
) -> None:
    url, frame = loans
    model = model_config(url)
    with Source(model) as source:
        frozen = freeze(model, source, store)
    dev = _development(frame)
    bins = frozen_bins(frozen)
    assert frozen.version == 1
    assert frozen.n_rows == len(dev)
    assert frozen.n_bads == int((dev["bad"] == 1).sum())
    assert bins.binnings[SCORE] == fit_binning(dev["pd_score"], kind="numeric", n_bins=10)
    assert bins.binnings["income"] == fit_binning(dev["income"], kind="numeric", n_bins=10)
    region = fit_binning(dev["region"].astype(object), kind="categorical")
    assert bins.binnings["region"].levels == region.levels
    assert bins.ranking_grid is None  # rounded scores: few distinct values
    assert bins.score_top == dev["pd_score"].max()


def test_freeze_stores_figures_equal_to_the_array_functions(
    loans: tuple[str, pd.DataFrame], store: MetricStore
) -> None:
    url, frame = loans
    model = model_config(url)
    with Source(model) as source:
        frozen = freeze(model, source, store)
    dev = _development(frame)
    labeled = dev[dev["bad"].notna()]
    y, s, w = labeled["bad"].to_numpy(int), labeled["pd_score"].to_numpy(), labeled["exposure"]
    auc = frozen.figure("auc")
    assert auc is not None
    assert auc.value == pytest.approx(float(roc_auc(y, s, sample_weight=w)), abs=1e-12)
    assert auc.params["ci_low"] < auc.value < auc.params["ci_high"]
    ks = frozen.figure("ks")
    assert ks is not None
    assert ks.value == pytest.approx(float(ks_statistic(y, s, sample_weight=w)), abs=1e-12)
    gini = frozen.figure("gini")
    assert gini is not None
    assert gini.value == pytest.approx(2 * auc.value - 1, abs=1e-12)
    income_iv = frozen.figure("iv", "income")
    assert income_iv is not None
    binning = frozen_bins(frozen).binnings["income"]
    expected_iv = information_value(labeled["income"], y, binning=binning, sample_weight=w)
    assert income_iv.value == pytest.approx(float(expected_iv), abs=1e-12)
    assert income_iv.params["band"] == expected_iv.band
    web = frozen.figure("auc", segment="channel=web")
    web_rows = labeled[labeled["channel"] == "web"]
    assert web is not None
    expected_web = roc_auc(
        web_rows["bad"].to_numpy(int), web_rows["pd_score"], sample_weight=web_rows["exposure"]
    )
    assert web.value == pytest.approx(float(expected_web), abs=1e-12)


def test_baseline_distributions_cover_every_loan_including_unlabeled(
    loans: tuple[str, pd.DataFrame], store: MetricStore
) -> None:
    url, frame = loans
    model = model_config(url)
    with Source(model) as source:
        frozen = freeze(model, source, store)
    dev = _development(frame)
    binning = frozen_bins(frozen).binnings["income"]
    expected = CountTable.from_bins(
        binning.assign(dev["income"]), binning, sample_weight=dev["exposure"]
    )
    assert baseline_table(frozen, "income").equals(expected, rtol=1e-12)
    bins = frozen.variables["income"].bins
    assert sum(b.share or 0 for b in bins if b.segment == "") == pytest.approx(1.0)
    missing = next(b for b in bins if b.segment == "" and b.label == "missing")
    assert missing.n_total == int(dev["income"].isna().sum())
    assert {b.segment for b in bins} >= {"", "channel=web", "channel=branch", "channel IS NULL"}


def test_a_refreeze_makes_a_new_version_and_keeps_the_old(
    loans: tuple[str, pd.DataFrame], store: MetricStore
) -> None:
    url, _ = loans
    model = model_config(url)
    with Source(model) as source:
        first = freeze(model, source, store)
        second = freeze(model_config(url, bins={"score": 5}), source, store)
    assert (first.version, second.version) == (1, 2)
    latest = store.latest_baseline("retail_pd")
    assert latest is not None
    assert latest.id == second.id
    old = store.baseline(first.id)
    assert old is not None
    assert len(frozen_bins(old).binnings[SCORE].edges) > len(
        frozen_bins(latest).binnings[SCORE].edges
    )


def test_a_continuous_score_is_ranked_on_a_grid_within_its_bound(
    tmp_path: Path, store: MetricStore
) -> None:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    frame = loan_frame(seed=8, n=8000)
    rng = np.random.default_rng(8)
    frame["pd_score"] = rng.beta(2, 8, len(frame)) + 0.05 * frame["bad"].fillna(0).to_numpy(float)
    load(url, frame)
    model = model_config(url, bins={"max_distinct_scores": 100, "score_grid": 200})
    with Source(model) as source:
        frozen = freeze(model, source, store)
    assert frozen.variables[SCORE_RANKING].kind == "score_grid"
    auc = frozen.figure("auc")
    assert auc is not None
    assert auc.value is not None
    assert auc.params["score_grouping"] == "grid of 200 cells"
    labeled = _development(frame).dropna(subset=["bad"])
    exact = float(
        roc_auc(
            labeled["bad"].to_numpy(int), labeled["pd_score"], sample_weight=labeled["exposure"]
        )
    )
    assert 0 < auc.params["auc_error_bound"] < 0.01
    assert abs(auc.value - exact) <= auc.params["auc_error_bound"]


def test_a_baseline_without_bads_keeps_figures_as_not_available(
    tmp_path: Path, store: MetricStore
) -> None:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    frame = loan_frame(seed=2, n=3000)
    frame["bad"] = pd.array(np.zeros(len(frame), dtype=int), dtype="Int64")
    load(url, frame)
    model = model_config(url)
    with Source(model) as source:
        frozen = freeze(model, source, store)
    auc = frozen.figure("auc")
    assert auc is not None
    assert auc.value is None
    assert auc.reason
    assert "bad" in auc.reason.lower()
    assert frozen.figure("iv", "income") is not None
    assert frozen.figure("iv", "income").value is None  # type: ignore[union-attr]


def test_cli_freeze_and_show(loans: tuple[str, pd.DataFrame], tmp_path: Path) -> None:
    url, _ = loans
    config = {
        "store": {"url": f"sqlite:///{tmp_path / 'store.db'}"},
        "models": [model_config(url).model_dump(mode="json", by_alias=True)],
    }
    path = tmp_path / "riskmon.yaml"
    path.write_text(yaml.safe_dump(config))
    runner = CliRunner()
    refused = runner.invoke(cli, ["-c", str(path), "baseline", "freeze"])
    assert refused.exit_code == 4  # the store cannot be used: not migrated
    assert "riskmon db upgrade" in refused.output
    assert runner.invoke(cli, ["-c", str(path), "db", "upgrade"]).exit_code == 0
    frozen = runner.invoke(cli, ["-c", str(path), "baseline", "freeze", "retail_pd"])
    assert frozen.exit_code == 0, frozen.output
    assert "retail_pd: baseline version 1 frozen on 2024-12-15 to 2024-12-31" in frozen.output
    shown = runner.invoke(cli, ["-c", str(path), "baseline", "show", "retail_pd"])
    assert shown.exit_code == 0, shown.output
    assert "retail_pd baseline version 1" in shown.output
    assert "iv(income) = " in shown.output
    unknown = runner.invoke(cli, ["-c", str(path), "baseline", "show", "nope"])
    assert unknown.exit_code == 2
    assert "no model named 'nope'" in unknown.output


def test_every_source_database_freezes_the_same_baseline(
    database: tuple[str, str], tmp_path: Path, store: MetricStore
) -> None:
    _, url = database
    frame = loan_frame(seed=21, n=4000)
    load(url, frame)
    reference_url = f"sqlite:///{tmp_path / 'reference.db'}"
    load(reference_url, frame)
    model = model_config(url)
    with Source(model) as source:
        frozen = freeze(model, source, store)
    reference_model = model_config(reference_url, name="reference")
    with Source(reference_model) as source:
        reference = freeze(reference_model, source, store)
    assert frozen_bins(frozen) == frozen_bins(reference)
    for figure in reference.figures:
        got = frozen.figure(figure.name, figure.variable, figure.segment)
        assert got is not None, figure
        assert got.value == pytest.approx(figure.value, abs=1e-12, nan_ok=True), figure
    for name, variable in reference.variables.items():
        got_bins = frozen.variables[name].bins
        assert [(b.segment, b.label, b.n_total, b.n_bads) for b in got_bins] == [
            (b.segment, b.label, b.n_total, b.n_bads) for b in variable.bins
        ], name
        assert [b.total for b in got_bins] == pytest.approx([b.total for b in variable.bins])


def test_show_lists_the_score_and_the_characteristics_only(
    loans: tuple[str, pd.DataFrame], tmp_path: Path
) -> None:
    url, _ = loans
    # a challenger, a master scale and a cut-off: each freezes a table of riskmon's own
    model = model_config(
        url,
        challengers=[{"column": "income", "name": "alt"}],
        calibration={"grades": [0.05, 0.1, 0.2], "cutoff": 0.3},
    )
    path = tmp_path / "riskmon.yaml"
    store = {"url": f"sqlite:///{tmp_path / 'store.db'}"}
    path.write_text(
        yaml.safe_dump({"store": store, "models": [model.model_dump(mode="json", by_alias=True)]})
    )
    runner = CliRunner()
    assert runner.invoke(cli, ["-c", str(path), "db", "upgrade"]).exit_code == 0
    frozen = runner.invoke(cli, ["-c", str(path), "baseline", "freeze"])
    assert frozen.exit_code == 0, frozen.output
    stored = MetricStore.open(store["url"])
    try:
        baseline = stored.latest_baseline("retail_pd")
        assert baseline is not None
        kept = set(baseline.variables)
    finally:
        stored.engine.dispose()
    # the baseline holds them all, riskmon's own tables included
    assert {"score_ranking", "challenger_grid", "challenger:alt", "pd_grade", "score_cutoff"} < kept
    shown = runner.invoke(cli, ["-c", str(path), "baseline", "show", "retail_pd"])
    assert shown.exit_code == 0, shown.output
    listed = [
        line.split(":")[0].strip() for line in shown.output.splitlines() if line.endswith(" bins")
    ]
    assert listed == ["score", *(c.name for c in model.characteristics)]


def test_the_reserved_names_but_the_score_are_internal() -> None:
    from riskmon.config._models import RESERVED_VARIABLES
    from riskmon.records import SCORE, challenger_variable, is_internal_variable

    assert {n for n in RESERVED_VARIABLES if is_internal_variable(n)} == RESERVED_VARIABLES - {
        SCORE
    }
    assert is_internal_variable(challenger_variable("alt"))
    assert is_internal_variable("migration")
    assert is_internal_variable("_anything")
    assert not is_internal_variable("income")
