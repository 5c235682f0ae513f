/*
 * bisect.h: the bisector's decisions (§6.1, artifact 4) as plain functions
 * of their inputs: which range to bisect, which series to reproduce, which
 * build to ask for next, and what a build's repeats say.
 *
 * main.c wires this to Kafka and PostgreSQL; tests/unit/test_bisect.c and
 * bench/bench_bisect.c drive it without either (the unit tests answer the
 * jobs with the simulator's model). Nothing here touches a broker or a
 * database, and nothing allocates after pw_bisect_init.
 *
 * The state machine. A pw_bisect is a pure fold over the steps measured so
 * far: pw_bisect_init from the range and the CL history, then
 * pw_bisect_apply once per finished step, in step order. pw_bisect_next says
 * what to build next (or that the bisection is over) and is a function of
 * the state alone, so a service that stores each step (its job and its
 * samples) resumes after a restart by re-initialising and re-applying the
 * stored steps; the next job it derives is the one it had published, with
 * the same step index, so the deterministic job id does not change.
 *
 * Phases, in order: ENDPOINTS (re-measure lo and hi: they must differ, else
 * FAILED), SEARCH (binary search over the cost-model-flagged CLs of the
 * range, falling back to every CL when no flagged CL reproduces), VERIFY
 * (culprit−1 must be CLEAN, the culprit cherry-picked alone on the pre-range
 * base must REPRODUCE), PAIRWISE (the cherry-pick did not reproduce: pairs of
 * flagged CLs on the base, the candidate's pairs first, bounded), ROLL (the
 * culprit is a roll: binary search over its upstream commits, own budget).
 * A step that is INCONCLUSIVE is re-run with twice the repeats, bounded by
 * max_repeats; a budget exhausted or a contradiction ends as FAILED with the
 * reason, never with a guessed culprit.
 */
#ifndef PW_BISECT_H
#define PW_BISECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_status.h"

#define PW_BISECT_MAX_SAMPLES 64   /* endpoint and accumulated step samples kept */
#define PW_BISECT_MAX_FLAGGED 64   /* flagged CLs the pairwise search considers */
#define PW_BISECT_REASON_MAX 240

/* = perfwatch.v1.BisectPurpose; ROLL_STEP extends it (a build cl/N@K inside a roll). */
typedef enum pw_bisect_purpose {
	PW_BISECT_STEP = 1,
	PW_BISECT_VERIFY_ADJACENT = 2,
	PW_BISECT_VERIFY_CHERRY_PICK = 3,
	PW_BISECT_PAIRWISE = 4,
	PW_BISECT_ENDPOINT = 5,
	PW_BISECT_ROLL_STEP = 6,
} pw_bisect_purpose;

/* = perfwatch.v1.StepOutcome */
typedef enum pw_bisect_outcome {
	PW_BISECT_PENDING = 1,
	PW_BISECT_CLEAN = 2,
	PW_BISECT_REGRESSED = 3,
	PW_BISECT_INCONCLUSIVE = 4,
} pw_bisect_outcome;

/* = perfwatch.v1.BisectionStatus */
typedef enum pw_bisect_status {
	PW_BISECT_RUNNING = 1,
	PW_BISECT_VERIFYING = 2,
	PW_BISECT_DONE = 3,
	PW_BISECT_ESCALATED_PAIRWISE = 4,
	PW_BISECT_FAILED = 5,
} pw_bisect_status;

/* = perfwatch.v1.BisectionConfidence */
typedef enum pw_bisect_confidence {
	PW_BISECT_UNVERIFIED = 1,
	PW_BISECT_ADJACENT_ONLY = 2,
	PW_BISECT_VERIFIED_BOTH_SIDES = 3,
	PW_BISECT_INTERACTION = 4,
} pw_bisect_confidence;

