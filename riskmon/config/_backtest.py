"""What the back-testing of an LGD, CCF or EAD model is configured with (ECB instructions for
reporting validation results, 2019, §2.6–2.9), and the checks a model of those kinds passes."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from riskmon.config._base import Strict

#: the most grades an LGD, CCF or EAD model's back-test reports one by one (ECB instructions,
#: 2019, §2.6.2): a grade column with more in the initial sample is back-tested per ECB segment
#: of the estimate instead
MAX_GRADES = 20


class Backtest(Strict):
    """Back-testing of a continuous-target model's estimates against realised values."""

    #: the gAUC the model had at its initial validation; default: the frozen baseline's
    initial_gauc: float | None = Field(default=None, ge=0, le=1)
    #: fewer closed recoveries than this in the observation period (or a grade) are not judged
    min_closed: int = Field(default=20, ge=2)


def check_kind(model: Any) -> None:
    """A PD model (a ``ModelConfig``, which imports this module) has a label; an LGD, CCF or
    EAD model a realised value instead, and none of the binary outcome's options. Raises
    ValueError naming the key."""
    cols = model.columns
    if model.kind == "pd":
        if cols.label is None:
            raise ValueError("columns.label: required for a model of kind 'pd'")
        given = [k for k in _CONTINUOUS_ONLY if getattr(cols, k) is not None]
        if given:
            raise ValueError(
                f"columns.{given[0]}: only for a model of kind 'lgd', 'ccf' or 'ead' (kind is 'pd')"
            )
        return
    if cols.realised is None:
        raise ValueError(f"columns.realised: required for a model of kind {model.kind!r}")
    if cols.label is not None:
        raise ValueError(
            f"columns.label: a model of kind {model.kind!r} has no binary outcome; name the "
            "realised value in columns.realised"
        )
    if cols.weight is not None:
        raise ValueError(
            f"columns.weight: a model of kind {model.kind!r} weights by its exposure at default; "
            "name it in columns.exposure"
        )
    if model.challengers or model.rating.migration or model.characteristics:
        raise ValueError(
            f"a model of kind {model.kind!r} takes no challengers, characteristics or "
            "rating.migration (they read a binary outcome)"
        )


_CONTINUOUS_ONLY = ("realised", "exposure", "grade")
