"""What a loan must satisfy to be counted (a score, a weight, not under the EAD approach), as
SQL conditions on the loans' columns: the ``WHERE`` of every collect statement but those that
count the loans left out (:func:`.selection.exclusion_counts`) and those reading a window that
count found nothing to leave out of (:func:`.exclusions.known_usable`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Double, Integer, cast, func, literal, or_


def usable_rows(
    score: ColumnElement[Any] | None,
    weight: ColumnElement[Any] | None,
    *,
    exclude: bool,
    score_range: tuple[float, float] | None = None,
    flag: ColumnElement[Any] | None = None,
) -> list[ColumnElement[bool]]:
    """What a loan must satisfy to be counted: a weight other than 0 (a zero weight counts for
    nothing, and would inflate the sample sizes); with ``exclude``, a score (within
    ``score_range``) and a positive weight too (without, a NULL score or an invalid weight is
    read, and the collect fails); with ``flag``, that column not 1 (true)."""
    out: list[ColumnElement[bool]] = []
    if flag is not None:
        out.append(~flagged(flag))
    if exclude and score is not None:
        out += [score.is_not(None), finite(score)]
        if score_range is not None:
            out.append(in_range(score, score_range))
    if weight is not None:
        out.append(weight > 0 if exclude else or_(weight.is_(None), weight != 0))
    return out


#: the largest finite double: NaN (greater than every number in PostgreSQL and DuckDB) and the
#: infinities lie outside [−MAX, MAX], and no engine has to bind an infinity
_MAX_DOUBLE = 1.7976931348623157e308


def flagged(flag: ColumnElement[Any]) -> ColumnElement[bool]:
    """A flag column is set: 1 or true (NULL, 0 and false are not), on every engine."""
    return func.coalesce(cast(flag, Integer), literal(0, Integer())) == literal(1, Integer())


def in_range(value: ColumnElement[Any], bounds: tuple[float, float]) -> ColumnElement[bool]:
    """``value`` lies within [low, high] (bound as parameters)."""
    low: ColumnElement[float] = literal(float(bounds[0]), Double())
    high: ColumnElement[float] = literal(float(bounds[1]), Double())
    return value.between(low, high)


def finite(value: ColumnElement[Any]) -> ColumnElement[bool]:
    """``value`` is a finite number: not NaN, not ±infinity (nor NULL)."""
    bound: ColumnElement[float] = literal(_MAX_DOUBLE, Double())
    return value.between(-bound, bound)
