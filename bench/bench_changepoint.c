/*
 * bench_changepoint.c: the watcher's nightly changepoint load, measured.
 *
 * 4,000 series × 1,000 points (half flat, half with one to three planted
 * steps) through the default detector (robust PELT + level-shift filter),
 * printed as series/s; then, on a subset, the straightforward E-divisive
 * (every split's energy statistic from all pairs, O(n²) per split) and the
 * fast one, checking that they agree with each other and that the default
 * detector finds the same changepoints, and printing the time ratios measured
 * in this run; then the cost of appending one point to a 1,000-point stream.
 * Usage: bench_changepoint [SUBSET_SERIES [PERMUTATIONS]] (defaults 2, 19).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_rng.h"
#include "pw_changepoint.h"

#define NSERIES 4000
#define NPOINTS 1000
#define MAXCP 64

typedef struct planted {
	size_t n;
	size_t at[3];
} planted;

/* Series k: odd ones get 1–3 steps of ±2–5% in 0.5–2% noise, even ones are flat. */
static void make_series(size_t k, double *x, planted *pl)
{
	uint64_t s = 1000 + k;
	double sigma = 0.5 + 1.5 * unit(&s);
	pl->n = 0;
	if (k % 2) {
		pl->n = 1 + (size_t)(unit(&s) * 3.0);
		for (size_t j = 0; j < pl->n; j++)
			pl->at[j] = (j + 1) * NPOINTS / (pl->n + 1) + (size_t)(unit(&s) * 40.0) - 20;
	}
	double level = 100.0;
	size_t j = 0;
	for (size_t i = 0; i < NPOINTS; i++) {
		if (j < pl->n && i == pl->at[j]) {
			double mag = (2.0 + 3.0 * unit(&s)) * (unit(&s) < 0.5 ? -1.0 : 1.0);
			level *= 1.0 + mag / 100.0;
			j++;
		}
		x[i] = level * (1.0 + sigma / 100.0 * gauss(&s));
	}
}

static size_t near_count(const pw_changepoint *a, size_t ka, const size_t *b, size_t kb,
                         size_t tol)
{
	size_t hit = 0;
	for (size_t i = 0; i < kb; i++)
		for (size_t j = 0; j < ka; j++)
			if ((a[j].index > b[i] ? a[j].index - b[i] : b[i] - a[j].index) <= tol) {
				hit++;
				break;
			}
	return hit;
}

static void print_cps(const char *what, const pw_changepoint *c, size_t k)
{
	printf("    %-22s", what);
	for (size_t j = 0; j < k; j++)
		printf(" %zu(%+.1f%%)", c[j].index, 100.0 * c[j].rel_change);
	printf("\n");
}

