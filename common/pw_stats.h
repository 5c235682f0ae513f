/*
 * pw_stats.h: the descriptive statistics and two-sample tests of §4 of the
 * design, and the always-valid sequential comparison of the canary (§8),
 * defined once for every service, the CLI and the benchmarks.
 *
 * Conventions:
 * - Inputs are const double arrays with an explicit length; no function keeps
 *   a pointer after it returns.
 * - Functions that must reorder data take a caller-owned workspace of the size
 *   they document, so that nothing allocates in an inner loop. Pass NULL where
 *   a function documents that it then allocates once itself.
 * - Non-finite input (NaN, ±inf) is rejected with PW_ERR_INVALID; too few
 *   points for the statistic with PW_ERR_INSUFFICIENT.
 * - The reasoning, formulas and references are in docs/statistics.md, and
 *   for the canary's confidence sequence (pw_cs_*) in docs/canary.md.
 */
#ifndef PW_STATS_H
#define PW_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_status.h"

/* 1.4826 = 1/Φ⁻¹(3/4): makes the MAD a consistent estimator of σ under normality. */
#define PW_MAD_NORMAL_SCALE 1.482602218505602

/* True when every x[i] is finite. */
bool pw_stats_all_finite(const double *x, size_t n);

/* ---- Descriptive ---------------------------------------------------------- */

/*
 * Median of x[0..n) by selection (O(n)); work has room for n doubles and is
 * overwritten. n >= 1.
 */
pw_status pw_stats_median(const double *x, size_t n, double *work, double *out);

/*
 * Quantile q in [0,1] by linear interpolation between order statistics
 * (Hyndman & Fan type 7, numpy's and R's default). work as for median.
 */
pw_status pw_stats_quantile(const double *x, size_t n, double q, double *work, double *out);

/*
 * Median and normalised MAD (PW_MAD_NORMAL_SCALE × median |x − median|) in one
 * pass pair; work has room for n doubles. n >= 1 (MAD of one point is 0).
 */
pw_status pw_stats_median_mad(const double *x, size_t n, double *work, double *median,
                              double *mad_n);

/*
 * The same median and normalised MAD, bit for bit, of x[0..n) already sorted
 * ascending: the median is read off the middle and the deviations are
 * walked outward from it in increasing order (both sides of a sorted sample
 * are sorted by distance), so it takes at most n/2 + 1 steps and no
 * workspace. For windows kept in order (the baseliner's). n >= 1; an
 * unsorted x is PW_ERR_INVALID only where the walk notices it, so sort first.
 */
pw_status pw_stats_median_mad_sorted(const double *sorted, size_t n, double *median,
                                     double *mad_n);

/* The noise band of §4.2: [median − k·MAD_n, median + k·MAD_n], k = 3 by default. */
#define PW_NOISE_BAND_K 3.0

/* Arithmetic mean and sample variance (n − 1 denominator, n >= 2), Welford's method. */
pw_status pw_stats_mean_var(const double *x, size_t n, double *mean, double *var);

/* ---- Noise floor (§4.2) --------------------------------------------------- */

/*
 * 1 / (√2 · Φ⁻¹(3/4)): for normal noise of σ, the difference of two runs is
 * N(0, 2σ²), and the median of its absolute value is √2 · Φ⁻¹(3/4) · σ
 * (scipy: 1 / (sqrt(2) * norm.ppf(0.75)) = 1.0483580825075305).
 */
#define PW_SHAMOS_NORMAL_SCALE 1.0483580825075305

/* What pw_stats_noise_floor measured. */
typedef struct pw_noise_floor {
	double sigma_rel;  /* the floor: relative σ of a run (0.004 = 0.4%) */
	double level;      /* the median of the groups' medians, in the values' unit */
	size_t n_values;   /* values in groups of two or more */
	size_t n_groups;   /* such groups */
	size_t n_pairs;    /* pairs the median ran over */
} pw_noise_floor;

/*
 * The noise floor of §4.2 from runs with no software change between them:
 * the pooled within-group Shamos estimator. values[0..n) come in groups
 * (group[i], ascending: a group's values adjacent), each the runs of one
 * build. A group
 * of m >= 2 values gives its m(m−1)/2 pairs, each the relative difference
 * |x_i − x_j| / median(group); groups of one value are left out. sigma_rel is
 * PW_SHAMOS_NORMAL_SCALE × the median of every pair's relative difference.
 * A difference inside a build cancels the build's level, so the software
 * changes between builds do not widen the floor; pairs are used instead of
 * deviations from each group's median because a median of two or three runs
 * sits on one of them (its deviations are biased low), and the median of
 * pairs keeps the rare infra outlier from widening it (Rousseeuw & Croux
 * 1993, the Shamos estimator). docs/statistics.md §10 has the reasoning.
 * work: pw_stats_noise_floor_work_len(group, n) doubles. PW_ERR_INVALID on a
 * non-finite value, group ids that are not ascending, or a group whose
 * median is not positive;
 * PW_ERR_INSUFFICIENT when no group has two values.
 */
