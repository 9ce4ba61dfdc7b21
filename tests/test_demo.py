"""`riskmon demo`: a realistic book, two models, a year of runs, reports and an index."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from riskmon.cli import cli
from riskmon.config import load_config
from riskmon.demo import CATEGORICAL_CHARACTERISTICS, NUMERIC_CHARACTERISTICS
from riskmon.store import MetricStore

from .report.htmltree import parse


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]


@pytest.mark.slow
def test_demo_prints_the_index_and_writes_every_report(demo: tuple[Path, str]) -> None:
    folder, out = demo
    index = folder / "reports" / "index.html"
    assert f"reports: {index}" in out.splitlines()
    assert index.is_file()
    parser = _Links()
    parser.feed(index.read_text())
    linked = {href for href in parser.hrefs if href.endswith(".html")}
    for model in ("application_scorecard", "behaviour_pd", "retail_lgd", "revolving_ccf"):
        reports = sorted((folder / "reports" / model).glob("*.html"))
        assert [p.stem for p in reports] == [
            f"2024-{m:02d}-{d}"
            for m, d in (
                (1, 31),
                (2, 29),
                (3, 31),
                (4, 30),
                (5, 31),
                (6, 30),
                (7, 31),
                (8, 31),
                (9, 30),
                (10, 31),
                (11, 30),
                (12, 31),
            )
        ]
        assert f"{model}/2024-12-31.html" in linked


@pytest.mark.slow
def test_demo_book_and_store_are_what_the_readme_describes(demo: tuple[Path, str]) -> None:
    folder, out = demo
    config = load_config(folder / "riskmon.yaml")
    assert [m.score_direction for m in config.models] == [
        "higher_is_safer",
        "higher_is_riskier",
        "higher_is_riskier",
        "higher_is_riskier",
        "higher_is_riskier",
    ]
    assert [m.kind for m in config.models] == ["pd", "pd", "pd", "lgd", "ccf"]
    assert [m.rating.migration for m in config.models] == [False, False, True, False, False]
    assert (
        len(config.models[0].characteristics)
        == len(NUMERIC_CHARACTERISTICS) + len(CATEGORICAL_CHARACTERISTICS)
        >= 15
    )
    (line,) = [line for line in out.splitlines() if " loans in " in line]
    n_loans = int(line.split(" loans in ")[0].replace(",", ""))
    assert n_loans >= 200_000
    store = MetricStore.open(config.store.url)
    try:
        for model in config.models:
            runs = store.runs(model.name)
            assert len(runs) == 12
            assert {r.status for r in runs} == {"succeeded"}
            assert store.latest_baseline(model.name) is not None
        # the story the book tells: the PD model degrades, the population drifts
        auc = [p.value for p in store.history("behaviour_pd", "auc", population="performance")]
        assert auc[0] is not None
        assert auc[-1] is not None
        assert auc[-1] < auc[0] - 0.05
        csi = store.history("application_scorecard", "csi", variable="income", population="current")
        assert csi[0].value is not None
        assert csi[0].value < 0.10
        assert csi[-1].value is not None
        assert csi[-1].value > 0.25
        broker = store.history(
            "behaviour_pd", "bad_rate", segment="channel=broker", population="performance"
        )
        assert broker[-1].value is not None
        assert broker[0].value is not None
        assert broker[-1].value > 1.5 * broker[0].value
        # the accounts' ratings move farther from July 2024: the migrations widen
        mwb = store.history("behaviour_rating", "migration_mwb_upper", population="current")
        assert [p.value is not None for p in mwb] == [True] * 12
        assert mwb[-1].value > 1.3 * mwb[0].value  # type: ignore[operator]
        _lgd_and_ccf_tell_their_story(store)
    finally:
        store.engine.dispose()


def _statuses(store: MetricStore, model: str, rule: str, segment: str) -> list[str]:
    """A rule's status in each run of ``model``, oldest first."""
    return [
        next((a.status for a in store.alerts(r.id) if (a.rule, a.segment) == (rule, segment)), "-")
        for r in store.runs(model)
    ]


