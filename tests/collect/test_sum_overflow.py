"""A target whose moments overflow a double (Σy² of a realised value of 1e200) fails the
collect naming the target column, on every strategy, instead of infinite moments."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from riskmon.collect import Source, collect
from riskmon.errors import SourceError

from .loans import load, loan_frame, model_config
from .test_collect import STRATEGIES_BY_DIALECT, request
from .test_target_moments import _with_moments


@pytest.mark.parametrize("strategy", STRATEGIES_BY_DIALECT["sqlite"])
def test_a_target_whose_squares_overflow_fails_naming_the_column(
    tmp_path: Path, strategy: str
) -> None:
    url = f"sqlite:///{tmp_path / 'loans.db'}"
    frame = loan_frame(seed=5, n=300, weighted=False)
    frame["lgd"] = pd.array(np.where(np.arange(300) % 50 == 0, 1e200, 0.4), dtype="Float64")
    load(url, frame)
    req = _with_moments(request(weighted=False), target="lgd")
    with Source(model_config(url, weighted=False)) as source, pytest.raises(SourceError) as info:
        collect(source, req, strategy=strategy)  # type: ignore[arg-type]
    message = str(info.value)
    assert "column 'lgd' (target)" in message
    assert "sum Σy²" in message
    assert "±1.8e+308" in message
