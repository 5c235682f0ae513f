/*
 * watch_service.h: the callbacks that bind the changepoint watcher's logic
 * (watch.h, watch_emit.h, watch_table.h, watch_store.h) to the service
 * runtime (pw_service.h). main.c puts them in the watcher's pw_service_def.
 */
#ifndef PW_WATCH_SERVICE_H
#define PW_WATCH_SERVICE_H

#include "pw_service.h"

/* init: reads the watcher.* keys, builds the series table, registers the metrics. */
pw_status pw_watcher_init(pw_service *svc, void **app, char *errbuf, size_t errlen);
/* release: frees what pw_watcher_init built. */
void pw_watcher_release(void *app);
/* worker_init: binds the (one) consumer worker's connections to the watcher. */
pw_status pw_watcher_worker_init(void *app, pw_service_worker *w, char *errbuf, size_t errlen);
/* on_batch of points, fleet changes and baselines: one PostgreSQL transaction per batch. */
pw_status pw_watcher_batch(void *app, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                           size_t errlen);

#endif
