/*
 * bench_compare.c: times one release's worth of gate comparisons, 2,160
 * series of 30 baseline runs against 5 candidate runs (§4.4), plus
 * Benjamini–Hochberg over all 2,160 p-values, against a naive reference.
 *
 * The fast path is exactly what the gate runs: pw_stats_compare() from
 * common/pw_stats.c with one workspace reused for every series, then
 * pw_stats_bh_qvalues(). The reference, measured in the same run on the same
 * data, does the same statistics the obvious way: a fresh malloc and qsort
 * per median and MAD, U by comparing all n1·n2 pairs, the HL shift by sorting
 * all differences, BH by qsort of (p, index) pairs. Not run in CI; the target
 * is under 50 ms for the whole release.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_cdf.h>

#include "pw_stats.h"

#define N_SERIES 2160
#define N_BASE 30
#define N_CAND 5
#define REPEATS 7
#define TARGET_MS 50.0

typedef struct bench_data {
	double base[N_SERIES][N_BASE];
	double cand[N_SERIES][N_CAND];
	double p[N_SERIES], q[N_SERIES];
	size_t idx[N_SERIES];
	bool worse[N_SERIES];
} bench_data;

/* Deterministic noise: an LCG, twelve uniforms summed to roughly N(0,1). */
static double noise(uint64_t *s)
{
	double sum = 0.0;
	for (int i = 0; i < 12; i++) {
		*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
		sum += (double)(*s >> 11) / 9007199254740992.0;
	}
	return sum - 6.0;
}

/* σ = 0.4% (TPU, §4.1); one series in 200 carries a real 3% regression. */
static void fill(bench_data *d)
{
	uint64_t s = 20261202;
	for (size_t k = 0; k < N_SERIES; k++) {
		double level = 10.0 + (double)(k % 97);
		double shift = k % 200 == 7 ? 1.03 : 1.0;
		for (size_t i = 0; i < N_BASE; i++)
			d->base[k][i] = level * (1.0 + 0.004 * noise(&s));
		for (size_t i = 0; i < N_CAND; i++)
			d->cand[k][i] = level * shift * (1.0 + 0.004 * noise(&s));
	}
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- The fast path: the library as the gate calls it ---------------------- */

static int run_fast(bench_data *d, double *work, size_t *fired)
{
	pw_compare_result r;
	for (size_t k = 0; k < N_SERIES; k++) {
		if (pw_stats_compare(d->base[k], N_BASE, d->cand[k], N_CAND, NULL, work, &r) != PW_OK)
			return -1;
		d->p[k] = r.p;
		d->worse[k] = r.effect_filter_passed && r.delta_pct > 0.0;
	}
	if (pw_stats_bh_qvalues(d->p, N_SERIES, d->idx, d->q) != PW_OK)
		return -1;
	/* The gate's decision across the release: BH at 5% and the effect filter. */
	size_t n = 0;
	for (size_t k = 0; k < N_SERIES; k++)
		n += d->q[k] < 0.05 && d->worse[k];
	*fired = n;
	return 0;
}

/* ---- The naive reference -------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double naive_median(const double *x, size_t n)
{
	double *c = malloc(n * sizeof *c);
	if (!c)
		abort();
	memcpy(c, x, n * sizeof *c);
	qsort(c, n, sizeof *c, cmp_double);
	double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
	free(c);
	return m;
}

static double naive_mad(const double *x, size_t n, double med)
{
	double *dev = malloc(n * sizeof *dev);
	if (!dev)
		abort();
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(x[i] - med);
	double m = naive_median(dev, n);
	free(dev);
	return PW_MAD_NORMAL_SCALE * m;
}

/* U over all pairs, tie term from a sorted pooled copy, normal p. */
static double naive_mwu_p(const double *x, size_t n1, const double *y, size_t n2)
{
	double u = 0.0;
	for (size_t i = 0; i < n1; i++)
		for (size_t j = 0; j < n2; j++)
			u += x[i] > y[j] ? 1.0 : x[i] == y[j] ? 0.5 : 0.0;
	size_t n = n1 + n2;
	double *pool = malloc(n * sizeof *pool);
	if (!pool)
		abort();
	memcpy(pool, x, n1 * sizeof *pool);
	memcpy(pool + n1, y, n2 * sizeof *pool);
	qsort(pool, n, sizeof *pool, cmp_double);
	double ties = 0.0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && pool[j] == pool[i])
			j++;
		double t = (double)(j - i);
		ties += t * t * t - t;
		i = j;
	}
	free(pool);
	double mn = (double)n1 * (double)n2, nn = (double)n;
	double s = sqrt(mn / 12.0 * ((nn + 1.0) - ties / (nn * (nn - 1.0))));
	double uu = u > mn - u ? u : mn - u;
	double p = 2.0 * gsl_cdf_ugaussian_Q((uu - mn / 2.0 - 0.5) / s);
	return p > 1.0 ? 1.0 : p;
}

