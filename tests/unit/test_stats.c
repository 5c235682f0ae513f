/*
 * test_stats.c: the descriptive statistics, two-sample tests, BH q-values,
 * power and the two-sample verdict of common/pw_stats.c.
 *
 * Expected values are not ours: each block quotes the output of
 * tests/reference/gen_stats_reference.py (scipy 1.10 / numpy 1.24, Debian),
 * which names the scipy or numpy call behind every number, or a published
 * example (scipy's mannwhitneyu docs, Benjamini & Hochberg 1995). The edges
 * (n = 0, 1, 2, ties, constants, NaN, ±inf) are checked against the contract
 * in pw_stats.h.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_stats.h"
#include "test_near.h"
#include "test_noise.h"

/* ---- Data: the same literals as gen_stats_reference.py --------------------- */

static const double ODD[] = {3.1, 2.7, 5.9, 4.4, 1.2, 8.8, 6.5, 4.4, 0.3, 7.7, 2.2};
static const double EVEN[] = {10.0, 12.5, 9.75, 11.0, 14.25, 10.5, 13.0, 9.0, 12.0, 30.0};
static const double MALES[] = {19, 22, 16, 29, 24};
static const double FEMALES[] = {20, 11, 17, 12};
static const double X7[] = {1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55};
static const double Y6[] = {0.878, 0.647, 0.598, 2.05, 1.06, 1.29};
static const double TIES_X[] = {1, 2, 2, 3, 3, 3, 4, 5};
static const double TIES_Y[] = {2, 3, 4, 4, 5, 5, 6, 6, 7};
static const double BASE30[] = {
	100.12, 99.87, 100.43, 99.65, 100.08, 100.31, 99.92, 100.55, 99.71, 100.19,
	99.96,  100.27, 99.83, 100.02, 100.38, 99.77, 100.14, 99.59, 100.47, 99.99,
	100.23, 99.88, 100.06, 100.35, 99.74, 100.11, 99.91, 100.29, 99.68, 100.04};
static const double CAND5_SLOW[] = {103.21, 102.87, 103.44, 102.95, 103.12};
static const double CAND5_SAME[] = {100.07, 99.85, 100.26, 99.97, 100.13};
/* Drawn by the script (numpy default_rng(20261202)), printed as these literals. */
static const double BIG_X[60] = {
	9.95, 10.38, 11.65, 8.26, 11.48, 10.64, 9.93, 8.76, 9.47, 9.02, 8.98, 9.82, 10.77, 8.56,
	8.09, 9.04, 9.11, 9.4, 9.83, 11.26, 10.0, 10.05, 9.97, 10.53, 11.14, 11.1, 10.65, 8.82,
	10.64, 9.86, 10.34, 11.64, 7.36, 9.18, 10.55, 9.58, 9.97, 9.66, 11.93, 10.23, 9.76,
	9.78, 10.58, 11.5, 9.91, 11.23, 10.12, 8.03, 11.19, 7.86, 10.09, 11.36, 11.6, 10.42,
	8.3, 11.09, 9.83, 9.15, 9.72, 8.89};
static const double BIG_Y[55] = {
	9.89, 9.77, 10.48, 10.14, 10.89, 11.46, 9.38, 7.83, 11.9, 9.93, 10.5, 9.0, 11.18, 10.56,
	10.31, 12.04, 10.25, 9.68, 10.59, 10.94, 11.31, 13.32, 10.64, 11.03, 9.37, 9.38, 10.61,
	9.47, 11.25, 10.57, 11.03, 10.27, 11.78, 10.35, 9.55, 10.57, 10.86, 9.69, 9.3, 10.12,
	9.69, 9.33, 11.18, 11.33, 10.42, 11.42, 9.74, 11.74, 10.4, 11.5, 8.89, 11.56, 9.79,
	10.0, 9.67};

static const double MID_X[20] = {
	6.4302, 2.8671, 4.8986, 6.6849, 6.1997, 5.097, 3.9833, 6.1855, 4.076, 4.0931, 5.0356,
	4.8116, 4.2463, 7.1799, 4.0004, 5.4581, 4.5533, 6.569, 4.5205, 7.1428};
static const double MID_Y[25] = {
	4.9741, 5.0892, 6.8376, 4.115, 5.0278, 6.3595, 5.9456, 4.3312, 7.4199, 4.5804, 7.1555,
	5.4417, 8.224, 4.2574, 5.9722, 4.7949, 5.6689, 6.3496, 6.4626, 4.9696, 4.2733, 5.4597,
	4.3892, 5.0703, 6.1321};

/* ---- Descriptive ------------------------------------------------------------ */

/* numpy.median / numpy.quantile (type 7), from gen_stats_reference.py. */
Test(stats_quantile, numpy_type7_odd)
{
	double w[N_OF(ODD)], v;
	const double q[] = {0.0, 0.1, 0.25, 0.5, 0.9, 0.95, 1.0};
	const double want[] = {0.3, 1.2, 2.45, 4.4, 7.7, 8.25, 8.8};
	for (size_t i = 0; i < N_OF(q); i++) {
		cr_assert_eq(pw_stats_quantile(ODD, N_OF(ODD), q[i], w, &v), PW_OK);
		NEAR(v, want[i], 1e-14);
	}
	cr_assert_eq(pw_stats_median(ODD, N_OF(ODD), w, &v), PW_OK);
	NEAR(v, 4.4, 1e-15);
}

Test(stats_quantile, numpy_type7_even)
{
	double w[N_OF(EVEN)], v;
	const double q[] = {0.0, 0.1, 0.25, 0.5, 0.9, 0.95, 1.0};
	const double want[] = {9.0, 9.675, 10.125, 11.5, 15.824999999999994, 22.912499999999984,
	                       30.0};
	for (size_t i = 0; i < N_OF(q); i++) {
		cr_assert_eq(pw_stats_quantile(EVEN, N_OF(EVEN), q[i], w, &v), PW_OK);
		NEAR(v, want[i], 1e-14);
	}
	cr_assert_eq(pw_stats_median(EVEN, N_OF(EVEN), w, &v), PW_OK);
	NEAR(v, 11.5, 1e-15);
}

/* Selection against a full sort on many shapes: random, sorted, reversed, few distinct values. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

Test(stats_quantile, selection_matches_sort)
{
	enum { N = 1001 };
	double *x = malloc(N * sizeof *x), *s = malloc(N * sizeof *s), *w = malloc(N * sizeof *w);
	cr_assert(x && s && w);
	unsigned long long st = 42;
	for (int shape = 0; shape < 4; shape++) {
		for (size_t n = 1; n <= N; n += (n < 40 ? 1 : 97)) {
			for (size_t i = 0; i < n; i++) {
				st = st * 6364136223846793005ULL + 1442695040888963407ULL;
				double r = (double)(st >> 11) / 9007199254740992.0;
				x[i] = shape == 0 ? r : shape == 1 ? (double)i : shape == 2 ? (double)(n - i)
				                                                       : floor(r * 3.0);
			}
			memcpy(s, x, n * sizeof *s);
			qsort(s, n, sizeof *s, cmp_double);
			double med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0, v;
			cr_assert_eq(pw_stats_median(x, n, w, &v), PW_OK);
			cr_assert_eq(v, med, "shape %d n %zu: %g != %g", shape, n, v, med);
			cr_assert_eq(pw_stats_quantile(x, n, 0.9, w, &v), PW_OK);
			double h = (double)(n - 1) * 0.9;
			size_t lo = (size_t)floor(h);
			double want = lo + 1 < n ? s[lo] + (s[lo + 1] - s[lo]) * (h - (double)lo) : s[lo];
			NEAR(v, want, 1e-12);
		}
	}
	free(x);
	free(s);
	free(w);
}

/*
 * The sorted-window form gives pw_stats_median_mad's values bit for bit, on
 * every size from 1 to 241 and shapes with ties, negatives and wide ranges;
 * the scipy values of the test below hold for it too.
 */
