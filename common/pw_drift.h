/*
 * pw_drift.h: tells a sustained trend from a staircase. The changepoint
 * detector (pw_changepoint.h) cuts a slow drift into a staircase of small
 * steps (issue 17: a +10% drift over 1,000 points gave about 17); this
 * module looks at the whole series and says whether "flat, then a straight
 * line" explains it as well as its own noise allows, and if so reports the
 * drift once: where it starts, its rate per point and its total.
 *
 * Pure function of its inputs; it allocates one workspace per call. The
 * reasoning is in docs/changepoints.md ("Drift").
 */
#ifndef PW_DRIFT_H
#define PW_DRIFT_H

#include <stdbool.h>
#include <stddef.h>

#include "pw_status.h"

typedef struct pw_drift_params {
	size_t blocks;     /* the series is summarised by this many block medians; 30 */
	size_t min_points; /* shorter series are never a drift; 60 */
	double min_effect; /* |total| / |level before| must reach this; 0.01 */
	double total_k;    /* |total| > total_k × the per-point noise; 5 */
	double fit_k;      /* block residuals about the hinge <= fit_k × a block median's noise; 1.8 */
} pw_drift_params;

void pw_drift_params_default(pw_drift_params *p);

typedef struct pw_drift {
	bool found;
	size_t start;        /* first point of the trend (0 when the whole series trends) */
	double level_before; /* the level at start */
	double rate;         /* change per point, in the data's unit */
	double rate_pct;     /* rate / |level_before| × 100: per nightly for nightly series */
	double total_pct;    /* rate × (n − start) / |level_before| × 100 */
	double noise;        /* per-point noise: MAD_n of successive differences / √2 */
	double fit_ratio;    /* block residual scale / a block median's expected noise */
} pw_drift;

/*
 * Looks for a drift in x[0..n) (oldest first). params NULL means the
 * defaults. PW_ERR_INVALID on a non-finite value or bad params, PW_ERR_NOMEM.
 * A series shorter than min_points, or one a hinge does not fit, gives
 * found = false (not an error).
 */
pw_status pw_drift_detect(const double *x, size_t n, const pw_drift_params *params,
                          pw_drift *out);

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
