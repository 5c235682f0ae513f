/*
 * test_early_shift.c: the prediction t test (common/pw_stats.c
 * pw_stats_prediction_t) against scipy, and the early shift rule built on it
 * (common/pw_changepoint.c pw_cp_early_shift).
 *
 * Reference values: tests/reference/gen_stats_reference.py ("prediction t"
 * block), i.e. scipy.stats.t.sf / t.cdf of t = (mean(y) − mean(x)) /
 * (sd(x, ddof=1)·sqrt(1/m + 1/k)) with df = m − 1, and numpy.median /
 * scipy.stats.median_abs_deviation(scale='normal') of BASE30.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "pw_changepoint.h"
#include "pw_stats.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define NEAR_REL(got, want, rel)                                                           \
	cr_assert(fabs((got) - (want)) <= (rel) * fabs(want), "%s = %.17g, want %.17g", #got, \
	          (double)(got), (double)(want))

static const double BASE30[] = {
	100.12, 99.87,  100.43, 99.65,  100.08, 100.31, 99.92, 100.55, 99.71,  100.19,
	99.96,  100.27, 99.83,  100.02, 100.38, 99.77,  100.14, 99.59, 100.47, 99.99,
	100.23, 99.88,  100.06, 100.35, 99.74,  100.11, 99.91,  100.29, 99.68, 100.04};
static const double CAND3_STEP[] = {108.31, 108.02, 108.44};
static const double CAND2_NEAR[] = {100.41, 100.22};
static const double X7[] = {1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55};
static const double Y1_LOW[] = {0.61};

Test(prediction_t, matches_scipy)
{
	struct {
		const double *x, *y;
		size_t m, k;
		double t, df, p[3]; /* two-sided, less, greater */
	} c[] = {
		{BASE30, CAND3_STEP, 30, 3, 51.98621403282348, 29,
		 {3.5153265773780894e-30, 1.0, 1.7576632886890447e-30}},
		{BASE30, CAND2_NEAR, 30, 2, 1.3851076949792736, 29,
		 {0.17658282098348452, 0.9117085895082577, 0.08829141049174226}},
		{X7, Y1_LOW, 7, 1, -1.638817870652888, 6,
		 {0.1523636134122959, 0.07618180670614795, 0.9238181932938521}},
	};
	const pw_alternative alts[3] = {PW_ALT_TWO_SIDED, PW_ALT_LESS, PW_ALT_GREATER};
	for (size_t i = 0; i < N_OF(c); i++)
		for (int a = 0; a < 3; a++) {
			pw_pred_result r;
			cr_assert_eq(pw_stats_prediction_t(c[i].x, c[i].m, c[i].y, c[i].k, alts[a], &r), PW_OK);
			NEAR_REL(r.t, c[i].t, 1e-12);
			cr_assert_eq(r.df, c[i].df);
			NEAR_REL(r.p, c[i].p[a], 1e-9);
		}
}

Test(prediction_t, edges)
{
	pw_pred_result r;
	const double flat[] = {5, 5, 5, 5};
	const double one[] = {6};
	const double nan1[] = {NAN};
	cr_assert_eq(pw_stats_prediction_t(flat, 4, one, 1, PW_ALT_GREATER, &r), PW_ERR_INSUFFICIENT);
	cr_assert_eq(pw_stats_prediction_t(BASE30, 1, one, 1, PW_ALT_GREATER, &r), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_prediction_t(BASE30, 30, one, 0, PW_ALT_GREATER, &r), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_prediction_t(BASE30, 30, nan1, 1, PW_ALT_GREATER, &r), PW_ERR_INVALID);
	cr_assert_eq(pw_stats_prediction_t(BASE30, 30, one, 1, (pw_alternative)9, &r), PW_ERR_INVALID);
}

