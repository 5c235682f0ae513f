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
	p->confirm = 1;
	p->band_k = 6.0;
	p->near_k = 3.0;
	p->trend_k = 6.0;
	p->few_effect = 0.2;
	p->few_gap_k = 3.0;
	p->multi_band_k = 3.0;
	p->mode_lookback = 60;
	p->mode_min = 3;
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
	if (p->mode_lookback > p->lookback && p->mode_min < 1)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "classify: mode_min must be >= 1 when mode_lookback (%zu) > lookback (%zu)",
		               p->mode_lookback, p->lookback);
	if (p->confirm < 1 || p->multi_min < 1)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "classify: confirm and multi_min must be >= 1");
	if (!(p->band_k >= 0.0) || !(p->near_k >= 0.0) || !isfinite(p->band_k) ||
	    !isfinite(p->near_k) || !(p->trend_k >= 0.0) || !isfinite(p->trend_k) ||
	    !(p->few_effect >= 0.0) || !isfinite(p->few_effect) || !(p->few_gap_k >= 0.0) ||
	    !isfinite(p->few_gap_k) || !(p->multi_band_k >= 0.0) || !isfinite(p->multi_band_k))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "classify: band_k, near_k, trend_k, few_effect, few_gap_k must be >= 0");
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

/*
 * Runs [from, to) before the window: how many samples sit within tol of c
 * (the newest level) after some sample within tol of m (the window's level)?
 * A level the series left for the window's level and came back to is a mode;
 * a level it only held before the window (a recovery) counts 0.
 */
static size_t mode_visits(const pw_cls_run *runs, size_t from, size_t to, double c, double m,
                          double tol)
{
	bool seen_m = false;
	size_t visits = 0;
	for (size_t r = from; r < to; r++)
		for (size_t i = 0; i < runs[r].n; i++) {
			double x = runs[r].v[i];
			if (fabs(x - m) <= tol)
				seen_m = true;
			else if (seen_m && fabs(x - c) <= tol)
				visits++;
		}
	return visits;
}

/*
 * Fewer than min_history earlier runs: no noise model can be trusted, so only
 * a gross change fires: |change| >= few_effect of the earlier runs' median,
 * and the newest run's median beyond every earlier sample by more than
 * few_gap_k × their range (a constant history has range 0).
 */
static pw_status few_history(const pw_cls_params *params, const pw_cls_run *hist, size_t nh_runs,
                             const pw_cls_run *newest, pw_cls_result *out, char *errbuf,
                             size_t errlen)
{
	size_t nh = 0;
	for (size_t r = 0; r < nh_runs; r++)
		nh += hist[r].n;
	double *mem = malloc((2 * nh + newest->n + 2) * sizeof *mem);
	if (!mem)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "classify: out of memory");
	double *h = mem, *work = mem + nh;
	size_t at = 0;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t r = 0; r < nh_runs; r++)
		for (size_t i = 0; i < hist[r].n; i++) {
			double v = hist[r].v[i];
			h[at++] = v;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	double m, c;
	pw_status st = PW_OK;
	if (pw_stats_median(h, nh, work, &m) != PW_OK ||
	    pw_stats_median(newest->v, newest->n, work, &c) != PW_OK) {
		st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: statistics failed");
		goto out_free;
	}
	out->hist_median = m;
	if (m == 0.0) {
		set_unchanged(out, "history median is 0: a relative change is undefined");
		goto out_free;
	}
	double delta = (c - m) / fabs(m);
	out->delta_pct = 100.0 * delta;
	double gap = c > hi ? c - hi : (c < lo ? lo - c : 0.0);
	double need = params->few_gap_k * (hi - lo);
	if (fabs(delta) < params->few_effect || !(gap > need)) {
		set_unchanged(out,
		              "%+.2f%% with only %zu earlier run(s) (need %zu for a noise model): "
		              "short histories fire only on >= %.0f%% beyond %.3g x their range",
		              100.0 * delta, nh_runs, params->min_history, 100.0 * params->few_effect,
		              params->few_gap_k);
		goto out_free;
	}
	out->verdict = (c > m) != params->higher_is_better ? PW_CLS_REGRESSED : PW_CLS_IMPROVED;
	snprintf(out->reason, sizeof out->reason,
	         "%+.2f%% vs %zu earlier run(s), beyond all of them by more than %.3g x their range",
	         100.0 * delta, nh_runs, params->few_gap_k);
out_free:
	free(mem);
	return st;
}

/*
 * Theil–Sen line through y[0..n) against 0..n−1: slope = median of the
 * pairwise slopes, intercept = median of y_i − slope·i; then σ_res, the
 * MAD_n of the residuals. work has room for n(n−1) + 2n doubles. n >= 2.
 */