def _lgd_and_ccf_tell_their_story(store: MetricStore) -> None:
    """Secured recoveries closing from April 2024 lose more than estimated: the secured
    segment's back-test is GREEN until then and RED by the end of the year, the unsecured
    segment stays GREEN; the CCF model stays calibrated."""
    secured = _statuses(store, "retail_lgd", "backtest_underestimation", "collateral=secured")
    assert secured[:3] == ["GREEN"] * 3  # January to March
    assert secured[-6:] == ["RED"] * 6  # July to December
    grades = {  # the LGD model's grades: the secured estimates' G2 and G3 RED by December
        a.variable: a.status
        for a in store.alerts(store.runs("retail_lgd")[-1].id)
        if a.rule == "backtest_underestimation_grade"
    }
    assert grades["G2"] == grades["G3"] == "RED"
    assert {grades[g] for g in ("G4", "G5", "G6")} == {"GREEN"}
    unsecured = _statuses(store, "retail_lgd", "backtest_underestimation", "collateral=unsecured")
    assert set(unsecured) == {"GREEN"}
    lgd = store.history(
        "retail_lgd",
        "backtest_mean_realised",
        segment="collateral=secured",
        population="performance",
    )
    assert lgd[-1].value is not None
    assert lgd[0].value is not None
    assert lgd[-1].value > 1.25 * lgd[0].value
    ccf = [a.status for r in store.runs("revolving_ccf") for a in store.alerts(r.id)]
    assert "RED" not in ccf
    assert "AMBER" not in ccf


#: Siddiqi's bands of an IV (FORMULAS.md): below "useless", from "strong", above "suspicious"
USELESS_IV, STRONG_IV, SUSPICIOUS_IV = 0.02, 0.3, 0.5
#: PSI's stable band ends here (FORMULAS.md)
STABLE_PSI = 0.10


@pytest.mark.slow
def test_the_demo_scores_drift_with_their_inputs(demo: tuple[Path, str]) -> None:
    config = load_config(demo[0] / "riskmon.yaml")
    store = MetricStore.open(config.store.url)
    try:
        for model in ("application_scorecard", "behaviour_pd"):
            psi = [
                p.value for p in store.history(model, "psi", variable="score", population="current")
            ]
            income = [
                p.value
                for p in store.history(model, "csi", variable="income", population="current")
            ]
            assert len(psi) == len(income) == 12
            # January to March, before the drift, incomes have not moved and the score is in
            # PSI's stable band; once incomes have drifted the score has moved with them
            assert all(v is not None and v < 0.01 for v in income[:3]), income
            before = [v for v in psi[:3] if v is not None]
            assert len(before) == 3
            assert max(before) < STABLE_PSI, (model, psi)
            assert psi[-1] is not None
            assert psi[-1] > max(5 * max(before), STABLE_PSI / 2), (model, psi)
    finally:
        store.engine.dispose()


@pytest.mark.slow
def test_most_of_the_demo_characteristics_carry_information(demo: tuple[Path, str]) -> None:
    config = load_config(demo[0] / "riskmon.yaml")
    store = MetricStore.open(config.store.url)
    try:
        for model in ("application_scorecard", "behaviour_pd"):
            baseline = store.latest_baseline(model)
            assert baseline is not None
            ivs = {
                f.variable: f.value
                for f in baseline.figures
                if f.name == "iv" and f.segment == "" and f.value is not None
            }
            assert set(ivs) == set(NUMERIC_CHARACTERISTICS + CATEGORICAL_CHARACTERISTICS)
            informative = [v for v in ivs.values() if v >= USELESS_IV]
            assert len(informative) >= 0.75 * len(ivs), ivs
            assert STRONG_IV <= max(ivs.values()) <= SUSPICIOUS_IV, ivs
    finally:
        store.engine.dispose()


