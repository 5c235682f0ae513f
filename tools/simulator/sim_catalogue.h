/*
 * sim_catalogue.h: a simulated model catalogue for the planner (seed §1,
 * §5, §9): N models whose top 20 hold ≈ 80% of fleet spend, in families of
 * base programs and their variants (fine-tunes that share the base's
 * kernels, vocabulary changes, re-headed ones that do not), each with an
 * HLO fingerprint and a per-op signature — the analytic bytes and FLOPs of a
 * transformer's ops in each of the six default configs — and the compiler
 * CLs of a day with the ops they touch and what they do to their costs.
 *
 * The planner (services/planner/plan.h) reads the same structures it would
 * read from perfwatch.catalogue; pw-sim publishes them as CatalogueModel and
 * CompilerCl.op_costs; bench/bench_plan.c and tests/unit/test_plan.c build
 * them here. Deterministic in (n, seed).
 *
 * Ownership: a catalogue owns every string and array its models point to;
 * pw_sim_catalogue_free releases it (NULL is fine). CL arrays filled by
 * pw_sim_catalogue_day_cls point into the caller's pw_sim_cl_buf.
 */
#ifndef PW_SIM_CATALOGUE_H
#define PW_SIM_CATALOGUE_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "pw_status.h"
#include "sim_model.h"

#define PW_SIM_CAT_PLATFORMS 4
#define PW_SIM_CAT_CONFIGS 6
#define PW_SIM_CAT_MAX_OPS 8 /* per config */

typedef struct pw_sim_cat_entry pw_sim_cat_entry; /* internal: names, shapes, ops of one model */

typedef struct pw_sim_catalogue {
	pw_plan_model *models;         /* n models, in decreasing spend */
	size_t n;
	pw_plan_platform platforms[PW_SIM_CAT_PLATFORMS]; /* v6e-4, v5e-8, ironwood-8, b200-8 */
	size_t nplatforms;
	pw_sim_cat_entry *entries;
	uint64_t seed;
} pw_sim_catalogue;

/*
 * n ≥ 20 models. Model 0 is chat-8b (the worked example's, on v6e-4 first);
 * model "rank-x" is a fine-tune of chat-8b with a larger vocabulary.
 * PW_ERR_INVALID for n < 20; PW_ERR_NOMEM.
 */
pw_status pw_sim_catalogue_new(size_t n, uint64_t seed, pw_sim_catalogue **out);
void pw_sim_catalogue_free(pw_sim_catalogue *c);

/* Index of a model by name, or -1. */
long pw_sim_catalogue_find(const pw_sim_catalogue *c, const char *model);

/*
 * The weekly fingerprint job adopts a new serving program for model i (a
 * retrain that re-heads attention: kv heads halved): new ops, new
 * fingerprint. PW_ERR_INVALID for a bad index.
 */
pw_status pw_sim_catalogue_readopt(pw_sim_catalogue *c, size_t i);

/* The model's architecture parameters as the analytic costs use them (for tests). */
typedef struct pw_sim_cat_arch {
	double params_b, active_b;
	uint32_t layers, q_heads, kv_heads, head_dim, vocab, lora_rank;
	int arch; /* pw_sim_arch */
} pw_sim_cat_arch;
pw_status pw_sim_catalogue_arch(const pw_sim_catalogue *c, size_t i, pw_sim_cat_arch *out);

/*
 * Model i as the simulator's model spec (sim_model.h): what pw-sim execute
 * builds a catalogue model's series from (vocabulary and adapter rank, which
 * the fleet model does not time, are left out). PW_ERR_INVALID for a bad index.
 */
pw_status pw_sim_catalogue_spec(const pw_sim_catalogue *c, size_t i, pw_sim_model_spec *out);

/* Room for the CLs of a day and their op costs. */
typedef struct pw_sim_cl_buf {
	pw_plan_cl *cls;
	pw_plan_opcost *costs;
	size_t ncls, ncosts, cap_cls, cap_costs;
} pw_sim_cl_buf;

void pw_sim_cl_buf_release(pw_sim_cl_buf *b);

/* The simulated compiler history's calendar: the worked example's nightly of
 * 2026-06-17 (day 20621) holds cl/7841923, 38 CLs a day. */
#define PW_SIM_CAT_ANCHOR_DAY 20621
#define PW_SIM_CAT_ANCHOR_CL 7841923LL
#define PW_SIM_CAT_CLS_PER_DAY 38
#define PW_SIM_CAT_CULPRIT 7841917LL

/* The CL head of the nightly of `day` (days since the epoch). */
int64_t pw_sim_catalogue_head(int32_t day);

/*
 * Appends the CLs (first_cl, first_cl + per_day] of one day to b; cl/7841917
 * is the worked example's fusion cap (pw_sim_catalogue_fusion_cap_cl); most touch
 * no op (tests, docs, refactors); one in ten touches one op kind on
 * one platform or all, in one phase or both, scaling its analytic bytes or
 * FLOPs by 0.96–1.08. Deterministic in (c->seed, cl number). The strings of
 * the costs are static. PW_ERR_NOMEM.
 */
pw_status pw_sim_catalogue_day_cls(const pw_sim_catalogue *c, int64_t first_cl, size_t per_day,
                                   pw_sim_cl_buf *b);

/*
 * Appends cl/<number> as the worked example's fusion cap (§6.3): on every
 * platform with MXU lanes, decode configs whose score tile lanes · s̄ · 4 B
 * exceeds cap_bytes split the fused attention and add the fp32 score
 * matrix's round trip to its bytes (×1.125, the 32/8 × 128 int8 geometry).
 */
pw_status pw_sim_catalogue_fusion_cap_cl(const pw_sim_catalogue *c, int64_t cl_number,
                                         double cap_bytes, pw_sim_cl_buf *b);

/* Appends a CL that scales one op kind's bytes on one platform ("" every) — a targeted regression. */
pw_status pw_sim_catalogue_op_cl(int64_t cl_number, const char *op, const char *platform,
                                 double bytes_factor, pw_sim_cl_buf *b);

/*
 * The wire forms pw-sim publishes: model i as a CatalogueModel (tier "top"
 * for the top 20), cl as a CompilerCl carrying its op costs (source
 * "pw-sim:planner"), a platform's capacity, a sweep. *out is malloc'ed
 * (the caller frees it). PW_ERR_NOMEM.
 */
pw_status pw_sim_catalogue_pack_model(const pw_sim_catalogue *c, size_t i, int64_t adopted_us,
                                      uint8_t **out, size_t *len);
pw_status pw_sim_catalogue_pack_cl(const pw_plan_cl *cl, uint8_t **out, size_t *len);
pw_status pw_sim_catalogue_pack_capacity(const pw_plan_platform *p, double chip_hours, uint8_t **out,
                                         size_t *len);
/* kind: 1 nightly, 2 rc; day: days since the epoch; ids "nightly-YYYY-MM-DD" / "rc-YYYY-MM-DD". */
pw_status pw_sim_catalogue_pack_sweep(int kind, int32_t day, int64_t cl_head, char *id, size_t idlen,
                                      uint8_t **out, size_t *len);

#endif