Test(stats_descriptive, median_mad_sorted_equals_selection)
{
	enum { N = 241 };
	double x[N], s[N], w[N];
	unsigned long long st = 7;
	for (int shape = 0; shape < 5; shape++) {
		for (size_t n = 1; n <= N; n++) {
			for (size_t i = 0; i < n; i++) {
				st = st * 6364136223846793005ULL + 1442695040888963407ULL;
				double r = (double)(st >> 11) / 9007199254740992.0;
				x[i] = shape == 0 ? 100.0 + r                 /* a latency around 100 */
				     : shape == 1 ? floor(r * 4.0)            /* heavy ties */
				     : shape == 2 ? (r - 0.5) * 1e-3          /* around zero, negatives */
				     : shape == 3 ? (r < 0.1 ? 1e6 : r)       /* outliers */
				                  : 3.0;                      /* constant */
			}
			memcpy(s, x, n * sizeof *s);
			qsort(s, n, sizeof *s, cmp_double);
			double m1, d1, m2, d2;
			cr_assert_eq(pw_stats_median_mad(x, n, w, &m1, &d1), PW_OK);
			cr_assert_eq(pw_stats_median_mad_sorted(s, n, &m2, &d2), PW_OK);
			cr_assert(m1 == m2 && d1 == d2, "shape %d n %zu: (%.17g, %.17g) != (%.17g, %.17g)",
			          shape, n, m2, d2, m1, d1);
		}
	}
	double med, mad;
	memcpy(s, ODD, sizeof ODD);
	qsort(s, N_OF(ODD), sizeof *s, cmp_double);
	cr_assert_eq(pw_stats_median_mad_sorted(s, N_OF(ODD), &med, &mad), PW_OK);
	NEAR(med, 4.4, 1e-15);
	NEAR(mad, 3.1134646588617634, 1e-13);
	const double nan3[] = {1.0, 2.0, NAN};
	cr_assert_eq(pw_stats_median_mad_sorted(nan3, 3, &med, &mad), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_median_mad_sorted(nan3, 0, &med, &mad), PW_ERR_INSUFFICIENT);
	const double unsorted[] = {5.0, 1.0, 3.0, 0.0, 9.0};
	cr_assert_eq(pw_stats_median_mad_sorted(unsorted, 5, &med, &mad), PW_ERR_INVALID);
}

/* scipy.stats.median_abs_deviation(x, scale='normal'); numpy mean and var(ddof=1). */
Test(stats_descriptive, mad_mean_var_match_scipy)
{
	double w[30], med, mad, mean, var;
	cr_assert_eq(pw_stats_median_mad(ODD, N_OF(ODD), w, &med, &mad), PW_OK);
	NEAR(med, 4.4, 1e-15);
	NEAR(mad, 3.1134646588617634, 1e-13);
	cr_assert_eq(pw_stats_median_mad(EVEN, N_OF(EVEN), w, &med, &mad), PW_OK);
	NEAR(mad, 2.223903327758403, 1e-13);
	cr_assert_eq(pw_stats_median_mad(BASE30, N_OF(BASE30), w, &med, &mad), PW_OK);
	NEAR(mad, 0.2965204437011141, 1e-10);

	cr_assert_eq(pw_stats_mean_var(ODD, N_OF(ODD), &mean, &var), PW_OK);
	NEAR(mean, 4.290909090909091, 1e-14);
	NEAR(var, 7.324909090909091, 1e-13);
	cr_assert_eq(pw_stats_mean_var(EVEN, N_OF(EVEN), &mean, &var), PW_OK);
	NEAR(mean, 13.2, 1e-14);
	NEAR(var, 37.46944444444444, 1e-13);
	cr_assert_eq(pw_stats_mean_var(BASE30, N_OF(BASE30), &mean, &var), PW_OK);
	NEAR(mean, 100.0513333333333, 1e-14);
	NEAR(var, 0.06794298850574708, 1e-10);
}

Test(stats_descriptive, edges_n0_n1_n2_constant)
{
	double w[4], v, med, mad, mean, var;
	const double one[] = {7.5}, two[] = {1.0, 4.0}, flat[] = {3.0, 3.0, 3.0, 3.0};
	cr_assert_eq(pw_stats_median(one, 0, w, &v), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_quantile(one, 0, 0.5, w, &v), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_median_mad(one, 0, w, &med, &mad), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_median(one, 1, w, &v), PW_OK);
	cr_assert_eq(v, 7.5);
	cr_assert_eq(pw_stats_median_mad(one, 1, w, &med, &mad), PW_OK);
	cr_assert_eq(med, 7.5);
	cr_assert_eq(mad, 0.0);
	cr_assert_eq(pw_stats_mean_var(one, 1, &mean, &var), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_median(two, 2, w, &v), PW_OK);
	cr_assert_eq(v, 2.5);
	cr_assert_eq(pw_stats_quantile(two, 2, 0.25, w, &v), PW_OK);
	cr_assert_eq(v, 1.75);
	cr_assert_eq(pw_stats_median_mad(two, 2, w, &med, &mad), PW_OK);
	NEAR(mad, 1.5 * PW_MAD_NORMAL_SCALE, 1e-15);
	cr_assert_eq(pw_stats_mean_var(two, 2, &mean, &var), PW_OK);
	cr_assert_eq(mean, 2.5);
	cr_assert_eq(var, 4.5);
	cr_assert_eq(pw_stats_median_mad(flat, 4, w, &med, &mad), PW_OK);
	cr_assert_eq(med, 3.0);
	cr_assert_eq(mad, 0.0);
	cr_assert_eq(pw_stats_mean_var(flat, 4, &mean, &var), PW_OK);
	cr_assert_eq(var, 0.0);
	cr_assert_eq(pw_stats_quantile(two, 2, 1.5, w, &v), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_quantile(two, 2, NAN, w, &v), PW_ERR_INVALID);
}

Test(stats_descriptive, non_finite_rejected)
{
	double w[3], v, a, b;
	const double bad[3][3] = {{1.0, NAN, 2.0}, {1.0, INFINITY, 2.0}, {-INFINITY, 1.0, 2.0}};
	for (int i = 0; i < 3; i++) {
		cr_assert(!pw_stats_all_finite(bad[i], 3));
		cr_assert_eq(pw_stats_median(bad[i], 3, w, &v), PW_ERR_INVALID);
		cr_assert_eq(pw_stats_quantile(bad[i], 3, 0.5, w, &v), PW_ERR_INVALID);
		cr_assert_eq(pw_stats_median_mad(bad[i], 3, w, &a, &b), PW_ERR_INVALID);
		cr_assert_eq(pw_stats_mean_var(bad[i], 3, &a, &b), PW_ERR_INVALID);
	}
	cr_assert(pw_stats_all_finite(ODD, N_OF(ODD)));
}

/* ---- Mann–Whitney ----------------------------------------------------------- */

static void check_mwu(const double *x, size_t n1, const double *y, size_t n2, pw_mwu_method m,
                      pw_alternative alt, double u, double p, double rel, bool exact)
{
	pw_mwu_result r;
	double *w = malloc(2 * (n1 + n2) * sizeof *w);
	cr_assert(w);
	cr_assert_eq(pw_stats_mann_whitney(x, n1, y, n2, alt, m, w, &r), PW_OK);
	NEAR(r.u, u, 0.0);
	NEAR(r.p, p, rel);
	cr_assert_eq(r.exact, exact);
	/* The same through the NULL-workspace path and the no-allocation variant. */
	pw_mwu_result r2, r3;
	cr_assert_eq(pw_stats_mann_whitney(x, n1, y, n2, alt, m, NULL, &r2), PW_OK);
	cr_assert_eq(r2.p, r.p);
	size_t len = pw_stats_mann_whitney_work_len(n1, n2);
	double *w3 = malloc(len * sizeof *w3);
	cr_assert(w3);
	cr_assert_eq(pw_stats_mann_whitney_w(x, n1, y, n2, alt, m, w3, len, &r3), PW_OK);
	cr_assert_eq(r3.p, r.p);
	cr_assert_eq(pw_stats_mann_whitney_w(x, n1, y, n2, alt, m, w3, 2 * (n1 + n2) - 1, &r3),
	             PW_ERR_INVALID);
	free(w3);
	free(w);
}

