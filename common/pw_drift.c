/*
 * pw_drift.c: steps or a trend, decided by comparing two fits of the whole
 * series with the same penalties: the best piecewise-constant fit (levels
 * and steps, what the changepoint detector models) and the best fit whose
 * segments may each be a level or a line. Both are optimal partitions found
 * by dynamic programming on a grid of at most max_grid boundaries, each
 * boundary then moved to its exact best point. Costs are residual sums of
 * squares in units of the noise variance σ² on Huber-clipped data, as in
 * robust PELT (pw_changepoint.c), so that a lone outlier cannot pay for a
 * segment or a slope. A line is kept only where it pays for its slope; the
 * stretch from the first line to the last is the trend. See pw_drift.h and
 * docs/changepoints.md ("Steps or a drift").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pw_drift.h"
#include "pw_stats.h"

/* Φ⁻¹(0.9): the 80th percentile of |Z| for Z ~ N(0, 1). */
#define Q80_ABS_NORMAL 1.2815515655446004

void pw_drift_params_default(pw_drift_params *p)
{
	p->min_points = 60;
	p->min_effect = 0.01;
	p->total_k = 5.0;
	p->penalty = 15.0;
	p->slope_penalty = 7.5;
	p->min_segment = 5;
	p->min_linear = 20;
	p->max_grid = 128;
	p->clip_k = 3.0;
	p->clip_halfwidth = 5;
	p->absorb_slack = 5;
	p->min_change = 2.0;
	p->jump_k = 4.0;
	p->max_wander = 1.5;
}

static bool params_ok(const pw_drift_params *p)
{
	return p->min_segment >= 2 && p->min_linear >= 3 && p->min_linear >= p->min_segment &&
	       p->max_grid >= 4 && p->clip_halfwidth <= 50 && p->min_effect >= 0.0 &&
	       isfinite(p->min_effect) && p->total_k >= 0.0 && isfinite(p->total_k) &&
	       p->penalty > 0.0 && isfinite(p->penalty) && p->slope_penalty >= 0.0 &&
	       isfinite(p->slope_penalty) && p->clip_k > 0.0 && isfinite(p->clip_k) &&
	       p->min_change >= 0.0 && isfinite(p->min_change) && p->jump_k >= 0.0 &&
	       isfinite(p->jump_k) && p->max_wander > 0.0 && isfinite(p->max_wander);
}

/* Prefix sums of the clipped, centred series and the model prices. */
typedef struct fit {
	const double *s1, *s2, *st; /* Σz, Σz², Σ i·z over [0, i) */
	double inv_var;             /* 1 / σ² */
	double slope_penalty;
	size_t min_linear;
} fit;

/* Residual sum of squares of [s, t) about its mean. */
static double rss_level(const fit *f, size_t s, size_t t)
{
	double m = (double)(t - s), sz = f->s1[t] - f->s1[s];
	double r = (f->s2[t] - f->s2[s]) - sz * sz / m;
	return r > 0.0 ? r : 0.0;
}

/*
 * Least-squares line through [s, t) (t − s >= 3): residual sum of squares,
 * and the line as its value at the segment's mean index plus a slope. The
 * index sums are exact: Σ(i − ī)² = m(m² − 1)/12 for consecutive integers.
 */
static double rss_line(const fit *f, size_t s, size_t t, double *mid, double *slope)
{
	double m = (double)(t - s), sz = f->s1[t] - f->s1[s];
	double ibar = 0.5 * (double)(s + t - 1);
	double sxx = m * (m * m - 1.0) / 12.0;
	double sxz = (f->st[t] - f->st[s]) - ibar * sz;
	double szz = (f->s2[t] - f->s2[s]) - sz * sz / m;
	double b = sxz / sxx;
	if (mid)
		*mid = sz / m;
	if (slope)
		*slope = b;
	double r = szz - b * sxz;
	return r > 0.0 ? r : 0.0;
}

/* Cost of segment [s, t) in σ²: a level, or a line when lines are allowed and it pays. */
static double seg_cost(const fit *f, size_t s, size_t t, bool lines, bool *sloped)
{
	double c = rss_level(f, s, t) * f->inv_var;
	bool lin = false;
	if (lines && t - s >= f->min_linear) {
		double l = rss_line(f, s, t, NULL, NULL) * f->inv_var + f->slope_penalty;
		if (l < c) {
			c = l;
			lin = true;
		}
	}
	if (sloped)
		*sloped = lin;
	return c;
}

