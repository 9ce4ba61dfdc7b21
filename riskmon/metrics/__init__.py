"""Figures of model performance and stability, as pure functions.

Two layers that agree exactly: functions on count tables (:class:`CountTable`), O(bins), and
the same functions on arrays (``y_true, y_score``), which first build the count table.
"""

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics._binning import MISSING_LABEL, UNSEEN_LABEL, Binning
from riskmon.metrics._counts import CountTable

__all__ = [
    "MISSING_LABEL",
    "UNSEEN_LABEL",
    "Binning",
    "CountTable",
    "DegenerateDataWarning",
    "InvalidDataError",
]