pw_status pw_stats_noise_floor(const double *values, const int64_t *group, size_t n,
                               double *work, pw_noise_floor *out);

/* Doubles of work pw_stats_noise_floor needs: the pairs, and the largest group. */
size_t pw_stats_noise_floor_work_len(const int64_t *group, size_t n);

/* ---- Two-sample tests ----------------------------------------------------- */

typedef enum pw_alternative {
	PW_ALT_TWO_SIDED = 0,
	PW_ALT_LESS,    /* H1: x tends to be smaller than y */
	PW_ALT_GREATER, /* H1: x tends to be larger than y */
} pw_alternative;

typedef enum pw_mwu_method {
	PW_MWU_AUTO = 0, /* exact when both n <= PW_MWU_EXACT_MAX and no ties, else normal */
	PW_MWU_EXACT,    /* exact null distribution of U (no ties only) */
	PW_MWU_NORMAL,   /* normal approximation with tie and continuity correction */
} pw_mwu_method;

#define PW_MWU_EXACT_MAX 50

typedef struct pw_mwu_result {
	double u;        /* U statistic of x: #{x_i > y_j} + ½·#{x_i = y_j} (scipy's U1) */
	double z;        /* the normal-approximation z (0 when exact was used) */
	double p;        /* p-value for the alternative asked */
	bool exact;      /* whether the exact distribution was used */
} pw_mwu_result;

/*
 * Mann–Whitney U test of x (n1) against y (n2), matching
 * scipy.stats.mannwhitneyu(x, y, alternative=..., method=...) with
 * use_continuity=True. work has room for 2·(n1+n2) doubles, or is NULL to
 * allocate internally. n1, n2 >= 1.
 *
 * Our PW_MWU_AUTO is not scipy's 'auto' (scipy goes exact only when one sample
 * has <= 8 points): exact is cheap up to 50 × 50, so we use it there.
 * PW_MWU_EXACT with ties, or with n1·n2 > PW_MWU_EXACT_MAX², fails with
 * PW_ERR_INVALID (the exact null distribution assumes no ties). When every
 * value is tied the variance of U is zero: z is 0 and p is 1 (scipy: z = −inf).
 * The exact distribution needs a table of 2·(min(n1,n2)+1)·(n1·n2/2+1) doubles
 * beyond work; it lives on the stack when small (up to 2,048 doubles: 30 × 5
 * needs 912) and is otherwise one allocation per call;
 * pw_stats_mann_whitney_w avoids even that.
 */
pw_status pw_stats_mann_whitney(const double *x, size_t n1, const double *y, size_t n2,
                                pw_alternative alt, pw_mwu_method method, double *work,
                                pw_mwu_result *out);

/*
 * Doubles of work pw_stats_mann_whitney_w needs for n1, n2 (ranking plus exact
 * table). Monotone: a work sized for (n1, n2) serves all smaller sizes.
 */
size_t pw_stats_mann_whitney_work_len(size_t n1, size_t n2);

/*
 * As pw_stats_mann_whitney, with a work of work_len doubles that also holds the
 * exact table, so that nothing allocates: work_len >=
 * pw_stats_mann_whitney_work_len(n1, n2), else PW_ERR_INVALID.
 */
pw_status pw_stats_mann_whitney_w(const double *x, size_t n1, const double *y, size_t n2,
                                  pw_alternative alt, pw_mwu_method method, double *work,
                                  size_t work_len, pw_mwu_result *out);

typedef struct pw_welch_result {
	double t;   /* (mean(x) − mean(y)) / sqrt(s1²/n1 + s2²/n2) */
	double df;  /* Welch–Satterthwaite degrees of freedom */
	double p;   /* p-value for the alternative asked, from GSL's t distribution */
} pw_welch_result;

/*
 * Welch's unequal-variance t test; matches scipy.stats.ttest_ind(equal_var=False).
 * n1, n2 >= 2. When both samples are constant the standard error is zero and
 * there is nothing to test: PW_ERR_INSUFFICIENT (scipy returns NaN or ±inf).
 */