/*
 * Optimal partition of [0, n) with boundaries on the grid pts[0..np) (pts[0]
 * = 0, pts[np − 1] = n), each segment at least min_segment long and priced β;
 * then each boundary moved to its exact best point within one grid step.
 * bnd receives the boundaries including 0 and n; returns their count and the
 * total penalised cost in *cost. F, last: np entries.
 */
static size_t partition(const fit *f, const pw_drift_params *p, const size_t *pts, size_t np,
                        size_t g, bool lines, double *F, size_t *last, size_t *bnd, double *cost)
{
	size_t ms = p->min_segment;
	F[0] = -p->penalty;
	last[0] = 0;
	for (size_t j = 1; j < np; j++) {
		double best = INFINITY;
		size_t arg = 0;
		for (size_t i = 0; i < j; i++) {
			if (pts[j] - pts[i] < ms || !isfinite(F[i]))
				continue;
			double v = F[i] + seg_cost(f, pts[i], pts[j], lines, NULL);
			if (v < best) {
				best = v;
				arg = i;
			}
		}
		F[j] = best + p->penalty;
		last[j] = arg;
	}
	size_t k = 0;
	for (size_t j = np - 1;; j = last[j]) {
		bnd[k++] = pts[j];
		if (j == 0)
			break;
	}
	for (size_t i = 0; i < k / 2; i++) {
		size_t t = bnd[i];
		bnd[i] = bnd[k - 1 - i];
		bnd[k - 1 - i] = t;
	}
	/*
	 * A change between two grid points can come back as two boundaries
	 * around a short mixed segment: such a pair becomes the best single
	 * boundary between them when that is cheaper, penalty included.
	 */
	for (size_t j = 1; g > 1 && j + 2 < k; j++) {
		size_t a = bnd[j - 1], b1 = bnd[j], b2 = bnd[j + 1], c = bnd[j + 2];
		if (b2 - b1 > 2 * g)
			continue;
		double pair = seg_cost(f, a, b1, lines, NULL) + seg_cost(f, b1, b2, lines, NULL) +
		              seg_cost(f, b2, c, lines, NULL) + p->penalty;
		size_t lo = b1 > a + ms ? b1 : a + ms, hi = b2 + ms <= c ? b2 : c - ms, arg = 0;
		double best = INFINITY;
		for (size_t t = lo; t <= hi; t++) {
			double v = seg_cost(f, a, t, lines, NULL) + seg_cost(f, t, c, lines, NULL);
			if (v < best) {
				best = v;
				arg = t;
			}
		}
		if (best <= pair) {
			bnd[j] = arg;
			memmove(bnd + j + 1, bnd + j + 2, (k - j - 2) * sizeof *bnd);
			k--;
		}
	}
	/* exact boundaries, left to right, each between its neighbours */
	for (size_t j = 1; j + 1 < k && g > 1; j++) {
		size_t a = bnd[j - 1], c = bnd[j + 1], b = bnd[j];
		size_t lo = b > a + g - 1 ? b - (g - 1) : a;
		size_t hi = b + (g - 1);
		if (lo < a + ms)
			lo = a + ms;
		if (hi + ms > c)
			hi = c - ms;
		double best = seg_cost(f, a, b, lines, NULL) + seg_cost(f, b, c, lines, NULL);
		for (size_t t = lo; t <= hi; t++) {
			double v = seg_cost(f, a, t, lines, NULL) + seg_cost(f, t, c, lines, NULL);
			if (v < best) {
				best = v;
				b = t;
			}
		}
		bnd[j] = b;
	}
	double total = p->penalty * (double)(k - 2);
	for (size_t j = 0; j + 1 < k; j++)
		total += seg_cost(f, bnd[j], bnd[j + 1], lines, NULL);
	*cost = total;
	return k;
}

