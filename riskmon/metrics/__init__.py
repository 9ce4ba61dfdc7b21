"""Figures of model performance and stability, as pure functions.

Two layers that agree exactly: functions on count tables (:class:`CountTable`), O(bins), and
the same functions on arrays (``y_true, y_score``), which first build the count table.
"""

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics._bin_fit import fit_binning, infer_kind, quantile_edges
from riskmon.metrics._binning import MISSING_LABEL, UNSEEN_LABEL, Binning
from riskmon.metrics._counts import CountTable
from riskmon.metrics._stability import (
    PSIResult,
    characteristic_stability_table,
    population_stability_index,
    population_stability_index_from_counts,
    psi,
    psi_band,
    psi_critical_value,
)
from riskmon.metrics._woe import (
    IVResult,
    information_value,
    information_value_from_counts,
    iv_band,
    woe_table,
    woe_table_from_counts,
)

__all__ = [
    "MISSING_LABEL",
    "UNSEEN_LABEL",
    "Binning",
    "CountTable",
    "DegenerateDataWarning",
    "IVResult",
    "InvalidDataError",
    "PSIResult",
    "characteristic_stability_table",
    "fit_binning",
    "infer_kind",
    "information_value",
    "information_value_from_counts",
    "iv_band",
    "population_stability_index",
    "population_stability_index_from_counts",
    "psi",
    "psi_band",
    "psi_critical_value",
    "quantile_edges",
    "woe_table",
    "woe_table_from_counts",
]
