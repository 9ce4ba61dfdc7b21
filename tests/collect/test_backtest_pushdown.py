"""Property: the back-testing figures of LGD estimates computed from the sums every database
and every collect strategy returns (one joint table of estimated × realised class, moments
per cell) equal those computed by pandas and scipy on the facilities themselves — with open
recoveries, realised values below 0 and above 1, missing estimates, exposures and segments."""

from __future__ import annotations

import math
from contextlib import AbstractContextManager, nullcontext

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from riskmon.collect import Source, collect
from riskmon.collect.request import CollectRequest, Population, Variable
from riskmon.metrics import (
    ECB_SEGMENT_LABELS,
    BacktestTable,
    DegenerateDataWarning,
    ecb_lgd_segment,
    ecb_segment_binning,
    generalised_auc,
)
from riskmon.plan import DateWindow
from riskmon.records import ALL

from .loans import CURRENT, load, loan_frame, model_config
from .test_collect import STRATEGIES_BY_DIALECT

#: MariaDB's text protocol rounds streamed doubles to about 15 digits
RTOL = 1e-8
#: the realised classes: the 12 segments and the open recoveries (the missing bin)
N_REALISED = len(ECB_SEGMENT_LABELS) + 1


def _book(seed: int, n: int, weighted: bool) -> pd.DataFrame:
    """Facilities with an LGD estimate (``pd_score``'s column; 5 % NULL), a realised LGD
    (``lgd``: open for a share, some below 0 and above 1), exposure and a segment column."""
    rng = np.random.default_rng(seed)
    frame = loan_frame(seed=seed, n=n, weighted=weighted)
    estimate = np.round(rng.beta(2, 3, n) * 1.1, 2)  # ties on the segments' edges, some > 1
    frame["pd_score"] = pd.array(np.where(rng.random(n) < 0.05, np.nan, estimate), "Float64")
    realised = np.round(estimate + rng.normal(0.03, 0.25, n), 2)  # below 0 and above 1
    open_share = rng.choice([0.0, 0.3, 0.9])
    frame["lgd"] = pd.array(np.where(rng.random(n) < open_share, np.nan, realised), "Float64")
    return frame


def _request(weighted: bool, segmented: bool) -> CollectRequest:
    segments = ecb_segment_binning()
    joint = Variable(
        "backtest",
        "pd_score",
        segments,
        moments=True,
        crossed=Variable("realised", "lgd", segments),
    )
    return CollectRequest(
        populations=[Population("current", DateWindow(*CURRENT), labeled=False)],
        variables=[joint],
        score_date="score_date",
        label=None,
        weight="exposure" if weighted else None,
        segments=("channel",) if segmented else (),
        score="pd_score",
        exclude_invalid=True,
        target="lgd",
    )


def _parts(frame: pd.DataFrame, segmented: bool) -> dict[str, pd.DataFrame]:
    rows = frame[frame["score_date"].map(DateWindow(*CURRENT).__contains__)]
    rows = rows[rows["pd_score"].notna()]  # a missing estimate is left out, and counted
    out = {ALL: rows}
    if segmented:
        for value, part in rows.groupby(rows["channel"].fillna("\0")):
            out["channel IS NULL" if value == "\0" else f"channel={value}"] = part
    return out


