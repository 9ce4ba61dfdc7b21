"""The rest of a whole run's families computed by hand, for ``bench_whole.py``'s (b).

``bench_whole.compute_by_hand`` computes PSI/CSI, WOE/IV, KS, AUC/Gini, a calibration per score
decile and a gains table. :func:`compute_rest` adds, at loan level with pandas, NumPy and SciPy
as a user would write them, the other families a run of ``bench_run.py``'s model stores (the
figure names are the run's; the formulas are those of FORMULAS.md, computed on the loans rather
than on count tables):

- the feed: per population the share of loans a run leaves out (NULL or non-finite score, NULL
  or negative or zero weight, an id and score date repeated), the cohort's unmatured share and
  how much of it lies in the baseline's window; per characteristic the current missing share,
  per categorical one the share of levels the baseline did not have;
- per segment (the whole portfolio and each ``channel``), the cohort: loans, bads, bad and
  default rates, mean PD (each also weighted by ``exposure``), Brier score, the portfolio's
  Jeffreys, binomial and Spiegelhalter tests, per score decile of the baseline the Jeffreys
  test and the Hosmer-Lemeshow test over the deciles; the ECB's AUC test against the
  baseline's AUC (DeLong's standard error from placement values); the gains table's top-decile
  lift and order breaks;
- per segment, the expected performance of the current population and of the cohort under
  calibrated PDs (E[D], its standard deviation, E[default rate], E[AUC] with ties halved,
  E[Gini], E[KS]); the cohort's realised AUC against its expected one, and the change since the
  baseline that the expected AUCs do not explain;
- per segment, the rating figures on the score's baseline deciles (the run's grades): the ECB's
  Herfindahl index (loans and exposure), its concentration test against the baseline, and
  Pearson's χ² test of the two grade distributions.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import beta, binom, chi2, chi2_contingency, norm

Assign = Callable[[Any], tuple[Any, int]]


def compute_rest(
    baseline: pd.DataFrame,
    current: pd.DataFrame,
    performance: pd.DataFrame,
    *,
    grades: Assign,
    segments: Sequence[str],
    categorical: Sequence[str],
    characteristics: Sequence[str],
    windows: dict[str, list[str]],
    gains: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    """The families of the run that ``compute_by_hand`` leaves out; ``grades`` assigns the
    score's baseline deciles, ``gains`` is ``compute_by_hand``'s gains tables by segment key."""
    out: dict[str, Any] = {}
    for name, frame in (("current", current), ("performance", performance)):
        out[f"excluded_share/{name}"] = _excluded_share(frame)
    out["unmatured_share"] = float(performance["bad"].isna().mean())
    out["cohort_in_sample"] = _overlap(windows["performance"], windows["baseline"])
    for name in characteristics:
        out[f"missing_rate/{name}"] = float(current[name].isna().mean())
    for name in categorical:
        known = current[name].isin(baseline[name].dropna().unique()) | current[name].isna()
        out[f"unseen_rate/{name}"] = float((~known).mean())
    cohort = performance[performance["bad"].notna()]
    base_cohort = baseline[baseline["bad"].notna()]
    for segment in [None, *segments]:
        suffix = "" if segment is None else f"@{segment}"
        parts = [_in(frame, segment) for frame in (base_cohort, cohort, current, baseline)]
        expected = _expected(parts[1])
        out |= {k + suffix: v for k, v in _cohort(parts[1], grades).items()}
        tests = _auc_tests(parts[0], parts[1], expected["expected_auc"])
        out |= {k + suffix: v for k, v in tests.items()}
        out |= {f"{k}/current{suffix}": v for k, v in _expected(parts[2]).items()}
        out |= {f"{k}/performance{suffix}": v for k, v in expected.items()}
        out |= {k + suffix: v for k, v in _rating(parts[3], parts[2], grades).items()}
        out |= {k + suffix: v for k, v in _lift(gains["gains" + suffix]).items()}
    return out


def _in(frame: pd.DataFrame, segment: str | None) -> pd.DataFrame:
    return frame if segment is None else frame[frame["channel"] == segment]


def _excluded_share(frame: pd.DataFrame) -> float:
    score = frame["pd_score"].to_numpy(dtype=np.float64)
    weight = frame["exposure"].to_numpy(dtype=np.float64)
    bad_score = ~np.isfinite(score)
    bad_weight = ~(weight > 0)  # NULL (NaN), negative or zero
    repeated = frame.duplicated(["loan_id", "score_date"]).to_numpy()
    left_out = bad_score | bad_weight | (repeated & frame["loan_id"].notna().to_numpy())
    return float(left_out.mean()) if len(frame) else math.nan


def _overlap(window: list[str], other: list[str]) -> float:
    first, last = (dt.date.fromisoformat(d) for d in window)
    lo = max(first, dt.date.fromisoformat(other[0]))
    hi = min(last, dt.date.fromisoformat(other[1]))
    return max((hi - lo).days + 1, 0) / ((last - first).days + 1)


def _cohort(cohort: pd.DataFrame, grades: Assign) -> dict[str, Any]:
    """The cohort's rates, Brier score and calibration tests (portfolio and per grade)."""
    y = cohort["bad"].to_numpy(dtype=np.float64)
    p = cohort["pd_score"].to_numpy(dtype=np.float64)
    w = cohort["exposure"].to_numpy(dtype=np.float64)
    n, d = y.size, y.sum()
    pd_mean, pd_w = p.mean(), np.average(p, weights=w)
    rate_w = np.average(y, weights=w)
    n_eff = w.sum() ** 2 / np.sum(w**2)  # Kish's, for the weighted test
    v = p * (1 - p)
    z = (np.mean((y - p) ** 2) - v.mean()) / math.sqrt(np.sum(v * (1 - 2 * p) ** 2) / n**2)
    out = {
        "n_rows/performance": n,
        "n_bads": d,
        "bad_rate": d / n,
        "default_rate": d / n,
        "default_rate_exposure": rate_w,
        "mean_pd": pd_mean,
        "mean_pd_exposure": pd_w,
        "brier": float(np.mean((y - p) ** 2)),
        "brier_exposure": float(np.average((y - p) ** 2, weights=w)),
        "jeffreys_p": float(beta.cdf(pd_mean, d + 0.5, n - d + 0.5)),
        "jeffreys_p_exposure": float(
            beta.cdf(pd_w, rate_w * n_eff + 0.5, (1 - rate_w) * n_eff + 0.5)
        ),
        "binomial_p": float(binom.sf(d - 1, n, pd_mean)),
        "spiegelhalter_p": float(2 * norm.sf(abs(z))),
    }
    index, size = grades(p)
    n_k = np.bincount(index, minlength=size)
    d_k = np.bincount(index, weights=y, minlength=size)
    pd_k = np.bincount(index, weights=p, minlength=size) / np.maximum(n_k, 1)
    used = n_k > 0
    out["grade_jeffreys_p"] = beta.cdf(pd_k[used], d_k[used] + 0.5, n_k[used] - d_k[used] + 0.5)
    out["grade_jeffreys_p"] = out["grade_jeffreys_p"].tolist()
    out["calibration_n"], out["calibration_defaults"] = n_k.tolist(), d_k.tolist()
    expected = n_k[used] * pd_k[used]
    hl = np.sum((expected - d_k[used]) ** 2 / (expected * (1 - pd_k[used])))
    out["hosmer_lemeshow_p"] = float(chi2.sf(hl, int(used.sum())))
    return out


