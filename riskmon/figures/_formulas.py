"""The definitions each figure family declares (``Family.formulas``), which the appendix of
every report that stores one of the family's figures repeats: kept here, one constant per
family, so that the families' modules hold their computation and rules."""

from __future__ import annotations

from riskmon.figures._family import Formula

#: the calibration family's
CALIBRATION_FORMULAS = (
    Formula(
        30,
        "Jeffreys test",
        (
            "p = F<sub>Beta(D + ½, N − D + ½)</sub>(PD̄), N loans, D defaults, PD̄ their mean "
            "PD; a small p says the PD is too low (under-estimation). Over-estimation: 1 − p, "
            "the PD too high. Its interval is the Beta distribution's central one. ECB, "
            "Instructions for reporting the validation results of internal models (2019), "
            "§2.5.3.1. Defined for D = 0 and for a PD of 0 or 1."
        ),
    ),
    Formula(
        31,
        "Binomial test",
        (
            "p = P(X ≥ D), X ~ Bin(N, PD̄) (under-estimation), P(X ≤ D) for over-estimation "
            "(BCBS WP14, 2005). With a default correlation ρ (one-factor Vasicek), the "
            "conditional PD Φ((Φ<sup>−1</sup>(PD̄) − √ρ · z) / √(1 − ρ)) is integrated over z "
            "~ N(0, 1). The critical count at confidence 1 − α is the smallest d with P(X ≥ d) "
            "≤ α."
        ),
    ),
    Formula(
        32,
        "Hosmer–Lemeshow",
        (
            "χ² = Σ<sub>k</sub> (N<sub>k</sub> · PD̄<sub>k</sub> − D<sub>k</sub>)² / "
            "(N<sub>k</sub> · PD̄<sub>k</sub> · (1 − PD̄<sub>k</sub>)) over the K grades, K "
            "degrees of freedom (the PDs are fixed before the outcomes). A grade expecting "
            "fewer than <code>calibration.min_expected_defaults</code> defaults is merged with "
            "a neighbour; a grade whose mean PD is 0 or 1 has no variance and is left out, "
            "with the reason."
        ),
    ),
    Formula(
        33,
        "Brier score and Spiegelhalter test",
        (
            "Brier = mean (y − p)²; Spiegelhalter's Z = (Brier − mean p(1 − p)) / √(Σ p(1 − "
            "p)(1 − 2p)² / N²), standard normal under perfect calibration (Spiegelhalter, "
            "1986); two-sided p."
        ),
    ),
    Formula(
        34,
        "Holm adjustment",
        (
            "the grades' p-values are judged together: sorted ascending, the k-th of K is "
            "multiplied by K − k + 1 and made non-decreasing (capped at 1). The calibration "
            "table shows each grade's raw p-values of both directions and the adjusted p that "
            "decided its status."
        ),
    ),
)

#: the challenger family's
CHALLENGER_FORMULAS = (
    Formula(
        25,
        "Challenger test",
        (
            "DeLong's paired test of two scores on the same loans: z = "
            "(AUC<sub>challenger</sub> − AUC<sub>model</sub>) / √(S<sub>11</sub> + "
            "S<sub>22</sub> − 2 S<sub>12</sub>), S the covariance matrix of the two AUCs' "
            "placement values, two-sided p = 2 · (1 − Φ(|z|)) (DeLong, DeLong &amp; "
            "Clarke-Pearson, 1988). Judged only when the challenger's AUC is the higher; loans "
            "without a challenger score are left out and counted."
        ),
    ),
)

#: the cutoff family's
CUTOFF_FORMULAS = (
    Formula(
        40,
        "Cut-off",
        (
            "loans at or beyond the cut-off are declined. Approval rate = accepted loans / all "
            "loans; accepted (declined) bad rate = bads among accepted (declined) loans; "
            "informedness (Youden's J) = TPR + TNR − 1 with bads positive and a decline the "
            "prediction of a bad. <code>approval_rate_change</code> judges |now − baseline| in "
            "rate points, <code>accepted_bad_rate_rise</code> the relative rise (now − "
            "baseline) / baseline."
        ),
    ),
    Formula(
        41,
        "Expected cost",
        (
            "(c<sub>FA</sub> · accepted bads + c<sub>FD</sub> · declined goods) / N, "
            "c<sub>FA</sub> the cost of accepting a bad and c<sub>FD</sub> of declining a good "
            "(<code>calibration.costs</code>); the cost-optimal cut-off minimises it over the "
            "score's values (Drummond &amp; Holte, 2006)."
        ),
    ),
)

