"""What a validator signs beside the figures, as the report, the index and the commands show
it: reviews and their history, the threshold register, the configuration's changes since the
previous run, the configuration fingerprint per run."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from riskmon.cli import cli
from riskmon.config import RiskmonConfig
from riskmon.figures import CATALOG
from riskmon.records import Status
from riskmon.report import render_index, render_run_report
from riskmon.run import run_model
from riskmon.store import MetricStore

from .conftest import AS_OF
from .htmltree import Element, parse

FEB, MAR = AS_OF
DOCUMENTED_PSI = {
    "amber": 0.1,
    "red": 0.2,
    "rationale": "tighter than the industry's 0.25: the book is small",
    "source": "model policy MRM-12 §4",
    "approved": {"by": "Model Risk Committee", "on": "2025-01-15"},
}


def _written(config: RiskmonConfig, folder: Path) -> str:
    path = folder / "riskmon.yaml"
    path.write_text(yaml.safe_dump(config.model_dump(mode="json", by_alias=True)))
    return str(path)


def _riskmon(path: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--config", path, *args])
    assert result.exit_code == 0, result.output
    return result.output


def _page(config: RiskmonConfig, store: MetricStore, as_of: dt.date) -> Element:
    path = render_run_report(config, store, "retail_pd", as_of)
    return parse(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_reviews_show_in_the_report_and_the_index_newest_first(
    real_config: RiskmonConfig, real_runs: MetricStore, tmp_path: Path
) -> None:
    path = _written(real_config, tmp_path)
    # the RED runs without a review, read here from the alerts themselves
    red = [
        run.as_of
        for run in real_runs.runs("retail_pd")
        if Status.worst(a.status for a in real_runs.alerts(run.id)) == Status.RED
    ]
    listed = _riskmon(path, "reviews")
    assert [line.split()[1] for line in listed.splitlines() if "RED" in line] == [
        str(d) for d in red
    ]
    review = ["review", "retail_pd", "--as-of", str(MAR)]
    out = _riskmon(
        path,
        *review,
        "--decision",
        "action-required",
        "--by",
        "A. Val",
        "--assessment",
        "3",
        "--note",
        "recalibrate",
    )
    assert "review 1 by A. Val stored (action-required, assessment 3 – major deficiencies" in out
    _riskmon(path, *review, "--decision", "accepted", "--by", "B. Val")
    assert str(MAR) not in _riskmon(path, "reviews")
    section = _page(real_config, real_runs, MAR).get("section", id="evidence")
    latest = section.get("p", class_="review").text()
    assert "Latest review: accepted by B. Val" in latest
    rows = list(section.get("table", class_="reviews").get("tbody").iter("tr"))
    assert [r.get("td", data_label="By").text() for r in rows] == ["B. Val", "A. Val"]
    assert "superseded" in rows[1].get("td", data_label="Decision").text()
    assert rows[1].get("td", data_label="Assessment").text() == "3 – major deficiencies"
    index = parse(render_index(real_config, real_runs).read_text(encoding="utf-8"))
    line = index.get("li", data_as_of=str(MAR)).text()
    assert "reviewed: accepted by B. Val" in line
    assert "2 reviews" in line
    unreviewed = index.get("li", data_as_of=str(FEB)).text()
    assert ("not reviewed" in unreviewed) == (FEB in red)
    # a bad decision is a usage error naming the option
    result = CliRunner().invoke(cli, ["--config", path, *review, "--decision", "ok", "--by", "A"])
    assert result.exit_code == 2
    assert "--decision" in result.output
    assert len(real_runs.reviews()) == 2


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_the_register_lists_every_applied_rule_and_the_threshold_change_shows(
    real_config: RiskmonConfig, store: MetricStore, tmp_path: Path
) -> None:
    model = real_config.models[0]
    assert run_model(model, FEB, store=store).ok
    data = model.model_dump(mode="json", by_alias=True)
    data["thresholds"]["psi"] = DOCUMENTED_PSI
    changed = type(model).model_validate(data)
    config = real_config.model_copy(update={"models": [changed]})
    assert run_model(changed, MAR, store=store).ok

    first = _page(config, store, FEB).get("section", id="evidence")
    assert "No earlier run of this model stored its configuration" in first.text()
    page = _page(config, store, MAR)
    changes = {
        li.attrs["data-key"]: li.text() for li in page.get("ul", class_="config-changes").iter("li")
    }
    assert changes["thresholds.psi.red"] == "thresholds.psi.red: 0.25 → 0.2"
    assert changes["thresholds.psi.approved"].startswith("thresholds.psi.approved: null → {")
    assert set(changes) == {
        "thresholds.psi.red",
        "thresholds.psi.rationale",
        "thresholds.psi.source",
        "thresholds.psi.approved",
    }, changes
    applied = {a.rule for a in store.alerts(store.run("retail_pd", MAR).id)}  # type: ignore[union-attr]
    rows = {
        tr.attrs["data-rule"]: tr
        for tr in page.get("section", id="appendix").get("table", class_="thresholds").iter("tr")
        if "data-rule" in tr.attrs
    }
    assert set(rows) == applied
    psi = rows.pop("psi")
    assert psi.attrs["data-register"] == "documented"
    assert psi.get("td", data_label="Source").text() == "model policy MRM-12 §4"
    assert psi.get("td", data_label="Approved").text() == "by Model Risk Committee on 2025-01-15"
    assert psi.get("td", data_label="Levels").text() == "amber ≥ 0.1, red ≥ 0.2"
    assert {tr.attrs["data-register"] for tr in rows.values()} == {"default"}

    path = _written(config, tmp_path)
    register = _riskmon(path, "thresholds", "retail_pd")
    rules = [line.split()[0] for line in register.splitlines() if not line.startswith(" ")]
    assert rules == [r.name for r in CATALOG.for_kind("pd").rules]
    assert (
        "psi  (thresholds.psi)\n  levels: amber ≥ 0.1, red ≥ 0.2\n  rationale: tighter" in register
    )
    assert "csi  (thresholds.csi)\n  levels: amber ≥ 0.1, red ≥ 0.25\n  status: default" in register

    history = json.loads(
        _riskmon(path, "history", "retail_pd", "--fingerprint", "--format", "json")
    )
    fingerprints = [row["config_fingerprint"] for row in history]
    assert fingerprints == [store.run("retail_pd", d).config_hash for d in (FEB, MAR)]  # type: ignore[union-attr]
    assert fingerprints[0] != fingerprints[1]


def test_the_register_documents_plain_levels_and_the_fingerprint_ignores_documentation(
    real_config: RiskmonConfig,
) -> None:
    from riskmon.config import model_fingerprint

    model = real_config.models[0]
    data = model.model_dump(mode="json", by_alias=True)
    data["thresholds"]["ks"] = {"low": 0.2, "high": 0.75, "source": "ECB instructions 2.5.3.1"}
    data["thresholds"]["csi"] = {"rationale": "the industry's usual bands"}
    documented = type(model).model_validate(data)
    assert documented.thresholds.ks == (0.2, 0.75)
    assert model_fingerprint(documented) == model_fingerprint(model)
    from riskmon.report import threshold_register

    entry = next(e for e in threshold_register(documented) if e.rule == "ks_band")
    assert (entry.key, entry.source, entry.status) == (
        "thresholds.ks",
        "ECB instructions 2.5.3.1",
        "documented",
    )
