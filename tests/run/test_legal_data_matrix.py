"""No legal data fails a run: every degenerate population × models with every optional feature
on or off → the run succeeds, every section of its report renders, and no figure is a silent
NaN or infinity.

The declared grid (:data:`SCENARIOS` × two models each): 11 degenerate cases
(:data:`~tests.run.legal_data.CASES`) × 3 populations (baseline, performance cohort, current
population) = 33 scenarios, less one (a baseline with no loans, refused with a clear error:
:func:`test_a_baseline_without_loans_is_refused_with_its_reason`) = 32, each run with every
feature on (:func:`full`: the grades are the score's baseline bins for a degenerate baseline,
which shapes them, and a PD master scale or a grade column, in turn, for the other
populations) and with one of :data:`PARTNERS` in turn, so that each feature is also seen off
and each calibration grading (the baseline's score bins, a PD master scale, a grade column,
none) is seen: 64 runs on SQLite, each with its report. On
PostgreSQL and MariaDB, when their URL variables are set, :data:`SERVER_SCENARIOS` (6) run
with every feature on.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from riskmon.records import FigureRecord
from riskmon.report.context import run_report_context
from riskmon.run import run_models
from riskmon.store import MetricStore

from ..collect.loans import load
from ..figures.books import fresh_store, report_config
from ..report.htmltree import Element, parse
from .legal_data import ALL_ON, AS_OF, CASES, POPULATIONS, Features, book, model

#: the models each scenario also runs, in turn: together they turn every feature off at least
#: once, and use each calibration grading
PARTNERS = (
    Features(),
    Features(weights=True, segments=True, calibration="column", migration=True),
    Features(challengers=True, categorical=True, calibration="off", cutoff=True),
    Features(segments=True, cutoff=True, migration=True),
    Features(weights=True, challengers=True, calibration="edges", categorical=True),
)
#: (case, population): the whole grid but the baseline without loans
SCENARIOS = [
    (case, population)
    for case in CASES
    for population in POPULATIONS
    if (case, population) != ("no_loans", "baseline")
]
#: the scenarios run on the database servers
SERVER_SCENARIOS = [
    ("certain_pds", "performance"),
    ("all_certain", "performance"),
    ("unlabeled", "performance"),
    ("no_loans", "current"),
    ("segment_missing", "performance"),
    ("characteristics_null", "current"),
]
#: what a Python exception looks like in a page: a traceback, or a class name ending in Error
#: or Exception (InvalidDataError, KeyError, UndefinedError, ZeroDivisionError, …)
RAW_EXCEPTION = re.compile(r"Traceback|\b[A-Z][A-Za-z]*(?:Error|Exception)\b")
#: a table cell that shows a number Python could not compute, printed as is
RAW_NUMBER = re.compile(r"^[-−]?(?:nan|inf|infinity|none)%?$", re.IGNORECASE)


def _run(loans_url: str, features: Features, folder: Path) -> None:
    """Run the model of ``features`` on the loans at ``loans_url`` as of AS_OF with a fresh
    store in ``folder``, write its report and check the run, its figures and its page."""
    folder.mkdir()
    store = fresh_store(folder)
    try:
        legal = model(loans_url, features)
        config = report_config(store, legal, folder)
        [outcome] = run_models(config, [], AS_OF, store=store, notify=False)
        where = f"{features.label()}: "
        assert outcome.status == "succeeded", where + str(outcome.error)
        assert outcome.report_error is None, where + outcome.report_error
        for figure in outcome.figures:
            _check_figure(figure)
        _check_page(store, Path(str(outcome.report_path)), features)
    finally:
        store.engine.dispose()


def _check_figure(figure: FigureRecord) -> None:
    """A value is a finite number; a figure without one says why."""
    where = f"{figure.name} {figure.population} {figure.variable} {figure.segment}"
    if figure.value is None:
        assert figure.reason, f"{where}: no value and no reason"
    else:
        assert math.isfinite(figure.value), f"{where}: {figure.value}"


def _check_page(store: MetricStore, path: Path, features: Features) -> None:
    """The page parses, shows each section the run's context declares, between the header,
    findings and summary and the run's details and appendix, and no raw exception or number."""
    page = parse(path.read_text(encoding="utf-8"))
    run = store.latest_run("legal")
    assert run is not None
    context = run_report_context(store, run, model=None)
    ids = [s.attrs["id"] for s in page.iter("section")]
    expected = ["run-header", "findings", "summary", *(s.anchor for s in context.sections)]
    expected += ["run-details", "evidence", "appendix"]
    assert ids == expected, features.label()
    text = page.text()
    assert not RAW_EXCEPTION.search(text), RAW_EXCEPTION.findall(text)
    cells = [cell.text() for cell in _cells(page)]
    assert not [c for c in cells if RAW_NUMBER.match(c)], features.label()


def _cells(page: Element) -> list[Element]:
    return [*page.iter("td"), *page.iter("th")]


def _load(url: str, case: str, population: str) -> None:
    load(url, book({population: case}))