int main(int argc, char **argv)
{
	size_t subset = argc > 1 ? (size_t)atol(argv[1]) : 2;
	unsigned perms = argc > 2 ? (unsigned)atol(argv[2]) : 19;
	int rc = 1;
	size_t ns = 500; /* streams for the append measurement */
	char err[256] = "";
	double *all = malloc((size_t)NSERIES * NPOINTS * sizeof *all);
	planted *pl = malloc(NSERIES * sizeof *pl);
	pw_cp_detector *det = NULL, *edet = NULL;
	pw_cp_stream **streams = NULL;
	if (!all || !pl)
		goto out;
	for (size_t k = 0; k < NSERIES; k++)
		make_series(k, all + k * NPOINTS, &pl[k]);

	/* 1. The default detector over the whole nightly load. */
	if (pw_cp_detector_new(NULL, NPOINTS, &det, err, sizeof err) != PW_OK)
		goto out;
	pw_changepoint cps[MAXCP];
	size_t found = 0, planted_total = 0, planted_hit = 0, flat_fp = 0;
	double t0 = now();
	for (size_t k = 0; k < NSERIES; k++) {
		size_t kc;
		if (pw_cp_detect(det, all + k * NPOINTS, NPOINTS, cps, MAXCP, &kc, err, sizeof err) !=
		    PW_OK)
			goto out;
		found += kc;
		planted_total += pl[k].n;
		planted_hit += near_count(cps, kc < MAXCP ? kc : MAXCP, pl[k].at, pl[k].n, 10);
		if (pl[k].n == 0 && kc > 0)
			flat_fp++;
	}
	double t_default = now() - t0;
	printf("default detector (robust PELT, grid 4, level-shift filter)\n");
	printf("  %d series x %d points: %.3f s, %.0f series/s, %.1f us/series\n", NSERIES, NPOINTS,
	       t_default, NSERIES / t_default, 1e6 * t_default / NSERIES);
	printf("  planted steps found (+-10): %zu/%zu; flat series with any changepoint: %zu/%d; "
	       "changepoints reported: %zu\n",
	       planted_hit, planted_total, flat_fp, NSERIES / 2, found);

	/* 2. E-divisive, straightforward and fast, on a subset of the stepped series. */
	pw_cp_params ep;
	pw_cp_params_default(&ep);
	ep.method = PW_CP_EDIVISIVE;
	ep.permutations = perms;
	ep.perm_alpha = 1.0 / (perms + 1.0) + 1e-12; /* the strictest level these permutations allow */
	ep.seed = 7;
	if (pw_cp_detector_new(&ep, NPOINTS, &edet, err, sizeof err) != PW_OK)
		goto out;
	printf("E-divisive on %zu stepped series, %u permutations each test (subset: the "
	       "straightforward one costs O(n^3) a scan)\n",
	       subset, perms);
	double t_naive = 0.0, t_fast = 0.0, t_def_sub = 0.0;
	size_t same_fast = 0, same_default = 0, same_filtered = 0, compared = 0;
	for (size_t s = 0; s < subset; s++) {
		size_t k = 2 * s + 1;
		const double *x = all + k * NPOINTS;
		pw_changepoint a[MAXCP], b[MAXCP], c[MAXCP];
		size_t ka, kb, kc;
		t0 = now();
		if (pw_cp_edivisive_naive(&ep, x, NPOINTS, a, MAXCP, &ka, err, sizeof err) != PW_OK)
			goto out;
		t_naive += now() - t0;
		t0 = now();
		if (pw_cp_edivisive_raw(edet, x, NPOINTS, b, MAXCP, &kb, err, sizeof err) != PW_OK)
			goto out;
		t_fast += now() - t0;
		t0 = now();
		if (pw_cp_detect(det, x, NPOINTS, c, MAXCP, &kc, err, sizeof err) != PW_OK)
			goto out;
		t_def_sub += now() - t0;
		pw_changepoint f[MAXCP];
		size_t kf;
		if (pw_cp_detect(edet, x, NPOINTS, f, MAXCP, &kf, err, sizeof err) != PW_OK)
			goto out;
		bool fast_eq = ka == kb;
		for (size_t j = 0; fast_eq && j < ka; j++)
			fast_eq = a[j].index == b[j].index;
		size_t idx[MAXCP];
		for (size_t j = 0; j < ka; j++)
			idx[j] = a[j].index;
		bool def_eq = kc == ka && near_count(c, kc, idx, ka, 3) == ka;
		for (size_t j = 0; j < kf; j++)
			idx[j] = f[j].index;
		bool filt_eq = kc == kf && near_count(c, kc, idx, kf, 3) == kf;
		same_fast += fast_eq;
		same_default += def_eq;
		same_filtered += filt_eq;
		compared++;
		printf("  series %zu: planted", k);
		for (size_t j = 0; j < pl[k].n; j++)
			printf(" %zu", pl[k].at[j]);
		printf("\n");
		print_cps("E-divisive naive:", a, ka);
		print_cps("E-divisive fast:", b, kb);
		print_cps("E-divisive + filter:", f, kf);
		print_cps("default detector:", c, kc);
	}
	if (compared) {
		double per_naive = t_naive / compared, per_def = t_def_sub / compared;
		printf("  same changepoints: fast == naive on %zu/%zu; default == naive (+-3) on %zu/%zu; "
		       "default == E-divisive after the level-shift filter (+-3) on %zu/%zu\n",
		       same_fast, compared, same_default, compared, same_filtered, compared);
		printf("  per series: naive E-divisive %.3f s, fast E-divisive %.4f s, default %.1f us\n",
		       per_naive, t_fast / compared, 1e6 * per_def);
		printf("  ratio default vs naive E-divisive: %.0fx (the default's time over the 4,000 "
		       "series: %.0fx); fast vs naive E-divisive: %.1fx\n",
		       per_naive / per_def, per_naive / (t_default / NSERIES), t_naive / t_fast);
		printf("  (with the usual 199 permutations the naive one would run ~%.0fx longer still)\n",
		       199.0 / perms);
	}

	/* 3. Appending one point to a 1,000-point series, as the watcher does nightly. */
	streams = calloc(ns, sizeof *streams);
	if (!streams)
		goto out;
	for (size_t k = 0; k < ns; k++) {
		if (pw_cp_stream_new(NULL, 2 * NPOINTS, &streams[k], err, sizeof err) != PW_OK)
			goto out;
		for (size_t i = 0; i + 1 < NPOINTS; i++)
			if (pw_cp_stream_append(streams[k], all[k * NPOINTS + i], err, sizeof err) != PW_OK)
				goto out;
	}
	t0 = now();
	for (size_t k = 0; k < ns; k++)
		if (pw_cp_stream_append(streams[k], all[k * NPOINTS + NPOINTS - 1], err, sizeof err) !=
		    PW_OK)
			goto out;
	double t_app = (now() - t0) / ns;
	t0 = now();
	for (size_t k = 0; k < ns; k++) {
		size_t kc;
		if (pw_cp_stream_changepoints(streams[k], cps, MAXCP, &kc, err, sizeof err) != PW_OK)
			goto out;
	}
	double t_q = (now() - t0) / ns;
	printf("stream: append the 1,000th point %.2f us; then the changepoints query %.1f us "
	       "(%zu series)\n",
	       1e6 * t_app, 1e6 * t_q, ns);
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "bench_changepoint: failed: %s\n", err);
	if (streams)
		for (size_t k = 0; k < ns; k++)
			pw_cp_stream_free(streams[k]);
	free(streams);
	pw_cp_detector_free(det);
	pw_cp_detector_free(edet);
	free(all);
	free(pl);
	return rc;
}
