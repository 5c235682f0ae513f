/*
 * sim_model.h: the fleet simulator's model — what an executor fleet, a
 * compiler history and an infra change feed would produce — as plain
 * functions of a scenario and a seed.
 *
 * The simulator binary (main.c) only wires this to Kafka: it walks the
 * timeline of a pw_sim (pw_sim_cursor_next), turns each event into protobuf
 * (sim_proto.c) and publishes it; it answers bisection jobs with
 * pw_sim_run_make at the build asked. Unit tests (tests/unit/test_simulator.c)
 * call the same functions without a broker. Scenarios are text files
 * (sim_scenario.c parses them; tools/simulator/scenarios/README.md documents
 * the format).
 *
 * The model, with the seed's numbers (../shared/seeds/000_*.txt):
 * - §4.1 variance: run-to-run and host-jitter noise whose net σ is ≈ 0.4% on
 *   TPU-class platforms (v5e, v6e, Ironwood) and ≈ 2% on GPU-class ones
 *   (H100, B200); chip-set offsets of 0.5–1.5% (per cell, the sets of a
 *   cell within 0.1% of each other; a series rotates over 3 sets of its
 *   cell, as §4.2's ">= 3 chip-sets" wants); rare 5–10σ infra
 *   outliers (slow side) at ~1%; optional bimodality and noisy series.
 * - §3.2 metrics with their units, derived from a roofline of the model on the
 *   platform (weights + KV bytes over achieved HBM bandwidth for decode,
 *   FLOPs over peak for prefill), so that TPOT, goodput, MFU, HBM utilisation
 *   and cost per token move consistently.
 * - Per-op timing tables whose kernel-time sum exceeds wall time (the
 *   collective overlaps), and which a CL can rewrite (artifact 6's split of
 *   fusion.1423 into 1423a, 1423b and softmax.88).
 * - A compiler history of consecutive CL numbers, nightlies, releases and
 *   RCs; a CL may carry effects on series selected by model, platform, phase
 *   and config (glob patterns), alone or only together with other CLs
 *   (interactions), or from one upstream commit inside a roll.
 * - Fleet-change events that shift every series on a cell from their time on.
 *
 * Determinism: a run's numbers are a function of (scenario seed, series,
 * run id, repeat, build, time) only — not of generation order or scale.
 *
 * Ownership: pw_sim_new borrows nothing after it returns (it copies what it
 * needs from the scenario); a pw_sim_run is a plain value the caller owns.
 */
#ifndef PW_SIM_MODEL_H
#define PW_SIM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_status.h"

#define PW_SIM_NAME_MAX 64
#define PW_SIM_TEXT_MAX 160
#define PW_SIM_MAX_OPS 8
#define PW_SIM_MAX_REQUIRES 4
#define PW_SIM_MAX_PICKS 8
#define PW_SIM_MAX_SPLIT 4
#define PW_SIM_CHIPSETS_PER_PLATFORM 8 /* two cells of four pinned sets */

/* ---- Catalog: metrics, platforms, models, configs ----------------------- */

/* The metrics of §3.2, numbered as perfwatch.v1.Metric. */
typedef enum pw_sim_metric {
	PW_SIM_TTFT_P50_MS = 0,
	PW_SIM_TTFT_P99_MS,
	PW_SIM_TPOT_P50_MS,
	PW_SIM_TPOT_P99_MS,
	PW_SIM_GOODPUT_TOK_S_CHIP,
	PW_SIM_MFU,
	PW_SIM_HBM_BW_UTIL,
	PW_SIM_COST_PER_MTOK_USD,
	PW_SIM_PREFILL_COMPUTE_MS,
	PW_SIM_METRIC_COUNT
} pw_sim_metric;

/* The metric's text name ("tpot_p50_ms"), its unit ("ms") and its proto enum number. */
const char *pw_sim_metric_name(pw_sim_metric m);
const char *pw_sim_metric_unit(pw_sim_metric m);
int pw_sim_metric_proto(pw_sim_metric m);
/* true when lower is better (latencies, cost). */
bool pw_sim_metric_lower_is_better(pw_sim_metric m);
/* Index of a metric by name, or -1. */
int pw_sim_metric_find(const char *name);

