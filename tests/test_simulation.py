"""A year of runs every other night over a book with injected drift and a degrading model: the
alerts raised night by night follow what was injected."""

from __future__ import annotations

import datetime as dt

import pytest

from riskmon.config import parse_config
from riskmon.demo import BookSpec, generate_book, write_book
from riskmon.records import Status
from riskmon.run import run_model
from riskmon.store import MetricStore

D = dt.date
DRIFT_FROM = D(2025, 5, 1)  # the population starts to drift (current windows from May 2025)
DEGRADE_FROM = D(2024, 2, 1)  # the model degrades for loans scored from February 2024
RAMP_MONTHS = 6.0
Nights = dict[dt.date, dict[tuple[str, str], str]]


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Nights:
    """Statuses of every alert (rule, variable) on every other night of 2025 (a run's windows
    move a day a night; two are as telling at half the cost)."""
    folder = tmp_path_factory.mktemp("year")
    source = f"sqlite:///{folder / 'book.db'}"
    book = generate_book(
        BookSpec(
            start=D(2023, 7, 1),
            end=D(2025, 12, 31),
            loans_per_day=100,
            seed=5,
            drift_from=DRIFT_FROM,
            degrade_from=DEGRADE_FROM,
            ramp_months=RAMP_MONTHS,
        )
    )
    write_book(book, source)
    config = parse_config(
        {
            "store": {"url": f"sqlite:///{folder / 'store.db'}"},
            "models": [
                {
                    "name": "behaviour_pd",
                    "source": {"url": source, "table": "scored_loans"},
                    "columns": {
                        "id": "loan_id",
                        "score_date": "score_date",
                        "score": "behaviour_pd",
                        "label": "default_12m",
                    },
                    "score_direction": "higher_is_riskier",
                    "characteristics": [
                        {"name": "income", "kind": "numeric"},
                        {"name": "age", "kind": "numeric"},
                        {"name": "region", "kind": "categorical"},
                    ],
                    "baseline": {"start": "2023-07-01", "end": "2023-12-31"},
                }
            ],
        },
        source="year",
        env={},
    )
    store = MetricStore.open(config.store.url)
    from riskmon.store.migrate import upgrade

    upgrade(store.engine)
    model = config.models[0]
    out: dict[dt.date, dict[tuple[str, str], str]] = {}
    day = D(2025, 1, 1)
    while day <= D(2025, 12, 31):
        outcome = run_model(model, day, store=store)
        assert outcome.ok, (day, outcome.error)
        out[day] = {(a.rule, a.variable): a.status for a in outcome.alerts if a.segment == ""}
        out[day]["overall", ""] = Status.worst(a.status for a in outcome.alerts)
        day += dt.timedelta(days=2)
    assert len(store.runs("behaviour_pd")) == 183
    store.engine.dispose()
    return out


def _statuses(
    nights: dict[dt.date, dict[tuple[str, str], str]],
    rule: str,
    variable: str = "",
    *,
    before: dt.date | None = None,
    since: dt.date | None = None,
) -> set[str]:
    return {
        statuses[(rule, variable)]
        for day, statuses in nights.items()
        if (before is None or day < before) and (since is None or day >= since)
    }


@pytest.mark.slow
def test_no_stability_alert_before_the_drift_and_red_once_it_is_complete(nights: Nights) -> None:
    for characteristic in ("income", "region"):
        assert _statuses(nights, "csi", characteristic, before=DRIFT_FROM) == {"GREEN"}
        assert _statuses(nights, "csi", characteristic, since=D(2025, 11, 30)) == {"RED"}
    # age does not drift
    assert _statuses(nights, "csi", "age") == {"GREEN"}


@pytest.mark.slow
def test_stability_alerts_escalate_through_amber_and_never_back_to_green(nights: Nights) -> None:
    days = sorted(nights)
    series = [nights[d][("csi", "income")] for d in days]
    first_amber = next(i for i, s in enumerate(series) if s != "GREEN")
    first_red = series.index("RED")
    assert series[first_amber] == "AMBER"
    assert days[first_amber] >= DRIFT_FROM
    assert first_amber < first_red
    # the drift only grows: no return to green, and once red only a short wobble around the
    # red threshold (sampling noise) before it stays red
    assert set(series[first_amber:]) == {"AMBER", "RED"}
    last_amber = max(i for i, s in enumerate(series) if s == "AMBER")
    assert (days[last_amber] - days[first_red]).days <= 14


@pytest.mark.slow
def test_discrimination_alerts_follow_the_degrading_model(nights: Nights) -> None:
    # cohorts scored before the degradation: as-of dates up to one performance window later
    untouched = D(2025, 2, 1)
    fully_degraded = D(2025, 8, 31)  # cohort of August 2024: degradation complete
    for rule in ("auc_drop", "gini_drop", "ks_band"):
        assert "RED" not in _statuses(nights, rule, before=untouched), rule
        assert _statuses(nights, rule, since=fully_degraded) == {"RED"}, rule
    series = [nights[d][("auc_drop", "")] for d in sorted(nights)]
    assert series.index("AMBER") < series.index("RED")
    assert sorted(nights)[series.index("RED")] >= untouched


@pytest.mark.slow
def test_score_psi_follows_its_drifting_inputs_and_volume_stays_green(nights: Nights) -> None:
    # the score is computed from the characteristics: degradation blurs its ranking and leaves
    # its distribution (so its PSI) where it was, until incomes and utilisation drift; then
    # the score drifts with them
    assert _statuses(nights, "psi", "score", before=DRIFT_FROM) == {"GREEN"}
    assert "GREEN" not in _statuses(nights, "psi", "score", since=D(2025, 11, 30))
    # the first night, with no earlier run, is compared with the baseline's volume
    assert _statuses(nights, "volume_change") == {"GREEN"}
    assert _statuses(nights, "overall", since=D(2025, 11, 30)) == {"RED"}
