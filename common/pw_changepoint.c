/*
 * pw_changepoint.c: PELT (normal and robust costs), E-divisive means, the
 * level-shift post-filter, and the streaming form of PELT.
 *
 * Everything here is arithmetic on arrays the detector or stream owns; the
 * medians, MADs and Mann–Whitney tests of the post-filter are pw_stats.c's.
 * Batch detection and the stream run the same engine functions in the same
 * order, which is what makes a stream's answer equal the batch answer over its
 * window bit for bit. docs/changepoints.md explains the choices.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pw_changepoint.h"
#include "pw_stats.h"

/* Φ⁻¹(0.9): the 80th percentile of |Z| for Z ~ N(0, 1), since P(|Z| <= q) = 0.8. */
#define Q80_ABS_NORMAL 1.2815515655446004

void pw_cp_params_default(pw_cp_params *p)
{
	memset(p, 0, sizeof *p);
	p->method = PW_CP_PELT_ROBUST;
	p->min_segment = 5;
	p->penalty = 15.0;
	p->grid = 4;
	p->calibration = 30;
	p->clip_k = 3.0;
	p->clip_halfwidth = 5;
	p->alpha = 1e-5;
	p->min_effect = 0.005;
	p->min_noise_effect = 0.5;
	p->perm_alpha = 0.01;
	p->permutations = 199;
	p->seed = 0x5eed;
	p->max_changepoints = 0;
}

void pw_cp_early_params_default(pw_cp_early_params *p)
{
	p->k = 3;
	p->min_ref = 20;
	p->max_ref = 60;
	p->noise_k = 4.0;
	p->min_effect = 0.005;
	p->alpha = 1e-6;
}

pw_status pw_cp_early_shift(const double *ref, size_t m, const double *y, size_t k,
                            const pw_cp_early_params *params, pw_cp_early *out)
{
	if (!params || !out || !y || k == 0 || k != params->k || m > PW_CP_EARLY_MAX_REF ||
	    k > PW_CP_EARLY_MAX_REF ||
	    (m > 0 && !ref))
		return PW_ERR_INVALID;
	memset(out, 0, sizeof *out);
	if (!pw_stats_all_finite(y, k) || (m > 0 && !pw_stats_all_finite(ref, m)))
		return PW_ERR_INVALID;
	if (m < params->min_ref || m < 2)
		return PW_OK;
	double work[PW_CP_EARLY_MAX_REF];
	pw_status st = pw_stats_median_mad(ref, m, work, &out->level, &out->sigma);
	if (st != PW_OK)
		return st;
	out->threshold = fmax(params->min_effect * fabs(out->level), params->noise_k * out->sigma);
	out->side = y[0] > out->level ? 1 : -1;
	for (size_t i = 0; i < k; i++)
		if (out->side * (y[i] - out->level) <= out->threshold)
			return PW_OK;
	double yw[PW_CP_EARLY_MAX_REF];
	st = pw_stats_median(y, k, yw, &out->after);
	if (st != PW_OK)
		return st;
	pw_pred_result r;
	st = pw_stats_prediction_t(ref, m, y, k, out->side > 0 ? PW_ALT_GREATER : PW_ALT_LESS, &r);
	if (st == PW_ERR_INSUFFICIENT)
		return PW_OK; /* a constant reference: nothing to test against */
	if (st != PW_OK)
		return st;
	out->t = r.t;
	out->p = r.p;
	out->found = r.p <= params->alpha;
	return PW_OK;
}

pw_status pw_cp_params_check(const pw_cp_params *p, char *errbuf, size_t errlen)
{
	if (!p)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "changepoint params: NULL");
	if (p->method != PW_CP_PELT_ROBUST && p->method != PW_CP_PELT_NORMAL &&
	    p->method != PW_CP_EDIVISIVE)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "changepoint method %d unknown",
		               (int)p->method);
	if (p->min_segment < 2)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "min_segment %zu: must be >= 2",
		               p->min_segment);
	if (!(p->penalty > 0.0) || !isfinite(p->penalty))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "penalty %g: must be > 0", p->penalty);
	if (p->grid < 1 || p->grid > 64)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "grid %zu: must be in 1..64", p->grid);
	if (p->calibration < 3)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "calibration %zu: must be >= 3",
		               p->calibration);
	if (!(p->clip_k > 0.0) || !isfinite(p->clip_k))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "clip_k %g: must be > 0", p->clip_k);
	if (p->clip_halfwidth > 50)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "clip_halfwidth %zu: must be <= 50",
		               p->clip_halfwidth);
	if (!(p->alpha > 0.0 && p->alpha <= 1.0))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "alpha %g: must be in (0, 1]", p->alpha);
	if (!(p->perm_alpha > 0.0 && p->perm_alpha <= 1.0))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "perm_alpha %g: must be in (0, 1]",
		               p->perm_alpha);
	if (!(p->min_effect >= 0.0) || !isfinite(p->min_effect))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "min_effect %g: must be >= 0",
		               p->min_effect);
	if (!(p->min_noise_effect >= 0.0) || !isfinite(p->min_noise_effect))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "min_noise_effect %g: must be >= 0",
		               p->min_noise_effect);
	if (p->method == PW_CP_EDIVISIVE && p->permutations < 1)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "permutations: must be >= 1");
	return PW_OK;
}

