"""Vintage curves against the loan-level formula of FORMULAS.md and a simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from riskmon.errors import InvalidDataError
from riskmon.metrics import default_timing, vintage_curve


def test_curve_against_the_loan_level_formula() -> None:
    rng = np.random.default_rng(5)
    pd = rng.uniform(0.005, 0.2, size=300)
    sigma = np.array([0.0, 0.05, 0.15, 0.3, 0.45, 0.6, 0.7])
    defaults = np.array([0, 1, 2, 6, 9, 12, 13])
    curve = vintage_curve(len(pd), pd.sum(), (pd**2).sum(), defaults, sigma)
    for m, s in enumerate(sigma):
        expected = (pd * s).sum() / len(pd)
        assert curve.expected[m] == pytest.approx(expected, abs=1e-12)
        assert curve.observed[m] == pytest.approx(defaults[m] / len(pd))
        sd = math.sqrt((pd * s * (1 - pd * s)).sum())
        if sd > 0:
            assert curve.z[m] == pytest.approx((defaults[m] - expected * len(pd)) / sd)
        else:
            assert math.isnan(curve.z[m])


def test_z_is_standard_normal_under_calibrated_pds() -> None:
    rng = np.random.default_rng(11)
    pd = rng.uniform(0.01, 0.1, size=500)
    sigma = 0.4
    sims = 4000
    d = (rng.random((sims, pd.size)) < pd * sigma).sum(axis=1)
    z = np.array([vintage_curve(500, pd.sum(), (pd**2).sum(), [k], [sigma]).z[0] for k in d])
    assert abs(z.mean()) < 4 / math.sqrt(sims)
    assert z.std() == pytest.approx(1.0, abs=0.05)


def test_default_timing_and_bad_input() -> None:
    sigma = default_timing([[0, 1, 3, 4], [0, 0, 2, 4]], [4, 4])
    assert sigma.tolist() == [0.0, 0.125, 0.625, 1.0]
    assert np.isnan(default_timing([[0, 0]], [0])).all()
    with pytest.raises(InvalidDataError, match="one length"):
        vintage_curve(10, 1.0, 0.1, [0, 1], [0.5])
    with pytest.raises(InvalidDataError, match="pd_sq_sum <= pd_sum <= n"):
        vintage_curve(10, 11.0, 0.1, [0], [0.5])