def test_demo_refuses_a_folder_with_other_files(tmp_path: Path) -> None:
    (tmp_path / "thesis.docx").write_text("mine")
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "thesis.docx" in result.output
    assert (tmp_path / "thesis.docx").read_text() == "mine"


#: the sections of each demo model's newest report, in page order: a change to the catalog's
#: sections (a new family, an order changed, a section that stops applying) shows here
#: the scorecard's own sections: its characteristic analysis and its overrides
SCORECARD_SECTIONS = {"application_scorecard": (["characteristic-analysis"], ["overrides"])}
DEMO_SECTIONS = {
    "application_scorecard": ["calibration", "early-warning", "cutoff"],
    "behaviour_pd": ["challenger", "calibration", "early-warning", "rating"],
    "behaviour_rating": ["calibration", "early-warning", "rating", "migration"],
}


@pytest.mark.slow
@pytest.mark.parametrize("model", ["retail_lgd", "revolving_ccf"])
def test_the_demo_lgd_and_ccf_reports_show_their_back_test_alone(
    demo: tuple[Path, str], model: str
) -> None:
    newest = sorted((demo[0] / "reports" / model).glob("*.html"))[-1]
    page = parse(newest.read_text(encoding="utf-8"))
    ids = [s.attrs["id"] for s in page.iter("section")]
    assert ids == [
        "run-header",
        "findings",
        "summary",
        "backtest",
        "run-details",
        "evidence",
        "appendix",
    ]
    summary = [
        tr.attrs["data-figure"]
        for tr in page.get("section", id="summary").iter("tr")
        if "data-figure" in tr.attrs
    ]
    assert summary[:4] == [
        "backtest_n",
        "backtest_mean_estimate",
        "backtest_mean_realised",
        "backtest_p",
    ]
    # the chart of mean realised against mean estimate, one dot per row of the table, and the
    # gAUC's trend over the year
    charts = [svg.attrs["aria-label"] for svg in page.get("section", id="backtest").iter("svg")]
    rows = 6 if model == "retail_lgd" else None  # the LGD model's six grades
    assert charts[0].startswith("back-test chart of ")
    if rows is not None:
        assert charts[0].startswith(f"back-test chart of {rows} classes")
    assert charts[1].startswith("Generalised AUC over time: 12 run(s)")
    # the index's line says the back-test, not a PD model's KS, AUC, Gini and PSI
    index = parse((demo[0] / "reports" / "index.html").read_text(encoding="utf-8"))
    line = index.get("tr", data_model=model)
    assert line.get("td", data_label="Back-test").text().startswith("mean realised ")
    assert line.find("td", data_label="KS") is None


@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(DEMO_SECTIONS))
def test_the_demo_reports_sections_in_their_pinned_order(
    demo: tuple[Path, str], model: str
) -> None:
    newest = sorted((demo[0] / "reports" / model).glob("*.html"))[-1]
    page = parse(newest.read_text(encoding="utf-8"))
    ids = [s.attrs["id"] for s in page.iter("section")]
    analysis, overrides = SCORECARD_SECTIONS.get(model, ([], []))
    assert ids == [
        "run-header",
        "findings",
        "summary",
        "stability",
        "characteristics",
        *analysis,
        "discrimination",
        *DEMO_SECTIONS[model],
        "gains",
        *overrides,
        "woe-iv",
        "segments",
        "data-quality",
        "run-details",
        "evidence",
        "appendix",
    ]
    toc = [a.attrs["href"] for a in page.get("nav", class_="toc").iter("a")]
    assert toc == [f"#{i}" for i in ids[1:]]


#: the application scorecard's low-side override rate, as `riskmon history` reads it
LOW_SIDE = ("application_scorecard", "low_side_override_rate")