/* ---- PRNG ----------------------------------------------------------------- */

/* splitmix64 (Steele, Lea & Flood 2014): tiny, seedable, good enough to shuffle. */
static uint64_t prng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Fisher–Yates; the draws are the same whichever scan consumes the result. */
static void shuffle(double *a, size_t n, uint64_t *state)
{
	for (size_t i = n; i > 1; i--) {
		double u = (double)(prng_next(state) >> 11) * 0x1.0p-53;
		size_t j = (size_t)(u * (double)i);
		double t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

/* ---- The engine shared by the detector and the stream --------------------- */

typedef struct cp_engine {
	pw_cp_params p;
	size_t cap;        /* points the arrays hold */
	double *x;         /* raw points (cap) */
	double *s1, *s2;   /* prefix sums of the transformed, scaled points (cap + 1) */
	double *f;         /* PELT optimal cost at t (cap + 1) */
	size_t *last;      /* PELT last changepoint before t (cap + 1) */
	size_t *r, *r2;    /* candidate sets: the kept one and a scratch copy (cap + 1) */
	double *v;         /* per-candidate costs of one step (cap + 1) */
	double *work;      /* statistics workspace (4·cap + 64) */
	double *buf;       /* E-divisive shuffle buffer / row sums (2·cap) */
	size_t *cps;       /* changepoint indices (cap + 2) */
	double *cp_p;      /* per-changepoint p for E-divisive (cap + 2) */
	double *seg_med, *seg_mad; /* post-filter per-segment stats (cap + 2) */
	double *cand_p;    /* post-filter per-candidate p (cap + 2) */
	double scale, y0;  /* noise scale and centre from the calibration prefix */
} cp_engine;

static void engine_release(cp_engine *e)
{
	free(e->x);
	free(e->s1);
	free(e->s2);
	free(e->f);
	free(e->last);
	free(e->r);
	free(e->r2);
	free(e->v);
	free(e->work);
	free(e->buf);
	free(e->cps);
	free(e->cp_p);
	free(e->seg_med);
	free(e->seg_mad);
	free(e->cand_p);
	memset(e, 0, sizeof *e);
}

/* Sizes every array for cap points; keeps params. */
static pw_status engine_reserve(cp_engine *e, size_t cap)
{
	if (cap <= e->cap && e->x)
		return PW_OK;
	pw_cp_params p = e->p;
	engine_release(e);
	e->p = p;
	if (cap < 16)
		cap = 16;
	e->cap = cap;
	e->x = malloc(cap * sizeof *e->x);
	e->s1 = malloc((cap + 1) * sizeof *e->s1);
	e->s2 = malloc((cap + 1) * sizeof *e->s2);
	e->f = malloc((cap + 1) * sizeof *e->f);
	e->last = malloc((cap + 1) * sizeof *e->last);
	e->r = malloc((cap + 1) * sizeof *e->r);
	e->r2 = malloc((cap + 1) * sizeof *e->r2);
	e->v = malloc((cap + 1) * sizeof *e->v);
	e->work = malloc((4 * cap + 64) * sizeof *e->work);
	e->buf = malloc(2 * cap * sizeof *e->buf);
	e->cps = malloc((cap + 2) * sizeof *e->cps);
	e->cp_p = malloc((cap + 2) * sizeof *e->cp_p);
	e->seg_med = malloc((cap + 2) * sizeof *e->seg_med);
	e->seg_mad = malloc((cap + 2) * sizeof *e->seg_mad);
	e->cand_p = malloc((cap + 2) * sizeof *e->cand_p);
	if (!e->x || !e->s1 || !e->s2 || !e->f || !e->last || !e->r || !e->r2 || !e->v ||
	    !e->work || !e->buf || !e->cps || !e->cp_p || !e->seg_med || !e->seg_mad ||
	    !e->cand_p) {
		engine_release(e);
		e->p = p;
		return PW_ERR_NOMEM;
	}
	return PW_OK;
}

/*
 * Noise scale from the first differences of x[0..n): differences cancel any
 * level, so a step inside the prefix does not inflate the scale. The 80th
 * percentile of |d| rather than the median: a bimodal series switches modes on
 * a large fraction of its steps and must show up as noisy, not as quiet data
 * with many level shifts; a few outliers still move it little.
 */
static void engine_calibrate(cp_engine *e, size_t n)
{
	double *d = e->work, *w = e->work + e->cap;
	double centre = e->x[0], scale = 0.0;
	if (n >= 1)
		(void)pw_stats_median(e->x, n, w, &centre);
	if (n >= 2) {
		double sum = 0.0;
		for (size_t i = 0; i + 1 < n; i++) {
			d[i] = fabs(e->x[i + 1] - e->x[i]);
			sum += d[i];
		}
		double q;
		if (pw_stats_quantile(d, n - 1, 0.8, w, &q) == PW_OK)
			scale = q / (Q80_ABS_NORMAL * M_SQRT2);
		if (!(scale > 0.0)) /* quantised data: fall back to the mean |d| (E|d| = 2σ/√π) */
			scale = sum / (double)(n - 1) * sqrt(M_PI) / 2.0;
	}
	/* A constant prefix has no noise: anything else is then a clear shift. */
	double floor = 1e-6 * fabs(centre);
	if (floor < 1e-300)
		floor = 1e-300;
	if (!(scale > floor))
		scale = floor;
	e->scale = scale;
	e->y0 = centre;
}

/*
 * Transformed value of point i when n points exist. Robust cost: the point is
 * clipped to its running median ± clip_k·scale (Huber's ψ), the window centred
 * and truncated at both ends; the median filter keeps steps sharp while a lone
 * outlier is pulled back into the band and cannot pay for a segment.
 */
static void engine_transform(cp_engine *e, size_t i, size_t n)
{
	double v = e->x[i];
	if (e->p.method == PW_CP_PELT_ROBUST && e->p.clip_halfwidth > 0) {
		size_t h = e->p.clip_halfwidth;
		size_t lo = i >= h ? i - h : 0, hi = i + h < n ? i + h : n - 1;
		double band = e->p.clip_k * e->scale;
		/*
		 * The median is within ±band of v unless at least half the window lies
		 * beyond v ± band; counting settles that for most points without
		 * computing the median (the result is the same either way).
		 */
		size_t w = hi - lo + 1, lim = (w + 1) / 2 - 1, above = 0, below = 0;
		for (size_t j = lo; j <= hi; j++) {
			above += e->x[j] > v + band;
			below += e->x[j] < v - band;
		}
		if (above > lim || below > lim) {
			double med = v;
			(void)pw_stats_median(e->x + lo, w, e->work, &med);
			if (v > med + band)
				v = med + band;
			else if (v < med - band)
				v = med - band;
		}
	}
	double z = (v - e->y0) / e->scale;
	e->s1[i + 1] = e->s1[i] + z;
	e->s2[i + 1] = e->s2[i] + z * z;
}

/* Normal mean-shift cost of points [s, t): the residual sum of squares. */
static inline double seg_cost(const cp_engine *e, size_t s, size_t t)
{
	double m = (double)(t - s);
	double d = e->s1[t] - e->s1[s];
	double c = (e->s2[t] - e->s2[s]) - d * d / m;
	return c > 0.0 ? c : 0.0;
}

static void engine_pelt_start(cp_engine *e, size_t *r, size_t *rn)
{
	e->s1[0] = e->s2[0] = 0.0;
	e->f[0] = -e->p.penalty;
	e->last[0] = 0;
	r[0] = 0;
	*rn = 1;
}

/*
 * One PELT step at t over candidate set r: F(t) = min_s F(s) + C(s, t) + β,
 * then prunes every s with F(s) + C(s, t) > F(t) (Killick et al.'s condition,
 * K = 0 for this cost). Candidates closer than min_segment are kept untouched.
 * add: whether t joins the set (grid points do; the final t = n need not).
 */
static void engine_pelt_step(cp_engine *e, size_t t, size_t *r, size_t *rn, bool add)
{
	size_t ms = e->p.min_segment, n = *rn;
	double best = INFINITY;
	size_t arg = 0;
	for (size_t k = 0; k < n; k++) {
		size_t s = r[k];
		if (t - s < ms) {
			e->v[k] = -INFINITY;
			continue;
		}
		double val = e->f[s] + seg_cost(e, s, t);
		e->v[k] = val;
		if (val < best) {
			best = val;
			arg = s;
		}
	}
	if (isinf(best)) {
		e->f[t] = INFINITY;
		e->last[t] = 0;
		return;
	}
	double ft = best + e->p.penalty;
	e->f[t] = ft;
	e->last[t] = arg;
	size_t kept = 0;
	for (size_t k = 0; k < n; k++)
		if (e->v[k] <= ft)
			r[kept++] = r[k];
	if (add)
		r[kept++] = t;
	*rn = kept;
}

/* PELT steps at every grid point in (from, to] and at to itself. */
static void engine_pelt_run(cp_engine *e, size_t from, size_t to, size_t *r, size_t *rn)
{
	size_t g = e->p.grid;
	for (size_t t = (from / g + 1) * g; t <= to; t += g)
		engine_pelt_step(e, t, r, rn, true);
	if (to % g != 0)
		engine_pelt_step(e, to, r, rn, false);
}

/*
 * Backtracks the changepoints of [0, n) into e->cps, then moves each to the
 * exact best index within one grid step (the two-segment cost between its
 * neighbours), left to right. Returns the count.
 */
static size_t engine_backtrack(cp_engine *e, size_t n)
{
	size_t k = 0;
	if (!isfinite(e->f[n]))
		return 0;
	for (size_t t = n; e->last[t] != 0; t = e->last[t])
		e->cps[k++] = e->last[t];
	for (size_t i = 0; i < k / 2; i++) {
		size_t tmp = e->cps[i];
		e->cps[i] = e->cps[k - 1 - i];
		e->cps[k - 1 - i] = tmp;
	}
	size_t g = e->p.grid, ms = e->p.min_segment;
	double pen = e->p.penalty;
	/*
	 * A true changepoint between grid points can come back as two cuts around
	 * a short mixed segment: merge such a pair into the best single cut when
	 * that is cheaper, penalty included.
	 */
	for (size_t j = 0; g > 1 && j + 1 < k; j++) {
		size_t c1 = e->cps[j], c2 = e->cps[j + 1];
		if (c2 - c1 > 2 * g)
			continue;
		size_t a = j ? e->cps[j - 1] : 0, b = j + 2 < k ? e->cps[j + 2] : n;
		double pair = seg_cost(e, a, c1) + seg_cost(e, c1, c2) + seg_cost(e, c2, b) + pen;
		size_t lo = c1 > a + ms ? c1 : a + ms, hi = c2 + ms <= b ? c2 : b - ms, arg = 0;
		double best = INFINITY;
		for (size_t tau = lo; tau <= hi; tau++) {
			double v = seg_cost(e, a, tau) + seg_cost(e, tau, b);
			if (v < best) {
				best = v;
				arg = tau;
			}
		}
		if (best <= pair) {
			e->cps[j] = arg;
			memmove(e->cps + j + 1, e->cps + j + 2, (k - j - 2) * sizeof *e->cps);
			k--;
		}
	}
	if (g > 1) {
		for (size_t j = 0; j < k; j++) {
			size_t a = j ? e->cps[j - 1] : 0, b = j + 1 < k ? e->cps[j + 1] : n;
			size_t c = e->cps[j];
			size_t lo = c >= g - 1 ? c - (g - 1) : 0, hi = c + (g - 1);
			if (lo < a + ms)
				lo = a + ms;
			if (hi + ms > b)
				hi = b - ms;
			double best = seg_cost(e, a, c) + seg_cost(e, c, b);
			for (size_t tau = lo; tau <= hi; tau++) {
				double v = seg_cost(e, a, tau) + seg_cost(e, tau, b);
				if (v < best) {
					best = v;
					c = tau;
				}
			}
			e->cps[j] = c;
		}
	}
	return k;
}

/* Full PELT over e->x[0..n), as the stream would reach it. */
static size_t engine_pelt_batch(cp_engine *e, size_t n)
{
	size_t rn;
	size_t calib = n < e->p.calibration ? n : e->p.calibration;
	engine_calibrate(e, calib);
	engine_pelt_start(e, e->r, &rn);
	for (size_t i = 0; i < n; i++)
		engine_transform(e, i, n);
	engine_pelt_run(e, 0, n, e->r, &rn);
	return engine_backtrack(e, n);
}

/* ---- The level-shift post-filter ------------------------------------------ */

static void segment_stats(cp_engine *e, size_t a, size_t b, double *med, double *mad)
{
	if (pw_stats_median_mad(e->x + a, b - a, e->work, med, mad) != PW_OK) {
		*med = NAN;
		*mad = NAN;
	}
}

/* Mann–Whitney two-sided p of segment [b, c) against [a, b). */
static double segment_p(cp_engine *e, size_t a, size_t b, size_t c)
{
	pw_mwu_result r;
	if (pw_stats_mann_whitney(e->x + b, c - b, e->x + a, b - a, PW_ALT_TWO_SIDED,
	                          PW_MWU_NORMAL, e->work, &r) != PW_OK)
		return 1.0;
	return r.p;
}

/*
 * A young last segment (fewer than 2·min_segment points) is still growing: it
 * must be settled, every point within clip_k MAD_n of its median, else the
 * series is still moving at its end (a fix in the last two runs, say) and the
 * cut PELT had to place min_segment back would misreport it.
 */
static bool tail_settled(const cp_engine *e, size_t a, size_t n, double med, double noise)
{
	if (n - a >= 2 * e->p.min_segment)
		return true;
	for (size_t i = a; i < n; i++)
		if (fabs(e->x[i] - med) > e->p.clip_k * noise)
			return false;
	return true;
}

static bool candidate_passes(const cp_engine *e, size_t j, size_t k, size_t n, double *strength)
{
	double before = e->seg_med[j], after = e->seg_med[j + 1];
	double delta = fabs(after - before);
	double noise = fmax(e->seg_mad[j], e->seg_mad[j + 1]);
	*strength = noise > 0.0 ? delta / noise : INFINITY;
	if (!(e->cand_p[j] <= e->p.alpha))
		return false;
	if (!(delta > 0.0))
		return false;
	if (before != 0.0 && delta < e->p.min_effect * fabs(before))
		return false;
	if (delta < e->p.min_noise_effect * noise)
		return false;
	return j + 1 < k || tail_settled(e, e->cps[j], n, after, noise);
}

/*
 * Keeps only level shifts among the k candidates in e->cps: each must separate
 * its two adjacent segments by Mann–Whitney (p <= alpha), by a relative effect
 * of at least min_effect and by min_noise_effect × the segments' MAD_n. The
 * weakest failure is dropped first and its neighbours merge and are re-tested,
 * so a noise change (many cuts, no level difference) melts away entirely.
 * Writes the survivors to out.
 */
static size_t engine_filter(cp_engine *e, size_t n, size_t k, bool keep_perm_p,
                            pw_changepoint *out, size_t cap)
{
	/* Boundaries: bnd(j) = j == 0 ? 0 : cps[j-1]; segments j = 0..k. */
#define BND(j) ((j) == 0 ? 0 : ((j) > k ? n : e->cps[(j) - 1]))
	for (size_t j = 0; j <= k; j++)
		segment_stats(e, BND(j), BND(j + 1), &e->seg_med[j], &e->seg_mad[j]);
	for (size_t j = 0; j < k; j++)
		e->cand_p[j] = segment_p(e, BND(j), BND(j + 1), BND(j + 2));
	for (;;) {
		size_t worst = k;
		double worst_p = -1.0, worst_s = INFINITY;
		for (size_t j = 0; j < k; j++) {
			double s;
			if (candidate_passes(e, j, k, n, &s))
				continue;
			if (e->cand_p[j] > worst_p || (e->cand_p[j] == worst_p && s < worst_s)) {
				worst = j;
				worst_p = e->cand_p[j];
				worst_s = s;
			}
		}
		if (worst == k)
			break;
		/* Drop candidate `worst`: segments worst and worst+1 merge. */
		memmove(e->cps + worst, e->cps + worst + 1, (k - worst - 1) * sizeof *e->cps);
		memmove(e->cp_p + worst, e->cp_p + worst + 1, (k - worst - 1) * sizeof *e->cp_p);
		memmove(e->cand_p + worst, e->cand_p + worst + 1,
		        (k - worst - 1) * sizeof *e->cand_p);
		memmove(e->seg_med + worst + 1, e->seg_med + worst + 2,
		        (k - worst - 1) * sizeof *e->seg_med);
		memmove(e->seg_mad + worst + 1, e->seg_mad + worst + 2,
		        (k - worst - 1) * sizeof *e->seg_mad);
		k--;
		segment_stats(e, BND(worst), BND(worst + 1), &e->seg_med[worst], &e->seg_mad[worst]);
		if (worst > 0)
			e->cand_p[worst - 1] = segment_p(e, BND(worst - 1), BND(worst), BND(worst + 1));
		if (worst < k)
			e->cand_p[worst] = segment_p(e, BND(worst), BND(worst + 1), BND(worst + 2));
	}
	for (size_t j = 0; j < k && j < cap; j++) {
		pw_changepoint *c = &out[j];
		c->index = e->cps[j];
		c->before = e->seg_med[j];
		c->after = e->seg_med[j + 1];
		c->rel_change = c->before != 0.0 ? (c->after - c->before) / fabs(c->before) : NAN;
		c->p = keep_perm_p ? e->cp_p[j] : e->cand_p[j];
		c->noise = fmax(e->seg_mad[j], e->seg_mad[j + 1]);
	}
#undef BND
	return k;
}

/* ---- E-divisive means ----------------------------------------------------- */

/*
 * Q(τ) of Matteson & James (2014) with α = 1 for X = [a, τ), Y = [τ, b):
 * n1·n2/(n1+n2) · (2/(n1 n2)·ΣΣ|X−Y| − 2/(n1(n1−1))·Σ|X−X'| − 2/(n2(n2−1))·Σ|Y−Y'|).
 */
static double energy_q(double wl, double wr, double bsum, size_t n1, size_t n2)
{
	double a = (double)n1, b = (double)n2;
	double e = 2.0 * bsum / (a * b) - 2.0 * wl / (a * (a - 1.0)) - 2.0 * wr / (b * (b - 1.0));
	return a * b / (a + b) * e;
}

/*
 * Best split of y[0..m) in O(m²): row sums once, then τ sweeps left to right
 * moving one point from Y to X, updating the within sums by that point's
 * distances to its left (computed) and right (row sum minus left) neighbours.
 * rows holds m doubles.
 */
static double edivisive_scan_fast(const double *y, size_t m, size_t ms, double *rows,
                                  size_t *tau_out)
{
	double total = 0.0;
	for (size_t i = 0; i < m; i++) {
		double s = 0.0;
		for (size_t j = 0; j < m; j++)
			s += fabs(y[i] - y[j]);
		rows[i] = s;
		total += s;
	}
	total *= 0.5;
	double wl = 0.0, wr = total, best = -INFINITY;
	size_t arg = 0;
	for (size_t tau = 1; tau < m; tau++) {
		size_t q = tau - 1; /* the point moving from Y to X */
		double left = 0.0;
		for (size_t i = 0; i < q; i++)
			left += fabs(y[i] - y[q]);
		wl += left;
		wr -= rows[q] - left;
		if (tau < ms || m - tau < ms)
			continue;
		double v = energy_q(wl, wr, total - wl - wr, tau, m - tau);
		if (v > best) {
			best = v;
			arg = tau;
		}
	}
	*tau_out = arg;
	return best;
}

/* The same statistic with every sum recomputed from its pairs: O(m²) per split. */
static double edivisive_scan_naive(const double *y, size_t m, size_t ms, double *rows,
                                   size_t *tau_out)
{
	(void)rows;
	double best = -INFINITY;
	size_t arg = 0;
	for (size_t tau = ms; tau + ms <= m; tau++) {
		double wl = 0.0, wr = 0.0, bs = 0.0;
		for (size_t i = 0; i < tau; i++)
			for (size_t j = i + 1; j < tau; j++)
				wl += fabs(y[i] - y[j]);
		for (size_t i = tau; i < m; i++)
			for (size_t j = i + 1; j < m; j++)
				wr += fabs(y[i] - y[j]);
		for (size_t i = 0; i < tau; i++)
			for (size_t j = tau; j < m; j++)
				bs += fabs(y[i] - y[j]);
		double v = energy_q(wl, wr, bs, tau, m - tau);
		if (v > best) {
			best = v;
			arg = tau;
		}
	}
	*tau_out = arg;
	return best;
}

typedef double (*edivisive_scan_fn)(const double *y, size_t m, size_t ms, double *rows,
                                    size_t *tau_out);

/*
 * Hierarchical E-divisive over x[0..n): the best split over all current
 * segments, accepted while its permutation p (each segment shuffled on its
 * own, the maximum over segments compared, as in the ecp package) is <=
 * perm_alpha. cps/cp_p receive the sorted changepoints and their p. Scratch:
 * seg_q/seg_tau (n + 2 each, the cached best split per segment), buf (2n).
 * Returns the count.
 */
static size_t edivisive_run(const pw_cp_params *p, const double *x, size_t n, size_t *cps,
                            double *cp_p, double *seg_q, size_t *seg_tau, double *buf,
                            edivisive_scan_fn scan)
{
	size_t ms = p->min_segment, k = 0;
	uint64_t rng = p->seed;
	double *shuf = buf, *rows = buf + n;
	/* Segment j is [bnd(j), bnd(j+1)) with bnd(0) = 0, bnd(k+1) = n. */
#define BND(j) ((j) == 0 ? 0 : ((j) > k ? n : cps[(j) - 1]))
	seg_q[0] = -INFINITY;
	if (n >= 2 * ms)
		seg_q[0] = scan(x, n, ms, rows, &seg_tau[0]);
	for (;;) {
		if (p->max_changepoints && k >= p->max_changepoints)
			break;
		size_t best = k + 1;
		double q = -INFINITY;
		for (size_t j = 0; j <= k; j++)
			if (seg_q[j] > q) {
				q = seg_q[j];
				best = j;
			}
		if (best > k || !isfinite(q))
			break;
		unsigned hits = 0, limit = (unsigned)(p->perm_alpha * (p->permutations + 1.0));
		for (unsigned r = 0; r < p->permutations && hits + 1 <= limit; r++) {
			double qmax = -INFINITY;
			for (size_t j = 0; j <= k; j++) {
				size_t a = BND(j), m = BND(j + 1) - a, tau;
				if (m < 2 * ms)
					continue;
				memcpy(shuf, x + a, m * sizeof *shuf);
				shuffle(shuf, m, &rng);
				double v = scan(shuf, m, ms, rows, &tau);
				if (v > qmax)
					qmax = v;
			}
			if (qmax >= q)
				hits++;
		}
		double pval = (hits + 1.0) / (p->permutations + 1.0);
		if (hits + 1 > limit || pval > p->perm_alpha)
			break;
		/* Split segment `best` at its τ: it becomes two segments. */
		size_t a = BND(best), b = BND(best + 1), cut = a + seg_tau[best];
		memmove(cps + best + 1, cps + best, (k - best) * sizeof *cps);
		memmove(cp_p + best + 1, cp_p + best, (k - best) * sizeof *cp_p);
		memmove(seg_q + best + 2, seg_q + best + 1, (k - best) * sizeof *seg_q);
		memmove(seg_tau + best + 2, seg_tau + best + 1, (k - best) * sizeof *seg_tau);
		cps[best] = cut;
		cp_p[best] = pval;
		k++;
		seg_q[best] = seg_q[best + 1] = -INFINITY;
		if (cut - a >= 2 * ms)
			seg_q[best] = scan(x + a, cut - a, ms, rows, &seg_tau[best]);
		if (b - cut >= 2 * ms)
			seg_q[best + 1] = scan(x + cut, b - cut, ms, rows, &seg_tau[best + 1]);
	}
#undef BND
	return k;
}

/* ---- Detector ------------------------------------------------------------- */

struct pw_cp_detector {
	cp_engine e;
	size_t *seg_tau; /* E-divisive scratch (cap + 2) */
	size_t tau_cap;
};

pw_status pw_cp_detector_new(const pw_cp_params *params, size_t size_hint, pw_cp_detector **out,
                             char *errbuf, size_t errlen)
{
	pw_cp_params defaults;
	if (!params) {
		pw_cp_params_default(&defaults);
		params = &defaults;
	}
	pw_status st = pw_cp_params_check(params, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_cp_detector *d = calloc(1, sizeof *d);
	if (!d)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "changepoint detector: out of memory");
	d->e.p = *params;
	st = engine_reserve(&d->e, size_hint);
	if (st != PW_OK)
		goto fail_free;
	*out = d;
	return PW_OK;
fail_free:
	free(d);
	return pw_fail(st, errbuf, errlen, "changepoint detector: out of memory");
}

void pw_cp_detector_free(pw_cp_detector *d)
{
	if (!d)
		return;
	engine_release(&d->e);
	free(d->seg_tau);
	free(d);
}

static pw_status check_input(const double *x, size_t n, char *errbuf, size_t errlen)
{
	if (n > 0 && !x)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "changepoints: NULL series");
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "changepoints: point %zu is not finite", i);
	return PW_OK;
}