Test(early_shift, three_shifted_nightlies_fire_with_the_reference_level_and_scale)
{
	pw_cp_early_params p;
	pw_cp_early_params_default(&p);
	cr_assert_eq(p.k, 3);
	pw_cp_early e;
	cr_assert_eq(pw_cp_early_shift(BASE30, 30, CAND3_STEP, 3, &p, &e), PW_OK);
	cr_assert(e.found);
	cr_assert_eq(e.side, 1);
	NEAR_REL(e.level, 100.05000000000001, 1e-14);
	NEAR_REL(e.sigma, 0.2965204437011141, 1e-12);
	NEAR_REL(e.threshold, 4.0 * 0.2965204437011141, 1e-12);
	NEAR_REL(e.after, 108.31, 1e-14);
	NEAR_REL(e.t, 51.98621403282348, 1e-12);
	NEAR_REL(e.p, 1.7576632886890447e-30, 1e-9);

	/* lower is the other side */
	const double down[] = {91.9, 92.1, 92.0};
	cr_assert_eq(pw_cp_early_shift(BASE30, 30, down, 3, &p, &e), PW_OK);
	cr_assert(e.found);
	cr_assert_eq(e.side, -1);
}

Test(early_shift, one_point_back_in_the_band_or_mixed_sides_do_not_fire)
{
	pw_cp_early_params p;
	pw_cp_early_params_default(&p);
	pw_cp_early e;
	/* two infra outliers around a normal nightly: the rule needs all k shifted */
	const double spikes[] = {108.3, 100.1, 108.4};
	cr_assert_eq(pw_cp_early_shift(BASE30, 30, spikes, 3, &p, &e), PW_OK);
	cr_assert_not(e.found);
	const double mixed[] = {108.3, 92.0, 108.4};
	cr_assert_eq(pw_cp_early_shift(BASE30, 30, mixed, 3, &p, &e), PW_OK);
	cr_assert_not(e.found);
	/* +0.95%: past min_effect but inside 4 MAD_n (1.19): not early; PELT's to judge */
	const double small[] = {101.0, 101.03, 101.01};
	cr_assert_eq(pw_cp_early_shift(BASE30, 30, small, 3, &p, &e), PW_OK);
	cr_assert_not(e.found);
	NEAR_REL(e.threshold, 1.1860817748044564, 1e-12);
}

Test(early_shift, alpha_decides_when_the_distance_rule_passes)
{
	pw_cp_early_params p;
	pw_cp_early_params_default(&p);
	p.noise_k = 0.0;
	p.min_effect = 0.0;
	pw_cp_early e;
	/* CAND2_NEAR's two points are both above the median: distance passes,
	 * but the prediction t p (scipy 0.0883) is far above alpha */
	p.k = 2;
	cr_assert_eq(pw_cp_early_shift(BASE30, 30, CAND2_NEAR, 2, &p, &e), PW_OK);
	cr_assert_not(e.found);
	NEAR_REL(e.p, 0.08829141049174226, 1e-9);
	p.alpha = 0.1;
	cr_assert_eq(pw_cp_early_shift(BASE30, 30, CAND2_NEAR, 2, &p, &e), PW_OK);
	cr_assert(e.found);
}

Test(early_shift, short_reference_and_bad_input)
{
	pw_cp_early_params p;
	pw_cp_early_params_default(&p);
	pw_cp_early e;
	cr_assert_eq(pw_cp_early_shift(BASE30, 9, CAND3_STEP, 3, &p, &e), PW_OK);
	cr_assert_not(e.found);
	cr_assert_eq(pw_cp_early_shift(BASE30, 30, CAND3_STEP, 2, &p, &e), PW_ERR_INVALID);
	const double bad[] = {1, NAN, 2};
	cr_assert_eq(pw_cp_early_shift(BASE30, 30, bad, 3, &p, &e), PW_ERR_INVALID);
	/* a constant reference has nothing to test against */
	double flat[12];
	for (size_t i = 0; i < 12; i++)
		flat[i] = 4.0;
	const double up[] = {5, 5, 5};
	cr_assert_eq(pw_cp_early_shift(flat, 12, up, 3, &p, &e), PW_OK);
	cr_assert_not(e.found);
}
