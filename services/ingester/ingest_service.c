/*
 * ingest_service.c: the ingester as a pw_service — the state its workers
 * share (options, metrics, the series-id cache) and each worker's
 * pw_ingester (store.h, which holds every decision). main.c declares the
 * service; pw_service.c runs it: ingest.workers consumer-group members, each
 * with its own PostgreSQL connection and idempotent producer, so a partition
 * is always handled by one thread in order, and one worker's transaction
 * runs while another formats, publishes or waits for the broker. A batch is
 * held until its points are acknowledged (pw_service_input.outputs).
 */
#include "ingest_service.h"

#include <stdlib.h>

#include "store.h"

typedef struct ingest_app {
	const pw_log *lg;
	pw_ingest_metrics im;
	pw_ingest_opts io;
	pw_series_cache *series;                      /* shared by the workers */
	pw_ingester *ing[PW_INGEST_MAX_WORKERS];     /* each worker's, for the totals */
	size_t ning;
} ingest_app;

pw_status pw_ingest_init(pw_service *svc, void **out, char *err, size_t errlen)
{
	const pw_config *cfg = pw_service_config(svc);
	ingest_app *a = calloc(1, sizeof *a);
	if (!a)
		return pw_fail(PW_ERR_NOMEM, err, errlen, "out of memory");
	*out = a;
	a->lg = pw_service_log(svc);
	const char *dsn = pw_config_get_str(cfg, "pg.dsn");
	if (!dsn || !*dsn)
		return pw_fail(PW_ERR_CONFIG, err, errlen, "pg.dsn is not set (PW_PG_DSN)");
	pw_status st = pw_ingest_metrics_register(pw_service_metrics(svc), &a->im, err, errlen);
	if (st != PW_OK)
		return st;
	a->io = (pw_ingest_opts){
		.max_age_us = pw_config_get_int(cfg, "ingest.max.age.days") * 86400LL * 1000000LL,
		.max_future_us = pw_config_get_duration_ms(cfg, "ingest.max.future.ms") * 1000LL,
		.max_payload = (size_t)pw_config_get_int(cfg, "ingest.max.payload.bytes"),
		.flush_timeout_ms = (int)pw_config_get_duration_ms(cfg, "ingest.flush.timeout.ms"),
		.series_cache_max = (size_t)pw_config_get_int(cfg, "ingest.series.cache.max"),
	};
	if (pw_series_cache_new(&a->series, a->io.series_cache_max) != PW_OK)
		return pw_fail(PW_ERR_NOMEM, err, errlen, "out of memory");
	a->io.series_cache = a->series;
	return PW_OK;
}

pw_status pw_ingest_worker_init(void *app, pw_service_worker *w, char *err, size_t errlen)
{
	ingest_app *a = app;
	if (a->ning == PW_INGEST_MAX_WORKERS)
		return pw_fail(PW_ERR_INVALID, err, errlen, "more than %d workers",
		               PW_INGEST_MAX_WORKERS);
	pw_ingester *ing = NULL;
	pw_status st = pw_ingester_new(&ing, w->pg, w->producer, a->lg, &a->im, &a->io, err, errlen);
	if (st != PW_OK)
		return st;
	a->ing[a->ning++] = ing;
	w->ctx = ing;
	return PW_OK;
}

void pw_ingest_worker_release(void *app, pw_service_worker *w)
{
	ingest_app *a = app;
	for (size_t i = 0; i < a->ning; i++)
		if (a->ing[i] == w->ctx)
			a->ing[i] = NULL;
	pw_ingester_free(w->ctx);
	w->ctx = NULL;
}

void pw_ingest_stopped(void *app, const pw_log *lg)
{
	ingest_app *a = app;
	pw_ingest_counts sum = {0};
	for (size_t i = 0; i < a->ning; i++) {
		if (!a->ing[i])
			continue;
		pw_ingest_counts c;
		pw_ingester_counts_get(a->ing[i], &c);
		sum.batches += c.batches;
		sum.runs_accepted += c.runs_accepted;
		sum.samples_accepted += c.samples_accepted;
		sum.duplicates += c.duplicates;
		sum.points_published += c.points_published;
	}
	pw_log_info(lg, "stopped: %llu batches, %llu runs, %llu samples, %llu duplicates, %llu points",
	            (unsigned long long)sum.batches, (unsigned long long)sum.runs_accepted,
	            (unsigned long long)sum.samples_accepted, (unsigned long long)sum.duplicates,
	            (unsigned long long)sum.points_published);
}

void pw_ingest_release(void *app)
{
	ingest_app *a = app;
	pw_series_cache_free(a->series);
	free(a);
}