static double naive_welch_p(const double *x, size_t n1, const double *y, size_t n2)
{
	double m1 = 0, m2 = 0, v1 = 0, v2 = 0;
	for (size_t i = 0; i < n1; i++)
		m1 += x[i] / (double)n1;
	for (size_t i = 0; i < n2; i++)
		m2 += y[i] / (double)n2;
	for (size_t i = 0; i < n1; i++)
		v1 += (x[i] - m1) * (x[i] - m1) / (double)(n1 - 1);
	for (size_t i = 0; i < n2; i++)
		v2 += (y[i] - m2) * (y[i] - m2) / (double)(n2 - 1);
	double a = v1 / (double)n1, b = v2 / (double)n2;
	double df = (a + b) * (a + b) / (a * a / (double)(n1 - 1) + b * b / (double)(n2 - 1));
	return 2.0 * gsl_cdf_tdist_Q(fabs((m1 - m2) / sqrt(a + b)), df);
}

static double naive_hl(const double *x, size_t n1, const double *y, size_t n2)
{
	double *d = malloc(n1 * n2 * sizeof *d);
	if (!d)
		abort();
	for (size_t i = 0; i < n1; i++)
		for (size_t j = 0; j < n2; j++)
			d[i * n2 + j] = y[j] - x[i];
	double m = naive_median(d, n1 * n2);
	free(d);
	return m;
}

typedef struct p_idx {
	double p;
	size_t i;
} p_idx;

static int cmp_p_idx(const void *a, const void *b)
{
	double x = ((const p_idx *)a)->p, y = ((const p_idx *)b)->p;
	return (x > y) - (x < y);
}

static void naive_bh(const double *p, size_t n, double *q)
{
	p_idx *s = malloc(n * sizeof *s);
	if (!s)
		abort();
	for (size_t i = 0; i < n; i++)
		s[i] = (p_idx){p[i], i};
	qsort(s, n, sizeof *s, cmp_p_idx);
	double run = 1.0;
	for (size_t r = n; r-- > 0;) {
		double v = s[r].p * (double)n / (double)(r + 1);
		run = v < run ? v : run;
		q[s[r].i] = run;
	}
	free(s);
}

static void run_naive(bench_data *d, double *sink)
{
	double acc = 0.0;
	for (size_t k = 0; k < N_SERIES; k++) {
		const double *b = d->base[k], *c = d->cand[k];
		double mb = naive_median(b, N_BASE), mc = naive_median(c, N_CAND);
		double mad = naive_mad(b, N_BASE, mb);
		(void)naive_mad(c, N_CAND, mc);
		d->p[k] = naive_mwu_p(c, N_CAND, b, N_BASE);
		acc += naive_welch_p(c, N_CAND, b, N_BASE) + naive_hl(b, N_BASE, c, N_CAND) + mad;
	}
	naive_bh(d->p, N_SERIES, d->q);
	*sink += acc + d->q[0];
}

static int cmp_ms(const void *a, const void *b)
{
	return cmp_double(a, b);
}

int main(void)
{
	int rc = 1;
	bench_data *d = malloc(sizeof *d);
	double *work = malloc(pw_stats_compare_work_len(N_BASE, N_CAND) * sizeof *work);
	if (!d || !work) {
		fprintf(stderr, "bench_compare: out of memory\n");
		goto free_all;
	}
	fill(d);
	double fast[REPEATS], naive[REPEATS], sink = 0.0;
	size_t fired = 0;
	for (int r = 0; r < REPEATS; r++) {
		double t0 = now_ms();
		if (run_fast(d, work, &fired) != 0) {
			fprintf(stderr, "bench_compare: pw_stats_compare failed\n");
			goto free_all;
		}
		double t1 = now_ms();
		run_naive(d, &sink);
		double t2 = now_ms();
		fast[r] = t1 - t0;
		naive[r] = t2 - t1;
	}
	qsort(fast, REPEATS, sizeof fast[0], cmp_ms);
	qsort(naive, REPEATS, sizeof naive[0], cmp_ms);
	double f = fast[REPEATS / 2], nv = naive[REPEATS / 2];
	printf("bench_compare: %d series (%d base vs %d cand runs) + BH over %d p-values, "
	       "median of %d runs\n",
	       N_SERIES, N_BASE, N_CAND, N_SERIES, REPEATS);
	printf("  pw_stats_compare + pw_stats_bh_qvalues: %.3f ms (%.2f us/series)\n", f,
	       f * 1e3 / N_SERIES);
	printf("  naive reference (malloc+qsort, O(n1*n2) U, normal p only): %.3f ms\n", nv);
	printf("  ratio naive/fast: %.2fx\n", nv / f);
	printf("  regressions fired (BH q < 0.05 and effect filter): %zu, seeded: %d\n", fired,
	       (N_SERIES + 199 - 7) / 200);
	printf("  target < %.0f ms: %s\n", TARGET_MS, f < TARGET_MS ? "met" : "MISSED");
	if (sink == 12345.678)
		printf(" \n"); /* keeps the naive work observable */
	rc = f < TARGET_MS ? 0 : 1;
free_all:
	free(work);
	free(d);
	return rc;
}