typedef enum pw_sim_class { PW_SIM_TPU = 0, PW_SIM_GPU } pw_sim_class;

typedef struct pw_sim_platform {
	const char *name;           /* "v6e-4" */
	int family;                 /* perfwatch.v1.PlatformFamily number */
	pw_sim_class cls;
	uint32_t chips;
	double hbm_gbps;            /* peak HBM bandwidth per chip, GB/s */
	double tflops_bf16;         /* peak dense per chip */
	double tflops_int8;         /* int8 (and fp8 where the platform has it) */
	double achieved_bw;         /* achieved fraction of peak HBM bandwidth in decode (0.65 on v6e, §6.3) */
	double usd_per_chip_hour;   /* internal price basis (an assumption, stated in docs) */
	uint32_t lanes;             /* MXU lanes (tile width); 0 for GPUs */
	const char *firmware;       /* firmware / driver string */
	const char *cells[2];       /* the two cells the platform's pinned chip-sets live in */
} pw_sim_platform;

/* The built-in platforms, and lookup by name (NULL when unknown). */
extern const pw_sim_platform pw_sim_platforms[];
extern const size_t pw_sim_platforms_count;
const pw_sim_platform *pw_sim_platform_find(const char *name);

/* σ of run-to-run and of host jitter, relative, for a platform class (§4.1). */
double pw_sim_class_sigma_run(pw_sim_class c);
double pw_sim_class_sigma_host(pw_sim_class c);
/* The net σ the two give: sqrt(run² + host²); 0.004 TPU, 0.02 GPU. */
double pw_sim_class_sigma(pw_sim_class c);

typedef enum pw_sim_arch { PW_SIM_DENSE = 0, PW_SIM_MOE, PW_SIM_RANKING } pw_sim_arch;

typedef struct pw_sim_model_spec {
	char name[PW_SIM_NAME_MAX];
	pw_sim_arch arch;
	double params_b;        /* total parameters, billions */
	double active_b;        /* activated per token, billions (MoE) */
	uint32_t layers, q_heads, kv_heads, head_dim;
} pw_sim_model_spec;

/* A built-in model by name (chat-8b, chat-70b, rank-moe-110b, ...); false when unknown. */
bool pw_sim_model_builtin(const char *name, pw_sim_model_spec *out);
/* The i-th synthetic model ("m007-dense-23b"), deterministic in i. */
void pw_sim_model_synthetic(size_t i, pw_sim_model_spec *out);

typedef enum pw_sim_phase { PW_SIM_PREFILL = 1, PW_SIM_DECODE = 2 } pw_sim_phase; /* = perfwatch.v1.Phase */
typedef enum pw_sim_dtype { PW_SIM_BF16 = 1, PW_SIM_INT8 = 2, PW_SIM_FP8 = 3 } pw_sim_dtype; /* = perfwatch.v1.Dtype */

typedef struct pw_sim_config {
	char name[PW_SIM_NAME_MAX]; /* canonical: "decode.B64.s2048.int8", "prefill.s8192.bf16" */
	pw_sim_phase phase;
	uint32_t batch;             /* resident batch; 1 for prefill */
	uint32_t seq_len;           /* s̄ for decode, prompt length for prefill */
	pw_sim_dtype dtype;
} pw_sim_config;

/*
 * Parses a config name: "decode.B<batch>.s<len>.<dtype>" or
 * "prefill.s<len>.<dtype>" (also "prefill.B<batch>.s<len>.<dtype>"), dtype
 * one of bf16, int8, fp8. Writes the canonical name back. PW_ERR_INVALID when
 * malformed.
 */
pw_status pw_sim_config_parse(const char *name, pw_sim_config *out, char *errbuf, size_t errlen);

/* The default config list (seed §1: 2 batch regimes × dtype × context), in order. */
extern const char *const pw_sim_default_configs[];
extern const size_t pw_sim_default_configs_count;

