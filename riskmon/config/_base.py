"""The base of every configuration model: unknown keys refused, values frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """A configuration section: a key it does not know is an error, not ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)
