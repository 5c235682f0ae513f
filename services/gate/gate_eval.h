/*
 * gate_eval.h: the release gate's decision for one release, as a pure
 * function of its inputs (§4.3a, §4.4 and §8 of the design).
 *
 * For every gated series the candidate's samples are compared with the
 * baseline's by pw_stats_compare — the same code as `perfwatch compare` —
 * and Benjamini–Hochberg runs once over every test of the release, not per
 * family. A series fires only when its q-value is below the FDR level and its
 * effect passes the minimum-effect filter, |effect| > max(0.7*MDE, 2*SE),
 * SE = sigma*sqrt(1/n_base + 1/n_cand) (PW_COMPARE_FILTER_RULE in pw_stats.h,
 * which says why 0.7; the tier's MDE, gate.practical_frac and gate.noise_k
 * are the policy's). A registered expected win is tested as
 * observed − expected against zero. Families then get the §8 verdicts, with
 * thresholds from pw_gate_policy. services/gate/main.c gathers the inputs
 * from PostgreSQL and the baseliner, calls pw_gate_evaluate, and stores and
 * publishes what it returns.
 */
#ifndef PW_GATE_EVAL_H
#define PW_GATE_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate_numerics.h"
#include "pw_stats.h"
#include "pw_status.h"

typedef enum pw_gate_tier {
	PW_GATE_TIER_TOP = 0, /* the top-20 models by spend: MDE 1% */
	PW_GATE_TIER_TAIL,    /* the rest: MDE 3% */
} pw_gate_tier;

/* What the baseliner says of the series. */
typedef enum pw_gate_series_state {
	PW_GATE_STATE_ACTIVE = 0,
	PW_GATE_STATE_FROZEN,      /* a fleet change: not gated */
	PW_GATE_STATE_QUARANTINED, /* too noisy: not gated */
	PW_GATE_STATE_BASELINING,  /* no complete null window yet: not gated */
} pw_gate_series_state;

typedef enum pw_gate_series_verdict {
	PW_GATE_SERIES_WITHIN_NOISE = 0, /* nothing significant */
	PW_GATE_SERIES_TREND,            /* significant but below the effect filter: trend queue */
	PW_GATE_SERIES_REGRESSED,        /* significant and above the filter, the worse way */
	PW_GATE_SERIES_INVESTIGATE,      /* an unregistered improvement above the filter (§9) */
	PW_GATE_SERIES_VALIDATED_WIN,    /* a registered win that arrived as registered */
	PW_GATE_SERIES_WIN_SHORTFALL,    /* a registered win that fell short of its registration */
	PW_GATE_SERIES_FROZEN,
	PW_GATE_SERIES_QUARANTINED,
	PW_GATE_SERIES_BASELINING,
	PW_GATE_SERIES_INSUFFICIENT_DATA, /* fewer candidate or baseline runs than required */
	PW_GATE_SERIES_UNDER_POWERED,    /* nothing significant, but fewer candidate runs than the
	                                  * series' noise needs to certify its MDE (§4.5): not
	                                  * "within noise" */
	PW_GATE_SERIES_NUMERICS_CHANGED, /* would be INVESTIGATE or VALIDATED_WIN, but a candidate
	                                  * run's numerics fingerprint differs from the baseline's:
	                                  * "faster but wrong" (§9), blocks the family */
} pw_gate_series_verdict;

typedef enum pw_gate_family_verdict {
	PW_GATE_FAMILY_PASS = 0,
	PW_GATE_FAMILY_VALIDATED_WIN,
	PW_GATE_FAMILY_WAIVED,            /* would not pass; a live waiver lets it, recorded */
	PW_GATE_FAMILY_FROZEN,            /* every series frozen or quarantined: nothing gated */
	                                  /* (baselining series make it INSUFFICIENT_DATA) */
	PW_GATE_FAMILY_INSUFFICIENT_DATA, /* a series short of runs, or no series at all */
	PW_GATE_FAMILY_P1,
	PW_GATE_FAMILY_BLOCKING,
} pw_gate_family_verdict;

