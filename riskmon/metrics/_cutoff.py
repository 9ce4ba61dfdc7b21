"""Figures at a cutoff: the confusion matrix and everything read off it.

Bads are the positive class. A row is *predicted bad* when its score is on the risky side of
the cutoff, inclusive: ``score >= cutoff`` when higher is riskier, ``score <= cutoff`` for
scorecard points. TP = bads predicted bad, FP = goods predicted bad, TN = goods predicted
good, FN = bads predicted good (summed weights when weighted).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._counts import CountTable
from riskmon.metrics._ranking import Ranked, rank
from riskmon.metrics._validation import FloatArray, not_available

if TYPE_CHECKING:
    import pandas as pd

#: β of the F-measure unless told otherwise (F1: precision and recall weigh the same)
DEFAULT_BETA = 1.0

# figure -> (numerator, denominator) description used when a denominator is zero
_UNDEFINED_WHEN = {
    "accuracy": "the data has no rows",
    "error_rate": "the data has no rows",
    "precision": "no rows are predicted bad (TP + FP = 0)",
    "fdr": "no rows are predicted bad (TP + FP = 0)",
    "recall": "the data has no bads (TP + FN = 0)",
    "fnr": "the data has no bads (TP + FN = 0)",
    "specificity": "the data has no goods (TN + FP = 0)",
    "fpr": "the data has no goods (TN + FP = 0)",
    "npv": "no rows are predicted good (TN + FN = 0)",
    "f1": "there are neither bads nor rows predicted bad",
    "f_beta": "there are neither bads nor rows predicted bad",
    "mcc": "a row or column of the confusion matrix is empty",
    "kappa": "the chance agreement is 1 (all rows in one class and one prediction)",
    "informedness": "the data lacks bads or goods",
    "markedness": "no rows are predicted bad, or none predicted good",
}


def _ratio(num: Any, den: Any) -> FloatArray:
    num_arr = np.asarray(num, dtype=np.float64)
    den_arr = np.broadcast_to(np.asarray(den, dtype=np.float64), num_arr.shape)
    out = np.full(num_arr.shape, np.nan)
    np.divide(num_arr, den_arr, out=out, where=den_arr != 0)
    return out


def confusion_figures(
    tp: Any, fp: Any, tn: Any, fn: Any, *, beta: float = DEFAULT_BETA
) -> dict[str, FloatArray]:
    """Every figure of confusion matrices given as arrays (NaN where undefined, no warning)."""
    tp, fp, tn, fn = (np.asarray(a, dtype=np.float64) for a in (tp, fp, tn, fn))
    n = tp + fp + tn + fn
    b2 = beta * beta
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    specificity = _ratio(tn, tn + fp)
    npv = _ratio(tn, tn + fn)
    # Cohen's κ = (p_o − p_e)/(1 − p_e), written without the cancellation of 1 − p_e
    kappa_den = (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)
    return {
        "accuracy": _ratio(tp + tn, n),
        "error_rate": _ratio(fp + fn, n),
        "precision": precision,
        "recall": recall,
        "specificity": specificity,
        "fpr": 1.0 - specificity,
        "fnr": 1.0 - recall,
        "npv": npv,
        "fdr": 1.0 - precision,
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "f_beta": _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp),
        "mcc": _ratio(tp * tn - fp * fn, np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))),
        "kappa": _ratio(2 * (tp * tn - fn * fp), kappa_den),
        "informedness": recall + specificity - 1.0,
        "markedness": precision + npv - 1.0,
    }


def _warn_undefined(figures: dict[str, FloatArray], stacklevel: int) -> None:
    missing = [name for name, value in figures.items() if np.isnan(value).any()]
    if missing:
        reasons = "; ".join(f"{name}: {_UNDEFINED_WHEN[name]}" for name in missing)
        not_available(
            f"Some figures at the cutoff are not available ({reasons})", stacklevel=stacklevel
        )


@dataclass(frozen=True)
class ConfusionMetrics:
    """A confusion matrix (bads positive) and the figures read off it.

    precision = TP/(TP+FP); recall = TPR = TP/(TP+FN); specificity = TNR = TN/(TN+FP);
    FPR = 1 − TNR; FNR = 1 − TPR; NPV = TN/(TN+FN); FDR = 1 − precision; accuracy =
    (TP+TN)/N; error rate = 1 − accuracy; F_β = (1+β²)·TP/((1+β²)·TP + β²·FN + FP), which is
    (1+β²)·P·R/(β²·P + R) and stays defined when there are bads or predicted bads; MCC =
    (TP·TN − FP·FN)/√((TP+FP)(TP+FN)(TN+FP)(TN+FN)); Cohen's κ = (p_o − p_e)/(1 − p_e);
    informedness (Youden's J) = TPR + TNR − 1; markedness = PPV + NPV − 1. A figure whose
    denominator is zero is NaN, with a :class:`~riskmon.errors.DegenerateDataWarning`.
    """

    tp: float
    fp: float
    tn: float
    fn: float
    cutoff: float
    beta: float
    accuracy: float
    error_rate: float
    precision: float
    recall: float
    specificity: float
    fpr: float
    fnr: float
    npv: float
    fdr: float
    f1: float
    f_beta: float
    mcc: float
    kappa: float
    informedness: float
    markedness: float

    @classmethod
    def from_matrix(
        cls,
        tp: float,
        fp: float,
        tn: float,
        fn: float,
        *,
        cutoff: float = float("nan"),
        beta: float = DEFAULT_BETA,
    ) -> ConfusionMetrics:
        """The figures of one confusion matrix.

        Examples
        --------
        >>> m = ConfusionMetrics.from_matrix(40, 10, 45, 5)
        >>> m.precision, m.recall, m.accuracy
        (0.8, 0.8888888888888888, 0.85)
        """
        counts = np.asarray([tp, fp, tn, fn], dtype=np.float64)
        if not np.isfinite(counts).all() or (counts < 0).any():
            raise InvalidDataError(
                f"Expected non-negative finite TP, FP, TN, FN, got {counts.tolist()!r}"
            )
        beta = _check_beta(beta)
        figures = confusion_figures(*counts, beta=beta)
        _warn_undefined(figures, stacklevel=4)
        arguments = dict(zip(("tp", "fp", "tn", "fn"), counts.tolist(), strict=True))
        arguments.update(cutoff=float(cutoff), beta=beta)
        arguments.update((name, float(value)) for name, value in figures.items())
        return cls(**arguments)

    def as_dict(self) -> dict[str, float]:
        """Every field by name."""
        return dict(zip((f.name for f in fields(self)), astuple(self), strict=True))


def _check_beta(beta: Any) -> float:
    try:
        value = float(beta)
    except (TypeError, ValueError):
        raise InvalidDataError(f"Expected beta a positive number, got {beta!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise InvalidDataError(f"Expected beta a positive number, got {beta!r}")
    return value


def _confusion(r: Ranked, cutoff: float, beta: float) -> ConfusionMetrics:
    k = r.predicted_bad(cutoff)
    tp, fp = float(r.bads[:k].sum()), float(r.goods[:k].sum())
    return ConfusionMetrics.from_matrix(
        tp, fp, r.total_goods - fp, r.total_bads - tp, cutoff=cutoff, beta=beta
    )


def confusion_metrics_from_counts(
    table: CountTable,
    *,
    cutoff: float,
    higher_is_riskier: bool = True,
    beta: float = DEFAULT_BETA,
) -> ConfusionMetrics:
    """Confusion-matrix figures of a labeled score table; see :func:`confusion_metrics`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> m = confusion_metrics_from_counts(t, cutoff=0.4)
    >>> m.tp, m.fp, m.tn, m.fn
    (2.0, 1.0, 1.0, 0.0)
    """
    return _confusion(rank(table, higher_is_riskier=higher_is_riskier), cutoff, beta)


def confusion_metrics(
    y_true: Any,
    y_score: Any,
    *,
    cutoff: float,
    sample_weight: Any = None,
    higher_is_riskier: bool = True,
    beta: float = DEFAULT_BETA,
) -> ConfusionMetrics:
    """The confusion matrix at ``cutoff`` and the figures read off it.

    Bads are the positive class; a row is predicted bad when ``score >= cutoff``
    (``score <= cutoff`` when ``higher_is_riskier=False``). See :class:`ConfusionMetrics`
    for each formula.

    References
    ----------
    Powers, D. M. W. (2011). Evaluation: from precision, recall and F-measure to ROC,
    informedness, markedness and correlation. Journal of Machine Learning Technologies 2(1).

    Examples
    --------
    >>> m = confusion_metrics([0, 0, 1, 1, 1], [1, 3, 2, 3, 5], cutoff=3)
    >>> m.precision, m.recall, round(m.mcc, 4)
    (0.6666666666666666, 0.6666666666666666, 0.1667)
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _confusion(rank(table, higher_is_riskier=higher_is_riskier), cutoff, beta)


def average_confusion_metrics(
    matrices: Iterable[ConfusionMetrics | Sequence[float]],
    *,
    average: Literal["macro", "micro"] = "macro",
    beta: float = DEFAULT_BETA,
) -> dict[str, float]:
    """Macro or micro average of the figures of several confusion matrices.

    Each matrix is a :class:`ConfusionMetrics` or a ``(tp, fp, tn, fn)`` tuple. Macro: the
    mean of each figure over the matrices (NaN if it is NaN in one of them); micro: the
    figures of the summed matrix.

    Examples
    --------
    >>> pair = [(8, 2, 5, 1), (3, 3, 9, 2)]
    >>> average_confusion_metrics(pair)["precision"]
    0.65
    >>> average_confusion_metrics(pair, average="micro")["precision"]
    0.6875
    """
    rows = []
    for m in matrices:
        rows.append((m.tp, m.fp, m.tn, m.fn) if isinstance(m, ConfusionMetrics) else tuple(m))
    if not rows:
        raise InvalidDataError("Expected at least one confusion matrix, got none")
    if any(len(row) != 4 for row in rows):
        raise InvalidDataError("Expected each confusion matrix as (tp, fp, tn, fn)")
    counts = np.asarray(rows, dtype=np.float64)
    if not np.isfinite(counts).all() or (counts < 0).any():
        raise InvalidDataError("Expected non-negative finite TP, FP, TN, FN in every matrix")
    beta = _check_beta(beta)
    if average == "micro":
        figures = confusion_figures(*counts.sum(axis=0), beta=beta)
    elif average == "macro":
        figures = {
            k: v.mean(keepdims=True) for k, v in confusion_figures(*counts.T, beta=beta).items()
        }
    else:
        raise InvalidDataError(f"Expected average 'macro' or 'micro', got {average!r}")
    _warn_undefined(figures, stacklevel=3)
    return {name: float(np.asarray(value).reshape(-1)[0]) for name, value in figures.items()}


def _threshold_table(r: Ranked, beta: float) -> pd.DataFrame:
    import pandas as pd

    beta = _check_beta(beta)
    tp, fp = np.cumsum(r.bads), np.cumsum(r.goods)
    tn, fn = r.total_goods - fp, r.total_bads - tp
    f = confusion_figures(tp, fp, tn, fn, beta=beta)
    for name in ("precision", "recall", "fpr", "f_beta"):
        if np.isnan(f[name]).any():
            not_available(
                f"{name} is not available at some thresholds: {_UNDEFINED_WHEN[name]}",
                stacklevel=4,
            )
    return pd.DataFrame(
        {
            "threshold": r.scores,
            "predicted_bads": tp + fp,
            "tp": tp,
            "fp": fp,
            "tn": tn,
            "fn": fn,
            "precision": f["precision"],
            "recall": f["recall"],
            "fpr": f["fpr"],
            "f_measure": f["f_beta"],
        }
    )


def threshold_table_from_counts(
    table: CountTable, *, higher_is_riskier: bool = True, beta: float = DEFAULT_BETA
) -> pd.DataFrame:
    """Figures by threshold of a labeled score table; see :func:`threshold_table`.

    Examples
    --------
    >>> t = CountTable.from_scores([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> threshold_table_from_counts(t)["recall"].tolist()
    [0.5, 1.0, 1.0]
    """
    return _threshold_table(rank(table, higher_is_riskier=higher_is_riskier), beta)


def threshold_table(
    y_true: Any,
    y_score: Any,
    *,
    sample_weight: Any = None,
    higher_is_riskier: bool = True,
    beta: float = DEFAULT_BETA,
) -> pd.DataFrame:
    """Precision, recall and F-measure at every distinct score used as a cutoff.

    One row per distinct score, riskiest first (as Spark MLlib's
    ``BinaryClassificationMetrics.precisionByThreshold`` and friends, without
    down-sampling). Columns: ``threshold``, ``predicted_bads`` (TP + FP), ``tp``, ``fp``,
    ``tn``, ``fn``, ``precision``, ``recall``, ``fpr`` and ``f_measure`` (F_β, see
    :class:`ConfusionMetrics`). The threshold is inclusive, as in :func:`confusion_metrics`.

    Examples
    --------
    >>> frame = threshold_table([0, 1, 1], [1, 2, 3])
    >>> frame[["threshold", "precision", "f_measure"]].to_numpy().tolist()
    [[3.0, 1.0, 0.6666666666666666], [2.0, 1.0, 1.0], [1.0, 0.6666666666666666, 0.8]]
    """
    table = CountTable.from_scores(y_true, y_score, sample_weight=sample_weight)
    return _threshold_table(rank(table, higher_is_riskier=higher_is_riskier), beta)
