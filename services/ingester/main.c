/*
 * main.c: the ingester service — perf.runs.v1 into PostgreSQL, perf.points.v1
 * and perf.dlq.v1 out.
 *
 * Wiring only: configuration (pw_config.h: the common keys plus the ingest.*
 * keys below, from an optional file and PW_* variables), the HTTP server for
 * /healthz, /readyz and /metrics, the signal flag, and ingest.workers worker
 * threads. Each worker is one member of the consumer group with its own
 * PostgreSQL connection, idempotent producer and pw_ingester (store.h, which
 * holds every decision), so a partition is always handled by one thread in
 * order, and one worker's transaction runs while another formats, publishes
 * or waits for the broker. Exit status: 0 after SIGTERM/SIGINT, 1 on a fatal
 * error, 2 on a bad command line or configuration.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_config.h"
#include "pw_http.h"
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_metrics.h"
#include "pw_pg.h"
#include "pw_topics.h"
#include "store.h"

#define MAX_WORKERS 16

static const pw_conf_key ingest_keys[] = {
	{.name = "ingest.max.age.days", .type = PW_CONF_INT, .def = "1830", .min = 1, .max = 36600,
	 .help = "runs that started longer ago than this are dead-lettered (invalid_value)"},
	{.name = "ingest.max.future.ms", .type = PW_CONF_DURATION_MS, .def = "10m", .min = 0,
	 .max = 86400000, .help = "clock skew tolerated for run timestamps ahead of the ingester's clock"},
	{.name = "ingest.max.payload.bytes", .type = PW_CONF_INT, .def = "4194304", .min = 1024,
	 .max = 104857600, .help = "larger RunResult messages are dead-lettered (oversize)"},
	{.name = "ingest.flush.timeout.ms", .type = PW_CONF_DURATION_MS, .def = "30s", .min = 100,
	 .max = 600000, .help = "how long a batch's points may wait for local queue space and then "
	         "for their delivery reports before the batch is read again"},
	{.name = "ingest.series.cache.max", .type = PW_CONF_INT, .def = "1000000", .min = 1,
	 .max = 100000000, .help = "series ids kept in memory (one cache shared by the workers)"},
	{.name = "ingest.workers", .type = PW_CONF_INT, .def = "2", .min = 1, .max = MAX_WORKERS,
	 .help = "worker threads, each a consumer-group member with its own PostgreSQL connection "
	         "and producer; memory grows with workers x batch.max.messages"},
};

typedef struct worker {
	struct app *app;
	int index;
	pw_pg *pg;
	pw_producer *prod;
	pw_consumer *cons;
	pw_ingester *ing;
	pthread_t thread;
	bool started;
	pw_status st;       /* what its consumer loop returned */
	char err[1024];
} worker;

typedef struct app {
	pw_log log;
	pw_config *cfg;
	pw_metrics *metrics;
	pw_ingest_metrics im;
	pw_series_cache *series;       /* shared by the workers */
	pw_http *http;
	worker workers[MAX_WORKERS];
	int nworkers;
	volatile sig_atomic_t *stop;
} app;

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static bool ready(void *arg, char *reason, size_t len)
{
	app *a = arg;
	for (int i = 0; i < a->nworkers; i++)
		if (!a->workers[i].pg || !pw_pg_conn(a->workers[i].pg)) {
			snprintf(reason, len, "postgresql: worker %d not connected", i);
			return false;
		}
	return true;
}