/* ---- Scenario: the input ------------------------------------------------ */

/* Glob patterns (fnmatch); an empty pattern matches anything. phase: "decode"/"prefill"/"". */
typedef struct pw_sim_selector {
	char model[PW_SIM_NAME_MAX];
	char platform[PW_SIM_NAME_MAX];
	char config[PW_SIM_NAME_MAX];
	char phase[16];
} pw_sim_selector;

typedef struct pw_sim_effect {
	int64_t cl;                               /* the CL that carries it */
	int64_t requires[PW_SIM_MAX_REQUIRES];    /* CLs that must be present too (interactions) */
	size_t nrequires;
	int64_t upstream;                         /* -1, or the upstream commit inside roll CL `cl` that carries it */
	pw_sim_selector sel;
	int metric;                               /* -1: the config's step time (every metric follows); else that metric only */
	double pct;                               /* relative change, percent: + slower (or + on the metric's value) */
	double bytes_pct;                         /* relative change of HBM bytes moved, percent (hbm_bw_util) */
	bool numerics;                            /* the CL also changes the model's outputs (§9 "faster
	                                           * but wrong"): the runs' numerics fingerprint changes */
} pw_sim_effect;

typedef struct pw_sim_opdef {
	char name[PW_SIM_NAME_MAX];  /* HLO op name, e.g. "fusion.1423" */
	char kind[PW_SIM_NAME_MAX];  /* e.g. "attention_softmax_fused" */
	double us;                   /* µs per step; for split parts: fraction of the replaced op */
	double hbm_bytes;            /* series ops: HBM bytes per step (sim_hlo.c's role rule); scenario opdefs: 0 */
} pw_sim_opdef;

typedef struct pw_sim_opsplit {
	int64_t cl;
	pw_sim_selector sel;
	char op[PW_SIM_NAME_MAX];           /* the op replaced */
	pw_sim_opdef into[PW_SIM_MAX_SPLIT];/* its replacements; us = fraction of the replaced op's time */
	size_t ninto;
	double vmem_cap;                    /* > 0: the CL's VMEM cap, bytes; the fusion is declined (split)
	                                       only where its projected VMEM (pw_sim_attention_vmem) exceeds it */
} pw_sim_opsplit;

/* Per-model op names for the three roles of the generated op table. */
typedef struct pw_sim_opnames {
	char model[PW_SIM_NAME_MAX];
	pw_sim_opdef attention, gemm, collective; /* us unused */
} pw_sim_opnames;

/* A pinned base value and/or op table and/or chip-set for exact series (globs allowed). */
typedef struct pw_sim_pin {
	pw_sim_selector sel;
	double step_ms;                 /* > 0: the config's step time (TPOT, or prefill compute) */
	uint32_t chipset;               /* > 0: pinned set number 1..8 */
	pw_sim_opdef ops[PW_SIM_MAX_OPS];/* us per step at the pinned step time */
	size_t nops;
} pw_sim_pin;

typedef struct pw_sim_cl_note {
	int64_t cl;
	char author[PW_SIM_NAME_MAX];
	char title[PW_SIM_TEXT_MAX];
	uint32_t upstream;              /* > 0: a roll of that many upstream commits */
} pw_sim_cl_note;

typedef struct pw_sim_flag_range {
	int64_t from, to;               /* inclusive; inside it exactly `cls` are perf-relevant */
	int64_t *cls;
	size_t ncls;
} pw_sim_flag_range;

typedef enum pw_sim_build_kind {   /* = perfwatch.v1.BuildKind */
	PW_SIM_BUILD_NIGHTLY = 1,
	PW_SIM_BUILD_RC = 2,
	PW_SIM_BUILD_BISECT = 3,
	PW_SIM_BUILD_RELEASE = 4,
} pw_sim_build_kind;

typedef struct pw_sim_expect {
	pw_sim_selector sel;
	int metric;                     /* metric the expectation is stated on */
	int64_t cl;                     /* the CL that is expected to deliver it (0 = unknown) */
	double pct;                     /* expected relative change of the metric, percent */
} pw_sim_expect;