pw_status pw_stats_welch(const double *x, size_t n1, const double *y, size_t n2,
                         pw_alternative alt, pw_welch_result *out);

/*
 * The prediction t test: are the k new points y a draw from the population
 * the reference x (m points) came from? The variance is the reference's
 * alone (the new points are too few to estimate one):
 *   t = (mean(y) − mean(x)) / (s_x · sqrt(1/m + 1/k)),  df = m − 1,
 * under H0 Student's t (normal data; the prediction interval for the mean of
 * k future observations). alt as for pw_stats_welch with x the new points:
 * PW_ALT_GREATER means y tends to be larger than x. The watcher's early
 * shift rule (pw_changepoint.h pw_cp_early_shift) uses it. m >= 2, k >= 1;
 * PW_ERR_INSUFFICIENT when the reference is constant (s_x = 0).
 * Reference values: scipy.stats.t.sf / t.cdf of the same t and df
 * (tests/reference/gen_stats_reference.py).
 */
typedef struct pw_pred_result {
	double t;
	double df;
	double p;
} pw_pred_result;

pw_status pw_stats_prediction_t(const double *x, size_t m, const double *y, size_t k,
                                pw_alternative alt, pw_pred_result *out);

typedef struct pw_hl_result {
	double shift;  /* Hodges–Lehmann estimate: median of all y_j − x_i */
	double lo, hi; /* distribution-free confidence interval for the shift */
	double level;  /* achieved confidence level (>= the level asked, when attainable) */
} pw_hl_result;

/*
 * Hodges–Lehmann shift of y relative to x with a Moses confidence interval at
 * `level` (e.g. 0.95). work has room for n1·n2 doubles, or NULL to allocate.
 * The interval is [D_(k), D_(N+1−k)] of the N = n1·n2 sorted differences, k
 * from the exact null distribution of U when n1·n2 <= PW_MWU_EXACT_MAX² (table
 * as for pw_stats_mann_whitney), else from its normal approximation. When even
 * k = 1 cannot reach `level` (tiny samples) the interval is [min, max] and
 * `level` reports what it achieves. n1, n2 >= 1; 0 < level < 1.
 */
pw_status pw_stats_hodges_lehmann(const double *x, size_t n1, const double *y, size_t n2,
                                  double level, double *work, pw_hl_result *out);

/* ---- Multiple comparisons ------------------------------------------------- */

/*
 * Benjamini–Hochberg q-values (adjusted p-values) for p[0..n), written to q in
 * the input order; matches scipy.stats.false_discovery_control(p, method='bh').
 * work has room for n size_t indices, or NULL to allocate. n may be 0.
 */
pw_status pw_stats_bh_qvalues(const double *p, size_t n, size_t *work, double *q);

/* ---- Power ---------------------------------------------------------------- */

/*
 * §4.5: n per arm ≈ 2(z_{α/2} + z_β)²(σ/Δ)² for a two-sided test at alpha with
 * the given power; sigma and delta in the same unit (or both relative).
 * `exact` uses the noncentral-t search for the two-sample t test instead of
 * the normal formula. Returns n as a real number (the caller rounds up).
 *
 * Exact: power(n) = P(|T'| > t_{1−α/2, 2n−2}) with T' noncentral t of 2n − 2
 * degrees of freedom and noncentrality Δ/(σ·sqrt(2/n)), computed by
 * integrating the normal tails over the chi distribution of sqrt(χ²) with a
 * 256-point Gauss–Legendre rule from GSL (GSL has no noncentral t); n is the
 * root of power(n) = power found by GSL's Brent solver, at least 2 (a t test
 * needs two points an arm). Requires sigma > 0, delta > 0, 0 < alpha < 1,
 * alpha/2 < power < 1; else PW_ERR_INVALID. GSL's process-wide error handler
 * is not touched: inputs are checked so that GSL is never asked anything it
 * reports as an error (it still aborts on out-of-memory, as GSL does).
 */
pw_status pw_stats_power_n(double sigma, double delta, double alpha, double power, bool exact,
                           double *n_per_arm);

/*
 * The minimum detectable effect for n per arm (the inverse of the above), in
 * sigma's unit. n_per_arm >= 1 (normal) or >= 2 (exact), else PW_ERR_INSUFFICIENT.
 */
pw_status pw_stats_power_mde(double sigma, size_t n_per_arm, double alpha, double power,
                             bool exact, double *mde);

/* The power of the two-sided two-sample t test (noncentral t, as above) at n per arm. */
pw_status pw_stats_power_t(double sigma, double delta, double n_per_arm, double alpha,
                           double *power);

