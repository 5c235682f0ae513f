/*
 * pw_drift.c: a drift is "flat until start, then a straight line", fitted
 * to block medians (so that the cost is O(n) and one outlier moves nothing),
 * accepted when it leaves no more structure than the noise of a block median
 * and its total is both practically (min_effect) and statistically (total_k
 * × noise) large. A staircase of a few real steps leaves residuals of about
 * a quarter of a step about any line, far above a block median's noise, and
 * stays a staircase. See pw_drift.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pw_drift.h"
#include "pw_stats.h"

void pw_drift_params_default(pw_drift_params *p)
{
	p->blocks = 30;
	p->min_points = 60;
	p->min_effect = 0.01;
	p->total_k = 5.0;
	p->fit_k = 1.8;
}

/* Σ|bm[j] − model(c[j])| of the hinge at block j0; sets a and b. */
static double hinge(const double *bm, const double *c, size_t nb, size_t j0, double t0,
                    double *w, double *a, double *b)
{
	size_t k = 0;
	double level = 0.0;
	if (j0 == 0) { /* the whole series: Theil–Sen through the block medians */
		for (size_t i = 0; i < nb; i++)
			for (size_t j = i + 1; j < nb; j++)
				w[k++] = (bm[j] - bm[i]) / (c[j] - c[i]);
		double slope;
		if (pw_stats_median(w, k, w + k, &slope) != PW_OK)
			return INFINITY;
		for (size_t i = 0; i < nb; i++)
			w[i] = bm[i] - slope * (c[i] - t0);
		if (pw_stats_median(w, nb, w + nb, &level) != PW_OK)
			return INFINITY;
		*b = slope;
	} else {
		if (pw_stats_median(bm, j0, w, &level) != PW_OK)
			return INFINITY;
		for (size_t j = j0; j < nb; j++)
			w[k++] = (bm[j] - level) / (c[j] - t0);
		if (pw_stats_median(w, k, w + k, b) != PW_OK)
			return INFINITY;
	}
	*a = level;
	double cost = 0.0;
	for (size_t j = 0; j < nb; j++) {
		double m = c[j] < t0 ? level : level + *b * (c[j] - t0);
		cost += fabs(bm[j] - m);
	}
	return cost;
}

pw_status pw_drift_detect(const double *x, size_t n, const pw_drift_params *params,
                          pw_drift *out)
{
	pw_drift_params def;
	if (!params) {
		pw_drift_params_default(&def);
		params = &def;
	}
	if (!out || (n && !x) || params->blocks < 4 || !(params->min_effect >= 0.0) ||
	    !(params->total_k >= 0.0) || !(params->fit_k > 0.0) || !isfinite(params->fit_k))
		return PW_ERR_INVALID;
	memset(out, 0, sizeof *out);
	if (!pw_stats_all_finite(x, n))
		return PW_ERR_INVALID;
	size_t nb = params->blocks;
	if (n < params->min_points || n < 4 * nb)
		return PW_OK;
	size_t wlen = n + 2 * nb * nb + 4 * nb;
	double *mem = malloc((wlen + 2 * nb) * sizeof *mem);
	if (!mem)
		return PW_ERR_NOMEM;
	double *bm = mem + wlen, *c = bm + nb, *w = mem;
	pw_status st = PW_OK;

	/* per-point noise from successive differences: blind to a trend and to a few steps */
	for (size_t i = 0; i + 1 < n; i++)
		w[i] = x[i + 1] - x[i];
	double dmed, dmad;
	st = pw_stats_median_mad(w, n - 1, w + n, &dmed, &dmad);
	if (st != PW_OK)
		goto out_free;
	out->noise = dmad / sqrt(2.0);

	size_t bsz = n / nb;
	for (size_t j = 0; j < nb; j++) {
		size_t lo = j * bsz, hi = j + 1 == nb ? n : lo + bsz;
		st = pw_stats_median(x + lo, hi - lo, w, &bm[j]);
		if (st != PW_OK)
			goto out_free;
		c[j] = 0.5 * (double)(lo + hi - 1);
	}
	double best = INFINITY, a = 0.0, b = 0.0;
	size_t bj = 0;
	for (size_t j0 = 0; j0 + 3 <= nb; j0++) {
		double ta = 0.0, tb = 0.0, t0 = (double)(j0 * bsz);
		double cost = hinge(bm, c, nb, j0, t0, w, &ta, &tb);
		if (cost < best && isfinite(cost)) {
			best = cost;
			bj = j0;
			a = ta;
			b = tb;
		}
	}
	double t0 = (double)(bj * bsz);
	for (size_t j = 0; j < nb; j++)
		w[j] = fabs(bm[j] - (c[j] < t0 ? a : a + b * (c[j] - t0)));
	double rmed;
	st = pw_stats_median(w, nb, w + nb, &rmed);
	if (st != PW_OK)
		goto out_free;
	double block_noise = 1.2533141373155003 * out->noise / sqrt((double)bsz);
	double floor_ = 1e-12 * (fabs(a) > 0 ? fabs(a) : 1.0);
	out->fit_ratio = PW_MAD_NORMAL_SCALE * rmed / (block_noise > floor_ ? block_noise : floor_);
	out->start = bj * bsz;
	out->level_before = a;
	out->rate = b;
	double total = b * (double)(n - out->start);
	if (a != 0.0) {
		out->rate_pct = 100.0 * b / fabs(a);
		out->total_pct = 100.0 * total / fabs(a);
	} else {
		out->rate_pct = out->total_pct = NAN;
	}
	out->found = a != 0.0 && out->fit_ratio <= params->fit_k &&
	             fabs(total) >= params->min_effect * fabs(a) &&
	             fabs(total) > params->total_k * out->noise;
out_free:
	free(mem);
	return st;
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