static pw_status detector_prepare(pw_cp_detector *d, const double *x, size_t n, char *errbuf,
                                  size_t errlen)
{
	pw_status st = check_input(x, n, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (engine_reserve(&d->e, n) != PW_OK)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "changepoints: out of memory");
	if (d->tau_cap < d->e.cap + 2) {
		free(d->seg_tau);
		d->seg_tau = malloc((d->e.cap + 2) * sizeof *d->seg_tau);
		if (!d->seg_tau) {
			d->tau_cap = 0;
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "changepoints: out of memory");
		}
		d->tau_cap = d->e.cap + 2;
	}
	if (n > 0)
		memcpy(d->e.x, x, n * sizeof *x);
	return PW_OK;
}

pw_status pw_cp_detect(pw_cp_detector *d, const double *x, size_t n, pw_changepoint *out,
                       size_t cap, size_t *count, char *errbuf, size_t errlen)
{
	*count = 0;
	pw_status st = detector_prepare(d, x, n, errbuf, errlen);
	if (st != PW_OK)
		return st;
	cp_engine *e = &d->e;
	if (n < 2 * e->p.min_segment)
		return PW_OK;
	size_t k;
	bool perm = e->p.method == PW_CP_EDIVISIVE;
	if (perm)
		k = edivisive_run(&e->p, e->x, n, e->cps, e->cp_p, e->v, d->seg_tau, e->buf,
		                  edivisive_scan_fast);
	else
		k = engine_pelt_batch(e, n);
	*count = engine_filter(e, n, k, perm, out, cap);
	return PW_OK;
}