/*
 * ---- Repeats per series (§4.5): the one function that chooses n ------------
 *
 * The gate, the baseliner (which publishes n with every baseline) and the
 * repeat planner call pw_stats_required_n, so that n is a derived quantity
 * decided in one place, never folklore. Contract:
 *
 *   n = max(floor_n, ⌈2·(z_{1−α/2} + z_{1−β})²·(σ/MDE)²⌉)
 *
 * the normal formula of pw_stats_power_n (exact = false; at α = 0.05, power
 * 0.9 the factor is 21.01, the seed's "n ≈ 21·(σ/Δ)²"), rounded up, and
 * never below floor_n: the fewest candidate runs with which the gate's rank
 * test can reach significance at all under Benjamini–Hochberg over a release
 * (docs/statistics.md §2: against 30 baseline runs 5 candidate runs clear
 * 2,160 tests, 4 only when several regressions land together;
 * PW_POWER_FLOOR_N). Inputs: sigma_pct the series' relative noise in percent
 * (the baseline's MAD_n/median × 100, its noise floor), mde_pct the minimum
 * detectable effect it is certified at (pw_stats_series_mde), alpha and
 * power the §4.5 targets (PW_POWER_ALPHA, PW_POWER_TARGET). At the design's
 * figures: σ 0.4%, MDE 1% (TPU, top-20) → 3.36 → 5 (the floor: "5 repeats");
 * σ 0.4%, MDE 3% (tail) → 0.37 → 5; σ 2%, MDE 4% (GPU) → 5.25 → 6 ("MDE 4%
 * at n = 6"); σ 2%, MDE 1% → 84.06 → 85 (unaffordable: the GPU MDE is 4%).
 * sigma_pct = 0 (a constant series) gives floor_n. PW_ERR_INVALID for a
 * non-finite or negative sigma_pct, mde_pct <= 0 or non-finite, alpha or
 * power out of pw_stats_power_n's range, floor_n < 1, or an n beyond
 * PW_POWER_MAX_N (a series that needs more runs than any fleet will give is
 * a harness defect, §4.2, not a repeat count).
 */
#define PW_POWER_ALPHA 0.05     /* §4.5: two-sided significance the n is computed for */
#define PW_POWER_TARGET 0.9     /* §4.5: power at the MDE */
#define PW_POWER_FLOOR_N 5u     /* the rank test's floor (docs/statistics.md §2) */
#define PW_POWER_MAX_N 100000u
#define PW_POWER_MDE_TOP_PCT 1.0  /* §4.5: the top-20 models by spend */
#define PW_POWER_MDE_TAIL_PCT 3.0 /* §4.5: the tail */
/* §4.5: on GPU-class platforms (σ ≈ 2%) the benchmarks certify 4% whatever
 * the tier; the band between the tier's MDE and 4% (1–4% on the top tier) is
 * the production canary's to catch (big N from live traffic), not the gate's. */
#define PW_POWER_MDE_GPU_PCT 4.0

pw_status pw_stats_required_n(double sigma_pct, double mde_pct, double alpha, double power,
                              unsigned floor_n, unsigned *n);

/*
 * The MDE a series is certified at: the tier's (tier_mde_pct), raised to
 * gpu_mde_pct on a GPU-class platform (gpu true). Pure.
 */
double pw_stats_series_mde(double tier_mde_pct, bool gpu, double gpu_mde_pct);

/* ---- The two-sample verdict ------------------------------------------------ */

