/*
 * pw_changepoint.h: level-shift changepoints of a nightly series (§4.3(b)),
 * batch and streaming.
 *
 * The watcher runs this over every series; the CLI's `changepoints` command and
 * the benchmark call exactly the same functions. Three detectors share one
 * post-filter that keeps only LEVEL shifts (a change of noise alone is not
 * reported): robust PELT (the default), PELT with the plain normal mean-shift
 * cost, and E-divisive means with a seeded permutation test. The robust
 * statistics (median, MAD, Mann–Whitney) come from pw_stats.h. The reasoning
 * behind every default is in docs/changepoints.md.
 *
 * Ownership: a detector or stream is a heap handle (_new/_free) that owns its
 * workspaces; nothing allocates per point except when a detector first meets
 * a series longer than any before (it then grows once). Inputs are borrowed
 * for the duration of a call only. Handles are not thread-safe; use one per
 * thread.
 */
#ifndef PW_CHANGEPOINT_H
#define PW_CHANGEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_status.h"

typedef enum pw_cp_method {
	PW_CP_PELT_ROBUST = 0, /* PELT, normal cost on Huber-clipped data (default) */
	PW_CP_PELT_NORMAL,     /* PELT, normal mean-shift cost on the raw data */
	PW_CP_EDIVISIVE,       /* E-divisive means (alpha = 1), permutation test */
} pw_cp_method;

typedef struct pw_cp_params {
	pw_cp_method method;
	size_t min_segment;    /* fewest points in a segment (>= 2); default 5 */
	double penalty;        /* PELT cost per changepoint, in units of the noise variance; 15 */
	size_t grid;           /* PELT candidate spacing before exact refinement (1 = exact); 4 */
	size_t calibration;    /* points at the start from which the noise scale is taken; 30 */
	double clip_k;         /* robust cost: clip at running median ± clip_k·scale; 3 */
	size_t clip_halfwidth; /* robust cost: running-median half window; 5 */
	double alpha;          /* post-filter: Mann–Whitney two-sided p must be <= alpha; 1e-5 */
	double min_effect;     /* post-filter: |after−before|/|before| >= this; 0.005 */
	double min_noise_effect; /* post-filter: |after−before| >= this × segment MAD_n; 0.5 */
	double perm_alpha;     /* E-divisive: permutation p must be <= this; 0.01 */
	unsigned permutations; /* E-divisive: permutations per test; 199 */
	uint64_t seed;         /* E-divisive: PRNG seed (same seed, same answer) */
	size_t max_changepoints; /* E-divisive: stop after this many; 0 = no limit */
} pw_cp_params;

/* Fills p with the documented defaults (robust PELT). */
void pw_cp_params_default(pw_cp_params *p);

/* Checks ranges; PW_ERR_INVALID with a reason in errbuf. */
pw_status pw_cp_params_check(const pw_cp_params *p, char *errbuf, size_t errlen);

typedef struct pw_changepoint {
	size_t index;      /* first point of the new level (0-based; absolute for streams) */
	double before;     /* median of the segment before */
	double after;      /* median of the segment after */
	double rel_change; /* (after − before)/before; NaN when before == 0 */
	double p;          /* Mann–Whitney p (PELT) or permutation p (E-divisive) */
	double noise;      /* the larger MAD_n of the two segments (the noise it beat) */
} pw_changepoint;

typedef struct pw_cp_detector pw_cp_detector;

/*
 * Creates a detector for series of up to size_hint points (it grows once if a
 * longer one comes). params is copied. PW_ERR_INVALID on bad params,
 * PW_ERR_NOMEM.
 */
pw_status pw_cp_detector_new(const pw_cp_params *params, size_t size_hint, pw_cp_detector **out,
                             char *errbuf, size_t errlen);
void pw_cp_detector_free(pw_cp_detector *d);

/*
 * Changepoints of x[0..n), oldest first, written to out[0..cap) in index
 * order; *count receives how many were found (possibly more than cap, of which
 * the first cap were written). A series shorter than 2·min_segment has none.
 * PW_ERR_INVALID on NaN/±inf, PW_ERR_NOMEM.
 */
pw_status pw_cp_detect(pw_cp_detector *d, const double *x, size_t n, pw_changepoint *out,
                       size_t cap, size_t *count, char *errbuf, size_t errlen);

