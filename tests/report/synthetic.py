"""Synthetic monitoring histories stored straight into a metric store.

Real runs (tests/collect/loans.py with riskmon.run.run_model) give few months and three
characteristics; the size and escaping tests need many of both and names no configuration
would accept, so they write runs with MetricStore.claim_run and complete_run. Every record has
the fields and parameters a real run stores (see riskmon.figures).
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np

from riskmon.metrics import Binning
from riskmon.records import AlertRecord, BinRecord, FigureRecord, RunCounts
from riskmon.store import (
    BaselineBinRecord,
    BaselineVariableRecord,
    MetricStore,
    StoredBaseline,
)

N_BINS = 10
CURVE_GROUPS = 100
SEGMENT = "channel=web"


def month_ends(first: dt.date, count: int) -> list[dt.date]:
    """``count`` month-end dates, the first in ``first``'s month."""
    out = []
    year, month = first.year, first.month
    for _ in range(count):
        following = dt.date(year + month // 12, month % 12 + 1, 1)
        out.append(following - dt.timedelta(days=1))
        year, month = following.year, following.month
    return out


def _binning() -> Binning:
    return Binning("numeric", edges=tuple(float(e) for e in range(10, 10 * N_BINS, 10)))


def _shares(rng: np.random.Generator, k: int) -> np.ndarray:
    raw = rng.uniform(0.5, 1.5, k)
    return raw / raw.sum()


def _baseline(
    store: MetricStore, model: str, characteristics: list[str], rng: np.random.Generator
) -> StoredBaseline:
    binning = _binning()
    variables = []
    for name in ["score", *characteristics]:
        shares = _shares(rng, binning.n_bins)
        bins = []
        for i, label in enumerate(binning.labels):
            n = round(shares[i] * 5000)
            n_bads = round(n * rng.uniform(0.05, 0.3))
            bins.append(
                BaselineBinRecord(
                    bin_index=i,
                    label=label,
                    n_total=n,
                    total=float(n),
                    n_goods=n - n_bads,
                    goods=float(n - n_bads),
                    n_bads=n_bads,
                    bads=float(n_bads),
                    share=float(shares[i]),
                )
            )
        variables.append(
            BaselineVariableRecord(
                variable=name,
                kind="score" if name == "score" else "numeric",
                binning=binning.to_dict(),
                bins=tuple(bins),
            )
        )
    variables.append(
        BaselineVariableRecord(
            variable="score_ranking",
            kind="score_values",
            binning={"kind": "values"},
            params={"n_distinct_scores": 100, "max_distinct_scores": 20000, "score_top": 100.0},
        )
    )
    figures = [
        FigureRecord("ks", 0.42, "baseline"),
        FigureRecord("auc", 0.78, "baseline", params={"ci_low": 0.76, "ci_high": 0.80}),
        FigureRecord("gini", 0.56, "baseline"),
        FigureRecord("bad_rate", 0.12, "baseline"),
        *(
            FigureRecord(
                "iv", 0.2, "baseline", variable=c, params={"smoothing": 0.5, "band": "medium"}
            )
            for c in characteristics
        ),
    ]
    return store.save_baseline(
        model,
        score_direction="higher_is_riskier",
        window=(dt.date(2022, 1, 1), dt.date(2022, 12, 31)),
        config_hash="synthetic",
        n_rows=5000,
        n_bads=600,
        variables=variables,
        figures=figures,
    )


def _stability_bins(
    variable: str, expected: np.ndarray, actual: np.ndarray, n: int, segment: str = ""
) -> tuple[float, list[BinRecord]]:
    labels = _binning().labels
    records = []
    total = 0.0
    for i, label in enumerate(labels):
        e, a = float(expected[i]), float(actual[i])
        contribution = (a - e) * math.log(a / e)
        total += contribution
        records.append(
            BinRecord(
                variable=variable,
                population="current",
                bin_index=i,
                label=label,
                n_total=round(a * n),
                total=a * n,
                segment=segment,
                lower=None if i == 0 else 10.0 * i,
                upper=None if i >= N_BINS - 1 else 10.0 * (i + 1),
                expected_share=e,
                actual_share=a,
                contribution=contribution,
            )
        )
    return total, records


def store_run(
    store: MetricStore,
    model: str,
    as_of: dt.date,
    *,
    baseline: StoredBaseline,
    characteristics: list[str],
    ks: float,
    drift: float,
    rng: np.random.Generator,
) -> int:
    """One succeeded run with every figure, bin and alert a real run stores."""
    run_id = store.claim_run(
        model, as_of, score_direction="higher_is_riskier", config_hash="synthetic"
    )
    n_current, n_matured = 2000 + int(rng.integers(0, 200)), 1800
    auc = 0.5 + ks * 0.7
    figures = [
        FigureRecord("n_rows", float(n_current), "current"),
        FigureRecord("n_rows", float(n_matured), "performance"),
        FigureRecord("n_bads", 216.0, "performance"),
        FigureRecord("bad_rate", 0.12, "performance", params={"weighted_total": 1800.0}),
        FigureRecord(
            "unmatured_share", 0.05, "performance", params={"n_unmatured": 95, "n_scored": 1895}
        ),
        FigureRecord(
            "ks",
            ks,
            "performance",
            params={
                "score_grouping": "distinct values",
                "score_at": 42.0,
                "p_value": 1e-12,
                "p_value_method": "asymptotic",
                "p_value_conservative": True,
                "critical_value_5pct": 0.097,
                "n_bads": 216,
                "n_goods": 1584,
            },
        ),
        FigureRecord(
            "auc",
            auc,
            "performance",
            params={
                "score_grouping": "distinct values",
                "std_error": 0.015,
                "ci_low": auc - 0.03,
                "ci_high": auc + 0.03,
                "confidence_level": 0.95,
                "method": "DeLong",
            },
        ),
        FigureRecord(
            "gini",
            2 * auc - 1,
            "performance",
            params={"ci_low": 2 * auc - 1.06, "ci_high": 2 * auc - 0.94, "confidence_level": 0.95},
        ),
        FigureRecord("lift_order_breaks", 0.0, "performance", params={"n_groups": 10}),
        FigureRecord("top_decile_lift", 2.5, "performance", params={"n_groups": 10}),
    ]
    bins: list[BinRecord] = []
    alerts = [
        AlertRecord(
            "ks_band",
            "GREEN" if 0.2 <= ks <= 0.75 else "RED",
            ks,
            {"low": 0.2, "high": 0.75, "min_bads": 30},
            f"KS {ks:.4f}",
        )
    ]
    score_base = baseline.variables["score"].bins
    expected = np.array([b.share or 0.0 for b in score_base])
    for segment in ("", SEGMENT):
        actual = expected * rng.uniform(1 - drift, 1 + drift, expected.size)
        actual /= actual.sum()
        psi, score_bins = _stability_bins("score", expected, actual, n_current, segment)
        bins += score_bins
        params = {"smoothing": 0.5, "band": "stable", "critical_value": 0.02, "alpha": 0.05}
        figures.append(FigureRecord("psi", psi, "current", "score", segment, params=params))
        alerts.append(
            AlertRecord("psi", "GREEN", psi, {"amber": 0.1, "red": 0.25}, "PSI", "score", segment)
        )
    for name, value in (("ks", ks), ("auc", auc), ("gini", 2 * auc - 1), ("n_rows", 900.0)):
        figures.append(FigureRecord(name, value, "performance", segment=SEGMENT))
    figures.append(FigureRecord("n_rows", 1000.0, "current", segment=SEGMENT))
    for name in characteristics:
        base = baseline.variables[name].bins
        expected = np.array([b.share or 0.0 for b in base])
        actual = expected * rng.uniform(1 - drift, 1 + drift, expected.size)
        actual /= actual.sum()
        csi, char_bins = _stability_bins(name, expected, actual, n_current)
        bins += char_bins
        status = "RED" if csi >= 0.25 else "AMBER" if csi >= 0.1 else "GREEN"
        figures += [
            FigureRecord(
                "csi",
                csi,
                "current",
                name,
                params={"smoothing": 0.5, "band": "stable", "critical_value": 0.02},
            ),
            FigureRecord("missing_rate", float(actual[-1]), "current", name),
            FigureRecord(
                "iv", 0.15, "performance", name, params={"smoothing": 0.5, "band": "medium"}
            ),
        ]
        alerts += [
            AlertRecord("csi", status, csi, {"amber": 0.1, "red": 0.25}, f"CSI of {name}", name),
            AlertRecord(
                "iv_drop", "GREEN", 0.25, {"amber": 0.25, "red": 0.5}, f"IV of {name}", name
            ),
        ]
        for i, label in enumerate(_binning().labels):
            n = int(n_matured * float(actual[i]))
            n_bads = n // 8
            bins.append(
                BinRecord(
                    variable=name,
                    population="performance",
                    bin_index=i,
                    label=label,
                    n_total=n,
                    total=float(n),
                    n_bads=n_bads,
                    bads=float(n_bads),
                    woe=0.1 * (i - 5),
                    contribution=0.01,
                )
            )
    for i in range(10):
        bins.append(
            BinRecord(
                "gains",
                "performance",
                i,
                str(i + 1),
                180,
                180.0,
                lower=90.0 - 10 * i,
                upper=100.0 - 10 * i,
                bads=float(60 - 5 * i),
            )
        )
    for i in range(CURVE_GROUPS):
        bins.append(
            BinRecord(
                "curve", "performance", i, str(i), 18, 18.0, n_bads=i // 20, bads=float(i // 20)
            )
        )
    store.complete_run(
        run_id,
        counts=RunCounts(n_current=n_current, n_matured=n_matured, n_unmatured=95),
        figures=figures,
        bins=bins,
        alerts=alerts,
        baseline_id=baseline.id,
    )
    return run_id


def store_history(
    store: MetricStore,
    model: str,
    *,
    months: int,
    characteristics: list[str],
    last_ks: float = 0.35,
    seed: int = 0,
) -> list[dt.date]:
    """A baseline and ``months`` monthly runs of ``model``; the last run's KS is ``last_ks``."""
    rng = np.random.default_rng(seed)
    baseline = _baseline(store, model, characteristics, rng)
    dates = month_ends(dt.date(2023, 1, 1), months)
    for i, as_of in enumerate(dates):
        ks = last_ks if i == len(dates) - 1 else 0.40 - 0.002 * i
        store_run(
            store,
            model,
            as_of,
            baseline=baseline,
            characteristics=characteristics,
            ks=ks,
            drift=0.1 + 0.02 * i,
            rng=rng,
        )
    return dates
