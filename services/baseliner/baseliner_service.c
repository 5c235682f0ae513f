/*
 * baseliner_service.c: the baseliner as a pw_service — its shared state (the
 * series table and the fleet-change log), its one consumer worker's
 * pw_baseliner (baseliner.h) and the GET /api/baseline handler. main.c
 * declares the service; pw_service.c runs it.
 *
 * The decisions are in baseline.c (one series) and series_table.c (the
 * table, fleet-change selectors); one batch is baseliner.c; PostgreSQL and
 * Redis I/O is baseliner_store.c. Besides /healthz, /readyz and /metrics the
 * HTTP server answers GET /api/baseline?series=KEY with the latest baseline
 * as JSON, read through pw_baseline_get (common/pw_baseline.h: Redis when it
 * holds PostgreSQL's current version, else PostgreSQL), on its own
 * connections. The configuration keys are
 * baseliner_config.c's; docs/baseliner.md is the operator's page.
 */
#include "baseliner_service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseliner.h"
#include "baseliner_config.h"
#include "baseliner_store.h"
#include "pw_time.h"

typedef struct bl_api {
	pw_pg *pg;      /* the HTTP thread's own connections */
	pw_redis *rd;
	pw_metric *fallbacks;
	pw_metric *reads;
	pw_metric *cache_reads;      /* perfwatch_baseline_cache_reads_total */
	pw_baseline_reader reader;   /* over pg and rd */
} bl_api;

typedef struct bl_app {
	const pw_log *lg;
	pw_baseliner_metrics m;
	pw_series_table *table;
	pw_fleet_log *fleet;
	pw_fleet_wide *fw;
	int64_t signal_overlap_us;
	pw_baseline_params params;
	const char *gpu_prefixes;
	int flush_timeout_ms;
	bool rebaseline_request;
	uint32_t accept_after_nightlies;
	pw_nf_params nf;           /* the noise-floor derivation's rules */
	pw_metric *nf_derivations; /* perfwatch_baseliner_noise_floor_derivations_total */
	pw_metric *nf_series;      /* perfwatch_baseliner_noise_floors_total{status} */
	pw_baseliner b;            /* the one consumer worker's */
	bool b_made;
	bl_api api;
} bl_app;

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
	pw_baseline_outcome outcome = PW_BASELINE_UNCACHED;
	char err[512];
	/* the request names no version: the reader asks PostgreSQL for it */
	pw_status st = pw_baseline_get(&api->reader, key, PW_BASELINE_ASK, &r, &src, &outcome, err,
	                               sizeof err);
	if (outcome == PW_BASELINE_FALLBACK)
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

pw_status pw_bl_init(pw_service *svc, void **out, char *err, size_t errlen)
{
	const pw_config *cfg = pw_service_config(svc);
	bl_app *app = calloc(1, sizeof *app);
	if (!app)
		return pw_fail(PW_ERR_NOMEM, err, errlen, "out of memory");
	*out = app;
	app->lg = pw_service_log(svc);
	if (pw_baseliner_params_from_config(cfg, &app->params, err, errlen) != PW_OK)
		return PW_ERR_CONFIG;
	app->table = pw_series_table_new((size_t)pw_config_get_int(cfg, "baseliner.max_series"),
	                                 &app->params);
	if (!app->table)
		return pw_fail(PW_ERR_NOMEM, err, errlen, "cannot allocate the series table");
	app->fleet = pw_fleet_log_new();
	if (!app->fleet)
		return pw_fail(PW_ERR_NOMEM, err, errlen, "cannot allocate the fleet-change log");
	pw_series_table_set_sigma(app->table,
	                          pw_config_get_double(cfg, "baseliner.platform_sigma_tpu"),
	                          pw_config_get_double(cfg, "baseliner.platform_sigma_gpu"));
	app->gpu_prefixes = pw_config_get_str(cfg, "baseliner.gpu_platforms");
	app->flush_timeout_ms = (int)pw_config_get_duration_ms(cfg, "baseliner.flush_timeout");
	app->rebaseline_request = pw_config_get_bool(cfg, "baseliner.rebaseline_request");
	app->accept_after_nightlies =
		(uint32_t)pw_config_get_int(cfg, "baseliner.accept_after_nightlies");
	pw_fleet_wide_params fwp;
	pw_fleet_wide_params_default(&fwp);
	fwp.min_models = (size_t)pw_config_get_int(cfg, "baseliner.fleet_wide_models");
	fwp.window_us = pw_config_get_duration_ms(cfg, "baseliner.fleet_wide_window") * 1000;
	app->fw = pw_fleet_wide_new(&fwp);
	if (!app->fw)
		return pw_fail(PW_ERR_NOMEM, err, errlen, "cannot allocate the fleet-wide outlier tracker");
	app->signal_overlap_us = pw_config_get_duration_ms(cfg, "baseliner.signal_overlap") * 1000;
	pw_nf_params_from_config(cfg, &app->nf);

	pw_metrics *reg = pw_service_metrics(svc);
	pw_status st = pw_baseliner_metrics_register(reg, &app->m, err, errlen);
	if (st != PW_OK)
		return st;
	static const char *const src_label[] = {"source", NULL};
	st = pw_metrics_counter(reg, "perfwatch_baseliner_api_reads_total",
	                        "baselines served by GET /api/baseline, by where they came from",
	                        src_label, &app->api.reads, err, errlen);
	if (st != PW_OK)
		return st;
	if ((st = pw_metrics_counter(reg, "perfwatch_baseliner_noise_floor_derivations_total",
	                             "noise-floor derivations made (section 4.2, every baseliner.noise_floor.every)",
	                             NULL, &app->nf_derivations, err, errlen)) != PW_OK)
		return st;
	static const char *const status_label[] = {"status", NULL};
	if ((st = pw_metrics_counter(reg, "perfwatch_baseliner_noise_floors_total",
	                             "series rows of the noise-floor derivations, by status: derived, "
	                             "insufficient_data, invalid",
	                             status_label, &app->nf_series, err, errlen)) != PW_OK)
		return st;
	app->api.fallbacks = app->m.redis_fallbacks;
	/* the HTTP thread's own connections, opened on first use */
	const char *dsn = pw_config_get_str(cfg, "pg.dsn");
	const char *raddr = pw_config_get_str(cfg, "redis.addr");
	if ((st = pw_pg_new(&app->api.pg, dsn ? dsn : "", NULL, app->lg, err, errlen)) != PW_OK)
		return st;
	if (raddr && *raddr &&
	    (st = pw_redis_new(&app->api.rd, raddr, NULL, app->lg, err, errlen)) != PW_OK)
		return st;
	if ((st = pw_baseline_cache_metric(reg, &app->api.cache_reads, err, errlen)) != PW_OK)
		return st;
	pw_baseline_reader_init(&app->api.reader, app->api.rd, app->api.pg, app->api.cache_reads);
	return pw_http_handle(pw_service_http(svc), "/api/baseline", bl_api_baseline, &app->api,
	                      err, errlen);
}