def full(case: str, population: str) -> Features:
    """Every feature on, the grades read where the scenario's degeneracy bites."""
    if population == "baseline":
        return replace(ALL_ON, calibration="default")
    return replace(ALL_ON, calibration="column" if list(CASES).index(case) % 2 == 0 else "edges")


def _scenario(folder: Path, case: str, population: str) -> None:
    """The scenario's book, run with every feature on and with its partner."""
    url = f"sqlite:///{folder / 'loans.db'}"
    _load(url, case, population)
    partner = PARTNERS[SCENARIOS.index((case, population)) % len(PARTNERS)]
    _run(url, full(case, population), folder / "all_on")
    _run(url, partner, folder / "partner")


def _cases(population: str) -> list[str]:
    return [case for case, p in SCENARIOS if p == population]


# one class per population: pytest-xdist's loadscope runs each class on a worker of its own


class TestBaseline:
    @pytest.mark.parametrize("case", _cases("baseline"))
    def test_a_legal_baseline_never_fails_a_run(self, tmp_path: Path, case: str) -> None:
        _scenario(tmp_path, case, "baseline")


class TestPerformance:
    @pytest.mark.parametrize("case", _cases("performance"))
    def test_a_legal_cohort_never_fails_a_run(self, tmp_path: Path, case: str) -> None:
        _scenario(tmp_path, case, "performance")


class TestCurrent:
    @pytest.mark.parametrize("case", _cases("current"))
    def test_a_legal_current_population_never_fails_a_run(self, tmp_path: Path, case: str) -> None:
        _scenario(tmp_path, case, "current")


def test_the_grid_turns_every_feature_on_and_off() -> None:
    """The docstring's counts, and each feature seen both ways across ALL_ON and PARTNERS."""
    assert len(SCENARIOS) == len(CASES) * len(POPULATIONS) - 1 == 32
    models = [*(full(c, p) for c, p in SCENARIOS), *PARTNERS]
    for name in vars(ALL_ON):
        seen = {getattr(m, name) for m in models}
        assert len(seen) >= 2, name
    assert {m.calibration for m in models} == {"default", "edges", "column", "off"}
    # each partner is used: the scenarios outnumber them
    assert len(SCENARIOS) >= len(PARTNERS)


def test_a_baseline_without_loans_is_refused_with_its_reason(tmp_path: Path) -> None:
    """A baseline is frozen from the development window's loans: with none, there are no bins
    to compare anything with, and the run fails saying so (not with a Python exception); its
    report says it too."""
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    _load(url, "no_loans", "baseline")
    store = fresh_store(tmp_path)
    config = report_config(store, model(url, ALL_ON), tmp_path)
    [outcome] = run_models(config, [], AS_OF, store=store, notify=False)
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert "no loans scored in the baseline window 2024-01-01 to 2024-03-31" in outcome.error
    assert not RAW_EXCEPTION.search(outcome.error)
    assert outcome.report_error is None
    page = parse(Path(str(outcome.report_path)).read_text(encoding="utf-8"))
    assert "no loans scored in the baseline window" in page.text()
    store.engine.dispose()


@pytest.mark.parametrize(
    "server",
    [
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("mariadb", marks=pytest.mark.mariadb),
    ],
)
@pytest.mark.parametrize(
    ("case", "population"), SERVER_SCENARIOS, ids=[f"{c}-{p}" for c, p in SERVER_SCENARIOS]
)
def test_a_legal_population_never_fails_a_run_on_a_server(
    request: pytest.FixtureRequest, tmp_path: Path, server: str, case: str, population: str
) -> None:
    url = str(request.getfixturevalue(f"{server}_url"))
    _load(url, case, population)
    _run(url, ALL_ON, tmp_path / "all_on")


def test_the_books_are_what_the_cases_say() -> None:
    """The generator's cases do what their names promise, on the population they are given."""
    whole = book()
    for case in CASES:
        frame = book({"performance": case})
        june = frame[pd.to_datetime(frame["score_date"]).dt.month == 6]
        others = frame[pd.to_datetime(frame["score_date"]).dt.month != 6]
        assert len(others) == len(whole[pd.to_datetime(whole["score_date"]).dt.month != 6])
        if case == "no_loans":
            assert june.empty
        elif case == "unlabeled":
            assert june["bad"].isna().all()
        elif case in ("goods_only", "bads_only"):
            assert june["bad"].nunique() == 1
        elif case == "equal_pds":
            assert june["pd_score"].nunique() == 1
        elif case == "certain_pds":
            ends = june["pd_score"].isin([0.0, 1.0])
            assert 0.1 < ends.mean() < 0.2
            assert (june.loc[ends, "bad"] == june.loc[ends, "pd_score"]).all()
        elif case == "all_certain":
            assert june["pd_score"].isin([0.0, 1.0]).all()
        elif case == "segment_missing":
            assert "web" not in set(june["channel"])
        elif case == "characteristics_null":
            assert june["income"].isna().all()
            assert june["region"].isna().all()
        elif case == "challenger_null":
            assert june["pd_v2"].isna().all()
        elif case == "one_loan":
            assert len(june) == 1