const char *pw_gate_series_verdict_name(pw_gate_series_verdict v);
const char *pw_gate_family_verdict_name(pw_gate_family_verdict v);

/* The §8 thresholds; pw_gate_policy_default() gives the design's. */
typedef struct pw_gate_policy {
	double fdr_q;              /* BH level over the release (0.05) */
	double mde_top_pct;        /* 1.0 */
	double mde_tail_pct;       /* 3.0 */
	double practical_frac;     /* practical threshold as a fraction of the MDE (0.7) */
	double noise_k;            /* noise floor, standard errors of the difference (2) */
	double blocking_top_pct;   /* a top-tier regression this large blocks (3.0) */
	double blocking_aggregate_pct; /* spend-weighted fleet impact that blocks (1.0) */
	size_t min_candidate_n;    /* candidate runs a top-tier series needs (5) */
	size_t min_baseline_n;     /* baseline runs a series needs (5) */
	size_t min_candidate_tail_n; /* candidate runs a tail-tier series needs (5; §4.5 allows 3) */
	double mde_gpu_pct;        /* a GPU-class series is certified at this MDE whatever its
	                            * tier (4.0, PW_POWER_MDE_GPU_PCT): the band below is the
	                            * production canary's */
	bool top_n_requested;      /* the request's TierRepeats named the top tier's n (what was */
	bool tail_n_requested;     /* scheduled): wait for that, not for the series' required n */
} pw_gate_policy;

void pw_gate_policy_default(pw_gate_policy *p);

/* One gated series. Arrays are borrowed for the duration of the call. */
typedef struct pw_gate_series_input {
	const char *series;        /* series key, for messages */
	size_t family;             /* index into the families array */
	pw_gate_tier tier;
	pw_compare_direction direction;
	pw_gate_series_state state;
	const double *base;
	size_t n_base;
	const double *cand;
	size_t n_cand;
	bool baseline_behind;      /* the ingester holds a nightly or release point of the series,
	                            * measured before the request, that the baseliner has not
	                            * folded in yet (its baseline may still change) */
	bool has_expected;         /* a registered expected win */
	double expected_pct;       /* its signed Δ, percent, as (new − old)/old */
	bool gpu;                  /* GPU-class platform (its baseline says): MDE policy->mde_gpu_pct */
	size_t required_n;         /* candidate runs its noise needs to certify its MDE (§4.5,
	                            * pw_gate_required_n); 0 when unknown (no baseline) */
	const char *const *base_numerics; /* numerics fingerprint of the run of each base[i]
	                           * (NULL entry or "": none); NULL when no run carries one */
	const char *const *cand_numerics; /* the same for cand[i] */
	bool planned;              /* the plan of the candidate's sweep lists its benchmark
	                            * (docs/planner.md): without candidate runs it is missing,
	                            * reported as such, not absent from the release */
} pw_gate_series_input;

typedef struct pw_gate_family_input {
	const char *name;          /* the model family, e.g. "chat-8b" */
	double spend_share;        /* fraction of fleet spend, 0..1 */
	bool waived;               /* a waiver that has not expired at evaluation time */
	size_t planned_unmeasured; /* benchmarks the candidate's plan lists for the family that
	                            * have no series at all (never measured): each is a series
	                            * short of data, so the family cannot PASS without them */
	const char *inherits_from; /* the plan of the candidate's sweep records that this model
	                            * inherits the verdict of that representative (planner,
	                            * HLO-signature clustering); NULL or "" when it does not */
	double inherit_similarity; /* the recorded signature similarity, 0..1 */
	size_t representative;     /* index of inherits_from among the families, SIZE_MAX when
	                            * it is not gated in this release (or no inheritance) */
} pw_gate_family_input;

typedef struct pw_gate_series_result {
	pw_gate_series_verdict verdict;
	bool tested;               /* part of the BH family */
	pw_compare_result cmp;     /* raw candidate against baseline */
	double q;                  /* BH q-value of the series' test (NaN when untested) */
	double worse_pct;          /* Δ in the worse direction: > 0 is a regression */
	double excess_pct;         /* registered series: observed − expected, percent */
	pw_gate_numerics_result numerics; /* the faster-but-wrong check of a tested series
	                           * (pw_gate_numerics_check; NOT_CHECKED when untested) */
} pw_gate_series_result;

