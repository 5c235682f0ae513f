/*
 * main.c: the ingester service — perf.runs.v1 into PostgreSQL, perf.points.v1
 * and perf.dlq.v1 out.
 *
 * Wiring only: configuration (pw_config.h: the common keys plus the ingest.*
 * keys below, from an optional file and PW_* variables), the PostgreSQL
 * connection, the idempotent producer, the HTTP server for /healthz,
 * /readyz and /metrics, the signal flag, and the consumer loop of pw_kafka.h
 * that hands batches to pw_ingester_batch (store.h), which holds every
 * decision. Exit status: 0 after SIGTERM/SIGINT, 1 on a fatal error, 2 on a
 * bad command line or configuration.
 */
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

static const pw_conf_key ingest_keys[] = {
	{.name = "ingest.max.age.days", .type = PW_CONF_INT, .def = "1830", .min = 1, .max = 36600,
	 .help = "runs that started longer ago than this are dead-lettered (invalid_value)"},
	{.name = "ingest.max.future.ms", .type = PW_CONF_DURATION_MS, .def = "10m", .min = 0,
	 .max = 86400000, .help = "clock skew tolerated for run timestamps ahead of the ingester's clock"},
	{.name = "ingest.max.payload.bytes", .type = PW_CONF_INT, .def = "4194304", .min = 1024,
	 .max = 104857600, .help = "larger RunResult messages are dead-lettered (oversize)"},
	{.name = "ingest.flush.timeout.ms", .type = PW_CONF_DURATION_MS, .def = "30s", .min = 100,
	 .max = 600000, .help = "how long a batch waits for the delivery reports of its points"},
	{.name = "ingest.series.cache.max", .type = PW_CONF_INT, .def = "1000000", .min = 1,
	 .max = 100000000, .help = "series ids kept in memory"},
};

typedef struct app {
	pw_log log;
	pw_config *cfg;
	pw_pg *pg;
	pw_producer *prod;
	pw_consumer *cons;
	pw_metrics *metrics;
	pw_http *http;
	pw_ingester *ing;
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
	if (!pw_pg_conn(a->pg)) {
		snprintf(reason, len, "postgresql: not connected");
		return false;
	}
	return true;
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
	if (pw_pg_new(&a.pg, dsn, NULL, &a.log, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "postgresql: %s", err);
		goto out;
	}
	if (pw_pg_wait_connected(a.pg, 60000, a.stop, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "postgresql: %s", err);
		goto out;
	}
	size_t nprops = 0;
	const pw_kv *props = pw_config_kafka_props(a.cfg, &nprops);
	const char *brokers = pw_config_get_str(a.cfg, "kafka.bootstrap.servers");
	if (pw_producer_new(&a.prod, brokers, props, nprops, &a.log, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "kafka producer: %s", err);
		goto out;
	}
	a.metrics = pw_metrics_new();
	if (!a.metrics) {
		pw_log_error(&a.log, "out of memory");
		goto out;
	}
	pw_ingest_opts io = {
		.max_age_us = pw_config_get_int(a.cfg, "ingest.max.age.days") * 86400LL * 1000000LL,
		.max_future_us = pw_config_get_duration_ms(a.cfg, "ingest.max.future.ms") * 1000LL,
		.max_payload = (size_t)pw_config_get_int(a.cfg, "ingest.max.payload.bytes"),
		.flush_timeout_ms = (int)pw_config_get_duration_ms(a.cfg, "ingest.flush.timeout.ms"),
		.series_cache_max = (size_t)pw_config_get_int(a.cfg, "ingest.series.cache.max"),
	};
	if (pw_ingester_new(&a.ing, a.pg, a.prod, &a.log, a.metrics, &io, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "ingester: %s", err);
		goto out;
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
	char portbuf[16];
	snprintf(portbuf, sizeof portbuf, "%d", pw_http_port(a.http));
	pw_log_write(&a.log, PW_LOG_INFO, (const char *[]){"http_port", portbuf, NULL},
	             "ingester listening on %s:%d", host, pw_http_port(a.http));

	const char *topics[] = {PW_TOPIC_RUNS};
	pw_consumer_opts co = {
		.brokers = brokers,
		.group_id = pw_config_get_str(a.cfg, "kafka.group.id"),
		.topics = topics,
		.ntopics = 1,
		.props = props,
		.nprops = nprops,
		.batch_max_msgs = (size_t)pw_config_get_int(a.cfg, "batch.max.messages"),
		.batch_max_ms = (int)pw_config_get_duration_ms(a.cfg, "batch.max.ms"),
	};
	if (pw_consumer_new(&a.cons, &co, &a.log, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "kafka consumer: %s", err);
		goto out;
	}
	pw_status st = pw_consumer_run(a.cons, pw_ingester_batch, a.ing, a.stop, err, sizeof err);
	if (st != PW_OK) {
		pw_log_error(&a.log, "consumer loop: %s", err);
		goto out;
	}
	pw_ingest_counts c;
	pw_ingester_counts_get(a.ing, &c);
	pw_log_info(&a.log, "stopped: %llu batches, %llu runs, %llu samples, %llu duplicates, %llu points",
	            (unsigned long long)c.batches, (unsigned long long)c.runs_accepted,
	            (unsigned long long)c.samples_accepted, (unsigned long long)c.duplicates,
	            (unsigned long long)c.points_published);
	rc = 0;
out:
	pw_consumer_free(a.cons);
	pw_http_free(a.http);
	pw_ingester_free(a.ing);
	pw_producer_free(a.prod);
	pw_metrics_free(a.metrics);
	pw_pg_free(a.pg);
	pw_config_free(a.cfg);
	return rc;
}
