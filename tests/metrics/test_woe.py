"""Weight of evidence and information value."""

import math

import numpy as np
import pandas as pd
import pytest

from riskmon.metrics import (
    Binning,
    CountTable,
    DegenerateDataWarning,
    InvalidDataError,
    fit_binning,
    information_value,
    information_value_from_counts,
    iv_band,
    woe_table,
    woe_table_from_counts,
)

LEVELS = Binning("categorical", levels=(("A",), ("B",), ("C",)))


def _golden_table():
    # A: 3 goods 1 bad; B: 1 good 3 bads; C: 2 goods 0 bads; missing, unseen: no rows
    x = ["A"] * 4 + ["B"] * 4 + ["C"] * 2
    y = [0, 0, 0, 1, 0, 1, 1, 1, 0, 0]  # A: 0 0 0 1, B: 0 1 1 1, C: 0 0
    return CountTable.from_bins(LEVELS.assign(x), LEVELS, y)


def test_golden_values_with_a_bin_without_bads():
    # By hand: G = 6 goods, B = 4 bads.  %g = 3/6, 1/6, 2/6;  %b = 1/4, 3/4, 0.
    # C has no bads: its %b is the pseudo-count over the bad rows, 0.5 / 4 = 0.125.
    woe = [math.log(0.5 / 0.25), math.log((1 / 6) / 0.75), math.log((2 / 6) / 0.125)]
    iv = (0.5 - 0.25) * woe[0] + (1 / 6 - 0.75) * woe[1] + (2 / 6 - 0.125) * woe[2]  # = 1.2550...
    r = information_value_from_counts(_golden_table())
    assert float(r) == pytest.approx(iv, abs=1e-12)
    assert float(r) == pytest.approx(1.2550045, abs=1e-6)
    assert r.band == "suspicious"
    assert r.smoothing == 0.5
    assert (r.n_goods, r.n_bads, r.n_bins) == (6, 4, 3)
    t = r.table
    np.testing.assert_allclose(t["woe"].to_numpy()[:3], woe, rtol=0, atol=1e-12)
    assert t["smoothed"].tolist() == [False, False, True, False, False]
    assert t["empty"].tolist() == [False, False, False, True, True]
    # raw counts and raw shares are shown as observed, not smoothed
    assert t["bads"].tolist() == [1.0, 3.0, 0.0, 0.0, 0.0]
    assert t["bads_share"].tolist()[:3] == [0.25, 0.75, 0.0]
    assert t["bads_share_used"].tolist()[:3] == [0.25, 0.75, 0.125]
    # empty bins: contribution 0 by definition, WOE not invented
    assert t["iv_contribution"].tolist()[3:] == [0.0, 0.0]
    assert t["woe"].isna().tolist() == [False, False, False, True, True]
    assert t["bad_rate"].tolist()[:3] == [0.25, 0.75, 0.0]
    assert t.attrs["smoothing"] == 0.5
    assert r.notes == ("zero cells smoothed with a pseudo-count of 0.5 rows in: C",)


def test_smoothing_is_a_parameter_that_changes_only_zero_cells():
    r = information_value_from_counts(_golden_table(), smoothing=1.0)
    t = r.table
    assert r.smoothing == 1.0
    assert t["bads_share_used"].tolist()[:3] == [0.25, 0.75, 0.25]
    expected = (
        0.25 * math.log(2)
        + (1 / 6 - 0.75) * math.log((1 / 6) / 0.75)
        + (2 / 6 - 0.25) * math.log((2 / 6) / 0.25)
    )
    assert float(r) == pytest.approx(expected, abs=1e-12)


def test_no_smoothing_when_every_cell_is_filled():
    # two bins, 2 goods/1 bad and 1 good/2 bads: IV = 2 · (2/3 − 1/3) · ln 2
    r = information_value(["a", "a", "a", "b", "b", "b"], [0, 0, 1, 0, 1, 1])
    assert float(r) == pytest.approx(2 / 3 * math.log(2), abs=1e-12)
    assert r.notes == ()
    assert not r.table["smoothed"].any()


def test_woe_is_positive_for_safer_bins():
    t = woe_table(["lo"] * 10 + ["hi"] * 10, [0] * 9 + [1] + [0] * 4 + [1] * 6)
    by_bin = dict(zip(t["bin"], t["woe"], strict=True))
    assert by_bin["lo"] > 0 > by_bin["hi"]


def test_raw_values_and_count_table_agree():
    rng = np.random.default_rng(5)
    x = np.where(rng.random(3000) < 0.1, np.nan, rng.integers(0, 40, 3000).astype(float))
    y = (rng.random(3000) < 0.2).astype(int)
    w = rng.uniform(0.5, 3.0, 3000)
    b = fit_binning(x, n_bins=8, sample_weight=w)
    table = CountTable.from_bins(b.assign(x), b, y, sample_weight=w)
    raw = information_value(x, y, n_bins=8, sample_weight=w)
    assert float(raw) == float(information_value_from_counts(table))
    pd.testing.assert_frame_equal(
        woe_table(x, y, n_bins=8, sample_weight=w), woe_table_from_counts(table)
    )