typedef struct pw_gate_family_result {
	pw_gate_family_verdict verdict;
	pw_gate_family_verdict unwaived; /* what it would be without its waiver */
	size_t n_series, n_tested, n_regressed, n_blocking, n_wins, n_investigate,
	       n_untested, n_insufficient, n_under_powered;
	size_t n_numerics_changed; /* NUMERICS_CHANGED series: each blocks the family */
	size_t n_planned_missing;  /* planned and without a candidate run: gated series (active
	                            * or baselining) with none, plus planned_unmeasured */
	double impact_pct;         /* spend-weighted fleet impact, percent of fleet */
	size_t n_with_runs;        /* series with at least one candidate run */
	bool inherited;            /* the verdict is the representative's: the family inherits
	                            * (families[].representative) and has no candidate run of
	                            * its own */
} pw_gate_family_result;

typedef struct pw_gate_release_result {
	pw_gate_family_verdict verdict; /* the worst family verdict */
	size_t n_tests;            /* the BH family size */
	double aggregate_impact_pct; /* Σ family impacts, percent of fleet */
} pw_gate_release_result;

/*
 * The MDE series `in` is certified at: its tier's (policy->mde_top_pct /
 * mde_tail_pct), raised to policy->mde_gpu_pct on a GPU-class platform
 * (pw_stats_series_mde). The effect filter's 0.7*MDE and the required n use it.
 */
double pw_gate_series_mde(const pw_gate_policy *policy, const pw_gate_series_input *in);

/*
 * The fewest candidate runs with which series `in` is tested at all: the
 * request's TierRepeats.n for its tier, else gate.min_candidate_n /
 * gate.min_candidate_tail_n. Fewer at the deadline: INSUFFICIENT_DATA.
 */
size_t pw_gate_series_min_n(const pw_gate_policy *policy, const pw_gate_series_input *in);

/*
 * The candidate runs the gate waits for on series `in`: what the request
 * scheduled (TierRepeats.n) when it named its tier's n, else the larger of
 * pw_gate_series_min_n and the series' required n (what its noise needs).
 */
size_t pw_gate_series_wait_n(const pw_gate_policy *policy, const pw_gate_series_input *in);

/*
 * The required n of a series (§4.5) for the gate's effective MDE mde_pct:
 * the n its baseline published for its tier (published_n) when it was
 * computed for the same MDE (published_mde_pct), else pw_stats_required_n of
 * the baseline's sigma_pct (a request may carry its own MDE; a baseline
 * stored before the baseliner published n carries none), floored at floor_n;
 * 0 when the series has no baseline or its sigma gives no n.
 */
size_t pw_gate_required_n(bool has_baseline, double sigma_pct, unsigned published_n,
                          double published_mde_pct, double mde_pct, size_t floor_n);

/*
 * The effect filter as reported per series (effect_passed): |excess| beyond
 * the threshold for a registered series, else the raw filter. False when
 * untested.
 */
bool pw_gate_series_effect_passed(const pw_gate_series_input *in, const pw_gate_series_result *r);

/*
 * Evaluates one release. series_out has n_series entries and family_out
 * n_families, both caller-owned. A family that inherits (its representative
 * among the families, not itself inheriting) and has no candidate run of its
 * own takes its representative's unwaived verdict (inherited = true), its
 * own waiver still applying; a family with runs of its own is decided on
 * them. Allocates its working memory once per call.
 * PW_ERR_INVALID on a family index out of range or non-finite samples.
 */
pw_status pw_gate_evaluate(const pw_gate_policy *policy, const pw_gate_family_input *families,
                           size_t n_families, const pw_gate_series_input *series,
                           size_t n_series, pw_gate_series_result *series_out,
                           pw_gate_family_result *family_out, pw_gate_release_result *release,
                           char *errbuf, size_t errlen);

#endif
