/*
 * plan_service.h: the callbacks that bind the planner's logic (plan.h,
 * plan_door.h, plan_store.h) to the service runtime (pw_service.h).
 * main.c puts them in the planner's pw_service_def.
 */
#ifndef PW_PLAN_SERVICE_H
#define PW_PLAN_SERVICE_H

#include "pw_service.h"

/* The planner's configuration keys (planner.*), for def.keys. */
extern const pw_conf_key pw_planner_keys[];
extern const size_t pw_planner_nkeys;

/* The per-service state the runtime allocates (def.app_size). */
size_t pw_planner_app_size(void);

/* init: reads the planner.* keys and registers the metrics in the zeroed state. */
pw_status pw_planner_init(pw_service *svc, void **app, char *errbuf, size_t errlen);

/* on_batch of catalogue, capacity, sweeps and CLs; ctx is the runtime's worker (def.worker_is_ctx). */
pw_status pw_planner_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf, size_t errlen);

/* tick: plans the earliest sweeps without a plan whose inputs are in. */
pw_status pw_planner_tick(void *app, pw_service_worker *main, int64_t *next_ms, char *errbuf, size_t errlen);

#endif
