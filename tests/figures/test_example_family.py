"""docs/ARCHITECTURE.md's walk-through "Add a figure family", run: an example family kept
outside riskmon (``tests/figures/score_summary``: one module and one template partial, written
against the public catalog API only) is added to the catalog, a baseline is frozen, a model
runs, its report is rendered and its history read — and its figures, alert, section, summary
line and history column are all there, with figures recomputed here from the loans."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from riskmon.cli import cli
from riskmon.config import RiskmonConfig, StoreConfig
from riskmon.errors import ConfigError
from riskmon.figures import CATALOG
from riskmon.plan import plan_run
from riskmon.records import BASELINE, CURRENT
from riskmon.report import render_run_report
from riskmon.run import run_model
from riskmon.store import MetricStore

from ..collect.loans import load, loan_frame, model_config
from ..report.htmltree import parse
from . import score_summary

AS_OF = dt.date(2025, 3, 31)
FOLDER = Path(__file__).parent


@pytest.fixture
def book(tmp_path: Path) -> tuple[pd.DataFrame, str]:
    frame = loan_frame(seed=5, n=4000, weighted=False)
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    load(url, frame)
    return frame, url


@pytest.fixture
def registered() -> Iterator[None]:
    with CATALOG.registered(score_summary.FAMILY):
        yield


def _moments(frame: pd.DataFrame, start: dt.date, end: dt.date) -> tuple[float, float]:
    scores = frame.loc[frame["score_date"].between(start, end), "pd_score"].to_numpy(float)
    return float(scores.mean()), float(scores.std())


def test_an_example_family_is_frozen_run_judged_reported_and_listed(
    book: tuple[pd.DataFrame, str], store: MetricStore, tmp_path: Path, registered: None
) -> None:
    frame, url = book
    model = model_config(url, weighted=False)
    outcome = run_model(model, AS_OF, store=store)
    assert outcome.ok, outcome.error

    # its figures, recomputed from the loans: the current window's and the baseline's
    plan = plan_run(model, AS_OF)
    mean, sd = _moments(frame, plan.current.start, plan.current.end)
    base_mean, base_sd = _moments(frame, model.baseline.start, model.baseline.end)
    run = store.run(model.name, AS_OF)
    assert run is not None
    stored = {(f.name, f.population, f.segment): f.value for f in store.figures(run.id)}
    assert stored[("score_mean", CURRENT, "")] == pytest.approx(mean, rel=1e-12)
    assert stored[("score_sd", CURRENT, "")] == pytest.approx(sd, rel=1e-12)
    baseline = store.baseline(run.baseline_id) if run.baseline_id is not None else None
    assert baseline is not None
    frozen = {(f.name, f.population, f.segment): f.value for f in baseline.figures}
    assert frozen[("score_mean", BASELINE, "")] == pytest.approx(base_mean, rel=1e-12)
    assert frozen[("score_sd", BASELINE, "")] == pytest.approx(base_sd, rel=1e-12)

    # its rule judged every segment against the baseline, with its declared default level
    alerts = {a.segment: a for a in store.alerts(run.id) if a.rule == "score_shift"}
    assert set(alerts) == {s for (name, _, s) in stored if name == "score_mean"}
    whole = alerts[""]
    assert whole.value == pytest.approx(abs(mean - base_mean) / base_sd, rel=1e-9)
    assert whole.thresholds == {"amber": 0.5}
    assert whole.status == ("AMBER" if whole.value >= 0.5 else "GREEN")

    # its section, table-of-contents link and summary line in the report
    config = RiskmonConfig(store=StoreConfig(url="sqlite://", reports_dir=tmp_path / "reports"))
    config = config.model_copy(update={"models": [model]})
    page = parse(render_run_report(config, store, model.name, AS_OF).read_text(encoding="utf-8"))
    section = page.get("section", id="score-summary")
    assert section.get("h2").text() == "Score summary"
    assert f"{mean:.4f}" in section.get("tr", data_figure="score_mean").text()
    toc = [a.attrs["href"] for a in page.get("nav", class_="toc").iter("a")]
    assert "#score-summary" in toc
    assert page.get("section", id="summary").get("tr", data_figure="score_mean")


def test_the_configuration_adds_a_family_and_sets_its_rules_levels(
    book: tuple[pd.DataFrame, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the command line: ``families`` names the module, ``thresholds.rules`` its
    rule's level, and ``riskmon history`` lists its column."""
    _, url = book
    monkeypatch.syspath_prepend(str(FOLDER))
    model = model_config(url, weighted=False).model_dump(mode="json", by_alias=True)
    model["thresholds"] = {"rules": {"score_shift": {"amber": 0.0}}}  # every shift is AMBER
    path = tmp_path / "riskmon.yaml"
    config = {"store": {"url": "sqlite:///store.db"}, "families": ["score_summary"]}
    path.write_text(yaml.safe_dump(config | {"models": [model]}))
    try:
        runner = CliRunner()
        assert runner.invoke(cli, ["-c", str(path), "db", "upgrade"]).exit_code == 0
        result = runner.invoke(cli, ["-c", str(path), "run", "--as-of", AS_OF.isoformat()])
        assert result.exit_code in (0, 1), result.output  # 1: a RED alert
        result = runner.invoke(cli, ["-c", str(path), "history", "retail_pd", "--format", "json"])
        assert result.exit_code == 0, result.output
        (row,) = json.loads(result.output)
        assert np.isfinite(row["current.score_mean"])
        store = MetricStore.open(f"sqlite:///{tmp_path / 'store.db'}")
        try:
            run = store.run("retail_pd", AS_OF)
            assert run is not None
            shift = [a for a in store.alerts(run.id) if a.rule == "score_shift" and not a.segment]
        finally:
            store.engine.dispose()
        assert [(a.status, a.thresholds) for a in shift] == [("AMBER", {"amber": 0.0})]
    finally:
        CATALOG.unregister("score_summary")
        sys.modules.pop("score_summary", None)


@pytest.mark.parametrize(
    ("families", "says"),
    [
        (["no_such_module_here"], "families[0]: cannot import 'no_such_module_here'"),
        (["json"], "families[0]: module 'json' defines no FAMILY"),
    ],
)
def test_a_family_that_cannot_be_loaded_is_a_configuration_error(
    tmp_path: Path, families: list[str], says: str
) -> None:
    path = tmp_path / "riskmon.yaml"
    path.write_text(yaml.safe_dump({"families": families}))
    result = CliRunner().invoke(cli, ["-c", str(path), "db", "upgrade"])
    assert result.exit_code == 2, result.output
    assert says in result.output


@pytest.mark.parametrize("amber", [0.2, 0.1])  # 0.1: psi's own default, refused all the same
def test_a_level_for_a_rule_with_a_key_of_its_own_is_refused(
    book: tuple[pd.DataFrame, str], store: MetricStore, amber: float
) -> None:
    _, url = book
    model = model_config(url, weighted=False, thresholds={"rules": {"psi": {"amber": amber}}})
    outcome = run_model(model, AS_OF, store=store)
    assert not outcome.ok
    assert "thresholds.rules.psi: rule 'psi' takes its levels from a key of its own" in str(
        outcome.error
    )
    run = store.run(model.name, AS_OF)
    assert run is not None
    assert store.figures(run.id) == []  # refused before anything was computed or stored


def test_a_level_that_is_not_finite_is_refused(book: tuple[pd.DataFrame, str]) -> None:
    _, url = book
    with pytest.raises(ConfigError, match=r"expected finite levels, got score_shift.amber"):
        model_config(url, thresholds={"rules": {"score_shift": {"amber": float("nan")}}})
