/*
 * pw_confirm.h: the decision of a confirmation rerun (issue 17).
 *
 * The baseliner raises an outlier alert when a nightly point leaves its
 * series' band (baseline median ± k·σ, k = baseliner.outlier_k, 5 by
 * default). When no infra cause explains it the bisector reruns the same
 * build at the exact config n times (a CONFIRM BisectJob) and decides here:
 * the outlier is reproduced when the median of the reruns also sits beyond
 * the band, on the side the point left it; otherwise it was not (an infra
 * hiccup). Plain functions of their inputs, unit-tested against values
 * computed by hand (tests/unit/test_confirm.c); services/bisector/confirm.c
 * feeds them from PostgreSQL.
 */
#ifndef PW_CONFIRM_H
#define PW_CONFIRM_H

#include <stdbool.h>
#include <stddef.h>

#include "pw_status.h"

/* The band the outlier left. */
typedef struct pw_confirm_band {
	double median;  /* the baseline median, in unit */
	double sigma;   /* the σ the outlier rule measured against, in unit (> 0) */
	double k;       /* the rule's multiple (> 0) */
	double lo, hi;  /* median ∓ k·σ */
	int side;       /* +1: the point was above hi, -1: below lo */
} pw_confirm_band;

/*
 * The band of an outlier alert: its baseline median, its point (observed
 * value) and robust z (the alert's delta.z_robust, (point − median) / σ). σ
 * is |point − median| / |z| — the σ the baseliner used, floors included —
 * or, when z is 0 or not finite, mad (the baseline's normalised MAD). k is
 * the band's multiple. PW_ERR_INVALID when a value is not finite, σ is not
 * > 0, k is not > 0, or the point is not outside the band (nothing to
 * confirm).
 */
pw_status pw_confirm_band_of(double median, double point, double z, double mad, double k,
                             pw_confirm_band *out);

/*
 * Where the level the newest point belongs to began: x[0..n) are a series'
 * nightly values in time order, the outlier last. Returns k in 1..n-1, the
 * first point of the newest level, from the best single split (the k that
 * minimises the two segments' summed squared deviations from their means;
 * on a tie the later k): the previous nightly when the outlier alone left
 * the old level (k = n-1), an earlier one when the nightlies before it
 * already sat at its level — the shift was small enough that its first
 * nightlies stayed inside the band, or the alert came late. Non-finite
 * values are not expected (the ingester refuses them). n < 2: returns n - 1
 * clamped at 0.
 */
size_t pw_confirm_shift_start(const double *x, size_t n);

/*
 * Whether an outlier belongs to a finding already made on its series: the
 * finding's level (a confirming rerun's median, or a watcher shift's level
 * after) still lies beyond band b on the outlier's side — the baseline has
 * not moved to it, as an accepted shift would — and the outlier sits at that
 * level, within k·σ of it. Such a point is the shift seen again, not a new
 * change: it joins the finding (no rerun, the finding's CL range) instead of
 * being split and bisected afresh. A further step beyond k·σ from the level
 * is a new change. False when a value is not finite or b is not a band of
 * pw_confirm_band_of.
 */
bool pw_confirm_joins_finding(const pw_confirm_band *b, double point, double finding_level);

/* The decision on the reruns. */
typedef struct pw_confirm_result {
	size_t n;          /* finite reruns used */
	double median;     /* their median, in unit */
	bool reproduced;   /* median beyond the band on the band's side (strictly) */
	bool regression;   /* reproduced and on the worse side for the direction given */
} pw_confirm_result;

/*
 * Decides on the reruns x[0..n) (NaN and ±inf are skipped) against band b;
 * lower_is_better says which side is worse (latency, cost: true). work holds
 * 2·n doubles (the caller's). PW_ERR_INVALID when no rerun is finite or b is
 * not a band of pw_confirm_band_of.
 */
pw_status pw_confirm_decide(const pw_confirm_band *b, const double *x, size_t n, bool lower_is_better,
                            double *work, pw_confirm_result *out);

#endif