/*
 * A waiver the release tooling sends with an RC (§8 follow-up). Selectors
 * are exact names, as the gate matches them (empty = any). The gate checks
 * the expiry at its evaluation time, which is the wall clock, not the
 * simulated one: expires_unix_us is absolute, or, when expires_rel is set,
 * expires_rel_us from the moment the request is published.
 */
typedef struct pw_sim_waiver {
	char id[PW_SIM_NAME_MAX];
	char model[PW_SIM_NAME_MAX], platform[PW_SIM_NAME_MAX], config[PW_SIM_NAME_MAX];
	char metric[PW_SIM_NAME_MAX];
	char owner[PW_SIM_NAME_MAX], approved_by[PW_SIM_NAME_MAX];
	char reason[PW_SIM_TEXT_MAX];
	int64_t expires_unix_us;
	bool expires_rel;
	int64_t expires_rel_us;
} pw_sim_waiver;

/* A release (kind RELEASE) or release candidate (kind RC) and its sweep. */
typedef struct pw_sim_release {
	pw_sim_build_kind kind;
	char id[PW_SIM_NAME_MAX];       /* "xla-rc-2026-06-17" */
	char base[PW_SIM_NAME_MAX];     /* RC: the release it is gated against */
	int64_t cl;
	int day;                        /* day index from the scenario start */
	uint32_t repeats;               /* runs per series (0: declared only) */
	pw_sim_expect *expects;         /* registered expected wins (RC only) */
	size_t nexpects;
	pw_sim_waiver *waivers;         /* waivers sent with the gate request (RC only) */
	size_t nwaivers;
} pw_sim_release;

typedef struct pw_sim_fleet_change {
	char id[PW_SIM_NAME_MAX];       /* "fc-recable-0042" */
	char kind[32];                  /* "recabling", "chipset-swap", "firmware", ... */
	char platform[PW_SIM_NAME_MAX]; /* glob; "" = all */
	char cell[PW_SIM_NAME_MAX];     /* exact cell, "" = every cell of the platform */
	char description[PW_SIM_TEXT_MAX];
	int64_t at_unix_us;
	double pct;                     /* shift of every series on the cell from then on, percent */
} pw_sim_fleet_change;

typedef struct pw_sim_model_rev {
	char model[PW_SIM_NAME_MAX];
	char rev[PW_SIM_NAME_MAX];
	char fingerprint[PW_SIM_NAME_MAX]; /* "" = derived from model and rev */
	int day;                           /* effective from this day index (0 = the initial rev) */
	double pct;                        /* step-time change of the new revision, percent */
} pw_sim_model_rev;

typedef struct pw_sim_noise_mod {
	pw_sim_selector sel;
	double factor;                  /* σ multiplier (> 1: a noisy series, for quarantine) */
	double bimodal_pct;             /* > 0: half the runs are slower by this much */
} pw_sim_noise_mod;

/* A transient infra outlier: the nightly runs of the selected series on one day only
 * are slower by sigma × the platform's σ; a rerun (another run) is not. */
typedef struct pw_sim_transient {
	pw_sim_selector sel;
	int day;                        /* day index of the nightly */
	double sigma;                   /* size in the platform class's σ */
} pw_sim_transient;

typedef struct pw_sim_matrix {
	char model[PW_SIM_NAME_MAX];
	char platforms[8][PW_SIM_NAME_MAX];
	size_t nplatforms;
} pw_sim_matrix;