def _expected(part: pd.DataFrame, weighted: bool) -> dict[str, object]:
    """Per ECB segment and for the portfolio, from the rows with pandas and scipy."""
    e = part["pd_score"].to_numpy(float)
    r = part["lgd"].to_numpy(float)
    ead = part["exposure"].to_numpy(float) if weighted else np.ones(len(part))
    grade = ecb_lgd_segment(e) - 1
    closed = ~np.isnan(r)
    out: dict[str, object] = {"facilities": np.bincount(grade, minlength=12)}
    rows = []
    for g in [*range(12), None]:
        m = closed & ((grade == g) if g is not None else True)
        d = r[m] - e[m]
        t = (
            stats.ttest_1samp(d, 0.0, alternative="greater")
            if len(d) >= 2 and np.ptp(d) > 1e-12
            else None
        )
        w = ead[m]
        rows.append(
            {
                "n": int(m.sum()),
                "mean_e": e[m].mean() if m.any() else None,
                "mean_r": r[m].mean() if m.any() else None,
                "t": None if t is None else t.statistic,
                "p": None if t is None else t.pvalue,
                "ls": 1 - (w * e[m]).sum() / (w * r[m]).sum() if (w * r[m]).sum() else None,
                "mad": (w * np.abs(d)).sum() / w.sum() if m.any() else None,
            }
        )
    out["rows"] = rows
    real_class = ecb_lgd_segment(np.where(closed, r, 0.0)) - 1
    table = pd.crosstab(
        pd.Categorical(grade[closed], categories=range(12)),
        pd.Categorical(real_class[closed], categories=range(12)),
        dropna=False,
    )
    out["contingency"] = table.to_numpy(float)
    return out


def _close(got: float | None, want: float | None) -> bool:
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got is None or math.isnan(got)
    return got is not None and math.isclose(got, want, rel_tol=RTOL, abs_tol=1e-9)


def _check(table: BacktestTable, want: dict[str, object], context: object) -> None:
    assert table.facilities.tolist() == list(want["facilities"]), context  # type: ignore[call-overload]
    contingency = want["contingency"]
    assert np.array_equal(table.contingency, contingency), context  # type: ignore[arg-type]
    whole = table.portfolio()
    rows: list[dict[str, float | None]] = want["rows"]  # type: ignore[assignment]
    for index, row in enumerate(rows):
        t, at = (table, index) if index < 12 else (whole, 0)
        assert t.closed[at] == row["n"], (context, index)
        assert _close(t.mean_estimate()[at], row["mean_e"]), (context, index)
        assert _close(t.mean_realised()[at], row["mean_r"]), (context, index)
        with _maybe_warning(row["t"] is None):
            test = t.t_test(at)
        # a variance within rounding of 0 is NaN here and a huge T in scipy: skip that case
        if row["t"] is not None and test.variance > 1e-10:
            assert _close(test.statistic, row["t"]), (context, index, test, row)
            assert _close(test.pvalue, row["p"]), (context, index)
        with _maybe_warning(row["ls"] is None):
            assert _close(t.loss_shortfall(at), row["ls"]), (context, index)
        with _maybe_warning(row["mad"] is None):
            assert _close(t.mad(at), row["mad"]), (context, index)
    a = np.asarray(contingency)
    if (a.sum(axis=1) > 0).sum() >= 2:
        assert whole.gauc().somers_d == pytest.approx(stats.somersd(a).statistic, rel=1e-12)
        assert whole.gauc().se == pytest.approx(generalised_auc(a).se, rel=1e-12)


def _maybe_warning(expected: bool) -> AbstractContextManager[object]:
    """Expect the warning of a figure not available, or none at all (warnings are errors)."""
    return pytest.warns(DegenerateDataWarning) if expected else nullcontext()


@settings(
    max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(30, 500),
    weighted=st.booleans(),
    segmented=st.booleans(),
)
def test_backtest_from_pushdown_equals_pandas(
    database: tuple[str, str], seed: int, n: int, weighted: bool, segmented: bool
) -> None:
    dialect, url = database
    frame = _book(seed, n, weighted)
    load(url, frame)
    req = _request(weighted, segmented)
    parts = _parts(frame, segmented)
    expected = {segment: _expected(part, weighted) for segment, part in parts.items()}
    missing = frame["pd_score"].isna() & frame["score_date"].map(DateWindow(*CURRENT).__contains__)
    with Source(model_config(url, weighted=weighted)) as source:
        for strategy in STRATEGIES_BY_DIALECT[dialect]:
            collected = collect(source, req, strategy=strategy)
            assert collected.exclusions["current"].null_score == int(missing.sum())
            for segment, wanted in expected.items():
                joint = collected.target_tables[("current", "backtest", segment)]
                table = BacktestTable.from_joint(
                    joint, labels=ECB_SEGMENT_LABELS, n_realised=N_REALISED
                )
                _check(table, wanted, (dialect, strategy, segment))
