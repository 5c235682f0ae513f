/*
 * main.c: the baseliner service (pw-baseliner): wires configuration,
 * connections, the HTTP server, the consumer loop and signals.
 *
 * The decisions are in baseline.c (one series) and series_table.c (the
 * table, fleet-change selectors); one batch is baseliner.c; PostgreSQL and
 * Redis I/O is baseliner_store.c. Besides /healthz, /readyz and /metrics the
 * HTTP server answers GET /api/baseline?series=KEY with the latest baseline
 * as JSON, read through pw_baseline_read (Redis first, PostgreSQL when Redis
 * is down or misses), on its own connections. The configuration keys are
 * baseliner_config.c's; docs/baseliner.md is the operator's page.
 *
 *   pw-baseliner [--config FILE]
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseliner.h"
#include "baseliner_config.h"
#include "baseliner_store.h"
#include "pw_config.h"
#include "pw_http.h"
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_metrics.h"
#include "pw_pg.h"
#include "pw_redis.h"
#include "pw_topics.h"


typedef struct bl_api {
	pw_pg *pg;      /* the HTTP thread's own connections */
	pw_redis *rd;
	pw_metric *fallbacks;
	pw_metric *reads;
} bl_api;

typedef struct bl_app {
	pw_config *cfg;
	pw_log lg;
	pw_metrics *reg;
	pw_baseliner_metrics m;
	pw_http *http;
	pw_pg *pg;
	pw_redis *rd;
	pw_producer *prod;
	pw_consumer *cons;
	pw_series_table *table;
	pw_fleet_log *fleet;
	pw_baseliner b;
	bl_api api;
	atomic_int ready;
} bl_app;

static volatile sig_atomic_t bl_stop;

static void bl_on_signal(int sig)
{
	(void)sig;
	bl_stop = 1;
}

static bool bl_ready(void *arg, char *reason, size_t len)
{
	bl_app *app = arg;
	if (atomic_load(&app->ready))
		return true;
	snprintf(reason, len, "postgresql not connected yet");
	return false;
}

static void json_num(FILE *f, double x)
{
	if (x != x || x > 1e308 || x < -1e308)
		fputs("null", f);
	else
		fprintf(f, "%.17g", x);
}

/* GET /api/baseline?series=KEY */
static void bl_api_baseline(void *arg, const char *path, const char *query, pw_http_reply *reply)
{
	(void)path;
	bl_api *api = arg;
	char key[PW_ST_KEY_MAX], why[256];
	if (pw_http_query_param(query, "series", key, sizeof key, why, sizeof why) != PW_OK) {
		reply->status = 400;
		fputs("{\"error\":\"", reply->body);
		pw_json_escape(reply->body, why);
		fputs("\"}\n", reply->body);
		return;
	}
	pw_baseline_record r;
	pw_baseline_source src;
	bool redis_failed = false;
	char err[512];
	pw_status st = pw_baseline_read(api->rd, api->pg, key, &r, &src, &redis_failed, err, sizeof err);
	if (redis_failed)
		pw_metric_inc(api->fallbacks, (const char *[]){"read"});
	if (st != PW_OK) {
		reply->status = st == PW_ERR_NOT_FOUND ? 404 : 503;
		fputs("{\"error\":\"", reply->body);
		pw_json_escape(reply->body, err);
		fputs("\"}\n", reply->body);
		return;
	}
	pw_metric_inc(api->reads, (const char *[]){src == PW_BASELINE_FROM_REDIS ? "redis" : "postgres"});
	FILE *f = reply->body;
	fputs("{\"series_key\":\"", f);
	pw_json_escape(f, r.series_key);
	fprintf(f, "\",\"series_id\":%lld,\"version\":%u,\"state\":\"%s\",\"source\":\"%s\",\"median\":",
	        (long long)r.series_id, r.version, pw_baseline_state_name(r.state),
	        src == PW_BASELINE_FROM_REDIS ? "redis" : "postgres");
	json_num(f, r.median);
	fputs(",\"mad_n\":", f);
	json_num(f, r.mad_n);
	fputs(",\"band_lo\":", f);
	json_num(f, r.band_lo);
	fputs(",\"band_hi\":", f);
	json_num(f, r.band_hi);
	fputs(",\"sigma_pct\":", f);
	json_num(f, r.sigma_pct);
	fprintf(f, ",\"n\":%u,\"chip_sets\":%u,\"days\":%u,\"freeze_event_id\":\"", r.n, r.chip_sets,
	        r.days);
	pw_json_escape(f, r.freeze_event_id);
	fputs("\",\"freeze_reason\":\"", f);
	pw_json_escape(f, r.freeze_reason);
	fputs("\"}\n", f);
}