/*
 * pw_stats_compare is the decision of §4.3(a) for one series: baseline runs
 * against candidate runs. `perfwatch compare` and the release gate call it, so
 * that both decide alike. It fires (REGRESSED or IMPROVED) only when
 *   p < alpha   (Mann–Whitney two-sided, PW_MWU_AUTO), and
 *   the minimum-effect filter passes — the one rule, stated here and in
 *   these words in docs/statistics.md §4, docs/gate.md and the gate's
 *   console report (PW_COMPARE_FILTER_RULE, pw_compare_filter_text):
 *
 *     |effect| > max(0.7*MDE, 2*SE),  SE = sigma*sqrt(1/n_base + 1/n_cand)
 *
 * effect = HL shift/|median_base| × 100 (the Hodges–Lehmann estimate of the
 * shift, in percent; the gate tests a registered win's excess over its
 * registration the same way), MDE the tier's minimum detectable effect,
 * sigma the baseline's relative noise MAD_n(base)/|median_base| × 100; 0.7
 * is the practical fraction (PW_COMPARE_PRACTICAL_FRAC, `practical_pct` =
 * 0.7 × mde_pct unless set, gate.practical_frac) and 2 the noise arm's k
 * (PW_COMPARE_NOISE_K, `noise_k`, gate.noise_k): k standard errors of a
 * difference of means.
 *
 * Why 0.7: the MDE is the shift the test must catch with power 0.9; a
 * threshold at the MDE itself passes a true shift of exactly the MDE half
 * the time (power 0.50 by construction). The HL estimate is asymptotically
 * normal with sd sigma·√(π/3·(1/n_base + 1/n_cand)), 0.198% at the seed's
 * sigma 0.4% and 30 × 5 runs, so 0.7 × MDE = 0.70% passes a true +1.0% with
 * probability Φ(0.30/0.198) = 0.935 and a +0.3% wiggle with 0.021; the whole
 * rule (with p < 0.05) fires at 0.930 and 0.022 (scipy and numpy,
 * tests/reference/filter_power.py; tests/unit/test_stats.c filter_power
 * checks this code against those figures). docs/statistics.md §6 has the
 * window 0.627% ≤ T ≤ 0.745% that 0.7 sits in.
 *
 * The sign of effect and the direction decide which of the two it is. alpha
 * is the caller's: the gate passes its Benjamini–Hochberg level (and
 * compares q-values itself, using the p it gets back).
 *
 * Until 2026-12 the filter was |Δ| > max(MDE, 2σ) on the median difference Δ
 * (below); practical_pct = mde_pct with noise_k = 0 and the old 2σ check done
 * by the caller reproduces it (bench/bench_power.c does, to compare).
 */
#define PW_COMPARE_FILTER_RULE "|effect| > max(0.7*MDE, 2*SE), SE = sigma*sqrt(1/n_base + 1/n_cand)"

typedef enum pw_compare_direction {
	PW_COMPARE_LOWER_IS_BETTER = 0, /* latency, step time: positive Δ is a regression */
	PW_COMPARE_HIGHER_IS_BETTER,    /* throughput: negative Δ is a regression */
} pw_compare_direction;

typedef enum pw_compare_verdict {
	PW_COMPARE_UNCHANGED = 0,
	PW_COMPARE_REGRESSED,
	PW_COMPARE_IMPROVED,
} pw_compare_verdict;

typedef struct pw_compare_opts {
	pw_compare_direction direction;
	double mde_pct;  /* minimum effect of interest, percent (default 1) */
	double alpha;    /* significance level (default 0.05) */
	double hl_level; /* confidence level of the Hodges–Lehmann interval (default 0.95) */
	/* Practical-significance threshold, percent; NaN (the default) means
	 * PW_COMPARE_PRACTICAL_FRAC × mde_pct, so callers that set only the MDE
	 * get a threshold that follows it. */
	double practical_pct;
	double noise_k;  /* noise floor in standard errors of the difference (default 2) */
} pw_compare_opts;

/* Default practical threshold as a fraction of the MDE (docs/statistics.md §6). */
#define PW_COMPARE_PRACTICAL_FRAC 0.7
#define PW_COMPARE_NOISE_K 2.0

/* Fills opts with the defaults above. */
void pw_compare_opts_init(pw_compare_opts *opts);

typedef struct pw_compare_result {
	pw_compare_verdict verdict;
	size_t n_base, n_cand;
	double median_base, median_cand;
	double mad_base;       /* normalised MAD of the baseline, in the data's unit */
	double mad_cand;       /* normalised MAD of the candidate (reported, not used) */
	double delta_pct;      /* signed relative change of the median, percent */
	double sigma_pct;      /* baseline relative noise MAD_n/|median|, percent */
	double two_sigma_pct;  /* 2 × sigma_pct (reported; the old rule's noise floor) */
	double threshold_pct;  /* max(practical_pct, noise_floor_pct) */
	bool effect_filter_passed; /* |effect_pct| > threshold_pct */
	double p;              /* the p-value the verdict used (= mwu.p) */
	pw_mwu_result mwu;     /* two-sided Mann–Whitney of cand against base */
	bool welch_ok;         /* false when Welch could not run (n < 2 or zero variance) */
	pw_welch_result welch; /* Welch t of cand against base (NaN when !welch_ok) */
	pw_hl_result hl;       /* HL shift of cand relative to base, data's unit */
	double mde_pct, alpha; /* the options used */
	double effect_pct;      /* HL shift / |median_base| × 100: the filtered effect */
	double practical_pct;   /* the practical threshold used */
	double noise_floor_pct; /* noise_k × sigma_pct × √(1/n_base + 1/n_cand) */
} pw_compare_result;

