"""The count-table core: every constructor gives the same table, and bad input raises."""

import numpy as np
import pytest

from riskmon.metrics import Binning, CountTable, InvalidDataError


def _sample(seed=0, n=500):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    score = rng.integers(0, 40, n) / 4  # ties
    w = rng.uniform(0.1, 3.0, n)
    return y, score, w


def test_from_scores_golden():
    t = CountTable.from_scores([0, 1, 1, 0, 1], [0.2, 0.2, 0.5, 0.9, 0.9])
    assert t.values.tolist() == [0.2, 0.5, 0.9]
    assert t.labels == ("0.2", "0.5", "0.9")
    assert t.n_total.tolist() == [2, 1, 2]
    assert t.n_bads.tolist() == [1, 1, 1]
    assert t.goods.tolist() == [1.0, 0.0, 1.0]
    assert t.n_goods.tolist() == [1, 0, 1]
    assert len(t) == 3


@pytest.mark.parametrize("seed", range(3))
def test_unweighted_and_unit_weight_paths_agree(seed):
    y, score, _ = _sample(seed)
    plain = CountTable.from_scores(y, score)
    unit = CountTable.from_scores(y, score, sample_weight=np.ones(y.size))
    assert plain.equals(unit)
    assert plain.total.sum() == y.size
    assert plain.bads.sum() == y.sum()


@pytest.mark.parametrize("seed", range(3))
def test_from_values_is_from_scores_without_labels(seed):
    y, score, w = _sample(seed)
    assert CountTable.from_values(score, sample_weight=w).equals(
        CountTable.from_scores(y, score, sample_weight=w).unlabeled(), rtol=1e-12
    )


@pytest.mark.parametrize("seed", range(3))
def test_from_rows_agrees_with_from_scores(seed):
    y, score, w = _sample(seed)
    # the rows of "GROUP BY score, label", split in two chunks so keys repeat
    rows = []
    for part in (slice(0, 200), slice(200, None)):
        for s in np.unique(score[part]):
            for label in (0, 1):
                mask = (score[part] == s) & (y[part] == label)
                if mask.any():
                    rows.append((float(s), label, int(mask.sum()), float(w[part][mask].sum())))
    from_rows = CountTable.from_rows(rows)
    assert from_rows.equals(CountTable.from_scores(y, score, sample_weight=w), rtol=1e-12)
    unweighted = CountTable.from_rows([(s, lbl, n, None) for s, lbl, n, _ in rows])
    assert unweighted.equals(CountTable.from_scores(y, score))


@pytest.mark.parametrize("seed", range(3))
def test_from_bins_agrees_with_from_rows_and_with_scores(seed):
    y, score, w = _sample(seed)
    binning = Binning("numeric", edges=(2.0, 5.0, 7.5))
    index = binning.assign(score)
    by_bins = CountTable.from_bins(index, binning, y, sample_weight=w)
    rows = [
        (
            b,
            label,
            int(((index == b) & (y == label)).sum()),
            float(w[(index == b) & (y == label)].sum()),
        )
        for b in range(binning.n_bins)
        for label in (0, 1)
    ]
    assert by_bins.equals(CountTable.from_rows(rows, binning=binning), rtol=1e-12)
    # bin totals equal the score table summed over each bin's scores
    scores = CountTable.from_scores(y, score, sample_weight=w)
    score_bin = binning.assign(scores.values)
    np.testing.assert_allclose(by_bins.total, np.bincount(score_bin, scores.total, binning.n_bins))
    np.testing.assert_allclose(by_bins.bads, np.bincount(score_bin, scores.bads, binning.n_bins))
    assert by_bins.labels == binning.labels
    assert by_bins.binning is binning


def test_unlabeled_rows_ignore_labels():
    binning = Binning("categorical", levels=(("a",), ("b",)))
    t = CountTable.from_rows(
        [(0, None, 3, None), (1, None, 2, 4.0), (0, None, 1, None)], binning=binning, labeled=False
    )
    assert not t.labeled
    assert t.n_total.tolist() == [4, 2, 0, 0]
    assert t.total.tolist() == [4.0, 4.0, 0.0, 0.0]