typedef struct pw_sim_scenario {
	char name[PW_SIM_NAME_MAX];
	char description[PW_SIM_TEXT_MAX];
	uint64_t seed;
	int64_t start_unix_us;          /* midnight UTC of day 0 */
	int days;
	uint32_t nightly_repeats;
	double outlier_rate;
	uint32_t chipset_rotation;      /* sets of its cell a series rotates over (1..4, default 3: §4.2 wants >= 3) */
	/* compiler history: cl(day) = anchor_cl + per_day·(day − anchor_day) */
	int64_t anchor_cl;
	int anchor_day;
	uint32_t cls_per_day;
	double flag_rate;               /* fraction of CLs the cost-model filter flags outside flag ranges */
	/* scale */
	size_t nmodels, nplatforms, nconfigs;   /* 0 = as many as listed */
	char (*models)[PW_SIM_NAME_MAX]; size_t nmodel_names;
	char (*platforms)[PW_SIM_NAME_MAX]; size_t nplatform_names;
	char (*configs)[PW_SIM_NAME_MAX]; size_t nconfig_names;
	pw_sim_matrix *matrix; size_t nmatrix;
	pw_sim_effect *effects; size_t neffects;
	pw_sim_opsplit *splits; size_t nsplits;
	pw_sim_opnames *opnames; size_t nopnames;
	pw_sim_pin *pins; size_t npins;
	pw_sim_cl_note *notes; size_t nnotes;
	pw_sim_flag_range *flags; size_t nflags;
	pw_sim_release *releases; size_t nreleases;
	pw_sim_fleet_change *fleet; size_t nfleet;
	pw_sim_model_rev *revs; size_t nrevs;
	pw_sim_noise_mod *noise; size_t nnoise;
	pw_sim_transient *transients; size_t ntransients;
} pw_sim_scenario;

/*
 * Parses scenario text (the format of scenarios/README.md). name labels
 * messages ("file.scn"). On PW_OK *out is a new scenario the caller frees
 * with pw_sim_scenario_free; on PW_ERR_INVALID errbuf says which line and
 * why, *out is NULL. PW_ERR_NOMEM.
 */
pw_status pw_sim_scenario_parse(const char *text, const char *name, pw_sim_scenario **out,
                                char *errbuf, size_t errlen);

/* Reads and parses a file; PW_ERR_IO when it cannot be read. */
pw_status pw_sim_scenario_load(const char *path, pw_sim_scenario **out, char *errbuf,
                               size_t errlen);

/* Accepts NULL. */
void pw_sim_scenario_free(pw_sim_scenario *sc);

/* ---- The world built from a scenario ------------------------------------ */

/* Command-line overrides; zero fields keep the scenario's value. */
typedef struct pw_sim_overrides {
	uint64_t seed; bool has_seed;
	size_t models, platforms, configs;
	int days;
	uint32_t nightly_repeats;
} pw_sim_overrides;

typedef struct pw_sim_series {
	size_t index;
	pw_sim_model_spec model;
	const pw_sim_platform *platform;
	pw_sim_config config;
	uint32_t chipset;           /* first set of its rotation group, 1..8 */
	double step_ms;             /* step time before noise/effects: TPOT (decode) or prefill compute (prefill) */
	double prefill_ms;          /* compute-only prefill of the config's prompt (both phases) */
	double bytes_step;          /* HBM bytes per step (decode) or per prefill (prefill) */
	double flops_token;         /* useful FLOPs per generated (decode) or prompt (prefill) token */
	double sigma_factor;        /* noise multiplier (1 normally) */
	double bimodal_pct;
	pw_sim_opdef ops[PW_SIM_MAX_OPS]; /* base op table, µs per step at step_ms */
	size_t nops;
} pw_sim_series;

typedef struct pw_sim pw_sim;

/*
 * Builds the world: the series matrix at the scale asked, their roofline
 * bases, chip-set offsets and history. sc is read during the call only;
 * ov may be NULL. PW_ERR_INVALID (e.g. an unknown platform name), PW_ERR_NOMEM.
 */
pw_status pw_sim_new(pw_sim **out, const pw_sim_scenario *sc, const pw_sim_overrides *ov,
                     char *errbuf, size_t errlen);
void pw_sim_free(pw_sim *w);

size_t pw_sim_series_count(const pw_sim *w);
const pw_sim_series *pw_sim_series_at(const pw_sim *w, size_t i);
/* Index of the series (model, platform, config); PW_ERR_NOT_FOUND. */
pw_status pw_sim_series_find(const pw_sim *w, const char *model, const char *platform,
                             const char *config, size_t *idx);