/*
 * Doubles of work pw_stats_compare needs for n_base and n_cand. Monotone: a
 * work sized for the largest samples of a release serves every smaller pair
 * (the exact table's size peaks at 50 × 50, so this is not just the table for
 * the sizes given).
 */
size_t pw_stats_compare_work_len(size_t n_base, size_t n_cand);

/*
 * Compares cand (n_cand >= 1) with base (n_base >= 1): PW_ERR_INVALID on
 * non-finite input, bad opts or a zero baseline median (relative change
 * undefined), PW_ERR_INSUFFICIENT on an empty sample. opts NULL means the
 * defaults. work has pw_stats_compare_work_len() doubles, or is NULL to
 * allocate once; it grows as n_base·n_cand (the Hodges–Lehmann differences),
 * about 9 KiB at the gate's 30 × 5.
 */
pw_status pw_stats_compare(const double *base, size_t n_base, const double *cand,
                           size_t n_cand, const pw_compare_opts *opts, double *work,
                           pw_compare_result *out);

/* "REGRESSED", "IMPROVED" or "UNCHANGED". */
const char *pw_compare_verdict_name(pw_compare_verdict v);

/*
 * One decided filter in the rule's words (PW_COMPARE_FILTER_RULE), into buf
 * (len bytes, always NUL-terminated when len > 0):
 *   "effect=+8.21% > max(0.7*MDE=0.70%, 2*SE=0.37%)"
 * `name` is "effect" or "excess" (a registered win), `value` the percent
 * tested, frac the practical fraction (practical_pct / mde_pct), k the noise
 * arm's multiple of SE; ">" when |value| > max(practical_pct,
 * noise_floor_pct), else "<=". The gate's console report and alert summaries
 * print it, so that what they show is the rule the verdict was decided by.
 * Returns snprintf's count.
 */
int pw_compare_filter_text(char *buf, size_t len, const char *name, double value, double frac,
                           double practical_pct, double k, double noise_floor_pct);

/* ---- Kayenta's fixed-horizon judge (the canary's reference) ---------------- */

/*
 * The metric classification of Kayenta's NetflixACAJudge (spinnaker/kayenta,
 * kayenta-judge MannWhitneyClassifier with the judge's tolerance = 0.25 and
 * confLevel = 0.98), re-implemented here as the reference the canary's
 * sequential test is measured against (bench/bench_canary.c, docs/canary.md
 * §5). It is a fixed-horizon test: valid when applied once, not when applied
 * again at every look at growing data, which is how a canary is watched.
 *
 * Kayenta computes a confidence interval [lo, hi] for the shift of cand
 * relative to base by inverting the normal approximation of Mann–Whitney U
 * (continuity and tie corrected, as pw_stats_mann_whitney's PW_MWU_NORMAL),
 * and an estimate (the Hodges–Lehmann shift, the median of all
 * cand_i − base_j), and classifies
 *   HIGH when lo > tolerance·|shift| and mean(cand)/mean(base) >= 1,
 *   LOW  when hi < −tolerance·|shift| and mean(cand)/mean(base) <= 1,
 *   PASS otherwise.
 * As the interval's lower bound is where the standardised U of cand − μ
 * against base crosses z = z_{(1+conf)/2}, lo > c is decided as
 * z(c) > z_{(1+conf)/2}, without solving for lo (and hi < −c as
 * z(−c) < −z_{(1+conf)/2}).
 *
 * The shift is needed only when z(0) is already beyond the critical value
 * (else the interval holds 0 and the class is PASS whatever the tolerance), so
 * it is computed only then; otherwise shift and z_tol are NaN. The shift is
 * found by bisection over the values with a merge count per step
 * (O((n1 + n2)·64)), never by listing the n1·n2 differences.
 *
 * work holds pw_stats_mw_judge_work_len(n_cand, n_base) doubles. conf_level
 * in (0, 1), tolerance >= 0; n_cand, n_base >= 1 (PW_ERR_INSUFFICIENT when 0,
 * PW_ERR_INVALID on non-finite input or bad arguments). When every value is
 * tied U has no variance: z = 0 and the class is PASS (Kayenta adds noise
 * first; we report no evidence).
 */
typedef enum pw_mw_judge_class {
	PW_MW_JUDGE_PASS = 0,
	PW_MW_JUDGE_HIGH,
	PW_MW_JUDGE_LOW,
} pw_mw_judge_class;

/* Kayenta's defaults (NetflixACAJudge). */
#define PW_MW_JUDGE_CONF 0.98
#define PW_MW_JUDGE_TOLERANCE 0.25