def _reference_iv(x, y, w, binning, smoothing):
    """WOE/IV recomputed with plain pandas, bins built without Binning.assign."""
    frame = pd.DataFrame({"y": y, "w": w})
    if binning.kind == "numeric":
        cut = pd.cut(
            pd.Series(x, dtype=float), [-np.inf, *binning.edges, np.inf], right=True, labels=False
        )
        frame["bin"] = cut.fillna(binning.missing_index).astype(int)
    else:
        group = {lvl: i for i, levels in enumerate(binning.levels) for lvl in levels}
        frame["bin"] = [
            binning.missing_index if pd.isna(v) else group.get(str(v), binning.unseen_index)
            for v in x
        ]
    frame["good_w"] = frame["w"] * (frame["y"] == 0)
    frame["bad_w"] = frame["w"] * (frame["y"] == 1)
    per_bin = frame.groupby("bin")[["good_w", "bad_w"]].sum()
    per_bin = per_bin.reindex(range(binning.n_bins), fill_value=0.0)
    n_goods, n_bads = int((frame["y"] == 0).sum()), int((frame["y"] == 1).sum())
    g = per_bin["good_w"] / per_bin["good_w"].sum()
    b = per_bin["bad_w"] / per_bin["bad_w"].sum()
    empty = (per_bin["good_w"] == 0) & (per_bin["bad_w"] == 0)
    g = g.mask((per_bin["good_w"] == 0) & ~empty, smoothing / n_goods)
    b = b.mask((per_bin["bad_w"] == 0) & ~empty, smoothing / n_bads)
    woe = np.log(g / b).where(~empty)
    iv = ((g - b) * woe).where(~empty, 0.0)
    return woe, iv.sum()


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_an_independent_pandas_reference(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    y = (rng.random(n) < 0.15).astype(int)
    w = rng.integers(1, 5, n) * 0.75
    numeric = rng.integers(0, 25, n).astype(float) + 3 * y  # ties, some signal
    numeric[rng.random(n) < 0.08] = np.nan
    levels = np.array(["north", "south", "east", "west", "tiny"], dtype=object)
    categorical = levels[rng.choice(5, n, p=[0.4, 0.3, 0.2, 0.097, 0.003])]
    categorical[rng.random(n) < 0.05] = None
    for x, binning in (
        (numeric, fit_binning(numeric, n_bins=10, sample_weight=w)),
        (categorical, fit_binning(categorical)),
        (categorical, Binning("categorical", levels=(("north",), ("south", "east")))),
    ):
        woe, iv = _reference_iv(x, y, w, binning, 0.5)
        r = information_value(x, y, binning=binning, sample_weight=w)
        assert float(r) == pytest.approx(iv, abs=1e-10)
        np.testing.assert_allclose(r.table["woe"], woe, rtol=0, atol=1e-10)


def test_no_bads_is_not_available():
    with pytest.warns(DegenerateDataWarning, match=r"the sample has no bads \(3 good and 0 bad"):
        r = information_value([1.0, 2.0, 3.0], [0, 0, 0])
    assert math.isnan(float(r))
    assert r.band == "not available"
    assert r.table["woe"].isna().all()
    assert r.table["goods"].sum() == 3.0  # raw counts still shown


def test_no_goods_and_empty_sample_are_not_available():
    with pytest.warns(DegenerateDataWarning, match=r"the sample has no goods"):
        assert math.isnan(float(information_value(["a", "b"], [1, 1])))
    with pytest.warns(DegenerateDataWarning, match=r"the sample has no rows"):
        t = woe_table(np.array([], dtype=float), np.array([], dtype=int))
    assert t["rows"].tolist() == [0, 0]
    assert t["empty"].all()


def test_malformed_inputs_raise():
    with pytest.raises(
        InvalidDataError, match=r"Expected label values 0 and 1 in 'y_true', got \[2\]"
    ):
        information_value([1.0, 2.0], [0, 2])
    with pytest.raises(InvalidDataError, match=r"Expected 2 rows in 'x' to match y_true, got 3"):
        information_value([1.0, 2.0, 3.0], [0, 1])
    with pytest.raises(InvalidDataError, match=r"Expected non-negative weights"):
        information_value([1.0, 2.0], [0, 1], sample_weight=[1.0, -1.0])
    with pytest.raises(InvalidDataError, match=r"Expected a labeled count table"):
        information_value_from_counts(_golden_table().unlabeled())
    with pytest.raises(InvalidDataError, match=r"Expected smoothing > 0 .* got 0"):
        information_value_from_counts(_golden_table(), smoothing=0)
    with pytest.raises(InvalidDataError, match=r"Expected smoothing > 0 .* got nan"):
        woe_table_from_counts(_golden_table(), smoothing=float("nan"))


def test_weights_scale_invariance_even_with_smoothing():
    x, y = ["A"] * 4 + ["B"] * 4 + ["C"] * 2, [0, 0, 0, 1, 0, 1, 1, 1, 0, 0]
    w = np.arange(1.0, 11.0)
    a = information_value(x, y, sample_weight=w)
    b = information_value(x, y, sample_weight=w * 1000)
    assert a.table["smoothed"].any()
    assert float(a) == pytest.approx(float(b), rel=1e-12)


@pytest.mark.parametrize(
    ("value", "band"),
    [
        (0.0, "useless"),
        (0.0199, "useless"),
        (0.02, "weak"),
        (0.0999, "weak"),
        (0.1, "medium"),
        (0.3, "strong"),
        (0.5, "strong"),
        (0.5001, "suspicious"),
        (float("nan"), "not available"),
    ],
)
def test_iv_bands(value, band):
    assert iv_band(value) == band


def test_score_tables_work_without_a_binning():
    t = CountTable.from_scores([0, 1, 0, 1, 0], [1, 1, 2, 2, 3])
    frame = woe_table_from_counts(t)
    assert frame["bin"].tolist() == ["1", "2", "3"]
    assert frame["lower"].isna().all()
    # score 3 holds a good and no bad: smoothed with 0.5 / 2 bads
    assert frame["smoothed"].tolist() == [False, False, True]
    assert frame["woe"].iloc[2] == pytest.approx(math.log((1 / 3) / 0.25))
