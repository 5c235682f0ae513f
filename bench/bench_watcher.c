/*
 * bench_watcher.c: the watcher's per-series logic (services/watcher/watch.h)
 * at the fleet's scale, measured.
 *
 * 1. Full re-scan: 4,000 series × 365 nightlies loaded with
 *    pw_watch_series_load and scanned once — what a restarted watcher does
 *    when it reloads every series (target < 10 s) — against the reference of
 *    one batch pw_cp_detect per series over the same year, measured in the
 *    same run; and, on every fifth series, the same year replayed live (a
 *    scan after every point), scaled.
 * 2. Incremental cost: one more nightly appended to each of the 4,000
 *    year-long series (target < 1 ms per point), against re-running
 *    pw_cp_detect over the whole window for that point (what a watcher
 *    without the stream would pay), on the same series.
 * 3. Memory per series: heap bytes held by one year-long pw_watch_series
 *    (mallinfo2 before/after; meaningless under AddressSanitizer, which says so).
 * 4. Quiet weeks: 4,000 flat series of 35 nightlies at 0.4% noise (§4.5's
 *    TPU sigma), 1% infra outliers: shifts the watcher would emit in the last
 *    week, and how many of them would page if every series were top tier.
 * Half of the year-long series carry one planted +3..8% step; the count found
 * is printed so that a fast but blind detector cannot pass.
 *   bench_watcher [SERIES]   (default 4000)
 */
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_rng.h"
#include "pw_changepoint.h"
#include "watch.h"

#define NPOINTS 365
#define DAY_US (86400LL * 1000000LL)
#define T0_US (1751328000LL * 1000000LL) /* 2025-07-01 */

/* Series k, point i: level 1..10 ms, 0.4% noise, 1% outliers of +5..10 sigma; odd k step at step_at. */
static double value(size_t k, size_t i, size_t step_at, double step, uint64_t *s)
{
	double level = 1.0 + (double)(k % 90) * 0.1;
	if ((k & 1) && i >= step_at)
		level *= 1.0 + step;
	double v = level * (1.0 + 0.004 * gauss(s));
	if (unit(s) < 0.01)
		v += level * 0.004 * (5.0 + 5.0 * unit(s));
	return v;
}