/*
 * The index of series (m, platform, config) in *idx: the world's when it
 * holds one of that model name (a scenario's own, with its pins), else a
 * new series of spec m added to the world (pw-sim execute runs what a plan
 * names, which may be a catalogue model no scenario lists). Adding may move
 * the series array: pointers from pw_sim_series_at are stale after it.
 * PW_ERR_INVALID for an unknown platform or a config not in canonical form;
 * PW_ERR_NOMEM.
 */
pw_status pw_sim_series_ensure(pw_sim *w, const pw_sim_model_spec *m, const char *platform,
                               const char *config, size_t *idx, char *errbuf, size_t errlen);

/* The scenario as built: name, seed, days, start, repeats, releases, fleet changes. */
const char *pw_sim_name(const pw_sim *w);
uint64_t pw_sim_seed(const pw_sim *w);
int pw_sim_days(const pw_sim *w);
int64_t pw_sim_start_us(const pw_sim *w);
size_t pw_sim_releases_count(const pw_sim *w);
const pw_sim_release *pw_sim_release_at(const pw_sim *w, size_t i);
size_t pw_sim_fleet_count(const pw_sim *w);
const pw_sim_fleet_change *pw_sim_fleet_at(const pw_sim *w, size_t i);
/* The relative offset of chip-set `set` (1..8) of a platform, e.g. +0.0093. */
double pw_sim_chipset_offset(const pw_sim *w, const pw_sim_platform *p, uint32_t set);
/* The cell chip-set `set` lives in. */
const char *pw_sim_chipset_cell(const pw_sim_platform *p, uint32_t set);

/* ---- Compiler history ---------------------------------------------------- */

typedef struct pw_sim_cl_info {
	int64_t cl;
	bool perf_relevant;      /* the pre-submit cost model's flag (§5) */
	uint32_t upstream;       /* > 0 for a roll */
	char author[PW_SIM_NAME_MAX];
	char title[PW_SIM_TEXT_MAX];
} pw_sim_cl_info;

/* Head CL of the nightly of day `day`. */
int64_t pw_sim_nightly_cl(const pw_sim *w, int day);
/* What is known of a CL. */
void pw_sim_cl_describe(const pw_sim *w, int64_t cl, pw_sim_cl_info *out);

/* A build: head CL plus cherry-picks, optionally cut inside a roll. */
typedef struct pw_sim_build {
	pw_sim_build_kind kind;
	char build_id[PW_SIM_NAME_MAX];
	char release_id[PW_SIM_NAME_MAX];
	int64_t cl;                         /* every CL <= cl is in */
	int64_t picks[PW_SIM_MAX_PICKS];    /* plus these */
	size_t npicks;
	int64_t upstream_limit;             /* cl is a roll: only its upstream commits < limit; -1 = all */
} pw_sim_build;

/* A build at head `cl` with nothing picked (build_id "bisect@cl/N" for kind BISECT). */
void pw_sim_build_at(pw_sim_build *b, pw_sim_build_kind kind, const char *build_id, int64_t cl);

/* Whether CL `cl` (and upstream commit `upstream` of it, -1 = the whole CL) is in the build. */
bool pw_sim_build_contains(const pw_sim_build *b, int64_t cl, int64_t upstream);

/* ---- Runs ---------------------------------------------------------------- */

typedef struct pw_sim_op {
	char name[PW_SIM_NAME_MAX];
	char kind[PW_SIM_NAME_MAX];
	uint32_t calls;         /* per step (one per layer) */
	double us_per_step;
	double hbm_bytes_per_step; /* HBM traffic per step over all calls (sim_hlo.c documents the rule) */
	/* the fusion decision behind the op, for the HLO text (sim_hlo.c) */
	int64_t split_cl;       /* > 0: a part of an op that CL split (fusion declined) */
	uint32_t split_part;    /* its 0-based position among the parts */
	uint32_t split_parts;   /* how many parts */
	double vmem_bytes;      /* projected VMEM of the (declined) fusion, bytes; 0 when not an attention fusion */
	double vmem_cap;        /* the cap that declined it, bytes; 0 when none */
} pw_sim_op;

