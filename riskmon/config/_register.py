"""The threshold register: why a rule's levels are what they are, and who approved them.

Every rule's levels may carry ``rationale``, ``source`` (the policy or the regulation behind
them, e.g. "ECB instructions 2.5.3.1") and ``approved: {by, on}``; they never change a
figure, so a model's fingerprint leaves them out (:data:`DOCUMENTATION_KEYS`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import Field

from riskmon.config._base import Strict as _Strict

#: the keys that document levels, beside the levels themselves
DOCUMENTATION_KEYS = ("rationale", "source", "approved")


class Approval(_Strict):
    """Who approved a rule's levels, and when."""

    by: str = Field(min_length=1)
    on: dt.date


class Documentation(_Strict):
    """Why a rule's levels are what they are, where they come from, who approved them."""

    rationale: str | None = None
    source: str | None = None
    approved: Approval | None = None

    @property
    def given(self) -> bool:
        """Whether any of the three is set."""
        return any(getattr(self, k) is not None for k in DOCUMENTATION_KEYS)


class Documented(Documentation):
    """Levels that carry their documentation (bands, drops, p-value levels)."""

    @property
    def documentation(self) -> Documentation:
        return Documentation(rationale=self.rationale, source=self.source, approved=self.approved)


def without_documentation(data: Any) -> Any:
    """``data`` (the dumped thresholds) without the documentation keys, at any depth."""
    if isinstance(data, dict):
        kept = {
            k: without_documentation(v)
            for k, v in data.items()
            if k not in (*DOCUMENTATION_KEYS, "ks_documentation", "documented_rules")
        }
        # levels that held documentation alone (at their defaults) are as if not given
        return {k: v for k, v in kept.items() if v != {} or data[k] == {}}
    if isinstance(data, list):
        return [without_documentation(v) for v in data]
    return data
