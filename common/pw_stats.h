/*
 * pw_stats.h: the descriptive statistics and two-sample tests of §4 of the
 * design, defined once for every service, the CLI and the benchmarks.
 *
 * Conventions:
 * - Inputs are const double arrays with an explicit length; no function keeps
 *   a pointer after it returns.
 * - Functions that must reorder data take a caller-owned workspace of the size
 *   they document, so that nothing allocates in an inner loop. Pass NULL where
 *   a function documents that it then allocates once itself.
 * - Non-finite input (NaN, ±inf) is rejected with PW_ERR_INVALID; too few
 *   points for the statistic with PW_ERR_INSUFFICIENT.
 * - The reasoning, formulas and references are in docs/statistics.md.
 */
#ifndef PW_STATS_H
#define PW_STATS_H

#include <stdbool.h>
#include <stddef.h>

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

/* The noise band of §4.2: [median − k·MAD_n, median + k·MAD_n], k = 3 by default. */
#define PW_NOISE_BAND_K 3.0

/* Arithmetic mean and sample variance (n − 1 denominator, n >= 2), Welford's method. */
pw_status pw_stats_mean_var(const double *x, size_t n, double *mean, double *var);

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
 */
pw_status pw_stats_mann_whitney(const double *x, size_t n1, const double *y, size_t n2,
                                pw_alternative alt, pw_mwu_method method, double *work,
                                pw_mwu_result *out);

typedef struct pw_welch_result {
	double t;   /* (mean(x) − mean(y)) / sqrt(s1²/n1 + s2²/n2) */
	double df;  /* Welch–Satterthwaite degrees of freedom */
	double p;   /* p-value for the alternative asked, from GSL's t distribution */
} pw_welch_result;

/* Welch's unequal-variance t test; matches scipy.stats.ttest_ind(equal_var=False). n1, n2 >= 2. */
pw_status pw_stats_welch(const double *x, size_t n1, const double *y, size_t n2,
                         pw_alternative alt, pw_welch_result *out);

typedef struct pw_hl_result {
	double shift;  /* Hodges–Lehmann estimate: median of all y_j − x_i */
	double lo, hi; /* distribution-free confidence interval for the shift */
	double level;  /* achieved confidence level (>= the level asked, when attainable) */
} pw_hl_result;

/*
 * Hodges–Lehmann shift of y relative to x with a Moses confidence interval at
 * `level` (e.g. 0.95). work has room for n1·n2 doubles, or NULL to allocate.
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
 */
pw_status pw_stats_power_n(double sigma, double delta, double alpha, double power, bool exact,
                           double *n_per_arm);

/* The minimum detectable effect for n per arm (the inverse of the above). */
pw_status pw_stats_power_mde(double sigma, size_t n_per_arm, double alpha, double power,
                             bool exact, double *mde);

#endif