/*
 * scipy's mannwhitneyu docs example (males vs females ages): "U1 = 17, p =
 * 0.1111" exact two-sided; one-sided values from gen_stats_reference.py.
 */
Test(stats_mwu, scipy_docs_example_exact)
{
	check_mwu(MALES, 5, FEMALES, 4, PW_MWU_EXACT, PW_ALT_TWO_SIDED, 17.0, 0.1111111111111111,
	          1e-13, true);
	check_mwu(MALES, 5, FEMALES, 4, PW_MWU_EXACT, PW_ALT_LESS, 17.0, 0.9682539682539684, 1e-13,
	          true);
	check_mwu(MALES, 5, FEMALES, 4, PW_MWU_EXACT, PW_ALT_GREATER, 17.0, 0.05555555555555555,
	          1e-13, true);
	check_mwu(MALES, 5, FEMALES, 4, PW_MWU_AUTO, PW_ALT_TWO_SIDED, 17.0, 0.1111111111111111,
	          1e-13, true);
}

/* scipy.stats.mannwhitneyu(X7, Y6, method='exact' | 'asymptotic'), gen_stats_reference.py. */
Test(stats_mwu, exact_and_asymptotic_no_ties)
{
	check_mwu(X7, 7, Y6, 6, PW_MWU_EXACT, PW_ALT_TWO_SIDED, 31.0, 0.18065268065268064, 1e-13,
	          true);
	check_mwu(X7, 7, Y6, 6, PW_MWU_EXACT, PW_ALT_LESS, 31.0, 0.9312354312354313, 1e-13, true);
	check_mwu(X7, 7, Y6, 6, PW_MWU_EXACT, PW_ALT_GREATER, 31.0, 0.09032634032634032, 1e-13,
	          true);
	check_mwu(X7, 7, Y6, 6, PW_MWU_NORMAL, PW_ALT_TWO_SIDED, 31.0, 0.17473582321524717, 1e-12,
	          false);
	check_mwu(X7, 7, Y6, 6, PW_MWU_NORMAL, PW_ALT_LESS, 31.0, 0.9331927987311419, 1e-12, false);
	check_mwu(X7, 7, Y6, 6, PW_MWU_NORMAL, PW_ALT_GREATER, 31.0, 0.08736791160762358, 1e-12,
	          false);
}

/* Tie correction: scipy.stats.mannwhitneyu(TIES_X, TIES_Y, method='asymptotic'). */
Test(stats_mwu, ties_use_normal_with_tie_correction)
{
	check_mwu(TIES_X, 8, TIES_Y, 9, PW_MWU_AUTO, PW_ALT_TWO_SIDED, 13.5, 0.03175895714806371,
	          1e-12, false);
	check_mwu(TIES_X, 8, TIES_Y, 9, PW_MWU_NORMAL, PW_ALT_LESS, 13.5, 0.015879478574031856,
	          1e-12, false);
	check_mwu(TIES_X, 8, TIES_Y, 9, PW_MWU_NORMAL, PW_ALT_GREATER, 13.5, 0.9876172774448116,
	          1e-12, false);
	pw_mwu_result r;
	cr_assert_eq(pw_stats_mann_whitney(TIES_X, 8, TIES_Y, 9, PW_ALT_TWO_SIDED, PW_MWU_EXACT,
	                                   NULL, &r),
	             PW_ERR_INVALID);
}

/* The release-gate shape, 5 vs 30: scipy.stats.mannwhitneyu(cand, BASE30, method='exact'). */
Test(stats_mwu, gate_shape_exact)
{
	check_mwu(CAND5_SLOW, 5, BASE30, 30, PW_MWU_AUTO, PW_ALT_TWO_SIDED, 150.0,
	          6.160822100101037e-06, 1e-12, true);
	check_mwu(CAND5_SLOW, 5, BASE30, 30, PW_MWU_EXACT, PW_ALT_LESS, 150.0, 1.0, 1e-15, true);
	check_mwu(CAND5_SLOW, 5, BASE30, 30, PW_MWU_EXACT, PW_ALT_GREATER, 150.0,
	          3.0804110500505186e-06, 1e-12, true);
	check_mwu(CAND5_SAME, 5, BASE30, 30, PW_MWU_AUTO, PW_ALT_TWO_SIDED, 76.0,
	          0.9817947706942015, 1e-12, true);
	check_mwu(CAND5_SAME, 5, BASE30, 30, PW_MWU_EXACT, PW_ALT_LESS, 76.0, 0.5272986027255477,
	          1e-12, true);
	check_mwu(CAND5_SAME, 5, BASE30, 30, PW_MWU_EXACT, PW_ALT_GREATER, 76.0,
	          0.49089738534710076, 1e-12, true);
}

/* 20 vs 25 without ties: exact under our AUTO (scipy's auto would not); method='exact'. */
Test(stats_mwu, mid_sized_exact)
{
	check_mwu(MID_X, 20, MID_Y, 25, PW_MWU_AUTO, PW_ALT_TWO_SIDED, 203.0, 0.2913193721534998,
	          1e-12, true);
	check_mwu(MID_X, 20, MID_Y, 25, PW_MWU_EXACT, PW_ALT_LESS, 203.0, 0.1456596860767499,
	          1e-12, true);
	check_mwu(MID_X, 20, MID_Y, 25, PW_MWU_EXACT, PW_ALT_GREATER, 203.0, 0.8595066286977695,
	          1e-12, true);
}

/* Past PW_MWU_EXACT_MAX AUTO goes normal: scipy.stats.mannwhitneyu(BIG_X, BIG_Y, 'asymptotic'). */
Test(stats_mwu, large_samples_normal)
{
	check_mwu(BIG_X, 60, BIG_Y, 55, PW_MWU_AUTO, PW_ALT_TWO_SIDED, 1284.5,
	          0.040985147100868084, 1e-11, false);
	check_mwu(BIG_X, 60, BIG_Y, 55, PW_MWU_AUTO, PW_ALT_LESS, 1284.5, 0.020492573550434042,
	          1e-11, false);
	check_mwu(BIG_X, 60, BIG_Y, 55, PW_MWU_AUTO, PW_ALT_GREATER, 1284.5, 0.979782597051539,
	          1e-12, false);
	pw_mwu_result r;
	cr_assert_eq(pw_stats_mann_whitney(BIG_X, 60, BIG_Y, 55, PW_ALT_TWO_SIDED, PW_MWU_EXACT,
	                                   NULL, &r),
	             PW_ERR_INVALID);
}

/* The exact distribution sums to one and is symmetric: P(U >= k) + P(U >= mn − k + 1) = 1. */
Test(stats_mwu, exact_largest_sizes_consistent)
{
	enum { N = 50 };
	double x[N], y[N];
	for (int i = 0; i < N; i++) {
		x[i] = 2.0 * i;         /* x below y except the interleaving: */
		y[i] = 2.0 * i + 1.0; /* U1 = Σ_i i = N(N−1)/2 */
	}
	pw_mwu_result g, l;
	cr_assert_eq(pw_stats_mann_whitney(x, N, y, N, PW_ALT_GREATER, PW_MWU_AUTO, NULL, &g), PW_OK);
	cr_assert_eq(pw_stats_mann_whitney(x, N, y, N, PW_ALT_LESS, PW_MWU_AUTO, NULL, &l), PW_OK);
	cr_assert(g.exact && l.exact);
	cr_assert_eq(g.u, N * (N - 1) / 2.0);
	/* P(U >= u) + P(U <= u) = 1 + P(U = u) > 1 and both near ½ at the centre. */
	cr_assert(g.p + l.p > 1.0 && g.p + l.p < 1.1, "%g + %g", g.p, l.p);
	/* Against the normal approximation, which is good at n = 50. */
	pw_mwu_result a;
	cr_assert_eq(pw_stats_mann_whitney(x, N, y, N, PW_ALT_GREATER, PW_MWU_NORMAL, NULL, &a),
	             PW_OK);
	NEAR(g.p, a.p, 1e-3);
}

