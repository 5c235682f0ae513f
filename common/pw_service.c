/*
 * pw_service.c: the one runtime every perfwatch service starts from. See
 * pw_service.h for what it does; this file is the how.
 *
 * Start: command line, configuration, logger, signals, metrics, HTTP server,
 * the service's init, then per thread (each input's workers, then the main
 * thread's own worker) PostgreSQL, Redis, producer, outbox, the service's
 * worker_init and the consumer. The HTTP server answers from the start;
 * /readyz says "starting" until every worker thread runs and the outbox left
 * by a previous run was published once. Run: the worker threads loop in
 * pw_consumer_run through batch_run (the service's callback, then the flush
 * of what it produced unless the loop holds the batch, then the outbox);
 * the main thread publishes the outbox every second and runs the tick when
 * due. Stop: the flag ends every loop, the threads are joined, the producers
 * flushed within service.stop.flush.ms, everything released in reverse.
 *
 * What the HTTP thread reads of a worker (PostgreSQL down, failing since,
 * outbox failing) is kept in atomics written by the worker's own thread.
 */
#include "pw_service.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pw_enums.h"
#include "pw_time.h"

#define SVC_MAX_THREADS (PW_SERVICE_MAX_INPUTS * PW_SERVICE_MAX_WORKERS + 1)
#define SVC_ERRLEN 1024

/* The stop flag: the signal handler only sets it. */
static volatile sig_atomic_t svc_stop_flag;

static void svc_on_signal(int sig)
{
	(void)sig;
	svc_stop_flag = 1;
}

/* One thread's connections and what the HTTP thread may read of it. */
typedef struct svc_thread {
	pw_service_worker w;
	pw_consumer *consumer;
	char group[256];
	pthread_t thread;
	bool started;
	bool ctx_made;             /* worker_init succeeded: worker_release is due */
	pw_status st;              /* what the consumer loop returned */
	char err[SVC_ERRLEN];
	atomic_bool pg_down;
	atomic_bool outbox_failing;
	atomic_llong failing_since_us; /* 0 while the last batch succeeded */
	atomic_llong kafka_down_since_us; /* no broker reachable since; 0 while one answers */
	atomic_llong data_loss_at_us;     /* the consumer's last pw_consumer_loss; 0: none */
	char loss_text[256];              /* what it was, under loss_lock */
	pthread_mutex_t loss_lock;
} svc_thread;

struct pw_service {
	const pw_service_def *def;
	pw_log lg;
	pw_config *cfg;
	pw_metrics *metrics;
	pw_http *http;
	void *app;
	volatile sig_atomic_t *stop;
	atomic_bool running;       /* every thread started, first outbox round done */
	int64_t stuck_after_us;
	int64_t kafka_down_after_us;
	int64_t loss_unready_us;
	int flush_ms;
	pw_kv *pprops;             /* producer properties (borrowed strings) */
	size_t npprops;
	svc_thread *threads;       /* nthreads; the main thread's worker last, if any */
	size_t nthreads;
	size_t nalloc;             /* threads allocated, their loss_lock initialised */
	svc_thread *main_thread;
	pw_metric *m_batches;      /* {input, result} */
	pw_metric *m_dead;         /* {topic} */
	pw_metric *m_lag;          /* {input, worker, topic} */
	pw_metric *m_lost;         /* {input, topic} */
	pw_metric *m_loss_events;  /* {input, topic} */
	pw_metric *m_kafka_down;   /* {input, worker} */
	pw_kafka_probe *probe;     /* the cluster's reachability, for /readyz */
};

/* ------------------------------------------------------------- accessors */

const pw_config *pw_service_config(const pw_service *svc) { return svc->cfg; }
const pw_log *pw_service_log(const pw_service *svc) { return &svc->lg; }
pw_metrics *pw_service_metrics(pw_service *svc) { return svc->metrics; }
pw_http *pw_service_http(pw_service *svc) { return svc->http; }
void *pw_service_app(pw_service *svc) { return svc->app; }
volatile sig_atomic_t *pw_service_stop_flag(pw_service *svc) { return svc->stop; }
bool pw_service_stopping(const pw_service *svc) { return *svc->stop != 0; }

pw_consumer *pw_service_worker_consumer(const pw_service_worker *w)
{
	return w->input < 0 ? NULL : ((const svc_thread *)w)->consumer;
}

/* ------------------------------------------------------------ dead letters */

