"""Fitting and applying bin definitions."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riskmon.metrics import (
    Binning,
    InvalidDataError,
    fit_binning,
    infer_kind,
    information_value,
    numeric_values,
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


def _by_pandas(values: list[object]) -> np.ndarray:
    """What pandas makes of values to bin (as ``numeric_values`` read every list before it read
    plain numbers itself): ``to_numeric``, missing values as NaN."""
    series = pd.Series(values)
    return pd.to_numeric(series, errors="coerce").to_numpy(np.float64, na_value=np.nan)


_NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.none(),
    st.floats(-1e6, 1e6).map(np.float64),
    st.booleans(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
)


@settings(max_examples=300)
@given(values=st.lists(_NUMBERS, max_size=30))
def test_numeric_values_read_numbers_as_pandas_does(values: list[object]) -> None:
    """Floats, integers, NaN, None read without pandas (``_plain_numbers``) and those it leaves
    to pandas (booleans, Decimals, integers beyond 2**53) give what ``pandas.to_numeric`` gives,
    to the bit (-0.0 and NaN included)."""
    got = numeric_values(values)
    assert got.dtype == np.float64
    want = _by_pandas(values)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    as_array = numeric_values(np.asarray([*values, None], dtype=object)[:-1])
    assert np.array_equal(as_array, got, equal_nan=True)


def test_numeric_values_of_plain_numbers_do_not_import_pandas() -> None:
    code = (
        "import sys\n"
        "from riskmon.metrics import numeric_values\n"
        "x = numeric_values([1, 2.5, None, float('nan'), -(2**53)])\n"
        "assert str(x.tolist()) == '[1.0, 2.5, nan, nan, -9007199254740992.0]', x\n"
        "assert 'pandas' not in sys.modules\n"
        "numeric_values(['1.5'])\n"
        "assert 'pandas' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_numeric_values_name_the_text_they_cannot_read() -> None:
    with pytest.raises(InvalidDataError, match=r"got \['x'\]"):
        numeric_values([1.0, None, "x"])


def _fit_levels_by_pandas(values, *, min_level_share, max_levels, weights):
    """The categorical fit as it was written with pandas alone: factorize, a group-by sum of
    each text's weight, the most frequent ``max_levels`` (ties by text) or the rare levels
    under ``min_level_share`` grouped."""
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    texts = np.asarray([str(v) for v in uniques], dtype=object)
    seen = codes >= 0
    per_code = np.bincount(
        codes[seen],
        weights=None if weights is None else np.asarray(weights)[seen],
        minlength=len(texts),
    )
    observed = np.bincount(codes[seen], minlength=len(texts)) > 0
    weight_of = pd.Series(per_code[observed], index=texts[observed]).groupby(level=0).sum()
    levels = sorted(weight_of.index)
    if max_levels is not None and len(levels) > max_levels:
        kept = sorted(levels, key=lambda lvl: (-float(weight_of[lvl]), lvl))[:max_levels]
        return Binning("categorical", levels=tuple((lvl,) for lvl in sorted(kept)), other=True)
    if min_level_share is None:
        return Binning("categorical", levels=tuple((lvl,) for lvl in levels))
    total = float(weight_of.sum())
    rare = {lvl for lvl in levels if total > 0 and weight_of[lvl] / total < min_level_share}
    groups = [(lvl,) for lvl in levels if lvl not in rare]
    if rare:
        groups.append(tuple(sorted(rare)))
    return Binning("categorical", levels=tuple(groups))


_LEVELS = st.one_of(st.sampled_from(["a", "b", "B", "é", "", "1", "a b"]), st.none())


@settings(max_examples=300)
@given(
    values=st.lists(st.one_of(_LEVELS, st.integers(0, 2)), min_size=1, max_size=40),
    texts_only=st.booleans(),
    weighted=st.booleans(),
    rule=st.sampled_from(
        [("max_levels", 1), ("max_levels", 3), ("share", 0.1), ("share", 0.3), None]
    ),
    data=st.data(),
)
def test_categorical_levels_are_fitted_as_pandas_fitted_them(
    values, texts_only, weighted, rule, data
):
    """Texts alone (read without pandas) and texts mixed with integers (1 and "1" share a
    level: pandas adds them up) give the levels pandas' factorize and group-by gave."""
    if texts_only:
        values = [v if v is None or isinstance(v, str) else str(v) for v in values]
    weights = None
    if weighted:
        weights = data.draw(st.lists(st.floats(0, 1e3), min_size=len(values), max_size=len(values)))
    kwargs = {
        "min_level_share": rule[1] if rule and rule[0] == "share" else None,
        "max_levels": rule[1] if rule and rule[0] == "max_levels" else None,
    }
    want = _fit_levels_by_pandas(values, weights=weights, **kwargs)
    for given_as in (values, np.asarray([*values, None], dtype=object)[:-1]):
        assert fit_binning(given_as, kind="categorical", sample_weight=weights, **kwargs) == want
