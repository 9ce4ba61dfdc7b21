"""The metric store's records as read back: runs, alerts, baselines, deliveries, history.

The records every layer shares (figures, bins, alerts to write, counts) live in
:mod:`riskmon.records`; these are the store's answers and carry its ids and timestamps.
"""

from __future__ import annotations

import datetime as dt
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from riskmon.figure_table import Figures
from riskmon.held import RecordSequence
from riskmon.records import BASELINE, FigureRecord


@dataclass(frozen=True, slots=True)
class BaselineBinRecord:
    """The baseline's counts in one bin: all loans, and the labeled loans' goods and bads."""

    bin_index: int
    label: str
    n_total: int
    total: float
    segment: str = ""
    n_goods: int | None = None
    goods: float | None = None
    n_bads: int | None = None
    bads: float | None = None
    share: float | None = None


#: :class:`BaselineBinRecord`'s fields in order, each number's ``array`` type code, and whether
#: it may be None; the texts (label, segment) are held apart
_FIELDS = tuple(f.name for f in fields(BaselineBinRecord))
_NUMBERS = {
    "bin_index": ("q", False),
    "n_total": ("q", False),
    "total": ("d", False),
    "n_goods": ("q", True),
    "goods": ("d", True),
    "n_bads": ("q", True),
    "bads": ("d", True),
    "share": ("d", True),
}
_TEXTS = ("label", "segment")
#: rows turned into columns at a time
_BATCH = 10_000


