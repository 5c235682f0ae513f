/*
 * plan_service.h: the callbacks that bind the planner's logic (plan.h,
 * plan_door.h, plan_store.h) to the service runtime (pw_service.h).
 * main.c puts them in the planner's pw_service_def.
 */
#ifndef PW_PLAN_SERVICE_H
#define PW_PLAN_SERVICE_H

#include <stdio.h>

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

/*
 * `pw-planner --recompute SWEEP_ID`: plans sweep SWEEP_ID from what
 * PostgreSQL holds now (the same reads and pw_plan_make as the tick, the
 * configuration from the environment), stores and publishes nothing, and
 * prints the plan to out as tab-separated lines: "plan" (sweep, kind,
 * release, CL head, day, chip-hours, naive chip-hours, spend coverage,
 * measured, inherited, T0 candidates and pruned, T1 models, clusters,
 * models), "item" (model, platform, config, repeats, tier, top, MDE, sigma,
 * fingerprint), "inherit" (model, representative, similarity, fingerprints,
 * representative measured), "line" (tier, chip-hours, planned, points,
 * repeats, models, deferred) — numbers with 6 decimals, booleans t/f, the
 * columns of perfwatch.plans, plan_items, plan_inheritances and plan_lines
 * in order: what an uninterrupted planner computes, to compare with the plan
 * stored (tests/integration/test_planner.sh). Returns the process exit code (0, 1 on failure with
 * the reason on stderr, 2 on a bad configuration).
 */
int pw_planner_recompute(const char *sweep_id, char **envp, FILE *out);

#endif
