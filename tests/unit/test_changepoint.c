/*
 * test_changepoint.c: unit behaviour and edges of pw_changepoint: tiny and
 * degenerate series, non-finite input, parameters, each method on a plain
 * step, outliers and noise changes, E-divisive's determinism and its agreement
 * with the straightforward version, and the stream against the batch answer.
 * The labeled patterns are in test_labeled_suite.c.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pw_changepoint.h"

/* splitmix64 + Box–Muller, as the labeled suite does */
static double gauss(uint64_t *rng_state)
{
	uint64_t z1 = (*rng_state += 0x9e3779b97f4a7c15ULL);
	z1 = (z1 ^ (z1 >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z1 = (z1 ^ (z1 >> 27)) * 0x94d049bb133111ebULL;
	z1 ^= z1 >> 31;
	uint64_t z2 = (*rng_state += 0x9e3779b97f4a7c15ULL);
	z2 = (z2 ^ (z2 >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z2 = (z2 ^ (z2 >> 27)) * 0x94d049bb133111ebULL;
	z2 ^= z2 >> 31;
	double u1 = ((double)(z1 >> 11) + 0.5) * 0x1.0p-53, u2 = ((double)(z2 >> 11) + 0.5) * 0x1.0p-53;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* n points at level 100 ± sigma, +step from index at (at == n: no step). */
static double *make_series(size_t n, double sigma, size_t at, double step, uint64_t seed)
{
	uint64_t rng = seed;
	double *x = malloc(n * sizeof *x);
	cr_assert_not_null(x);
	for (size_t i = 0; i < n; i++)
		x[i] = 100.0 + (i >= at ? step : 0.0) + sigma * gauss(&rng);
	return x;
}

static size_t detect(const pw_cp_params *p, const double *x, size_t n, pw_changepoint *out,
                     size_t cap)
{
	pw_cp_detector *d = NULL;
	char err[256];
	cr_assert_eq(pw_cp_detector_new(p, n, &d, err, sizeof err), PW_OK, "%s", err);
	size_t k = 99;
	cr_assert_eq(pw_cp_detect(d, x, n, out, cap, &k, err, sizeof err), PW_OK, "%s", err);
	pw_cp_detector_free(d);
	return k;
}

Test(changepoint, tiny_series_have_none)
{
	double x[3] = {1.0, 2.0, 3.0};
	pw_changepoint cp[4];
	cr_assert_eq(detect(NULL, NULL, 0, cp, 4), 0);
	cr_assert_eq(detect(NULL, x, 1, cp, 4), 0);
	cr_assert_eq(detect(NULL, x, 2, cp, 4), 0);
	cr_assert_eq(detect(NULL, x, 3, cp, 4), 0);
}

Test(changepoint, constant_and_ties_have_none)
{
	double x[200];
	for (size_t i = 0; i < 200; i++)
		x[i] = 7.0;
	pw_changepoint cp[4];
	for (int m = 0; m < 3; m++) {
		pw_cp_params p;
		pw_cp_params_default(&p);
		p.method = (pw_cp_method)m;
		p.permutations = 49;
		cr_assert_eq(detect(&p, x, 200, cp, 4), 0, "method %d", m);
	}
	/* Two values only, alternating: ties everywhere, no level change. */
	for (size_t i = 0; i < 200; i++)
		x[i] = (i % 2) ? 10.0 : 11.0;
	cr_assert_eq(detect(NULL, x, 200, cp, 4), 0);
}

Test(changepoint, noiseless_step_is_found)
{
	double x[100];
	for (size_t i = 0; i < 100; i++)
		x[i] = i < 60 ? 10.0 : 20.0;
	pw_changepoint cp[4];
	cr_assert_eq(detect(NULL, x, 100, cp, 4), 1);
	cr_assert_eq(cp[0].index, 60);
	cr_assert_float_eq(cp[0].before, 10.0, 1e-12);
	cr_assert_float_eq(cp[0].after, 20.0, 1e-12);
	cr_assert_float_eq(cp[0].rel_change, 1.0, 1e-12);
}

Test(changepoint, non_finite_rejected)
{
	double x[40];
	for (size_t i = 0; i < 40; i++)
		x[i] = 1.0 + (double)(i % 3);
	pw_cp_detector *d = NULL;
	char err[256];
	cr_assert_eq(pw_cp_detector_new(NULL, 40, &d, err, sizeof err), PW_OK);
	pw_changepoint cp[4];
	size_t k;
	const double bad[] = {NAN, INFINITY, -INFINITY};
	for (size_t b = 0; b < 3; b++) {
		x[17] = bad[b];
		cr_assert_eq(pw_cp_detect(d, x, 40, cp, 4, &k, err, sizeof err), PW_ERR_INVALID);
		cr_assert(strstr(err, "17") != NULL, "the message names the point: %s", err);
	}
	pw_cp_detector_free(d);

	pw_cp_stream *s = NULL;
	cr_assert_eq(pw_cp_stream_new(NULL, 100, &s, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_cp_stream_append(s, 1.0, err, sizeof err), PW_OK);
	cr_assert_eq(pw_cp_stream_append(s, NAN, err, sizeof err), PW_ERR_INVALID);
	size_t n;
	pw_cp_stream_window(s, &n, NULL);
	cr_assert_eq(n, 1, "a rejected point is not appended");
	pw_cp_stream_free(s);
}

Test(changepoint, params_checked)
{
	pw_cp_params p;
	pw_cp_detector *d = NULL;
	char err[256];
	pw_cp_params_default(&p);
	p.min_segment = 1;
	cr_assert_eq(pw_cp_detector_new(&p, 10, &d, err, sizeof err), PW_ERR_INVALID);
	pw_cp_params_default(&p);
	p.penalty = -1.0;
	cr_assert_eq(pw_cp_detector_new(&p, 10, &d, err, sizeof err), PW_ERR_INVALID);
	pw_cp_params_default(&p);
	p.alpha = 0.0;
	cr_assert_eq(pw_cp_detector_new(&p, 10, &d, err, sizeof err), PW_ERR_INVALID);
	pw_cp_params_default(&p);
	p.method = PW_CP_EDIVISIVE;
	pw_cp_stream *s = NULL;
	cr_assert_eq(pw_cp_stream_new(&p, 100, &s, err, sizeof err), PW_ERR_INVALID);
	cr_assert_null(s);
	pw_cp_detector_free(NULL);
	pw_cp_stream_free(NULL);
}

Test(changepoint, every_method_finds_a_step)
{
	double *x = make_series(120, 0.5, 70, 3.0, 11);
	pw_changepoint cp[8];
	for (int m = 0; m < 3; m++) {
		pw_cp_params p;
		pw_cp_params_default(&p);
		p.method = (pw_cp_method)m;
		size_t k = detect(&p, x, 120, cp, 8);
		cr_assert_eq(k, 1, "method %d: %zu changepoints", m, k);
		cr_assert(cp[0].index >= 69 && cp[0].index <= 71, "method %d at %zu", m, cp[0].index);
		cr_assert(cp[0].rel_change > 0.025 && cp[0].rel_change < 0.035);
		cr_assert(cp[0].p <= (m == 2 ? p.perm_alpha : p.alpha));
	}
	free(x);
}

Test(changepoint, robust_pelt_ignores_a_lone_outlier)
{
	double *x = make_series(200, 0.5, 200, 0.0, 12);
	x[100] += 40.0;
	x[101] += 25.0;
	pw_changepoint cp[8];
	cr_assert_eq(detect(NULL, x, 200, cp, 8), 0);
	free(x);
}

Test(changepoint, noise_change_alone_is_not_reported)
{
	double *x = make_series(300, 0.5, 300, 0.0, 13);
	for (size_t i = 150; i < 300; i++)
		x[i] = 100.0 + 4.0 * (x[i] - 100.0); /* same level, four times the noise */
	pw_changepoint cp[8];
	for (int m = 0; m < 3; m++) {
		pw_cp_params p;
		pw_cp_params_default(&p);
		p.method = (pw_cp_method)m;
		p.permutations = 99;
		cr_assert_eq(detect(&p, x, 300, cp, 8), 0, "method %d", m);
	}
	free(x);
}

Test(changepoint, count_beyond_cap)
{
	double x[90];
	for (size_t i = 0; i < 90; i++)
		x[i] = 10.0 * (double)(1 + i / 30);
	pw_changepoint cp[1];
	size_t k = detect(NULL, x, 90, cp, 1);
	cr_assert_eq(k, 2);
	cr_assert_eq(cp[0].index, 30);
}

Test(changepoint, edivisive_deterministic_and_equal_to_naive)
{
	double *x = make_series(80, 1.0, 50, 4.0, 14);
	pw_cp_params p;
	pw_cp_params_default(&p);
	p.method = PW_CP_EDIVISIVE;
	p.permutations = 99;
	p.seed = 42;
	pw_cp_detector *d = NULL;
	char err[256];
	cr_assert_eq(pw_cp_detector_new(&p, 80, &d, err, sizeof err), PW_OK);
	pw_changepoint a[8], b[8], c[8];
	size_t ka, kb, kc;
	cr_assert_eq(pw_cp_edivisive_raw(d, x, 80, a, 8, &ka, err, sizeof err), PW_OK);
	cr_assert_eq(pw_cp_edivisive_raw(d, x, 80, b, 8, &kb, err, sizeof err), PW_OK);
	cr_assert_eq(pw_cp_edivisive_naive(&p, x, 80, c, 8, &kc, err, sizeof err), PW_OK);
	cr_assert_eq(ka, kb);
	cr_assert_eq(ka, kc);
	cr_assert_geq(ka, 1);
	for (size_t j = 0; j < ka; j++) {
		cr_assert_eq(a[j].index, b[j].index);
		cr_assert_eq(a[j].p, b[j].p, "same seed, same p");
		cr_assert_eq(a[j].index, c[j].index, "fast and naive agree");
		cr_assert_eq(a[j].p, c[j].p, "same permutations drawn");
	}
	int found = 0;
	for (size_t j = 0; j < ka; j++)
		found |= a[j].index >= 49 && a[j].index <= 51;
	cr_assert(found, "the step at 50 is among E-divisive's raw changepoints");
	pw_cp_detector_free(d);
	free(x);
}

Test(changepoint, edivisive_flat_series_not_significant)
{
	double *x = make_series(100, 1.0, 100, 0.0, 15);
	pw_cp_params p;
	pw_cp_params_default(&p);
	p.method = PW_CP_EDIVISIVE;
	pw_changepoint cp[8];
	cr_assert_eq(detect(&p, x, 100, cp, 8), 0);
	free(x);
}

static void expect_same(const pw_changepoint *a, size_t ka, const pw_changepoint *b, size_t kb,
                        size_t offset, const char *what)
{
	cr_assert_eq(ka, kb, "%s: %zu vs %zu changepoints", what, ka, kb);
	for (size_t j = 0; j < ka; j++) {
		cr_assert_eq(a[j].index, b[j].index + offset, "%s: changepoint %zu", what, j);
		cr_assert_eq(a[j].before, b[j].before);
		cr_assert_eq(a[j].after, b[j].after);
		cr_assert_eq(a[j].p, b[j].p);
	}
}

Test(changepoint, stream_equals_batch)
{
	size_t n = 400;
	double *x = make_series(n, 0.8, 150, 4.0, 16);
	for (size_t i = 260; i < n; i++)
		x[i] -= 6.0;
	x[200] += 30.0;
	for (int m = 0; m < 2; m++) {
		pw_cp_params p;
		pw_cp_params_default(&p);
		p.method = (pw_cp_method)m;
		pw_cp_stream *s = NULL;
		pw_cp_detector *d = NULL;
		char err[256];
		cr_assert_eq(pw_cp_stream_new(&p, 1000, &s, err, sizeof err), PW_OK, "%s", err);
		cr_assert_eq(pw_cp_detector_new(&p, n, &d, err, sizeof err), PW_OK);
		pw_changepoint a[16], b[16];
		size_t ka, kb;
		for (size_t i = 0; i < n; i++) {
			cr_assert_eq(pw_cp_stream_append(s, x[i], err, sizeof err), PW_OK);
			/* query at many prefixes: queries must not disturb the kept state */
			if (i % 7 == 0 || i + 1 == n || (i > 140 && i < 170)) {
				cr_assert_eq(pw_cp_stream_changepoints(s, a, 16, &ka, err, sizeof err), PW_OK);
				cr_assert_eq(pw_cp_detect(d, x, i + 1, b, 16, &kb, err, sizeof err), PW_OK);
				expect_same(a, ka, b, kb, 0, "prefix");
			}
		}
		cr_assert_eq(ka, 2, "method %d: both steps, not the outlier", m);
		pw_cp_stream_free(s);
		pw_cp_detector_free(d);
	}
	free(x);
}

Test(changepoint, stream_window_is_bounded_and_still_equal)
{
	size_t n = 700, cap = 200;
	double *x = make_series(n, 0.5, 520, 3.0, 17);
	pw_cp_stream *s = NULL;
	pw_cp_detector *d = NULL;
	char err[256];
	cr_assert_eq(pw_cp_stream_new(NULL, cap, &s, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_cp_detector_new(NULL, cap, &d, err, sizeof err), PW_OK);
	pw_changepoint a[16], b[16];
	size_t ka = 0, kb = 0;
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(pw_cp_stream_append(s, x[i], err, sizeof err), PW_OK);
		size_t wn, off;
		const double *w = pw_cp_stream_window(s, &wn, &off);
		cr_assert_leq(wn, cap);
		cr_assert_eq(off + wn, i + 1);
		if (i % 13 == 0 || i + 1 == n) {
			cr_assert_eq(pw_cp_stream_changepoints(s, a, 16, &ka, err, sizeof err), PW_OK);
			cr_assert_eq(pw_cp_detect(d, w, wn, b, 16, &kb, err, sizeof err), PW_OK);
			expect_same(a, ka, b, kb, off, "window");
		}
	}
	cr_assert_eq(ka, 1);
	cr_assert(a[0].index >= 518 && a[0].index <= 522, "absolute index %zu", a[0].index);
	pw_cp_stream_free(s);
	pw_cp_detector_free(d);
	free(x);
}
