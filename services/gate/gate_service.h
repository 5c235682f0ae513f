/*
 * gate_service.h: the callbacks that bind the release gate's logic
 * (gate_eval.h, gate_policy.h, gate_store.h, gate_messages.h) to the service
 * runtime (pw_service.h). main.c puts them in the gate's pw_service_def;
 * gate_service.c says what each thread does.
 */
#ifndef PW_GATE_SERVICE_H
#define PW_GATE_SERVICE_H

#include "pw_service.h"

/* init: reads the gate.* keys, registers the gate's metrics, builds the tick's work space. */
pw_status pw_gate_init(pw_service *svc, void **app, char *errbuf, size_t errlen);
/* release: frees what pw_gate_init built. */
void pw_gate_release_app(void *app);
/* worker_init: a worker's context is the worker itself (its connections). */
pw_status pw_gate_worker_init(void *app, pw_service_worker *w, char *errbuf, size_t errlen);
/* on_batch of perf.gate.requests.v1: stores the requests (ctx is the worker). */
pw_status pw_gate_requests_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n,
                                 char *errbuf, size_t errlen);
/* tick: evaluates the pending releases whose runs are in or whose deadline passed. */
pw_status pw_gate_tick(void *app, pw_service_worker *w, int64_t *next_ms, char *errbuf,
                       size_t errlen);

#endif