#: the discrimination family's
DISCRIMINATION_FORMULAS = (
    Formula(
        10,
        "KS",
        (
            "the largest distance between the score's cumulative distributions among bads and "
            "among goods, taken only at distinct score values (a group of tied scores moves "
            "both at once). The p-value is the two-sample Kolmogorov–Smirnov test's; with tied "
            "scores it is conservative. 5 % critical value ≈ 1.358 · √((n + m) / (n · m)). The "
            "band rule <code>ks_band</code> judges it against [low, high]."
        ),
    ),
    Formula(
        11,
        "AUC",
        (
            "the probability that a bad scores riskier than a good, ties counting one half "
            "(Mann–Whitney): AUC = Σ<sub>i</sub> b<sub>i</sub> · (G<sub>&lt;i</sub> + ½ "
            "g<sub>i</sub>) / (B · G) over the score's values, riskiest last. Its confidence "
            "interval uses DeLong's variance s² = var(V<sub>10</sub>)/B + "
            "var(V<sub>01</sub>)/G of the placement values, AUC ± z · s, clipped to [0, 1]. "
            "<code>score_direction</code> is RED when the interval lies wholly below 0.5."
        ),
    ),
    Formula(
        12,
        "Gini",
        (
            "(accuracy ratio) = 2 · AUC − 1; its interval is 2 · (AUC bounds) − 1. "
            "<code>auc_drop</code> and <code>gini_drop</code> judge the relative fall "
            "(baseline − now) / baseline."
        ),
    ),
    Formula(
        13,
        "ECB AUC test",
        (
            "S = (AUC<sub>init</sub> − AUC) / s, s the cohort AUC's DeLong standard error, p = "
            "1 − Φ(S); H0: the AUC has not deteriorated (ECB, Instructions for reporting the "
            "validation results of internal models, 2019, §2.5.4.1). AUC<sub>init</sub> is "
            "<code>calibration.initial_auc</code>, else the baseline's. With "
            "<code>calibration.auc_test_variance: both</code>, a variant that is not the "
            "ECB's: s = √(s² + s<sub>init</sub>²)."
        ),
    ),
)

#: the gains family's
GAINS_FORMULAS = (
    Formula(
        20,
        "Gain curve, CAP and lift",
        (
            "the share of all bads among the riskiest share of loans (cumulative). Lift of a "
            "group = its bad rate / the cohort's bad rate; top-decile lift is the riskiest "
            "tenth's. A lift-order break is a group with a higher bad rate than the riskier "
            "group before it."
        ),
    ),
)

#: the migration family's
MIGRATION_FORMULAS = (
    Formula(
        50,
        "Matrix weighted bandwidth",
        (
            "upper MWB = Σ<sub>i&lt;K</sub> Σ<sub>j&gt;i</sub> |i − j| · n<sub>ij</sub> / "
            "M<sub>up</sub>, M<sub>up</sub> = Σ<sub>i&lt;K</sub> max(|i − K|, |i − 1|) · "
            "Σ<sub>j&gt;i</sub> n<sub>ij</sub>, n<sub>ij</sub> the obligors in grade i at the "
            "start and j at the end; the lower MWB mirrors it below the diagonal (ECB 2019, "
            "§2.5.5.1). <code>migration_bandwidth</code> judges the larger |now / baseline − "
            "1|."
        ),
    ),
    Formula(
        51,
        "Migration stability test",
        (
            "for a cell two or more grades off the diagonal, z<sub>ij</sub> = "
            "(p<sub>i,j−1</sub> − p<sub>ij</sub>) / √((p<sub>ij</sub>(1 − p<sub>ij</sub>) + "
            "p<sub>i,j−1</sub>(1 − p<sub>i,j−1</sub>) + 2 p<sub>ij</sub> p<sub>i,j−1</sub>) / "
            "N<sub>i</sub>), p<sub>ij</sub> = n<sub>ij</sub> / N<sub>i</sub>, mirrored below "
            "the diagonal (ECB 2019, §2.5.5.2). Each cell is tested for holding more obligors "
            "than its neighbour nearer the diagonal, p = Φ(z); the smallest p, "
            "Bonferroni-adjusted for the cells tested, is the figure, and the heat map "
            "outlines cells by that adjusted p."
        ),
    ),
)

#: the quality family's
QUALITY_FORMULAS = (
    Formula(
        80,
        "Data quality",
        (
            "excluded share = loans left out for invalid data (no score, a score NaN or "
            "infinite, a weight NULL or negative) / loans read; duplicate share = used loans "
            "repeating the id and score date of another / used loans; missing rate of a "
            "characteristic = its NULL values / loans; volume change = |now / last run with "
            "loans − 1| of the current population's size; unmatured share = cohort loans "
            "without an outcome yet / cohort loans."
        ),
    ),
)

