/*
 * baseliner_service.h: the callbacks that bind the baseliner (baseliner.h,
 * series_table.h, baseliner_store.h) to the service runtime (pw_service.h).
 * main.c puts them in the baseliner's pw_service_def.
 */
#ifndef PW_BASELINER_SERVICE_H
#define PW_BASELINER_SERVICE_H

#include "pw_service.h"

/* init: the baseliner.* keys, the series table, the metrics, GET /api/baseline. */
pw_status pw_bl_init(pw_service *svc, void **app, char *errbuf, size_t errlen);
void pw_bl_release(void *app);
/* worker_init: the consumer worker's pw_baseliner over its connections (its ctx). */
pw_status pw_bl_worker_init(void *app, pw_service_worker *w, char *errbuf, size_t errlen);
void pw_bl_worker_release(void *app, pw_service_worker *w);
/*
 * tick (every baseliner.noise_floor.check): the noise-floor derivation when
 * due (pw_bstore_noise_floor_derive), its metrics and log line. A failure is
 * retried (PW_ERR_UNAVAILABLE): the derivation is the baseliner's side work
 * and must not stop its batches.
 */
pw_status pw_bl_tick(void *app, pw_service_worker *main, int64_t *next_ms, char *errbuf,
                     size_t errlen);
/* stopped: one log line of the worker's totals. */
void pw_bl_stopped(void *app, const pw_log *lg);

#endif
