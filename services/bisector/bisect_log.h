/*
 * bisect_log.h: the bisection log of artifact 4, rendered from what the
 * bisector stores (perfwatch.bisections and bisection_steps, or a
 * perfwatch.v1.Bisection) — for `perfwatch bisect show`, `make demo` and
 * the tests. Plain data in, text out; no broker or database.
 *
 * Shape (one line per step, times elapsed since the bisection started):
 *   [00:00] range cl/7841885..cl/7841923 (38 CLs); cost-model filter → 9 perf-relevant
 *   [00:02] endpoint cl/7841885 … 3.89 ±0.04 → CLEAN (before level)
 *   [00:09] build xla @ cl/7841904 … tpot_p50_ms 3.90 ±0.02 → CLEAN     range → (7841904, 7841923], 4 CLs
 *   [01:14] verify: cl/7841916 → CLEAN ✔
 *   [01:20] verify: cherry-pick cl/7841917 on cl/7841885 → 4.24 REPRODUCED ✔
 *   [01:20] culprit = cl/7841917 "fusion: …" (author: xla-fusion) · confidence: verified-both-sides
 */
#ifndef PW_BISECT_LOG_H
#define PW_BISECT_LOG_H

#include <stdint.h>
#include <stdio.h>

#include "bisect.h"

#define PW_BISECT_LOG_NAME 64

typedef struct pw_bisect_log_step {
	pw_bisect_purpose purpose;
	char cl[PW_BISECT_LOG_NAME];       /* "cl/7841904", "cl/7841917@6138"; cherry-pick / pairwise: the base */
	char picks[2][PW_BISECT_LOG_NAME]; /* cherry-picked CLs */
	size_t npicks;
	double median, spread;
	uint32_t n;
	pw_bisect_outcome outcome;
	int64_t finished_us;               /* 0 while pending */
	int64_t range_lo, range_hi;        /* remaining range after the step (CL numbers; roll steps: K) */
	uint32_t range_n;
} pw_bisect_log_step;

typedef struct pw_bisect_log_head {
	const char *bisection_id, *series_key, *metric, *unit;
	int64_t started_us, finished_us;
	int64_t lo, hi;
	uint32_t n_cls, n_flagged;
	pw_bisect_status status;
	pw_bisect_confidence confidence;
	const char *culprit, *culprit_title, *culprit_owner, *culprit_upstream;
	const char *interacting[2];
	bool adjacent_clean, pick_reproduced, full_range;
	const char *reason;
	uint32_t builds;
} pw_bisect_log_head;

/* A step as pw_bisect_apply judged it (job + verdict), at time t_us. */
void pw_bisect_log_step_from(pw_bisect_log_step *s, const pw_bisect_job *job,
                             const pw_bisect_verdict *v, int64_t t_us);

/* Writes the log to out. Steps in step order; pending steps print as "…". */
void pw_bisect_log_render(FILE *out, const pw_bisect_log_head *h, const pw_bisect_log_step *steps,
                          size_t n);

#endif