int main(int argc, char **argv, char **envp)
{
	bl_app app;
	memset(&app, 0, sizeof app);
	char err[1024];
	int rc = 1;
	const char *conf_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
			conf_path = argv[++i];
		} else {
			fprintf(stderr, "usage: pw-baseliner [--config FILE]\n");
			return 2;
		}
	}

	size_t nkeys = 0;
	const pw_conf_key *keys = pw_baseliner_config_keys(&nkeys);
	app.cfg = pw_config_new("baseliner", keys, nkeys, err, sizeof err);
	if (!app.cfg) {
		fprintf(stderr, "pw-baseliner: %s\n", err);
		return 1;
	}
	(void)pw_config_set_default(app.cfg, "http.port", "9632", err, sizeof err);
	if (pw_config_load(app.cfg, conf_path, envp, err, sizeof err) != PW_OK) {
		fprintf(stderr, "pw-baseliner: %s\n", err);
		goto out_cfg;
	}
	int lvl = pw_log_level_parse(pw_config_get_str(app.cfg, "log.level"));
	pw_log_init(&app.lg, "baseliner", lvl < 0 ? PW_LOG_INFO : (pw_log_level)lvl);

	pw_baseline_params params;
	if (pw_baseliner_params_from_config(app.cfg, &params, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "%s", err);
		goto out_cfg;
	}
	app.table = pw_series_table_new((size_t)pw_config_get_int(app.cfg, "baseliner.max_series"),
	                                &params);
	if (!app.table) {
		pw_log_error(&app.lg, "cannot allocate the series table");
		goto out_cfg;
	}
	app.fleet = pw_fleet_log_new();
	if (!app.fleet) {
		pw_log_error(&app.lg, "cannot allocate the fleet-change log");
		goto out_table;
	}
	pw_series_table_set_sigma(app.table, pw_config_get_double(app.cfg, "baseliner.platform_sigma_tpu"),
	                          pw_config_get_double(app.cfg, "baseliner.platform_sigma_gpu"));

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = bl_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* metrics and HTTP */
	app.reg = pw_metrics_new();
	if (!app.reg || pw_baseliner_metrics_register(app.reg, &app.m, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "metrics: %s", app.reg ? err : "out of memory");
		goto out_table;
	}
	static const char *const src_label[] = {"source", NULL};
	if (pw_metrics_counter(app.reg, "perfwatch_baseliner_api_reads_total",
	                       "baselines served by GET /api/baseline, by where they came from",
	                       src_label, &app.api.reads, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "metrics: %s", err);
		goto out_table;
	}
	app.api.fallbacks = app.m.redis_fallbacks;
	const char *dsn = pw_config_get_str(app.cfg, "pg.dsn");
	const char *raddr = pw_config_get_str(app.cfg, "redis.addr");
	if (pw_pg_new(&app.pg, dsn ? dsn : "", NULL, &app.lg, err, sizeof err) != PW_OK ||
	    pw_pg_new(&app.api.pg, dsn ? dsn : "", NULL, &app.lg, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "postgresql: %s", err);
		goto out_conns;
	}
	if (raddr && *raddr &&
	    (pw_redis_new(&app.rd, raddr, NULL, &app.lg, err, sizeof err) != PW_OK ||
	     pw_redis_new(&app.api.rd, raddr, NULL, &app.lg, err, sizeof err) != PW_OK)) {
		pw_log_error(&app.lg, "redis: %s", err);
		goto out_conns;
	}

	char host[256];
	int port = 0;
	if (pw_http_listen_from_config(app.cfg, host, sizeof host, &port, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "%s", err);
		goto out_conns;
	}
	pw_http_opts ho = {.host = host, .port = port, .metrics = app.reg, .ready = bl_ready,
	                   .ready_arg = &app};
	if (pw_http_new(&ho, &app.http, err, sizeof err) != PW_OK ||
	    pw_http_handle(app.http, "/api/baseline", bl_api_baseline, &app.api, err, sizeof err) != PW_OK ||
	    pw_http_start(app.http, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "http: %s", err);
		goto out_conns;
	}
	pw_log_info(&app.lg, "http on %s:%d", host, pw_http_port(app.http));

	if (pw_pg_wait_connected(app.pg, 60000, &bl_stop, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "postgresql: %s", err);
		goto out_conns;
	}
	atomic_store(&app.ready, 1);

	/* Kafka */
	size_t nprops = 0;
	const pw_kv *props = pw_config_kafka_props(app.cfg, &nprops);
	if (pw_producer_new(&app.prod, NULL, props, nprops, &app.lg, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "kafka producer: %s", err);
		goto out_conns;
	}
	const char *topics[] = {PW_TOPIC_POINTS, PW_TOPIC_FLEET_CHANGES};
	pw_consumer_opts co = {
		.group_id = pw_config_get_str(app.cfg, "kafka.group.id"),
		.topics = topics,
		.ntopics = 2,
		.props = props,
		.nprops = nprops,
		.batch_max_msgs = (size_t)pw_config_get_int(app.cfg, "batch.max.messages"),
		.batch_max_ms = (int)pw_config_get_duration_ms(app.cfg, "batch.max.ms"),
	};
	if (pw_consumer_new(&app.cons, &co, &app.lg, err, sizeof err) != PW_OK) {
		pw_log_error(&app.lg, "kafka consumer: %s", err);
		goto out_conns;
	}

	app.b.lg = &app.lg;
	app.b.pg = app.pg;
	app.b.rd = app.rd;
	app.b.prod = app.prod;
	app.b.table = app.table;
	app.b.fleet = app.fleet;
	app.b.m = &app.m;
	app.b.gpu_prefixes = pw_config_get_str(app.cfg, "baseliner.gpu_platforms");
	app.b.flush_timeout_ms = (int)pw_config_get_duration_ms(app.cfg, "baseliner.flush_timeout");
	pw_baseliner_init(&app.b);

	pw_log_info(&app.lg, "baseliner running: window %zu runs / %.3g days / %zu chip-sets, max %zu",
	            params.min_runs, params.min_days, params.min_chipsets, params.max_window);
	pw_status st = pw_consumer_run(app.cons, pw_baseliner_batch, &app.b, &bl_stop, err, sizeof err);
	if (st != PW_OK) {
		pw_log_error(&app.lg, "consumer: %s", err);
	} else {
		pw_log_info(&app.lg, "stopped: %llu batches, %llu points, %llu baseline updates, "
		            "%llu freezes, %llu unfreezes",
		            (unsigned long long)app.b.batches, (unsigned long long)app.b.points,
		            (unsigned long long)app.b.updates, (unsigned long long)app.b.freezes,
		            (unsigned long long)app.b.unfreezes);
		rc = 0;
	}
	pw_baseliner_release(&app.b);

out_conns:
	pw_http_free(app.http);
	pw_consumer_free(app.cons);
	pw_producer_free(app.prod);
	pw_redis_free(app.api.rd);
	pw_redis_free(app.rd);
	pw_pg_free(app.api.pg);
	pw_pg_free(app.pg);
out_table:
	pw_metrics_free(app.reg);
	pw_fleet_log_free(app.fleet);
	pw_series_table_free(app.table);
out_cfg:
	pw_config_free(app.cfg);
	return rc;
}
