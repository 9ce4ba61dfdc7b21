"""Population and characteristic stability (PSI, CSI)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from riskmon.metrics import (
    Binning,
    CountTable,
    DegenerateDataWarning,
    InvalidDataError,
    characteristic_stability_table,
    fit_binning,
    population_stability_index,
    population_stability_index_from_counts,
    psi,
    psi_band,
    psi_critical_value,
)

EDGES = Binning("numeric", edges=(1.0, 2.0, 3.0))
EXPECTED = [1, 1, 1, 1, 2, 2, 2, 3, 3, 4]  # bins: 4, 3, 2, 1, missing 0
ACTUAL = [1, 1, 1, 2, 2, 2, 3, 3, 3, 3]  # bins: 3, 3, 4, 0, missing 0


def test_golden_value_with_a_bin_empty_in_the_current_sample():
    # By hand: e = .4 .3 .2 .1, a = .3 .3 .4 0; the last value bin is empty in the current
    # sample, so a_4 = 0.5 / 10 rows = 0.05; the missing bin is empty in both (term 0).
    expected = (
        (0.3 - 0.4) * math.log(0.3 / 0.4)
        + 0.0
        + (0.4 - 0.2) * math.log(0.4 / 0.2)
        + (0.05 - 0.1) * math.log(0.05 / 0.1)
    )  # = 0.2020550...
    r = population_stability_index(EXPECTED, ACTUAL, binning=EDGES)
    assert float(r) == pytest.approx(expected, abs=1e-12)
    assert float(r) == pytest.approx(0.2020550, abs=1e-7)
    assert r.band == "monitor"
    # B = 4 bins with rows in either sample (missing is empty in both)
    assert r.n_bins == 4
    assert r.critical_value == pytest.approx((1 / 10 + 1 / 10) * stats.chi2.ppf(0.95, 3))
    assert r.exceeds_noise is False
    t = r.table
    assert t["actual_rows"].tolist() == [3, 3, 4, 0, 0]
    assert t["expected_rows"].tolist() == [4, 3, 2, 1, 0]
    assert t["smoothed"].tolist() == [False, False, False, True, False]
    assert t["empty"].tolist() == [False, False, False, False, True]
    assert t["actual_share"].tolist()[3] == 0.0
    assert t["actual_share_used"].tolist()[3] == 0.05
    assert t["contribution"].tolist()[4] == 0.0
    assert r.notes == ("zero cells smoothed with a pseudo-count of 0.5 rows in: (3, inf)",)


def test_critical_value_of_yurdakul_and_naranjo():
    # 10 bins, alpha 5 %, n = m = 1000: (2/1000) · chi2_0.95(9) = 0.002 · 16.919 = 0.0338
    assert psi_critical_value(1000, 1000, 10) == pytest.approx(0.034, abs=5e-4)
    assert psi_critical_value(1000, 1000, 10) == pytest.approx(0.033838, abs=1e-6)
    assert psi_critical_value(1000, 1000, 10, alpha=0.01) > psi_critical_value(1000, 1000, 10)
    assert psi_critical_value(1000, 1000, 1) == 0.0
    assert math.isnan(psi_critical_value(0, 1000, 10))
    with pytest.raises(InvalidDataError, match=r"Expected alpha in \(0, 1\), got 1.5"):
        psi_critical_value(10, 10, 3, alpha=1.5)


def test_critical_value_is_reported_with_the_figure():
    rng = np.random.default_rng(0)
    e, a = rng.normal(size=1000), rng.normal(size=1000)
    r = psi(e, a)
    assert r.n_bins == 10
    assert r.n_expected == r.n_actual == 1000
    assert r.critical_value == pytest.approx(0.033838, abs=1e-6)
    # same population: noise (this seed), and the flag agrees with the figures
    assert r.exceeds_noise == (float(r) > r.critical_value)
    assert float(r) < r.critical_value


def test_disjoint_samples_give_a_large_finite_psi():
    r = population_stability_index(np.arange(100.0), np.arange(1000.0, 1100.0), n_bins=10)
    # every current row is in the top baseline bin: a = 1 there, e = 0.1;
    # the nine other bins are smoothed to 0.5 / 100 in the current sample
    a_used = 0.5 / 100
    expected = (1 - 0.1) * math.log(1 / 0.1) + 9 * (a_used - 0.1) * math.log(a_used / 0.1)
    assert float(r) == pytest.approx(expected, abs=1e-12)
    assert math.isfinite(float(r))
    assert float(r) > 2
    assert r.band == "shifted"
    cat = population_stability_index(["a"] * 50, ["b"] * 50)
    assert math.isfinite(float(cat))
    assert float(cat) > 2
    assert cat.table.set_index("bin").loc["unseen", "actual_rows"] == 50


def test_categorical_with_missing_and_unseen_levels():
    # e: a 2, b 1, missing 1 (n=4); a: a 1, missing 1, unseen (c) 2 (m=4); b is empty in
    # the current sample (0.5/4), unseen is empty in the baseline (0.5/4)
    r = population_stability_index(["a", "a", "b", None], ["a", None, "c", "c"])
    s = 0.5 / 4
    expected = (
        (0.25 - 0.5) * math.log(0.25 / 0.5)
        + (s - 0.25) * math.log(s / 0.25)
        + 0.0
        + (0.5 - s) * math.log(0.5 / s)
    )
    assert float(r) == pytest.approx(expected, abs=1e-12)
    assert r.n_bins == 4
    assert r.table["bin"].tolist() == ["a", "b", "missing", "unseen"]


def test_count_tables_and_raw_values_agree():
    rng = np.random.default_rng(2)
    e = np.where(rng.random(5000) < 0.05, np.nan, rng.gamma(2.0, size=5000).round(1))
    a = np.where(rng.random(4000) < 0.10, np.nan, rng.gamma(2.3, size=4000).round(1))
    we, wa = rng.uniform(0, 2, 5000), rng.uniform(0, 2, 4000)
    b = fit_binning(e, sample_weight=we)
    te = CountTable.from_bins(b.assign(e), b, sample_weight=we)
    ta = CountTable.from_bins(b.assign(a), b, sample_weight=wa)
    raw = population_stability_index(e, a, expected_weight=we, actual_weight=wa)
    tab = population_stability_index(te, ta)
    assert float(raw) == float(tab) == float(population_stability_index_from_counts(te, ta))
    assert raw.critical_value == tab.critical_value
    pd.testing.assert_frame_equal(raw.table, tab.table, check_like=False, check_exact=True)


def test_labeled_tables_use_totals():
    y = [0, 1, 0, 1, 0, 0, 1, 0, 0, 0]
    te = CountTable.from_bins(EDGES.assign(EXPECTED), EDGES, y)
    ta = CountTable.from_bins(EDGES.assign(ACTUAL), EDGES)
    assert float(population_stability_index(te, ta)) == pytest.approx(0.2020550, abs=1e-7)


def _reference_psi(e, a, we, wa, binning, smoothing):
    """PSI recomputed with plain pandas, bins built without Binning.assign."""

    def bin_of(x):
        if binning.kind == "numeric":
            cut = pd.cut(
                pd.Series(x, dtype=float),
                [-np.inf, *binning.edges, np.inf],
                right=True,
                labels=False,
            )
            return cut.fillna(binning.missing_index).astype(int)
        group = {lvl: i for i, levels in enumerate(binning.levels) for lvl in levels}
        return pd.Series(
            [
                binning.missing_index if pd.isna(v) else group.get(str(v), binning.unseen_index)
                for v in x
            ]
        )

    exp = pd.Series(we).groupby(bin_of(e).to_numpy()).sum().reindex(range(binning.n_bins))
    act = pd.Series(wa).groupby(bin_of(a).to_numpy()).sum().reindex(range(binning.n_bins))
    exp, act = exp.fillna(0.0), act.fillna(0.0)
    empty = (exp == 0) & (act == 0)
    es = (exp / exp.sum()).mask((exp == 0) & ~empty, smoothing / len(e))
    as_ = (act / act.sum()).mask((act == 0) & ~empty, smoothing / len(a))
    return ((as_ - es) * np.log(as_ / es)).where(~empty, 0.0).sum()


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_an_independent_pandas_reference(seed):
    rng = np.random.default_rng(seed)
    n, m = 3000, 2500
    e_num = rng.integers(0, 30, n).astype(float)
    a_num = rng.integers(3, 45, m).astype(float)  # shifted, with values above the baseline
    e_num[rng.random(n) < 0.05] = np.nan
    a_num[rng.random(m) < 0.15] = np.nan
    levels = np.array(["A", "B", "C", "D", "E"], dtype=object)
    e_cat = levels[rng.choice(4, n, p=[0.5, 0.3, 0.15, 0.05])]
    a_cat = levels[rng.choice(5, m, p=[0.4, 0.3, 0.1, 0.0, 0.2])]  # D vanishes, E is new
    a_cat[rng.random(m) < 0.05] = None
    we, wa = rng.integers(1, 4, n) * 1.5, rng.integers(1, 4, m) * 0.5
    cases = [
        (e_num, a_num, fit_binning(e_num, n_bins=10, sample_weight=we)),
        (e_num, a_num, fit_binning(e_num, method="uniform", n_bins=7, sample_weight=we)),
        (e_cat, a_cat, fit_binning(e_cat)),
        (e_cat, a_cat, fit_binning(e_cat, min_level_share=0.1)),
    ]
    for e, a, binning in cases:
        for smoothing in (0.5, 2.0):
            expected = _reference_psi(e, a, we, wa, binning, smoothing)
            r = population_stability_index(
                e, a, binning=binning, smoothing=smoothing, expected_weight=we, actual_weight=wa
            )
            assert float(r) == pytest.approx(expected, abs=1e-10)
            assert r.smoothing == smoothing


def test_empty_sample_is_not_available():
    with pytest.warns(DegenerateDataWarning, match=r"the actual sample is empty \(10 expected"):
        r = population_stability_index(EXPECTED, [], binning=EDGES)
    assert math.isnan(float(r))
    assert math.isnan(r.critical_value)
    assert r.band == "not available"
    assert r.exceeds_noise is False
    assert r.table["expected_rows"].tolist() == [4, 3, 2, 1, 0]
    with pytest.warns(DegenerateDataWarning, match=r"expected and actual sample is empty"):
        population_stability_index(np.array([], float), np.array([], float))


def test_tables_on_different_bins_raise():
    other = Binning("numeric", edges=(1.0, 2.5, 3.0))
    te = CountTable.from_bins(EDGES.assign(EXPECTED), EDGES)
    ta = CountTable.from_bins(other.assign(ACTUAL), other)
    with pytest.raises(InvalidDataError, match=r"Expected the actual table on the expected"):
        population_stability_index(te, ta)
    score = CountTable.from_values([1.0, 2.0])
    with pytest.raises(InvalidDataError, match=r"\['1', '2'\], got \['1', '2', '3'\]"):
        population_stability_index(score, CountTable.from_values([1.0, 2.0, 3.0]))


def test_malformed_inputs_raise():
    te = CountTable.from_bins(EDGES.assign(EXPECTED), EDGES)
    with pytest.raises(InvalidDataError, match=r"both raw values or both count tables"):
        population_stability_index(te, ACTUAL)
    with pytest.raises(InvalidDataError, match=r"Expected non-negative weights in 'actual_w"):
        population_stability_index(EXPECTED, ACTUAL, actual_weight=[-1.0] * 10)
    with pytest.raises(InvalidDataError, match=r"Expected 10 rows in 'expected_weight'"):
        population_stability_index(EXPECTED, ACTUAL, expected_weight=[1.0] * 3)
    with pytest.raises(InvalidDataError, match=r"Expected no binning or edges with count"):
        population_stability_index(te, te, binning=EDGES)
    with pytest.raises(InvalidDataError, match=r"Expected smoothing > 0"):
        population_stability_index(te, te, smoothing=-1)
    with pytest.raises(InvalidDataError, match=r"Expected either binning or edges"):
        population_stability_index(EXPECTED, ACTUAL, binning=EDGES, edges=[1.0])


@pytest.mark.parametrize(
    ("value", "band"),
    [(0.0, "stable"), (0.0999, "stable"), (0.1, "monitor"), (0.2499, "monitor"), (0.25, "shifted")],
)
def test_psi_bands(value, band):
    assert psi_band(value) == band


def _frames():
    rng = np.random.default_rng(11)
    n, m = 4000, 3000
    base = pd.DataFrame(
        {
            "income": np.where(rng.random(n) < 0.1, np.nan, rng.lognormal(10, 0.5, n)),
            "age": rng.integers(18, 80, n),
            "region": rng.choice(["N", "S", "E", "W"], n),
            "w": rng.uniform(0.5, 2, n),
        }
    )
    now = pd.DataFrame(
        {
            "income": np.where(rng.random(m) < 0.1, np.nan, rng.lognormal(10.4, 0.5, m)),
            "age": rng.integers(18, 80, m),
            "region": rng.choice(["N", "S", "E", "W", "X"], m),
            "w": rng.uniform(0.5, 2, m),
        }
    )
    return base, now


def test_csi_table_is_worst_first_and_matches_psi():
    base, now = _frames()
    t = characteristic_stability_table(base, now, expected_weight="w", actual_weight="w")
    # the new region "X" (a fifth of the current rows) outweighs the income shift
    assert t["characteristic"].tolist() == ["region", "income", "age"]
    assert t["n_bins_requested"].dtype == "Int64"
    assert t["csi"].is_monotonic_decreasing
    for _, row in t.iterrows():
        r = population_stability_index(
            base[row["characteristic"]],
            now[row["characteristic"]],
            expected_weight=base["w"],
            actual_weight=now["w"],
        )
        assert row["csi"] == float(r)
        assert row["band"] == r.band
        assert row["critical_value"] == r.critical_value
        assert row["n_bins"] == r.n_bins
    income = t.set_index("characteristic").loc["income"]
    assert income["band"] == "shifted"
    assert income["exceeds_noise"]
    assert income["n_bins_requested"] == 10
    region = t.set_index("characteristic").loc["region"]
    assert region["smoothed_bins"] == 1  # the unseen "X"
    assert "unseen" in region["notes"]
    assert pd.isna(region["n_bins_requested"])
    assert set(t["smoothing"]) == {0.5}


def test_csi_table_uses_given_binnings_and_kinds():
    base, now = _frames()
    frozen = {"age": Binning("numeric", edges=(40.0,))}
    t = characteristic_stability_table(
        base,
        now,
        characteristics=["age", "region"],
        binnings=frozen,
        kinds={"region": "categorical"},
    )
    age = t.set_index("characteristic").loc["age"]
    assert age["n_bins"] == 2
    expected = population_stability_index(base["age"], now["age"], binning=frozen["age"])
    assert age["csi"] == float(expected)


def test_csi_table_warns_naming_each_degenerate_column():
    base = pd.DataFrame({"x": [1.0, 2.0, 3.0], "region": ["a", "b", "b"]})
    with pytest.warns(DegenerateDataWarning) as caught:
        t = characteristic_stability_table(base, base.iloc[:0], n_bins=2)
    messages = sorted(str(w.message) for w in caught)
    assert messages == [
        "'region': PSI needs rows in both samples; the actual sample is empty "
        "(3 expected and 0 actual rows)",
        "'x': PSI needs rows in both samples; the actual sample is empty "
        "(3 expected and 0 actual rows)",
    ]
    assert t["csi"].isna().all()
    assert t["band"].tolist() == ["not available"] * 2
    assert t["notes"].str.contains("the actual sample is empty").all()


def test_csi_table_rejects_missing_columns():
    base, now = _frames()
    with pytest.raises(InvalidDataError, match=r"Expected columns \['region'\] in actual_frame"):
        characteristic_stability_table(base, now.drop(columns="region"))
    with pytest.raises(InvalidDataError, match=r"Expected a pandas DataFrame for expected_frame"):
        characteristic_stability_table(base.to_numpy(), now)


@pytest.mark.parametrize(
    "module",
    ["_binning", "_bin_fit", "_divergence", "_woe", "_stability"],
)
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"riskmon.metrics.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if module != "_divergence":
        assert result.attempted > 0