/* Raw E-divisive output (no level-shift filter) with segment medians filled in. */
static size_t edivisive_report(const double *x, size_t n, const size_t *cps, const double *cp_p,
                               size_t k, double *work, pw_changepoint *out, size_t cap)
{
	for (size_t j = 0; j < k && j < cap; j++) {
		size_t a = j ? cps[j - 1] : 0, b = cps[j], c = j + 1 < k ? cps[j + 1] : n;
		double m1 = NAN, m2 = NAN, d1 = NAN, d2 = NAN;
		(void)pw_stats_median_mad(x + a, b - a, work, &m1, &d1);
		(void)pw_stats_median_mad(x + b, c - b, work, &m2, &d2);
		out[j].index = b;
		out[j].before = m1;
		out[j].after = m2;
		out[j].rel_change = m1 != 0.0 ? (m2 - m1) / fabs(m1) : NAN;
		out[j].p = cp_p[j];
		out[j].noise = fmax(d1, d2);
	}
	return k;
}

pw_status pw_cp_edivisive_raw(pw_cp_detector *d, const double *x, size_t n, pw_changepoint *out,
                              size_t cap, size_t *count, char *errbuf, size_t errlen)
{
	*count = 0;
	pw_status st = detector_prepare(d, x, n, errbuf, errlen);
	if (st != PW_OK)
		return st;
	cp_engine *e = &d->e;
	size_t k = edivisive_run(&e->p, e->x, n, e->cps, e->cp_p, e->v, d->seg_tau, e->buf,
	                         edivisive_scan_fast);
	*count = edivisive_report(e->x, n, e->cps, e->cp_p, k, e->work, out, cap);
	return PW_OK;
}

