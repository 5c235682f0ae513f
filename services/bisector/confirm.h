/*
 * confirm.h: confirmation reruns of unconfirmed outliers (issue 17).
 *
 * The baseliner publishes an outlier that no infra cause explains as
 * ALERT_KIND_UNCONFIRMED (owner needs-confirmation). The bisector, which owns
 * the executor's job topic, takes each one in (pw_confirm_take): one CONFIRM
 * BisectJob per outlier run — the nightly's build (its CL), the exact config,
 * bisector.confirm_repeats repeats, stamped for the data time the point's
 * time plus bisector.confirm_lead — under a rerun budget per data day
 * (bisector.confirm_budget runs, counted in perfwatch.confirm_budget and in
 * perfwatch_bisector_confirm_reruns_total). Over budget the alert stays
 * unconfirmed and its next revision says so.
 *
 * pw_confirm_tick reads the job-tagged points back (perfwatch.samples) and,
 * when a job's repeats are in, decides each of its alerts with
 * common/pw_confirm.h and publishes the alert's next revision (same
 * alert_id, follow_up false): reproduced → kind regression or improvement,
 * owner "compiler" (the environment did not change and the same build
 * reproduces it: the build is what moved), the one-day CL range since the
 * previous nightly in its changepoint block; a reproduced regression also
 * starts (or joins) its bisection event through the caller's start function
 * in the same transaction, so the watcher's later changepoint on the same
 * shift (same model, same head CL) joins it. Not reproduced → kind
 * infra_health, owner infra (the pager's infra route pages nobody).
 *
 * All state is in PostgreSQL (migration 0033); the job and the revisions go
 * through the outbox in the deciding transaction, so a killed bisector
 * resumes where it stopped and publishes nothing twice.
 */
#ifndef PW_BISECT_CONFIRM_H
#define PW_BISECT_CONFIRM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/alert.pb-c.h"
#include "pw_log.h"
#include "pw_metrics.h"
#include "pw_pg.h"
#include "pw_status.h"

/*
 * Starts or joins the bisection event of alert al (a reproduced regression
 * revision, whose changepoint block holds the range), inside the caller's
 * open transaction. On PW_OK bid holds the bisection id, or is empty with
 * why saying why none was started.
 */
typedef pw_status (*pw_confirm_start_fn)(void *ctx, pw_pg *pg, const Perfwatch__V1__Alert *al,
                                         const char *key, const void *payload, size_t len,
                                         char *bid, size_t bidlen, char *why, size_t whylen,
                                         char *errbuf, size_t errlen);

typedef struct pw_confirm {
	const char *service;         /* outbox owner, follow_up_by: "bisector" */
	uint32_t repeats;            /* bisector.confirm_repeats */
	int64_t budget_runs;         /* bisector.confirm_budget: runs per data day */
	double band_k;               /* bisector.confirm_band_k: the band's multiple of σ */
	int64_t lead_us;             /* bisector.confirm_lead: build + run time modelled */
	int64_t job_timeout_ms;      /* bisector.job_timeout: re-publish a job with no results */
	pw_metric *m_reruns;         /* counter runs{outcome}: requested, refused */
	pw_metric *m_outcomes;       /* counter alerts{outcome} */
	const pw_log *lg;
	pw_confirm_start_fn start;
	void *start_ctx;
} pw_confirm;

/* What the take did; "dead" means the caller dead-letters the message with detail. */
typedef enum pw_confirm_take_result {
	PW_CONFIRM_TAKEN = 0,     /* requested, joined a job, over budget, or redelivered */
	PW_CONFIRM_DEAD,          /* an unknown series or run: dead-letter with the detail */
} pw_confirm_take_result;

/*
 * Takes in an unconfirmed outlier alert al (decoded and checked by
 * pw_bisect_alert_decode: PW_BISECT_INPUT_CONFIRM), received with Kafka key
 * `key` and payload (payload, len). Opens and commits its own transaction.
 * *outcome: "requested", "joined", "over_budget", "redelivered". PW_OK with
 * *res; pw_pg's errors (retriable ones leave nothing written).
 */
pw_status pw_confirm_take(const pw_confirm *c, pw_pg *pg, const Perfwatch__V1__Alert *al,
                          const char *key, const void *payload, size_t len,
                          pw_confirm_take_result *res, const char **outcome, char *detail,
                          size_t dlen, char *errbuf, size_t errlen);

/*
 * One round: every pending CONFIRM job whose repeats are in is decided (one
 * transaction a job), and so is an alert that joined a job after it was
 * decided (the alerts of a run's metrics may come in several batches); a
 * job without all its results after job_timeout_ms is re-published under the
 * same id. pw_pg's errors; a job's own failure is logged and the others go on.
 */
pw_status pw_confirm_tick(const pw_confirm *c, pw_pg *pg, char *errbuf, size_t errlen);

/* ---- Pure parts (no database) --------------------------------------------------------- */

/* The next revision of an outlier alert, as the confirmation decided it. */
typedef struct pw_confirm_revision {
	uint32_t revision;
	Perfwatch__V1__ConfirmOutcome outcome;
	bool regression;             /* REPRODUCED: regression (else improvement) */
	const char *job_id;
	uint32_t repeats, n;
	double rerun_median, band_lo, band_hi;
	int64_t cl;                  /* the rerun build: the outlier point's nightly CL */
	int64_t prev_cl, range_hi;   /* the finding's range (prev_cl, range_hi]: the series' last in-band
	                              * nightly and its first nightly beyond the band (0: unknown) */
	int64_t point_us, confirmed_us;
	const char *nightly;         /* "YYYY-MM-DD" of the point */
	const char *summary, *reason;
} pw_confirm_revision;

/*
 * Packs the original alert (payload, len) as revision r: kind, owner,
 * needs_confirmation, the confirmation block, and for REPRODUCED the
 * changepoint block (cl_range_lo/hi "cl/prev_cl".."cl/range_hi", n_cls, nightly).
 * follow_up stays false: the kind and the owner change, so consumers decide
 * again. *out malloc'd. PW_ERR_INVALID when payload is no Alert or the
 * revision is not above it; PW_ERR_NOMEM.
 */
pw_status pw_confirm_revision_pack(const void *payload, size_t len, const pw_confirm_revision *r,
                                   uint8_t **out, size_t *outlen);

/* "requested" etc.: the lower-case name of an outcome as perfwatch.alerts stores it. */
const char *pw_confirm_outcome_name(Perfwatch__V1__ConfirmOutcome o);

#endif