class BaselineBins(RecordSequence[BaselineBinRecord]):
    """A baseline variable's bins held in columns: each number in an :class:`array.array`
    (8 bytes a bin), each distinct label and segment name once with a code a bin, the bins of
    each segment by position. A baseline of 5,000 segments holds about 590,000 bins: about
    230 MB as records, about 50 MB so (``benchmarks/messy.md``). A bin is read as a
    :class:`BaselineBinRecord`, made when it is read; what reads a segment's bins in bulk reads
    its columns (:meth:`column`).
    """

    __slots__ = ("_codes", "_none", "_numbers", "_positions", "_texts")

    def __init__(self, rows: Iterable[Sequence[Any]] = ()) -> None:
        """The bins of ``rows``, each a bin's values in :class:`BaselineBinRecord`'s field
        order (a record is turned into such a row by :meth:`of`)."""
        self._numbers = {name: array(code) for name, (code, _) in _NUMBERS.items()}
        self._none: dict[str, set[int]] = {n: set() for n, (_, none) in _NUMBERS.items() if none}
        self._codes = {name: array("i") for name in _TEXTS}
        self._texts: dict[str, list[str]] = {name: [] for name in _TEXTS}  # by code
        self._positions: dict[str, Sequence[int]] | None = None
        codes: dict[str, dict[str, int]] = {name: {} for name in _TEXTS}
        batch: list[Sequence[Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == _BATCH:
                self._extend(batch, codes)
                batch = []
        self._extend(batch, codes)

    @classmethod
    def of(cls, records: Iterable[BaselineBinRecord]) -> BaselineBins:
        """The bins of ``records``, held in columns."""
        if isinstance(records, BaselineBins):
            return records
        return cls(tuple(getattr(r, name) for name in _FIELDS) for r in records)

    def _extend(self, rows: list[Sequence[Any]], codes: dict[str, dict[str, int]]) -> None:
        """Append ``rows``; ``codes``: each text's code so far."""
        if not rows:
            return
        start = len(self)
        for name, values in zip(_FIELDS, zip(*rows, strict=True), strict=True):
            if name in codes:
                known, texts = codes[name], self._texts[name]
                for text in values:
                    if text not in known:
                        known[text] = len(texts)
                        texts.append(text)
                self._codes[name].extend(map(known.__getitem__, values))
                continue
            if name in self._none and None in values:
                self._none[name].update(start + i for i, v in enumerate(values) if v is None)
                values = tuple(0 if v is None else v for v in values)
            self._numbers[name].extend(values)

    def __len__(self) -> int:
        return len(self._numbers["bin_index"])

    def _record(self, position: int) -> BaselineBinRecord:
        return BaselineBinRecord(*(self.column(name, (position,))[0] for name in _FIELDS))

    def __iter__(self) -> Iterator[BaselineBinRecord]:
        return (BaselineBinRecord(*values) for values in self.rows())

    def rows(self) -> Iterator[tuple[Any, ...]]:
        """Each bin's values in :class:`BaselineBinRecord`'s field order, read a batch of
        columns at a time."""
        for start in range(0, len(self), _BATCH):
            positions = range(start, min(start + _BATCH, len(self)))
            yield from zip(*(self.column(name, positions) for name in _FIELDS), strict=True)

    def __repr__(self) -> str:
        return f"BaselineBins({len(self)} bins, {len(self.segments())} segments)"

    def segments(self) -> dict[str, Sequence[int]]:
        """The positions of each segment's bins, by segment name: a ``range`` where they are
        consecutive (as the store reads them back), else an array of them."""
        if self._positions is None:
            names, codes = self._texts["segment"], self._codes["segment"]
            first, last, count = [-1] * len(names), [0] * len(names), [0] * len(names)
            for position, code in enumerate(codes):
                if first[code] < 0:
                    first[code] = position
                last[code] = position
                count[code] += 1
            positions: dict[str, Sequence[int]] = {}
            apart: dict[int, array[int]] = {}
            for code, name in enumerate(names):
                if count[code] == last[code] - first[code] + 1:
                    positions[name] = range(first[code], last[code] + 1)
                else:
                    positions[name] = apart[code] = array("l")
            if apart:
                for position, code in enumerate(codes):
                    if code in apart:
                        apart[code].append(position)
            self._positions = positions
        return self._positions

    def column(self, name: str, positions: Iterable[int]) -> list[Any]:
        """Field ``name`` of the bins at ``positions`` (None where a bin has none)."""
        if name in self._texts:
            texts, codes = self._texts[name], self._codes[name]
            return [texts[codes[p]] for p in positions]
        values, none = self._numbers[name], self._none.get(name, ())
        if not isinstance(positions, range) or positions.step != 1:
            return [None if p in none else values[p] for p in positions]
        start, stop = positions.start, positions.stop
        out: list[Any] = values[start:stop].tolist()
        if len(none) < len(out):  # a few bins without a value (else, below: most of them)
            for p in none:
                if start <= p < stop:
                    out[p - start] = None
            return out
        return [None if p in none else v for p, v in zip(positions, out, strict=True)]


@dataclass(frozen=True)
class BaselineVariableRecord:
    """One variable of a baseline: its frozen binning and its bins (held in columns:
    records given are turned into :class:`BaselineBins`)."""

    variable: str
    kind: str
    binning: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)
    bins: BaselineBins = field(default_factory=BaselineBins)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bins", BaselineBins.of(self.bins))


@dataclass(frozen=True)
class StoredBaseline:
    """A frozen baseline version, as read back."""

    id: int
    model: str
    version: int
    window_start: dt.date
    window_end: dt.date
    frozen_at: dt.datetime
    config_hash: str
    n_rows: int
    n_bads: int | None
    riskmon_version: str
    variables: dict[str, BaselineVariableRecord]
    #: held in columns when read from the store (:class:`riskmon.figure_table.Figures`)
    figures: Sequence[FigureRecord]

    def figure(self, name: str, variable: str = "", segment: str = "") -> FigureRecord | None:
        """The baseline figure ``name`` (of ``variable`` and ``segment``), if stored."""
        if isinstance(self.figures, Figures):  # as read from the store: looked up by its key
            return self.figures.get(name, BASELINE, variable, segment)
        for f in self.figures:
            if (f.name, f.variable, f.segment) == (name, variable, segment):
                return f
        return None


@dataclass(frozen=True)
class RunRecord:
    """A stored run, as read back."""

    id: int
    model: str
    as_of: dt.date
    status: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    n_current: int | None
    n_matured: int | None
    n_unmatured: int | None
    error: str | None
    riskmon_version: str
    config_hash: str
    baseline_id: int | None
    #: what the run measured, as it planned it (windows, columns); None for older runs
    plan: dict[str, Any] | None = None
    #: the process that holds or held the run: ``host:pid``
    owner: str | None = None
    #: where its figures came from (code, configuration, statements, windows, baseline);
    #: None for runs stored before riskmon kept it
    provenance: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class StoredAlert:
    """An alert as stored, with its notification state (slotted: a run of thousands of
    segments reads tens of thousands)."""

    id: int
    run_id: int
    rule: str
    status: str
    value: float | None
    thresholds: dict[str, Any]
    message: str
    variable: str
    segment: str
    notify_state: str
    notify_attempts: int
    notify_error: str | None


@dataclass(frozen=True)
class DeliveryRecord:
    """One notification of a run to one channel."""

    run_id: int
    channel: str
    state: str
    attempts: int
    last_error: str | None
    last_attempt_at: dt.datetime
    sent_at: dt.datetime | None


@dataclass(frozen=True)
class HistoryPoint:
    """One figure of one succeeded run."""

    as_of: dt.date
    value: float | None
    reason: str | None
    run_id: int


#: the assessment scale of a review: the four levels of the ECB's instructions for reporting
#: the validation results of internal models, best first
ASSESSMENTS = {
    1: "no deficiencies",
    2: "minor deficiencies",
    3: "major deficiencies",
    4: "severe deficiencies",
}


@dataclass(frozen=True)
class ReviewRecord:
    """A validator's review of a run, as stored (never changed once appended)."""

    id: int
    run_id: int
    model: str
    as_of: dt.date
    decision: str
    assessment: int | None
    reviewer: str
    note: str | None
    reviewed_at: dt.datetime

    @property
    def assessment_text(self) -> str | None:
        """The assessment in words ("2 – minor deficiencies"), None when not given."""
        if self.assessment is None:
            return None
        return f"{self.assessment} – {ASSESSMENTS[self.assessment]}"
