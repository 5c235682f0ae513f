/*
 * gate_service.c: the release gate as a pw_service — what its consumer
 * workers do with a batch of GateRequests and what its tick does with the
 * pending evaluations. main.c declares the service; pw_service.c runs it.
 *
 * Two kinds of threads, each with its own connections from the runtime:
 *   - consumer workers read perf.gate.requests.v1 in batches and store each
 *     GateRequest as a pending evaluation (pw_gate_store_request) in one
 *     transaction per batch; the offsets move after that transaction, so a
 *     request is durable before its offset moves. Requests that can never be
 *     stored are dead-lettered. A redelivered request whose evaluation is
 *     done marks its messages unpublished again (pw_outbox_resend), and the
 *     runtime publishes them after the batch.
 *   - the tick on the main thread, every gate.poll_interval: for each pending
 *     evaluation it applies the waiting rule (gate_policy.h) to the
 *     candidate's sample counts; when every active series has its runs, or
 *     the deadline passed, it loads the samples, decides (pw_gate_decide),
 *     and writes results, alerts and the outbox rows in one transaction
 *     (pw_gate_store_finish) with the P1 tickets it files and the open ones of
 *     earlier releases it reports as compounding drift (pw_gate_store_drift);
 *     then it publishes the outbox (pw_outbox.h),
 *     which marks the rows published only once the broker acknowledged them.
 * A gate killed anywhere resumes from PostgreSQL: pending evaluations are
 * picked up again, unpublished outbox rows are sent again. docs/gate.md has
 * the policy, the configuration keys and the measured figures.
 */
#include "gate_service.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate_config.h"
#include "gate_eval.h"
#include "gate_messages.h"
#include "gate_policy.h"
#include "gate_request.h"
#include "gate_store.h"
#include "pw_input.h"
#include "pw_time.h"

#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"

#define GATE_MAX_PENDING 256
#define GATE_REQUEST_TYPE "perfwatch.v1.GateRequest"

typedef struct gate_metrics {
	pw_metric *requests;    /* {outcome} */
	pw_metric *evaluations; /* {outcome} */
	pw_metric *verdicts;    /* {verdict} */
	pw_metric *latency;     /* seconds from ready to verdict published */
	pw_metric *wait;        /* seconds from request to verdict published */
	pw_metric *pending;     /* gauge */
	pw_metric *late;        /* re-decisions on late data */
	pw_metric *cache_reads; /* perfwatch_baseline_cache_reads_total{outcome} */
} gate_metrics;

/* The evaluator's memory of one pending (or decided, watched) release, for
 * the polling backoff and what it last said. */
typedef struct gate_watch {
	pw_gate_pending key;
	size_t missing;      /* what was missing at the last look (the backoff's signal) */
	int64_t interval_ms; /* current wait */
	double next_s;       /* monotonic time of the next look */
	bool seen;           /* still pending (or watched) at this poll */
	char waiting[256];   /* the waiting text last stored ("" before the first look) */
	bool looked;         /* watched: prev holds a previous look */
	pw_gate_wait_state prev; /* watched: what the previous look found (late clock) */
} gate_watch;

typedef struct gate_app {
	const pw_log *lg;
	gate_metrics m;
	pw_gate_store_defaults defaults;
	const char *page_route;
	int64_t poll_ms, poll_max_ms;
	int64_t late_window_us;      /* gate.late_window */
	/* the tick's work space (main thread only) */
	pw_gate_pending *pending;    /* GATE_MAX_PENDING keys */
	pw_gate_pending *watched;    /* GATE_MAX_PENDING decided releases watched for late data */
	size_t *watched_lacking;     /* GATE_MAX_PENDING */
	int64_t *watched_seen;       /* GATE_MAX_PENDING */
	gate_watch *watch;           /* GATE_MAX_PENDING: when to look at each pending release again */
	size_t n_watch;
} gate_app;

