"""The metric store: history of runs, figures, bins and alerts, migrated by Alembic."""

from riskmon.store.migrate import check_schema, downgrade, upgrade
from riskmon.store.repository import MetricStore

__all__ = ["MetricStore", "check_schema", "downgrade", "upgrade"]
