"""The one-sided Fisher exact test against scipy.stats.fisher_exact and exact fractions."""

from __future__ import annotations

import doctest
import importlib
import math
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import fisher_exact

from riskmon.errors import InvalidDataError
from riskmon.metrics import fisher_exact_greater

counts = st.integers(min_value=0, max_value=60)
large = st.integers(min_value=0, max_value=200_000)


def _by_fractions(a: int, b: int, c: int, d: int) -> Fraction:
    """P(X >= a) for the table's first cell X, margins fixed: the tables at least as
    extreme, each C(a + b, x)·C(c + d, a + c − x) / C(n, a + c), summed as fractions."""
    row, column, n = a + b, a + c, a + b + c + d
    top = min(row, column)
    ways = sum(math.comb(row, x) * math.comb(n - row, column - x) for x in range(a, top + 1))
    return Fraction(ways, math.comb(n, column))


@settings(max_examples=300, deadline=None)
@given(st.tuples(counts, counts, counts, counts))
def test_small_tables_equal_exact_fractions_and_scipy_to_the_bit(cells: tuple[int, ...]) -> None:
    a, b, c, d = cells
    got = fisher_exact_greater([[a, b], [c, d]])
    want = fisher_exact([[a, b], [c, d]], alternative="greater").pvalue
    assert got == float(want)  # the same value to the bit
    if a + b and c + d and a + c and b + d:
        assert got == pytest.approx(float(_by_fractions(a, b, c, d)), rel=1e-12, abs=1e-300)
    else:
        assert got == 1.0  # an empty row or column: no evidence either way


@settings(max_examples=200, deadline=None)
@given(st.tuples(large, large, large, large))
def test_large_tables_equal_scipy_to_the_bit(cells: tuple[int, ...]) -> None:
    a, b, c, d = cells
    table = [[a, b], [c, d]]
    assert fisher_exact_greater(table) == float(fisher_exact(table, alternative="greater").pvalue)


def test_low_side_overrides_that_default_more_give_a_small_p_value() -> None:
    # 30 of 100 low-side overrides defaulted, 200 of 2,000 policy-accepted loans
    small = fisher_exact_greater([[30, 70], [200, 1800]])
    # the same rates on a tenth of the loans: less evidence, a larger p-value
    fewer = fisher_exact_greater([[3, 7], [20, 180]])
    # a lower bad rate among the overrides: no evidence that they default more
    lower = fisher_exact_greater([[5, 95], [200, 1800]])
    assert small < 1e-6 < fewer < 0.2 < 0.9 < lower <= 1.0


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ([[1, 2, 3], [4, 5, 6]], "2×2"),
        ([[1, -2], [3, 4]], "from 0"),
        ([[1, float("nan")], [3, 4]], "nan"),
        ([[1, float("inf")], [3, 4]], "inf"),
        ([[1e30, 1], [1, 1]], "2\\*\\*53"),
    ],
)
def test_a_table_that_is_not_counts_is_refused_naming_it(table: object, message: str) -> None:
    with pytest.raises(InvalidDataError, match=message):
        fisher_exact_greater(table)


def test_the_examples_in_the_docstring_hold() -> None:
    module = importlib.import_module("riskmon.metrics._fisher")
    failed, tried = doctest.testmod(module)
    assert tried >= 2
    assert failed == 0


def test_it_does_not_import_scipy_stats() -> None:
    probe = (
        "import sys\n"
        "from riskmon.metrics import fisher_exact_greater\n"
        "fisher_exact_greater([[8, 2], [1, 5]])\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    assert done.stdout.strip() == "False"
