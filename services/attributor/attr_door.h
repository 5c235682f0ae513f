/*
 * attr_door.h: the attributor's door — what it checks on perf.alerts.v1 and
 * perf.bisections.v1 before PostgreSQL sees anything (issue 19).
 *
 * Pure functions of the payload: the wire form (no NUL byte, valid UTF-8 in
 * any string: pw_input.h), the protobuf, then what the attribution relies on.
 * A refused message comes back as a DlqReason and a detail (lower case, the
 * subject quoted) and nothing else; attr_service.c dead-letters it on
 * perf.dlq.v1 and perfwatch.dead_letters.
 */
#ifndef PW_ATTR_DOOR_H
#define PW_ATTR_DOOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/bisect.pb-c.h"
#include "perfwatch/v1/dlq.pb-c.h"
#include "pw_limits.h"
#include "pw_status.h"

/* Ids and build names longer than this are refused, not cut (the attribution's rows key on them). */
#define PW_ATTR_ID_MAX PW_ID_MAX /* pw_limits.h */
/* Steps of one bisection. */
#define PW_ATTR_STEPS_MAX 4096
/* Bytes of the text[] literal of one side's bisect job ids (pw_pg_text_array's, with its NUL), at most. */
#define PW_ATTR_JOB_IDS_MAX 8192
/* Latest time a baseline window may name: 2200-01-01 (PostgreSQL's to_timestamp goes further, nothing real does). */
#define PW_ATTR_TIME_MAX_US 7258118400000000LL

typedef enum pw_attr_input {
	PW_ATTR_INPUT_ACCEPT = 0, /* *out set: attribute it */
	PW_ATTR_INPUT_IGNORE,     /* *out set: not attributed (improvement, infra health, other source; no culprit yet) */
	PW_ATTR_INPUT_FOLLOW_UP,  /* *out set: a later revision carrying a bisection or attribution */
	PW_ATTR_INPUT_DEAD,       /* *out NULL: dead-letter it with *reason and detail */
} pw_attr_input;

/* The before side an accepted alert names, in the attributor's order of preference. */
typedef struct pw_attr_before {
	int64_t window_start_us, window_end_us; /* both > 0: the baseline window */
	int64_t max_cl;                         /* else > 0: nightlies at or below the changepoint's last clean CL */
	const char *build_id;                   /* else: the baseline build the gate names (borrowed from *out) */
} pw_attr_before;

/*
 * Decodes a perf.alerts.v1 payload. For a regression of the gate or the
 * watcher (not a follow-up): an alert_id, a complete series key and a
 * series_key that is its canonical key (model/hlo/platform/config/metric,
 * else INCONSISTENT), an observed build, lengths within PW_ATTR_ID_MAX and
 * PW_SERIES_KEY_MAX, a baseline window that is not reversed and lies in
 * 1970..2200, and a before side (window, changepoint range or baseline
 * build). On ACCEPT *before says which; on ACCEPT, IGNORE and FOLLOW_UP *out
 * is the message (perfwatch__v1__alert__free_unpacked).
 */
pw_attr_input pw_attr_alert_decode(const void *payload, size_t len, Perfwatch__V1__Alert **out,
                                   pw_attr_before *before, Perfwatch__V1__DlqReason *reason, char *detail,
                                   size_t dlen);

/*
 * Decodes a perf.bisections.v1 payload. A bisection that is not DONE or has
 * no culprit is IGNORE. Otherwise: a bisection_id and alert_id, a complete
 * series key matching series_key, a culprit "cl/N", lengths within the caps,
 * at most PW_ATTR_STEPS_MAX steps whose job ids are at most PW_ATTR_ID_MAX
 * bytes, and a step with a job id on each side of the culprit
 * (pw_attr_culprit_steps; INCONSISTENT when one side has none).
 */
pw_attr_input pw_attr_bisection_decode(const void *payload, size_t len, Perfwatch__V1__Bisection **out,
                                       Perfwatch__V1__DlqReason *reason, char *detail, size_t dlen);

/* "cl/7841917" (or the roll form "cl/7841917@K") -> 7841917; 0 when malformed. */
int64_t pw_attr_cl_number(const char *cl);

/*
 * The job ids of bs's steps on either side of its culprit: before, the
 * verification of culprit-1 and any step at culprit-1; after, the steps at
 * the culprit (not its cherry-pick). Steps without a job id are skipped.
 * before / after may be NULL (counting only), else hold bs->n_steps entries.
 */
void pw_attr_culprit_steps(const Perfwatch__V1__Bisection *bs, const char **before, size_t *nb,
                           const char **after, size_t *na);


#endif