typedef enum pw_bisect_phase {
	PW_BISECT_PH_ENDPOINTS = 0,
	PW_BISECT_PH_SEARCH,
	PW_BISECT_PH_VERIFY_ADJACENT,
	PW_BISECT_PH_VERIFY_PICK,
	PW_BISECT_PH_PAIRWISE,
	PW_BISECT_PH_PAIR_PARTNER,   /* the pair reproduced: its other CL alone must not */
	PW_BISECT_PH_ROLL,
	PW_BISECT_PH_OVER,
} pw_bisect_phase;

/* What is known of one CL of the range (perfwatch.compiler_cls). */
typedef struct pw_bisect_cl {
	int64_t number;
	bool flagged;        /* the cost model flags it for the target series */
	uint32_t upstream;   /* > 0: a roll of that many upstream commits */
} pw_bisect_cl;

typedef struct pw_bisect_config {
	uint32_t repeats;            /* runs per step build (3) */
	uint32_t endpoint_repeats;   /* runs per endpoint build (5) */
	uint32_t max_repeats;        /* an INCONCLUSIVE step doubles its runs up to this (12) */
	uint32_t build_budget;       /* builds for endpoints, search, verification and pairs (40) */
	uint32_t roll_budget;        /* builds of the roll lane, apart (24) */
	double alpha;                /* Mann-Whitney level of the judgements (0.05) */
	double tolerance;            /* a step is CLEAN within this fraction of the step from the clean level, REGRESSED within it of the regressed level (0.35) */
	double min_effect_pct;       /* endpoints must differ by at least this, percent of the clean level (1.0) */
} pw_bisect_config;

/* The defaults above. */
void pw_bisect_config_init(pw_bisect_config *cfg);

/* A build to measure. */
typedef struct pw_bisect_job {
	uint32_t step;               /* step index: the job id is derived from it */
	pw_bisect_purpose purpose;
	int64_t cl;                  /* head CL built (cherry-pick / pairwise jobs: 0, see base) */
	int64_t upstream_k;          /* ROLL_STEP: roll `cl` cut after its first K upstream commits; -1 otherwise */
	int64_t base;                /* cherry-pick / pairwise: the pre-range base CL; 0 otherwise */
	int64_t picks[2];            /* CLs applied on base */
	size_t npicks;
	uint32_t repeats;
	bool rerun;                  /* the same build as the previous step, with more runs (no new build) */
} pw_bisect_job;

/* What a measured step said, for the log (artifact 4) and the stored step. */
typedef struct pw_bisect_verdict {
	pw_bisect_outcome outcome;
	double median, spread;       /* of the step's samples (accumulated over re-runs) */
	uint32_t n;
	double p_clean, p_regressed; /* Mann-Whitney two-sided p against each endpoint's samples */
	int64_t range_lo, range_hi;  /* remaining range after the step: (lo, hi] */
	uint32_t range_n;            /* candidate CLs left in it */
} pw_bisect_verdict;

typedef struct pw_bisect {
	pw_bisect_config cfg;
	int64_t lo, hi;              /* the range at the start: lo clean (exclusive), hi regressed */
	pw_bisect_phase phase;
	pw_bisect_status status;
	pw_bisect_confidence confidence;
	uint32_t steps;              /* steps applied */

	/* endpoint levels */
	double clean[PW_BISECT_MAX_SAMPLES], regressed[PW_BISECT_MAX_SAMPLES];
	size_t nclean, nregressed;
	bool have_clean, have_regressed;
	double clean_level, regressed_level;

	/* the search list: candidate CL numbers ascending, the last one always the known-regressed hi */
	int64_t *list;
	size_t nlist, cap;
	long a, b;                   /* list[a] known clean (-1: lo), list[b] known regressed */
	bool full_range;             /* fell back to every CL of the range */
	int64_t *flagged;            /* the flagged CLs of the whole range, ascending */
	size_t nflagged;
	const pw_bisect_cl *cls;     /* borrowed: the range's CLs as given to init */
	size_t ncls;

	/* the step being re-run after INCONCLUSIVE */
	double acc[PW_BISECT_MAX_SAMPLES];
	size_t nacc;
	uint32_t next_repeats;       /* repeats of the re-run; 0 when no re-run is due */

	int64_t culprit;             /* candidate or verified culprit; 0 none */
	bool adjacent_clean, pick_reproduced;
	size_t pair;                 /* next pair index in the pairwise order */
	int64_t pair_cls[2];         /* the reproducing pair */
	int64_t alone_clean[3];      /* CLs measured clean alone on the base (the candidate first) */
	size_t nalone;
	long roll_a, roll_b;         /* ROLL: K known clean, K known regressed */
	int64_t culprit_upstream;    /* commit index inside the roll, -1 when none */

	uint32_t builds;             /* every build (endpoints, steps, verification, pairs, roll) */
	uint32_t builds_search;      /* endpoints + search steps */
	uint32_t builds_verify;      /* adjacent + cherry-pick + pair partner */
	uint32_t builds_pairwise;
	uint32_t builds_roll;
	uint32_t runs;               /* repeats asked for, all jobs */
	char reason[PW_BISECT_REASON_MAX]; /* FAILED: why; otherwise notes (fallback, roll budget) */
} pw_bisect;

