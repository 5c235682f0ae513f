/*
 * canary_service.h: the callbacks that bind the canary's logic (canary.h,
 * canary_door.h, canary_store.h) to the service runtime (pw_service.h).
 * main.c puts them in the canary's pw_service_def.
 */
#ifndef PW_CANARY_SERVICE_H
#define PW_CANARY_SERVICE_H

#include "canary.h"
#include "perfwatch/v1/canary.pb-c.h"
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

/* The families a consumer worker holds in memory; opaque. _free accepts NULL. */
typedef struct pw_canary_families pw_canary_families;
pw_canary_families *pw_canary_families_new(void);
void pw_canary_families_free(pw_canary_families *fs);

/* What became of a window pw_canary_take was given. */
typedef enum pw_canary_outcome {
	PW_CANARY_TAKEN = 0,    /* stored, its sequence and family moved */
	PW_CANARY_DUPLICATE,    /* stored before with the same numbers: nothing changed */
	PW_CANARY_OUT_OF_ORDER, /* not after its metric's last window: refused (dead letter INCONSISTENT) */
	PW_CANARY_CONFLICTING,  /* stored before with other numbers: refused (dead letter CONFLICT) */
	PW_CANARY_MISMATCHED,   /* other releases, N-1 artifact or kind than the family's: refused (INCONSISTENT) */
} pw_canary_outcome;

/*
 * Takes one door-checked window w in one transaction on pg, as the header
 * comment of canary_service.c says: the family's row locked, a redelivery
 * recognised, the family's sequences from fs or rebuilt from the stored
 * windows, the window added and stored, and a decision it makes recorded
 * with its outbox row (under service's name: "canary"). New families take
 * their options from p. *oc says
 * what became of it, detail the reason of a refusal (the caller
 * dead-letters it). lg logs rebuilds and decisions; m_replays and
 * m_decisions (may be NULL) count them. A failed transaction (the status
 * and errbuf) leaves the family to be rebuilt at its next window. The
 * batch callback and bench/bench_canary_service.c call it.
 */
pw_status pw_canary_take(pw_canary_families *fs, pw_pg *pg, const char *service, const pw_canary_params *p,
                         const pw_log *lg,
                         pw_metric *m_replays, pw_metric *m_decisions, const Perfwatch__V1__CanaryWindow *w,
                         pw_canary_outcome *oc, char *detail, size_t dlen, char *errbuf, size_t errlen);

/* tick: reports each pin whose expiry passed, once (docs/canary.md "Pins"); sets the pins gauge. */
pw_status pw_canary_tick(void *app, pw_service_worker *main, int64_t *next_ms, char *errbuf, size_t errlen);

/* release: frees what init allocated. */
void pw_canary_release(void *app);

/* on_batch of perf.canary.v1. */
pw_status pw_canary_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf, size_t errlen);

#endif
