"""Confusion-matrix figures at a cutoff, threshold table and averages."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import sklearn.metrics as skm

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import (
    ConfusionMetrics,
    CountTable,
    average_confusion_metrics,
    confusion_metrics,
    confusion_metrics_from_counts,
    threshold_table,
    threshold_table_from_counts,
)

from . import samples

TOL = 1e-10


#: labels, heavily tied scores that separate somewhat, and optional weights
tied_sample = partial(samples.tied_sample, bad_rate=0.3, shift=1.0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("quantile", [0.3, 0.6, 0.85])
def test_figures_match_sklearn(seed, weighted, quantile):
    y, s, w = tied_sample(seed, 600, weighted=weighted)
    cutoff = float(np.quantile(s, quantile))
    m = confusion_metrics(y, s, cutoff=cutoff, sample_weight=w, beta=2.0)
    pred = (s >= cutoff).astype(int)  # inclusive cutoff
    tn, fp, fn, tp = skm.confusion_matrix(y, pred, sample_weight=w).ravel()
    assert (m.tp, m.fp, m.tn, m.fn) == pytest.approx((tp, fp, tn, fn), abs=TOL)
    checks = {
        "accuracy": skm.accuracy_score(y, pred, sample_weight=w),
        "precision": skm.precision_score(y, pred, sample_weight=w),
        "recall": skm.recall_score(y, pred, sample_weight=w),
        "specificity": skm.recall_score(y, pred, pos_label=0, sample_weight=w),
        "npv": skm.precision_score(y, pred, pos_label=0, sample_weight=w),
        "f1": skm.f1_score(y, pred, sample_weight=w),
        "f_beta": skm.fbeta_score(y, pred, beta=2.0, sample_weight=w),
        "mcc": skm.matthews_corrcoef(y, pred, sample_weight=w),
        "kappa": skm.cohen_kappa_score(y, pred, sample_weight=w),
        "informedness": skm.balanced_accuracy_score(y, pred, sample_weight=w, adjusted=True),
    }
    for name, expected in checks.items():
        assert abs(getattr(m, name) - expected) < TOL, name
    assert m.error_rate == pytest.approx(1 - checks["accuracy"], abs=TOL)
    assert m.fpr == pytest.approx(1 - checks["specificity"], abs=TOL)
    assert m.fnr == pytest.approx(1 - checks["recall"], abs=TOL)
    assert m.fdr == pytest.approx(1 - checks["precision"], abs=TOL)
    assert m.markedness == pytest.approx(checks["precision"] + checks["npv"] - 1, abs=TOL)


def test_golden_matrix():
    # TP=40, FP=10, TN=45, FN=5 (N=100). MCC = (40·45 − 10·5)/√(50·45·55·50)
    # = 1750/√6187500; κ: p_o = 0.85, p_e = (50·45 + 50·55)/100² = 0.5 -> κ = 0.7
    m = ConfusionMetrics.from_matrix(40, 10, 45, 5)
    assert m.accuracy == 0.85
    assert m.precision == 0.8
    assert m.recall == pytest.approx(40 / 45)
    assert m.specificity == pytest.approx(45 / 55)
    assert m.npv == pytest.approx(0.9)
    assert m.mcc == pytest.approx(1750 / np.sqrt(6187500))
    assert m.kappa == pytest.approx(0.7)
    assert m.informedness == pytest.approx(40 / 45 + 45 / 55 - 1)
    assert m.markedness == pytest.approx(0.7)
    assert m.f1 == pytest.approx(2 * 0.8 * (40 / 45) / (0.8 + 40 / 45))
    assert m.as_dict()["tp"] == 40.0


def test_cutoff_is_inclusive_in_both_directions():
    y, s = [0, 1, 1, 0], [1, 2, 3, 4]
    assert confusion_metrics(y, s, cutoff=3).tp == 1.0  # scores 3, 4 predicted bad
    # points: lower is riskier; scores 1, 2, 3 predicted bad
    m = confusion_metrics(y, s, cutoff=3, higher_is_riskier=False)
    assert (m.tp, m.fp, m.tn, m.fn) == (2.0, 1.0, 1.0, 0.0)


def test_nothing_predicted_bad_warns_for_precision():
    with pytest.warns(DegenerateDataWarning, match=r"precision: no rows are predicted bad"):
        m = confusion_metrics([0, 1, 1], [1, 2, 3], cutoff=10)
    assert np.isnan(m.precision)
    assert np.isnan(m.mcc)
    assert m.recall == 0.0
    assert m.f1 == 0.0  # bads exist: F is defined (and 0)


def test_threshold_table_matches_sklearn_curve():
    y, s, w = tied_sample(5, 500, weighted=True)
    frame = threshold_table(y, s, sample_weight=w, beta=0.5)
    p, r, t = skm.precision_recall_curve(y, s, sample_weight=w)
    np.testing.assert_array_equal(frame["threshold"], t[::-1])
    np.testing.assert_allclose(frame["precision"], p[:-1][::-1], atol=TOL)
    np.testing.assert_allclose(frame["recall"], r[:-1][::-1], atol=TOL)
    expected_f = 1.25 * p[:-1] * r[:-1] / (0.25 * p[:-1] + r[:-1])
    np.testing.assert_allclose(frame["f_measure"], expected_f[::-1], atol=TOL)
    table = CountTable.from_scores(y, s, sample_weight=w)
    assert threshold_table_from_counts(table, beta=0.5).equals(frame)


def test_each_threshold_row_equals_confusion_metrics_at_that_cutoff():
    y, s, _ = tied_sample(6, 200)
    frame = threshold_table(y, s)
    for row in frame.iloc[:-1:7].itertuples():  # the last row predicts no goods: NPV NaN
        m = confusion_metrics(y, s, cutoff=row.threshold)
        assert (m.tp, m.fp, m.tn, m.fn) == (row.tp, row.fp, row.tn, row.fn)


def test_macro_and_micro_averages_match_sklearn_one_vs_rest():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, 400)
    guess = np.where(rng.random(400) < 0.6, truth, rng.integers(0, 3, 400))
    matrices = skm.multilabel_confusion_matrix(truth, guess)  # per class [[tn, fp], [fn, tp]]
    per_class = [(m[1, 1], m[0, 1], m[0, 0], m[1, 0]) for m in matrices]
    macro = average_confusion_metrics(per_class)
    micro = average_confusion_metrics(per_class, average="micro")
    for name, fn in [("precision", skm.precision_score), ("recall", skm.recall_score)]:
        assert abs(macro[name] - fn(truth, guess, average="macro")) < TOL
        assert abs(micro[name] - fn(truth, guess, average="micro")) < TOL
    assert abs(macro["f1"] - np.mean(skm.f1_score(truth, guess, average=None))) < TOL
    objects = [ConfusionMetrics.from_matrix(*m) for m in per_class]
    assert average_confusion_metrics(objects) == macro


def test_from_counts_twin():
    y, s, _ = tied_sample(8, 300)
    table = CountTable.from_scores(y, s)
    assert confusion_metrics_from_counts(table, cutoff=0.5) == confusion_metrics(y, s, cutoff=0.5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: confusion_metrics([0, 1], [1, 2], cutoff="high"), "Expected a numeric cutoff"),
        (lambda: confusion_metrics([0, 1], [1, 2], cutoff=1, beta=0), "Expected beta a positive"),
        (lambda: ConfusionMetrics.from_matrix(1, -1, 1, 1), "Expected non-negative finite"),
        (lambda: average_confusion_metrics([]), "at least one confusion matrix"),
        (lambda: average_confusion_metrics([(1, 2, 3)]), r"as \(tp, fp, tn, fn\)"),
        (
            lambda: average_confusion_metrics([(1, 2, 3, 4)], average="weighted"),
            "Expected average 'macro' or 'micro', got 'weighted'",
        ),
        (lambda: confusion_metrics([0, 3], [1, 2], cutoff=1), "Expected label values 0 and 1"),
    ],
)
def test_malformed_input_raises(call, message):
    with pytest.raises(InvalidDataError, match=message):
        call()