/*
 * Scale of the lag-k differences x[i + k] − x[i], centred on their median (a
 * linear trend adds the same amount to each) and taken at the 80th
 * percentile as PELT's calibration does (a bimodal series must look noisy).
 * For independent noise of scale σ it is σ for every k (both ends are
 * independent draws), so it is returned as σ; for a random walk it grows
 * as √k. 0 when at least 80% of the differences are equal (quantised data).
 * w: 2n doubles.
 */
static pw_status diff_scale(const double *x, size_t n, size_t k, double *w, double *scale,
                            double *mean_abs)
{
	double med, q, sum = 0.0;
	size_t m = n - k;
	for (size_t i = 0; i < m; i++)
		w[i] = x[i + k] - x[i];
	pw_status st = pw_stats_median(w, m, w + n, &med);
	if (st != PW_OK)
		return st;
	for (size_t i = 0; i < m; i++) {
		w[i] = fabs(w[i] - med);
		sum += w[i];
	}
	if ((st = pw_stats_quantile(w, m, 0.8, w + n, &q)) != PW_OK)
		return st;
	*scale = q / (Q80_ABS_NORMAL * M_SQRT2);
	*mean_abs = sum / (double)m;
	return PW_OK;
}

/*
 * z[i] = x[i] clipped to the median of its centred window ± clip_k σ, minus
 * centre. The window shrinks symmetrically at the ends, so that a trend's
 * first and last points are not pulled towards the inside. w: 2·(2h + 1).
 */
