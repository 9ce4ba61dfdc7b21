"""The labels of a score table: each distinct score as text, formatted only when read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np

from riskmon.metrics._validation import FloatArray


class ScoreLabels(Sequence[str]):
    """The labels of a score table: each score as text, formatted only when read.

    A table of 10M distinct scores would otherwise spend seconds formatting labels that no
    figure reads.
    """

    __slots__ = ("_values",)

    def __init__(self, values: FloatArray):
        self._values = values

    def __len__(self) -> int:
        return int(self._values.shape[0])

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> ScoreLabels: ...
    def __getitem__(self, index: int | slice) -> str | ScoreLabels:
        if isinstance(index, slice):
            return ScoreLabels(self._values[index])
        return f"{float(self._values[index]):.10g}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ScoreLabels):
            return bool(np.array_equal(self._values, other._values))
        if isinstance(other, (tuple, list)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ScoreLabels({len(self)} scores)"

    @property
    def values(self) -> FloatArray:
        """The scores these labels are of."""
        return self._values
