/*
 * test_drift.c: pw_drift tells a sustained trend from a staircase (issue 17):
 * a flat series with a +10% drift over 300 points is one drift (start 0,
 * total ≈ 10%, rate ≈ 0.033% a point); three real steps are no drift; a flat
 * series is none; a drift that starts late is found with its start; edges.
 * Series are drawn with a fixed splitmix64/Box–Muller generator.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "pw_drift.h"

static uint64_t rng_state;

static double gauss(void)
{
	double u[2];
	for (int k = 0; k < 2; k++) {
		uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		u[k] = ((double)(z >> 11) + 0.5) * 0x1.0p-53;
	}
	return sqrt(-2.0 * log(u[0])) * cos(2.0 * M_PI * u[1]);
}

#define N 300

/* level 100, σ = sigma %, +drift_pct linearly from `from` to the end, steps of step_pct at N/4, N/2, 3N/4. */
static void make(double *x, double sigma, double drift_pct, size_t from, double step_pct)
{
	for (size_t i = 0; i < N; i++) {
		double lvl = 100.0;
		if (i >= from)
			lvl += drift_pct * (double)(i - from) / (double)(N - from);
		for (size_t s = 1; s <= 3; s++)
			if (i >= s * N / 4)
				lvl += step_pct;
		x[i] = lvl + sigma * gauss();
	}
}

Test(drift, ten_percent_over_300_is_one_drift)
{
	double x[N];
	int found = 0;
	for (int t = 0; t < 100; t++) {
		rng_state = 1000 + (uint64_t)t;
		make(x, 0.5, 10.0, 0, 0.0);
		pw_drift d;
		cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
		if (!d.found)
			continue;
		found++;
		cr_assert_lt(d.start, 30, "start %zu", d.start);
		cr_assert(d.total_pct > 8.5 && d.total_pct < 11.5, "total %g", d.total_pct);
		cr_assert(d.rate_pct > 0.028 && d.rate_pct < 0.038, "rate %g", d.rate_pct);
	}
	cr_assert_geq(found, 98, "found in %d of 100", found);
}

Test(drift, staircase_of_three_steps_is_not_a_drift)
{
	double x[N];
	for (int t = 0; t < 100; t++) {
		rng_state = 2000 + (uint64_t)t;
		make(x, 0.5, 0.0, 0, 3.0);
		pw_drift d;
		cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
		cr_assert(!d.trend, "trial %d: %zu of %zu segments sloped", t, d.sloped, d.segments);
	}
}

Test(drift, flat_is_not_a_drift)
{
	double x[N];
	for (int t = 0; t < 200; t++) {
		rng_state = 3000 + (uint64_t)t;
		make(x, 1.0, 0.0, 0, 0.0);
		pw_drift d;
		cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
		cr_assert(!d.found, "trial %d: total %g%%", t, d.total_pct);
	}
}

Test(drift, late_start_is_located)
{
	double x[N];
	rng_state = 4000;
	make(x, 0.3, 8.0, 150, 0.0);
	pw_drift d;
	cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
	cr_assert(d.found);
	cr_assert(d.start >= 130 && d.start <= 170, "start %zu", d.start);
	cr_assert(d.total_pct > 6.5 && d.total_pct < 9.5, "total %g", d.total_pct);
}

Test(drift, edges)
{
	pw_drift d;
	double x[N];
	for (size_t i = 0; i < N; i++)
		x[i] = 5.0;
	cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
	cr_assert(!d.found, "constant");
	cr_assert_eq(pw_drift_detect(x, 10, NULL, 0, NULL, &d), PW_OK);
	cr_assert(!d.found, "too short");
	cr_assert_eq(pw_drift_detect(x, 0, NULL, 0, NULL, &d), PW_OK);
	x[7] = NAN;
	cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_ERR_INVALID);
	for (size_t i = 0; i < N; i++)
		x[i] = 100.0 + 0.01 * (double)i; /* a noiseless line: a drift of 3% */
	cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
	cr_assert(d.found);
	cr_assert_float_eq(d.rate, 0.01, 1e-9);
}

/* scipy.stats.theilslopes(y).slope: 0.15999999999999998 and 0.0 (scipy 1.10). */
Test(drift, theil_sen_matches_scipy)
{
	const double y[] = {3.1, 2.9, 3.4, 3.3, 3.8, 3.6, 4.1, 3.9, 4.4, 4.6, 4.2};
	const double spike[] = {1.0, 1.0, 1.0, 5.0, 1.0, 1.0, 1.0};
	double b;
	cr_assert_eq(pw_drift_theil_sen(y, 11, &b), PW_OK);
	cr_assert_float_eq(b, 0.15999999999999998, 1e-12);
	cr_assert_eq(pw_drift_theil_sen(spike, 7, &b), PW_OK);
	cr_assert_float_eq(b, 0.0, 1e-15);
	cr_assert_eq(pw_drift_theil_sen(y, 1, &b), PW_ERR_INVALID);
}
