"""The streaming reader (SQLite's default shape) reads what a driver returns without pandas:
its group codes as ``pandas.factorize`` gives them, its numbers as ``pandas.to_numeric``
coerces them, and a collect that imports no pandas."""

from __future__ import annotations

import decimal
import math
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from riskmon.collect.moments import as_doubles
from riskmon.collect.stream import _codes

#: what drivers return in a group column or a raw value, NaN and its numpy kind included
VALUES = st.one_of(
    st.none(),
    st.just(float("nan")),
    st.just(np.float64("nan")),
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1.0, True, False]),
    st.sampled_from(["a", "b", "1", ""]),
)


def _factorized(values: list[Any]) -> tuple[list[int], list[Any]]:
    """The streaming reader's codes as pandas gave them (its code until pandas left it)."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    codes, uniques = pd.factorize(array, use_na_sentinel=False)
    distinct = np.asarray(uniques, dtype=object)
    distinct[pd.isna(distinct)] = None
    return codes.tolist(), distinct.tolist()


def _same(a: list[Any], b: list[Any]) -> bool:
    """Equal, value by value and kind by kind (1 is not 1.0 nor True), NaN equal to NaN."""
    return len(a) == len(b) and all(
        type(x) is type(y) and (x == y or (x != x and y != y)) for x, y in zip(a, b, strict=True)
    )


@settings(max_examples=400, deadline=None)
@given(values=st.lists(VALUES, max_size=40))
def test_the_group_codes_are_pandas_factorize(values: list[Any]) -> None:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    codes, distinct = _codes(array)
    want_codes, want_distinct = _factorized(values)
    assert codes.tolist() == want_codes
    assert _same(distinct.tolist(), want_distinct)


NUMBERS = st.one_of(
    VALUES,
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).filter(lambda d: abs(d) < 10**6),
    st.sampled_from(["x", "1.5", "nan"]),
)


@settings(max_examples=400, deadline=None)
@given(values=st.lists(NUMBERS, max_size=40))
def test_numbers_are_coerced_as_pandas_to_numeric_coerces_them(values: list[Any]) -> None:
    """The same doubles, NaN where pandas gives NaN; a zero's sign aside, which pandas drops
    where it reads the values as integers first ([0, -0.0] gives 0.0 twice) and which no sum,
    weight or PD test tells apart."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    got = as_doubles(array)
    want = pd.to_numeric(pd.Series(array), errors="coerce").to_numpy(np.float64)
    assert got.dtype == np.float64
    assert got.shape == want.shape
    for x, y in zip(got.tolist(), want.tolist(), strict=True):
        assert (math.isnan(x) and math.isnan(y)) or x == y, (x, y)


def test_a_decimal_is_read_as_its_double() -> None:
    assert as_doubles(np.array([decimal.Decimal("0.125"), None], dtype=object)).tolist()[0] == 0.125


def test_a_streamed_collect_imports_no_pandas(tmp_path: Path) -> None:
    """A collect of a segmented, weighted book through the streaming reader, in a fresh
    process: pandas is not imported (it is, by this test, to write the book and fit its bins:
    the model and the request reach the process pickled)."""
    from .loans import load, loan_frame, model_config
    from .test_collect import fitted_on, request

    url = f"sqlite:///{tmp_path / 'loans.db'}"
    frame = loan_frame(seed=3, n=500)
    load(url, frame)
    made = tmp_path / "request.pickle"
    req = fitted_on(frame, request(weighted=True), 6)
    made.write_bytes(pickle.dumps((model_config(url, weighted=True), req)))
    program = textwrap.dedent(
        f"""
        import pickle, sys
        from riskmon.collect import Source, collect
        model, request = pickle.loads(open({str(made)!r}, "rb").read())
        assert "pandas" not in sys.modules
        with Source(model) as source:
            collected = collect(source, request, strategy="stream")
        assert collected.tables
        print("pandas" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip().splitlines()[-1] == "False"