/*
 * The straightforward E-divisive, for the benchmark and the tests only: the
 * same procedure as PW_CP_EDIVISIVE (same PRNG draws, same answer) but every
 * split's energy statistic recomputed from all pairs, O(n²) per split. Its
 * output is the raw E-divisive changepoints, without the level-shift filter,
 * as is pw_cp_edivisive_raw's.
 */
pw_status pw_cp_edivisive_naive(const pw_cp_params *params, const double *x, size_t n,
                                pw_changepoint *out, size_t cap, size_t *count, char *errbuf,
                                size_t errlen);
pw_status pw_cp_edivisive_raw(pw_cp_detector *d, const double *x, size_t n, pw_changepoint *out,
                              size_t cap, size_t *count, char *errbuf, size_t errlen);

/* ---- Early shift ------------------------------------------------------------ */

/*
 * The early rule (issue 17): PELT needs min_segment points after a shift
 * before it can place it, so an 8% step at σ 0.4% is reported min_segment
 * nightlies late at best. The early rule looks only at the newest k points
 * against the level of the segment before them (the reference, m points):
 * it fires when
 *   - every one of the k points lies on the same side of the reference
 *     median, beyond max(min_effect·|median|, noise_k·MAD_n(reference)) — k
 *     independent 1% infra outliers (§4.1) are needed to fake this, and
 *   - the prediction t test (pw_stats_prediction_t) of their mean against
 *     the reference, one-sided on that side, has p <= alpha.
 * A firing is provisional: the watcher reports it at once and PELT confirms
 * it (or not) min_segment points after the shift. docs/statistics.md has
 * the false-report arithmetic behind the defaults.
 */
#define PW_CP_EARLY_MAX_REF 256

typedef struct pw_cp_early_params {
	size_t k;          /* newest points that must all be shifted; 3 (0 = the rule is off) */
	size_t min_ref;    /* fewest reference points; 20 */
	size_t max_ref;    /* newest reference points used, <= PW_CP_EARLY_MAX_REF; 60 */
	double noise_k;    /* each point beyond noise_k × MAD_n of the reference; 4 */
	double min_effect; /* ... and beyond min_effect × |reference median|; 0.005 */
	double alpha;      /* one-sided prediction-t p must be <= alpha; 1e-6 */
} pw_cp_early_params;

void pw_cp_early_params_default(pw_cp_early_params *p);

typedef struct pw_cp_early {
	bool found;
	int side;          /* +1: the new points are higher, −1: lower */
	double level;      /* reference median */
	double sigma;      /* reference MAD_n */
	double threshold;  /* the distance every point had to exceed */
	double after;      /* median of the k new points */
	double t, p;       /* the prediction t test */
} pw_cp_early;

/*
 * Applies the rule to reference ref[0..m) and new points y[0..k) (k must be
 * params->k). m < min_ref gives found = false; m > PW_CP_EARLY_MAX_REF,
 * k == 0, non-finite values: PW_ERR_INVALID.
 */
pw_status pw_cp_early_shift(const double *ref, size_t m, const double *y, size_t k,
                            const pw_cp_early_params *params, pw_cp_early *out);

/* ---- Streaming ------------------------------------------------------------ */

/*
 * A stream holds the last max_points points of one series and PELT's state
 * over them (pruned candidate set, cumulative sums, optimal costs), so that
 * appending a point costs O(pruned set) amortised, not a re-scan. When the
 * window is full the oldest half is dropped and the state rebuilt over the
 * rest (amortised O(pruned set) per point as well); memory is O(max_points).
 * Its answer is always that of pw_cp_detect over pw_cp_stream_window(), with
 * indices offset to count from the first point ever appended.
 * Only the PELT methods stream; PW_ERR_INVALID for E-divisive.
 */
typedef struct pw_cp_stream pw_cp_stream;

pw_status pw_cp_stream_new(const pw_cp_params *params, size_t max_points, pw_cp_stream **out,
                           char *errbuf, size_t errlen);
void pw_cp_stream_free(pw_cp_stream *s);

/* Appends one point; PW_ERR_INVALID (and nothing appended) if not finite. */
pw_status pw_cp_stream_append(pw_cp_stream *s, double x, char *errbuf, size_t errlen);

/* Changepoints of the current window; out/cap/count as for pw_cp_detect. */
pw_status pw_cp_stream_changepoints(pw_cp_stream *s, pw_changepoint *out, size_t cap,
                                    size_t *count, char *errbuf, size_t errlen);

/* The window the stream currently holds, and the absolute index of its first point. */
const double *pw_cp_stream_window(const pw_cp_stream *s, size_t *n, size_t *offset);

#endif
