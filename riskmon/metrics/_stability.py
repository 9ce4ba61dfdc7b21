"""Population stability (PSI) of a score and characteristic stability (CSI) of inputs.

    PSI = Σ (a_i − e_i)·ln(a_i / e_i)

over the baseline's frozen bins (missing and unseen-category bins included), e_i the baseline
and a_i the current shares; CSI is the same figure on one characteristic. Zero cells are
smoothed as :mod:`riskmon.metrics._divergence` explains, so a bin empty in one sample still
counts: disjoint samples give a large, finite PSI.

Beside the industry bands, PSI is compared with the value it reaches by chance alone.
Yurdakul & Naranjo (2020, *Journal of Risk Model Validation* 14(4)) show that for two samples of
n and m rows from the same population, PSI / (1/n + 1/m) is asymptotically χ² with B − 1
degrees of freedom, so a PSI below (1/n + 1/m)·χ²_{1−α}(B − 1) is indistinguishable from noise.
Here B counts the bins holding rows in either sample: a bin empty in both carries no
information and no degree of freedom (this also keeps the unseen-category bin out of B
until an unseen category appears).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from riskmon.errors import InvalidDataError
from riskmon.metrics._bin_fit import DEFAULT_N_BINS, Method, resolve_binning
from riskmon.metrics._binning import Binning, Kind
from riskmon.metrics._counts import CountTable
from riskmon.metrics._divergence import DEFAULT_SMOOTHING, check_smoothing, divergence_terms
from riskmon.metrics._validation import check_fraction, check_weights, not_available
from riskmon.metrics._woe import NOT_AVAILABLE, bin_columns

if TYPE_CHECKING:
    import pandas as pd

#: industry bands: below STABLE_BELOW stable, up to SHIFTED_ABOVE monitor, above it shifted
PSI_STABLE_BELOW = 0.10
PSI_SHIFTED_FROM = 0.25
#: significance level of the noise threshold (Yurdakul & Naranjo 2020)
DEFAULT_ALPHA = 0.05


def psi_band(value: float) -> str:
    """The industry band of a PSI: ``"stable"`` (< 0.10), ``"monitor"`` (0.10 up to 0.25),
    ``"shifted"`` (0.25 and above) — the same boundaries as the default PSI alert
    (amber from 0.10, red from 0.25).

    Examples
    --------
    >>> [psi_band(v) for v in (0.05, 0.1, 0.25, 0.3)]
    ['stable', 'monitor', 'shifted', 'shifted']
    """
    if not np.isfinite(value):
        return NOT_AVAILABLE
    if value < PSI_STABLE_BELOW:
        return "stable"
    return "monitor" if value < PSI_SHIFTED_FROM else "shifted"


def psi_critical_value(n: int, m: int, n_bins: int, *, alpha: float = DEFAULT_ALPHA) -> float:
    """The PSI that two samples of the same population exceed with probability ``alpha``.

    (1/n + 1/m)·χ²_{1−α}(B − 1), Yurdakul & Naranjo (2020); n, m the row counts, B the bins.
    One bin (or none) leaves nothing to shift: 0. An empty sample: NaN.

    Examples
    --------
    >>> round(psi_critical_value(1000, 1000, 10), 4)
    0.0338
    """
    alpha = check_fraction(alpha, "alpha")
    if n <= 0 or m <= 0:
        return float("nan")
    if n_bins <= 1:
        return 0.0
    # scipy.special, imported here: collecting alone should not load scipy, and a run should
    # not pay for scipy.stats; the χ² quantile as scipy.stats.chi2.ppf computes it
    from scipy.special import gammaincinv

    chi2_quantile = 2 * gammaincinv((n_bins - 1) / 2, 1 - alpha)
    return float((1 / n + 1 / m) * chi2_quantile)


def psi_noise_p(value: float, n: int, m: int, n_bins: int) -> float:
    """The p-value of a PSI under sampling noise alone: P(χ²(B − 1) ≥ PSI / (1/n + 1/m)), the
    test whose 1 − α quantile :func:`psi_critical_value` is.

    Examples
    --------
    >>> critical = psi_critical_value(1000, 1000, 10)
    >>> round(psi_noise_p(critical, 1000, 1000, 10), 6)
    0.05
    """
    if n <= 0 or m <= 0 or not np.isfinite(value):
        return float("nan")
    if n_bins <= 1:
        return 1.0
    from scipy.special import gammaincc  # the χ² survival function, as scipy.stats.chi2.sf

    return float(gammaincc((n_bins - 1) / 2, value / (1 / n + 1 / m) / 2))


@dataclass(frozen=True, eq=False)
class PSIResult:
    """A PSI (or CSI) with everything needed to store and explain it.

    ``float(result)`` is the PSI; ``band`` its industry band; ``critical_value`` the noise
    threshold at ``alpha`` for ``n_expected`` and ``n_actual`` rows and ``n_bins`` bins
    (bins holding rows in either sample); ``exceeds_noise`` whether the PSI is above it.
    ``table`` is the per-bin frame, built on first access from ``per_bin``.
    ``n_bins_requested`` is the number of value bins asked for when the binning was fitted on
    the baseline (None otherwise); ``notes`` say where smoothing applied or bins were merged.
    """

    value: float
    band: str
    critical_value: float
    alpha: float
    n_bins: int
    n_expected: int
    n_actual: int
    smoothing: float
    per_bin: dict[str, Any] = field(repr=False)
    binning: Binning | None = None
    n_bins_requested: int | None = None
    notes: tuple[str, ...] = ()

    def __float__(self) -> float:
        return self.value

    @property
    def noise_p(self) -> float:
        """The probability that two samples of one population differ by this PSI or more:
        P(χ²(B − 1) ≥ PSI / (1/n + 1/m)), the test behind ``critical_value`` (1 with one bin,
        NaN with an empty sample)."""
        return psi_noise_p(self.value, self.n_expected, self.n_actual, self.n_bins)

    @property
    def exceeds_noise(self) -> bool:
        """Whether the PSI is above the value sampling noise alone would reach."""
        return bool(self.value > self.critical_value)

    @cached_property
    def table(self) -> pd.DataFrame:
        """One row per baseline bin: ``bin``, ``lower``, ``upper``, ``levels``, row counts
        ``expected_rows``/``actual_rows``, summed weights ``expected``/``actual``, raw shares
        ``expected_share``/``actual_share``, the shares used after smoothing, the bin's
        ``contribution`` (a_i − e_i)·ln(a_i/e_i), and the flags ``smoothed`` and ``empty``."""
        import pandas as pd

        frame = pd.concat(
            [
                bin_columns(self.per_bin["bin"], self.binning),
                pd.DataFrame(self.per_bin).drop(columns="bin"),
            ],
            axis=1,
        )
        frame.attrs.update(
            psi=self.value,
            smoothing=self.smoothing,
            alpha=self.alpha,
            critical_value=self.critical_value,
            n_bins_requested=self.n_bins_requested,
            notes=self.notes,
        )
        return frame


def _check_same_bins(expected: CountTable, actual: CountTable) -> None:
    if expected.binning is not None and actual.binning is not None:
        if expected.binning != actual.binning:
            raise InvalidDataError(
                f"Expected the actual table on the expected table's bins "
                f"{expected.binning.to_dict()!r}, got {actual.binning.to_dict()!r}"
            )
    elif expected.labels != actual.labels:
        raise InvalidDataError(
            f"Expected the actual table on the expected table's bins {list(expected.labels)!r}, "
            f"got {list(actual.labels)!r}"
        )


def population_stability_index_from_counts(
    expected: CountTable,
    actual: CountTable,
    *,
    smoothing: float = DEFAULT_SMOOTHING,
    alpha: float = DEFAULT_ALPHA,
) -> PSIResult:
    """PSI of two count tables on the same bins (labeled tables are fine: totals are used).

    See :func:`population_stability_index`.

    Examples
    --------
    >>> b = Binning("numeric", edges=(0.0,))
    >>> e = CountTable.from_bins(b.assign([-1, -1, 1, 1]), b)
    >>> a = CountTable.from_bins(b.assign([-1, 1, 1, 1]), b)
    >>> round(float(population_stability_index_from_counts(e, a)), 4)  # 2 · 0.25 · ln 3
    0.2747
    """
    smoothing = check_smoothing(smoothing)
    alpha = check_fraction(alpha, "alpha")
    _check_same_bins(expected, actual)
    n, m = int(expected.n_total.sum()), int(actual.n_total.sum())
    e, a = expected.total, actual.total
    per_bin: dict[str, Any] = {
        "bin": expected.labels,
        "expected_rows": expected.n_total,
        "actual_rows": actual.n_total,
        "expected": e,
        "actual": a,
    }
    k = len(expected)
    if e.sum() > 0 and a.sum() > 0:
        d = divergence_terms(a, m, e, n, smoothing=smoothing)
        value = d.value
        smoothed = d.p_smoothed | d.q_smoothed
        per_bin.update(
            expected_share=d.q_share,
            actual_share=d.p_share,
            expected_share_used=d.q_used,
            actual_share_used=d.p_used,
            contribution=d.terms,
            smoothed=smoothed,
            empty=d.empty,
        )
        n_bins = int((~d.empty).sum())
        critical = psi_critical_value(n, m, n_bins, alpha=alpha)
        notes: tuple[str, ...] = ()
        if smoothed.any():
            where = ", ".join(lbl for lbl, s in zip(expected.labels, smoothed, strict=True) if s)
            notes = (f"zero cells smoothed with a pseudo-count of {smoothing:g} rows in: {where}",)
    else:
        which = " and ".join(name for name, t in (("expected", e), ("actual", a)) if t.sum() <= 0)
        value = not_available(
            f"PSI needs rows in both samples; the {which} sample is empty "
            f"({n} expected and {m} actual rows)",
            stacklevel=3,
        )
        nan = np.full(k, np.nan)
        per_bin.update(
            expected_share=nan,
            actual_share=nan,
            expected_share_used=nan,
            actual_share_used=nan,
            contribution=nan,
            smoothed=np.zeros(k, bool),
            empty=(e == 0) & (a == 0),
        )
        n_bins = int(((e > 0) | (a > 0)).sum())
        critical, notes = float("nan"), ()
    return PSIResult(
        value,
        psi_band(value),
        critical,
        alpha,
        n_bins,
        n,
        m,
        smoothing,
        per_bin,
        expected.binning,
        None,
        notes,
    )


def population_stability_index(
    expected: Any,
    actual: Any,
    *,
    binning: Binning | None = None,
    kind: Kind | None = None,
    method: Method = "quantile",
    n_bins: int = DEFAULT_N_BINS,
    edges: Any = None,
    min_level_share: float | None = None,
    smoothing: float = DEFAULT_SMOOTHING,
    alpha: float = DEFAULT_ALPHA,
    expected_weight: Any = None,
    actual_weight: Any = None,
) -> PSIResult:
    """Population stability index of a current sample against a baseline.

    PSI = Σ (a_i − e_i)·ln(a_i / e_i) over the baseline's bins, e_i and a_i the baseline and
    current shares of bin i (missing and unseen-category bins included). Bands (industry
    convention): < 0.10 stable, 0.10–0.25 monitor, > 0.25 shifted. Noise threshold
    (Yurdakul & Naranjo 2020): (1/n + 1/m)·χ²_{1−α}(B − 1), n and m the row counts, B the
    bins holding rows in either sample.

    Parameters
    ----------
    expected, actual : array-like or CountTable
        Raw baseline and current values (numeric or categorical, missing allowed), or two
        count tables on the same bins.
    binning : Binning, optional
        Bins to use on raw values; by default fitted on ``expected`` by :func:`fit_binning`
        with ``kind``, ``method``, ``n_bins``, ``edges`` and ``min_level_share``.
    smoothing : float
        Pseudo-count, in rows, given to a bin that is empty in one sample only: its share there
        becomes ``smoothing / n`` (n that sample's row count). Bins empty in both contribute 0.
    alpha : float
        Significance level of the noise threshold.
    expected_weight, actual_weight : array-like, optional
        Row weights of raw values.

    Returns
    -------
    PSIResult
        ``float(result)`` is the PSI; an empty sample gives NaN and a
        :class:`DegenerateDataWarning`.

    Examples
    --------
    >>> r = population_stability_index(["a", "a", "b", "b"], ["a", "b", "b", "b"])
    >>> round(float(r), 4), r.band, r.n_bins, round(r.critical_value, 3)
    (0.2747, 'shifted', 2, 1.921)
    >>> r = population_stability_index(["a", "a"], ["z", "z"])   # disjoint: large, finite
    >>> round(float(r), 2), r.table.loc[r.table["smoothed"], "bin"].tolist()
    (2.08, ['a', 'unseen'])
    """
    tables = isinstance(expected, CountTable), isinstance(actual, CountTable)
    if all(tables):
        if binning is not None or edges is not None:
            raise InvalidDataError("Expected no binning or edges with count tables, got one")
        if expected_weight is not None or actual_weight is not None:
            raise InvalidDataError("Expected no weights with count tables: they hold the weights")
        return population_stability_index_from_counts(
            expected, actual, smoothing=smoothing, alpha=alpha
        )
    if any(tables):
        raise InvalidDataError(
            "Expected expected and actual both raw values or both count tables, got one of each"
        )
    w_e = check_weights(expected_weight, len(expected), name="expected_weight")
    w_a = check_weights(actual_weight, len(actual), name="actual_weight")
    used, requested, notes = resolve_binning(
        expected,
        binning,
        kind=kind,
        method=method,
        n_bins=n_bins,
        edges=edges,
        min_level_share=min_level_share,
        sample_weight=w_e,
    )
    e = CountTable.from_bins(used.assign(expected), used, sample_weight=w_e)
    a = CountTable.from_bins(used.assign(actual), used, sample_weight=w_a)
    result = population_stability_index_from_counts(e, a, smoothing=smoothing, alpha=alpha)
    return replace(result, n_bins_requested=requested, notes=notes + result.notes)


#: short name
psi = population_stability_index