def _delong(score: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The AUC (ties halved) and DeLong's standard error, from placement values."""
    bads, goods = np.sort(score[y == 1]), np.sort(score[y == 0])
    below = np.searchsorted(goods, bads, side="left")
    ties = np.searchsorted(goods, bads, side="right") - below
    v10 = (below + 0.5 * ties) / goods.size
    above = bads.size - np.searchsorted(bads, goods, side="right")
    ties = np.searchsorted(bads, goods, side="right") - np.searchsorted(bads, goods, side="left")
    v01 = (above + 0.5 * ties) / bads.size
    auc = float(v10.mean())
    return auc, math.sqrt(v10.var(ddof=1) / bads.size + v01.var(ddof=1) / goods.size)


def _auc_tests(
    base_cohort: pd.DataFrame, cohort: pd.DataFrame, expected: float
) -> dict[str, float]:
    """The ECB's AUC test against the baseline, and the realised AUC against the expected
    (``expected``, the cohort's)."""
    auc, se = _delong(cohort["pd_score"].to_numpy(), cohort["bad"].to_numpy())
    auc_0, se_0 = _delong(base_cohort["pd_score"].to_numpy(), base_cohort["bad"].to_numpy())
    expected_0 = _expected(base_cohort)["expected_auc"]
    unexplained = (auc - auc_0) - (expected - expected_0)
    return {
        "auc_test_p": float(norm.sf((auc_0 - auc) / se)),
        "auc_vs_expected": auc - expected,
        "auc_vs_expected_p": float(2 * norm.sf(abs(auc - expected) / se)),
        "auc_change_unexplained": unexplained,
        "auc_change_unexplained_p": float(2 * norm.sf(abs(unexplained) / math.hypot(se, se_0))),
    }


def _expected(frame: pd.DataFrame) -> dict[str, float]:
    """Expected performance under calibrated PDs (FORMULAS.md), the loans' PDs as given."""
    p = frame["pd_score"].to_numpy(dtype=np.float64)
    values, index = np.unique(p, return_inverse=True)  # ascending: safest first
    d = np.bincount(index, weights=p, minlength=values.size)
    g = np.bincount(index, weights=1 - p, minlength=values.size)
    s = np.bincount(index, weights=p * (1 - p), minlength=values.size)
    goods_below = np.cumsum(g) - g
    total_d, total_g, total_s = d.sum(), g.sum(), s.sum()
    auc = (np.sum(d * goods_below) + 0.5 * np.sum(d * g - s)) / (total_d * total_g - total_s)
    ks = np.max(np.abs(np.cumsum(d) / total_d - np.cumsum(g) / total_g))
    return {
        "expected_defaults": total_d,
        "expected_defaults_sd": math.sqrt(total_s),
        "expected_default_rate": total_d / p.size,
        "expected_auc": float(auc),
        "expected_gini": float(2 * auc - 1),
        "expected_ks": float(ks),
    }


def _rating(baseline: pd.DataFrame, current: pd.DataFrame, grades: Assign) -> dict[str, float]:
    """The ECB's concentration figures and a χ² test on the score's baseline deciles."""
    out: dict[str, float] = {"n_rows/current": len(current)}
    shares = {}
    for name, frame in (("base", baseline), ("cur", current)):
        index, size = grades(frame["pd_score"].to_numpy(dtype=np.float64))
        k = size - 1  # the deciles; the missing bin (the last) apart
        shares[name] = np.bincount(index, minlength=size)[:k]
        if name == "cur":
            weights = frame["exposure"].to_numpy(dtype=np.float64)
            exposure = np.bincount(index, weights=weights, minlength=size)[:k]
    cv = {name: _cv(counts) for name, counts in shares.items()}
    k = shares["cur"].size
    out["rating_herfindahl"] = 1 + math.log((cv["cur"] ** 2 + 1) / k) / math.log(k)
    out["rating_herfindahl_exposure"] = 1 + math.log((_cv(exposure) ** 2 + 1) / k) / math.log(k)
    cv_now = cv["cur"]
    z = math.sqrt(k - 1) * (cv_now - cv["base"]) / math.sqrt(cv_now**2 * (0.5 + cv_now**2))
    out["rating_concentration_p"] = float(norm.sf(z))
    table = np.vstack([shares["base"], shares["cur"]])
    out["rating_shift_p"] = float(chi2_contingency(table[:, table.sum(axis=0) > 0])[1])
    return out


def _cv(counts: np.ndarray) -> float:
    r = counts / counts.sum()
    return math.sqrt(r.size * np.sum((r - 1 / r.size) ** 2))


def _lift(gains: list[dict[str, Any]]) -> dict[str, float]:
    """Top-decile lift and how often a safer decile has a higher bad rate (riskiest first)."""
    rates = [g["w_bad"] / g["w"] for g in gains]
    breaks = sum(1 for a, b in itertools.pairwise(rates) if b > a)
    return {"top_decile_lift": float(gains[0]["lift"]), "lift_order_breaks": breaks}
