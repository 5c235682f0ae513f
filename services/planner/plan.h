/*
 * plan.h: the planner's decisions (docs/planner.md, seed §1, §4.5, §5, §9)
 * as pure functions: given the model catalogue, the CLs since each
 * benchmark's last run, fleet capacity, the sweep of the calendar and the
 * past plans' results, what the fleet runs — items, inheritances and the
 * chip-hour line of every tier — and the spend it gates.
 *
 * The service (plan_service.c) reads these inputs from PostgreSQL, calls
 * pw_plan_make and stores and publishes the result as plan.proto's Plan;
 * the unit tests (tests/unit/test_plan.c) and bench/bench_plan.c call the
 * same functions with catalogues they build. Nothing here touches a broker
 * or a database. The roofline is common/pw_roofline.h's.
 *
 * Ownership: every input is borrowed for the duration of the call. A
 * pw_plan owns its arrays; its strings point into the inputs (catalogue
 * and platforms), which must outlive it. pw_plan_release frees the arrays
 * (it accepts a zeroed or already released plan).
 */
#ifndef PW_PLAN_H
#define PW_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_roofline.h"
#include "pw_status.h"

/* One op of a benchmark's HLO in one config: analytic costs per call. */
typedef struct pw_plan_op {
	const char *op;       /* kind, what a CL's pass touches: "attention_softmax_fused" */
	const char *shape;    /* "h32kv8d128"; ops of one kind and shape are one kernel */
	uint32_t config;      /* index into the model's configs */
	uint32_t calls;       /* per step (layers) */
	double bytes, flops;  /* per call, analytic */
} pw_plan_op;

/* One model of the catalogue. */
typedef struct pw_plan_model {
	const char *model, *family, *fingerprint;
	double spend_share;              /* 0..1 of fleet spend */
	const char *const *platforms;    /* platforms it serves on; the first is its primary */
	size_t nplatforms;
	const char *const *configs;      /* config names ("decode.B64.s2048.int8"); decode first */
	size_t nconfigs;
	const pw_plan_op *ops;
	size_t nops;
} pw_plan_model;

/* A platform: roofline facts, its noise norm and its weekly benchmark capacity. */
typedef struct pw_plan_platform {
	pw_roofline_platform facts;      /* facts.name is the platform's name */
	double sigma_pct;                /* relative noise norm when a series has none (0.4 TPU, 2 GPU) */
	double capacity_chip_h;          /* chip-hours a week for benchmarks; 0 = unbounded */
} pw_plan_platform;

/* What one CL does to one op kind (CompilerCl.op_costs). */
typedef struct pw_plan_opcost {
	const char *op;                  /* op kind */
	const char *platform;            /* "" = every platform */
	const char *phase;               /* "decode", "prefill" or "" = both */
	uint32_t min_seq_len;            /* applies to configs with s̄ ≥ this; 0 = every one */
	double bytes_factor, flops_factor; /* after = before × factor */
} pw_plan_opcost;

typedef struct pw_plan_cl {
	int64_t cl_number;
	const pw_plan_opcost *costs;
	size_t ncosts;
} pw_plan_cl;

/* Past results: a series' noise floor. */
typedef struct pw_plan_noise {
	const char *model, *platform;
	double sigma_pct;
} pw_plan_noise;

/*
 * Past results: when a model was last measured (any item), and last fully (T1
 * or T2), with the fingerprint it had then. Days since the epoch. A model
 * whose catalogue fingerprint differs counts as never measured: baselines
 * are not carried across a program change (§3).
 */
typedef struct pw_plan_seen {
	const char *model, *fingerprint;
	int32_t day, full_day;           /* INT32_MIN = never */
} pw_plan_seen;

/* Past results: the CL head of a benchmark's last run. */
typedef struct pw_plan_ran {
	const char *model, *platform, *config;
	int64_t cl_head;
} pw_plan_ran;

typedef enum pw_plan_kind { PW_PLAN_NIGHTLY = 1, PW_PLAN_RC = 2 } pw_plan_kind;

typedef struct pw_plan_sweep {
	const char *sweep_id;            /* "nightly-2026-06-16", "rc-2026-06-17" */
	pw_plan_kind kind;
	const char *release;             /* the build the sweep measures */
	int64_t cl_head;                 /* the build's CL */
	int32_t day;                     /* days since the epoch */
} pw_plan_sweep;

typedef struct pw_plan_params {
	uint32_t t1_top;                 /* 20 */
	uint32_t t1_max;                 /* 120 */
	double t1_spend_floor;           /* 0.005 */
	double coverage_target;          /* 0.955 */
	double similarity;               /* 0.95 */
	double mde_top_pct, mde_rest_pct, mde_t0_pct; /* 1, 3, 3 */
	double alpha, power;             /* 0.05, 0.9 */
	uint32_t n_max;                  /* 8 */
	uint32_t t0_n_max;               /* 1: a nightly is one point of its series (§4.3(b)) */
	uint32_t tail_configs;           /* 2 */
	int32_t rotation_days;           /* 28 */
	double relevance_min_pct;        /* 0.25 */
	double reserve_chip_h;           /* 1,100 */
	double repeat_chip_h;            /* 0.25 */
	uint32_t naive_repeats, naive_sweeps; /* 5, 8 */
} pw_plan_params;

