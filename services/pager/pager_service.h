/*
 * pager_service.h: pw-pager's service functions (pager_service.c) for the
 * pw_service_def table in main.c: the keys, the app's life cycle, the
 * findings worker's batch and the delivery tick.
 */
#ifndef PW_PAGER_SERVICE_H
#define PW_PAGER_SERVICE_H

#include <stddef.h>

#include "pw_config.h"
#include "pw_service.h"

/* Every key pw-pager reads: the "pager.*" decision keys (pager.h) and the program's own. */
const pw_conf_key *pw_pager_service_keys(size_t *n);

/* The app: configuration, delivery targets, triage links, metrics. */
pw_status pw_pager_init(pw_service *svc, void **out, char *errbuf, size_t errlen);
void pw_pager_release(void *p);

/* The findings worker (its open incidents) and the tick's worker. */
pw_status pw_pager_worker_init(void *p, pw_service_worker *w, char *errbuf, size_t errlen);
void pw_pager_worker_release(void *p, pw_service_worker *w);

/* One batch of perf.alerts/gate.verdicts/changepoints/bisections/attributions messages. */
pw_status pw_pager_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf, size_t errlen);

/* The delivery tick: threshold review, pages, notices, tickets. */
pw_status pw_pager_tick(void *p, pw_service_worker *w, int64_t *next_ms, char *errbuf, size_t errlen);

#endif