typedef struct pw_mw_judge_result {
	pw_mw_judge_class cls;
	double z;          /* standardised U of cand against base at shift 0 */
	double shift;      /* Hodges–Lehmann shift of cand − base (NaN unless needed) */
	double z_tol;      /* z at the tolerance shift ±tolerance·|shift| (NaN unless needed) */
	double mean_ratio; /* mean(cand)/mean(base); NaN when either mean is 0 */
} pw_mw_judge_result;

size_t pw_stats_mw_judge_work_len(size_t n_cand, size_t n_base);

pw_status pw_stats_mw_judge(const double *cand, size_t n_cand, const double *base,
                            size_t n_base, double conf_level, double tolerance, double *work,
                            size_t work_len, pw_mw_judge_result *out);

/* "PASS", "HIGH" or "LOW". */
const char *pw_mw_judge_class_name(pw_mw_judge_class c);

/* ---- The canary's always-valid paired comparison (confidence sequence) ----- */

/*
 * A confidence sequence for the relative effect of a canary arm against its
 * baseline arm, updated one window at a time and valid at every window at
 * once: with probability at least 1 − alpha the true effect lies inside every
 * interval the sequence ever reports, however often it is looked at and
 * whenever the looking stops (time-uniform coverage; docs/canary.md §3 has
 * the proof and its assumptions).
 *
 * Each window gives one pair (canary, baseline) of positive values from the
 * same traffic slice (the two arms' window medians of TPOT, TTFT or goodput)
 * and so one paired log ratio
 *   d = log(canary/baseline)      (lower is better: TPOT, TTFT)
 *   d = log(baseline/canary)      (higher is better: goodput),
 * positive when the canary is worse. Whatever the two arms share (diurnal
 * load, the traffic mix, cache hit rate) divides out of the ratio.
 *
 * The first pilot_windows windows only set the scale: s = max(MAD_n of their
 * d, min_scale) and the clip c = huber_k·s; the decision meanwhile is
 * INSUFFICIENT_DATA. Every later window enters the test through the Huber
 * score ψ(d − μ) = max(−c, min(c, d − μ)); with
 *   S(μ) = Σ ψ(d_i − μ),  V(μ) = Σ ψ(d_i − μ)²,  n the windows tested,
 * and the mixture width ρ = pw_cs_rho(rho_windows·s², alpha), the interval is
 *   { μ : S(μ)² < (V(μ) + ρ)·log((n·c² + ρ)/(ρ·α²)) },
 * the self-normalised normal-mixture boundary of Howard et al. (2021) with
 * V(μ) in the logarithm replaced by its bound n·c², which makes the set an
 * interval (docs/canary.md §3). Its coverage needs only that, at the true
 * effect μ*, d_i − μ* is symmetric given the windows before it (arms
 * exchangeable within a slice) — no moments, no constant variance, no
 * independence of what the arms share. estimate is the root of S (the Huber
 * M-estimate at the fixed scale).
 *
 * Decision after the pilot, in this order, with τ = log(1 + tolerance_pct/100)
 * and m = log(1 + mde_pct/100) in the same worse-is-positive log units:
 *   REGRESSION     the whole interval lies above τ (the canary is worse by
 *                  more than the tolerance): roll back;
 *   NO_REGRESSION  the whole interval lies below m (the canary is not worse
 *                  by the MDE or more): promote;
 *   CONTINUE       otherwise (an interval unbounded on a side while too few
 *                  windows have been tested is CONTINUE too).
 * If the true effect is at most τ, REGRESSION is ever reported with
 * probability at most alpha; if it is at least m, NO_REGRESSION is. The
 * decision is re-evaluated at every window; the caller acts on the first one
 * it trusts (the canary service: the first REGRESSION or NO_REGRESSION).
 *
 * The result is a pure function of the options and of the sequence of pairs
 * added: the pilot is the first pilot_windows pairs in order, and after it
 * the state depends only on the multiset of the tested windows (they are kept
 * sorted, with prefix sums), so that two states fed the same pairs agree bit
 * for bit and a service can rebuild one by replaying its stored windows.
 * Memory grows with the windows tested (three doubles each); an update costs
 * O(n) for the sorted insert and O(log n) per evaluation of S and V, about
 * 200 evaluations a window.
 */
typedef enum pw_cs_decision {
	PW_CS_INSUFFICIENT_DATA = 0,
	PW_CS_CONTINUE,
	PW_CS_REGRESSION,
	PW_CS_NO_REGRESSION,
} pw_cs_decision;