typedef struct pw_sim_run {
	char run_id[PW_SIM_NAME_MAX];
	uint32_t repeat;
	size_t series;                      /* index into the world */
	char model[PW_SIM_NAME_MAX];
	char model_rev[PW_SIM_NAME_MAX];
	char fingerprint[PW_SIM_NAME_MAX];
	const pw_sim_platform *platform;
	pw_sim_config config;
	pw_sim_build build;
	char firmware[PW_SIM_NAME_MAX];
	char chipset[PW_SIM_NAME_MAX];      /* "pinned-7" */
	char cell[PW_SIM_NAME_MAX];         /* "cell-mtv5-c12" */
	char harness[32];
	char job_id[PW_SIM_NAME_MAX];       /* bisection job answered, or "" */
	bool rebaseline;                    /* job_id is a REBASELINE job (issue 17): published as
	                                       rebaseline_job_id, the build stays nightly */
	int64_t started_unix_us, finished_unix_us;
	uint32_t warmup_s;                  /* discarded warm-up (artifact 8: 120 s) */
	uint32_t compile_cache_hits, compile_cache_total;
	bool open_loop;
	uint64_t seed;                      /* load-generator seed */
	bool has[PW_SIM_METRIC_COUNT];      /* which metrics this config reports */
	double value[PW_SIM_METRIC_COUNT];
	pw_sim_op ops[PW_SIM_MAX_OPS + PW_SIM_MAX_SPLIT];
	size_t nops;
	double wall_us_per_step;            /* the step time the op table belongs to */
	char numerics[33];                  /* numerics fingerprint (RunResult.numerics_fingerprint):
	                                       32 hex digits of a hash of model, model rev, platform,
	                                       config and the numerics-changing effects in the build */
	/* ground truth, for tests and reports; never published */
	bool outlier;
	double effect_pct;                  /* net step-time change from CLs, percent */
	double infra_pct;                   /* chip-set offset + fleet changes, percent */
} pw_sim_run;

/* Number of metrics the run reports. */
size_t pw_sim_run_metric_count(const pw_sim_run *r);

/*
 * Generates one run of series `series` built at b, started at t_unix_us.
 * job_id is NULL or the bisection job answered. Pure: the same inputs give the
 * same run. PW_ERR_INVALID for an unknown series index.
 */
pw_status pw_sim_run_make(const pw_sim *w, size_t series, const pw_sim_build *b,
                          const char *run_id, uint32_t repeat, int64_t t_unix_us,
                          const char *job_id, pw_sim_run *out);

/*
 * Like pw_sim_run_make, but with the model revision given by its HLO
 * fingerprint (bisection asks for the series it alerted on, which may be an
 * older revision). PW_ERR_NOT_FOUND when the fingerprint is not one of the
 * model's.
 */
pw_status pw_sim_run_make_fingerprint(const pw_sim *w, size_t series, const char *fingerprint,
                                      const pw_sim_build *b, const char *run_id,
                                      uint32_t repeat, int64_t t_unix_us, const char *job_id,
                                      pw_sim_run *out);

/*
 * A run answering a re-baseline job (issue 17): like
 * pw_sim_run_make_fingerprint, but on the slot-th chip set of the series'
 * rotation group (slot 0..3, all in the series' cell), so that a job's
 * repeats cover the sets it asks for, and marked rebaseline.
 */
pw_status pw_sim_run_make_rebaseline(const pw_sim *w, size_t series, const char *fingerprint,
                                     const pw_sim_build *b, const char *run_id, uint32_t repeat,
                                     uint32_t slot, int64_t t_unix_us, const char *job_id,
                                     pw_sim_run *out);

/* ---- Post-optimisation HLO (sim_hlo.c) ------------------------------------ */

/*
 * Projected VMEM footprint of a decode attention fusion on platform p:
 * the per-core fp32 score tile, lanes × s̄ × 4 B (§6.3: 256·2048·4 =
 * 2,097,152 B on v6e, 128·2048·4 = 1,048,576 B on v5e). 0 for GPUs (no lanes).
 */
