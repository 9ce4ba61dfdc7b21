"""The LGD and CCF sheets, from back-testing figures stored through the store's own API for a
run of a continuous-target model: each cell against the stored figure it names."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from riskmon.export import export_run, model_kind, workbook
from riskmon.records import FigureRecord
from riskmon.store import MetricStore

from .runs import AS_OF, stored_run
from .sheets import blocks, csv_rows, same, segment, workbook_rows

GRADES = ("A", "B", "C")
SEGMENTS = ("", "region=north")
BACKTEST = {
    "N": "backtest_n",
    "mean estimate": "backtest_mean_estimate",
    "mean estimate without downturn": "backtest_mean_estimate_without_downturn",
    "mean realised": "backtest_mean_realised",
    "T": "backtest_t",
    "s²": "backtest_variance",
    "p-value": "backtest_p",
    "excluded share": "excluded_share",
}
PORTFOLIO_ONLY = {"gAUC": "gauc", "s": "gauc_se", "p-value": "gauc_test_p", "PSI": "estimate_psi"}
SUPPLEMENT = {"loss shortfall": "loss_shortfall", "MAD": "mad"}
NO_INITIAL = "no initial gAUC: none configured, none in the baseline"


def _figures(extra: tuple[str, ...] = ()) -> list[FigureRecord]:
    """Back-testing figures of three grades and the portfolio in two segments, each value
    distinct, so that a cell read from the wrong figure, grade or segment shows."""
    counter = itertools.count(1)
    out: list[FigureRecord] = []
    graded = [*BACKTEST.values(), *SUPPLEMENT.values(), *extra]
    for seg in SEGMENTS:
        for position, grade in enumerate(GRADES, start=1):
            where = {"variable": grade, "segment": seg, "params": {"grade": position}}
            out += [FigureRecord(n, next(counter) / 7, "performance", **where) for n in graded]
        out += [FigureRecord(n, next(counter) / 7, "performance", "", seg) for n in graded]
        for name in PORTFOLIO_ONLY.values():
            if name == "gauc_test_p" and seg:
                out.append(FigureRecord(name, None, "performance", "", seg, reason=NO_INITIAL))
            else:
                out.append(FigureRecord(name, next(counter) / 7, "performance", "", seg))
    out.append(FigureRecord("mae", 0.125, "performance"))  # a figure no section shows
    return out


def _by_key(store: MetricStore, run_id: int) -> dict[tuple[str, str, str], FigureRecord]:
    return {(f.name, f.variable, f.segment): f for f in store.figures(run_id)}


def _check(rows: list[dict[str, Any]], columns: dict[str, str], stored: dict[Any, Any]) -> int:
    checked = 0
    for row in rows:
        variable = "" if row["grade"] == "portfolio" else row["grade"]
        for header, name in columns.items():
            figure = stored[(name, variable, segment(row["segment"]))]
            assert same(row[header], figure.value), (header, row)
            checked += 1
    return checked


def test_the_lgd_sheets_show_the_stored_backtesting_figures(
    store: MetricStore, tmp_path: Path
) -> None:
    run_id = stored_run(store, "collateral_lgd", _figures())
    stored = _by_key(store, run_id)
    out = export_run(store, "collateral_lgd", AS_OF, tmp_path / "lgd.xlsx")
    book = workbook_rows(out)
    assert list(book) == ["About", "LGD", "Other figures"]
    assert book["LGD"][0] == ("2.6 Loss given default",)
    sections = blocks(book["LGD"])
    assert [b.number for b in sections] == ["2.6.2", "2.6.3", "2.6.4", "2.6 suppl."]
    t_test, gauc, psi, supplement = sections
    # per segment: grades A, B, C, then the portfolio
    assert [(r["segment"], r["grade"]) for r in t_test.rows] == [
        (s or "(all)", g) for s in SEGMENTS for g in (*GRADES, "portfolio")
    ]
    assert _check(t_test.rows, BACKTEST, stored) == 8 * 8
    assert _check(supplement.rows, SUPPLEMENT, stored) == 8 * 2
    assert _check(psi.rows, {"PSI": "estimate_psi"}, stored) == 2
    gauc_columns = {k: v for k, v in PORTFOLIO_ONLY.items() if k != "PSI"}
    assert _check(gauc.rows, gauc_columns, stored) == 2 * 3
    north = next(r for r in gauc.rows if r["segment"] == "region=north")
    assert north["p-value"] is None
    assert north["notes"] == f"gauc_test_p: {NO_INITIAL}"
    # an ELBE or LGD in-default model's same figures go under 2.7 or 2.8, and only there
    for kind, sheet, number in [("elbe", "ELBE", "2.7"), ("in_default", "LGD in-default", "2.8")]:
        other = workbook_rows(
            export_run(store, "collateral_lgd", AS_OF, tmp_path / f"{kind}.xlsx", kind=kind)
        )
        assert list(other) == ["About", sheet, "Other figures"]
        (only,) = blocks(other[sheet])
        assert only.number == number
        assert _check(only.rows, BACKTEST, stored) == 8 * 8
    assert book["Other figures"][1][:5] == ("mae", "performance", "(all)", None, 0.125)
    pairs = {r[0]: r[1] for r in book["About"] if len(r) == 2}
    assert (pairs["model"], pairs["model kind"], pairs["run id"]) == (
        "collateral_lgd",
        "lgd",
        run_id,
    )
    assert pairs["current population's score dates"] == "2024-07-01 to 2025-06-30"


def test_the_ccf_sheet_and_its_csv_file(store: MetricStore, tmp_path: Path) -> None:
    ccf_only = ("floored_share", "exposure_weighted_mean")
    run_id = stored_run(store, "revolving_ccf", _figures(ccf_only))
    stored = _by_key(store, run_id)
    assert model_kind(list(stored.values())) == "ccf"
    assert [s.name for s in workbook(store, store.run("revolving_ccf", AS_OF))] == [  # type: ignore[arg-type]
        "About", "CCF", "Other figures"
    ]  # fmt: skip
    out = export_run(store, "revolving_ccf", AS_OF, tmp_path / "ccf", format="csv")
    assert sorted(p.name for p in out.iterdir()) == ["about.csv", "ccf.csv", "other_figures.csv"]
    rows = csv_rows(out / "ccf.csv")
    assert rows[0] == ("2.9 Credit conversion factor",)
    sections = blocks(rows)
    assert [b.number for b in sections] == ["2.9.2", "2.9.3", "2.9.4", "2.9 suppl."]
    assert _check(sections[0].rows, BACKTEST, stored) == 8 * 8
    extra = {
        **SUPPLEMENT,
        "floored share": "floored_share",
        "exposure-weighted mean": "exposure_weighted_mean",
    }
    assert _check(sections[3].rows, extra, stored) == 8 * 4
    # CSV holds every digit: the values are the stored floats exactly
    for row in sections[0].rows:
        variable = "" if row["grade"] == "portfolio" else row["grade"]
        assert row["T"] == stored[("backtest_t", variable, segment(row["segment"]))].value


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_the_kind_a_run_reports_as(store: MetricStore) -> None:
    assert model_kind([FigureRecord("ks", 0.4, "performance")]) == "pd"
    assert model_kind([FigureRecord("backtest_p", 0.4, "performance")]) == "lgd"
    two_sided = {"alternative": "two-sided"}
    assert model_kind([FigureRecord("backtest_p", 0.4, "performance", params=two_sided)]) == "elbe"
    run_id = stored_run(store, "told_by_config", _figures())
    run = store.run_by_id(run_id)
    assert run is not None
    # the configured kind wins over the figures' hint
    assert [s.name for s in workbook(store, run, kind="ccf")][1] == "CCF"
