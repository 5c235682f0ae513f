/*
 * pw_classify.c: the LNT-style verdict of the newest run against its lookback
 * window.
 *
 * Two paths: a run with several samples carries its own evidence (Mann–Whitney
 * against the pooled history, and its median must lie beyond every earlier
 * run's median, which a bimodal history cannot offer); sparse runs (one or two
 * samples, the common LNT case) are judged only when the newest `confirm` runs
 * all sit outside the history's ±band_k·MAD_n band and away from every earlier
 * sample, so that a single outlier or a revisited mode never fires. The
 * statistics are pw_stats.c's; the reasoning is in docs/changepoints.md.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_classify.h"
#include "pw_stats.h"

void pw_cls_params_default(pw_cls_params *p)
{
	memset(p, 0, sizeof *p);
	p->higher_is_better = false;
	p->lookback = 20;
	p->min_history = 5;
	p->min_effect = 0.01;
	p->multi_min = 3;
	p->alpha = 0.01;
	p->confirm = 2;
	p->band_k = 3.0;
	p->near_k = 1.0;
}

const char *pw_cls_verdict_name(pw_cls_verdict v)
{
	switch (v) {
	case PW_CLS_REGRESSED:
		return "REGRESSED";
	case PW_CLS_IMPROVED:
		return "IMPROVED";
	default:
		return "UNCHANGED";
	}
}

static pw_status check_params(const pw_cls_params *p, char *errbuf, size_t errlen)
{
	if (p->lookback < 1 || p->min_history < 1 || p->min_history > p->lookback)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "classify: need 1 <= min_history (%zu) <= lookback (%zu)", p->min_history,
		               p->lookback);
	if (!(p->min_effect >= 0.0) || !isfinite(p->min_effect))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: min_effect %g: must be >= 0",
		               p->min_effect);
	if (!(p->alpha > 0.0 && p->alpha <= 1.0))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: alpha %g: must be in (0, 1]",
		               p->alpha);
	if (p->confirm < 1 || p->multi_min < 1)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "classify: confirm and multi_min must be >= 1");
	if (!(p->band_k >= 0.0) || !(p->near_k >= 0.0) || !isfinite(p->band_k) ||
	    !isfinite(p->near_k))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: band_k, near_k must be >= 0");
	return PW_OK;
}

static void set_unchanged(pw_cls_result *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_unchanged(pw_cls_result *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	out->verdict = PW_CLS_UNCHANGED;
	vsnprintf(out->reason, sizeof out->reason, fmt, ap);
	va_end(ap);
}

/* Distance from c to the nearest of h[0..n). */
static double nearest_distance(const double *h, size_t n, double c)
{
	double best = INFINITY;
	for (size_t i = 0; i < n; i++) {
		double d = fabs(h[i] - c);
		if (d < best)
			best = d;
	}
	return best;
}

