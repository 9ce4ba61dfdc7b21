"""What the back-testing of an LGD, CCF or EAD model is configured with (ECB instructions for
reporting validation results, 2019, §2.6–2.9), and the checks a model of those kinds passes."""

from __future__ import annotations

from typing import Any, Literal

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
    #: what an LGD model estimates: ``performing`` (the LGD of performing facilities, §2.6:
    #: one-sided t-test, H0 the estimate is not too low), ``elbe`` (the expected loss best
    #: estimate of defaulted facilities, §2.7: two-sided) or ``in_default`` (the LGD in-default,
    #: §2.8: one-sided); the last two are tested at reference points after default
    estimate: Literal["performing", "elbe", "in_default"] = "performing"
    #: the column holding each facility's reference point (years after default at which its
    #: ELBE or LGD in-default was estimated: 0, 1, 3, 5, 7), one of ``columns.segments``: the
    #: back-test of each reference point is that segment's
    reference_point: str | None = None

    @property
    def alternative(self) -> Literal["greater", "two-sided"]:
        """The t-test's alternative: two-sided for the ELBE, else "greater" (too low)."""
        return "two-sided" if self.estimate == "elbe" else "greater"


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
    _check_estimate(model)
    if cols.ead_approach is not None and model.kind != "ccf":
        raise ValueError(f"columns.ead_approach: only for a model of kind 'ccf' ({model.kind!r})")
    if model.challengers or model.rating.migration or model.characteristics:
        raise ValueError(
            f"a model of kind {model.kind!r} takes no challengers, characteristics or "
            "rating.migration (they read a binary outcome)"
        )


def _check_estimate(model: Any) -> None:
    """An ELBE or LGD in-default model names its reference-point column among its segments."""
    backtest = model.backtest
    if backtest.estimate == "performing":
        if backtest.reference_point is not None:
            raise ValueError(
                "backtest.reference_point: only for backtest.estimate 'elbe' or 'in_default'"
            )
        return
    if model.kind != "lgd":
        raise ValueError(
            f"backtest.estimate: {backtest.estimate!r} is an LGD model's (kind is {model.kind!r})"
        )
    if backtest.reference_point is None:
        raise ValueError(
            f"backtest.reference_point: required for backtest.estimate {backtest.estimate!r} "
            "(the column of the years after default each estimate was taken at)"
        )
    if backtest.reference_point not in model.columns.segments:
        raise ValueError(
            f"backtest.reference_point: {backtest.reference_point!r} must be one of "
            f"columns.segments {list(model.columns.segments)!r} (each reference point is "
            "back-tested as a segment)"
        )


_CONTINUOUS_ONLY = ("realised", "exposure", "grade", "downturn", "ead_approach")