/*
 * Starts a bisection of (lo, hi]: lo the last known clean CL, hi the first
 * known regressed one. cls describes the CLs of the range (any order; CLs
 * absent from it are unflagged non-rolls); it is borrowed and must outlive
 * b. cfg NULL = defaults. PW_ERR_INVALID when hi <= lo or a config value is
 * out of range; PW_ERR_NOMEM. Release with pw_bisect_release.
 */
pw_status pw_bisect_init(pw_bisect *b, const pw_bisect_config *cfg, int64_t lo, int64_t hi,
                         const pw_bisect_cl *cls, size_t ncls);
void pw_bisect_release(pw_bisect *b);

/*
 * The next build to measure: true with *job filled, or false when the
 * bisection is over (status DONE or FAILED). A function of the state only.
 */
bool pw_bisect_next(const pw_bisect *b, pw_bisect_job *job);

/*
 * Applies the samples measured for job (the one pw_bisect_next returned) and
 * advances. x: n finite values in the series' unit. *out (may be NULL) says
 * the judgement. PW_ERR_INVALID when job is not the one due (wrong step
 * index), n is 0 or a value is not finite; the state is unchanged then.
 */
pw_status pw_bisect_apply(pw_bisect *b, const pw_bisect_job *job, const double *x, size_t n,
                          pw_bisect_verdict *out);

/*
 * The reason a bisection gives up on a build nobody answers: a job re-issued
 * bisector.max_reissues times and still without its results one
 * bisector.job_timeout later. The bisection's reason starts with it.
 */
#define PW_BISECT_NO_ANSWER "no_answer"

/*
 * Ends a bisection that is not over as FAILED with reason `why` (earlier
 * notes kept after it, cut to PW_BISECT_REASON_MAX): no culprit is named.
 * For what the fold cannot see, such as a job nobody answers
 * (PW_BISECT_NO_ANSWER). An ended bisection is left as it is.
 */
void pw_bisect_give_up(pw_bisect *b, const char *why);

/*
 * Judges samples x against the clean and regressed endpoint samples:
 * Mann-Whitney (exact) against each side and the median's position between
 * the two endpoint medians. CLEAN when x differs from the regressed side
 * (p < alpha) and its median lies within tolerance of the clean level;
 * REGRESSED symmetrically; otherwise INCONCLUSIVE. Works for either
 * direction of the metric. nc, nr >= 1; n >= 1. out may be NULL; its range
 * fields are left alone.
 */
pw_bisect_outcome pw_bisect_judge(const double *x, size_t n, const double *clean, size_t nc,
                                  const double *regressed, size_t nr, double alpha,
                                  double tolerance, pw_bisect_verdict *out);

/* Median and half-width (max-min)/2 of x (n >= 1). */
void pw_bisect_level(const double *x, size_t n, double *median, double *spread);