pw_status pw_classify(const pw_cls_params *params, const pw_cls_run *runs, size_t nruns,
                      pw_cls_result *out, char *errbuf, size_t errlen)
{
	pw_cls_params defaults;
	if (!params) {
		pw_cls_params_default(&defaults);
		params = &defaults;
	}
	pw_status st = check_params(params, errbuf, errlen);
	if (st != PW_OK)
		return st;
	memset(out, 0, sizeof *out);
	out->delta_pct = NAN;
	out->p = NAN;
	out->hist_median = NAN;
	out->hist_noise = NAN;
	if (nruns == 0 || !runs)
		return pw_fail(PW_ERR_INSUFFICIENT, errbuf, errlen, "classify: no runs");
	for (size_t r = 0; r < nruns; r++) {
		if (runs[r].n == 0 || !runs[r].v)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: run %zu has no samples", r);
		if (!pw_stats_all_finite(runs[r].v, runs[r].n))
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "classify: run %zu has a non-finite sample", r);
	}

	const pw_cls_run *newest = &runs[nruns - 1];
	bool multi = newest->n >= params->multi_min;
	size_t judged = multi ? 1 : params->confirm; /* newest runs under judgement */
	size_t hist_end = nruns >= judged ? nruns - judged : 0;
	size_t hist_start = hist_end > params->lookback ? hist_end - params->lookback : 0;
	size_t nh_runs = hist_end - hist_start;
	out->hist_runs = nh_runs;
	if (nh_runs < params->min_history) {
		set_unchanged(out, "insufficient history: %zu run(s) before the %s, need %zu", nh_runs,
		              judged > 1 ? "newest runs" : "newest run", params->min_history);
		return PW_OK;
	}

	size_t nh = 0, njudged = 0;
	for (size_t r = hist_start; r < hist_end; r++)
		nh += runs[r].n;
	for (size_t r = hist_end; r < nruns; r++)
		njudged += runs[r].n;
	/* hist | work (2·(nh + njudged) for Mann–Whitney) | run medians */
	size_t len = nh + 2 * (nh + njudged) + nh_runs + 8;
	double *mem = malloc(len * sizeof *mem);
	if (!mem)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "classify: out of memory");
	double *hist = mem, *work = mem + nh, *run_med = work + 2 * (nh + njudged);
	size_t at = 0;
	for (size_t r = hist_start; r < hist_end; r++) {
		memcpy(hist + at, runs[r].v, runs[r].n * sizeof *hist);
		at += runs[r].n;
	}
	double m, noise, c;
	if (pw_stats_median_mad(hist, nh, work, &m, &noise) != PW_OK ||
	    pw_stats_median(newest->v, newest->n, work, &c) != PW_OK) {
		st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: statistics failed");
		goto out_free;
	}
	out->hist_median = m;
	out->hist_noise = noise;
	if (m == 0.0) {
		set_unchanged(out, "history median is 0: a relative change is undefined");
		goto out_free;
	}
	/* A constant history has no noise; the minimum effect then decides alone. */
	double noise_floor = 1e-9 * fabs(m);
	if (noise < noise_floor)
		noise = noise_floor;
	double delta = (c - m) / fabs(m);
	out->delta_pct = 100.0 * delta;
	double side = c > m ? 1.0 : -1.0;
	pw_cls_verdict fire = (side > 0.0) != params->higher_is_better ? PW_CLS_REGRESSED
	                                                               : PW_CLS_IMPROVED;

	if (fabs(delta) < params->min_effect) {
		set_unchanged(out, "change %+.2f%% is below the minimum effect %.2f%%", 100.0 * delta,
		              100.0 * params->min_effect);
		goto out_free;
	}

	if (multi) {
		pw_mwu_result mw;
		if (pw_stats_mann_whitney(newest->v, newest->n, hist, nh, PW_ALT_TWO_SIDED,
		                          PW_MWU_AUTO, work, &mw) != PW_OK) {
			st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: Mann-Whitney failed");
			goto out_free;
		}
		out->p = mw.p;
		if (mw.p > params->alpha) {
			set_unchanged(out, "%+.2f%% but not significant: Mann-Whitney p=%.3g > %.3g",
			              100.0 * delta, mw.p, params->alpha);
			goto out_free;
		}
		/*
		 * The run's median must clear the history's band for a median of this
		 * many samples: ±band_k standard errors, SE = √(π/2)·MAD_n/√n.
		 */
		double se = 1.2533141373155003 * noise / sqrt((double)newest->n);
		if (fabs(c - m) <= params->band_k * se) {
			set_unchanged(out, "%+.2f%% (p=%.3g) is inside ±%.3g standard errors of the history",
			              100.0 * delta, mw.p, params->band_k);
			goto out_free;
		}
		/* LNT's minimum distance, by run: some earlier run must not already be there. */
		for (size_t r = hist_start; r < hist_end; r++) {
			double *w2 = work;
			if (pw_stats_median(runs[r].v, runs[r].n, w2, &run_med[r - hist_start]) != PW_OK) {
				st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: median failed");
				goto out_free;
			}
			if (side * (c - run_med[r - hist_start]) <= 0.0) {
				set_unchanged(out,
				              "%+.2f%% (p=%.3g) but run %zu of the history was already at "
				              "that level (bimodal or noisy history)",
				              100.0 * delta, mw.p, r);
				goto out_free;
			}
		}
		out->verdict = fire;
		snprintf(out->reason, sizeof out->reason,
		         "%+.2f%% vs median of %zu runs; Mann-Whitney p=%.3g; beyond every earlier run",
		         100.0 * delta, nh_runs, mw.p);
		goto out_free;
	}

	/* Sparse runs: each of the newest `judged` must be outside the band and alone. */
	for (size_t r = hist_end; r < nruns; r++) {
		double cr;
		if (pw_stats_median(runs[r].v, runs[r].n, work, &cr) != PW_OK) {
			st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: median failed");
			goto out_free;
		}
		double dr = (cr - m) / fabs(m);
		size_t age = nruns - 1 - r;
		if ((cr > m ? 1.0 : -1.0) != side || fabs(dr) < params->min_effect) {
			set_unchanged(out,
			              "%+.2f%% but not confirmed: the run %zu before the newest is at "
			              "%+.2f%% (a single outlier is not a step)",
			              100.0 * delta, age, 100.0 * dr);
			goto out_free;
		}
		if (fabs(cr - m) <= params->band_k * noise) {
			set_unchanged(out,
			              "%+.2f%% is inside the history's noise band (±%.3g·MAD_n = ±%.2f%%)%s",
			              100.0 * dr, params->band_k, 100.0 * params->band_k * noise / fabs(m),
			              age ? " for an earlier run" : "");
			goto out_free;
		}
		double near = nearest_distance(hist, nh, cr);
		if (near <= params->near_k * noise) {
			set_unchanged(out,
			              "%+.2f%% but an earlier sample lies within %.3g·MAD_n of it "
			              "(bimodal history)",
			              100.0 * dr, params->near_k);
			goto out_free;
		}
	}
	out->verdict = fire;
	snprintf(out->reason, sizeof out->reason,
	         "%+.2f%% vs median of %zu runs; the newest %zu run(s) all outside ±%.3g·MAD_n and "
	         "away from every earlier sample",
	         100.0 * delta, nh_runs, judged, params->band_k);
out_free:
	free(mem);
	return st;
}
