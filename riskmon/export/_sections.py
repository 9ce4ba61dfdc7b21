"""The one table of the export: each area of the ECB's *Instructions for reporting the
validation results of internal models, IRB Pillar I models for credit risk* (February 2019),
its numbered sections, and the stored figures (by name) and bins each section shows.

PD sections read what the PD families store (discrimination, calibration, rating, migration);
the LGD, ELBE, LGD in-default and CCF sections read the back-testing figures of continuous-target
models (``backtest_*``, ``gauc*``, ``estimate_psi``, ``loss_shortfall``, ``mad``,
``excluded_share``): an LGD model's under 2.6, 2.7 or 2.8 as its ``backtest.estimate`` is
``performing``, ``elbe`` or ``in_default``.
"""

from __future__ import annotations

from riskmon.export._table import Area, BinColumn, BinSection, Column, FigureSection
from riskmon.metrics import CCF_QUANTILES

#: where a CCF area and an LGD area differ only by the word they test
_BACKTEST = (
    ("n", "N", "facilities back-tested (closed recoveries with an estimate)"),
    ("mean_estimate", "mean estimate", "mean estimate, one year before default"),
    (
        "mean_estimate_without_downturn",
        "mean estimate without downturn",
        "mean estimate without its downturn component",
    ),
    ("mean_realised", "mean realised", "mean realised value"),
    ("t", "T", "t statistic √N·d̄/s of d = realised − estimated"),
    ("variance", "s²", "sample variance of d, Σ(d − d̄)²/(N − 1)"),
)


def _backtest(p_description: str) -> tuple[Column, ...]:
    columns = [
        Column(header, description, f"backtest_{name}", f"backtest_{name}")
        for name, header, description in _BACKTEST
    ]
    columns.append(Column("p-value", p_description, "backtest_p", "backtest_p"))
    return tuple(columns)


_EXCLUDED = Column(
    "excluded share",
    "share of the facilities left out: open recoveries, missing estimates, exclusions",
    "excluded_share",
    "excluded_share",
)
_ONE_SIDED = "one-sided p-value, 1 − t_{N−1}(T) (H0: the estimate is not too low)"
_TWO_SIDED = "two-sided p-value, 2·(1 − t_{N−1}(|T|))"
_NO_BACKTEST = "the run stored no back-testing figures (a model of another kind, or none closed)"


def _gauc(number: str) -> FigureSection:
    return FigureSection(
        number,
        "Discriminatory power: current gAUC against the gAUC at initial validation",
        (
            Column("gAUC", "generalised AUC, (Somers' D + 1)/2 of the contingency table", "gauc"),
            Column("s", "standard error of the gAUC", "gauc_se"),
            Column("p-value", "1 − Φ((gAUC_init − gAUC)/s) (H0: no deterioration)", "gauc_test_p"),
        ),
        _NO_BACKTEST,
    )


def _psi(number: str) -> FigureSection:
    return FigureSection(
        number,
        "Stability: distribution of the estimates over grades/segments against the baseline",
        (Column("PSI", "population stability index of the estimates", "estimate_psi"),),
        _NO_BACKTEST,
    )


def _shortfall(number: str, extra: tuple[Column, ...] = ()) -> FigureSection:
    return FigureSection(
        number,
        "Supplementary: loss shortfall and mean absolute deviation, EAD-weighted (Li et al. 2009)",
        (
            Column(
                "loss shortfall", "1 − Σ EAD·estimate / Σ EAD·realised", *(["loss_shortfall"] * 2)
            ),
            Column("MAD", "Σ EAD·|realised − estimate| / Σ EAD", "mad", "mad"),
            *extra,
        ),
        _NO_BACKTEST,
        per_grade=True,
    )


_JEFFREYS = "F_Beta(D + ½, N − D + ½)(PD̄) (H0: PD ≥ true default rate)"