/* The defaults above (docs/planner.md). */
void pw_plan_params_default(pw_plan_params *p);

typedef enum pw_plan_tier {
	PW_PLAN_T0 = 0,
	PW_PLAN_T1,
	PW_PLAN_T2,
	PW_PLAN_TAIL,
	PW_PLAN_RESERVE,
	PW_PLAN_TIERS
} pw_plan_tier;

/* "T0", "T1", "T2", "tail", "reserve". */
const char *pw_plan_tier_name(pw_plan_tier t);

typedef struct pw_plan_item {
	const char *model, *platform, *config; /* borrowed from the inputs */
	uint32_t repeats;
	pw_plan_tier tier;
	bool top;                        /* T1's top-K (MDE 1%) */
	double mde_pct;                  /* the effect these repeats detect with the power asked (≥ the tier's MDE) */
	double sigma_pct;                /* the noise floor n came from */
	size_t model_index;              /* index of the model in the inputs */
} pw_plan_item;

typedef struct pw_plan_inherit {
	const char *model, *representative;
	const char *fingerprint, *representative_fingerprint;
	double similarity;
	bool measured;                   /* the representative is measured on this plan */
	size_t model_index;              /* index of the inheriting model in the inputs */
} pw_plan_inherit;

typedef struct pw_plan_line {
	double chip_h;                   /* what this plan runs (reserve: the held budget) */
	double planned_chip_h;           /* before pruning (T0) or capacity trims */
	uint32_t points, repeats, models, deferred;
} pw_plan_line;

typedef struct pw_plan {
	pw_plan_item *items;
	size_t nitems;
	pw_plan_inherit *inherits;
	size_t ninherits;
	pw_plan_line lines[PW_PLAN_TIERS];
	double chip_h;                   /* Σ lines (the reserve on an RC plan only) */
	double naive_chip_h_week;        /* models × 4 × 6 × naive repeats × 0.25 × sweeps, from the catalogue */
	uint32_t t0_candidates, t0_pruned;
	uint32_t models, t1_models, clusters, rotation_models;
	double spend_measured, spend_inherited, spend_coverage; /* 0..1; coverage = measured + inherited */
} pw_plan;

/*
 * The plan for one sweep. RC: T1, T2's quarter, the rotation's quarter, the
 * reserve; nightly: T0 pruned by the static check. clsv: the CLs known, in
 * increasing cl_number (those up to sweep->cl_head count). PW_OK and *out
 * filled; PW_ERR_INVALID on a bad sweep or params; PW_ERR_NOMEM.
 */
typedef struct pw_plan_inputs {
	const pw_plan_model *models;
	size_t nmodels;
	const pw_plan_platform *platforms;
	size_t nplatforms;
	const pw_plan_cl *cls;
	size_t ncls;
	const pw_plan_noise *noise;
	size_t nnoise;
	const pw_plan_seen *seen;
	size_t nseen;
	const pw_plan_ran *ran;
	size_t nran;
	const pw_plan_sweep *sweep;
} pw_plan_inputs;

pw_status pw_plan_make(const pw_plan_inputs *in, const pw_plan_params *p, pw_plan *out);

void pw_plan_release(pw_plan *plan);

/*
 * Signature similarity of two models' programs (weighted Jaccard over the
 * per-op analytic bytes and FLOPs, each normalised by the model's total):
 * 1 for the same program, 0 for none shared.
 */
double pw_plan_similarity(const pw_plan_model *a, const pw_plan_model *b);

/*
 * The static check for one benchmark: the step's relative change, percent,
 * under one CL's op costs on the platform (roofline per op). NaN when the
 * platform lacks facts or the config does not parse. 0 when nothing touched.
 */
double pw_plan_cl_delta_pct(const pw_plan_model *m, uint32_t config, const pw_plan_platform *pl,
                            const pw_plan_cl *cl);

/*
 * The static check over a catalogue: the globs "model/platform/config" a CL
 * is perf-relevant for (|Δ| ≥ p->relevance_min_pct), into a new array of
 * new strings (*globs, *nglobs; free each and the array). PW_ERR_NOMEM.
 */
pw_status pw_plan_cl_check(const pw_plan_model *models, size_t nmodels,
                           const pw_plan_platform *platforms, size_t nplatforms,
                           const pw_plan_cl *cl, const pw_plan_params *p, char ***globs,
                           size_t *nglobs);

/*
 * n per arm for a tier from the series' noise σ and the tier's MDE, both
 * percent (pw_stats_required_n, the n the gate and the baseliner use, with
 * floor 1 for T0 and 2 for T1): T1 max(3, ⌈n⌉ + 1) capped at
 * p->n_max, T0 max(1, ⌈n⌉) capped at p->t0_n_max; *mde_pct gets the MDE the
 * repeats reach (the tier's when under the cap, else pw_stats_power_mde at
 * the cap, less T1's repeat of margin). PW_ERR_INVALID on σ or MDE not
 * positive.
 */
pw_status pw_plan_repeats(double sigma_pct, double mde_pct, bool t0, const pw_plan_params *p,
                          uint32_t *n, double *mde_pct_out);

#endif