pw_status pw_cp_edivisive_naive(const pw_cp_params *params, const double *x, size_t n,
                                pw_changepoint *out, size_t cap, size_t *count, char *errbuf,
                                size_t errlen)
{
	*count = 0;
	pw_status st = pw_cp_params_check(params, errbuf, errlen);
	if (st == PW_OK)
		st = check_input(x, n, errbuf, errlen);
	if (st != PW_OK)
		return st;
	size_t len = n + 2;
	size_t *cps = malloc(len * sizeof *cps), *tau = malloc(len * sizeof *tau);
	double *cp_p = malloc(len * sizeof *cp_p), *q = malloc(len * sizeof *q);
	double *buf = malloc((2 * n + 2) * sizeof *buf), *work = malloc((n + 2) * sizeof *work);
	if (!cps || !tau || !cp_p || !q || !buf || !work) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "edivisive: out of memory");
		goto out_free;
	}
	size_t k = edivisive_run(params, x, n, cps, cp_p, q, tau, buf, edivisive_scan_naive);
	*count = edivisive_report(x, n, cps, cp_p, k, work, out, cap);
out_free:
	free(cps);
	free(tau);
	free(cp_p);
	free(q);
	free(buf);
	free(work);
	return st;
}

/* ---- Stream --------------------------------------------------------------- */

