/*
 * main.c: pw-gate, the release gate service — wires configuration, the
 * PostgreSQL connections, the Kafka consumer and producers, the metrics
 * endpoint and signals around the gate's decisions.
 *
 * Two threads, each with its own connections (nothing is shared but the
 * metrics registry, which is thread-safe, and the stop flag):
 *   - the consumer thread reads perf.gate.requests.v1 in batches
 *     (pw_consumer_run) and stores each GateRequest as a pending evaluation
 *     (pw_gate_store_request) in one transaction per batch; the batch's offsets
 *     are committed after that transaction, so a request is durable before
 *     its offset moves. Requests that can never be stored are dead-lettered.
 *   - the main thread polls PostgreSQL every gate.poll_interval: for each
 *     pending evaluation it applies the waiting rule (gate_policy.h) to the
 *     candidate's sample counts; when every active series has its runs, or
 *     the deadline passed, it loads the samples, decides (pw_gate_decide),
 *     and writes results, alerts and the outbox in one transaction
 *     (pw_gate_store_finish); then it publishes the outbox and marks it
 *     published only once the broker acknowledged every message.
 * A gate killed anywhere resumes from PostgreSQL: pending evaluations are
 * picked up again, unpublished outbox rows are sent again. docs/gate.md has
 * the policy, the configuration keys and the measured figures.
 *
 *   pw-gate [--config FILE]        run
 *   pw-gate --config-reference     print the gate.* keys as docs/config.md does
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate_config.h"
#include "gate_eval.h"
#include "gate_messages.h"
#include "gate_policy.h"
#include "gate_store.h"
#include "pw_dlq.h"
#include "pw_input.h"
#include "pw_time.h"
#include "pw_config.h"
#include "pw_http.h"
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_metrics.h"
#include "pw_pg.h"
#include "pw_status.h"
#include "pw_topics.h"

#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"

#define GATE_MAX_PENDING 256
#define GATE_OUTBOX_BATCH 512
#define GATE_FLUSH_MS 10000

/* Set by the signal handler; both threads watch it. */
static volatile sig_atomic_t gate_stop;

static void gate_on_signal(int sig)
{
	(void)sig;
	gate_stop = 1;
}

typedef struct gate_metrics {
	pw_metric *requests;    /* {outcome} */
	pw_metric *evaluations; /* {outcome} */
	pw_metric *verdicts;    /* {verdict} */
	pw_metric *latency;     /* seconds from ready to verdict published */
	pw_metric *wait;        /* seconds from request to verdict published */
	pw_metric *pending;     /* gauge */
	pw_metric *published;   /* {topic} */
} gate_metrics;

typedef struct gate_app {
	pw_log lg;
	pw_config *cfg;
	pw_metrics *metrics;
	gate_metrics m;
	pw_http *http;
	pw_gate_store_defaults defaults;
	const char *page_route;
	int64_t poll_ms;

	/* consumer thread */
	pw_pg *pg_in;
	pw_producer *dlq;
	pw_consumer *consumer;
	pw_status consumer_status;
	char consumer_err[512];

	/* evaluator (main thread) */
	pw_pg *pg_eval;
	pw_producer *out;
	pw_gate_outbox_row *outbox;  /* GATE_OUTBOX_BATCH rows of work space */
	pw_gate_pending *pending;    /* GATE_MAX_PENDING keys of work space */
	pw_kv *producer_props;    /* the kafka.* properties producers take (borrowed strings) */
	struct gate_watch *watch; /* GATE_MAX_PENDING: when to look at each pending release again */
	size_t n_watch;
	int64_t poll_max_ms;
} gate_app;

/* The evaluator's memory of one pending release, for the polling backoff. */
typedef struct gate_watch {
	pw_gate_pending key;
	size_t missing;      /* active series short of runs at the last look */
	int64_t interval_ms; /* current wait */
	double next_s;       /* monotonic time of the next look */
	bool seen;           /* still pending at this poll */
} gate_watch;

/* ------------------------------------------------------------ dead letters */