/* The tolerance as a fraction of the MDE when tolerance_pct is NaN (docs/canary.md §4). */
#define PW_CS_TOLERANCE_FRAC 0.5

typedef struct pw_cs_opts {
	pw_compare_direction direction; /* lower is better (default) or higher */
	double alpha;          /* 1 − the time-uniform coverage (default 0.05) */
	double mde_pct;        /* NO_REGRESSION bound, percent worse (default 1) */
	double tolerance_pct;  /* REGRESSION bound, percent worse; NaN (default) means
	                        * PW_CS_TOLERANCE_FRAC × mde_pct; 0 <= tolerance < mde */
	size_t pilot_windows;  /* windows that set the scale (default 12: an hour of 5 min) */
	double huber_k;        /* clip c = huber_k × the pilot's MAD_n (default 1.5) */
	double rho_windows;    /* the boundary is tightest after this many tested windows,
	                        * counted in s² (default 96: 8 h of 5 min) */
	double min_scale;      /* floor of the scale s, log units (default 1e-4, 0.01%) */
} pw_cs_opts;

/* Fills opts with the defaults above. */
void pw_cs_opts_init(pw_cs_opts *opts);

typedef struct pw_cs_result {
	pw_cs_decision decision;
	size_t n_windows;   /* pairs added, pilot included */
	size_t n_tested;    /* pairs in the test (after the pilot) */
	/*
	 * The effect and its interval as the canary's relative change,
	 * 100·(canary/baseline − 1) percent, whatever the direction (so a goodput
	 * regression is negative, as pw_compare's delta_pct); lo_pct <= hi_pct.
	 * NaN until a window is tested. A side the sequence does not bound yet
	 * reads −100 (a ratio of 0) or +INFINITY.
	 */
	double effect_pct, lo_pct, hi_pct;
	/* The same in worse-is-positive log units, as the decision reads them
	 * (±INFINITY on a side not bounded yet). */
	double estimate, lo, hi;
	double tolerance_pct, mde_pct; /* the bounds the decision used */
	double scale, clip, rho;       /* s, c and ρ (NaN during the pilot) */
} pw_cs_result;

typedef struct pw_cs pw_cs;

/*
 * A new sequence with a copy of opts (NULL: the defaults). PW_ERR_INVALID on
 * bad options (alpha outside [1e-12, 1), mde_pct <= 0, tolerance_pct outside
 * [0, mde_pct), pilot_windows < 2, huber_k <= 0, rho_windows <= 0,
 * min_scale <= 0, non-finite values), PW_ERR_NOMEM. *out is the caller's, to
 * pw_cs_free.
 */
pw_status pw_cs_new(const pw_cs_opts *opts, pw_cs **out);

/* Frees cs; NULL is fine. */
void pw_cs_free(pw_cs *cs);

/*
 * Adds one window's pair and reports the sequence after it. canary and
 * baseline must be finite and > 0 (PW_ERR_INVALID; the state is unchanged).
 * PW_ERR_NOMEM when the sorted store cannot grow (state unchanged). out may be
 * NULL.
 */
pw_status pw_cs_add(pw_cs *cs, double canary, double baseline, pw_cs_result *out);

/* The sequence as the last pw_cs_add reported it (INSUFFICIENT_DATA before any). */
void pw_cs_current(const pw_cs *cs, pw_cs_result *out);

/*
 * The two-sided normal-mixture boundary (Robbins 1970; Howard et al. 2021):
 * for a process S_t sub-Gaussian with variance process V_t (exp(λS_t −
 * λ²V_t/2) a supermartingale for every λ), P(∃t: |S_t| >= u(V_t)) <= alpha
 * where
 *   u(v) = sqrt((v + ρ)·log((v + ρ)/(ρ·α²))).
 * v >= 0, rho > 0, 1e-12 <= alpha < 1, else NaN.
 */
double pw_cs_boundary(double v, double rho, double alpha);

/*
 * The ρ that makes pw_cs_boundary tightest at v = v_opt:
 *   ρ = v_opt / (−W₋₁(−α²/e) − 1)
 * (W₋₁ the lower branch of Lambert's W, GSL's gsl_sf_lambert_Wm1). v_opt > 0,
 * 1e-12 <= alpha < 1, else NaN.
 */
double pw_cs_rho(double v_opt, double alpha);

/* "INSUFFICIENT_DATA", "CONTINUE", "REGRESSION" or "NO_REGRESSION". */
const char *pw_cs_decision_name(pw_cs_decision d);

#endif