struct pw_cp_stream {
	cp_engine e;
	size_t n;        /* points in the window */
	size_t offset;   /* absolute index of window[0] */
	size_t nf;       /* points transformed for good (their clip window is complete) */
	size_t rn;       /* size of the kept candidate set e.r */
	bool calibrated;
};

pw_status pw_cp_stream_new(const pw_cp_params *params, size_t max_points, pw_cp_stream **out,
                           char *errbuf, size_t errlen)
{
	pw_cp_params defaults;
	if (!params) {
		pw_cp_params_default(&defaults);
		params = &defaults;
	}
	pw_status st = pw_cp_params_check(params, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (params->method == PW_CP_EDIVISIVE)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "changepoint stream: E-divisive does not stream; use PELT");
	if (max_points < 4 * params->min_segment || max_points < 2 * params->calibration)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "changepoint stream: max_points %zu too small (need >= %zu)", max_points,
		               4 * params->min_segment > 2 * params->calibration
		                   ? 4 * params->min_segment
		                   : 2 * params->calibration);
	pw_cp_stream *s = calloc(1, sizeof *s);
	if (!s)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "changepoint stream: out of memory");
	s->e.p = *params;
	if (engine_reserve(&s->e, max_points) != PW_OK) {
		free(s);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "changepoint stream: out of memory");
	}
	s->e.cap = max_points; /* the window size, even if reserve rounded up */
	*out = s;
	return PW_OK;
}

