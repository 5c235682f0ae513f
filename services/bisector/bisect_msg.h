/*
 * bisect_msg.h: the bisector's messages (bisect.proto) from its state:
 * the BisectJob of a step, with the alerting series' exact config, and the
 * Bisection that perf.bisections.v1 carries after every step.
 *
 * Plain functions of their inputs, so that the unit tests check them
 * against the simulator's job reader (pw_sim_bisect_plan_make) with no
 * broker. Packed buffers are malloc'd and owned by the caller (free()).
 */
#ifndef PW_BISECT_MSG_H
#define PW_BISECT_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "bisect.h"
#include "bisect_log.h"
#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/compiler.pb-c.h"
#include "perfwatch/v1/dlq.pb-c.h"
#include "pw_limits.h"
#include "pw_status.h"

/* The exact config the bisection reproduces (from the alert and the series' latest run). */
typedef struct pw_bisect_target {
	const char *series_key;
	const char *model, *model_rev, *hlo_fingerprint, *platform, *config, *firmware, *metric;
	const char *config_hash;
} pw_bisect_target;

/*
 * The job id of step `step` of bisection `bisection_id`: "<id>-NN" (at
 * least two digits). Deterministic, so that a restarted bisector re-derives
 * the id of a job it had published. PW_ERR_INVALID when it does not fit.
 */
pw_status pw_bisect_job_id(const char *bisection_id, uint32_t step, char *buf, size_t len);

/*
 * Packs job (of bisection_id, for target t, requested at now_us) as a
 * perfwatch.v1.BisectJob: cl "cl/N" or "cl/N@K" for a roll step; for a
 * cherry-pick or pairwise job base_cl and cherry_picks (cl = base_cl).
 * PW_ERR_INVALID when the job id does not fit; PW_ERR_NOMEM.
 */
pw_status pw_bisect_job_pack(const char *bisection_id, const pw_bisect_target *t,
                             const pw_bisect_job *job, int64_t now_us, uint8_t **out,
                             size_t *len);

/*
 * Packs a perfwatch.v1.Bisection: the header h (ids, levels, culprit texts),
 * the state b (range, flags, status, confidence, builds by kind, reason) and
 * the steps as stored (job ids derived from the step index). correlated
 * (ncorr) lists the event's other series keys. PW_ERR_NOMEM.
 */
pw_status pw_bisect_pack(const pw_bisect_log_head *h, const char *alert_id,
                         const char *changepoint_id, const pw_bisect_target *t,
                         const pw_bisect *b, const pw_bisect_log_step *steps, size_t nsteps,
                         const char *const *correlated, size_t ncorr, int64_t now_us,
                         uint8_t **out, size_t *len);

/* ---- Inputs: decode and check, before any database sees them ------------------------ */

typedef enum pw_bisect_input {
	PW_BISECT_INPUT_ACCEPT = 0,   /* *out set: the service processes it */
	PW_BISECT_INPUT_IGNORE,       /* *out set: not for the bisector (improvement, infra health, baseliner) */
	PW_BISECT_INPUT_FOLLOW_UP,    /* *out set: a follow-up revision (Alert.follow_up): never a new bisection */
	PW_BISECT_INPUT_DEAD,         /* *out NULL: dead-letter it with *reason and detail */
	PW_BISECT_INPUT_CONFIRM,      /* *out set: an unconfirmed outlier of the baseliner to rerun (confirm.h) */
} pw_bisect_input;

/* Caps on what an input may hold (bytes, or items); beyond them a message is refused, not cut. */
#define PW_BISECT_ID_MAX PW_ID_MAX      /* alert_id, changepoint_id, config_hash, cl (pw_limits.h) */
#define PW_BISECT_LIST_MAX 256          /* perf_benchmarks, roll upstream ids */
#define PW_BISECT_TEXT_MAX 4096         /* title, author, team, repo, a glob */
#define PW_BISECT_ROLL_MAX 100000       /* upstream commits in one roll */

/*
 * Decodes a perf.alerts.v1 payload and checks what the bisector relies on:
 * the wire form (no NUL byte, valid UTF-8 in any string: pw_input.h), the
 * protobuf, then for a regression alert of the gate or the watcher: an
 * alert_id (at most PW_BISECT_ID_MAX bytes), a complete series key and
 * series_key (< PW_SERIES_KEY_MAX; the model at most PW_KEY_MODEL_MAX bytes) that agree
 * (DLQ_REASON_INCONSISTENT when series_key is not the series' canonical
 * key: the bisection would be named after one series and run on another), finite delta
 * (abs and pct: pct ranks the event's series) and baseline noise
 * (noise >= 0), and a changepoint range that, when given, is "cl/N".."cl/M"
 * with N < M. An unconfirmed outlier of the baseliner (ALERT_KIND_UNCONFIRMED,
 * not a follow-up) is CONFIRM when it also has an alert_id, a complete
 * series key, its point's run id (at most PW_BISECT_ID_MAX − 3 bytes) and
 * time, and finite baseline median, noise (>= 0), observed value and robust
 * z; otherwise DEAD. On ACCEPT, IGNORE, FOLLOW_UP and CONFIRM *out is the unpacked message
 * (perfwatch__v1__alert__free_unpacked); on DEAD *reason and detail (lower
 * case, the subject quoted) say why.
 */
pw_bisect_input pw_bisect_alert_decode(const void *payload, size_t len, Perfwatch__V1__Alert **out,
                                       Perfwatch__V1__DlqReason *reason, char *detail, size_t dlen);

/*
 * The same for a perf.compiler-cls.v1 payload: "cl/N" matching cl_number > 0,
 * texts and lists within the caps above, a roll of at most
 * PW_BISECT_ROLL_MAX commits listing no more ids than commits, a submit time
 * that is 0 or in 1970..2200. ACCEPT or DEAD.
 */
pw_bisect_input pw_bisect_cl_decode(const void *payload, size_t len, Perfwatch__V1__CompilerCl **out,
                                    Perfwatch__V1__DlqReason *reason, char *detail, size_t dlen);

/* What the CL feed (perfwatch.compiler_cls) holds of an alert's range. */
typedef struct pw_bisect_feed {
	bool lo_known, hi_known; /* the range's endpoints are CLs of the feed */
	int64_t first, last;     /* the feed's lowest and highest CL number (0 when empty) */
	int64_t n;               /* CLs in the feed */
} pw_bisect_feed;

/*
 * True when the range (lo, hi] of alert alert_id can be bisected: both
 * endpoints are CLs of the feed. Otherwise false with detail naming the
 * CLs missing and the feed's range ("alert \"X\": range cl/1..cl/1000001:
 * cl/1 and cl/1000001 are not in the CL feed (7,840,518..7,842,075, 1,558
 * CLs)"): the service dead-letters it as unknown_reference before any build
 * is published (docs/bisector.md).
 */
bool pw_bisect_range_known(const char *alert_id, int64_t lo, int64_t hi, const pw_bisect_feed *feed,
                           char *detail, size_t dlen);

/* "cl/7841917" -> 7841917; "cl/N@K" and anything else -> 0. */
int64_t pw_bisect_cl_number(const char *cl);

#endif
