"""Alembic environment and versions of the riskmon metric store (shipped as riskmon.migrations)."""
