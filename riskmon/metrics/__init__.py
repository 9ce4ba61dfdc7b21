"""Figures of model performance and stability, as pure functions.

Two layers that agree exactly: functions on count tables (:class:`CountTable`), O(bins), and
the same functions on arrays (``y_true, y_score``), which first build the count table.
Calibration tests take a grade's counts (defaults, obligors, PD) or the per-cell sums of
:class:`CalibrationSums`; rating-system figures take counts per grade or a migration matrix.
"""

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics._auc_tests import (
    AUCTestResult,
    DeLongTestResult,
    auc_test,
    auc_test_from_counts,
    delong_test,
    delong_test_from_counts,
)
from riskmon.metrics._bin_fit import fit_binning, infer_kind, quantile_edges
from riskmon.metrics._binning import (
    MISSING_LABEL,
    OTHER_LABEL,
    UNSEEN_LABEL,
    Binning,
    numeric_values,
)
from riskmon.metrics._bootstrap import (
    BootstrapResult,
    bootstrap_ci,
)
from riskmon.metrics._brier import (
    CalibrationSums,
    SpiegelhalterResult,
    brier_score,
    brier_score_from_sums,
    spiegelhalter_test,
    spiegelhalter_test_from_sums,
)
from riskmon.metrics._calibration import (
    BinomialTestResult,
    JeffreysResult,
    binomial_test,
    jeffreys_test,
)
from riskmon.metrics._costs import (
    CostCurve,
    CostOptimalCutoff,
    cost_curve,
    cost_curve_from_counts,
    cost_optimal_cutoff,
    cost_optimal_cutoff_from_counts,
    expected_cost,
    expected_cost_from_counts,
)
from riskmon.metrics._counts import CountTable
from riskmon.metrics._csi import characteristic_stability_table
from riskmon.metrics._curves import (
    average_precision,
    average_precision_from_counts,
    break_even_point,
    break_even_point_from_counts,
    cap_curve,
    cap_curve_from_counts,
    ks_curve,
    ks_curve_from_counts,
    precision_recall_curve,
    precision_recall_curve_from_counts,
    roc_curve,
    roc_curve_from_counts,
)
from riskmon.metrics._cutoff import (
    ConfusionMetrics,
    average_confusion_metrics,
    confusion_figures,
    confusion_metrics,
    confusion_metrics_from_counts,
    threshold_table,
    threshold_table_from_counts,
)
from riskmon.metrics._discrimination import (
    AUCResult,
    GiniResult,
    KSResult,
    gini,
    gini_from_counts,
    ks_statistic,
    ks_statistic_from_counts,
    roc_auc,
    roc_auc_from_counts,
)
from riskmon.metrics._divergence import DEFAULT_SMOOTHING
from riskmon.metrics._grid import grid_auc_error_bound, grid_ks_error_bound, score_grid_table
from riskmon.metrics._hosmer_lemeshow import HosmerLemeshowResult, hosmer_lemeshow_test
from riskmon.metrics._lift import (
    lift_table,
    lift_table_from_counts,
)
from riskmon.metrics._pd_sums import PD_SUMS, WEIGHTED_PD_SUMS, PdTable
from riskmon.metrics._rating import (
    HerfindahlTestResult,
    MigrationStabilityResult,
    herfindahl_index,
    herfindahl_test,
    matrix_weighted_bandwidth,
    migration_matrix,
    migration_stability_test,
)
from riskmon.metrics._regression import (
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    regression_metrics,
    root_mean_squared_error,
    root_mean_squared_log_error,
)
from riskmon.metrics._stability import (
    PSIResult,
    population_stability_index,
    population_stability_index_from_counts,
    psi,
    psi_band,
    psi_critical_value,
    psi_noise_p,
)
from riskmon.metrics._target_sums import TARGET_MOMENTS, WEIGHTED_TARGET_MOMENTS, TargetTable
from riskmon.metrics._woe import (
    IVResult,
    information_value,
    information_value_from_counts,
    iv_band,
    woe_table,
    woe_table_from_counts,
)

__all__ = [
    "DEFAULT_SMOOTHING",
    "MISSING_LABEL",
    "OTHER_LABEL",
    "PD_SUMS",
    "TARGET_MOMENTS",
    "UNSEEN_LABEL",
    "WEIGHTED_PD_SUMS",
    "WEIGHTED_TARGET_MOMENTS",
    "AUCResult",
    "AUCTestResult",
    "Binning",
    "BinomialTestResult",
    "BootstrapResult",
    "CalibrationSums",
    "ConfusionMetrics",
    "CostCurve",
    "CostOptimalCutoff",
    "CountTable",
    "DeLongTestResult",
    "DegenerateDataWarning",
    "GiniResult",
    "HerfindahlTestResult",
    "HosmerLemeshowResult",
    "IVResult",
    "InvalidDataError",
    "JeffreysResult",
    "KSResult",
    "MigrationStabilityResult",
    "PSIResult",
    "PdTable",
    "SpiegelhalterResult",
    "TargetTable",
    "auc_test",
    "auc_test_from_counts",
    "average_confusion_metrics",
    "average_precision",
    "average_precision_from_counts",
    "binomial_test",
    "bootstrap_ci",
    "break_even_point",
    "break_even_point_from_counts",
    "brier_score",
    "brier_score_from_sums",
    "cap_curve",
    "cap_curve_from_counts",
    "characteristic_stability_table",
    "confusion_figures",
    "confusion_metrics",
    "confusion_metrics_from_counts",
    "cost_curve",
    "cost_curve_from_counts",
    "cost_optimal_cutoff",
    "cost_optimal_cutoff_from_counts",
    "delong_test",
    "delong_test_from_counts",
    "expected_cost",
    "expected_cost_from_counts",
    "fit_binning",
    "gini",
    "gini_from_counts",
    "grid_auc_error_bound",
    "grid_ks_error_bound",
    "herfindahl_index",
    "herfindahl_test",
    "hosmer_lemeshow_test",
    "infer_kind",
    "information_value",
    "information_value_from_counts",
    "iv_band",
    "jeffreys_test",
    "ks_curve",
    "ks_curve_from_counts",
    "ks_statistic",
    "ks_statistic_from_counts",
    "lift_table",
    "lift_table_from_counts",
    "matrix_weighted_bandwidth",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "migration_matrix",
    "migration_stability_test",
    "numeric_values",
    "population_stability_index",
    "population_stability_index_from_counts",
    "precision_recall_curve",
    "precision_recall_curve_from_counts",
    "psi",
    "psi_band",
    "psi_critical_value",
    "psi_noise_p",
    "quantile_edges",
    "regression_metrics",
    "roc_auc",
    "roc_auc_from_counts",
    "roc_curve",
    "roc_curve_from_counts",
    "root_mean_squared_error",
    "root_mean_squared_log_error",
    "score_grid_table",
    "spiegelhalter_test",
    "spiegelhalter_test_from_sums",
    "threshold_table",
    "threshold_table_from_counts",
    "woe_table",
    "woe_table_from_counts",
]