def _graded(header: str, description: str, portfolio: str, param: str = "") -> Column:
    """A Jeffreys column: the portfolio's figure, and the grade's ``grade_jeffreys_p`` (its
    value, or one of its parameters)."""
    grade = f"grade_jeffreys_p.{param}" if param else "grade_jeffreys_p"
    return Column(header, description, portfolio, grade)


PD = Area(
    "PD",
    "pd.csv",
    "2.5 Probability of default",
    frozenset({"pd"}),
    (
        FigureSection(
            "2.5.1",
            "Portfolio: the performance cohort back-tested",
            (
                Column("N", "matured loans in the cohort", "n_rows"),
                Column("defaults", "defaulted loans (label 1) among them", "n_bads"),
                Column("default rate", "defaults / N", "bad_rate"),
            ),
            "the run stored no cohort figures (no matured loans)",
        ),
        BinSection(
            "2.5.2",
            "Grade distribution of the current population, now and at the baseline",
            "rating",
            (
                BinColumn("grade", "the grade's label, best grade first", "label"),
                BinColumn("loans", "loans in the grade", "n_total"),
                BinColumn("weight", "summed weight (exposure) of the grade", "total"),
                BinColumn("share", "share of the graded loans now", "actual_share"),
                BinColumn("share at baseline", "share at the baseline", "expected_share"),
            ),
            "the run stored no grade distribution (the model has no grades)",
        ),
        FigureSection(
            "2.5.3.1",
            "Predictive ability: PD back-testing, Jeffreys test per grade and portfolio",
            (
                _graded("N", "loans tested", "calibration_n", "n"),
                _graded("defaults", "defaults among them", "calibration_defaults", "defaults"),
                _graded("mean PD", "mean PD at the start of the horizon", "mean_pd", "mean_pd"),
                _graded("default rate", "observed default rate", "default_rate", "default_rate"),
                _graded("Jeffreys p", _JEFFREYS, "jeffreys_p"),
                Column(
                    "Jeffreys p by exposure",
                    "the test on Kish's effective number of loans",
                    "jeffreys_p_exposure",
                ),
            ),
            "the run stored no calibration figures (the model has no PD)",
            per_grade=True,
        ),
        FigureSection(
            "2.5.4.1",
            "Discriminatory power: current AUC against the AUC at initial validation",
            (
                Column("AUC", "AUC of the performance cohort", "auc"),
                Column("initial AUC", "AUC at the baseline", "auc_test_p.initial_auc"),
                Column("s", "DeLong standard error of the current AUC", "auc_test_p.std_error"),
                Column("S", "(AUC_init − AUC)/s", "auc_test_p.statistic"),
                Column("p-value", "1 − Φ(S) (H0: no deterioration)", "auc_test_p"),
            ),
            "the run stored no discrimination figures (no matured loans)",
        ),
        FigureSection(
            "2.5.5.1",
            "Stability: customer migrations, matrix weighted bandwidth",
            (
                Column(
                    "re-rated", "obligors graded at both ends of the horizon", "migration_rerated"
                ),
                Column("MWB upper", "bandwidth of downgrades", "migration_mwb_upper"),
                Column("MWB upper at baseline", "the baseline's", "migration_mwb_upper.baseline"),
                Column("MWB lower", "bandwidth of upgrades", "migration_mwb_lower"),
                Column("MWB lower at baseline", "the baseline's", "migration_mwb_lower.baseline"),
                Column(
                    "within one grade",
                    "share that kept its grade or moved one",
                    "migration_within_one",
                ),
            ),
            "the run stored no migrations (rating.migration is off, or the model has no grades)",
        ),
        FigureSection(
            "2.5.5.2",
            "Stability of the migration matrix: smallest p of the cells tested",
            (Column("p-value", "smallest cell p, Bonferroni-adjusted", "migration_stability_p"),),
            "the run stored no migrations (rating.migration is off, or the model has no grades)",
        ),
        BinSection(
            "2.5.5.2",
            "Migration matrix: obligors per cell (grade then → grade now), cells tested",
            "migration",
            (
                BinColumn("cell", "grade at the start → grade at the end", "label"),
                BinColumn("obligors", "obligors in the cell", "n_total"),
                BinColumn("row share", "share of the start grade's obligors", "actual_share"),
                BinColumn("z", "the cell's z statistic (cells tested only)", "extra.z"),
                BinColumn(
                    "p-value",
                    "Φ(z), small when the cell holds more obligors than its neighbour nearer "
                    "the diagonal (cells tested only)",
                    "extra.p",
                ),
            ),
            "the run stored no migrations (rating.migration is off, or the model has no grades)",
        ),
        FigureSection(
            "2.5.5.3",
            "Stability: concentration in rating grades (Herfindahl index)",
            (
                Column("HI", "ECB Herfindahl index of the grade distribution", "rating_herfindahl"),
                Column("HI at baseline", "the baseline's", "rating_herfindahl.baseline"),
                Column(
                    "p-value", "concentration test against the baseline", "rating_concentration_p"
                ),
                Column(
                    "HI by exposure", "the index on summed exposure", "rating_herfindahl_exposure"
                ),
            ),
            "the run stored no rating figures (the model has no grades)",
        ),
    ),
)

