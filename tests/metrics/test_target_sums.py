"""TargetTable: the moments of a continuous target per bin, from arrays and from cells."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from riskmon.metrics import TARGET_MOMENTS, WEIGHTED_TARGET_MOMENTS, TargetTable, _target_sums


def test_the_examples_run() -> None:
    assert doctest.testmod(_target_sums, raise_on_error=True).failed == 0


def _loans(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 200
    y = np.where(rng.random(n) < 0.4, np.nan, rng.random(n))
    return y, rng.random(n), rng.integers(0, 4, n), rng.gamma(2.0, 3.0, n)


def test_from_arrays_sums_by_the_formulas() -> None:
    y, s, bins, w = _loans(1)
    table = TargetTable.from_arrays(y, s, bins, n_bins=4, sample_weight=w)
    realised = ~np.isnan(y)
    for b in range(4):
        m = (bins == b) & realised
        yy, ss, ww = y[m], s[m], w[m]
        expected = {
            "n": (bins == b).sum(),
            "w": w[bins == b].sum(),
            "n_y": m.sum(),
            "y": yy.sum(),
            "y2": (yy**2).sum(),
            "s": ss.sum(),
            "s2": (ss**2).sum(),
            "sy": (ss * yy).sum(),
            "w_y": ww.sum(),
            "wy": (ww * yy).sum(),
            "wy2": (ww * yy**2).sum(),
            "ws": (ww * ss).sum(),
            "ws2": (ww * ss**2).sum(),
            "wsy": (ww * ss * yy).sum(),
            "w2_y": (ww**2).sum(),
            "ad": np.abs(yy - ss).sum(),
            "d2": ((yy - ss) ** 2).sum(),
            "wad": (ww * np.abs(yy - ss)).sum(),
            "wd2": (ww * (yy - ss) ** 2).sum(),
        }
        for name, value in expected.items():
            assert getattr(table, name)[b] == pytest.approx(value, rel=1e-12), (b, name)


@pytest.mark.parametrize("weighted", [False, True])
def test_from_cells_adds_up_to_from_arrays(weighted: bool) -> None:
    y, s, bins, w = _loans(2)
    weights = w if weighted else None
    whole = TargetTable.from_arrays(y, s, bins, n_bins=4, sample_weight=weights)
    names = [*TARGET_MOMENTS, *(WEIGHTED_TARGET_MOMENTS if weighted else ())]
    cells = []
    for half in (slice(0, 90), slice(90, None)):  # two cells per bin, as two segments' rows
        part_weights = None if weights is None else weights[half]
        part = TargetTable.from_arrays(
            y[half], s[half], bins[half], n_bins=4, sample_weight=part_weights
        )
        for b in range(4):
            moments = [getattr(part, name)[b] for name in names]
            cells.append((b, part.n[b], part.w[b], moments))
    built = TargetTable.from_cells(cells, n_bins=4, weighted=weighted, labels=whole.labels)
    assert built.equals(whole)
    assert built.portfolio().equals(whole.portfolio())
    assert not built.equals(TargetTable.from_arrays(y, s * 2, bins, n_bins=4))


def test_means_and_what_is_not_available() -> None:
    table = TargetTable.from_arrays(
        [0.2, 0.4, None], [0.1, 0.3, 0.9], [0, 0, 1], n_bins=3, sample_weight=[1.0, 3.0, 2.0]
    )
    assert table.mean_realised() == pytest.approx([0.3, None, None])
    assert table.mean_realised(weighted=True)[0] == pytest.approx(0.35)
    assert table.mean_predicted() == pytest.approx([0.2, None, None])
    assert table.mean_predicted(weighted=True)[0] == pytest.approx(0.25)
    # a bin with loans but no realised target, and an empty bin: both "not available"
    assert table.n.tolist() == [2.0, 1.0, 0.0]
    assert table.mean_realised()[1:] == [None, None]