static pw_status dead_letter(gate_app *app, const rd_kafka_message_t *msg,
                             Perfwatch__V1__DlqReason reason, const char *detail, char *errbuf,
                             size_t errlen)
{
	const char *topic = rd_kafka_topic_name(msg->rkt);
	const char *reason_text = reason == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED
	                              ? "decode_failed"
	                          : reason == PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
	                              ? "invalid_value"
	                              : "processing_failed";
	char part[16], off[32], at[32];
	int64_t t = pw_now_us();
	snprintf(part, sizeof part, "%" PRId32, msg->partition);
	snprintf(off, sizeof off, "%" PRId64, msg->offset);
	snprintf(at, sizeof at, "%" PRId64, t);
	const char *vals[] = {topic, part, off, reason_text, detail, "gate",
	                      "perfwatch.v1.GateRequest", msg->key ? (const char *)msg->key : NULL,
	                      msg->payload ? (const char *)msg->payload : NULL, at};
	int lens[] = {0, 0, 0, 0, 0, 0, 0, (int)msg->key_len, (int)msg->len, 0};
	int fmts[] = {0, 0, 0, 0, 0, 0, 0, 1, 1, 0};
	pw_status st = pw_pg_execv(app->pg_in,
	                           "INSERT INTO perfwatch.dead_letters (source_topic, kafka_partition, "
	                           "kafka_offset, reason, detail, service, payload_type, original_key, "
	                           "original_payload, failed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, "
	                           "$8, $9, to_timestamp($10::double precision / 1e6)) "
	                           "ON CONFLICT DO NOTHING",
	                           10, vals, lens, fmts, 0, NULL, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_dlq_source src;
	pw_dlq_source_from_message(&src, msg, "gate", "perfwatch.v1.GateRequest");
	st = pw_dlq_publish(app->dlq, &src, reason, detail, 5000, errbuf, errlen);
	pw_log_write(&app->lg, PW_LOG_WARN,
	             (const char *[]){"topic", topic, "partition", part, "offset", off, NULL},
	             "gate request dead-lettered: %s", detail);
	return st;
}

/* --------------------------------------------------------------- consumer */

static pw_status on_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                          size_t errlen)
{
	gate_app *app = ctx;
	size_t stored = 0, dup = 0, dead = 0;
	pw_status st = pw_pg_begin(app->pg_in, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (size_t i = 0; i < n; i++) {
		const rd_kafka_message_t *msg = msgs[i];
		char bad[512];
		if (pw_input_check_wire(&perfwatch__v1__gate_request__descriptor, msg->payload,
		                        msg->len, bad, sizeof bad) != PW_OK) {
			st = dead_letter(app, msg, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE,
			                 bad, errbuf, errlen);
			if (st != PW_OK)
				goto fail;
			dead++;
			continue;
		}
		Perfwatch__V1__GateRequest *req =
		    perfwatch__v1__gate_request__unpack(NULL, msg->len, msg->payload);
		if (!req) {
			st = dead_letter(app, msg, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED,
			                 "payload is not a perfwatch.v1.GateRequest", errbuf, errlen);
			if (st != PW_OK)
				goto fail;
			dead++;
			continue;
		}
		st = pw_pg_exec(app->pg_in, "SAVEPOINT gate_request", 0, NULL, NULL, errbuf, errlen);
		if (st != PW_OK) {
			perfwatch__v1__gate_request__free_unpacked(req, NULL);
			goto fail;
		}
		char why[512] = "";
		bool duplicate = false;
		st = pw_gate_store_request(app->pg_in, req, &app->defaults, &duplicate, why, sizeof why);
		if (st == PW_OK) {
			pw_log_write(&app->lg, PW_LOG_INFO,
			             (const char *[]){"release_id", req->release_id, NULL},
			             "gate request %s (evaluation %" PRIu32 ")",
			             duplicate ? "redelivered; stored verdict republished" : "stored",
			             req->evaluation);
			duplicate ? dup++ : stored++;
		}
		perfwatch__v1__gate_request__free_unpacked(req, NULL);
		if (st == PW_ERR_INVALID || st == PW_ERR_PG) {
			/* the request can never be stored: undo its part, dead-letter it */
			pw_status rb = pw_pg_exec(app->pg_in, "ROLLBACK TO SAVEPOINT gate_request", 0, NULL,
			                          NULL, errbuf, errlen);
			if (rb != PW_OK) {
				st = rb;
				goto fail;
			}
			st = dead_letter(app, msg,
			                 st == PW_ERR_INVALID
			                     ? PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
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
	st = pw_pg_commit(app->pg_in, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (dead > 0) {
		st = pw_producer_flush(app->dlq, GATE_FLUSH_MS, errbuf, errlen);
		if (st != PW_OK)
			return st; /* redelivered: every write above is idempotent */
	}
	pw_metric_add(app->m.requests, (const char *[]){"stored"}, (double)stored);
	pw_metric_add(app->m.requests, (const char *[]){"duplicate"}, (double)dup);
	pw_metric_add(app->m.requests, (const char *[]){"dead_lettered"}, (double)dead);
	return PW_OK;

fail:
	pw_pg_rollback(app->pg_in, NULL, 0);
	return st;
}

static void *consumer_main(void *arg)
{
	gate_app *app = arg;
	app->consumer_status = pw_consumer_run(app->consumer, on_batch, app, &gate_stop,
	                                       app->consumer_err, sizeof app->consumer_err);
	if (app->consumer_status != PW_OK) {
		pw_log_error(&app->lg, "gate consumer stopped: %s", app->consumer_err);
		gate_stop = 1;
	}
	return NULL;
}

/* -------------------------------------------------------------- evaluator */

/* Publishes every unpublished outbox row; marks them once acknowledged. */
static pw_status publish_outbox(gate_app *app, size_t *published, char *errbuf, size_t errlen)
{
	pw_gate_outbox_row *rows = app->outbox;
	size_t n = 0;
	*published = 0;
	pw_status st = pw_gate_store_outbox_pending(app->pg_eval, rows, GATE_OUTBOX_BATCH, &n, errbuf,
	                                         errlen);
	if (st != PW_OK || n == 0)
		return st;
	for (size_t i = 0; i < n && st == PW_OK; i++)
		st = pw_producer_produce(app->out, rows[i].topic, rows[i].key, strlen(rows[i].key),
		                         rows[i].payload, rows[i].len, 5000, errbuf, errlen);
	if (st == PW_OK)
		st = pw_producer_flush(app->out, GATE_FLUSH_MS, errbuf, errlen);
	if (st == PW_OK)
		st = pw_gate_store_outbox_done(app->pg_eval, rows, n, errbuf, errlen);
	if (st == PW_OK) {
		*published = n;
		for (size_t i = 0; i < n; i++)
			pw_metric_inc(app->m.published, (const char *[]){rows[i].topic});
	}
	for (size_t i = 0; i < n; i++)
		pw_gate_outbox_row_release(&rows[i]);
	return st;
}

/* Decides one loaded release (with samples) and stores it with its outbox. */
static pw_status evaluate_release(gate_app *app, pw_gate_release *r, char *errbuf, size_t errlen)
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
		pw_log_warn(&app->lg, "gate evaluation \"%s\": %zu series with a zero baseline median "
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
	pw_gate_summary(r->summary, sizeof r->summary, &r->policy, r->families, r->fr,
	                r->n_families, r->series, r->sr, r->n_series, &r->rr);

	pw_gate_messages msgs;
	st = pw_gate_messages_build(r, app->page_route, &msgs, errbuf, errlen);
	if (st != PW_OK)
		return st;
	bool stored = false;
	st = pw_gate_store_finish(app->pg_eval, r, msgs.msgs, msgs.n_msgs,
	                       (const Perfwatch__V1__Alert *const *)msgs.alerts, msgs.n_alerts,
	                       &stored, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (!stored) {
		pw_log_info(&app->lg, "gate evaluation \"%s\" #%" PRIu32 " finished elsewhere",
		            r->release_id, r->evaluation);
		return PW_OK;
	}
	const char *verdict = pw_gate_outcome_name(pw_gate_family_outcome(r->rr.verdict));
	pw_metric_inc(app->m.verdicts, (const char *[]){verdict});
	pw_log_write(&app->lg, PW_LOG_INFO,
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
	if (app->n_watch == GATE_MAX_PENDING)
		return NULL;
	gate_watch *w = &app->watch[app->n_watch++];
	memset(w, 0, sizeof *w);
	w->key = *p;
	w->missing = SIZE_MAX;
	w->seen = true;
	return w;
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

/* One poll: publish leftovers, then look at every pending evaluation. */
static pw_status gate_poll(gate_app *app, char *errbuf, size_t errlen)
{
	pw_gate_pending *pending = app->pending;
	size_t published = 0, n = 0;
	pw_status st = publish_outbox(app, &published, errbuf, errlen);
	if (st != PW_OK)
		return st;
	watch_prune(app);
	st = pw_gate_store_pending(app->pg_eval, pending, GATE_MAX_PENDING, &n, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_metric_set(app->m.pending, NULL, (double)n);
	for (size_t w = 0; w < app->n_watch; w++)
		app->watch[w].seen = false;
	for (size_t k = 0; k < n && !gate_stop; k++) {
		gate_watch *gw = watch_of(app, &pending[k]);
		if (gw && gw->next_s > pw_mono_s())
			continue; /* backing off: nothing arrived at the last looks */
		pw_gate_release *r = NULL;
		st = pw_gate_store_load(app->pg_eval, pending[k].release_id, pending[k].evaluation,
		                     &app->defaults, false, &r, errbuf, errlen);
		if (st != PW_OK)
			return st;
		size_t missing = 0;
		pw_gate_wait w = pw_gate_wait_decide(&r->policy, r->n_families, r->series, r->n_series,
		                                     pw_now_us(), r->deadline_us,
		                                     r->received_us + app->defaults.min_wait_us, &missing);
		int64_t requested = r->received_us;
		pw_gate_release_free(r);
		r = NULL;
		if (w == PW_GATE_WAIT_MORE) {
			if (gw) {
				gw->interval_ms = pw_gate_next_poll_ms(gw->missing, missing, gw->interval_ms,
				                                       app->poll_ms, app->poll_max_ms);
				gw->missing = missing;
				gw->next_s = pw_mono_s() + (double)gw->interval_ms / 1e3;
			}
			continue;
		}
		double t0 = pw_mono_s();
		st = pw_gate_store_load(app->pg_eval, pending[k].release_id, pending[k].evaluation,
		                     &app->defaults, true, &r, errbuf, errlen);
		if (st != PW_OK)
			return st;
		st = evaluate_release(app, r, errbuf, errlen);
		pw_gate_release_free(r);
		const char *outcome = w == PW_GATE_WAIT_READY ? "ready" : "deadline";
		if (st != PW_OK) {
			pw_metric_inc(app->m.evaluations, (const char *[]){"failed"});
			if (pw_status_retriable(st))
				return st;
			/* the same inputs would fail the same way: mark it failed */
			pw_log_error(&app->lg, "gate evaluation \"%s\" #%" PRIu32 " failed: %s",
			             pending[k].release_id, pending[k].evaluation, errbuf);
			char ev[16];
			snprintf(ev, sizeof ev, "%" PRIu32, pending[k].evaluation);
			const char *p[] = {pending[k].release_id, ev, errbuf};
			char err2[256];
			st = pw_pg_exec(app->pg_eval,
			                "UPDATE perfwatch.gate_evaluations SET status = 'failed', "
			                "summary = $3 WHERE release_id = $1 AND evaluation = $2 "
			                "AND status = 'pending'",
			                3, p, NULL, err2, sizeof err2);
			if (st != PW_OK)
				return pw_fail(st, errbuf, errlen, "%s", err2);
			continue;
		}
		pw_metric_inc(app->m.evaluations, (const char *[]){outcome});
		st = publish_outbox(app, &published, errbuf, errlen);
		if (st != PW_OK)
			return st;
		pw_metric_observe(app->m.latency, NULL, pw_mono_s() - t0);
		pw_metric_observe(app->m.wait, NULL, (double)(pw_now_us() - requested) / 1e6);
	}
	return PW_OK;
}

static void sleep_ms(int64_t ms)
{
	while (ms > 0 && !gate_stop) {
		int64_t step = ms > 50 ? 50 : ms;
		struct timespec ts = {0, (long)step * 1000000L};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !gate_stop)
			;
		ms -= step;
	}
}

/* ------------------------------------------------------------------- main */

static pw_status metrics_init(gate_app *app, char *errbuf, size_t errlen)
{
	static const double lat_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
	static const double wait_buckets[] = {1, 5, 15, 60, 300, 900, 3600, 14400, 43200, 86400};
	pw_status st;
	app->metrics = pw_metrics_new();
	if (!app->metrics)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory creating metrics");
	if ((st = pw_metrics_counter(app->metrics, "perfwatch_gate_requests_total",
	                             "gate requests consumed, by outcome",
	                             (const char *[]){"outcome", NULL}, &app->m.requests, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_counter(app->metrics, "perfwatch_gate_evaluations_total",
	                             "evaluations run, by what started them (ready, deadline) or failed",
	                             (const char *[]){"outcome", NULL}, &app->m.evaluations, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_counter(app->metrics, "perfwatch_gate_verdicts_total",
	                             "release verdicts stored, by verdict",
	                             (const char *[]){"verdict", NULL}, &app->m.verdicts, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_counter(app->metrics, "perfwatch_gate_published_total",
	                             "messages published from the outbox, by topic",
	                             (const char *[]){"topic", NULL}, &app->m.published, errbuf,
	                             errlen)) != PW_OK ||
	    (st = pw_metrics_histogram(app->metrics, "perfwatch_gate_evaluation_seconds",
	                               "load, decide, store and publish one evaluation", NULL,
	                               lat_buckets, sizeof lat_buckets / sizeof lat_buckets[0],
	                               &app->m.latency, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_histogram(app->metrics, "perfwatch_gate_request_to_verdict_seconds",
	                               "from the request stored to its verdict published", NULL,
	                               wait_buckets, sizeof wait_buckets / sizeof wait_buckets[0],
	                               &app->m.wait, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_gauge(app->metrics, "perfwatch_gate_pending_evaluations",
	                           "evaluations waiting for candidate runs or their deadline", NULL,
	                           &app->m.pending, errbuf, errlen)) != PW_OK)
		return st;
	return PW_OK;
}

static bool gate_ready(void *arg, char *reason, size_t reasonlen)
{
	(void)arg;
	if (gate_stop) {
		snprintf(reason, reasonlen, "shutting down");
		return false;
	}
	return true;
}

int main(int argc, char **argv, char **envp)
{
	int rc = 1;
	char err[1024] = "";
	gate_app app;
	memset(&app, 0, sizeof app);
	const char *config_path = NULL;
	bool consumer_started = false, print_reference = false;
	pthread_t consumer_thread;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
			config_path = argv[++i];
		} else if (strcmp(argv[i], "--config-reference") == 0) {
			print_reference = true;
		} else {
			fprintf(stderr, "usage: pw-gate [--config FILE] [--config-reference]\n");
			return 2;
		}
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = gate_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	pw_log_init(&app.lg, "gate", PW_LOG_INFO);
	size_t nkeys = 0;
	const pw_conf_key *keys = pw_gate_config_keys(&nkeys);
	if (print_reference)
		return pw_config_write_reference(stdout, "pw-gate configuration keys", keys, nkeys) ==
		               PW_OK
		           ? 0
		           : 1;
	app.cfg = pw_config_new("gate", keys, nkeys, err, sizeof err);
	if (!app.cfg) {
		pw_log_error(&app.lg, "configuration table: %s", err);
		goto out;
	}
	if (pw_config_load(app.cfg, config_path, envp, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "configuration: %s", err);
		goto out;
	}
	int level = pw_log_level_parse(pw_config_get_str(app.cfg, "log.level"));
	app.lg.min_level = level < 0 ? PW_LOG_INFO : (pw_log_level)level;

	pw_gate_policy_from_config(app.cfg, &app.defaults.policy);
	app.defaults.default_wait_us = pw_config_get_duration_ms(app.cfg, "gate.default_wait") * 1000;
	app.defaults.min_wait_us = pw_config_get_duration_ms(app.cfg, "gate.min_wait") * 1000;
	app.defaults.active_window_us = pw_config_get_duration_ms(app.cfg, "gate.active_window") * 1000;
	app.poll_ms = pw_config_get_duration_ms(app.cfg, "gate.poll_interval");
	app.poll_max_ms = pw_config_get_duration_ms(app.cfg, "gate.poll_max_interval");
	app.page_route = pw_config_get_str(app.cfg, "gate.page_route");

	if (metrics_init(&app, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "metrics: %s", err);
		goto out;
	}
	char host[256];
	int port = 0;
	if (pw_http_listen_from_config(app.cfg, host, sizeof host, &port, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "http: %s", err);
		goto out;
	}
	pw_http_opts hopts = {.host = host, .port = port, .metrics = app.metrics,
	                      .ready = gate_ready, .ready_arg = &app};
	if (pw_http_new(&hopts, &app.http, err, sizeof err) != PW_OK ||
	    pw_http_start(app.http, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "http: %s", err);
		goto out;
	}
	pw_log_info(&app.lg, "serving /metrics on %s:%d", host, pw_http_port(app.http));

	app.outbox = calloc(GATE_OUTBOX_BATCH, sizeof *app.outbox);
	app.pending = calloc(GATE_MAX_PENDING, sizeof *app.pending);
	app.watch = calloc(GATE_MAX_PENDING, sizeof *app.watch);
	if (!app.outbox || !app.pending || !app.watch) {
		pw_log_error(&app.lg, "out of memory");
		goto out;
	}
	const char *dsn = pw_config_get_str(app.cfg, "pg.dsn");
	if (pw_pg_new(&app.pg_in, dsn ? dsn : "", NULL, &app.lg, err, sizeof err) != PW_OK ||
	    pw_pg_new(&app.pg_eval, dsn ? dsn : "", NULL, &app.lg, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "postgresql: %s", err);
		goto out;
	}
	if (pw_pg_wait_connected(app.pg_eval, 60000, &gate_stop, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "postgresql: %s", err);
		goto out;
	}

	size_t nprops = 0, nprod = 0;
	const pw_kv *props = pw_config_kafka_props(app.cfg, &nprops);
	/* the producers get the same properties minus the consumer-only ones */
	app.producer_props = calloc(nprops + 3, sizeof *app.producer_props);
	if (!app.producer_props) {
		pw_log_error(&app.lg, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nprops; i++)
		if (strcmp(props[i].key, "group.id") != 0 &&
		    strcmp(props[i].key, "session.timeout.ms") != 0 &&
		    strcmp(props[i].key, "heartbeat.interval.ms") != 0 &&
		    strcmp(props[i].key, "auto.offset.reset") != 0)
			app.producer_props[nprod++] = props[i];
	/*
	 * A GateVerdict lists every gated series: 2,160 of them are about 1 MB,
	 * over librdkafka's default message.max.bytes. Allow 16 MiB and compress
	 * (the verdicts topic's max.message.bytes must allow it too, see
	 * docs/gate.md); settings of the operator's own win.
	 */
	static const pw_kv large[] = {{"message.max.bytes", "16777216"}, {"compression.type", "lz4"}};
	for (size_t k = 0; k < sizeof large / sizeof large[0]; k++) {
		bool set = false;
		for (size_t i = 0; i < nprops; i++)
			set = set || strcmp(props[i].key, large[k].key) == 0;
		if (!set)
			app.producer_props[nprod++] = large[k];
	}
	if (pw_producer_new(&app.out, NULL, app.producer_props, nprod, &app.lg, err, sizeof err) !=
	        PW_OK ||
	    pw_producer_new(&app.dlq, NULL, app.producer_props, nprod, &app.lg, err, sizeof err) !=
	        PW_OK) {
		pw_log_error(&app.lg, "kafka producer: %s", err);
		goto out;
	}
	const char *topics[] = {PW_TOPIC_GATE_REQUESTS};
	pw_consumer_opts copts = {
		.group_id = pw_config_get_str(app.cfg, "kafka.group.id"),
		.topics = topics,
		.ntopics = 1,
		.props = props,
		.nprops = nprops,
		.batch_max_msgs = (size_t)pw_config_get_int(app.cfg, "batch.max.messages"),
		.batch_max_ms = (int)pw_config_get_duration_ms(app.cfg, "batch.max.ms"),
	};
	if (pw_consumer_new(&app.consumer, &copts, &app.lg, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "kafka consumer: %s", err);
		goto out;
	}
	if (pthread_create(&consumer_thread, NULL, consumer_main, &app) != 0) {
		pw_log_error(&app.lg, "cannot start the consumer thread");
		goto out;
	}
	consumer_started = true;
	pw_log_info(&app.lg, "gate running: polling every %" PRId64 " ms", app.poll_ms);

	while (!gate_stop) {
		pw_status st = gate_poll(&app, err, sizeof err);
		if (st != PW_OK) {
			pw_log_warn(&app.lg, "gate poll: %s (%s); retrying", err, pw_strerror(st));
			sleep_ms(app.poll_ms * 4);
			continue;
		}
		sleep_ms(app.poll_ms);
	}
	rc = 0;

out:
	gate_stop = 1;
	if (consumer_started) {
		pthread_join(consumer_thread, NULL);
		if (app.consumer_status != PW_OK)
			rc = 1;
	}
	pw_consumer_free(app.consumer);
	pw_producer_free(app.dlq);
	pw_producer_free(app.out);
	pw_pg_free(app.pg_in);
	pw_pg_free(app.pg_eval);
	pw_http_free(app.http);
	pw_metrics_free(app.metrics);
	pw_config_free(app.cfg);
	free(app.outbox);
	free(app.pending);
	free(app.producer_props);
	free(app.watch);
	pw_log_info(&app.lg, "gate stopped");
	return rc;
}