pw_status pw_bl_worker_init(void *ctx, pw_service_worker *w, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	bl_app *app = ctx;
	/* the main thread (input -1, there for the outbox) publishes on its own
	 * connection: handing it the batch state would have the consumer's
	 * batches run on the main thread's PostgreSQL connection, concurrently
	 * with its outbox rounds */
	if (w->input < 0) {
		w->ctx = app;
		return PW_OK;
	}
	/* one consumer worker (the input declares no workers_key): the table is its own */
	pw_baseliner *b = &app->b;
	b->lg = app->lg;
	b->pg = w->pg;
	b->rd = w->rd;
	b->prod = w->producer;
	b->table = app->table;
	b->fleet = app->fleet;
	b->m = &app->m;
	b->gpu_prefixes = app->gpu_prefixes;
	b->flush_timeout_ms = app->flush_timeout_ms;
	pw_baseliner_init(b);
	b->fw = app->fw;
	b->signal_overlap_us = app->signal_overlap_us;
	b->rebaseline_request = app->rebaseline_request;
	b->accept_after_nightlies = app->accept_after_nightlies;
	app->b_made = true;
	w->ctx = b;
	pw_log_info(app->lg, "baseliner running: window %zu runs / %.3g days / %zu chip-sets, max %zu",
	            app->params.min_runs, app->params.min_days, app->params.min_chipsets,
	            app->params.max_window);
	return PW_OK;
}

void pw_bl_worker_release(void *ctx, pw_service_worker *w)
{
	bl_app *app = ctx;
	if (w->input < 0)
		return;
	if (app->b_made)
		pw_baseliner_release(&app->b);
	app->b_made = false;
}

pw_status pw_bl_tick(void *ctx, pw_service_worker *w, int64_t *next_ms, char *err, size_t errlen)
{
	(void)next_ms;
	bl_app *app = ctx;
	pw_bstore_nf_summary sum;
	double t0 = pw_mono_s();
	pw_status st = pw_bstore_noise_floor_derive(w->pg, &app->nf, &sum, err, errlen);
	if (st != PW_OK) {
		/* a bad row is not made good by retrying, but the next period may be;
		 * everything else (PostgreSQL away, a serialization failure) is retried */
		return st == PW_ERR_NOMEM || st == PW_ERR_INVALID || st == PW_ERR_PG ? PW_ERR_UNAVAILABLE
		                                                                     : st;
	}
	if (!sum.derived)
		return PW_OK;
	pw_metric_inc(app->nf_derivations, NULL);
	pw_metric_add(app->nf_series, (const char *[]){"derived"}, (double)sum.series_derived);
	pw_metric_add(app->nf_series, (const char *[]){"insufficient_data"},
	              (double)sum.series_insufficient);
	pw_metric_add(app->nf_series, (const char *[]){"invalid"}, (double)sum.series_invalid);
	pw_log_info(app->lg,
	            "noise floors derived: derivation %lld, %zu series: %zu derived, %zu "
	            "insufficient_data, %zu invalid, in %.3f s",
	            (long long)sum.derivation_id, sum.series, sum.series_derived,
	            sum.series_insufficient, sum.series_invalid, pw_mono_s() - t0);
	return PW_OK;
}

void pw_bl_stopped(void *ctx, const pw_log *lg)
{
	bl_app *app = ctx;
	pw_log_info(lg, "stopped: %llu batches, %llu points, %llu baseline updates, "
	            "%llu freezes, %llu unfreezes",
	            (unsigned long long)app->b.batches, (unsigned long long)app->b.points,
	            (unsigned long long)app->b.updates, (unsigned long long)app->b.freezes,
	            (unsigned long long)app->b.unfreezes);
}

void pw_bl_release(void *ctx)
{
	bl_app *app = ctx;
	pw_redis_free(app->api.rd);
	pw_pg_free(app->api.pg);
	pw_fleet_log_free(app->fleet);
	pw_fleet_wide_free(app->fw);
	pw_series_table_free(app->table);
	free(app);
}