pw_status pw_service_dead_letter(pw_service_worker *w, const rd_kafka_message_t *msg,
                                 const char *payload_type, Perfwatch__V1__DlqReason reason,
                                 const char *detail, char *errbuf, size_t errlen)
{
	pw_service *svc = w->svc;
	const char *topic = rd_kafka_topic_name(msg->rkt);
	pw_dlq_source src;
	pw_dlq_source_from_message(&src, msg, svc->def->name, payload_type);
	pw_status st = pw_dlq_record(w->pg, w->producer, &src, reason, detail, pw_now_us(), 5000, errbuf, errlen);
	if (st != PW_OK)
		return st;
	char part[16], off[32];
	snprintf(part, sizeof part, "%" PRId32, msg->partition);
	snprintf(off, sizeof off, "%" PRId64, msg->offset);
	pw_metric_inc(svc->m_dead, (const char *const[]){topic});
	pw_log_write(&svc->lg, PW_LOG_WARN,
	             (const char *[]){"topic", topic, "partition", part, "offset", off, "reason",
	                              pw_dlq_reason_text(reason), NULL},
	             "%s dead-lettered: %s", payload_type, detail);
	return PW_OK;
}

/* -------------------------------------------------------------- readiness */

static bool svc_ready(void *arg, char *reason, size_t reasonlen)
{
	pw_service *svc = arg;
	if (*svc->stop) {
		snprintf(reason, reasonlen, "stopping");
		return false;
	}
	if (!atomic_load(&svc->running)) {
		snprintf(reason, reasonlen, "starting");
		return false;
	}
	int64_t now = pw_now_us();
	int64_t pdown = svc->probe ? pw_kafka_probe_down_ms(svc->probe) : 0;
	if (pdown > 0 && pdown * 1000 >= svc->kafka_down_after_us) {
		snprintf(reason, reasonlen, "kafka: no broker has answered for %" PRId64 " s",
		         pdown / 1000);
		return false;
	}
	for (size_t i = 0; i < svc->nthreads; i++) {
		svc_thread *t = &svc->threads[i];
		const char *what = t->w.input < 0 ? "main" : svc->def->inputs[t->w.input].name;
		if (atomic_load(&t->pg_down)) {
			snprintf(reason, reasonlen, "postgresql: %s worker %d not connected", what,
			         t->w.index);
			return false;
		}
		int64_t since = atomic_load(&t->failing_since_us);
		if (since > 0 && now - since > svc->stuck_after_us) {
			snprintf(reason, reasonlen, "%s worker %d: batches failing for %" PRId64 " s", what,
			         t->w.index, (now - since) / 1000000);
			return false;
		}
		if (atomic_load(&t->outbox_failing)) {
			snprintf(reason, reasonlen, "outbox: %s worker %d cannot publish", what, t->w.index);
			return false;
		}
		int64_t down = atomic_load(&t->kafka_down_since_us);
		if (down > 0 && now - down >= svc->kafka_down_after_us) {
			snprintf(reason, reasonlen, "kafka: %s worker %d has reached no broker for %" PRId64
			         " s", what, t->w.index, (now - down) / 1000000);
			return false;
		}

		int64_t lost = atomic_load(&t->data_loss_at_us);
		if (lost > 0 && now - lost < svc->loss_unready_us) {
			pthread_mutex_lock(&t->loss_lock);
			snprintf(reason, reasonlen, "kafka: %s worker %d: data loss %" PRId64
			         " s ago: %s", what, t->w.index, (now - lost) / 1000000, t->loss_text);
			pthread_mutex_unlock(&t->loss_lock);
			return false;
		}
	}
	if (svc->def->ready)
		return svc->def->ready(svc->app, reason, reasonlen);
	return true;
}

/* Records a worker's state after a batch or tick, for svc_ready. */
static void note_result(svc_thread *t, pw_status st)
{
	atomic_store(&t->pg_down, t->w.pg && !pw_pg_conn(t->w.pg));
	if (st == PW_OK)
		atomic_store(&t->failing_since_us, 0);
	else if (atomic_load(&t->failing_since_us) == 0)
		atomic_store(&t->failing_since_us, pw_now_us());
}

