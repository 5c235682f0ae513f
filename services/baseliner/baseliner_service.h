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
/* stopped: one log line of the worker's totals. */
void pw_bl_stopped(void *app, const pw_log *lg);

#endif