#: the rating family's
RATING_FORMULAS = (
    Formula(
        45,
        "Herfindahl index",
        (
            "CV = √(K · Σ (R<sub>i</sub> − 1/K)²), R<sub>i</sub> the share of loans in grade i "
            "of K; HI = 1 + ln((CV² + 1) / K) / ln K, 0 for loans spread evenly and 1 for one "
            "grade. Concentration test against the baseline: z = √(K − 1) · (CV − "
            "CV<sub>init</sub>) / √(CV² · (0.5 + CV²)), p = 1 − Φ(z) (ECB 2019, §2.5.5.3). The "
            "shift test is Pearson's χ² of homogeneity, K − 1 degrees of freedom."
        ),
    ),
)

#: the stability family's
STABILITY_FORMULAS = (
    Formula(
        60,
        "PSI and CSI",
        (
            "PSI = Σ (a<sub>i</sub> − e<sub>i</sub>) · ln(a<sub>i</sub> / e<sub>i</sub>) over "
            "the baseline's frozen bins, e the baseline's and a the current shares, missing "
            "and unseen-category bins included. Usual reading: below 0.10 stable, 0.10–0.25 "
            "monitor, above 0.25 shifted. A PSI below (1/n + 1/m) · χ²<sub>1−α</sub>(B − 1) is "
            "within sampling noise (Yurdakul &amp; Naranjo, 2020). CSI is the same index on "
            "one characteristic."
        ),
    ),
)

#: the strength family's
STRENGTH_FORMULAS = (
    Formula(
        70,
        "WOE and IV",
        (
            "WOE of a bin = ln(share of goods / share of bads); IV = Σ (share of goods − share "
            "of bads) · WOE. Strength after Siddiqi (2006): below 0.02 useless, 0.02–0.1 weak, "
            "0.1–0.3 medium, 0.3–0.5 strong, above 0.5 suspicious. <code>iv_drop</code> judges "
            "the relative fall (baseline − now) / baseline."
        ),
    ),
)

#: the back-testing family's (LGD, CCF, EAD)
BACKTEST_FORMULAS = (
    Formula(
        200,
        "Back-testing t-test",
        (
            "d = realised − estimated per facility whose recovery closed in the observation "
            "period; T = √N · d̄ / s, s² = Σ(d − d̄)² / (N − 1); p = 1 − t<sub>N−1</sub>(T), "
            "one-sided (H0: the estimate is not too low). ECB instructions for reporting "
            "validation results (2019), §2.6.2; per grade (columns.grade, at most 20) or else "
            "per ECB segment of the estimate, [0, 5 %), [5 %, 10 %), [10 %, 20 %), …, "
            "[90 %, 100 %), ≥ 100 % (negatives in the first), their p-values Holm-adjusted "
            "across the grades or segments. An ELBE (backtest.estimate: elbe, §2.7) is tested "
            "two-sided, p = 2 · (1 − t<sub>N−1</sub>(|T|)), an LGD in-default (§2.8) "
            "one-sided, each at its reference points (backtest.reference_point, a segment). "
            "With columns.downturn, the mean estimate without its downturn component is shown "
            "beside the tested estimate (over the closed facilities that have one)."
        ),
    ),
    Formula(
        201,
        "Generalised AUC",
        (
            "Somers' D(C|R) = (P − Q) / w<sub>r</sub> of the table of estimated segment × "
            "realised segment (realised values cut at the same edges), P and Q the concordant "
            "and discordant pairs, w<sub>r</sub> = F² − Σ r<sub>i</sub>²; gAUC = (D + 1) / 2, "
            "its standard error half Brown &amp; Benedetti's; test against the initial gAUC: "
            "S = (gAUC<sub>init</sub> − gAUC) / s, p = 1 − Φ(S). ECB (2019), §2.6.3 and Annex."
        ),
    ),
    Formula(
        202,
        "Loss shortfall and MAD",
        (
            "LS = 1 − Σ EAD · E / Σ EAD · R; MAD = Σ EAD · |R − E| / Σ EAD (Li et al., 2009), "
            "E the estimate and R the realised value, over the closed recoveries; for a CCF or "
            "EAD model also the exposure-weighted mean realised value Σ EAD · R / Σ EAD."
        ),
    ),
    Formula(
        203,
        "Facilities not back-tested",
        (
            "excluded share = (open recoveries + missing estimates + exclusions) / facilities "
            "read in the observation period (M<sub>miss</sub>/M, M<sub>ex</sub>/M)."
        ),
    ),
    Formula(
        204,
        "Realised CCF: floored share and quantiles",
        (
            "floored share = closed facilities whose realised CCF is below 0 / closed "
            "facilities; quantiles at 0 (min), 5, 10, 25, 50, 75, 90, 95 % and 1 (max): the "
            "smallest value x with F(x) ≥ q (numpy's inverted_cdf), read from the realised "
            "values' counts on a grid of one percentage point from −100 % to 200 % (0 and "
            "100 % cells of their own): the middle of the cell holding it, within half a cell "
            "(0.5 percentage point; exact in the 0 and 100 % cells); not available in the "
            "grid's open ends. ECB (2019), §2.9."
        ),
    ),
)