static void clip_series(const double *x, size_t n, const pw_drift_params *p, double sigma,
                        double centre, double *w, double *z)
{
	double band = p->clip_k * sigma;
	for (size_t i = 0; i < n; i++) {
		size_t h = p->clip_halfwidth;
		if (h > i)
			h = i;
		if (h > n - 1 - i)
			h = n - 1 - i;
		double v = x[i];
		size_t len = 2 * h + 1, above = 0, below = 0, lim = (len + 1) / 2 - 1;
		for (size_t j = i - h; j <= i + h; j++) {
			above += x[j] > v + band;
			below += x[j] < v - band;
		}
		/* the median is within the band of v unless half the window is beyond it */
		if (above > lim || below > lim) {
			double med = v;
			memcpy(w, x + i - h, len * sizeof *w);
			(void)pw_stats_median(w, len, w + len, &med);
			if (v > med + band)
				v = med + band;
			else if (v < med - band)
				v = med - band;
		}
		z[i] = v - centre;
	}
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/* pw_drift_detect, and when keep is not NULL pw_drift_decide's keep[]. */
static pw_status analyse(const double *x, size_t n, const pw_changepoint *steps, size_t nsteps,
                         const pw_drift_params *params, pw_drift *out, bool *keep)
{
	pw_drift_params def;
	if (!params) {
		pw_drift_params_default(&def);
		params = &def;
	}
	if (!out || (n && !x) || (nsteps && !steps) || !params_ok(params))
		return PW_ERR_INVALID;
	memset(out, 0, sizeof *out);
	if (!pw_stats_all_finite(x, n))
		return PW_ERR_INVALID;
	for (size_t j = 0; keep && j < nsteps; j++)
		keep[j] = true;
	if (n < params->min_points || n < 2 * params->min_segment || n < 4)
		return PW_OK;
	size_t h2 = 2 * (2 * params->clip_halfwidth + 1);
	size_t g = (n + params->max_grid - 1) / params->max_grid;
	size_t np = (n + g - 1) / g + 1 + nsteps; /* 0, g, 2g, ..., n and the steps */
	size_t wlen = 2 * n + h2;
	double *mem = malloc((wlen + n + 3 * (n + 1) + 2 * np) * sizeof *mem);
	size_t *imem = malloc(3 * np * sizeof *imem);
	pw_status st = PW_ERR_NOMEM;
	if (!mem || !imem)
		goto out_free;
	double *w = mem, *z = w + wlen, *s1 = z + n, *s2 = s1 + n + 1, *sti = s2 + n + 1;
	double *F = sti + n + 1;
	size_t *pts = imem, *last = pts + np, *bnd = last + np;

	/* σ from the lag-1 differences; the lag-4 scale against it tells
	 * independent noise (ratio 1) from a random walk (ratio 2) */
	double sigma, centre, mabs, s4, mabs4;
	if ((st = diff_scale(x, n, 1, w, &sigma, &mabs)) != PW_OK ||
	    (st = diff_scale(x, n, 4, w, &s4, &mabs4)) != PW_OK)
		goto out_free;
	if (!(sigma > 0.0)) { /* quantised data: the mean |difference| (E|d| = 2σ/√π) */
		sigma = mabs * sqrt(M_PI) / 2.0;
		s4 = mabs4 * sqrt(M_PI) / 2.0;
	}
	out->wander_ratio = sigma > 0.0 ? s4 / sigma : 1.0;
	memcpy(w, x, n * sizeof *w);
	if ((st = pw_stats_median(w, n, w + n, &centre)) != PW_OK)
		goto out_free;
	/* a noiseless series: any structure is clear, but costs must stay finite */
	double floor_ = 1e-9 * (fabs(centre) > 1e-290 ? fabs(centre) : 1e-290);
	if (!(sigma > floor_))
		sigma = floor_;
	out->noise = sigma;
	clip_series(x, n, params, sigma, centre, w, z);
	s1[0] = s2[0] = sti[0] = 0.0;
	for (size_t i = 0; i < n; i++) {
		s1[i + 1] = s1[i] + z[i];
		s2[i + 1] = s2[i] + z[i] * z[i];
		sti[i + 1] = sti[i] + (double)i * z[i];
	}
	fit f = {.s1 = s1, .s2 = s2, .st = sti, .inv_var = 1.0 / (sigma * sigma),
	         .slope_penalty = params->slope_penalty, .min_linear = params->min_linear};
	/* candidate boundaries: the grid, and the detector's steps where they are */
	size_t m = 0;
	for (size_t t = 0; t < n; t += g)
		pts[m++] = t;
	for (size_t j = 0; j < nsteps; j++)
		if (steps[j].index > 0 && steps[j].index < n)
			pts[m++] = steps[j].index;
	qsort(pts, m, sizeof *pts, cmp_size);
	size_t u = 0;
	for (size_t j = 0; j < m; j++)
		if (u == 0 || pts[j] != pts[u - 1])
			pts[u++] = pts[j];
	m = u;
	pts[m++] = n;

	(void)partition(&f, params, pts, m, g, false, F, last, bnd, &out->cost_steps);
	size_t k = partition(&f, params, pts, m, g, true, F, last, bnd, &out->cost_lines);
	out->segments = k - 1;
	/* each segment's model: its value at its first point and its slope
	 * (0 for a level); a line that moves less than min_change σ over its
	 * length is a level with a slight tilt, not a trend */
	double *at = F, *slope = F + k;
	bool *sloped = (bool *)last;
	size_t first = k, lastl = 0;
	for (size_t j = 0; j + 1 < k; j++) {
		size_t s0 = bnd[j], t0 = bnd[j + 1];
		(void)seg_cost(&f, s0, t0, true, &sloped[j]);
		if (sloped[j]) {
			double mid;
			(void)rss_line(&f, s0, t0, &mid, &slope[j]);
			at[j] = mid - slope[j] * 0.5 * (double)(t0 - 1 - s0);
			sloped[j] = fabs(slope[j]) * (double)(t0 - 1 - s0) >= params->min_change * sigma;
		}
		if (!sloped[j]) {
			at[j] = (f.s1[t0] - f.s1[s0]) / (double)(t0 - s0);
			slope[j] = 0.0;
			continue;
		}
		out->sloped++;
		if (first == k)
			first = j;
		lastl = j;
	}
	st = PW_OK;
	/* the lines fit must beat the levels fit (a search on a grid could, in
	 * principle, come back worse though the model holds every levels fit) */
	out->wandering = out->wander_ratio > params->max_wander;
	if (out->wandering) { /* no level to step from: the whole series is the trend */
		first = 0;
		lastl = k - 2;
	} else if (first == k || !(out->cost_lines < out->cost_steps)) {
		goto out_keep;
	}
	out->trend = true;
	out->start = bnd[first];
	out->end = bnd[lastl + 1];
	double before = at[first];
	double after = at[lastl] + slope[lastl] * (double)(out->end - 1 - bnd[lastl]);
	/*
	 * A trend that leaves a level without a clear jump starts where its line
	 * meets that level (the hinge), not at the boundary the partition chose:
	 * the level's last points already lie on the line. Likewise at its end.
	 */
	if (!out->wandering && first > 0 && fabs(before - at[first - 1]) < params->jump_k * sigma &&
	    slope[first] != 0.0) {
		double cross = (double)bnd[first] + (at[first - 1] - before) / slope[first];
		if (cross < (double)bnd[first - 1])
			cross = (double)bnd[first - 1];
		if (cross < (double)bnd[first]) {
			out->start = (size_t)ceil(cross);
			before = at[first - 1];
		}
	}
	if (!out->wandering && lastl + 2 < k && fabs(at[lastl + 1] - after) < params->jump_k * sigma &&
	    slope[lastl] != 0.0) {
		double cross = (double)(out->end - 1) + (at[lastl + 1] - after) / slope[lastl];
		if (cross > (double)(bnd[lastl + 2] - 1))
			cross = (double)(bnd[lastl + 2] - 1);
		if (cross > (double)(out->end - 1)) {
			out->end = (size_t)floor(cross) + 1;
			after = at[lastl + 1];
		}
	}
	out->level_before = centre + before;
	out->level_after = centre + after;
	double total = out->level_after - out->level_before;
	out->rate = total / (double)(out->end - 1 - out->start);
	double lvl = fabs(out->level_before);
	if (lvl > 0.0) {
		out->rate_pct = 100.0 * out->rate / lvl;
		out->total_pct = 100.0 * total / lvl;
	} else {
		out->rate_pct = out->total_pct = NAN;
	}
	out->found = lvl > 0.0 && fabs(total) >= params->min_effect * lvl &&
	             fabs(total) > params->total_k * sigma;
out_keep:
	/*
	 * The detector's steps. Without a trend each is a step. In a wandering
	 * series none is: they are the walk's moves. Otherwise a step is one only
	 * where the lines fit (the better model) jumps too, by >= jump_k σ, at a
	 * boundary within absorb_slack of it: at the trend's first or last point
	 * (a step before or after a drift), outside the trend, or inside it
	 * against its direction (a fix during a drift). A step inside the trend
	 * in its direction is the trend's staircase.
	 */
	for (size_t j = 0; keep && j < nsteps; j++) {
		size_t c = steps[j].index, slack = params->absorb_slack;
		keep[j] = !out->trend;
		if (!out->trend || out->wandering)
			continue;
		size_t near = 0, dist = slack + 1;
		for (size_t i = 1; i + 1 < k; i++) {
			size_t d = bnd[i] > c ? bnd[i] - c : c - bnd[i];
			if (d < dist) {
				dist = d;
				near = i;
			}
		}
		if (!near)
			continue;
		size_t b0 = bnd[near];
		double left = at[near - 1] + slope[near - 1] * (double)(b0 - 1 - bnd[near - 1]);
		if (!(fabs(at[near] - left) >= params->jump_k * sigma))
			continue;
		bool inside = b0 > out->start && b0 < out->end;
		bool with = (steps[j].after > steps[j].before) ==
		            (out->level_after > out->level_before);
		keep[j] = !(inside && with);
	}
out_free:
	free(mem);
	free(imem);
	return st;
}

pw_status pw_drift_detect(const double *x, size_t n, const pw_changepoint *steps, size_t nsteps,
                          const pw_drift_params *params, pw_drift *out)
{
	return analyse(x, n, steps, nsteps, params, out, NULL);
}

pw_status pw_drift_decide(const double *x, size_t n, const pw_changepoint *steps, size_t nsteps,
                          const pw_drift_params *params, pw_drift *drift, bool *keep)
{
	if (nsteps > 0 && !keep)
		return PW_ERR_INVALID;
	return analyse(x, n, steps, nsteps, params, drift, keep);
}

pw_status pw_drift_theil_sen(const double *x, size_t n, double *slope)
{
	if (!x || !slope || n < 2 || n > 512 || !pw_stats_all_finite(x, n))
		return PW_ERR_INVALID;
	size_t np = n * (n - 1) / 2;
	double *w = malloc(2 * np * sizeof *w);
	if (!w)
		return PW_ERR_NOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			w[k++] = (x[j] - x[i]) / (double)(j - i);
	pw_status st = pw_stats_median(w, k, w + k, slope);
	free(w);
	return st;
}
