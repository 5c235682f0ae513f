/*
 * plan_store.h: the planner's PostgreSQL side (migration 0047): upserts of
 * its inputs, the loads that fill plan.h's inputs, and the one write
 * transaction of a plan with its outbox row. Every statement is parameters
 * after its SQL (pw_pg_params); nothing here decides anything.
 *
 * Ownership: a loaded set owns its PGresults and unpacked messages; the
 * pw_plan_* arrays in it point into them; _release frees all (a zeroed set
 * is fine).
 */
#ifndef PW_PLAN_STORE_H
#define PW_PLAN_STORE_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/compiler.pb-c.h"
#include "perfwatch/v1/plan.pb-c.h"
#include "plan.h"
#include "pw_pg.h"
#include "pw_status.h"

/* Catalogue entry (and the gate's spend_weights row) from a door-checked message; payload is its packed form. */
pw_status plan_store_catalogue(pw_pg *pg, const Perfwatch__V1__CatalogueModel *m, const void *payload,
                               size_t len, char *errbuf, size_t errlen);
pw_status plan_store_capacity(pw_pg *pg, const Perfwatch__V1__PlatformCapacity *c, char *errbuf,
                              size_t errlen);
/* PW_ERR_CONFLICT when the sweep id is stored with another kind, head or day. */
pw_status plan_store_sweep(pw_pg *pg, const Perfwatch__V1__Sweep *s, char *errbuf, size_t errlen);
/* The CL as received; one with op costs waits for the static check (checked false). */
pw_status plan_store_cl(pw_pg *pg, const Perfwatch__V1__CompilerCl *c, const void *payload, size_t len,
                        char *errbuf, size_t errlen);

/*
 * The static check's result for one CL and its republished CompilerCl in the
 * outbox (topic perf.compiler-cls.v1, key cl), in one transaction.
 */
pw_status plan_store_cl_checked(pw_pg *pg, const char *service, const char *cl, int64_t cl_number,
                                size_t nbenchmarks, const void *packed, size_t len, char *errbuf,
                                size_t errlen);

typedef struct plan_catalogue {
	Perfwatch__V1__CatalogueModel **msgs;
	pw_plan_model *models;
	pw_plan_op *ops;
	const char **names;       /* per model: platforms then configs, pointing into msgs */
	size_t n, nops;
} plan_catalogue;

pw_status plan_catalogue_load(pw_pg *pg, plan_catalogue *out, char *errbuf, size_t errlen);
void plan_catalogue_release(plan_catalogue *c);

/* Platforms (perfwatch.platforms) with their capacity and noise norm (capacity's, else tpu/gpu_sigma by MXU lanes). */
typedef struct plan_platforms {
	PGresult *res;
	pw_plan_platform *p;
	size_t n;
} plan_platforms;

pw_status plan_platforms_load(pw_pg *pg, double tpu_sigma, double gpu_sigma, plan_platforms *out,
                              char *errbuf, size_t errlen);
void plan_platforms_release(plan_platforms *p);

/* CLs in (lo, hi] that touch an op, with their costs. */
typedef struct plan_cls {
	Perfwatch__V1__CompilerCl **msgs;
	pw_plan_cl *cls;
	pw_plan_opcost *costs;
	size_t n, ncosts;
} plan_cls;

pw_status plan_cls_load(pw_pg *pg, int64_t lo, int64_t hi, plan_cls *out, char *errbuf, size_t errlen);
void plan_cls_release(plan_cls *c);
/* Up to `limit` CLs with op costs not yet checked, oldest first (messages in *out, *n). */
pw_status plan_cls_unchecked(pw_pg *pg, int limit, plan_cls *out, char *errbuf, size_t errlen);
/* A decoded CL's costs as the static check takes them (pointing into c); costs has c->n_op_costs room. */
void plan_cl_view(const Perfwatch__V1__CompilerCl *c, pw_plan_opcost *costs, pw_plan_cl *out);

/* Past results before the sweep (day, nightly before rc): noise floors, last measurements, last runs. */
typedef struct plan_history {
	PGresult *noise_res, *seen_res, *ran_res;
	pw_plan_noise *noise;
	pw_plan_seen *seen;
	pw_plan_ran *ran;
	size_t nnoise, nseen, nran;
	int64_t min_ran_head;      /* lowest last-run CL head, 0 when none */
} plan_history;

pw_status plan_history_load(pw_pg *pg, int32_t day, bool rc, plan_history *out, char *errbuf,
                            size_t errlen);
void plan_history_release(plan_history *h);

/* The earliest sweep without a plan (day, nightly before rc); PW_ERR_NOT_FOUND when none. */
typedef struct plan_sweep_row {
	char sweep_id[256], release[256], day[16];
	bool rc;
	int64_t cl_head;
	int32_t day_num;
} plan_sweep_row;

pw_status plan_next_sweep(pw_pg *pg, plan_sweep_row *out, char *errbuf, size_t errlen);

/* The sweep sweep_id; PW_ERR_NOT_FOUND (with the reason) when there is none. */
pw_status plan_sweep_get(pw_pg *pg, const char *sweep_id, plan_sweep_row *out, char *errbuf, size_t errlen);

/* Whether plan_store_write stores a tier's line (a line of all zeros is not stored). */
bool plan_line_stored(const pw_plan_line *l);

/* The similarity as stored (capped at 1: rounding can put a same-program pair a hair above). */
double plan_similarity_stored(double similarity);

/*
 * The latest RC plan stored (by day): its spend coverage and its day as unix
 * seconds (midnight UTC). *found is false when no RC was planned yet. For the
 * planner's gauges after a restart.
 */
pw_status plan_store_latest_rc(pw_pg *pg, bool *found, double *spend_coverage, int64_t *day_unix_s,
                               char *errbuf, size_t errlen);

/* Whether the planner can plan: models in the catalogue, the highest CL number it has read. */
pw_status plan_inputs_state(pw_pg *pg, int64_t *models, int64_t *max_cl, char *errbuf, size_t errlen);

/*
 * Stores the plan, its items, inheritances and lines, and adds the packed
 * Plan to the outbox (topic perf.plans.v1, key plan_id), in one transaction.
 * *written false when the plan id was already stored (nothing changes).
 */
pw_status plan_store_write(pw_pg *pg, const char *service, const plan_sweep_row *sw, const char *plan_id,
                           const pw_plan *plan, const char *const *item_fingerprints, double plan_ms,
                           const void *packed, size_t len, bool *written, char *errbuf, size_t errlen);

#endif