def test_rows_of_any_numeric_types_count_as_python_numbers_would() -> None:
    """Labels and counts as a driver may return them (Decimal, numpy, bool), weights missing on
    some rows only; a label that is not 0 or 1 is named as the first such row holds it."""
    from decimal import Decimal

    t = CountTable.from_rows(
        [
            (0.25, Decimal("1"), Decimal("3"), None),
            (0.25, np.int64(0), np.int64(2), 1.5),
            (0.75, True, 1, Decimal("2.5")),
            (0.75, 0.0, 4.0, None),
        ]
    )
    assert t.n_total.tolist() == [5, 5]
    assert t.total.tolist() == [4.5, 6.5]
    assert t.n_bads.tolist() == [3, 1]
    assert t.bads.tolist() == [3.0, 2.5]
    with pytest.raises(InvalidDataError, match=r"got nan"):
        CountTable.from_rows([(0.5, 1, 1, None), (0.5, float("nan"), 1, None), (0.6, 2, 1, None)])
    empty = CountTable.from_rows([])
    assert empty.n_total.tolist() == []
    assert empty.n_bads.tolist() == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: CountTable.from_scores([0, 2], [0.1, 0.2]),
            r"Expected label values 0 and 1 in 'y_true', got \[2\]",
        ),
        (
            lambda: CountTable.from_scores([0, 1], [0.1]),
            r"Expected 2 rows in 'y_score' to match y_true, got 1",
        ),
        (
            lambda: CountTable.from_scores([0, 1], [0.1, np.nan]),
            r"Expected finite numeric scores in 'y_score'",
        ),
        (
            lambda: CountTable.from_scores([0, 1], ["a", "b"]),
            r"Expected numeric scores in 'y_score'",
        ),
        (
            lambda: CountTable.from_scores([0, 1], [0.1, 0.2], sample_weight=[1.0, -2.0]),
            r"Expected non-negative weights in 'sample_weight', got \[-2.0\]",
        ),
        (
            lambda: CountTable.from_values([0.1, 0.2], sample_weight=[1.0]),
            r"Expected 2 rows in 'sample_weight'",
        ),
        (
            lambda: CountTable.from_bins([0, 5], Binning("numeric", edges=(1.0,))),
            r"Expected bin indices in \[0, 3\), got 0..5",
        ),
        (
            lambda: CountTable.from_bins([0, 1], Binning("numeric"), [0, 1, 1]),
            r"Expected 2 rows in 'y_true'",
        ),
        (
            lambda: CountTable.from_rows([(0.5, 2, 1, None)]),
            r"Expected label values 0 and 1, got 2",
        ),
        (
            lambda: CountTable.from_rows([(0.5, 1, 1, -1.0)]),
            r"Expected non-negative weights in 'weight_sum'",
        ),
        (
            lambda: CountTable.from_rows([(7, 1, 1, None)], binning=Binning("numeric")),
            r"Expected bin indices in \[0, 2\)",
        ),
    ],
)
def test_malformed_input_raises(call, message):
    with pytest.raises(InvalidDataError, match=message):
        call()


def test_direct_construction_is_validated():
    one = np.ones(2)
    ints = np.ones(2, dtype=np.int64)
    with pytest.raises(InvalidDataError, match=r"Expected total of length 3"):
        CountTable(("a", "b", "c"), one, ints)
    with pytest.raises(InvalidDataError, match=r"Expected both bads and n_bads"):
        CountTable(("a", "b"), one, ints, bads=one)
    with pytest.raises(InvalidDataError, match=r"Expected bads <= total"):
        CountTable(("a", "b"), one, ints, bads=one * 2, n_bads=ints)
    with pytest.raises(InvalidDataError, match=r"Expected non-negative counts"):
        CountTable(("a", "b"), -one, ints)
    with pytest.raises(InvalidDataError, match=r"strictly increasing score values"):
        CountTable(("a", "b"), one, ints, values=np.array([2.0, 1.0]))
    with pytest.raises(InvalidDataError, match=r"Expected 2 rows for the binning, got 3"):
        CountTable(("a", "b", "c"), np.ones(3), np.ones(3, np.int64), binning=Binning("numeric"))
    with pytest.raises(InvalidDataError, match=r"Expected a labeled count table"):
        _ = CountTable.from_values([1.0]).goods


def test_oriented_reverses_rows_and_negates_scores():
    t = CountTable.from_scores([0, 1, 1], [1.0, 2.0, 3.0])
    r = t.oriented(higher_is_riskier=False)
    assert r.labels == ("3", "2", "1")
    assert r.values.tolist() == [-3.0, -2.0, -1.0]
    assert r.bads.tolist() == [1.0, 1.0, 0.0]
    assert t.oriented(higher_is_riskier=True) is t


def test_equals_and_to_frame():
    t = CountTable.from_scores([0, 1], [1.0, 2.0], sample_weight=[1.0, 2.0])
    assert not t.equals(t.unlabeled())
    assert not t.equals(CountTable.from_scores([0, 1], [1.0, 2.0]))
    frame = t.to_frame()
    assert frame.columns.tolist() == ["bin", "score", "n_total", "total", "n_bads", "bads", "goods"]
    assert frame["goods"].tolist() == [1.0, 0.0]