/* Connections, producer, ingester and consumer of one worker; *what names the part that failed. */
static pw_status worker_open(app *a, worker *w, const pw_ingest_opts *io, const char **what,
                             char *err, size_t errlen)
{
	const char *dsn = pw_config_get_str(a->cfg, "pg.dsn");
	size_t nprops = 0;
	const pw_kv *props = pw_config_kafka_props(a->cfg, &nprops);
	const char *brokers = pw_config_get_str(a->cfg, "kafka.bootstrap.servers");
	pw_status st;
	*what = "postgresql";
	if ((st = pw_pg_new(&w->pg, dsn, NULL, &a->log, err, errlen)) != PW_OK ||
	    (st = pw_pg_wait_connected(w->pg, 60000, a->stop, err, errlen)) != PW_OK)
		return st;
	*what = "kafka producer";
	if ((st = pw_producer_new(&w->prod, brokers, props, nprops, &a->log, err, errlen)) != PW_OK)
		return st;
	*what = "ingester";
	if ((st = pw_ingester_new(&w->ing, w->pg, w->prod, &a->log, &a->im, io, err, errlen)) != PW_OK)
		return st;
	const char *topics[] = {PW_TOPIC_RUNS};
	pw_consumer_opts co = {
		.brokers = brokers,
		.group_id = pw_config_get_str(a->cfg, "kafka.group.id"),
		.topics = topics,
		.ntopics = 1,
		.props = props,
		.nprops = nprops,
		.batch_max_msgs = (size_t)pw_config_get_int(a->cfg, "batch.max.messages"),
		.batch_max_ms = (int)pw_config_get_duration_ms(a->cfg, "batch.max.ms"),
		.outputs = w->prod,
		.outputs_timeout_ms = io->flush_timeout_ms,
	};
	*what = "kafka consumer";
	return pw_consumer_new(&w->cons, &co, &a->log, err, errlen);
}

static void worker_close(worker *w)
{
	pw_consumer_free(w->cons);
	pw_ingester_free(w->ing);
	pw_producer_free(w->prod);
	pw_pg_free(w->pg);
}