/* Publishes the thread's outbox; a failure is logged and left for the next round. */
static void outbox_round(svc_thread *t)
{
	if (!t->w.outbox)
		return;
	char err[SVC_ERRLEN];
	size_t n = 0;
	pw_status st = pw_outbox_publish(t->w.outbox, &n, err, sizeof err);
	if (st != PW_OK && !atomic_load(&t->outbox_failing))
		pw_log_warn(&t->w.svc->lg, "publishing the outbox: %s (%s); retrying", err,
		            pw_strerror(st));
	else if (st == PW_OK && atomic_load(&t->outbox_failing))
		pw_log_info(&t->w.svc->lg, "outbox published again");
	atomic_store(&t->outbox_failing, st != PW_OK);
}

/* ---------------------------------------------------------- kafka health */

/* The consumer found messages deleted before its group read them (pw_consumer_loss). */
static void on_consumer_loss(void *arg, const pw_consumer_loss *loss)
{
	svc_thread *t = arg;
	pw_service *svc = t->w.svc;
	const char *input = svc->def->inputs[t->w.input].name;
	pw_metric_add(svc->m_lost, (const char *const[]){input, loss->topic}, (double)loss->lost);
	pw_metric_inc(svc->m_loss_events, (const char *const[]){input, loss->topic});
	pthread_mutex_lock(&t->loss_lock);
	snprintf(t->loss_text, sizeof t->loss_text,
	         "%s [%d]: %" PRId64 " message(s) at offsets %" PRId64 "..%" PRId64
	         " deleted before they were read",
	         loss->topic, (int)loss->partition, loss->lost, loss->expected, loss->resumed_at - 1);
	pthread_mutex_unlock(&t->loss_lock);
	atomic_store(&t->data_loss_at_us, pw_now_us());
}

/* The consumer's lag per topic and whether it reaches a broker, for /metrics and /readyz. */
static void on_consumer_health(void *arg, const pw_consumer_health *h)
{
	svc_thread *t = arg;
	pw_service *svc = t->w.svc;
	const char *input = svc->def->inputs[t->w.input].name;
	char worker[16];
	snprintf(worker, sizeof worker, "%d", t->w.index);
	for (size_t i = 0; i < h->ntopics; i++)
		if (h->lag[i] >= 0)
			pw_metric_set(svc->m_lag, (const char *const[]){input, worker, h->topics[i]},
			              (double)h->lag[i]);
	pw_metric_set(svc->m_kafka_down, (const char *const[]){input, worker},
	              h->brokers_down_ms > 0 ? 1.0 : 0.0);
	int64_t since = h->brokers_down_ms > 0 ? pw_now_us() - h->brokers_down_ms * 1000 : 0;
	if ((since == 0) != (atomic_load(&t->kafka_down_since_us) == 0))
		atomic_store(&t->kafka_down_since_us, since);
	/* A worker whose last batch lost its connection or left its outbox
	 * unpublished (PostgreSQL went away just after the commit) has no next
	 * batch to find out it recovered while its input is quiet: it looks now,
	 * or /readyz would stay 503 until a message arrived. */
	if (atomic_load(&t->pg_down) || atomic_load(&t->outbox_failing)) {
		char err[SVC_ERRLEN];
		if (t->w.pg && pw_pg_ensure(t->w.pg, err, sizeof err) == PW_OK)
			outbox_round(t);
		atomic_store(&t->pg_down, t->w.pg && !pw_pg_conn(t->w.pg));
	}
}

/* ---------------------------------------------------------------- workers */

/*
 * The consumer loop's callback: the service's, then (unless the loop holds
 * the batch for its outputs) the flush of what it produced — its dead letters
 * — so that the offsets move only after those are acknowledged, then the
 * outbox. Outbox rows are durable once the callback committed, so a failed
 * publish does not fail the batch: the main thread tries again.
 */
static pw_status batch_run(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                           size_t errlen)
{
	svc_thread *t = ctx;
	pw_service *svc = t->w.svc;
	const pw_service_input *in = &svc->def->inputs[t->w.input];
	pw_producer_counts before, after;
	pw_producer_counts_get(t->w.producer, &before);
	pw_status st = in->on_batch(t->w.ctx, msgs, n, errbuf, errlen);
	if (st == PW_OK && !in->outputs) {
		pw_producer_counts_get(t->w.producer, &after);
		if (after.produced > before.produced)
			st = pw_producer_flush(t->w.producer, svc->flush_ms, errbuf, errlen);
	}
	if (st == PW_OK)
		outbox_round(t);
	note_result(t, st);
	pw_metric_inc(svc->m_batches,
	              (const char *const[]){in->name, st == PW_OK ? "ok" : "failed"});
	return st;
}