@pytest.mark.slow
def test_the_demo_scorecard_adds_up_and_its_overrides_tell_their_story(
    demo: tuple[Path, str],
) -> None:
    config = load_config(demo[0] / "riskmon.yaml")
    store = MetricStore.open(config.store.url)
    try:
        # the book is scored from the configured points: the analysis explains the whole shift
        shifts = store.history("application_scorecard", "score_mean_shift", population="current")
        assert len(shifts) == 12
        for point in store.runs("application_scorecard"):
            (total,) = [f for f in store.figures(point.id) if f.name == "score_mean_shift"]
            assert total.value is not None
            assert abs(total.params["unexplained"]) < 1e-9, total.params
        # bureau records go missing as the population drifts: the special value's share grows
        special = store.history(
            "application_scorecard",
            "special_share_change",
            variable="delinquencies_24m",
            population="current",
        )
        assert special[0].value is not None
        assert special[-1].value is not None
        assert abs(special[0].value) < 0.02 < special[-1].value
        # the broker channel's low-side overrides grow from March 2024 (the web's stay put)
        broker, web = (
            [
                p.value
                for p in store.history(*LOW_SIDE, segment=f"channel={c}", population="current")
            ]
            for c in ("broker", "web")
        )
        assert broker[0] is not None
        assert broker[-1] is not None
        assert web[-1] is not None
        assert broker[-1] > 3 * broker[0]
        assert broker[-1] > 3 * web[-1]
    finally:
        store.engine.dispose()


def test_a_book_written_through_the_driver_holds_what_to_sql_writes(tmp_path: Path) -> None:
    """``write_book`` on SQLite declares and stores what ``DataFrame.to_sql`` does: the same
    schema and, row by row, the same values with the same storage types (missing values of
    every kind as NULL, dates as their ISO text); a column of times takes ``to_sql``'s way."""
    import datetime as dt
    import sqlite3

    import numpy as np
    import pandas as pd

    from riskmon.demo import write_book

    frame = pd.DataFrame(
        {
            "loan_id": [1, 2, 3, 4],
            "score_date": [dt.date(2024, 1, 31), dt.date(2024, 2, 1), dt.date(2024, 2, 29), None],
            "pd": [0.1, np.nan, 1e-300, 0.3333333333333333],
            "flag": pd.array([1, None, 0, 1], dtype="Int64"),
            "share": pd.array([0.5, None, 0.25, 1.0], dtype="Float64"),
            "grade": pd.array(["A", None, "é'\"", "C"], dtype="str"),
            "ok": [True, False, True, False],
        }
    )

    def stored(path: Path) -> tuple[list[str], list[tuple[object, ...]]]:
        with sqlite3.connect(path) as connection:
            schema = [r[0] for r in connection.execute("SELECT sql FROM sqlite_master")]
            names = [r[1] for r in connection.execute("PRAGMA table_info(scored_loans)")]
            cells = ", ".join(f"{n}, typeof({n})" for n in names)
            rows = connection.execute(f"SELECT {cells} FROM scored_loans ORDER BY rowid")
            return schema, rows.fetchall()

    def by_to_sql(book: pd.DataFrame, path: Path) -> None:
        from sqlalchemy import create_engine

        engine = create_engine(f"sqlite:///{path}")
        with engine.begin() as connection:
            book.to_sql("scored_loans", connection, index=False)
            connection.exec_driver_sql(
                "CREATE INDEX ix_scored_loans_score_date ON scored_loans (score_date)"
            )
        engine.dispose()

    for book in (
        frame,
        frame.assign(
            at=pd.to_datetime(["2024-01-01 10:00", None, "2024-03-01 00:00", "2024-03-02 23:59"])
        ),
    ):
        folder = tmp_path / str(len(book.columns))
        folder.mkdir()
        write_book(book, f"sqlite:///{folder / 'driver.db'}")
        by_to_sql(book, folder / "to_sql.db")
        assert stored(folder / "driver.db") == stored(folder / "to_sql.db")
    assert stored(tmp_path / "7" / "driver.db")[1][3][:4] == (4, "integer", None, "null")