Test(stats_mwu, edges)
{
	pw_mwu_result r;
	const double a[] = {1.0}, b[] = {2.0}, five3[] = {5, 5, 5}, five2[] = {5, 5};
	const double nan3[] = {1.0, NAN, 3.0}, inf1[] = {INFINITY};
	cr_assert_eq(pw_stats_mann_whitney(a, 0, b, 1, PW_ALT_TWO_SIDED, PW_MWU_AUTO, NULL, &r),
	             PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_mann_whitney(a, 1, b, 0, PW_ALT_TWO_SIDED, PW_MWU_AUTO, NULL, &r),
	             PW_ERR_INSUFFICIENT);
	/* n = 1 each: U = 0 and the exact two-sided p is 2·P(U >= 1) = 1 (scipy: 1.0). */
	cr_assert_eq(pw_stats_mann_whitney(a, 1, b, 1, PW_ALT_TWO_SIDED, PW_MWU_AUTO, NULL, &r),
	             PW_OK);
	cr_assert_eq(r.u, 0.0);
	cr_assert_eq(r.p, 1.0);
	cr_assert_eq(pw_stats_mann_whitney(a, 1, b, 1, PW_ALT_LESS, PW_MWU_AUTO, NULL, &r), PW_OK);
	cr_assert_eq(r.p, 0.5);
	/* All ties: scipy.stats.mannwhitneyu([5,5,5], [5,5], method='asymptotic') -> U1 3.0, p 1.0. */
	cr_assert_eq(pw_stats_mann_whitney(five3, 3, five2, 2, PW_ALT_TWO_SIDED, PW_MWU_AUTO, NULL,
	                                   &r),
	             PW_OK);
	cr_assert_eq(r.u, 3.0);
	cr_assert_eq(r.p, 1.0);
	cr_assert(!r.exact);
	cr_assert_eq(pw_stats_mann_whitney(nan3, 3, b, 1, PW_ALT_TWO_SIDED, PW_MWU_AUTO, NULL, &r),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_stats_mann_whitney(b, 1, inf1, 1, PW_ALT_TWO_SIDED, PW_MWU_AUTO, NULL, &r),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_stats_mann_whitney(a, 1, b, 1, (pw_alternative)7, PW_MWU_AUTO, NULL, &r),
	             PW_ERR_INVALID);
}

/* ---- Welch ------------------------------------------------------------------ */

/* scipy.stats.ttest_ind(x, y, equal_var=False, alternative=...), gen_stats_reference.py. */
Test(stats_welch, matches_scipy)
{
	struct {
		const double *x, *y;
		size_t n1, n2;
		double t, df, p[3];
	} c[] = {
		{X7, Y6, 7, 6, 1.7897627209366682, 10.945203947630693,
		 {0.10116301161618069, 0.9494184941919097, 0.05058150580809034}},
		{CAND5_SLOW, BASE30, 5, 30, 27.585382668784575, 5.954955229669688,
		 {1.642638477127295e-07, 0.9999999178680762, 8.213192385636474e-08}},
		{TIES_X, TIES_Y, 8, 9, -2.6079429180474816, 14.818510553350144,
		 {0.019932205896275753, 0.009966102948137876, 0.9900338970518621}},
	};
	const pw_alternative alts[3] = {PW_ALT_TWO_SIDED, PW_ALT_LESS, PW_ALT_GREATER};
	for (size_t i = 0; i < N_OF(c); i++)
		for (int a = 0; a < 3; a++) {
			pw_welch_result r;
			cr_assert_eq(pw_stats_welch(c[i].x, c[i].n1, c[i].y, c[i].n2, alts[a], &r), PW_OK);
			NEAR(r.t, c[i].t, 1e-10);
			NEAR(r.df, c[i].df, 1e-10);
			NEAR(r.p, c[i].p[a], 1e-11);
		}
}

Test(stats_welch, edges)
{
	pw_welch_result r;
	const double one[] = {1.0}, flat_a[] = {2, 2, 2}, flat_b[] = {3, 3}, nan2[] = {NAN, 1};
	cr_assert_eq(pw_stats_welch(one, 1, X7, 7, PW_ALT_TWO_SIDED, &r), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_welch(X7, 7, one, 0, PW_ALT_TWO_SIDED, &r), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_welch(flat_a, 3, flat_b, 2, PW_ALT_TWO_SIDED, &r), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_welch(nan2, 2, X7, 7, PW_ALT_TWO_SIDED, &r), PW_ERR_INVALID);
	/* One constant sample is fine: the other's variance carries the test. */
	cr_assert_eq(pw_stats_welch(flat_a, 3, X7, 7, PW_ALT_TWO_SIDED, &r), PW_OK);
	NEAR(r.df, 6.0, 1e-12);
}

/* ---- Hodges–Lehmann ---------------------------------------------------------- */

/* Shift = numpy median of y_j − x_i; interval from the brute-force exact U cdf (the script). */
Test(stats_hl, shift_and_moses_interval)
{
	pw_hl_result r;
	double w[42];
	cr_assert_eq(pw_stats_hodges_lehmann(X7, 7, Y6, 6, 0.95, w, &r), PW_OK);
	NEAR(r.shift, -0.7070000000000001, 1e-14);
	NEAR(r.lo, -1.2320000000000002, 1e-14);
	NEAR(r.hi, 0.3699999999999999, 1e-14);
	NEAR(r.level, 0.965034965034965, 1e-13);
	cr_assert_eq(pw_stats_hodges_lehmann(MALES, 5, FEMALES, 4, 0.90, NULL, &r), PW_OK);
	NEAR(r.shift, -7.0, 0.0);
	NEAR(r.lo, -13.0, 0.0);
	NEAR(r.hi, 1.0, 0.0);
	NEAR(r.level, 0.9365079365079365, 1e-13);
	/* 99% is not attainable with 5 and 4 points: [min, max] and the level it reaches. */
	cr_assert_eq(pw_stats_hodges_lehmann(MALES, 5, FEMALES, 4, 0.99, NULL, &r), PW_OK);
	NEAR(r.lo, -18.0, 0.0);
	NEAR(r.hi, 4.0, 0.0);
	NEAR(r.level, 0.9841269841269842, 1e-13);
}

Test(stats_hl, large_uses_normal_interval)
{
	pw_hl_result r;
	cr_assert_eq(pw_stats_hodges_lehmann(BIG_X, 60, BIG_Y, 55, 0.95, NULL, &r), PW_OK);
	cr_assert(r.lo < r.shift && r.shift < r.hi);
	cr_assert(r.lo > 0.0, "BIG_Y is shifted up; two-sided MWU p = 0.041 so 0 is outside");
	NEAR(r.level, 0.95, 2e-3);
}

Test(stats_hl, edges)
{
	pw_hl_result r;
	const double a[] = {1.0}, b[] = {4.0}, bad[] = {INFINITY};
	cr_assert_eq(pw_stats_hodges_lehmann(a, 0, b, 1, 0.95, NULL, &r), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_hodges_lehmann(a, 1, bad, 1, 0.95, NULL, &r), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_hodges_lehmann(a, 1, b, 1, 1.0, NULL, &r), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_hodges_lehmann(a, 1, b, 1, 0.95, NULL, &r), PW_OK);
	cr_assert_eq(r.shift, 3.0);
	cr_assert_eq(r.lo, 3.0);
	cr_assert_eq(r.hi, 3.0);
	cr_assert_eq(r.level, 0.0);
}

/* ---- Benjamini–Hochberg ------------------------------------------------------ */

/*
 * Benjamini & Hochberg (1995) §4.2: 15 p-values, at q = 0.05 the four smallest
 * are rejected. q-values: scipy 1.11's false_discovery_control algorithm (not in
 * 1.10), cross-checked by the script against the O(n²) definition.
 */
