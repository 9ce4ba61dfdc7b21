"""Fitting and applying bin definitions."""

import numpy as np
import pandas as pd
import pytest

from riskmon.metrics import (
    Binning,
    InvalidDataError,
    fit_binning,
    infer_kind,
    information_value,
    population_stability_index,
    quantile_edges,
)


def _naive_quantile_edges(x, n_bins, weights=None):
    """numpy's inverted_cdf quantiles, distinct, the maximum dropped."""
    q = np.arange(1, n_bins) / n_bins
    cuts = np.unique(np.quantile(x, q, method="inverted_cdf", weights=weights))
    return cuts[cuts < np.max(x)]


@pytest.mark.parametrize("n_bins", [2, 3, 7, 10, 20])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quantile_edges_match_numpy_inverted_cdf(seed, n_bins):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 30, 997).astype(float)  # many ties
    np.testing.assert_array_equal(quantile_edges(x, n_bins), _naive_quantile_edges(x, n_bins))
    w = rng.integers(1, 6, x.size).astype(float)
    np.testing.assert_array_equal(
        quantile_edges(x, n_bins, sample_weight=w), _naive_quantile_edges(x, n_bins, w)
    )


def test_quantile_bins_have_equal_frequency_without_ties():
    x = np.random.default_rng(3).permutation(1000).astype(float)
    b = fit_binning(x, n_bins=10)
    counts = np.bincount(b.assign(x), minlength=b.n_bins)
    assert counts.tolist() == [100] * 10 + [0]
    # pandas' qcut agrees when no value is tied (same counts per bin)
    assert pd.qcut(x, 10).value_counts().tolist() == [100] * 10


def test_ties_are_never_split_and_fewer_bins_are_reported():
    x = np.r_[np.zeros(700), np.ones(200), np.arange(2, 102)]
    b = fit_binning(x, n_bins=10)
    # deciles 1..7 all fall on 0, 8..9 on 1 and later values
    assert b.edges[:2] == (0.0, 1.0)
    assert b.n_value_bins < 10
    index = b.assign(x)
    for value in (0.0, 1.0):
        assert np.unique(index[x == value]).size == 1
    r = information_value(x, (np.arange(x.size) % 3 == 0).astype(int), n_bins=10)
    assert r.n_bins_requested == 10
    assert r.binning is not None
    assert r.binning.n_value_bins == b.n_value_bins
    assert r.notes[0].startswith(f"10 quantile bins asked for, {b.n_value_bins} fitted")


def test_constant_and_all_missing_give_one_value_bin():
    assert fit_binning([5.0, 5.0, 5.0]).edges == ()
    assert fit_binning([None, np.nan], kind="numeric").edges == ()
    assert fit_binning([5.0, 5.0], method="uniform").edges == ()
    r = population_stability_index([5.0] * 4, [5.0] * 4, n_bins=10)
    assert r.n_bins_requested == 10
    assert "1 fitted" in r.notes[0]


def test_uniform_edges_are_equally_spaced():
    x = np.array([0.0, 1.0, 3.0, 10.0, np.nan])
    b = fit_binning(x, method="uniform", n_bins=5)
    assert b.edges == (2.0, 4.0, 6.0, 8.0)
    # empty equal-width bins are kept: that is what equal width means
    assert np.bincount(b.assign(x), minlength=b.n_bins).tolist() == [2, 1, 0, 0, 1, 1]


def test_infinite_values_set_no_edge_but_are_binned():
    x = np.array([-np.inf, 1.0, 2.0, 3.0, 4.0, np.inf])
    b = fit_binning(x, n_bins=2)
    assert b.edges == (2.0,)
    assert b.assign(x).tolist() == [0, 0, 0, 1, 1, 1]


def test_numeric_bins_are_right_closed_and_missing_has_its_bin():
    b = fit_binning([1, 2, 3], edges=[1.5, 2.0])
    assert b.labels == ("(-inf, 1.5]", "(1.5, 2]", "(2, inf)", "missing")
    assert b.assign([1.5, 2.0, 2.0001, None, np.nan, -7]).tolist() == [0, 1, 2, 3, 3, 0]
    assert b.assign(pd.Series([1, None], dtype="Int64")).tolist() == [0, 3]


def test_explicit_edges_must_increase():
    with pytest.raises(InvalidDataError, match=r"strictly increasing finite bin edges"):
        fit_binning([1.0], edges=[2.0, 1.0])
    with pytest.raises(InvalidDataError, match=r"Expected no edges for a categorical"):
        fit_binning(["a"], edges=[1.0])


def test_numeric_binning_rejects_text():
    b = Binning("numeric", edges=(1.0,))
    with pytest.raises(InvalidDataError, match=r"Expected numeric values to bin, got \['x'\]"):
        b.assign([1.0, "x"])
    with pytest.raises(InvalidDataError, match=r"Expected numeric values"):
        fit_binning(["a", "b"], kind="numeric")


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        (np.array([1, 2]), "numeric"),
        ([1.5, None], "numeric"),
        (pd.Series([1, None], dtype="Int64"), "numeric"),
        (["a", None], "categorical"),
        (np.array(["a", "b"]), "categorical"),
        ([True, False], "categorical"),
        (pd.Series(["1", "2"], dtype="category"), "categorical"),
        (pd.Categorical([1, 2]), "categorical"),
    ],
)
def test_kind_is_inferred_from_dtype(values, kind):
    assert infer_kind(values) == kind


