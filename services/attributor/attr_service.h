/*
 * attr_service.h: the callbacks that bind the attribution logic (attribute.h,
 * attr_store.h) to the service runtime (pw_service.h). main.c puts them in
 * the attributor's pw_service_def.
 */
#ifndef PW_ATTR_SERVICE_H
#define PW_ATTR_SERVICE_H

#include "pw_service.h"

/* The per-service state the runtime allocates (def.app_size). */
size_t pw_attributor_app_size(void);

/* init: registers the attributor's metrics in the zeroed state the runtime allocated. */
pw_status pw_attributor_init(pw_service *svc, void **app, char *errbuf, size_t errlen);
/* on_batch of alerts and bisections; ctx is the runtime's worker (def.worker_is_ctx). */
pw_status pw_attributor_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                              size_t errlen);

#endif
