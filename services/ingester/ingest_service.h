/*
 * ingest_service.h: the callbacks that bind the ingester (store.h) to the
 * service runtime (pw_service.h). main.c puts them in the ingester's
 * pw_service_def.
 */
#ifndef PW_INGEST_SERVICE_H
#define PW_INGEST_SERVICE_H

#include "pw_service.h"

/* The most ingest.workers the runtime runs. */
#define PW_INGEST_MAX_WORKERS PW_SERVICE_MAX_WORKERS

/* init: the ingest.* keys, the metrics and the series-id cache the workers share. */
pw_status pw_ingest_init(pw_service *svc, void **app, char *errbuf, size_t errlen);
void pw_ingest_release(void *app);
/* worker_init: the worker's pw_ingester over its connection and producer (its ctx). */
pw_status pw_ingest_worker_init(void *app, pw_service_worker *w, char *errbuf, size_t errlen);
void pw_ingest_worker_release(void *app, pw_service_worker *w);
/* stopped: one log line of every worker's totals. */
void pw_ingest_stopped(void *app, const pw_log *lg);

#endif
