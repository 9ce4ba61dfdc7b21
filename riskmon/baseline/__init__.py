"""Baselines: the frozen bins, distributions and figures every later run is compared with.

- :mod:`._bins`: the bins fitted on the development window (:func:`fit_bins`);
- :mod:`._request`: what a collect pass reads on those bins (:func:`collect_request`,
  :func:`migration_request`), for a run and for a freeze alike;
- :mod:`._tables`: the collected count tables as the figure families read them
  (:class:`CollectedRun`, the :class:`~riskmon.figures.RunTables` of runs and freezes);
- :mod:`._records`: a frozen baseline's variables and bins as stored, and read back
  (:func:`frozen_bins`, :func:`baseline_table`, :func:`check_matches`);
- :mod:`._freeze`: freezing a baseline, a run of the catalog over the development window in
  which each family computes what it declares frozen (:func:`freeze`, :func:`latest_or_freeze`);
- :mod:`._for_run`: what a run reads of its baseline, in one call (:func:`for_run`).

The baseline names no figure family: it reaches them only through
:data:`riskmon.figures.CATALOG`.
"""

from __future__ import annotations

from riskmon.baseline._bins import FrozenBins, fit_bins
from riskmon.baseline._for_run import RunBaseline, for_run, of_stored
from riskmon.baseline._freeze import FIRST_VERSION, freeze, latest_or_freeze
from riskmon.baseline._records import baseline_table, check_matches, frozen_bins
from riskmon.baseline._request import (
    collect_request,
    cutoff_binning,
    grade_binning,
    migration_request,
    pd_source,
    variables,
)
from riskmon.baseline._tables import CollectedRun, ranking_table

__all__ = [
    "FIRST_VERSION",
    "CollectedRun",
    "FrozenBins",
    "RunBaseline",
    "baseline_table",
    "check_matches",
    "collect_request",
    "cutoff_binning",
    "fit_bins",
    "for_run",
    "freeze",
    "frozen_bins",
    "grade_binning",
    "latest_or_freeze",
    "migration_request",
    "of_stored",
    "pd_source",
    "ranking_table",
    "variables",
]