Test(stats_bh, benjamini_hochberg_1995_example)
{
	const double p[] = {0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
	                    0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000};
	const double want[] = {0.0015, 0.003, 0.0095, 0.035625, 0.0603, 0.06385714285714286,
	                       0.06385714285714286, 0.0645, 0.07650000000000001, 0.486,
	                       0.5811818181818181, 0.7148749999999999, 0.7532307692307693,
	                       0.8132142857142857, 1.0};
	double q[15];
	size_t w[15];
	cr_assert_eq(pw_stats_bh_qvalues(p, 15, w, q), PW_OK);
	int rejected = 0;
	for (int i = 0; i < 15; i++) {
		NEAR(q[i], want[i], 1e-14);
		rejected += q[i] <= 0.05;
	}
	cr_assert_eq(rejected, 4);
}

Test(stats_bh, input_order_monotone_capped)
{
	const double p[] = {0.04, 0.001, 0.5, 0.03, 0.2, 0.03, 0.9, 0.01};
	const double want[] = {0.064, 0.008, 0.5714285714285714, 0.06, 0.26666666666666666, 0.06,
	                       0.9, 0.04};
	double q[8];
	cr_assert_eq(pw_stats_bh_qvalues(p, 8, NULL, q), PW_OK);
	for (int i = 0; i < 8; i++) {
		NEAR(q[i], want[i], 1e-14);
		cr_assert(q[i] >= p[i] && q[i] <= 1.0);
		for (int j = 0; j < 8; j++)
			if (p[i] <= p[j])
				cr_assert(q[i] <= q[j]);
	}
	const double big[] = {0.9, 0.95, 1.0};
	cr_assert_eq(pw_stats_bh_qvalues(big, 3, NULL, q), PW_OK);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(q[i], 1.0);
}

Test(stats_bh, edges)
{
	double q[2];
	const double bad1[] = {0.5, NAN}, bad2[] = {-0.1, 0.5}, bad3[] = {0.5, 1.5}, one[] = {0.2};
	cr_assert_eq(pw_stats_bh_qvalues(NULL, 0, NULL, NULL), PW_OK);
	cr_assert_eq(pw_stats_bh_qvalues(one, 1, NULL, q), PW_OK);
	cr_assert_eq(q[0], 0.2);
	cr_assert_eq(pw_stats_bh_qvalues(bad1, 2, NULL, q), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_bh_qvalues(bad2, 2, NULL, q), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_bh_qvalues(bad3, 2, NULL, q), PW_ERR_INVALID);
}

/* ---- Power -------------------------------------------------------------------- */

/*
 * Normal: scipy.stats.norm.ppf in the §4.5 formula (σ=0.4, Δ=1 gives the seed's
 * "n ≈ 3.4"). Exact: scipy.stats.nct (Boost) + scipy.optimize.brentq; the roots
 * agree to ~2e-10 (our two integration methods agree with each other to 1e-14,
 * so the slack is on the reference's side), hence 1e-9.
 */
Test(stats_power, n_per_arm)
{
	struct {
		double s, d, a, pw, normal, exact;
	} c[] = {
		{0.4, 1.0, 0.05, 0.9, 3.3623753796609988, 4.574783684924592},
		{2.0, 1.0, 0.05, 0.9, 84.05938449152495, 85.03128413706112},
		{0.4, 3.0, 0.05, 0.9, 0.37359726440677754, 2.0},
		{1.0, 1.0, 0.01, 0.8, 23.35793634734836, 25.066708078463165},
	};
	for (size_t i = 0; i < N_OF(c); i++) {
		double n;
		cr_assert_eq(pw_stats_power_n(c[i].s, c[i].d, c[i].a, c[i].pw, false, &n), PW_OK);
		NEAR(n, c[i].normal, 1e-12);
		cr_assert_eq(pw_stats_power_n(c[i].s, c[i].d, c[i].a, c[i].pw, true, &n), PW_OK);
		NEAR(n, c[i].exact, 1e-9);
	}
}

Test(stats_power, mde_and_power)
{
	struct {
		double s;
		size_t n;
		double a, pw, normal, exact;
	} c[] = {
		{0.4, 5, 0.05, 0.9, 0.8200457767296896, 0.9391804504817538},
		{2.0, 6, 0.05, 0.9, 3.742979750847466, 4.161251209810142},
		{1.0, 30, 0.05, 0.8, 0.7233661928488266, 0.7356210693021933},
	};
	for (size_t i = 0; i < N_OF(c); i++) {
		double m;
		cr_assert_eq(pw_stats_power_mde(c[i].s, c[i].n, c[i].a, c[i].pw, false, &m), PW_OK);
		NEAR(m, c[i].normal, 1e-12);
		cr_assert_eq(pw_stats_power_mde(c[i].s, c[i].n, c[i].a, c[i].pw, true, &m), PW_OK);
		NEAR(m, c[i].exact, 1e-9);
	}
	/* scipy: nct.sf(c, 18, nc) + nct.cdf(−c, 18, nc) for d = 1, n = 10 (agrees to 1e-14). */
	double pw;
	cr_assert_eq(pw_stats_power_t(1.0, 1.0, 10.0, 0.05, &pw), PW_OK);
	NEAR(pw, 0.562006646586178, 1e-11);
}

/*
 * The repeats a series needs (§4.5), the function the gate, the baseliner and
 * the planner share. Against the seed: n ≈ 21·(σ/Δ)² (3.36, 0.373, 5.25, 84.0)
 * within the seed's rounding of 21.01 to 21; against scipy:
 * 2·(norm.ppf(0.975) + norm.ppf(0.9))²·(σ/Δ)² = 21.014846122881238·(σ/Δ)²,
 * rounded up, floored at 5 (the rank test's floor):
 *   σ 0.4  MDE 1: 3.3623753796609988 → 5     σ 0.4  MDE 3: 0.37359726440677754 → 5
 *   σ 2    MDE 4: 5.2537115307203095 → 6     σ 2    MDE 1: 84.05938449152495  → 85
 *   σ 0.487 MDE 1: 4.98407004011762  → 5     σ 0.489 MDE 1: 5.0250910197494845 → 6
 *   σ 2.2  MDE 4: 6.356990952171575  → 7     σ 1.6  MDE 4: 3.3623753796609988 → 5
 * (n = 5 holds up to σ = 0.48778% at MDE 1%, n = 6 up to σ = 2.1373% at MDE 4%).
 */
Test(stats_power, required_n)
{
	struct {
		double s, mde, scipy;
		unsigned n;
	} c[] = {
		{0.4, 1.0, 3.3623753796609988, 5}, {0.4, 3.0, 0.37359726440677754, 5},
		{2.0, 4.0, 5.2537115307203095, 6}, {2.0, 1.0, 84.05938449152495, 85},
		{0.487, 1.0, 4.98407004011762, 5}, {0.489, 1.0, 5.0250910197494845, 6},
		{2.2, 4.0, 6.356990952171575, 7},  {1.6, 4.0, 3.3623753796609988, 5},
	};
	for (size_t i = 0; i < N_OF(c); i++) {
		unsigned n = 0;
		double real;
		cr_assert_eq(pw_stats_required_n(c[i].s, c[i].mde, PW_POWER_ALPHA, PW_POWER_TARGET,
		                                 PW_POWER_FLOOR_N, &n),
		             PW_OK);
		cr_assert_eq(n, c[i].n, "sigma %g MDE %g: n %u, want %u", c[i].s, c[i].mde, n, c[i].n);
		cr_assert_eq(pw_stats_power_n(c[i].s, c[i].mde, 0.05, 0.9, false, &real), PW_OK);
		NEAR(real, c[i].scipy, 1e-12);
		/* the seed's 21·(σ/Δ)², to its two digits */
		cr_assert(fabs(real - 21.0 * (c[i].s / c[i].mde) * (c[i].s / c[i].mde)) <
		          0.001 * real + 1e-9);
	}
	/* without the floor the formula's own ceiling shows: 4 at the TPU top tier, 1 at the tail */
	unsigned n;
	cr_assert_eq(pw_stats_required_n(0.4, 1.0, 0.05, 0.9, 1, &n), PW_OK);
	cr_assert_eq(n, 4);
	cr_assert_eq(pw_stats_required_n(0.4, 3.0, 0.05, 0.9, 1, &n), PW_OK);
	cr_assert_eq(n, 1);
	/* a constant series needs the floor; bad inputs are refused */
	cr_assert_eq(pw_stats_required_n(0.0, 1.0, 0.05, 0.9, 5, &n), PW_OK);
	cr_assert_eq(n, 5);
	cr_assert_eq(pw_stats_required_n(-0.1, 1.0, 0.05, 0.9, 5, &n), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_required_n(NAN, 1.0, 0.05, 0.9, 5, &n), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_required_n(0.4, 0.0, 0.05, 0.9, 5, &n), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_required_n(0.4, INFINITY, 0.05, 0.9, 5, &n), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_required_n(0.4, 1.0, 1.0, 0.9, 5, &n), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_required_n(0.4, 1.0, 0.05, 0.9, 0, &n), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_required_n(400.0, 1.0, 0.05, 0.9, 5, &n), PW_ERR_INVALID,
	             "3.4 million runs is a defect, not a repeat count");
	/* the MDE a series is certified at: GPU-class platforms 4% whatever the tier */
	cr_assert_eq(pw_stats_series_mde(1.0, false, PW_POWER_MDE_GPU_PCT), 1.0);
	cr_assert_eq(pw_stats_series_mde(1.0, true, PW_POWER_MDE_GPU_PCT), 4.0);
	cr_assert_eq(pw_stats_series_mde(3.0, true, PW_POWER_MDE_GPU_PCT), 4.0);
	cr_assert_eq(pw_stats_series_mde(5.0, true, PW_POWER_MDE_GPU_PCT), 5.0);
}