static void *worker_main(void *arg)
{
	svc_thread *t = arg;
	pw_service *svc = t->w.svc;
	t->st = pw_consumer_run(t->consumer, batch_run, t, svc->stop, t->err, sizeof t->err);
	if (t->st != PW_OK) {
		pw_log_error(&svc->lg, "%s worker %d: consumer loop: %s",
		             svc->def->inputs[t->w.input].name, t->w.index, t->err);
		*svc->stop = 1; /* one fatal worker stops the process: its partitions need a new owner */
	}
	return NULL;
}

/* Connections, producer, outbox, context and consumer of one thread. */
static pw_status thread_open(pw_service *svc, svc_thread *t, char *err, size_t errlen)
{
	const pw_service_def *def = svc->def;
	const pw_config *cfg = svc->cfg;
	pw_status st;
	char what[SVC_ERRLEN];
	if (def->pg) {
		if ((st = pw_pg_new(&t->w.pg, pw_config_get_str(cfg, "pg.dsn"), NULL, &svc->lg, what,
		                    sizeof what)) != PW_OK ||
		    (st = pw_pg_wait_connected(t->w.pg, 60000, svc->stop, what, sizeof what)) != PW_OK)
			return pw_fail(st, err, errlen, "postgresql: %s", what);
	}
	const char *raddr = pw_config_get_str(cfg, "redis.addr");
	if (def->redis && raddr && *raddr &&
	    (st = pw_redis_new(&t->w.rd, raddr, NULL, &svc->lg, what, sizeof what)) != PW_OK)
		return pw_fail(st, err, errlen, "redis: %s", what);
	if ((st = pw_producer_new(&t->w.producer, NULL, svc->pprops, svc->npprops, &svc->lg, what,
	                          sizeof what)) != PW_OK)
		return pw_fail(st, err, errlen, "kafka producer: %s", what);
	if (def->outbox) {
		size_t nprops = 0;
		const pw_kv *props = pw_config_kafka_props(cfg, &nprops);
		pw_outbox_opts oo = {.service = def->name,
		                     .flush_timeout_ms = svc->flush_ms,
		                     .brokers = pw_config_get_str(cfg, "kafka.bootstrap.servers"),
		                     .props = props,
		                     .nprops = nprops};
		if ((st = pw_outbox_new(&t->w.outbox, t->w.pg, t->w.producer, svc->metrics, &oo,
		                        &svc->lg, what, sizeof what)) != PW_OK)
			return pw_fail(st, err, errlen, "outbox: %s", what);
	}
	t->w.app = svc->app;
	t->w.ctx = def->worker_is_ctx ? (void *)&t->w : svc->app;
	if (def->worker_init) {
		if ((st = def->worker_init(svc->app, &t->w, what, sizeof what)) != PW_OK)
			return pw_fail(st, err, errlen, "%s", what);
		t->ctx_made = true;
	}
	if (t->w.input < 0)
		return PW_OK;

	const pw_service_input *in = &def->inputs[t->w.input];
	size_t nprops = 0, ntopics = 0;
	const pw_kv *props = pw_config_kafka_props(cfg, &nprops);
	while (in->topics[ntopics])
		ntopics++;
	const char *group = pw_config_get_str(cfg, "kafka.group.id");
	if (in->group_suffix)
		snprintf(t->group, sizeof t->group, "%s-%s", group, in->group_suffix);
	else
		snprintf(t->group, sizeof t->group, "%s", group);
	const char *tkey = in->outputs_timeout_key ? in->outputs_timeout_key : "service.stop.flush.ms";
	pw_consumer_opts co = {
		.group_id = t->group,
		.topics = in->topics,
		.ntopics = ntopics,
		.props = props,
		.nprops = nprops,
		.batch_max_msgs = (size_t)pw_config_get_int(cfg, "batch.max.messages"),
		.batch_max_ms = (int)pw_config_get_duration_ms(cfg, "batch.max.ms"),
		.assignment = in->co_partitioned ? "range" : NULL,
		.outputs = in->outputs ? t->w.producer : NULL,
		.outputs_timeout_ms = (int)pw_config_get_duration_ms(cfg, tkey),
		.on_loss = on_consumer_loss,
		.on_health = on_consumer_health,
		.health_arg = t,
	};
	if ((st = pw_consumer_new(&t->consumer, &co, &svc->lg, what, sizeof what)) != PW_OK)
		return pw_fail(st, err, errlen, "kafka consumer: %s", what);
	return PW_OK;
}

