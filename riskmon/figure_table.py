"""A run's figures held in columns and looked up by (name, population, variable, segment).

:class:`Figures` is what evaluating a run, its report and the families that read other
figures look figures up in. Its records are held by :class:`~riskmon.held.Held`: a run of
5,000 segments holds about 240,000 figures in a fraction of the memory records take.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from riskmon.held import Held
from riskmon.records import ALL, FigureRecord


class Figures(Sequence[FigureRecord]):
    """A run's figures, held in columns (:class:`~riskmon.held.Held`), looked up by (name,
    population, variable, segment) by bisection over sorted keys. ``Figures(figures)`` of another
    ``Figures`` holds the same records, not a copy: extending one extends both."""

    def __init__(self, records: Iterable[FigureRecord] = ()):
        self.records: Held[FigureRecord] = (
            records.records if isinstance(records, Figures) else Held(FigureRecord, records)
        )

    def extend(self, records: Iterable[FigureRecord]) -> None:
        self.records.extend(records)

    def get(
        self, name: str, population: str, variable: str = "", segment: str = ""
    ) -> FigureRecord | None:
        position = self.records.find(_KEY, (name, population, variable, segment))
        return None if position is None else self.records[position]

    def value(
        self, name: str, population: str, variable: str = "", segment: str = ""
    ) -> float | None:
        position = self.records.find(_KEY, (name, population, variable, segment))
        value: float | None = None if position is None else self.records.field(position, "value")
        return value

    def named(self, name: str, **texts: str) -> Iterator[FigureRecord]:
        """The figures called ``name`` (and whose ``population``, ``variable`` or
        ``segment`` are those given in ``texts``), in order."""
        return self.records.where(name=name, **texts)

    def names(self) -> set[str]:
        """The names of the figures held."""
        return self.records.distinct("name")

    def segments(self) -> list[str]:
        """Every segment with a figure, the whole population first."""
        return sorted(self.records.distinct("segment"), key=_whole_first)

    def variables(self, name: str) -> list[str]:
        """The variables figure ``name`` was computed for (whole population), in order."""
        code, all_code = self.records.code("name", name), self.records.code("segment", ALL)
        if code is None or all_code is None:
            return []
        texts = self.records.texts("variable")
        chosen = zip(
            self.records.codes("name"),
            self.records.codes("segment"),
            self.records.codes("variable"),
            strict=True,
        )
        chosen_variables = (v for n, s, v in chosen if n == code and s == all_code and v >= 0)
        return list(dict.fromkeys(texts[v] for v in chosen_variables))

    def __getitem__(self, index: int) -> FigureRecord:  # type: ignore[override]
        return self.records[index]

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[FigureRecord]:
        return iter(self.records)

    def __eq__(self, other: object) -> bool:
        return self.records == other

    __hash__ = None  # type: ignore[assignment]


def _whole_first(segment: str) -> tuple[bool, str]:
    return segment != ALL, segment


#: the fields a figure is looked up by
_KEY = ("name", "population", "variable", "segment")