static void *worker_main(void *arg)
{
	worker *w = arg;
	w->st = pw_consumer_run(w->cons, pw_ingester_batch, w->ing, w->app->stop, w->err,
	                        sizeof w->err);
	if (w->st != PW_OK) {
		pw_log_error(&w->app->log, "worker %d: consumer loop: %s", w->index, w->err);
		*w->app->stop = 1; /* one fatal worker stops the process: its partitions need a new owner */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	app a;
	memset(&a, 0, sizeof a);
	a.stop = &stop_flag;
	char err[1024];
	int rc = 1;
	const char *conf_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
			conf_path = argv[++i];
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			printf("usage: pw-ingester [--config FILE]\n"
			       "configuration: common keys and ingest.* (docs/config.md), PW_* overrides\n");
			return 0;
		} else {
			fprintf(stderr, "pw-ingester: unknown argument \"%s\"\n", argv[i]);
			return 2;
		}
	}
	pw_log_init(&a.log, "ingester", PW_LOG_INFO);
	a.cfg = pw_config_new("ingester", ingest_keys, sizeof ingest_keys / sizeof ingest_keys[0], err,
	                      sizeof err);
	if (!a.cfg) {
		pw_log_error(&a.log, "configuration table: %s", err);
		return 1;
	}
	/* bigger batches than the common default: one transaction and one delivery wait per 2,000 runs */
	if (pw_config_set_default(a.cfg, "batch.max.messages", "2000", err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "configuration table: %s", err);
		goto out;
	}
	if (pw_config_load(a.cfg, conf_path, NULL, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "configuration: %s", err);
		rc = 2;
		goto out;
	}
	int lvl = pw_log_level_parse(pw_config_get_str(a.cfg, "log.level"));
	if (lvl >= 0)
		a.log.min_level = (pw_log_level)lvl;

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	const char *dsn = pw_config_get_str(a.cfg, "pg.dsn");
	if (!dsn || !*dsn) {
		pw_log_error(&a.log, "configuration: pg.dsn is not set (PW_PG_DSN)");
		rc = 2;
		goto out;
	}
	a.metrics = pw_metrics_new();
	if (!a.metrics) {
		pw_log_error(&a.log, "out of memory");
		goto out;
	}
	if (pw_ingest_metrics_register(a.metrics, &a.im, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "metrics: %s", err);
		goto out;
	}
	pw_ingest_opts io = {
		.max_age_us = pw_config_get_int(a.cfg, "ingest.max.age.days") * 86400LL * 1000000LL,
		.max_future_us = pw_config_get_duration_ms(a.cfg, "ingest.max.future.ms") * 1000LL,
		.max_payload = (size_t)pw_config_get_int(a.cfg, "ingest.max.payload.bytes"),
		.flush_timeout_ms = (int)pw_config_get_duration_ms(a.cfg, "ingest.flush.timeout.ms"),
		.series_cache_max = (size_t)pw_config_get_int(a.cfg, "ingest.series.cache.max"),
	};
	if (pw_series_cache_new(&a.series, io.series_cache_max) != PW_OK) {
		pw_log_error(&a.log, "out of memory");
		goto out;
	}
	io.series_cache = a.series;
	a.nworkers = (int)pw_config_get_int(a.cfg, "ingest.workers");
	for (int i = 0; i < a.nworkers; i++) {
		a.workers[i].app = &a;
		a.workers[i].index = i;
		const char *what = "";
		if (worker_open(&a, &a.workers[i], &io, &what, err, sizeof err) != PW_OK) {
			pw_log_error(&a.log, "worker %d: %s: %s", i, what, err);
			goto out;
		}
	}
	char host[256];
	int port;
	if (pw_http_listen_from_config(a.cfg, host, sizeof host, &port, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "configuration: %s", err);
		rc = 2;
		goto out;
	}
	pw_http_opts ho = {.host = host, .port = port, .metrics = a.metrics, .ready = ready,
	                   .ready_arg = &a};
	if (pw_http_new(&ho, &a.http, err, sizeof err) != PW_OK ||
	    pw_http_start(a.http, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "http: %s", err);
		goto out;
	}
	char portbuf[16], wbuf[16];
	snprintf(portbuf, sizeof portbuf, "%d", pw_http_port(a.http));
	snprintf(wbuf, sizeof wbuf, "%d", a.nworkers);
	pw_log_write(&a.log, PW_LOG_INFO, (const char *[]){"http_port", portbuf, "workers", wbuf, NULL},
	             "ingester listening on %s:%d", host, pw_http_port(a.http));

	bool failed = false;
	for (int i = 0; i < a.nworkers; i++) {
		worker *w = &a.workers[i];
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
			pw_log_error(&a.log, "worker %d: cannot start its thread", i);
			stop_flag = 1;
			failed = true;
			break;
		}
		w->started = true;
	}
	pw_ingest_counts sum = {0};
	for (int i = 0; i < a.nworkers; i++) {
		worker *w = &a.workers[i];
		if (!w->started)
			continue;
		pthread_join(w->thread, NULL);
		w->started = false;
		failed = failed || w->st != PW_OK;
		pw_ingest_counts c;
		pw_ingester_counts_get(w->ing, &c);
		sum.batches += c.batches;
		sum.runs_accepted += c.runs_accepted;
		sum.samples_accepted += c.samples_accepted;
		sum.duplicates += c.duplicates;
		sum.points_published += c.points_published;
	}
	pw_log_info(&a.log, "stopped: %llu batches, %llu runs, %llu samples, %llu duplicates, %llu points",
	            (unsigned long long)sum.batches, (unsigned long long)sum.runs_accepted,
	            (unsigned long long)sum.samples_accepted, (unsigned long long)sum.duplicates,
	            (unsigned long long)sum.points_published);
	rc = failed ? 1 : 0;
out:
	pw_http_free(a.http);
	for (int i = 0; i < a.nworkers; i++)
		worker_close(&a.workers[i]);
	pw_series_cache_free(a.series);
	pw_metrics_free(a.metrics);
	pw_config_free(a.cfg);
	return rc;
}