def test_kind_overrides_inference():
    b = fit_binning([3, 1, 2, 1], kind="categorical")
    assert b.levels == (("1",), ("2",), ("3",))
    assert b.assign([1, 3, 4, None]).tolist() == [0, 2, 4, 3]


def test_categorical_levels_missing_and_unseen():
    b = fit_binning(["b", "a", None, "b", np.nan])
    assert b.labels == ("a", "b", "missing", "unseen")
    assert b.assign(["a", "b", None, "zzz", np.nan, pd.NA]).tolist() == [0, 1, 2, 3, 2, 2]


def test_rare_levels_are_grouped_by_weighted_share():
    x = ["a"] * 50 + ["b"] * 30 + ["c"] * 4 + ["d"] * 1 + [None] * 15
    b = fit_binning(x, min_level_share=0.05)
    # shares of the 85 non-missing rows: c = 4/85 < 5 %, d = 1/85 < 5 %
    assert b.levels == (("a",), ("b",), ("c", "d"))
    assert b.assign(["c", "d", "e"]).tolist() == [2, 2, 4]
    w = np.r_[np.ones(80), np.full(4, 10.0), np.ones(16)]
    assert fit_binning(x, min_level_share=0.05, sample_weight=w).levels == (
        ("a",),
        ("b",),
        ("c",),
        ("d",),
    )


def test_min_level_share_is_validated():
    with pytest.raises(InvalidDataError, match=r"Expected min_level_share in \(0, 1\), got 1.5"):
        fit_binning(["a"], min_level_share=1.5)
    with pytest.raises(InvalidDataError, match=r"only for a categorical"):
        fit_binning([1.0], min_level_share=0.1)


@pytest.mark.parametrize("n_bins", [0, -1, 2.5, True])
def test_n_bins_is_validated(n_bins):
    with pytest.raises(InvalidDataError, match=r"Expected n_bins an integer >= 1"):
        fit_binning([1.0, 2.0], n_bins=n_bins)


def test_method_and_kind_are_validated():
    with pytest.raises(InvalidDataError, match=r"Expected method 'quantile' or 'uniform'"):
        fit_binning([1.0], method="kmeans")
    with pytest.raises(InvalidDataError, match=r"Expected kind 'numeric' or 'categorical'"):
        fit_binning([1.0], kind="ordinal")


@pytest.mark.parametrize(
    "container",
    [list, np.array, pd.Series, pd.Categorical, lambda v: pd.Series(v, dtype="category")],
)
def test_categorical_assign_matches_text_lookup(container):
    rng = np.random.default_rng(7)
    pool = ["x", "y", "z", "w", None]
    raw = [pool[i] for i in rng.integers(0, len(pool), 500)]
    b = Binning("categorical", levels=(("x",), ("y", "z")))
    values = container(raw)
    expected = [
        b.missing_index if v is None else {"x": 0, "y": 1, "z": 1}.get(v, b.unseen_index)
        for v in raw
    ]
    assert b.assign(values).tolist() == expected


def test_declared_but_absent_categories_are_not_levels():
    x = pd.Categorical(["a", "a", None], categories=["a", "b", "c"])
    b = fit_binning(x)
    assert b.levels == (("a",),)
    assert b.assign(pd.Categorical(["b", "a"], categories=["a", "b", "c"])).tolist() == [2, 0]


def test_level_text_of_numbers_follows_the_container():
    # a list keeps Python ints ("1"); a float array reads as floats ("1.0")
    assert fit_binning([1, 2, None], kind="categorical").levels == (("1",), ("2",))
    assert fit_binning(np.array([1.0, 2.0]), kind="categorical").levels == (("1.0",), ("2.0",))


def test_fitted_binnings_round_trip_through_dict():
    for b in (
        fit_binning(np.arange(100.0), n_bins=4),
        fit_binning(["a", "b", "c", "c"], min_level_share=0.3),
    ):
        assert Binning.from_dict(b.to_dict()) == b


def test_describe_gives_bounds_and_levels():
    d = Binning("numeric", edges=(1.0, 2.0)).describe()
    assert d["lower"].tolist()[:3] == [-np.inf, 1.0, 2.0]
    assert d["upper"].tolist()[:3] == [1.0, 2.0, np.inf]
    assert d["lower"].isna().tolist() == [False, False, False, True]
    c = Binning("categorical", levels=(("a", "b"),)).describe()
    assert c["levels"].tolist() == [("a", "b"), (), ()]
    assert c["bin"].tolist() == ["a|b", "missing", "unseen"]


def test_bounds_give_each_bin_its_interval_and_a_special_value_its_own():
    lower, upper = Binning("numeric", edges=(1.0, 2.0), special=(-9.0,)).bounds()
    # three intervals, the missing bin (no bounds), the special value's bin
    np.testing.assert_array_equal(lower, [-np.inf, 1.0, 2.0, np.nan, -9.0])
    np.testing.assert_array_equal(upper, [1.0, 2.0, np.inf, np.nan, -9.0])
    lower, upper = Binning("categorical", levels=(("a",), ("b",))).bounds()
    assert np.isnan(lower).all()
    assert np.isnan(upper).all()
    assert lower.size == upper.size == 4  # a, b, missing, unseen
