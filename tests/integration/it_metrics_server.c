/*
 * it_metrics_server.c: a stand-in service that serves representative metrics
 * through pw_http, for tests/integration/test_promtool.sh.
 *
 * It builds its configuration the way every service does (pw_config.h,
 * environment only, so PW_HTTP_LISTEN / PW_HTTP_PORT choose the address; port
 * 0 picks a free one), registers a labelled counter, a labelled histogram and
 * gauges, and keeps updating them from a worker thread while the HTTP thread
 * serves them, so a sanitizer build also checks the locking. Label values
 * include quotes, backslashes, newlines and bytes that are not UTF-8, to test
 * the escaping against promtool. On stdout it prints one line
 * "listening on HOST:PORT" once it serves. /readyz answers 503 ("waiting for
 * SIGUSR1") until the process gets SIGUSR1. SIGTERM or SIGINT stop it with
 * exit status 0; it gives up with status 1 after --max-seconds (default 120)
 * so that a broken test cannot leave it running.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pw_config.h"
#include "pw_http.h"
#include "pw_log.h"
#include "pw_metrics.h"

/* Set by the signal handlers only; main() turns them into actions. */
static volatile sig_atomic_t got_stop;
static volatile sig_atomic_t got_ready;

static void on_stop(int sig)
{
	(void)sig;
	got_stop = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	got_ready = 1;
}

typedef struct app {
	pw_log log;
	pw_metrics *reg;
	pw_metric *messages, *batch, *lag, *ready_gauge;
	atomic_bool ready;
	atomic_bool stop_worker;
	pthread_t worker;
} app;

static bool is_ready(void *arg, char *reason, size_t len)
{
	app *a = arg;
	if (atomic_load(&a->ready))
		return true;
	snprintf(reason, len, "waiting for SIGUSR1");
	return false;
}

static void *worker_main(void *arg)
{
	app *a = arg;
	static const char *const topics[] = {"perf.runs.v1", "perf.points.v1"};
	static const char *const results[] = {"ok", "dlq", "say \"hi\" \\ back\nslash", "bad\xff"};
	static const char *const stages[] = {"decode", "pg_commit"};
	struct timespec pause = {.tv_nsec = 1000 * 1000};
	for (unsigned i = 0; !atomic_load(&a->stop_worker); i++) {
		pw_metric_inc(a->messages, (const char *[]){topics[i % 2], results[i % 4]});
		pw_metric_observe(a->batch, (const char *[]){stages[i % 2]}, (double)(i % 50) / 100.0);
		pw_metric_set(a->lag, (const char *[]){topics[i % 2]}, (double)(i % 1000));
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static pw_status register_metrics(app *a, char *err, size_t errlen)
{
	pw_status st;
	static const double buckets[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1};
	if ((st = pw_metrics_counter(a->reg, "perfwatch_it_messages_total",
	                             "Messages handled, by topic and result.",
	                             (const char *[]){"topic", "result", NULL}, &a->messages, err,
	                             errlen)) != PW_OK)
		return st;
	if ((st = pw_metrics_histogram(a->reg, "perfwatch_it_batch_duration_seconds",
	                               "Time to handle one batch, by stage.",
	                               (const char *[]){"stage", NULL}, buckets,
	                               sizeof buckets / sizeof buckets[0], &a->batch, err,
	                               errlen)) != PW_OK)
		return st;
	if ((st = pw_metrics_gauge(a->reg, "perfwatch_it_consumer_lag_messages",
	                           "Messages behind the end of the topic.",
	                           (const char *[]){"topic", NULL}, &a->lag, err, errlen)) != PW_OK)
		return st;
	if ((st = pw_metrics_gauge(a->reg, "perfwatch_it_ready", "1 when /readyz answers 200.",
	                           NULL, &a->ready_gauge, err, errlen)) != PW_OK)
		return st;
	return PW_OK;
}

int main(int argc, char **argv)
{
	int rc = 1;
	long max_seconds = 120;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--max-seconds") == 0 && i + 1 < argc) {
			max_seconds = strtol(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "usage: %s [--max-seconds N]\n", argv[0]);
			return 2;
		}
	}

	app a = {0};
	atomic_init(&a.ready, false);
	atomic_init(&a.stop_worker, false);
	pw_log_init(&a.log, "it_metrics_server", PW_LOG_INFO);
	char err[512] = "";
	pw_config *cfg = NULL;
	pw_http *http = NULL;
	bool worker_started = false;

	struct sigaction sa = {0};
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	cfg = pw_config_new("it_metrics_server", NULL, 0, err, sizeof err);
	if (!cfg || pw_config_load(cfg, NULL, NULL, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "configuration: %s", err);
		goto out;
	}
	a.reg = pw_metrics_new();
	if (!a.reg) {
		pw_log_error(&a.log, "out of memory");
		goto out;
	}
	if (register_metrics(&a, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "metrics: %s", err);
		goto out;
	}
	char host[256];
	pw_http_opts opts = {.host = host, .metrics = a.reg, .ready = is_ready, .ready_arg = &a};
	if (pw_http_listen_from_config(cfg, host, sizeof host, &opts.port, err, sizeof err) != PW_OK ||
	    pw_http_new(&opts, &http, err, sizeof err) != PW_OK ||
	    pw_http_start(http, err, sizeof err) != PW_OK) {
		pw_log_error(&a.log, "http: %s", err);
		goto out;
	}
	if (pthread_create(&a.worker, NULL, worker_main, &a) != 0) {
		pw_log_error(&a.log, "could not start the worker thread");
		goto out;
	}
	worker_started = true;
	printf("listening on %s:%d\n", host, pw_http_port(http));
	fflush(stdout);
	pw_log_info(&a.log, "serving on %s:%d", host, pw_http_port(http));

	struct timespec start, now, tick = {.tv_nsec = 20 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!got_stop) {
		if (got_ready && !atomic_load(&a.ready)) {
			atomic_store(&a.ready, true);
			pw_metric_set(a.ready_gauge, NULL, 1);
			pw_log_info(&a.log, "ready");
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > max_seconds) {
			pw_log_error(&a.log, "gave up after %ld s without SIGTERM", max_seconds);
			goto out;
		}
		nanosleep(&tick, NULL);
	}
	pw_log_info(&a.log, "stopping");
	rc = 0;

out:
	if (worker_started) {
		atomic_store(&a.stop_worker, true);
		pthread_join(a.worker, NULL);
	}
	pw_http_free(http);
	pw_metrics_free(a.reg);
	pw_config_free(cfg);
	return rc;
}