/* "cl/N", or "cl/N@K" for a roll cut; into buf. */
const char *pw_bisect_cl_name(int64_t cl, int64_t upstream_k, char *buf, size_t len);

/* Lower-case names as stored and printed: "step", "clean", "running", "verified_both_sides"... */
const char *pw_bisect_purpose_name(pw_bisect_purpose p);
const char *pw_bisect_outcome_name(pw_bisect_outcome o);
const char *pw_bisect_status_name(pw_bisect_status s);
const char *pw_bisect_confidence_name(pw_bisect_confidence c);

/* ---- One bisection per event --------------------------------------------- */

/* A regression finding the bisector may start from (gate or watcher alert). */
typedef struct pw_bisect_finding {
	const char *id;          /* alert id */
	const char *series_key;
	int64_t lo, hi;          /* prod..RC (gate) or the nightly's range (watcher) */
	int64_t cp_lo, cp_hi;    /* the nightly changepoint's range for the same series; 0 when none */
	double delta_abs;        /* observed − baseline, in unit */
	double noise;            /* baseline MAD (normalised), in unit */
	const char *metric;      /* the series' metric, e.g. "tpot_p50_ms"; NULL: unknown (ranked last but one) */
	double delta_pct;        /* observed vs baseline, percent of the baseline (sign ignored) */
} pw_bisect_finding;

typedef struct pw_bisect_event {
	size_t target;           /* index of the finding to reproduce */
	int64_t lo, hi;          /* the range to bisect */
	bool narrowed;           /* by the target's changepoint */
	double score;            /* pw_bisect_score of the target */
	int rank;                /* pw_bisect_metric_rank of the target's metric */
	double pct;              /* |delta_pct| of the target */
} pw_bisect_event;

/*
 * How directly a metric measures the regressed family's speed, lower first:
 * 0 median latency (tpot_p50_ms, ttft_p50_ms, prefill_compute_ms),
 * 1 throughput (goodput_tok_s_chip), 2 tail latency (tpot_p99_ms,
 * ttft_p99_ms), 3 utilisation ratios (mfu, hbm_bw_util) and metrics not
 * known here, 4 cost (cost_per_mtok_usd, derived from latency: it moves with
 * it, by the same ratio, and says nothing the latency does not). NULL or ""
 * ranks 3.
 */
int pw_bisect_metric_rank(const char *metric);

/*
 * Effect over noise, saturated: min(|delta| / noise, PW_BISECT_SCORE_SATURATION);
 * noise <= 0 with a delta saturates; not finite: 0. Beyond the saturation
 * the endpoint levels are so far apart in noise widths that every step is
 * judged at its first runs (3 runs against 5, all apart: exact Mann-Whitney
 * p = 2/56 < 0.05), so a larger ratio makes the bisection no surer, and the
 * z of series in the same event differ mostly by their baseline MAD's own
 * sampling error (the worked example's B64 and B8 TPOT: 23.7 and 23.6 on the
 * dev stack, 23.3 and 12.6 in the unit test's replay).
 */
#define PW_BISECT_SCORE_SATURATION 10.0
double pw_bisect_score(double delta_abs, double noise);

/*
 * Findings of one event (the same regressed head CL `hi`) start one
 * bisection: the target is the finding whose metric ranks first
 * (pw_bisect_metric_rank: the primary latency metric before throughput,
 * tail latency, utilisation and cost), among those the largest effect over
 * noise (pw_bisect_score, saturated), then the largest relative effect
 * |delta_pct| (ties: the earlier one); the others stay listed as correlated.
 * On the worked example: decode B64 on v6e-4, TPOT p50 (+8.2%), not B8's
 * TPOT (+7.7%) nor either cost series. Its range is (lo, hi] narrowed to its
 * changepoint's (cp_lo, cp_hi] when that lies inside it. PW_ERR_INVALID when
 * n is 0 or the findings do not share hi.
 */
pw_status pw_bisect_event_plan(const pw_bisect_finding *f, size_t n, pw_bisect_event *out);

#endif
