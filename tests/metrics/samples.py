"""Random samples the metric tests share."""

from __future__ import annotations

import numpy as np


def tied_sample(
    seed: int,
    n: int,
    *,
    bad_rate: float,
    shift: float,
    decimals: int = 1,
    weighted: bool = False,
    max_weight: float = 3.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Labels (``bad_rate`` bads), heavily tied scores (rounded to ``decimals``) whose bads sit
    ``shift`` standard deviations higher, and optional weights in [0.1, ``max_weight``]."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < bad_rate).astype(int)
    s = np.round(rng.normal(size=n) + shift * y, decimals)
    w = rng.uniform(0.1, max_weight, n) if weighted else None
    return y, s, w