Test(stats_power, edges)
{
	double v;
	cr_assert_eq(pw_stats_power_n(0.0, 1.0, 0.05, 0.9, false, &v), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_power_n(0.4, 0.0, 0.05, 0.9, false, &v), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_power_n(0.4, NAN, 0.05, 0.9, true, &v), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_power_n(0.4, 1.0, 1.0, 0.9, false, &v), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_power_n(0.4, 1.0, 0.05, 1.0, false, &v), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_power_n(INFINITY, 1.0, 0.05, 0.9, false, &v), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_power_mde(0.4, 0, 0.05, 0.9, false, &v), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_power_mde(0.4, 1, 0.05, 0.9, true, &v), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_power_mde(0.4, 1, 0.05, 0.9, false, &v), PW_OK);
	cr_assert_eq(pw_stats_power_t(1.0, 1.0, 1.0, 0.05, &v), PW_ERR_INSUFFICIENT);
	/* Round trip: the MDE at the n found is the Δ asked for. */
	double n, m;
	cr_assert_eq(pw_stats_power_n(2.0, 4.0, 0.05, 0.9, false, &n), PW_OK);
	cr_assert_eq(pw_stats_power_mde(2.0, (size_t)ceil(n), 0.05, 0.9, false, &m), PW_OK);
	cr_assert(m <= 4.0 && m > 3.0, "mde %g", m);
}

/* ---- The two-sample verdict ---------------------------------------------------- */

/*
 * BASE30 vs CAND5_SLOW: numpy medians 100.05 / 103.12 (Δ = 3.068%), MAD_n
 * 0.2965 (σ = 0.296%), mannwhitneyu(cand, base, method='exact') p = 6.16e-6.
 */
Test(stats_compare, clear_regression)
{
	pw_compare_result r;
	double w[2048];
	cr_assert_geq(N_OF(w), pw_stats_compare_work_len(30, 5));
	cr_assert_eq(pw_stats_compare(BASE30, 30, CAND5_SLOW, 5, NULL, w, &r), PW_OK);
	cr_assert_eq(r.verdict, PW_COMPARE_REGRESSED);
	NEAR(r.median_base, 100.05000000000001, 1e-15);
	NEAR(r.median_cand, 103.12, 1e-15);
	NEAR(r.delta_pct, 3.0684657671164346, 1e-12);
	NEAR(r.sigma_pct, 0.2963722575723279, 1e-10);
	NEAR(r.two_sigma_pct, 2 * 0.2963722575723279, 1e-10);
	/* numpy: median of the 150 differences c_j − b_i = 3.07, / median(b) = 3.06847%. */
	NEAR(r.effect_pct, 3.0684657671164417, 1e-9);
	NEAR(r.practical_pct, PW_COMPARE_PRACTICAL_FRAC * 1.0, 0.0);
	NEAR(r.noise_floor_pct, 2 * 0.2963722575723279 * sqrt(1.0 / 30 + 1.0 / 5), 1e-10);
	NEAR(r.threshold_pct, 0.7, 1e-15);
	NEAR(r.p, 6.160822100101037e-06, 1e-12);
	cr_assert(r.effect_filter_passed);
	cr_assert(r.mwu.exact);
	cr_assert(r.welch_ok);
	NEAR(r.welch.p, 1.642638477127295e-07, 1e-11);
	cr_assert(r.hl.lo <= r.hl.shift && r.hl.shift <= r.hl.hi && r.hl.lo > 2.0);
	cr_assert_str_eq(pw_compare_verdict_name(r.verdict), "REGRESSED");
	/* The caller's workspace and the internal one give the same answer. */
	pw_compare_result r2;
	cr_assert_eq(pw_stats_compare(BASE30, 30, CAND5_SLOW, 5, NULL, NULL, &r2), PW_OK);
	cr_assert_eq(r2.p, r.p);
	cr_assert_eq(r2.hl.lo, r.hl.lo);
	cr_assert_eq(r2.hl.hi, r.hl.hi);
	/* HL interval as pw_stats_hodges_lehmann gives it on its own. */
	pw_hl_result hl;
	cr_assert_eq(pw_stats_hodges_lehmann(BASE30, 30, CAND5_SLOW, 5, 0.95, NULL, &hl), PW_OK);
	cr_assert_eq(hl.lo, r.hl.lo);
	cr_assert_eq(hl.hi, r.hl.hi);
	cr_assert_eq(hl.level, r.hl.level);

	/* The same data read as throughput: higher is better, so it is an improvement. */
	pw_compare_opts o;
	pw_compare_opts_init(&o);
	o.direction = PW_COMPARE_HIGHER_IS_BETTER;
	cr_assert_eq(pw_stats_compare(BASE30, 30, CAND5_SLOW, 5, &o, NULL, &r), PW_OK);
	cr_assert_eq(r.verdict, PW_COMPARE_IMPROVED);
	/* An MDE whose practical threshold (0.7 × 4.5 = 3.15%) is above the 3.07%
	 * change: significant, but filtered out. */
	o.direction = PW_COMPARE_LOWER_IS_BETTER;
	o.mde_pct = 4.5;
	cr_assert_eq(pw_stats_compare(BASE30, 30, CAND5_SLOW, 5, &o, NULL, &r), PW_OK);
	cr_assert_eq(r.verdict, PW_COMPARE_UNCHANGED);
	cr_assert(!r.effect_filter_passed);
	cr_assert(r.p < 0.05);
}

/* BASE30 vs CAND5_SAME: Δ = 0.020% (numpy), mannwhitneyu exact p = 0.98179. */
Test(stats_compare, clear_no_change)
{
	pw_compare_result r;
	cr_assert_eq(pw_stats_compare(BASE30, 30, CAND5_SAME, 5, NULL, NULL, &r), PW_OK);
	cr_assert_eq(r.verdict, PW_COMPARE_UNCHANGED);
	NEAR(r.delta_pct, 0.019990004997483064, 1e-9);
	NEAR(r.p, 0.9817947706942015, 1e-12);
	cr_assert(!r.effect_filter_passed);
	cr_assert_str_eq(pw_compare_verdict_name(r.verdict), "UNCHANGED");
}

/*
 * The noise arm of the filter: a noisy baseline raises the bar above the
 * practical threshold. scipy: median_abs_deviation(base, scale='normal') /
 * median × 100 = 4.45099% (σ), so the floor is 2σ√(1/20 + 1/20) = 2.81505%;
 * the HL effect is 2.49763% and mannwhitneyu(cand, base, method='exact')
 * .pvalue = 0.0061450:
 * significant, but inside the noise floor.
 */