static pw_status theil_sen(const double *y, size_t n, double *work, double *slope,
                           double *resid_noise)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			work[k++] = (y[j] - y[i]) / (double)(j - i);
	double b;
	pw_status st = pw_stats_median(work, k, work + k, &b);
	if (st != PW_OK)
		return st;
	double *res = work;
	for (size_t i = 0; i < n; i++)
		res[i] = y[i] - b * (double)i;
	double a, unused;
	st = pw_stats_median_mad(res, n, work + n, &a, &unused);
	if (st != PW_OK)
		return st;
	for (size_t i = 0; i < n; i++)
		res[i] = y[i] - a - b * (double)i;
	double med;
	st = pw_stats_median_mad(res, n, work + n, &med, resid_noise);
	*slope = b;
	return st;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * A two-mode model of the history: y[0..n) sorted into work (n doubles, plus
 * 2n scratch), split at its largest gap with at least 3 values on each side.
 * It is a model when that gap exceeds gap_k × σ_w, σ_w the MAD_n of the
 * residuals about each side's own median; then lo/hi get the two medians,
 * ymin/ymax the extremes. Returns false when there is no such split.
 */
static bool two_modes(const double *y, size_t n, double gap_k, double floor_, double *work,
                      double *lo_med, double *hi_med, double *ymin, double *ymax, double *sw)
{
	if (n < 6)
		return false;
	double *s = work, *res = work + n, *scratch = work + 2 * n;
	memcpy(s, y, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	size_t cut = 0;
	double gap = -1.0;
	for (size_t i = 3; i + 3 <= n; i++)
		if (s[i] - s[i - 1] > gap) {
			gap = s[i] - s[i - 1];
			cut = i;
		}
	double ml, mh, unused;
	if (pw_stats_median(s, cut, scratch, &ml) != PW_OK ||
	    pw_stats_median(s + cut, n - cut, scratch, &mh) != PW_OK)
		return false;
	for (size_t i = 0; i < n; i++)
		res[i] = s[i] - (i < cut ? ml : mh);
	if (pw_stats_median_mad(res, n, scratch, &unused, sw) != PW_OK)
		return false;
	if (*sw < floor_)
		*sw = floor_;
	if (!(gap > gap_k * *sw))
		return false;
	*lo_med = ml;
	*hi_med = mh;
	*ymin = s[0];
	*ymax = s[n - 1];
	return true;
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
	out->hist_resid_noise = NAN;
	out->trend_pct = NAN;
	if (nh_runs == 0) {
		set_unchanged(out, "insufficient history: no run before the %s",
		              judged > 1 ? "newest runs" : "newest run");
		return PW_OK;
	}
	if (nh_runs < params->min_history)
		return few_history(params, runs + hist_start, nh_runs, newest, out, errbuf, errlen);

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
		 * many samples: ±multi_band_k standard errors, SE = √(π/2)·MAD_n/√n.
		 */
		double se = 1.2533141373155003 * noise / sqrt((double)newest->n);
		if (fabs(c - m) <= params->multi_band_k * se) {
			set_unchanged(out, "%+.2f%% (p=%.3g) is inside ±%.3g standard errors of the history",
			              100.0 * delta, mw.p, params->multi_band_k);
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

	/*
	 * Sparse runs. The noise is σ_res, the spread about the history's
	 * Theil–Sen line, so that a trending history does not widen its own band.
	 * Each of the newest `judged` runs must be outside median ± band_k·σ_res
	 * and farther than near_k·max(σ_res, MAD_n) from every earlier sample (a
	 * revisited mode is not news: the MAD_n of a bimodal history spans its
	 * modes, σ_res may not); or, when the window itself trends by more than
	 * trend_k·σ_res, the newest run continuing that trend past the minimum
	 * effect is a drift.
	 */
	if (nh_runs < 2) {
		free(mem);
		return few_history(params, runs + hist_start, nh_runs, newest, out, errbuf, errlen);
	}
	double *ts = malloc((nh_runs * (nh_runs - 1) + 2 * nh_runs + 2) * sizeof *ts);
	if (!ts) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "classify: out of memory");
		goto out_free;
	}
	for (size_t r = hist_start; r < hist_end; r++) {
		if (pw_stats_median(runs[r].v, runs[r].n, work, &run_med[r - hist_start]) != PW_OK) {
			free(ts);
			st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: median failed");
			goto out_free;
		}
	}
	double slope, sres;
	if (theil_sen(run_med, nh_runs, ts, &slope, &sres) != PW_OK) {
		free(ts);
		st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: trend fit failed");
		goto out_free;
	}
	/* The successive-difference scale, MAD_n(y_{i+1} − y_i)/√2: blind to a
	 * trend (a constant shift of the differences) and to one step (one
	 * outlying difference); the smaller of the two is the noise. */
	for (size_t i = 0; i + 1 < nh_runs; i++)
		ts[i] = run_med[i + 1] - run_med[i];
	double dmed, dmad;
	if (pw_stats_median_mad(ts, nh_runs - 1, ts + nh_runs, &dmed, &dmad) != PW_OK) {
		free(ts);
		st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "classify: statistics failed");
		goto out_free;
	}
	dmad /= 1.4142135623730951;
	double sres_line = sres < noise_floor ? noise_floor : sres; /* the trend's yardstick */
	if (dmad < sres)
		sres = dmad;
	double mlo = 0, mhi = 0, ymin = 0, ymax = 0, sw = 0;
	bool modes = two_modes(run_med, nh_runs, 4.0, noise_floor, ts, &mlo, &mhi, &ymin, &ymax, &sw);
	free(ts);
	if (sres < noise_floor)
		sres = noise_floor;
	out->hist_resid_noise = sres;
	double trend = slope * (double)nh_runs;
	out->trend_pct = 100.0 * trend / fabs(m);
	/* Against the residuals about the line alone: the difference scale is
	 * small on a bimodal history that dwells in one mode, and would make a
	 * trend of the mode switches. */
	bool trending = fabs(trend) > params->trend_k * sres_line;

	bool all_band = true, all_drift = trending, all_mode = modes;
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
			              "%+.2f%%",
			              100.0 * delta, age, 100.0 * dr);
			goto out_free;
		}
		if ((trend > 0.0) != (side > 0.0))
			all_drift = false;
		if (fabs(cr - m) <= params->band_k * sres ||
		    nearest_distance(hist, nh, cr) <= params->near_k * (noise > sres ? noise : sres))
			all_band = false;
		/* A bimodal history: beyond the outer mode by band_k of the modes' own spread. */
		if (all_mode) {
			double ref = cr > ymax ? mhi : (cr < ymin ? mlo : NAN);
			if (isnan(ref) || (cr > ref) != (side > 0.0) ||
			    fabs(cr - ref) <= params->band_k * sw ||
			    fabs(cr - ref) / fabs(m) < params->min_effect ||
			    nearest_distance(hist, nh, cr) <= params->near_k * sw ||
			    (cr > ymax ? cr - ymax : ymin - cr) <= 0.5 * params->band_k * sw)
				all_mode = false;
		}
	}
	if (all_mode && !all_band) {
		out->verdict = fire;
		snprintf(out->reason, sizeof out->reason,
		         "%+.2f%% vs median of %zu runs; the history is bimodal (modes %.6g and %.6g) and "
		         "this run is beyond the outer mode by more than %.3g x the modes' spread",
		         100.0 * delta, nh_runs, mlo, mhi, params->band_k);
		goto out_free;
	}
	if (!all_band && !all_drift) {
		set_unchanged(out,
		              "%+.2f%% is inside the history's noise band (±%.3g·σ_res = ±%.2f%%, σ_res "
		              "about its trend line) or next to an earlier sample",
		              100.0 * delta, params->band_k, 100.0 * params->band_k * sres / fabs(m));
		goto out_free;
	}
	if (all_band && params->mode_lookback > params->lookback && hist_start > 0) {
		size_t back = params->mode_lookback - params->lookback;
		size_t from = hist_start > back ? hist_start - back : 0;
		double tol = params->near_k * (noise > sres ? noise : sres);
		size_t visits = mode_visits(runs, from, hist_start, c, m, tol);
		if (visits >= params->mode_min) {
			set_unchanged(out,
			              "%+.2f%% but the series visited this level %zu times in the %zu "
			              "runs before its window, alternating with its current level: a "
			              "rare mode, not a shift",
			              100.0 * delta, visits, hist_start - from);
			goto out_free;
		}
	}
	out->verdict = fire;
	out->drift = !all_band;
	if (all_band)
		snprintf(out->reason, sizeof out->reason,
		         "%+.2f%% vs median of %zu runs; outside ±%.3g·σ_res (%.2f%%) and away from "
		         "every earlier sample",
		         100.0 * delta, nh_runs, params->band_k, 100.0 * sres / fabs(m));
	else
		snprintf(out->reason, sizeof out->reason,
		         "%+.2f%% vs median of %zu runs: a drift of %+.2f%% over the window "
		         "(> %.3g·σ_res) that the newest run continues",
		         100.0 * delta, nh_runs, out->trend_pct, params->trend_k);
out_free:
	free(mem);
	return st;
}