LGD = Area(
    "LGD",
    "lgd.csv",
    "2.6 Loss given default",
    frozenset({"lgd"}),
    (
        FigureSection(
            "2.6.2",
            "Predictive ability: LGD back-testing, t-test per grade and portfolio",
            (*_backtest(_ONE_SIDED), _EXCLUDED),
            _NO_BACKTEST,
            per_grade=True,
        ),
        _gauc("2.6.3"),
        _psi("2.6.4"),
        _shortfall("2.6 suppl."),
    ),
)

ELBE = Area(
    "ELBE",
    "elbe.csv",
    "2.7 Expected loss best estimate",
    frozenset({"elbe"}),
    (
        FigureSection(
            "2.7",
            "Predictive ability: ELBE back-testing, two-sided t-test per grade and portfolio",
            (*_backtest(_TWO_SIDED), _EXCLUDED),
            _NO_BACKTEST,
            per_grade=True,
        ),
    ),
)

IN_DEFAULT = Area(
    "LGD in-default",
    "lgd_in_default.csv",
    "2.8 LGD in-default",
    frozenset({"in_default"}),
    (
        FigureSection(
            "2.8",
            "Predictive ability: LGD in-default back-testing, t-test per grade and portfolio",
            (*_backtest(_ONE_SIDED), _EXCLUDED),
            _NO_BACKTEST,
            per_grade=True,
        ),
    ),
)

CCF = Area(
    "CCF",
    "ccf.csv",
    "2.9 Credit conversion factor",
    frozenset({"ccf", "ead"}),
    (
        FigureSection(
            "2.9.2",
            "Predictive ability: CCF back-testing, t-test per grade and portfolio",
            (*_backtest(_ONE_SIDED), _EXCLUDED),
            _NO_BACKTEST,
            per_grade=True,
        ),
        _gauc("2.9.3"),
        _psi("2.9.4"),
        _shortfall(
            "2.9 suppl.",
            (
                Column(
                    "floored share",
                    "share of realised CCFs floored at zero",
                    "floored_share",
                    "floored_share",
                ),
                Column(
                    "exposure-weighted mean",
                    "exposure-weighted mean realised CCF",
                    "exposure_weighted_mean",
                    "exposure_weighted_mean",
                ),
                Column(
                    "M_EAD share",
                    "share of facilities under the EAD approach, left out of the CCF back-test "
                    "(columns.ead_approach; whole population)",
                    "ead_approach_share",
                    "ead_approach_share",
                ),
                *(
                    Column(
                        name.removeprefix("realised_"),
                        f"realised CCF's quantile at {q:.0%} (inverted_cdf, read on a grid "
                        "of 1 percentage point; the error bound is in the figure's params)",
                        name,
                        name,
                    )
                    for name, q in CCF_QUANTILES
                ),
            ),
        ),
    ),
)

#: every area, in the order of the instructions
AREAS = (PD, LGD, ELBE, IN_DEFAULT, CCF)