void pw_cp_stream_free(pw_cp_stream *s)
{
	if (!s)
		return;
	engine_release(&s->e);
	free(s);
}

/* Brings the kept state up to date with the window: calibration, then finalised points. */
static void stream_advance(pw_cp_stream *s)
{
	cp_engine *e = &s->e;
	size_t h = e->p.method == PW_CP_PELT_ROBUST ? e->p.clip_halfwidth : 0;
	if (!s->calibrated) {
		if (s->n < e->p.calibration)
			return;
		engine_calibrate(e, e->p.calibration);
		engine_pelt_start(e, e->r, &s->rn);
		s->nf = 0;
		s->calibrated = true;
	}
	while (s->nf + h < s->n) {
		engine_transform(e, s->nf, s->n);
		s->nf++;
		if (s->nf % e->p.grid == 0)
			engine_pelt_step(e, s->nf, e->r, &s->rn, true);
	}
}

pw_status pw_cp_stream_append(pw_cp_stream *s, double x, char *errbuf, size_t errlen)
{
	if (!isfinite(x))
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "changepoint stream: point %zu is not finite",
		               s->offset + s->n);
	cp_engine *e = &s->e;
	if (s->n == e->cap) {
		/* Window full: keep the newer half and rebuild the state over it. */
		size_t keep = e->cap / 2, drop = s->n - keep;
		memmove(e->x, e->x + drop, keep * sizeof *e->x);
		s->offset += drop;
		s->n = keep;
		s->calibrated = false;
		s->nf = 0;
		s->rn = 0;
		stream_advance(s);
	}
	e->x[s->n++] = x;
	stream_advance(s);
	return PW_OK;
}

