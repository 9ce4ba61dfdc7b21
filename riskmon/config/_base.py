"""What every configuration model shares: unknown keys refused and values frozen (``Strict``),
calendar periods, and the check for names given twice."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Strict(BaseModel):
    """A configuration section: a key it does not know is an error, not ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


_PERIOD = re.compile(r"^\s*(?P<count>\d+)\s*(?P<unit>day|week|month|year)s?\s*$", re.IGNORECASE)


def twice(names: list[str]) -> list[str]:
    """The names given more than once, sorted."""
    return sorted({n for n in names if names.count(n) > 1})


class Period(Strict):
    """A calendar length such as ``1 month`` or ``12 months`` (days, weeks, months, years)."""

    count: int = Field(gt=0)
    unit: Literal["day", "week", "month", "year"]

    @model_validator(mode="before")
    @classmethod
    def _parse(cls, value: Any) -> Any:
        if isinstance(value, str):
            match = _PERIOD.match(value)
            if not match:
                raise ValueError(
                    f"expected a period like '1 month', '12 months', '4 weeks' or '30 days', "
                    f"got {value!r}"
                )
            return {"count": int(match["count"]), "unit": match["unit"].lower()}
        return value

    def __str__(self) -> str:
        return f"{self.count} {self.unit}{'s' if self.count != 1 else ''}"


def days(period: Period) -> float:
    """A period's length in days, a month taken as its average length."""
    return period.count * {"day": 1.0, "week": 7.0, "month": 30.44, "year": 365.25}[period.unit]
