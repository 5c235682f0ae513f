/*
 * pw_drift.h: tells a trend from steps. The changepoint detector
 * (pw_changepoint.h) explains a series as flat segments, so it cuts a slow
 * drift into a staircase of small steps (issue 17: a +10% drift over 1,000
 * points gave about 17) and a smooth curve from outside the field (a
 * population count, an exchange rate) into dozens. This module decides, for
 * the whole series, between two models penalised the same way: piecewise
 * constant (levels joined by steps) and piecewise linear (each segment a
 * level or a line). Where lines explain a stretch better, that stretch is a
 * trend: one drift finding, and the detector's steps inside it are its
 * staircase. Where levels do, every step stays a step, however many there are
 * and however regular.
 *
 * Pure functions of their inputs; each call allocates one workspace. The
 * reasoning is in docs/changepoints.md ("Steps or a drift").
 */
#ifndef PW_DRIFT_H
#define PW_DRIFT_H

#include <stdbool.h>
#include <stddef.h>

#include "pw_changepoint.h"
#include "pw_status.h"

typedef struct pw_drift_params {
	size_t min_points;     /* shorter series are never a trend; 60 */
	double min_effect;     /* a reported drift: |total| / |level before| >= this; 0.01 */
	double total_k;        /* ... and |total| > total_k × the per-point noise; 5 */
	double penalty;        /* β, the price of a segment boundary, in noise variances; 15 (PELT's) */
	double slope_penalty;  /* the price of a segment's slope; 7.5 = β/2, one parameter of two */
	size_t min_segment;    /* fewest points in a segment; 5 (the detector's) */
	size_t min_linear;     /* fewest points in a sloped segment; 20 */
	size_t max_grid;       /* segment boundaries are searched on at most this many points; 128 */
	double clip_k;         /* points clipped to their running median ± clip_k σ; 3 */
	size_t clip_halfwidth; /* half-width of that running median; 5 */
	size_t absorb_slack;   /* a step matches a boundary of the lines fit this near; 5 */
	double min_change;     /* a line moves by >= min_change σ over its segment, else a level; 2 */
	double jump_k;         /* a step in a trend stays a step where the lines jump >= jump_k σ; 4 */
	double max_wander;     /* lag-4 over lag-1 difference scale above this: wandering; 1.5 */
} pw_drift_params;

void pw_drift_params_default(pw_drift_params *p);

typedef struct pw_drift {
	bool trend;          /* lines explain [start, end) better than levels do */
	bool found;          /* ... and its change is large enough to report: one drift finding */
	bool wandering;      /* a trend whose noise wanders (a random walk): the whole series is trend */
	size_t start;        /* first point of the trend (0 when the whole series trends) */
	size_t end;          /* one past its last point (n when it runs to the newest) */
	double level_before; /* the fitted level at start */
	double level_after;  /* the fitted level at end − 1 */
	double rate;         /* (level_after − level_before) / (end − 1 − start): per point */
	double rate_pct;     /* rate / |level_before| × 100: per nightly for nightly series */
	double total_pct;    /* (level_after − level_before) / |level_before| × 100 */
	double noise;        /* per-point noise σ: 80th percentile of |Δx − median Δx| / (1.2816·√2) */
	double cost_steps;   /* penalised cost of the best piecewise-constant fit, in σ² */
	double cost_lines;   /* of the best fit whose segments may be lines (<= cost_steps) */
	size_t segments;     /* segments of that fit */
	size_t sloped;       /* how many of them are lines */
	double wander_ratio; /* lag-4 difference scale / lag-1: 1 for independent noise, 2 for a walk */
} pw_drift;

/*
 * Fits both models to x[0..n) (oldest first) and fills out. Segment
 * boundaries are searched on a grid of at most max_grid points and at the
 * indices of steps[0..nsteps) (the detector's answer for the same series, so
 * that both fits can place its steps exactly; NULL and 0 are allowed). params
 * NULL means the defaults. PW_ERR_INVALID on a non-finite value or bad
 * params, PW_ERR_NOMEM. A series shorter than min_points gives trend = found
 * = false (not an error).
 */
pw_status pw_drift_detect(const double *x, size_t n, const pw_changepoint *steps, size_t nsteps,
                          const pw_drift_params *params, pw_drift *out);

/*
 * The findings of a series: pw_drift_detect on x[0..n) and steps[0..nsteps)
 * (the detector's answer for the same series), and keep[j] says whether
 * steps[j] is reported as a step. Without a trend every step is kept; in a
 * wandering series none is; otherwise a step is kept where the lines fit
 * also jumps by >= jump_k σ (within absorb_slack), unless that jump is inside
 * the trend and goes its way (the trend's staircase). What `perfwatch changepoints` prints: the drift when
 * drift->found, and the steps kept. PW_ERR_INVALID as pw_drift_detect, or
 * when nsteps > 0 and keep is NULL.
 */
pw_status pw_drift_decide(const double *x, size_t n, const pw_changepoint *steps, size_t nsteps,
                          const pw_drift_params *params, pw_drift *drift, bool *keep);

/*
 * Theil–Sen slope of x[0..n) against its index: the median of the pairwise
 * slopes (x[j] − x[i]) / (j − i), i < j (scipy.stats.theilslopes(x).slope).
 * The watcher (services/watcher/watch.c) uses it to tell the flat treads of
 * a staircase from the rising stretches of a drift between reported steps.
 * n >= 2 and n <= 512 (it needs n(n−1)/2 doubles, allocated per call);
 * PW_ERR_INVALID on a non-finite value or a bad n, PW_ERR_NOMEM.
 */
pw_status pw_drift_theil_sen(const double *x, size_t n, double *slope);

#endif
