/*
 * bisector_service.h: the callbacks that bind the bisection logic (bisect.h,
 * bisect_msg.h, confirm.h) to the service runtime (pw_service.h). main.c
 * puts them in the bisector's pw_service_def; bisector_service.c says what
 * the consumer worker and the tick do.
 */
#ifndef PW_BISECTOR_SERVICE_H
#define PW_BISECTOR_SERVICE_H

#include <stddef.h>

#include "pw_config.h"
#include "pw_service.h"

/* The bisector.* configuration keys (a static table) and their count in *n. */
const pw_conf_key *pw_bisector_config_keys(size_t *n);
/* The per-service state the runtime allocates (def.app_size). */
size_t pw_bisector_app_size(void);
/* init: reads the bisector.* keys and registers the bisector's metrics in the zeroed state. */
pw_status pw_bisector_init(pw_service *svc, void **app, char *errbuf, size_t errlen);
/* on_batch of perf.compiler-cls.v1 and perf.alerts.v1; ctx is the runtime's worker (def.worker_is_ctx). */
pw_status pw_bisector_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                            size_t errlen);
/* tick: one scheduling round of the active bisections, then the confirmation reruns. */
pw_status pw_bisector_tick(void *app, pw_service_worker *w, int64_t *next_ms, char *errbuf,
                           size_t errlen);

#endif