pw_status pw_cp_stream_changepoints(pw_cp_stream *s, pw_changepoint *out, size_t cap,
                                    size_t *count, char *errbuf, size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	cp_engine *e = &s->e;
	size_t n = s->n, k;
	*count = 0;
	if (n < 2 * e->p.min_segment)
		return PW_OK;
	if (!s->calibrated) {
		k = engine_pelt_batch(e, n); /* fewer points than the calibration prefix */
	} else {
		/* The last points' clip windows are still open: finish them in scratch. */
		for (size_t i = s->nf; i < n; i++)
			engine_transform(e, i, n);
		size_t rn = s->rn;
		memcpy(e->r2, e->r, rn * sizeof *e->r);
		size_t from = s->nf - s->nf % e->p.grid;
		if (n > from)
			engine_pelt_run(e, from, n, e->r2, &rn);
		k = engine_backtrack(e, n);
	}
	k = engine_filter(e, n, k, false, out, cap);
	for (size_t j = 0; j < k && j < cap; j++)
		out[j].index += s->offset;
	*count = k;
	return PW_OK;
}

const double *pw_cp_stream_window(const pw_cp_stream *s, size_t *n, size_t *offset)
{
	if (n)
		*n = s->n;
	if (offset)
		*offset = s->offset;
	return s->e.x;
}
