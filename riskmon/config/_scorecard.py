"""A scorecard's own attributes in the configuration: per characteristic, its bins (numeric
upper edges) or level groups (categorical), each optionally with its points, its points for a
missing value, and its special values, each a bin of its own.

A characteristic configured so is binned by the run and the baseline on these attributes
instead of fitted bins, and the characteristic analysis reads its points. The points are given
in the bin order of the baseline's binning (:func:`attribute_points`): the value bins, the
missing bin, for a categorical characteristic the "other" bin (levels the attributes do not
list), then the special values.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from riskmon.config._base import Strict as _Strict
from riskmon.config._base import twice as _twice

#: the key of ``attributes`` (mapping form) that gives the points of every level not listed
OTHER_ATTRIBUTE = "other"


def _finite(value: float | None, key: str) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError(f"{key}: expected a finite number of points, got {value!r}")
    return value


class PointsBin(_Strict):
    """One numeric attribute: the values up to ``upper`` (from the previous bin's upper,
    excluded), and its points; the last bin may leave ``upper`` out (no upper bound)."""

    upper: float | None = None
    points: float | None = None


class AttributeGroup(_Strict):
    """One categorical attribute: its levels and its points."""

    levels: list[str] = Field(min_length=1)
    points: float | None = None


class SpecialValue(_Strict):
    """A special value (``-999`` "no bureau record"): a bin of its own, with its points."""

    value: float | str
    points: float | None = None


class ScorecardAttributes(_Strict):
    """The keys a characteristic takes to be binned on the scorecard's own attributes."""

    #: a numeric characteristic's attributes, in increasing order: ``[{upper: 20000, points:
    #: 12}, ..., {points: 30}]``
    bins: list[PointsBin] | None = None
    #: a categorical characteristic's attributes: ``{north: 20, south: 15, other: 5}`` (each
    #: level its own attribute; ``other``, every level not listed) or ``[{levels: [north,
    #: east], points: 20}, ...]``
    attributes: list[AttributeGroup] | None = None
    #: the points of the ``other`` attribute: every level the attributes do not list
    other_points: float | None = None
    #: the points of a missing value
    missing_points: float | None = None
    #: special values, each a bin of its own: ``[-999, 0]`` or ``[{value: -999, points: 5}]``
    special: list[SpecialValue] = Field(default_factory=list)

    @field_validator("attributes", mode="before")
    @classmethod
    def _mapping(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return [
                {"levels": [str(level)], "points": points}
                for level, points in value.items()
                if level != OTHER_ATTRIBUTE
            ]
        return value

    @field_validator("special", mode="before")
    @classmethod
    def _plain(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [v if isinstance(v, dict) else {"value": v} for v in value]
        return value

    @model_validator(mode="before")
    @classmethod
    def _other(cls, data: Any) -> Any:
        attributes = data.get("attributes") if isinstance(data, dict) else None
        if isinstance(attributes, dict) and OTHER_ATTRIBUTE in attributes:
            if data.get("other_points") is not None:
                raise ValueError(
                    "attributes.other: expected the points of other levels once, got both "
                    "'attributes.other' and 'other_points'"
                )
            return {**data, "other_points": attributes[OTHER_ATTRIBUTE]}
        return data

    def check_attributes(self, kind: Literal["numeric", "categorical"]) -> None:
        """Raise naming the key path when the attributes do not fit ``kind`` or each other."""
        if kind == "numeric":
            self._check_numeric()
        else:
            self._check_categorical()
        _finite(self.missing_points, "missing_points")
        _finite(self.other_points, "other_points")
        values = [s.value for s in self.special]
        if _twice([str(v) for v in values]):
            raise ValueError(f"special: expected each value once, got {values}")
        for i, special in enumerate(self.special):
            _finite(special.points, f"special[{i}].points")
            if kind == "numeric" and not isinstance(special.value, (int, float)):
                raise ValueError(
                    f"special[{i}].value: expected a number for a numeric characteristic, got "
                    f"{special.value!r}"
                )

    def _check_numeric(self) -> None:
        if self.attributes is not None or self.other_points is not None:
            raise ValueError(
                "attributes: expected 'bins' (upper edges) for a numeric characteristic; "
                "'attributes' and 'other_points' are for categorical ones"
            )
        if self.bins is None:
            return
        for i, b in enumerate(self.bins):
            _finite(b.points, f"bins[{i}].points")
            if b.upper is None and i < len(self.bins) - 1:
                raise ValueError(
                    f"bins[{i}].upper: expected an upper edge (only the last bin may leave it out)"
                )
            if b.upper is not None and not math.isfinite(b.upper):
                raise ValueError(f"bins[{i}].upper: expected a finite number, got {b.upper!r}")
        uppers = [b.upper for b in self.bins if b.upper is not None]
        for i in range(1, len(uppers)):
            if uppers[i] <= uppers[i - 1]:
                raise ValueError(
                    f"bins[{i}].upper: expected edges increasing, got {uppers[i]:g} after "
                    f"{uppers[i - 1]:g}"
                )
        specials = {float(s.value) for s in self.special if isinstance(s.value, (int, float))}
        if specials & set(uppers):
            raise ValueError(
                f"special: expected values other than the bins' edges, got "
                f"{sorted(specials & set(uppers))}"
            )

    def _check_categorical(self) -> None:
        if self.bins is not None:
            raise ValueError(
                "bins: expected 'attributes' (levels) for a categorical characteristic; "
                "'bins' (upper edges) are for numeric ones"
            )
        if self.attributes is None:
            return
        seen: dict[str, int] = {}
        for i, group in enumerate(self.attributes):
            _finite(group.points, f"attributes[{i}].points")
            for level in group.levels:
                if level in seen:
                    raise ValueError(
                        f"attributes[{i}].levels: expected every level once, got {level!r} "
                        f"in attributes[{seen[level]}] too"
                    )
                seen[level] = i
        twice = sorted({str(s.value) for s in self.special} & set(seen))
        if twice:
            raise ValueError(
                f"special: expected values other than the attributes' levels, got {twice}"
            )

    @property
    def explicit(self) -> bool:
        """Whether the characteristic is binned on these attributes rather than fitted bins."""
        return self.bins is not None or self.attributes is not None

    @property
    def edges(self) -> tuple[float, ...]:
        """The numeric attributes' upper edges (an open last bin adds none)."""
        return tuple(float(b.upper) for b in self.bins or () if b.upper is not None)

    @property
    def level_groups(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(group.levels) for group in self.attributes or ())

    @property
    def special_values(self) -> tuple[float | str, ...]:
        return tuple(
            float(s.value) if isinstance(s.value, (int, float)) else s.value for s in self.special
        )

    @property
    def has_points(self) -> bool:
        """Whether any attribute carries points (the characteristic analysis applies)."""
        return any(p is not None for p in self.attribute_points())

    def attribute_points(self) -> tuple[float | None, ...]:
        """Each bin's points, in the bin order of the baseline's binning: the value bins (a
        numeric characteristic whose last bin has an upper edge has one more, above it, with
        no points), the missing bin, the "other" bin of a categorical characteristic, the
        special values."""
        special = tuple(s.points for s in self.special)
        if self.bins is not None:
            ordinary = [b.points for b in self.bins]
            if self.bins and self.bins[-1].upper is not None:
                ordinary.append(None)
            return (*ordinary, self.missing_points, *special)
        groups = tuple(group.points for group in self.attributes or ())
        return (*groups, self.missing_points, self.other_points, *special)
