"""Export: a stored run's figures as the ECB's validation reporting lays them out.

:func:`export_run` writes the figures and bins a run stored (read from the metric store only,
as the report reads them) as a workbook of one sheet per area of the ECB's *Instructions for
reporting the validation results of internal models* (February 2019) — PD (2.5), LGD (2.6),
ELBE (2.7), LGD in-default (2.8), CCF (2.9), those of the model's kind — each section under its
number, plus a first sheet with the run's identity and what every column is, and a last one
with the figures no section shows. ``xlsx`` is one workbook (openpyxl, the ``xlsx`` extra);
``csv`` a folder of one CSV file per sheet.

Which stored figure each section shows is one table, :data:`AREAS`
(:mod:`riskmon.export._sections`), by figure name: the export imports no figure family.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from riskmon.errors import EXIT_USAGE, RiskmonError
from riskmon.export._about import ABOUT_FILE, ABOUT_SHEET, about_sheet
from riskmon.export._layout import (
    NOT_AVAILABLE,
    OTHER_FILE,
    OTHER_SHEET,
    PORTFOLIO,
    WHOLE_POPULATION,
    Sheet,
    Stored,
    area_sheet,
    other_sheet,
)
from riskmon.export._sections import AREAS
from riskmon.export._table import Area, BinColumn, BinSection, Column, FigureSection
from riskmon.export._write import ExportWriteError, MissingWriterError, write_csv, write_xlsx
from riskmon.records import FigureRecord
from riskmon.store import MetricStore, RunRecord

#: the formats ``riskmon export`` writes
FORMATS = ("xlsx", "csv")
#: figures only a CCF (or EAD) model's run stores, and those of any continuous-target model
_CCF_ONLY = frozenset({"floored_share", "exposure_weighted_mean", "ead_approach_share"})
_CONTINUOUS_PREFIXES = ("backtest_", "gauc", "estimate_psi")


class ExportError(RiskmonError):
    """The export cannot be made as asked: an unknown model, no succeeded run at the date."""

    exit_code = EXIT_USAGE


def find_run(store: MetricStore, model: str, as_of: dt.date | None) -> RunRecord:
    """The succeeded run of ``model`` as of ``as_of`` (its newest succeeded run when None)."""
    if model not in store.model_names():
        known = ", ".join(store.model_names()) or "none"
        raise ExportError(
            f"unknown model {model!r}: no run of it in the metric store (models with runs: {known})"
        )
    run = store.latest_run(model) if as_of is None else store.run(model, as_of)
    if run is None:
        when = "" if as_of is None else f" as of {as_of}"
        raise ExportError(f"no succeeded run of model {model!r}{when} in the metric store")
    if run.status != "succeeded":
        raise ExportError(
            f"the run of model {model!r} as of {run.as_of} is {run.status}, not succeeded: "
            "it stored no figures to export"
        )
    return run


def model_kind(figures: Sequence[FigureRecord]) -> str:
    """The kind of model whose run stored ``figures``, for a model the configuration no longer
    names: ``ccf`` when CCF figures are stored, ``elbe`` when the back-test's t-test was
    two-sided, ``lgd`` for other back-testing (an LGD in-default model's too: its figures do
    not say so), else ``pd``."""
    names = {f.name for f in figures}
    if names & _CCF_ONLY:
        return "ccf"
    if any(f.name == "backtest_p" and f.params.get("alternative") == "two-sided" for f in figures):
        return "elbe"
    return "lgd" if any(n.startswith(_CONTINUOUS_PREFIXES) for n in names) else "pd"


def export_kind(kind: str, estimate: str) -> str:
    """The areas' key of a configured model: its kind, or for an LGD model estimating an ELBE
    or an LGD in-default (``backtest.estimate``), that estimate."""
    return estimate if kind == "lgd" and estimate != "performing" else kind


def areas_of(kind: str) -> tuple[Area, ...]:
    """The areas written for a model of ``kind``."""
    return tuple(area for area in AREAS if kind in area.kinds)


def workbook(store: MetricStore, run: RunRecord, *, kind: str | None = None) -> list[Sheet]:
    """The sheets of ``run``'s export: about, one per area of ``kind`` (the model's kind;
    None: told by the stored figures), other figures."""
    figures = store.figures(run.id)
    bins = store.bins(run.id)
    kind = kind or model_kind(figures)
    areas = areas_of(kind)
    stored = Stored(figures, bins)  # indexed once, read by every area
    sheets = [about_sheet(run, kind, areas), *(area_sheet(area, stored) for area in areas)]
    del stored  # the last sheet reads the figures only
    return [*sheets, other_sheet(figures, areas)]


def export_run(
    store: MetricStore,
    model: str,
    as_of: dt.date | None,
    destination: Path,
    *,
    format: str = "xlsx",
    kind: str | None = None,
) -> Path:
    """Write the export of ``model``'s succeeded run as of ``as_of`` (its newest when None) to
    ``destination``: a workbook (``xlsx``) or a folder of CSV files (``csv``), replacing what
    was there only once the whole export is written. Returns ``destination``.

    Raises :class:`ExportError` for an unknown model or no succeeded run, and
    :class:`ExportWriteError` when the files cannot be written.
    """
    if format not in FORMATS:
        raise ExportError(f"unknown export format {format!r} (known: {', '.join(FORMATS)})")
    run = find_run(store, model, as_of)
    sheets = workbook(store, run, kind=kind)
    return write_xlsx(sheets, destination) if format == "xlsx" else write_csv(sheets, destination)


__all__ = [
    "ABOUT_FILE",
    "ABOUT_SHEET",
    "AREAS",
    "FORMATS",
    "NOT_AVAILABLE",
    "OTHER_FILE",
    "OTHER_SHEET",
    "PORTFOLIO",
    "WHOLE_POPULATION",
    "Area",
    "BinColumn",
    "BinSection",
    "Column",
    "ExportError",
    "ExportWriteError",
    "FigureSection",
    "MissingWriterError",
    "Sheet",
    "areas_of",
    "export_kind",
    "export_run",
    "find_run",
    "model_kind",
    "workbook",
]
