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

#endif