pw_status pw_gate_requests_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n,
                                 char *errbuf, size_t errlen)
{
	pw_service_worker *w = ctx;
	gate_app *app = pw_service_app(w->svc);
	size_t stored = 0, dup = 0, dead = 0;
	pw_status st = pw_pg_begin(w->pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (size_t i = 0; i < n; i++) {
		const rd_kafka_message_t *msg = msgs[i];
		char bad[512];
		Perfwatch__V1__GateRequest *req = NULL;
		Perfwatch__V1__DlqReason refused = pw_gate_request_decode(
		    msg->payload, msg->len, app->defaults.policy.fdr_q, pw_now_us(), &req, bad, sizeof bad);
		if (refused != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED) {
			st = pw_service_dead_letter(w, msg, GATE_REQUEST_TYPE, refused, bad, errbuf, errlen);
			if (st != PW_OK)
				goto fail;
			dead++;
			continue;
		}
		st = pw_pg_exec(w->pg, "SAVEPOINT gate_request", 0, NULL, NULL, errbuf, errlen);
		if (st != PW_OK) {
			perfwatch__v1__gate_request__free_unpacked(req, NULL);
			goto fail;
		}
		char why[512] = "";
		bool duplicate = false;
		st = pw_gate_store_request(w->pg, req, &app->defaults, &duplicate, why, sizeof why);
		if (st == PW_OK) {
			pw_log_write(app->lg, PW_LOG_INFO,
			             (const char *[]){"release_id", req->release_id, NULL},
			             "gate request %s (evaluation %" PRIu32 ")",
			             duplicate ? "redelivered; stored verdict republished" : "stored",
			             req->evaluation);
			duplicate ? dup++ : stored++;
		}
		perfwatch__v1__gate_request__free_unpacked(req, NULL);
		if (st == PW_ERR_INVALID || st == PW_ERR_CONFLICT || st == PW_ERR_PG) {
			/* the request can never be stored: undo its part, dead-letter it */
			pw_status rb = pw_pg_exec(w->pg, "ROLLBACK TO SAVEPOINT gate_request", 0, NULL,
			                          NULL, errbuf, errlen);
			if (rb != PW_OK) {
				st = rb;
				goto fail;
			}
			st = pw_service_dead_letter(
			    w, msg, GATE_REQUEST_TYPE,
			    st == PW_ERR_INVALID    ? PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
			    : st == PW_ERR_CONFLICT ? PERFWATCH__V1__DLQ_REASON__DLQ_REASON_CONFLICT
			                            : PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED,
			    why, errbuf, errlen);
			if (st != PW_OK)
				goto fail;
			dead++;
			continue;
		}
		if (st != PW_OK) {
			snprintf(errbuf, errlen, "%s", why);
			goto fail;
		}
	}
	st = pw_pg_commit(w->pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	/* the runtime flushes the dead letters before the offsets move */
	pw_metric_add(app->m.requests, (const char *[]){"stored"}, (double)stored);
	pw_metric_add(app->m.requests, (const char *[]){"duplicate"}, (double)dup);
	pw_metric_add(app->m.requests, (const char *[]){"dead_lettered"}, (double)dead);
	return PW_OK;

fail:
	pw_pg_rollback(w->pg, NULL, 0);
	return st;
}

/* Decides one loaded release (with samples) and stores it with its outbox. */
static pw_status evaluate_release(gate_app *app, pw_pg *pg, pw_gate_release *r, char *errbuf,
                                  size_t errlen)
{
	r->evaluated_us = pw_now_us();
	size_t max_base = 1;
	for (size_t i = 0; i < r->n_series; i++)
		max_base = r->series[i].n_base > max_base ? r->series[i].n_base : max_base;
	double *work = pw_gate_release_alloc(r, max_base * sizeof *work);
	if (!work)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	size_t screened = pw_gate_screen(r->series, r->n_series, work);
	if (screened > 0)
		pw_log_warn(app->lg, "gate evaluation \"%s\": %zu series with a zero baseline median "
		            "reported insufficient_data", r->release_id, screened);
	size_t *waiver_of = pw_gate_release_alloc(r, (r->n_families + 1) * sizeof *waiver_of);
	if (!waiver_of)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	pw_status st = pw_gate_decide(&r->policy, r->families, r->n_families, r->series,
	                              r->n_series, r->waivers, r->n_waivers, r->evaluated_us, r->sr,
	                              r->fr, &r->rr, r->series_out, waiver_of, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (size_t j = 0; j < r->n_families; j++)
		if (waiver_of[j] != SIZE_MAX && r->fr[j].verdict == PW_GATE_FAMILY_WAIVED)
			r->family_waiver[j] = r->waivers[waiver_of[j]].waiver_id;
	for (size_t i = 0; i < r->n_series; i++)
		if (r->series_out[i] == PW_GATE_OUT_WAIVED)
			r->series_waiver[i] = r->family_waiver[r->series[i].family];
	size_t at = 0;
	if (r->late_of)
		at = (size_t)snprintf(r->summary, sizeof r->summary,
		                      "late data, re-decision of evaluation %" PRIu32 ": ", r->late_of);
	pw_gate_summary(r->summary + at, sizeof r->summary - at, &r->policy, r->families, r->fr,
	                r->n_families, r->series, r->sr, r->n_series, &r->rr);
	/* §8: P1 tickets of earlier releases still open on this release's series */
	r->page_route = app->page_route;
	st = pw_gate_store_drift(pg, r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_gate_drift_summary(r->summary, sizeof r->summary, r->drift, r->n_drift);
	for (size_t k = 0; k < r->n_drift; k++)
		pw_log_write(app->lg, PW_LOG_WARN,
		             (const char *[]){"release_id", r->release_id, NULL}, "%s", r->drift_line[k]);

	pw_gate_messages msgs;
	st = pw_gate_messages_build(r, app->page_route, &msgs, errbuf, errlen);
	if (st != PW_OK)
		return st;
	bool stored = false;
	st = pw_gate_store_finish(pg, r, msgs.msgs, msgs.n_msgs,
	                       (const Perfwatch__V1__Alert *const *)msgs.alerts, msgs.n_alerts,
	                       &stored, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (!stored) {
		pw_log_info(app->lg, "gate evaluation \"%s\" #%" PRIu32 " finished elsewhere",
		            r->release_id, r->evaluation);
		return PW_OK;
	}
	const char *verdict = pw_gate_outcome_name(pw_gate_family_outcome(r->rr.verdict));
	pw_metric_inc(app->m.verdicts, (const char *[]){verdict});
	pw_log_write(app->lg, PW_LOG_INFO,
	             (const char *[]){"release_id", r->release_id, "verdict", verdict, NULL},
	             "gate evaluation #%" PRIu32 " done: %s (%zu tests, %zu alerts)", r->evaluation,
	             r->summary, r->rr.n_tests, msgs.n_alerts);
	return PW_OK;
}

/* The watch entry of a pending release (created on first sight, marked
 * seen); NULL when the table is full, which only costs the backoff. */
static gate_watch *watch_of(gate_app *app, const pw_gate_pending *p)
{
	for (size_t i = 0; i < app->n_watch; i++) {
		gate_watch *w = &app->watch[i];
		if (w->key.evaluation == p->evaluation && strcmp(w->key.release_id, p->release_id) == 0) {
			w->seen = true;
			return w;
		}
	}
	if (app->n_watch == 2 * GATE_MAX_PENDING)
		return NULL;
	gate_watch *w = &app->watch[app->n_watch++];
	memset(w, 0, sizeof *w);
	w->key = *p;
	w->missing = SIZE_MAX;
	w->seen = true;
	return w;
}

/* The next look at a release after one that found `signal` (backoff while it
 * does not change). */
static void watch_backoff(gate_app *app, gate_watch *gw, size_t signal)
{
	if (!gw)
		return;
	gw->interval_ms = pw_gate_next_poll_ms(gw->missing, signal, gw->interval_ms, app->poll_ms,
	                                       app->poll_max_ms);
	gw->missing = signal;
	gw->next_s = pw_mono_s() + (double)gw->interval_ms / 1e3;
}

/*
 * A decided release that lacked something: is there late data? When there is
 * and it is complete or has stopped moving (pw_gate_late_redecide), a new
 * evaluation of the release is created (pending, late_of), which the pending
 * loop decides on what there is.
 */
static pw_status look_late(gate_app *app, pw_service_worker *mw, pw_baseline_reader *br,
                           const pw_gate_pending *key, size_t lacking, int64_t seen,
                           char *errbuf, size_t errlen)
{
	gate_watch *gw = watch_of(app, key);
	if (gw && gw->next_s > pw_mono_s())
		return PW_OK;
	pw_gate_release *r = NULL;
	pw_status st = pw_gate_store_load(br, key->release_id, key->evaluation, &app->defaults,
	                                  false, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_gate_wait_clock clock = pw_gate_wait_late_clock(pw_now_us(), r->families_named,
	                                                   r->planned_unmeasured);
	pw_gate_wait_state now;
	pw_gate_wait_decide(&r->policy, r->n_families, r->series, r->n_series, &clock, &now);
	pw_gate_release_free(r);
	pw_gate_wait_state prev = gw ? gw->prev : now;
	bool had_prev = gw && gw->looked;
	if (gw) {
		gw->prev = now;
		gw->looked = true;
	}
	if (!pw_gate_late_redecide(lacking, seen, &now, had_prev ? &prev : NULL)) {
		watch_backoff(app, gw, (size_t)now.seen + now.missing);
		return PW_OK;
	}
	uint32_t created = 0;
	st = pw_gate_store_redecide(mw->pg, key->release_id, key->evaluation, &created, errbuf,
	                            errlen);
	if (st != PW_OK)
		return st;
	if (created) {
		pw_metric_inc(app->m.late, NULL);
		char what[256];
		pw_gate_wait_describe(what, sizeof what, &now, INT64_MAX, 0);
		pw_log_write(app->lg, PW_LOG_INFO, (const char *[]){"release_id", key->release_id, NULL},
		             "late data for evaluation #%" PRIu32 " (decided lacking %zu): re-deciding "
		             "as evaluation #%" PRIu32 " (now: %s)",
		             key->evaluation, lacking, created, what);
	}
	return PW_OK;
}

/* Drops the entries of releases that were not pending at the last poll. */
static void watch_prune(gate_app *app)
{
	size_t k = 0;
	for (size_t i = 0; i < app->n_watch; i++)
		if (app->watch[i].seen)
			app->watch[k++] = app->watch[i];
	app->n_watch = k;
}

/*
 * The tick: look at every pending evaluation (the runtime published what the
 * outbox held just before).
 */
pw_status pw_gate_tick(void *ctx, pw_service_worker *mw, int64_t *next_ms, char *errbuf,
                       size_t errlen)
{
	(void)next_ms;
	gate_app *app = ctx;
	pw_gate_pending *pending = app->pending;
	size_t published = 0, n = 0;
	pw_status st;
	watch_prune(app);
	pw_baseline_reader br;
	pw_baseline_reader_init(&br, mw->rd, mw->pg, app->m.cache_reads);
	st = pw_gate_store_pending(mw->pg, pending, GATE_MAX_PENDING, &n, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_metric_set(app->m.pending, NULL, (double)n);
	for (size_t w = 0; w < app->n_watch; w++)
		app->watch[w].seen = false;
	for (size_t k = 0; k < n && !pw_service_stopping(mw->svc); k++) {
		gate_watch *gw = watch_of(app, &pending[k]);
		if (gw && gw->next_s > pw_mono_s())
			continue; /* backing off: nothing arrived at the last looks */
		pw_gate_release *r = NULL;
		st = pw_gate_store_load(&br, pending[k].release_id, pending[k].evaluation,
		                     &app->defaults, false, &r, errbuf, errlen);
		if (st != PW_OK)
			return st;
		int64_t now_us = pw_now_us();
		pw_gate_wait_clock clock = {
			.now_us = now_us,
			.deadline_us = r->deadline_us,
			.settle_until_us = r->received_us + app->defaults.min_wait_us,
			.catchup_until_us = r->received_us + app->defaults.baseline_wait_us,
			.families_named = r->families_named,
			.planned_unmeasured = r->planned_unmeasured,
		};
		pw_gate_wait_state ws, late;
		pw_gate_wait w = pw_gate_wait_decide(&r->policy, r->n_families, r->series, r->n_series,
		                                     &clock, &ws);
		/* what the data lacks whatever the clock: kept with the verdict, and
		 * a release decided lacking something is watched for late data */
		pw_gate_wait_clock lc = pw_gate_wait_late_clock(now_us, r->families_named,
		                                                r->planned_unmeasured);
		pw_gate_wait_decide(&r->policy, r->n_families, r->series, r->n_series, &lc, &late);
		int64_t requested = r->received_us;
		pw_gate_release_free(r);
		r = NULL;
		if (w == PW_GATE_WAIT_MORE) {
			/* without the countdown (gate show has the deadline): a write only
			 * when what is missing changed */
			char waiting[sizeof gw->waiting] = "waiting: ";
			pw_gate_wait_describe(waiting + 9, sizeof waiting - 9, &ws, INT64_MAX, now_us);
			if (!gw || strcmp(gw->waiting, waiting) != 0) {
				st = pw_gate_store_waiting(mw->pg, pending[k].release_id, pending[k].evaluation,
				                           waiting, errbuf, errlen);
				if (st != PW_OK)
					return st;
				if (gw)
					snprintf(gw->waiting, sizeof gw->waiting, "%s", waiting);
			}
			watch_backoff(app, gw, ws.missing);
			continue;
		}
		double t0 = pw_mono_s();
		st = pw_gate_store_load(&br, pending[k].release_id, pending[k].evaluation,
		                     &app->defaults, true, &r, errbuf, errlen);
		if (st != PW_OK)
			return st;
		r->lacking = late.missing;
		r->seen = late.seen;
		pw_gate_wait_describe(r->waiting, sizeof r->waiting, &late, INT64_MAX, now_us);
		st = evaluate_release(app, mw->pg, r, errbuf, errlen);
		pw_gate_release_free(r);
		const char *outcome = w == PW_GATE_WAIT_READY ? "ready" : "deadline";
		if (st != PW_OK) {
			pw_metric_inc(app->m.evaluations, (const char *[]){"failed"});
			if (pw_status_retriable(st))
				return st;
			/* the same inputs would fail the same way: mark it failed */
			pw_log_error(app->lg, "gate evaluation \"%s\" #%" PRIu32 " failed: %s",
			             pending[k].release_id, pending[k].evaluation, errbuf);
			pw_pg_params p;
			pw_pg_params_init(&p);
			pw_pg_params_text(&p, pending[k].release_id);
			pw_pg_params_int(&p, pending[k].evaluation);
			pw_pg_params_text(&p, errbuf);
			char err2[256];
			st = pw_pg_exec_params(mw->pg,
			                       "UPDATE perfwatch.gate_evaluations SET status = 'failed', "
			                       "summary = $3 WHERE release_id = $1 AND evaluation = $2 "
			                       "AND status = 'pending'",
			                       &p, 0, NULL, err2, sizeof err2);
			if (st != PW_OK)
				return pw_fail(st, errbuf, errlen, "%s", err2);
			continue;
		}
		pw_metric_inc(app->m.evaluations, (const char *[]){outcome});
		st = pw_outbox_publish(mw->outbox, &published, errbuf, errlen);
		if (st != PW_OK)
			return st;
		pw_metric_observe(app->m.latency, NULL, pw_mono_s() - t0);
		pw_metric_observe(app->m.wait, NULL, (double)(pw_now_us() - requested) / 1e6);
	}
	/* decided releases that lacked something: late data makes a new evaluation */
	size_t nw = 0;
	st = pw_gate_store_watched(mw->pg, app->late_window_us, app->watched, app->watched_lacking,
	                           app->watched_seen, GATE_MAX_PENDING, &nw, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (size_t k = 0; k < nw && !pw_service_stopping(mw->svc); k++) {
		st = look_late(app, mw, &br, &app->watched[k], app->watched_lacking[k],
		               app->watched_seen[k], errbuf, errlen);
		if (st != PW_OK)
			return st;
	}
	return PW_OK;
}

static pw_status metrics_init(gate_app *app, pw_metrics *reg, char *errbuf, size_t errlen)
{
	static const double lat_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
	static const double wait_buckets[] = {1, 5, 15, 60, 300, 900, 3600, 14400, 43200, 86400};
	pw_status st;
	if ((st = pw_metrics_counter(reg, "perfwatch_gate_requests_total",
	                             "gate requests consumed, by outcome",
	                             (const char *[]){"outcome", NULL}, &app->m.requests, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_counter(reg, "perfwatch_gate_evaluations_total",
	                             "evaluations run, by what started them (ready, deadline) or failed",
	                             (const char *[]){"outcome", NULL}, &app->m.evaluations, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_counter(reg, "perfwatch_gate_verdicts_total",
	                             "release verdicts stored, by verdict",
	                             (const char *[]){"verdict", NULL}, &app->m.verdicts, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_histogram(reg, "perfwatch_gate_evaluation_seconds",
	                               "load, decide, store and publish one evaluation", NULL,
	                               lat_buckets, sizeof lat_buckets / sizeof lat_buckets[0],
	                               &app->m.latency, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_histogram(reg, "perfwatch_gate_request_to_verdict_seconds",
	                               "from the request stored to its verdict published", NULL,
	                               wait_buckets, sizeof wait_buckets / sizeof wait_buckets[0],
	                               &app->m.wait, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_gauge(reg, "perfwatch_gate_pending_evaluations",
	                           "evaluations waiting for candidate runs or their deadline", NULL,
	                           &app->m.pending, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_counter(reg, "perfwatch_gate_late_redecisions_total",
	                             "evaluations created to re-decide a release on late data", NULL,
	                             &app->m.late, errbuf, errlen)) != PW_OK ||
	    (st = pw_baseline_cache_metric(reg, &app->m.cache_reads, errbuf, errlen)) != PW_OK)
		return st;
	return PW_OK;
}

pw_status pw_gate_init(pw_service *svc, void **out, char *errbuf, size_t errlen)
{
	const pw_config *cfg = pw_service_config(svc);
	gate_app *app = calloc(1, sizeof *app);
	if (!app)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	*out = app;
	app->lg = pw_service_log(svc);
	pw_gate_policy_from_config(cfg, &app->defaults.policy);
	app->defaults.default_wait_us = pw_config_get_duration_ms(cfg, "gate.default_wait") * 1000;
	app->defaults.min_wait_us = pw_config_get_duration_ms(cfg, "gate.min_wait") * 1000;
	app->defaults.baseline_wait_us = pw_config_get_duration_ms(cfg, "gate.baseline_wait") * 1000;
	app->defaults.active_window_us = pw_config_get_duration_ms(cfg, "gate.active_window") * 1000;
	app->poll_ms = pw_config_get_duration_ms(cfg, "gate.poll_interval");
	app->poll_max_ms = pw_config_get_duration_ms(cfg, "gate.poll_max_interval");
	app->page_route = pw_config_get_str(cfg, "gate.page_route");
	app->late_window_us = pw_config_get_duration_ms(cfg, "gate.late_window") * 1000;
	app->pending = calloc(GATE_MAX_PENDING, sizeof *app->pending);
	app->watched = calloc(GATE_MAX_PENDING, sizeof *app->watched);
	app->watched_lacking = calloc(GATE_MAX_PENDING, sizeof *app->watched_lacking);
	app->watched_seen = calloc(GATE_MAX_PENDING, sizeof *app->watched_seen);
	/* one entry per pending and per watched release */
	app->watch = calloc(2 * GATE_MAX_PENDING, sizeof *app->watch);
	if (!app->pending || !app->watch || !app->watched || !app->watched_lacking ||
	    !app->watched_seen)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	return metrics_init(app, pw_service_metrics(svc), errbuf, errlen);
}

pw_status pw_gate_worker_init(void *ctx, pw_service_worker *w, char *errbuf, size_t errlen)
{
	(void)ctx, (void)errbuf, (void)errlen;
	w->ctx = w; /* the batch callback needs the worker's connections */
	return PW_OK;
}

void pw_gate_release_app(void *ctx)
{
	gate_app *app = ctx;
	free(app->pending);
	free(app->watched);
	free(app->watched_lacking);
	free(app->watched_seen);
	free(app->watch);
	free(app);
}
