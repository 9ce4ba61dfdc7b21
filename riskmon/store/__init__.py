"""The metric store: history of runs, figures, bins and alerts, migrated by Alembic."""

from riskmon.store._session import StoreConflict
from riskmon.store.metric_store import MetricStore
from riskmon.store.migrate import check_schema, downgrade, upgrade
from riskmon.store.records import (
    ASSESSMENTS,
    BaselineBinRecord,
    BaselineBins,
    BaselineVariableRecord,
    DeliveryRecord,
    HistoryPoint,
    ReviewRecord,
    RunRecord,
    StoredAlert,
    StoredBaseline,
)
from riskmon.store.runs import (
    RunAlreadySucceeded,
    RunInProgressError,
    default_owner,
    owner_is_dead,
)

__all__ = [
    "ASSESSMENTS",
    "BaselineBinRecord",
    "BaselineBins",
    "BaselineVariableRecord",
    "DeliveryRecord",
    "HistoryPoint",
    "MetricStore",
    "ReviewRecord",
    "RunAlreadySucceeded",
    "RunInProgressError",
    "RunRecord",
    "StoreConflict",
    "StoredAlert",
    "StoredBaseline",
    "check_schema",
    "default_owner",
    "downgrade",
    "owner_is_dead",
    "upgrade",
]