static pw_watch_build build_of(size_t i)
{
	pw_watch_build b;
	memset(&b, 0, sizeof b);
	snprintf(b.build_id, sizeof b.build_id, "xla-nightly-%04zu", i);
	b.cl_number = 7800000 + 38 * (int64_t)i;
	snprintf(b.cl, sizeof b.cl, "cl/%lld", (long long)b.cl_number);
	b.ts_us = T0_US + (int64_t)i * DAY_US;
	return b;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t nseries = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 4000;
	if (nseries < 2)
		nseries = 2;
	char err[256];
	int rc = 1;
	pw_watch_params wp;
	pw_watch_params_default(&wp);
	pw_watch_series **ws = calloc(nseries, sizeof *ws);
	double *x = malloc((NPOINTS + 1) * sizeof *x);
	double *lat = malloc(nseries * sizeof *lat);
	size_t *step_at = malloc(nseries * sizeof *step_at);
	uint64_t *rng = malloc(nseries * sizeof *rng);
	pw_changepoint cps[128];
	pw_watch_event ev[128];
	pw_cp_detector *det = NULL;
	if (!ws || !x || !lat || !step_at || !rng)
		goto out;
	if (pw_cp_detector_new(&wp.cp, NPOINTS + 1, &det, err, sizeof err) != PW_OK)
		goto fail;

	/* 1. full re-scan through the watcher's logic */
	struct mallinfo2 m0 = mallinfo2();
	size_t found = 0, planted = 0, false_flat = 0, events = 0;
	double t0 = now();
	for (size_t k = 0; k < nseries; k++) {
		rng[k] = 7000 + k;
		step_at[k] = 60 + (size_t)(unit(&rng[k]) * 240.0);
		double step = 0.03 + 0.05 * unit(&rng[k]);
		ws[k] = pw_watch_series_new(&wp, true, (k % 20) == 0, err, sizeof err);
		if (!ws[k])
			goto fail;
		bool hit = false;
		for (size_t i = 0; i < NPOINTS; i++) {
			pw_watch_build b = build_of(i);
			if (pw_watch_series_load(ws[k], value(k, i, step_at[k], step, &rng[k]), &b, err,
			                         sizeof err) != PW_OK)
				goto fail;
		}
		size_t nev = 0;
		if (pw_watch_series_scan(ws[k], ev, 128, &nev, err, sizeof err) != PW_OK)
			goto fail;
		events += nev;
		for (size_t j = 0; j < nev; j++) {
			size_t at = ev[j].cp.index;
			if ((k & 1) && at + 3 >= step_at[k] && at <= step_at[k] + 3)
				hit = true;
			else if (!(k & 1))
				false_flat++;
		}
		if (k & 1) {
			planted++;
			found += hit;
		}
	}
	double t_scan = now() - t0;
	struct mallinfo2 m1 = mallinfo2();

	/* reference: one batch detection per series over the same year */
	t0 = now();
	for (size_t k = 0; k < nseries; k++) {
		uint64_t s = 7000 + k;
		size_t at = 60 + (size_t)(unit(&s) * 240.0);
		double step = 0.03 + 0.05 * unit(&s);
		for (size_t i = 0; i < NPOINTS; i++)
			x[i] = value(k, i, at, step, &s);
		size_t count = 0;
		if (pw_cp_detect(det, x, NPOINTS, cps, 128, &count, err, sizeof err) != PW_OK)
			goto fail;
	}
	double t_batch = now() - t0;

	printf("full re-scan (the restart path): %zu series x %d nightlies, pw_watch_series_load "
	       "each, then one pw_watch_series_scan\n", nseries, NPOINTS);
	printf("  %.2f s (target < 10 s), %.1f us per point; %zu shifts emitted\n", t_scan,
	       1e6 * t_scan / (double)(nseries * NPOINTS), events);
	printf("  planted steps found (+-3 nightlies): %zu/%zu; shifts on flat series: %zu (%zu series)\n",
	       found, planted, false_flat, nseries - planted);
	printf("  reference, one batch pw_cp_detect per series: %.2f s; incremental/batch ratio %.2f\n",
	       t_batch, t_scan / t_batch);

	/* 1b. the same year replayed live: a scan after every point */
	t0 = now();
	size_t live_events = 0;
	for (size_t k = 0; k < nseries; k += 5) {
		uint64_t s = 7000 + k;
		size_t at = 60 + (size_t)(unit(&s) * 240.0);
		double step = 0.03 + 0.05 * unit(&s);
		pw_watch_series *q = pw_watch_series_new(&wp, true, false, err, sizeof err);
		if (!q)
			goto fail;
		for (size_t i = 0; i < NPOINTS; i++) {
			pw_watch_build b = build_of(i);
			size_t nev = 0;
			if (pw_watch_series_append(q, value(k, i, at, step, &s), &b, ev, 128, &nev, err,
			                           sizeof err) != PW_OK) {
				pw_watch_series_free(q);
				goto fail;
			}
			live_events += nev;
		}
		pw_watch_series_free(q);
	}
	double t_live = (now() - t0) * 5.0;
	printf("  the same year replayed live (append = load + scan per point), every fifth series,"
	       " scaled to %zu: %.2f s, %.1f us per point; %zu shifts on %zu series\n",
	       nseries, t_live, 1e6 * t_live / (double)(nseries * NPOINTS), live_events,
	       (nseries + 4) / 5);

	/* 2. one more nightly per series, incremental vs a re-scan of the window */
	double t_naive = 0.0;
	for (size_t k = 0; k < nseries; k++) {
		pw_watch_build b = build_of(NPOINTS);
		double v = value(k, NPOINTS, step_at[k], 0.05, &rng[k]);
		size_t nev = 0;
		double a = now();
		if (pw_watch_series_append(ws[k], v, &b, ev, 128, &nev, err, sizeof err) != PW_OK)
			goto fail;
		lat[k] = now() - a;
		if (k % 10 == 0) { /* the reference on every tenth series */
			uint64_t s = 7000 + k;
			size_t at = 60 + (size_t)(unit(&s) * 240.0);
			double step = 0.03 + 0.05 * unit(&s);
			for (size_t i = 0; i < NPOINTS; i++)
				x[i] = value(k, i, at, step, &s);
			x[NPOINTS] = v;
			a = now();
			size_t count = 0;
			if (pw_cp_detect(det, x, NPOINTS + 1, cps, 128, &count, err, sizeof err) != PW_OK)
				goto fail;
			t_naive += now() - a;
		}
	}
	double sum = 0.0;
	for (size_t k = 0; k < nseries; k++)
		sum += lat[k];
	qsort(lat, nseries, sizeof *lat, cmp_double);
	double mean = sum / (double)nseries, naive = t_naive / (double)((nseries + 9) / 10);
	printf("incremental: the 366th nightly of each series\n");
	printf("  mean %.1f us, median %.1f us, p99 %.1f us, max %.1f us (target < 1000 us)\n",
	       1e6 * mean, 1e6 * lat[nseries / 2], 1e6 * lat[(size_t)((double)nseries * 0.99)],
	       1e6 * lat[nseries - 1]);
	printf("  reference, pw_cp_detect over the 366-point window: %.1f us; ratio %.2f\n",
	       1e6 * naive, mean / naive);

	/* 3. memory */
	size_t bytes = m1.uordblks > m0.uordblks ? m1.uordblks - m0.uordblks : 0;
	if (bytes == 0)
		printf("memory: mallinfo2 sees nothing (a sanitizer build?): not measured\n");
	else
		printf("memory: %.1f KiB heap per year-long series (max_points %zu), %.1f MiB for %zu "
		       "series; fixed by max_points, not by history\n",
		       (double)bytes / (double)nseries / 1024.0, wp.max_points,
		       (double)bytes / 1048576.0, nseries);
	for (size_t k = 0; k < nseries; k++) {
		pw_watch_series_free(ws[k]);
		ws[k] = NULL;
	}

	/* 4. quiet weeks: flat series, what the last of five weeks emits */
	size_t quiet = 0, quiet_reg = 0;
	t0 = now();
	for (size_t k = 0; k < nseries; k++) {
		uint64_t s = 91000 + k;
		pw_watch_series *q = pw_watch_series_new(&wp, true, true, err, sizeof err);
		if (!q)
			goto fail;
		for (size_t i = 0; i < 35; i++) {
			pw_watch_build b = build_of(i);
			size_t nev = 0;
			if (pw_watch_series_append(q, value(k & ~(size_t)1, i, 0, 0.0, &s), &b, ev, 128,
			                           &nev, err, sizeof err) != PW_OK) {
				pw_watch_series_free(q);
				goto fail;
			}
			if (i >= 28) {
				quiet += nev;
				for (size_t j = 0; j < nev; j++)
					quiet_reg += ev[j].regression;
			}
		}
		pw_watch_series_free(q);
	}
	printf("quiet weeks: %zu flat series x 35 nightlies (0.4%% noise, 1%% outliers): %zu shifts "
	       "in the last week, %zu of them regressions (would page if all were top tier; the "
	       "budget is 5) [%.2f s]\n",
	       nseries, quiet, quiet_reg, now() - t0);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bench_watcher: failed: %s\n", err);
out:
	if (ws)
		for (size_t k = 0; k < nseries; k++)
			pw_watch_series_free(ws[k]);
	pw_cp_detector_free(det);
	free(ws);
	free(x);
	free(lat);
	free(step_at);
	free(rng);
	return rc;
}
