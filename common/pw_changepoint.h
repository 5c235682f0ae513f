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
