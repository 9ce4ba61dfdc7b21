"""Lift table: grouping rule, columns, order breaks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from riskmon.errors import DegenerateDataWarning, InvalidDataError
from riskmon.metrics import CountTable, ks_statistic, lift_table, lift_table_from_counts

TOL = 1e-10


def test_untied_deciles_match_a_direct_row_computation():
    rng = np.random.default_rng(0)
    n = 1000
    y = (rng.random(n) < 0.2).astype(int)
    s = rng.normal(size=n) + y
    frame = lift_table(y, s)
    # reference: sort rows riskiest first, cut into 10 runs of 100 rows
    order = np.argsort(-s)
    ys, ss = y[order], s[order]
    ref = pd.DataFrame({"g": np.repeat(np.arange(10), 100), "y": ys, "s": ss})
    agg = ref.groupby("g").agg(bads=("y", "sum"), lo=("s", "min"), hi=("s", "max"))
    bad_rate = agg["bads"] / 100
    overall = y.mean()
    np.testing.assert_array_equal(frame["n_rows"], np.full(10, 100))
    np.testing.assert_allclose(frame["bads"], agg["bads"], atol=TOL)
    np.testing.assert_allclose(frame["score_min"], agg["lo"], atol=0)
    np.testing.assert_allclose(frame["score_max"], agg["hi"], atol=0)
    np.testing.assert_allclose(frame["lift"], bad_rate / overall, atol=TOL)
    cum_bads = agg["bads"].cumsum()
    np.testing.assert_allclose(frame["cum_bad_share"], cum_bads / y.sum(), atol=TOL)
    np.testing.assert_allclose(
        frame["cum_lift"], (cum_bads / y.sum()) / (np.arange(1, 11) / 10), atol=TOL
    )
    cum_goods = (100 - agg["bads"]).cumsum()
    np.testing.assert_allclose(
        frame["ks"], np.abs(cum_bads / y.sum() - cum_goods / (n - y.sum())), atol=TOL
    )
    expected_breaks = int(np.sum(np.diff(bad_rate.to_numpy()) > 0))
    assert frame.attrs["order_breaks"] == expected_breaks


def test_ties_are_never_split_and_totals_add_up():
    rng = np.random.default_rng(1)
    y = (rng.random(3000) < 0.3).astype(int)
    s = rng.integers(0, 25, 3000).astype(float)
    w = rng.uniform(0.5, 2.0, 3000)
    frame = lift_table(y, s, sample_weight=w, n_groups=10)
    # group ranges do not overlap: each score value is in one group
    assert np.all(frame["score_min"].to_numpy()[:-1] > frame["score_max"].to_numpy()[1:])
    assert frame["count"].sum() == pytest.approx(w.sum())
    assert frame["bads"].sum() == pytest.approx(w[y == 1].sum())
    assert frame["n_rows"].sum() == 3000
    assert frame["cum_bad_share"].iloc[-1] == pytest.approx(1.0)
    assert frame["cum_lift"].iloc[-1] == pytest.approx(1.0)
    # KS is the maximum over all cuts, so no group boundary exceeds it
    assert frame["ks"].max() <= ks_statistic(y, s, sample_weight=w).statistic + TOL


def test_midpoint_grouping_golden():
    # 10 rows riskiest first: score 9 x1, 8 x5, 7 x1, 6 x3 -> into 4 groups of 2.5 rows.
    # middles (in rows): 0.5, 3.5, 6.5, 8.5 -> groups floor(4·m/10) = 0, 1, 2, 3
    s = [9] + [8] * 5 + [7] + [6] * 3
    y = [1, 1, 1, 0, 0, 0, 1, 0, 0, 0]
    frame = lift_table(y, s, n_groups=4)
    assert frame["score_max"].tolist() == [9, 8, 7, 6]
    assert frame["n_rows"].tolist() == [1, 5, 1, 3]
    # bad rates 1, 2/5, 1, 0: the third group is worse than the second -> one break
    assert frame["bad_rate"].tolist() == [1.0, 0.4, 1.0, 0.0]
    assert frame.attrs["order_breaks"] == 1
    assert frame.attrs["n_groups_requested"] == 4
    # lift = bad rate / (4/10)
    assert frame["lift"].tolist() == pytest.approx([2.5, 1.0, 2.5, 0.0])


def test_big_tie_group_merges_groups():
    # 8 of 10 rows share one score. Middles (rows) 0.5, 1.5, 6 of 10 -> groups
    # floor(5·m/10) = 0, 0, 3: scores 5 and 4 share group 1, score 1 is group 2 of 2
    s = [5, 4] + [1] * 8
    y = [1, 0, 1, 0, 0, 0, 0, 0, 0, 1]
    frame = lift_table(y, s, n_groups=5)
    assert frame["group"].tolist() == [1, 2]
    assert frame["n_rows"].tolist() == [2, 8]
    assert frame["bad_rate"].tolist() == [0.5, 0.25]


def test_scorecard_direction_puts_low_points_first():
    s = [300, 400, 500, 600]
    y = [1, 1, 0, 0]
    frame = lift_table(y, s, n_groups=2, higher_is_riskier=False)
    assert frame["score_min"].tolist() == [300, 500]
    assert frame["bad_rate"].tolist() == [1.0, 0.0]


def test_from_counts_twin_on_group_by_rows():
    rows = [(1.0, 0, 4, 4.0), (1.0, 1, 1, 1.0), (2.0, 0, 2, 2.0), (2.0, 1, 3, 3.0)]
    y = [0] * 4 + [1] + [0] * 2 + [1] * 3
    s = [1.0] * 5 + [2.0] * 5
    pd.testing.assert_frame_equal(
        lift_table_from_counts(CountTable.from_rows(rows), n_groups=2),
        lift_table(y, s, n_groups=2),
    )


def test_no_bads_warns_and_lift_is_nan():
    with pytest.warns(DegenerateDataWarning, match="Lift is not available: the data has no bads"):
        frame = lift_table([0, 0, 0, 0], [1, 2, 3, 4], n_groups=2)
    assert frame["lift"].isna().all()
    assert frame["bad_rate"].tolist() == [0.0, 0.0]


def test_empty_data_gives_empty_table_with_warning():
    with pytest.warns(DegenerateDataWarning, match="no rows"):
        frame = lift_table([], [])
    assert frame.empty
    assert "cum_lift" in frame.columns


@pytest.mark.parametrize("n_groups", [0, -3, 2.5, True])
def test_n_groups_must_be_a_positive_integer(n_groups):
    with pytest.raises(InvalidDataError, match="Expected n_groups a positive integer"):
        lift_table([0, 1], [1, 2], n_groups=n_groups)