Test(stats_compare, noise_floor_filter)
{
	double base[20], cand[20];
	for (int i = 0; i < 20; i++) {
		base[i] = 100.0 + (i % 2 ? 3.0 : -3.0) + 0.01 * i;
		cand[i] = 102.5 + (i % 2 ? 3.0 : -3.0) + 0.01 * i;
	}
	pw_compare_result r;
	cr_assert_eq(pw_stats_compare(base, 20, cand, 20, NULL, NULL, &r), PW_OK);
	NEAR(r.sigma_pct, 4.45099122494564, 1e-9);
	NEAR(r.noise_floor_pct, 2.8150540232502177, 1e-9);
	NEAR(r.threshold_pct, r.noise_floor_pct, 0.0);
	NEAR(r.effect_pct, 2.497627254108597, 1e-9);
	NEAR(r.p, 0.006144955649235766, 1e-9);
	cr_assert(!r.effect_filter_passed);
	cr_assert_eq(r.verdict, PW_COMPARE_UNCHANGED);
	/* With the floor off the practical threshold (0.7%) decides: REGRESSED. */
	pw_compare_opts o;
	pw_compare_opts_init(&o);
	o.noise_k = 0.0;
	cr_assert_eq(pw_stats_compare(base, 20, cand, 20, &o, NULL, &r), PW_OK);
	cr_assert_eq(r.verdict, PW_COMPARE_REGRESSED);
	/* An explicit practical threshold wins over the MDE-derived one. */
	o.practical_pct = 2.6;
	cr_assert_eq(pw_stats_compare(base, 20, cand, 20, &o, NULL, &r), PW_OK);
	NEAR(r.threshold_pct, 2.6, 0.0);
	cr_assert_eq(r.verdict, PW_COMPARE_UNCHANGED);
	o.practical_pct = -1.0;
	cr_assert_eq(pw_stats_compare(base, 20, cand, 20, &o, NULL, &r), PW_ERR_INVALID);
}

/*
 * The power figure the filter's 0.7 buys (PW_COMPARE_FILTER_RULE, docs/statistics.md
 * §6). tests/reference/filter_power.py, scipy 1.10 (mannwhitneyu exact) and numpy
 * (HL = median of cand_j − base_i, MAD_n), 40,000 draws a point, numpy seed 7, at
 * the seed's σ = 0.4%, 30 baseline against 5 candidate runs, MDE 1%, α = 0.05:
 *   fraction 0.7 (shipped): fires 0.9304 at a true +1.0% (the MDE), 0.0219 at +0.3%
 *   fraction 1.0 (a filter at the MDE itself): 0.5020 at +1.0%, 0.0002 at +0.3%
 * (normal approximation of the filter alone: Φ(0.3/0.1977) = 0.9354 and
 * Φ(0/0.1977) = 0.5). pw_stats_compare over 10,000 draws of its own generator
 * must agree within binomial noise: the difference of two estimates has sd
 * √(p(1−p)(1/10,000 + 1/40,000)) ≤ 0.0056, so 5 sd is 0.028 at worst (0.5),
 * 0.0143 at 0.93 and 0.0083 at 0.022.
 */
static double fire_rate(double shift_pct, double frac, uint64_t seed)
{
	enum { N = 10000 };
	double base[30], cand[5];
	double *w = malloc(pw_stats_compare_work_len(30, 5) * sizeof *w);
	cr_assert(w);
	pw_compare_opts o;
	pw_compare_opts_init(&o);
	o.mde_pct = 1.0;
	o.practical_pct = frac * o.mde_pct;
	size_t fired = 0;
	for (int t = 0; t < N; t++) {
		for (int i = 0; i < 30; i++)
			base[i] = 100.0 * (1.0 + 0.004 * noise(&seed));
		for (int i = 0; i < 5; i++)
			cand[i] = 100.0 * (1.0 + shift_pct / 100.0) * (1.0 + 0.004 * noise(&seed));
		pw_compare_result r;
		cr_assert_eq(pw_stats_compare(base, 30, cand, 5, &o, w, &r), PW_OK);
		fired += r.verdict == PW_COMPARE_REGRESSED;
	}
	free(w);
	return (double)fired / N;
}

Test(stats_compare, filter_power, .timeout = 120)
{
	double at_mde = fire_rate(1.0, PW_COMPARE_PRACTICAL_FRAC, 11);
	double wiggle = fire_rate(0.3, PW_COMPARE_PRACTICAL_FRAC, 12);
	double at_mde_old = fire_rate(1.0, 1.0, 13);
	cr_assert(fabs(at_mde - 0.9304) < 0.0143, "power at the MDE %.4f, scipy 0.9304", at_mde);
	cr_assert(fabs(wiggle - 0.0219) < 0.0083, "a +0.3%% wiggle fires %.4f, scipy 0.0219", wiggle);
	cr_assert(fabs(at_mde_old - 0.5020) < 0.028, "threshold at the MDE: %.4f, scipy 0.5020",
	          at_mde_old);
	/* what 0.7 buys: §4.5's power 0.9 at the MDE, where the MDE itself is a coin toss */
	cr_assert(at_mde >= 0.9 && at_mde_old < 0.55);
	printf("filter power at sigma 0.4%%, 30 x 5, MDE 1%%: %.4f at +1.0%% (0.7*MDE), "
	       "%.4f at +0.3%%, %.4f at +1.0%% with the threshold at the MDE\n",
	       at_mde, wiggle, at_mde_old);
}

/* The report's words are the rule's (PW_COMPARE_FILTER_RULE). */
Test(stats_compare, filter_text)
{
	char b[160];
	pw_compare_filter_text(b, sizeof b, "effect", 8.2134, 0.7, 0.7, 2.0, 0.3694);
	cr_assert_str_eq(b, "effect=+8.21% > max(0.7*MDE=0.70%, 2*SE=0.37%)");
	pw_compare_filter_text(b, sizeof b, "excess", -0.52, 0.7, 0.7, 2.0, 0.3694);
	cr_assert_str_eq(b, "excess=-0.52% <= max(0.7*MDE=0.70%, 2*SE=0.37%)");
	cr_assert(strstr(PW_COMPARE_FILTER_RULE, "max(0.7*MDE, 2*SE)"));
	/* the defaults are the numbers the rule's words carry */
	cr_assert_eq(PW_COMPARE_PRACTICAL_FRAC, 0.7);
	cr_assert_eq(PW_COMPARE_NOISE_K, 2.0);
}

/* A workspace sized for the largest pair serves every smaller one (the gate sizes it once). */
Test(stats_compare, work_len_monotone)
{
	for (size_t a = 1; a <= 70; a += 3)
		for (size_t b = 1; b <= 70; b += 3) {
			cr_assert_geq(pw_stats_compare_work_len(a + 3, b), pw_stats_compare_work_len(a, b));
			cr_assert_geq(pw_stats_compare_work_len(a, b + 3), pw_stats_compare_work_len(a, b));
			cr_assert_geq(pw_stats_mann_whitney_work_len(a + 3, b),
			              pw_stats_mann_whitney_work_len(a, b));
		}
	/* 60 × 55 needs no exact table itself, yet its work must hold 50 × 50's. */
	size_t len = pw_stats_compare_work_len(60, 55);
	double *w = malloc(len * sizeof *w);
	cr_assert(w);
	pw_compare_result r, r2;
	cr_assert_eq(pw_stats_compare(BIG_X, 50, BIG_Y, 50, NULL, w, &r), PW_OK);
	cr_assert_eq(pw_stats_compare(BIG_X, 50, BIG_Y, 50, NULL, NULL, &r2), PW_OK);
	cr_assert_eq(r.p, r2.p);
	cr_assert_eq(r.hl.lo, r2.hl.lo);
	pw_mwu_result m;
	cr_assert_eq(pw_stats_mann_whitney_w(MID_X, 20, MID_Y, 25, PW_ALT_TWO_SIDED, PW_MWU_EXACT, w,
	                                     pw_stats_mann_whitney_work_len(60, 55), &m),
	             PW_OK);
	NEAR(m.p, 0.2913193721534998, 1e-12);
	free(w);
}