static void thread_close(pw_service *svc, svc_thread *t)
{
	pw_consumer_free(t->consumer);
	t->consumer = NULL;
	if (t->ctx_made && svc->def->worker_release)
		svc->def->worker_release(svc->app, &t->w);
	t->ctx_made = false;
	pw_outbox_free(t->w.outbox);
	pw_producer_free(t->w.producer);
	pw_redis_free(t->w.rd);
	pw_pg_free(t->w.pg);
	memset(&t->w, 0, sizeof t->w);
}

/* ------------------------------------------------------------ start, stop */

/* Sleeps ms in short steps, returning early when the stop flag is set. */
static void sleep_ms(const pw_service *svc, int64_t ms)
{
	while (ms > 0 && !*svc->stop) {
		int64_t step = ms > 50 ? 50 : ms;
		struct timespec ts = {0, (long)step * 1000000L};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !*svc->stop)
			;
		ms -= step;
	}
}

/* The librdkafka properties minus the consumer-only ones, then the service's defaults. */
static pw_status producer_props(pw_service *svc, char *err, size_t errlen)
{
	static const char *const consumer_only[] = {"group.id", "session.timeout.ms",
	                                            "heartbeat.interval.ms", "auto.offset.reset",
	                                            "enable.auto.commit", "max.poll.interval.ms",
	                                            "partition.assignment.strategy", NULL};
	size_t nprops = 0;
	const pw_kv *props = pw_config_kafka_props(svc->cfg, &nprops);
	svc->pprops = calloc(nprops + svc->def->nproducer_props + 1, sizeof *svc->pprops);
	if (!svc->pprops)
		return pw_fail(PW_ERR_NOMEM, err, errlen, "out of memory");
	for (size_t i = 0; i < nprops; i++) {
		bool skip = false;
		for (size_t k = 0; consumer_only[k] && !skip; k++)
			skip = strcmp(props[i].key, consumer_only[k]) == 0;
		if (!skip)
			svc->pprops[svc->npprops++] = props[i];
	}
	/* the service's producer settings, where the operator has not set them */
	for (size_t k = 0; k < svc->def->nproducer_props; k++) {
		bool set = false;
		for (size_t i = 0; i < nprops && !set; i++)
			set = strcmp(props[i].key, svc->def->producer_props[k].key) == 0;
		if (!set)
			svc->pprops[svc->npprops++] = svc->def->producer_props[k];
	}
	return PW_OK;
}