double pw_sim_attention_vmem(const pw_sim_platform *p, const pw_sim_config *c);

/*
 * Sets the HBM bytes per step of the series' base op table (s->ops) by role:
 * the attention op moves the KV cache (decode: 2·L·H_kv·d·s̄·B·b; prefill:
 * the prompt's K and V written once), the GEMM op the weights (the config's
 * dtype), the collective none. Roles follow the table's order (attention,
 * GEMM, collective), which series_base and pins keep.
 */
void pw_sim_series_op_bytes(pw_sim_series *s);

/*
 * The fusion decision of split sp on series s: true when the CL declines the
 * fusion there (no cap, or the projected VMEM above the cap). *vmem gets the
 * projection.
 */
bool pw_sim_split_declines(const pw_sim_opsplit *sp, const pw_sim_series *s, double *vmem);

/*
 * Marks ops[first .. first+nparts) of r as the parts of split sp (cl, part
 * numbers, vmem and cap) and sets their HBM bytes: the victim's bytes
 * (victim_bytes) shared by the first and last part (K and V), plus the
 * materialised fp32 intermediate S = B·H_q·s̄·4 B per layer written by the
 * first part and read by the last (§6.3: 16.8 MB/layer each way).
 */
void pw_sim_split_mark(pw_sim_run *r, size_t first, size_t nparts, const pw_sim_opsplit *sp,
                       const pw_sim_series *s, double victim_bytes, double vmem);

/*
 * Renders the post-optimisation HLO text of run r (artifact 5's notation),
 * from the same op table and fusion decisions that produced its timings:
 * one computation per role (layer.attn, layer.gemm, layer.collective); a
 * split op renders as its parts with the materialised intermediate and the
 * "fusion declined: projected vmem N B > cap M B (cl/K)" comment. The text
 * depends on (model, fingerprint, platform, config, build decisions) only,
 * never on the run's noise, so equal decisions give byte-equal texts.
 * Writes at most len bytes (NUL-terminated); PW_ERR_INVALID when it does
 * not fit or r's series is unknown.
 */
pw_status pw_sim_run_hlo(const pw_sim *w, const pw_sim_run *r, char *buf, size_t len);

/* ---- The timeline --------------------------------------------------------- */

typedef enum pw_sim_event_kind {
	PW_SIM_EV_RUN = 1,
	PW_SIM_EV_FLEET_CHANGE,
	PW_SIM_EV_GATE_REQUEST,  /* an RC's sweep is complete: the release tooling asks for a verdict */
} pw_sim_event_kind;

typedef struct pw_sim_event {
	pw_sim_event_kind kind;
	int64_t t_unix_us;
	pw_sim_run run;                        /* PW_SIM_EV_RUN */
	const pw_sim_fleet_change *fleet;      /* PW_SIM_EV_FLEET_CHANGE (borrowed from the world) */
	const pw_sim_release *release;         /* PW_SIM_EV_GATE_REQUEST (borrowed from the world) */
} pw_sim_event;

/* Walks the scenario in time order: per day, the nightly sweep, then release and RC sweeps. */
typedef struct pw_sim_cursor {
	const pw_sim *w;
	int day;
	int stage;          /* 0 nightly, 1 release sweeps, 2 gate requests, 3 day done */
	size_t rel;         /* release index within stage 1/2 */
	size_t i;           /* series × repeat position within the stage */
	size_t fleet_next;  /* next fleet change to emit */
} pw_sim_cursor;

void pw_sim_cursor_init(pw_sim_cursor *c, const pw_sim *w);

/* Fills *ev with the next event: PW_OK, or PW_ERR_NOT_FOUND at the end. */
pw_status pw_sim_cursor_next(pw_sim_cursor *c, pw_sim_event *ev);

/* Events the whole timeline holds (runs, fleet changes, gate requests), and samples. */
void pw_sim_timeline_size(const pw_sim *w, uint64_t *runs, uint64_t *samples, uint64_t *fleet,
                          uint64_t *gates);

#endif
