/*
 * noise_floor.h: the scheduled re-derivation of each series' noise floor
 * (§4.2: "re-derive quarterly"), the pure part: when a derivation is due,
 * which runs of a series are repeats with no software change between them
 * (the groups), and what one series' derivation concludes.
 *
 * The estimator is common/pw_stats.h's pw_stats_noise_floor (the pooled
 * within-group Shamos estimator); this module only chooses its groups and
 * the rule below which a series is INSUFFICIENT_DATA instead of a floor.
 * baseliner_store.c reads the samples and writes perfwatch.noise_floors
 * (migration 0050), the tick in baseliner_service.c calls it;
 * docs/baseliner.md ("Noise floors, re-derived") is the operator's page and
 * docs/statistics.md §10 the reasoning.
 */
#ifndef PW_BL_NOISE_FLOOR_H
#define PW_BL_NOISE_FLOOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_config.h"
#include "pw_status.h"

/* The derivation's rules (baseliner.noise_floor.* keys). */
typedef struct pw_nf_params {
	int64_t every_us;     /* a derivation this long after the previous one; 0: never */
	int64_t lookback_us;  /* samples measured this long before the series' newest one */
	size_t min_groups;    /* groups of >= 2 runs a series needs (5) */
	size_t min_samples;   /* runs in those groups a series needs (30, §4.2) */
} pw_nf_params;

/* The defaults: every 90 days, 90 days back, 5 groups, 30 runs. */
void pw_nf_params_default(pw_nf_params *p);

/* Reads the baseliner.noise_floor.* keys of cfg into p. */
void pw_nf_params_from_config(const pw_config *cfg, pw_nf_params *p);

/*
 * Whether a derivation is due at now_us: never when every_us is 0; at once
 * when there has been none (has_last false); else when the last one, at
 * last_us, is at least every_us old. A last derivation in the future (a
 * clock set back) is not due: the next is every_us after it.
 */
bool pw_nf_due(int64_t now_us, bool has_last, int64_t last_us, int64_t every_us);

/*
 * The group key of one sample: the runs of one re-baseline job on one build
 * are one group ("j:BUILD/JOB"), else the repeats of one run ("r:RUN": one
 * run is one build). Writes at most len bytes, NUL-terminated; returns
 * PW_ERR_INVALID when it does not fit or run_id is empty.
 */
pw_status pw_nf_group_key(const char *run_id, const char *build_id, const char *rebaseline_job_id,
                          char *out, size_t len);

/*
 * Group ids for keys[0..n) sorted so that equal keys are adjacent: out[i] is
 * the index of keys[i]'s run of equal keys (0, 0, 1, 2, 2, ...), ascending
 * as pw_stats_noise_floor wants. Pure, cannot fail.
 */
void pw_nf_group_ids(const char *const *keys, size_t n, int64_t *out);

typedef enum pw_nf_status {
	PW_NF_DERIVED = 0,        /* floor_pct and level hold the new floor */
	PW_NF_INSUFFICIENT_DATA,  /* too few groups or runs: the series keeps its floor */
	PW_NF_INVALID,            /* a group's median is not positive: no relative floor; kept */
} pw_nf_status;

/* "derived", "insufficient_data", "invalid" (the column's values). */
const char *pw_nf_status_name(pw_nf_status s);

typedef struct pw_nf_result {
	pw_nf_status status;
	double floor_pct;   /* relative σ of one run, percent (DERIVED only, else NaN) */
	double level;       /* median of the groups' medians (DERIVED only, else NaN) */
	size_t n_groups;    /* groups of >= 2 runs */
	size_t n_samples;   /* runs in them */
	size_t n_pairs;     /* pairs the median ran over */
} pw_nf_result;

/*
 * One series' derivation from its samples values[0..n) with their group ids
 * (ascending, pw_nf_group_ids): the groups of one run are left out, as in
 * pw_stats_noise_floor; fewer than p->min_groups groups or p->min_samples
 * runs in them is INSUFFICIENT_DATA (never a guess); a group whose median is
 * not positive makes the relative floor undefined, INVALID. work holds
 * pw_stats_noise_floor_work_len(group, n) doubles. Returns PW_OK with
 * out->status set, or PW_ERR_INVALID for a non-finite value, group ids out
 * of order or a NULL argument.
 */
pw_status pw_nf_derive(const double *values, const int64_t *group, size_t n, const pw_nf_params *p,
                       double *work, pw_nf_result *out);

/* One sample of a series: its group key (pw_nf_group_key, borrowed) and value. */
typedef struct pw_nf_sample {
	const char *key;
	double value;
} pw_nf_sample;

/*
 * pw_nf_derive over samples s[0..n) in any order: sorts s by key (then
 * value) in place, numbers the groups and derives. PW_ERR_NOMEM, or
 * pw_nf_derive's statuses (PW_ERR_INVALID also for a NULL key).
 */
pw_status pw_nf_derive_samples(pw_nf_sample *s, size_t n, const pw_nf_params *p,
                               pw_nf_result *out);

/* (now − previous) / previous × 100; NaN when either is not finite or previous is 0. */
double pw_nf_change_pct(double previous_pct, double now_pct);

#endif