static pw_status runtime_metrics(pw_service *svc, char *err, size_t errlen)
{
	pw_status st = pw_metrics_counter(svc->metrics, "perfwatch_service_batches_total",
	                                  "consumer batches handed to the service, by input and "
	                                  "result (failed batches are retried)",
	                                  (const char *const[]){"input", "result", NULL},
	                                  &svc->m_batches, err, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(svc->metrics, "perfwatch_service_dead_letters_total",
		                        "messages dead-lettered, by source topic",
		                        (const char *const[]){"topic", NULL}, &svc->m_dead, err,
		                        errlen);
	if (st == PW_OK)
		st = pw_metrics_gauge(svc->metrics, "perfwatch_kafka_consumer_lag",
		                      "messages published but not yet read by the group member, over "
		                      "its assigned partitions, by input, worker and topic",
		                      (const char *const[]){"input", "worker", "topic", NULL},
		                      &svc->m_lag, err, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(svc->metrics, "perfwatch_kafka_lost_messages_total",
		                        "messages the broker deleted before the group read them "
		                        "(data loss), by input and topic",
		                        (const char *const[]){"input", "topic", NULL}, &svc->m_lost,
		                        err, errlen);
	if (st == PW_OK)
		st = pw_metrics_counter(svc->metrics, "perfwatch_kafka_data_loss_events_total",
		                        "jumps of a partition's offset past messages never read (data "
		                        "loss), by input and topic",
		                        (const char *const[]){"input", "topic", NULL},
		                        &svc->m_loss_events, err, errlen);
	if (st == PW_OK)
		st = pw_metrics_gauge(svc->metrics, "perfwatch_kafka_brokers_down",
		                      "1 while the group member reaches no Kafka broker, by input and "
		                      "worker",
		                      (const char *const[]){"input", "worker", NULL}, &svc->m_kafka_down,
		                      err, errlen);
	return st;
}

static void usage(const pw_service_def *def, FILE *out)
{
	fprintf(out,
	        "usage: pw-%s [--config FILE] [--config-reference] [--help]\n"
	        "%s\n"
	        "configuration: the common keys (docs/config.md) and the service's own\n"
	        "(--config-reference), from FILE and then PW_* variables\n",
	        def->name, def->summary ? def->summary : "");
}

/*
 * The main thread publishes its outbox this often whatever the tick's period:
 * a tick may come once a minute or an hour, and a connection PostgreSQL
 * dropped between ticks (a restart) would otherwise leave the outbox failing
 * and /readyz 503 until the next tick.
 */
#define SVC_OUTBOX_PERIOD_MS 1000

static int64_t mono_ms(void) { return (int64_t)(pw_mono_s() * 1000.0); }

/* The main thread's outbox after a failed round: reconnect first, then publish. */
static void main_outbox_round(svc_thread *t)
{
	if (atomic_load(&t->outbox_failing) && t->w.pg) {
		char err[SVC_ERRLEN];
		if (pw_pg_ensure(t->w.pg, err, sizeof err) != PW_OK)
			return;
	}
	outbox_round(t);
}

/* The main thread's loop: outbox each period, tick when due, wait; until stop or a fatal error. */
static int main_loop(pw_service *svc)
{
	const pw_service_def *def = svc->def;
	char err[SVC_ERRLEN];
	int64_t interval = def->tick_key ? pw_config_get_duration_ms(svc->cfg, def->tick_key) : 1000;
	if (interval <= 0)
		interval = 1000;
	int64_t backoff = interval;
	int64_t tick_due_ms = mono_ms();
	while (!*svc->stop) {
		svc_thread *t = svc->main_thread;
		if (t) {
			main_outbox_round(t);
			if (def->tick && mono_ms() >= tick_due_ms) {
				int64_t next = interval;
				err[0] = '\0';
				pw_status st = def->tick(svc->app, &t->w, &next, err, sizeof err);
				note_result(t, st);
				if (st == PW_ERR_SHUTDOWN)
					break;
				if (st != PW_OK && !pw_status_retriable(st)) {
					pw_log_error(&svc->lg, "%s: %s (%s)", def->name, err, pw_strerror(st));
					return 1;
				}
				if (st != PW_OK) {
					pw_log_warn(&svc->lg, "%s tick: %s (%s); retrying", def->name, err,
					            pw_strerror(st));
					backoff = backoff * 2 > 30000 ? 30000 : backoff * 2;
					next = backoff;
				} else {
					backoff = interval;
				}
				tick_due_ms = mono_ms() + next;
			}
		}
		int64_t wait = SVC_OUTBOX_PERIOD_MS;
		if (def->tick) {
			int64_t until_tick = tick_due_ms - mono_ms();
			if (until_tick < wait)
				wait = until_tick;
		}
		sleep_ms(svc, wait);
	}
	return 0;
}

int pw_service_main(const pw_service_def *def, int argc, char **argv, char **envp)
{
	pw_service svc_storage, *svc = &svc_storage;
	memset(svc, 0, sizeof *svc);
	svc->def = def;
	svc->stop = &svc_stop_flag;
	atomic_init(&svc->running, false);
	char err[SVC_ERRLEN] = "";
	int rc = 1;
	const char *config_path = NULL;
	bool reference = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
			config_path = argv[++i];
		} else if (strcmp(argv[i], "--config-reference") == 0) {
			reference = true;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(def, stdout);
			return 0;
		} else {
			fprintf(stderr, "pw-%s: unknown argument \"%s\"\n", def->name, argv[i]);
			usage(def, stderr);
			return 2;
		}
	}
	if (reference) {
		char title[128];
		snprintf(title, sizeof title, "pw-%s configuration keys", def->name);
		return pw_config_write_reference(stdout, title, def->keys, def->nkeys) == PW_OK ? 0 : 1;
	}

	pw_log_init(&svc->lg, def->name, PW_LOG_INFO);
	svc->cfg = pw_config_new(def->name, def->keys, def->nkeys, err, sizeof err);
	if (!svc->cfg) {
		pw_log_error(&svc->lg, "configuration table: %s", err);
		return 1;
	}
	for (size_t i = 0; i < def->ndefaults; i++)
		if (pw_config_set_default(svc->cfg, def->defaults[i].key, def->defaults[i].value, err,
		                          sizeof err) != PW_OK) {
			pw_log_error(&svc->lg, "configuration table: %s", err);
			goto out;
		}
	if (pw_config_load(svc->cfg, config_path, envp, err, sizeof err) != PW_OK) {
		pw_log_error(&svc->lg, "configuration: %s", err);
		rc = 2;
		goto out;
	}
	int level = pw_log_level_parse(pw_config_get_str(svc->cfg, "log.level"));
	if (level >= 0)
		svc->lg.min_level = (pw_log_level)level;
	svc->stuck_after_us = pw_config_get_duration_ms(svc->cfg, "service.stuck.after") * 1000;
	svc->kafka_down_after_us =
		pw_config_get_duration_ms(svc->cfg, "service.kafka.down.after") * 1000;
	svc->loss_unready_us =
		pw_config_get_duration_ms(svc->cfg, "service.data.loss.unready") * 1000;
	svc->flush_ms = (int)pw_config_get_duration_ms(svc->cfg, "service.stop.flush.ms");

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = svc_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	svc->metrics = pw_metrics_new();
	if (!svc->metrics) {
		pw_log_error(&svc->lg, "out of memory");
		goto out;
	}
	if (runtime_metrics(svc, err, sizeof err) != PW_OK) {
		pw_log_error(&svc->lg, "metrics: %s", err);
		goto out;
	}
	char host[256];
	int port = 0;
	if (pw_http_listen_from_config(svc->cfg, host, sizeof host, &port, err, sizeof err) != PW_OK) {
		pw_log_error(&svc->lg, "configuration: %s", err);
		rc = 2;
		goto out;
	}
	pw_http_opts ho = {.host = host, .port = port, .metrics = svc->metrics, .ready = svc_ready,
	                   .ready_arg = svc};
	if (pw_http_new(&ho, &svc->http, err, sizeof err) != PW_OK) {
		pw_log_error(&svc->lg, "http: %s", err);
		goto out;
	}
	if (def->app_size > 0 && !(svc->app = calloc(1, def->app_size))) {
		pw_log_error(&svc->lg, "out of memory");
		goto out;
	}
	if (def->init) {
		pw_status st = def->init(svc, &svc->app, err, sizeof err);
		if (st != PW_OK) {
			pw_log_error(&svc->lg, "%s: %s", st == PW_ERR_CONFIG ? "configuration" : "start-up",
			             err);
			rc = st == PW_ERR_CONFIG ? 2 : 1;
			goto out;
		}
	}
	if (pw_http_start(svc->http, err, sizeof err) != PW_OK) {
		pw_log_error(&svc->lg, "http: %s", err);
		goto out;
	}
	char portbuf[16];
	snprintf(portbuf, sizeof portbuf, "%d", pw_http_port(svc->http));
	pw_log_write(&svc->lg, PW_LOG_INFO, (const char *[]){"http_port", portbuf, NULL},
	             "serving /healthz /readyz /metrics on %s:%d", host, pw_http_port(svc->http));
	if (producer_props(svc, err, sizeof err) != PW_OK) {
		pw_log_error(&svc->lg, "%s", err);
		goto out;
	}
	if (pw_kafka_probe_start(&svc->probe, NULL, svc->pprops, svc->npprops, 1000, &svc->lg, err,
	                         sizeof err) != PW_OK) {
		pw_log_error(&svc->lg, "%s", err);
		goto out;
	}

	/* the threads: each input's workers, then the main thread's own */
	size_t nthreads = 0;
	int counts[PW_SERVICE_MAX_INPUTS];
	if (def->ninputs > PW_SERVICE_MAX_INPUTS) {
		pw_log_error(&svc->lg, "%zu inputs, at most %d", def->ninputs, PW_SERVICE_MAX_INPUTS);
		goto out;
	}
	for (size_t i = 0; i < def->ninputs; i++) {
		int64_t n = def->inputs[i].workers_key
		                ? pw_config_get_int(svc->cfg, def->inputs[i].workers_key)
		                : 1;
		if (n < 1 || n > PW_SERVICE_MAX_WORKERS) {
			pw_log_error(&svc->lg, "configuration: %s workers: %" PRId64 ", want 1 .. %d",
			             def->inputs[i].name, n, PW_SERVICE_MAX_WORKERS);
			rc = 2;
			goto out;
		}
		counts[i] = (int)n;
		nthreads += (size_t)n;
	}
	bool main_worker = def->tick || def->outbox;
	svc->threads = calloc(nthreads + 1, sizeof *svc->threads);
	if (!svc->threads) {
		pw_log_error(&svc->lg, "out of memory");
		goto out;
	}
	svc->nalloc = nthreads + 1;
	for (size_t i = 0; i < svc->nalloc; i++)
		pthread_mutex_init(&svc->threads[i].loss_lock, NULL);
	for (size_t i = 0; i < def->ninputs; i++)
		for (int k = 0; k < counts[i]; k++) {
			svc_thread *t = &svc->threads[svc->nthreads++];
			t->w.svc = svc;
			t->w.input = (int)i;
			t->w.index = k;
		}
	if (main_worker) {
		svc->main_thread = &svc->threads[svc->nthreads++];
		svc->main_thread->w.svc = svc;
		svc->main_thread->w.input = -1;
	}
	for (size_t i = 0; i < svc->nthreads; i++) {
		svc_thread *t = &svc->threads[i];
		if (thread_open(svc, t, err, sizeof err) != PW_OK) {
			if (*svc->stop) {
				rc = 0; /* stopped while waiting for a server */
				goto stop;
			}
			pw_log_error(&svc->lg, "%s worker %d: %s",
			             t->w.input < 0 ? "main" : def->inputs[t->w.input].name, t->w.index,
			             err);
			goto stop;
		}
	}
	/* what a previous run stored but did not publish goes out first */
	if (svc->main_thread)
		outbox_round(svc->main_thread);
	bool failed = false;
	for (size_t i = 0; i < svc->nthreads; i++) {
		svc_thread *t = &svc->threads[i];
		if (t->w.input < 0)
			continue;
		if (pthread_create(&t->thread, NULL, worker_main, t) != 0) {
			pw_log_error(&svc->lg, "cannot start a worker thread");
			*svc->stop = 1;
			failed = true;
			break;
		}
		t->started = true;
	}
	atomic_store(&svc->running, true);
	char nw[16];
	snprintf(nw, sizeof nw, "%zu", nthreads);
	pw_log_write(&svc->lg, PW_LOG_INFO, (const char *[]){"workers", nw, NULL}, "%s running",
	             def->name);
	if (!failed)
		rc = main_loop(svc);
	if (failed)
		rc = 1;

stop:
	*svc->stop = 1;
	for (size_t i = 0; i < svc->nthreads; i++) {
		svc_thread *t = &svc->threads[i];
		if (!t->started)
			continue;
		pthread_join(t->thread, NULL);
		t->started = false;
		if (t->st != PW_OK)
			rc = 1;
	}
	/* what is still queued gets service.stop.flush.ms to be acknowledged */
	for (size_t i = 0; i < svc->nthreads; i++)
		if (svc->threads[i].w.producer &&
		    pw_producer_flush(svc->threads[i].w.producer, svc->flush_ms, err, sizeof err) !=
		        PW_OK)
			pw_log_warn(&svc->lg, "flushing at stop: %s", err);
	if (def->stopped)
		def->stopped(svc->app, &svc->lg);
	for (size_t i = svc->nthreads; i-- > 0;)
		thread_close(svc, &svc->threads[i]);
out:
	*svc->stop = 1;
	pw_http_free(svc->http); /* stops the HTTP thread before anything it reads is freed */
	svc->http = NULL;
	pw_kafka_probe_stop(svc->probe);
	svc->probe = NULL;
	if (svc->app && def->release)
		def->release(svc->app);
	if (def->app_size > 0)
		free(svc->app);
	svc->app = NULL;
	for (size_t i = 0; i < svc->nalloc; i++)
		pthread_mutex_destroy(&svc->threads[i].loss_lock);
	free(svc->threads);
	free(svc->pprops);
	pw_metrics_free(svc->metrics);
	pw_config_free(svc->cfg);
	pw_log_info(&svc->lg, "%s stopped", def->name);
	return rc;
}

bool pw_service_retriable(pw_status st)
{
	return st == PW_ERR_UNAVAILABLE || st == PW_ERR_TIMEOUT || st == PW_ERR_NOMEM ||
	       st == PW_ERR_KAFKA || st == PW_ERR_SHUTDOWN;
}

Perfwatch__V1__DlqReason pw_service_failure_reason(pw_status st)
{
	return st == PW_ERR_TOO_LARGE ? PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE
	                              : PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED;
}
