/*
 * canary_service.h: the callbacks that bind the canary's logic (canary.h,
 * canary_door.h, canary_store.h) to the service runtime (pw_service.h).
 * main.c puts them in the canary's pw_service_def.
 */
#ifndef PW_CANARY_SERVICE_H
#define PW_CANARY_SERVICE_H

#include "pw_service.h"

/* The canary's configuration keys (canary.*), for def.keys. */
extern const pw_conf_key pw_canary_keys[];
extern const size_t pw_canary_nkeys;

/* The per-service state the runtime allocates (def.app_size). */
size_t pw_canary_app_size(void);

/* init: reads the canary.* keys (PW_ERR_CONFIG on a bad one) and registers the metrics. */
pw_status pw_canary_init(pw_service *svc, void **app, char *errbuf, size_t errlen);

/* worker_init / worker_release: each consumer worker's families in memory. */
pw_status pw_canary_worker_init(void *app, pw_service_worker *w, char *errbuf, size_t errlen);
void pw_canary_worker_release(void *app, pw_service_worker *w);

/* on_batch of perf.canary.v1. */
pw_status pw_canary_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf, size_t errlen);

#endif