Test(stats_compare, edges)
{
	pw_compare_result r;
	const double zero[] = {0.0, 0.0, 0.0}, one[] = {1.0}, two[] = {1.0, 1.1}, bad[] = {NAN};
	const double flat_a[] = {5, 5, 5, 5}, flat_b[] = {6, 6, 6};
	cr_assert_eq(pw_stats_compare(zero, 3, one, 1, NULL, NULL, &r), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_compare(one, 0, one, 1, NULL, NULL, &r), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_compare(one, 1, one, 0, NULL, NULL, &r), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_compare(one, 1, bad, 1, NULL, NULL, &r), PW_ERR_INVALID);
	/* n = 1 each: runs, and cannot be significant (exact two-sided p = 1). */
	cr_assert_eq(pw_stats_compare(one, 1, two, 1, NULL, NULL, &r), PW_OK);
	cr_assert_eq(r.verdict, PW_COMPARE_UNCHANGED);
	cr_assert(!r.welch_ok && isnan(r.welch.p));
	/* n = 2 vs 2 still cannot reach p < 0.05 (min exact two-sided p = 1/3). */
	cr_assert_eq(pw_stats_compare(two, 2, (const double[]){9.0, 9.5}, 2, NULL, NULL, &r), PW_OK);
	NEAR(r.p, 1.0 / 3.0, 1e-14);
	cr_assert_eq(r.verdict, PW_COMPARE_UNCHANGED);
	/* Two constant samples: no Welch, MWU on the tie-corrected normal; a 20% step. */
	cr_assert_eq(pw_stats_compare(flat_a, 4, flat_b, 3, NULL, NULL, &r), PW_OK);
	cr_assert(!r.welch_ok);
	NEAR(r.delta_pct, 20.0, 1e-14);
	cr_assert_eq(r.mad_base, 0.0);
	cr_assert(r.effect_filter_passed);
	pw_compare_opts o;
	pw_compare_opts_init(&o);
	o.alpha = 0.0;
	cr_assert_eq(pw_stats_compare(one, 1, two, 1, &o, NULL, &r), PW_ERR_INVALID);
	pw_compare_opts_init(&o);
	o.mde_pct = NAN;
	cr_assert_eq(pw_stats_compare(one, 1, two, 1, &o, NULL, &r), PW_ERR_INVALID);
}

/* ---- Noise floor (§4.2) ------------------------------------------------- */

/* BUILDS of gen_stats_reference.py: five builds of one series, the fourth of
 * one run (left out), the fifth with a slow host's run (10.31). */
static const double NF_VALUES[] = {10.02, 9.97, 10.05, 10.41, 10.38, 9.61, 9.66, 9.58,
                                   9.70, 9.63, 10.9, 10.12, 10.31, 10.08, 10.11};
static const int64_t NF_GROUPS[] = {1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 4, 5, 5, 5, 5};

Test(stats_noise_floor, matches_numpy)
{
	/* gen_stats_reference.py "noise floor": scale 1 / (sqrt(2) * norm.ppf(0.75)) =
	 * 1.0483580825075305; BUILDS: sigma_rel 0.005337258069860515, level
	 * 10.067499999999999, n_values 14, n_groups 4, n_pairs 20 */
	size_t n = sizeof NF_VALUES / sizeof NF_VALUES[0];
	size_t wl = pw_stats_noise_floor_work_len(NF_GROUPS, n);
	cr_assert_eq(wl, 20 + 5 + 1, "the pairs and the largest group");
	double work[32];
	pw_noise_floor f;
	cr_assert_eq(pw_stats_noise_floor(NF_VALUES, NF_GROUPS, n, work, &f), PW_OK);
	cr_assert_float_eq(f.sigma_rel, 0.005337258069860515, 1e-15, "%.17g", f.sigma_rel);
	cr_assert_float_eq(f.level, 10.067499999999999, 1e-12);
	cr_assert_eq(f.n_values, 14);
	cr_assert_eq(f.n_groups, 4);
	cr_assert_eq(f.n_pairs, 20);
}

/* Normal noise of relative σ 0.4% over 60 builds of 6 runs at levels 8..12:
 * the software level of each build cancels, σ̂ lands near 0.4%. An infra
 * hiccup in one run of every tenth build (10σ, 1.7% of the runs, §4's ~1%
 * rate) barely moves it; a standard deviation of the same pairs would. */
Test(stats_noise_floor, consistent_for_normal_noise_and_blind_to_levels)
{
	enum { B = 60, M = 6 };
	double v[B * M];
	int64_t g[B * M];
	uint64_t rng = 20261205;
	for (int b = 0; b < B; b++) {
		double level = 8.0 + 4.0 * (double)((b * 7919) % 100) / 100.0;
		for (int i = 0; i < M; i++) {
			v[b * M + i] = level * (1.0 + 0.004 * noise(&rng));
			g[b * M + i] = b;
		}
	}
	double *work = malloc(pw_stats_noise_floor_work_len(g, B * M) * sizeof *work);
	pw_noise_floor f;
	cr_assert_eq(pw_stats_noise_floor(v, g, B * M, work, &f), PW_OK);
	cr_assert_lt(fabs(f.sigma_rel - 0.004), 0.0006, "sigma_rel %.5f", f.sigma_rel);
	cr_assert_eq(f.n_pairs, (size_t)B * M * (M - 1) / 2);
	/* a slow host: one run of every tenth build 10σ out */
	for (int b = 0; b < B; b += 10)
		v[b * M] *= 1.04;
	pw_noise_floor f2;
	cr_assert_eq(pw_stats_noise_floor(v, g, B * M, work, &f2), PW_OK);
	cr_assert_lt(f2.sigma_rel - f.sigma_rel, 0.0003, "outliers: sigma_rel %.5f, without %.5f",
	             f2.sigma_rel, f.sigma_rel);
	free(work);
}

Test(stats_noise_floor, edges)
{
	double work[16];
	pw_noise_floor f;
	/* nothing, or builds of one run only */
	cr_assert_eq(pw_stats_noise_floor(NULL, NULL, 0, NULL, &f), PW_ERR_INSUFFICIENT);
	const double one[] = {1.0, 2.0, 3.0};
	const int64_t sep[] = {1, 2, 3};
	cr_assert_eq(pw_stats_noise_floor(one, sep, 3, work, &f), PW_ERR_INSUFFICIENT);
	/* all ties: a floor of 0 */
	const double ties[] = {5.0, 5.0, 5.0, 5.0};
	const int64_t same[] = {7, 7, 7, 7};
	cr_assert_eq(pw_stats_noise_floor(ties, same, 4, work, &f), PW_OK);
	cr_assert_eq(f.sigma_rel, 0.0);
	cr_assert_eq(f.level, 5.0);
	/* two runs: |a − b| / mean · scale */
	const double two[] = {10.0, 10.2};
	cr_assert_eq(pw_stats_noise_floor(two, same, 2, work, &f), PW_OK);
	cr_assert_float_eq(f.sigma_rel, PW_SHAMOS_NORMAL_SCALE * 0.2 / 10.1, 1e-15);
	/* NaN, ±inf, a zero or negative level, groups out of order */
	const double nan_v[] = {1.0, NAN};
	cr_assert_eq(pw_stats_noise_floor(nan_v, same, 2, work, &f), PW_ERR_INVALID);
	const double inf_v[] = {INFINITY, 1.0};
	cr_assert_eq(pw_stats_noise_floor(inf_v, same, 2, work, &f), PW_ERR_INVALID);
	const double zero[] = {0.0, 0.0};
	cr_assert_eq(pw_stats_noise_floor(zero, same, 2, work, &f), PW_ERR_INVALID);
	const double neg[] = {-1.0, -1.2};
	cr_assert_eq(pw_stats_noise_floor(neg, same, 2, work, &f), PW_ERR_INVALID);
	const double four[] = {1.0, 1.1, 1.0, 1.1};
	const int64_t back[] = {2, 2, 1, 1};
	cr_assert_eq(pw_stats_noise_floor(four, back, 4, work, &f), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_noise_floor(one, sep, 3, work, NULL), PW_ERR_INVALID);
}
