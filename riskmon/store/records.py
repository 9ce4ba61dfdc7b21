"""The metric store's records as read back: runs, alerts, baselines, deliveries, history.

The records every layer shares (figures, bins, alerts to write, counts) live in
:mod:`riskmon.records`; these are the store's answers and carry its ids and timestamps.
"""

from __future__ import annotations

import datetime as dt
import math
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
#: it may be None; the texts (label, segment) are held apart. A whole number starts in 4 bytes
#: (``"i"``) and moves to 8 (``"q"``) when a value needs them.
_FIELDS = tuple(f.name for f in fields(BaselineBinRecord))
_NUMBERS = {
    "bin_index": ("i", False),
    "n_total": ("i", False),
    "total": ("d", False),
    "n_goods": ("i", True),
    "goods": ("d", True),
    "n_bads": ("i", True),
    "bads": ("d", True),
    "share": ("d", True),
}
#: the weights that, unweighted, are their counts: held only once one differs from its count
_COUNTED = {"total": "n_total", "goods": "n_goods", "bads": "n_bads"}
_TEXTS = ("label", "segment")
#: rows turned into columns at a time
_BATCH = 10_000
_INT32 = (-(2**31), 2**31 - 1)


def _counted(weights: Sequence[Any], counts: Sequence[Any]) -> bool:
    """Whether each weight is its count as a float (None where the count is None): then the
    weights read back as ``float(count)``, bit for bit."""
    for weight, count in zip(weights, counts, strict=True):
        if weight is None or count is None:
            if weight is not count:
                return False
        elif weight != count or (weight == 0 and math.copysign(1.0, weight) < 0):
            return False
    return True


class BaselineBins(RecordSequence[BaselineBinRecord]):
    """A baseline variable's bins held in columns: each number in an :class:`array.array` (4
    bytes a bin for a count, 8 for a weight or share), each distinct label and segment name
    once with a code a bin, the bins of each segment by position. A weight column is held only
    once a weight differs from its count: without a weight column, each weight is its count.
    A baseline of 5,000 segments holds about 590,000 bins: about 230 MB as records, 19 MB
    so, unweighted (``benchmarks/messy.md``). A bin is read as a :class:`BaselineBinRecord`,
    made when it is read; what reads a segment's bins in bulk reads its columns
    (:meth:`column`).
    """

    __slots__ = ("_codes", "_none", "_numbers", "_positions", "_texts")

    def __init__(self, rows: Iterable[Sequence[Any]] = ()) -> None:
        """The bins of ``rows``, each a bin's values in :class:`BaselineBinRecord`'s field
        order (a record is turned into such a row by :meth:`of`)."""
        # a weight column is None while each of its weights is its count (_COUNTED)
        self._numbers: dict[str, array[Any] | None] = {
            name: None if name in _COUNTED else array(code) for name, (code, _) in _NUMBERS.items()
        }
        # a byte a bin, 1 where the bin has no value; as long as the last bin without one
        self._none: dict[str, bytearray] = {n: bytearray() for n, (_, no) in _NUMBERS.items() if no}
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
        columns = dict(zip(_FIELDS, zip(*rows, strict=True), strict=True))
        for name, values in columns.items():
            if name in codes:
                known, texts = codes[name], self._texts[name]
                for text in values:
                    if text not in known:
                        known[text] = len(texts)
                        texts.append(text)
                self._codes[name].extend(map(known.__getitem__, values))
                continue
            counts = _COUNTED.get(name)
            if counts is not None and self._numbers[name] is None:
                if _counted(values, columns[counts]):
                    continue  # read back from its counts
                self._weigh(name, start)
            if name in self._none and None in values:
                none = self._none[name]
                none.extend(bytes(start - len(none)))
                none.extend(v is None for v in values)
                values = tuple(0 if v is None else v for v in values)
            self._append(name, values)

    def _append(self, name: str, values: Sequence[Any]) -> None:
        column = self._numbers[name]
        assert column is not None
        if column.typecode == "i" and (min(values) < _INT32[0] or max(values) > _INT32[1]):
            column = self._numbers[name] = array("q", column)  # a count beyond 4 bytes
        column.extend(values)

    def _weigh(self, name: str, stop: int) -> None:
        """Hold weight column ``name``: its first ``stop`` weights are their counts."""
        counts = _COUNTED[name]
        held = self._numbers[counts]
        assert held is not None
        self._numbers[name] = array("d", map(float, held[:stop]))
        if counts in self._none:  # those of the rows before; this batch's are added after
            self._none[name] = self._none[counts][:stop]

    def __len__(self) -> int:
        return len(self._codes["segment"])

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
        values, none = self._numbers[name], self._none.get(name, b"")
        if values is None:  # each weight is its count
            return [None if n is None else float(n) for n in self.column(_COUNTED[name], positions)]
        if not isinstance(positions, range) or positions.step != 1:
            ended = len(none)
            return [None if p < ended and none[p] else values[p] for p in positions]
        start, stop = positions.start, positions.stop
        out: list[Any] = values[start:stop].tolist()
        part = none[start:stop]
        at = part.find(1)
        while at >= 0:
            out[at] = None
            at = part.find(1, at + 1)
        return out


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
