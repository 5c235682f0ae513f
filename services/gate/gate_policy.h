/*
 * gate_policy.h: the release gate's decisions around pw_gate_evaluate — when
 * a release is ready to be evaluated, which waivers cover which families,
 * what each series and family is reported as, and the one-line summary.
 *
 * gate_eval.h decides the statistics; this file turns its result into what
 * release tooling reads (the Verdict of common.proto, spelled as the SQL
 * text 'blocking', 'p1', ... of migrations/0004_gate.sql) and holds the
 * waiting rule of docs/gate.md. Everything here is a pure function of its
 * arguments: services/gate/main.c and gate_store.c feed it from PostgreSQL,
 * tests/unit/test_gate_policy.c calls it directly.
 */
#ifndef PW_GATE_POLICY_H
#define PW_GATE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gate_eval.h"

/* The reported outcome of a series, a family or a release; the values are
 * those of common.proto's Verdict (VERDICT_BLOCKING = 1, ...). */
typedef enum pw_gate_outcome {
	PW_GATE_OUT_BLOCKING = 1,
	PW_GATE_OUT_P1 = 2,
	PW_GATE_OUT_PASS = 3,
	PW_GATE_OUT_VALIDATED_WIN = 4,
	PW_GATE_OUT_FROZEN = 5,
	PW_GATE_OUT_QUARANTINED = 6,
	PW_GATE_OUT_INSUFFICIENT_DATA = 7,
	PW_GATE_OUT_INVESTIGATE = 8,
	PW_GATE_OUT_TREND = 9,
	PW_GATE_OUT_WAIVED = 10,
	PW_GATE_OUT_UNDER_POWERED = 11,
} pw_gate_outcome;

/* "blocking", "p1", ... as stored in PostgreSQL; "unknown" otherwise. */
const char *pw_gate_outcome_name(pw_gate_outcome o);

/* Parses the SQL text back; returns 0 for anything else. */
int pw_gate_outcome_parse(const char *s);

/* The family's reported outcome. */
pw_gate_outcome pw_gate_family_outcome(pw_gate_family_verdict v);

/*
 * The series' reported outcome. A REGRESSED series is BLOCKING when it alone
 * blocks (top tier, worse by at least blocking_top_pct) or when its family
 * blocks on the spend-weighted aggregate, else P1; either becomes WAIVED when
 * its family is waived. WITHIN_NOISE is PASS; a WIN_SHORTFALL (a registered
 * win that fell short but is no regression) is TREND; BASELINING (no complete
 * null window) is INSUFFICIENT_DATA; UNDER_POWERED (nothing significant from
 * fewer runs than the series' noise needs) is UNDER_POWERED, never PASS; the
 * rest map one to one.
 */
pw_gate_outcome pw_gate_series_outcome(const pw_gate_policy *policy,
                                       const pw_gate_series_input *in,
                                       const pw_gate_series_result *r,
                                       const pw_gate_family_result *f);

/* ------------------------------------------------------------------ waivers */

/* A waiver expires at most this long after its request (366 days). */
#define PW_GATE_WAIVER_MAX_US (366LL * 86400 * 1000000)

/*
 * The door check of one waiver of a GateRequest: a waiver with no selector
 * (model, platform, config and metric all empty; NULL counts as empty) would
 * waive the whole release and is refused unless release_wide is set; an
 * expiry more than PW_GATE_WAIVER_MAX_US after asked_us (or negative) is
 * refused. PW_OK, or PW_ERR_INVALID with the reason in errbuf (the request is
 * then a dead letter).
 */
pw_status pw_gate_waiver_check(const char *waiver_id, const char *model, const char *platform,
                               const char *config, const char *metric, bool release_wide,
                               int64_t expires_us, int64_t asked_us, char *errbuf,
                               size_t errlen);

/*
 * The door check of a waiver's pin (docs/gate.md "Pins"): a pin keeps the
 * family the waiver names on release N−1 while the others take release_id.
 * With pin set it needs a model selector (the family pinned; not
 * release_wide), an owner, an expiry (> 0), a model-team sign-off
 * (signed_off_by) and an N−1 (pin_release: the waiver's, else the request's
 * baseline_release) other than release_id. Without pin, the pin's fields
 * must be empty (a sign-off or release given without pin is a mistake the
 * sender should hear about). NULL counts as empty. PW_OK, or PW_ERR_INVALID
 * with the reason in errbuf, naming the waiver.
 */
pw_status pw_gate_pin_check(const char *waiver_id, bool pin, const char *model, bool release_wide,
                            const char *owner, int64_t expires_us, const char *signed_off_by,
                            const char *pin_release, const char *pin_artifact,
                            const char *release_id, char *errbuf, size_t errlen);

/* ------------------------------------------------------------------ waiting */

typedef enum pw_gate_wait {
	PW_GATE_WAIT_MORE = 0, /* something the release needs has not arrived; deadline ahead */
	PW_GATE_WAIT_READY,    /* everything it waits for is there */
	PW_GATE_WAIT_DEADLINE, /* deadline passed: evaluate with what there is */
} pw_gate_wait;

/* The clock of one look at a release, and what the request says about it. */
typedef struct pw_gate_wait_clock {
	int64_t now_us;
	int64_t deadline_us;      /* effective deadline (docs/gate.md) */
	int64_t settle_until_us;  /* received + gate.min_wait */
	int64_t catchup_until_us; /* received + gate.baseline_wait */
	bool families_named;      /* the request named its families (else: every spend weight) */
	size_t planned_unmeasured;/* benchmarks the release's plan lists that have no series yet
	                           * (never measured): waited for until the deadline */
} pw_gate_wait_clock;

/* What one look found missing; pw_gate_wait_describe says it in words. */
typedef struct pw_gate_wait_state {
	size_t short_runs;  /* active or baselining series with fewer candidate runs than they need */
	size_t behind;      /* series whose baseline has not folded points measured before the
	                     * request (or that the baseliner has not seen), until catchup_until_us */
	size_t baselining;  /* baselining series with their runs, while settling */
	size_t no_series;   /* families without any series: named ones until the deadline,
	                     * spend-weight ones while settling */
	size_t planned_none;       /* of short_runs: planned series without one candidate run */
	size_t planned_unmeasured; /* clock->planned_unmeasured: planned, never measured */
	bool no_runs;       /* not one candidate run in any series */
	size_t missing;     /* the sum, a release without any candidate run counting one */
	size_t n_series;    /* series of the release */
	int64_t seen;       /* the data looked at: candidate runs + series + active series (it
	                     * only grows as runs arrive and baselines complete) */
} pw_gate_wait_state;

/*
 * The waiting rule (docs/gate.md, "The waiting rule"). Before the deadline a
 * release waits for:
 * - every ACTIVE or BASELINING series with fewer candidate runs than its tier
 *   needs: a release that has not received its candidates waits for its
 *   deadline, whatever the clock since the request says (frozen and
 *   quarantined series are not waited for: they will not be gated);
 * - every family named by the request that has no series yet (its runs may
 *   not be ingested: an ingester stalled past gate.min_wait must not make the
 *   gate decide on half the release); a family the request did not name
 *   (every spend weight) only until settle_until_us;
 * - until catchup_until_us, every series whose baseline is behind
 *   (baseline_behind: the baseliner has not folded points measured before
 *   the request, or has not seen the series at all), so that the verdict is
 *   not taken on a baseline that is about to move or appear;
 * - until settle_until_us, every BASELINING series even with its runs;
 * - every benchmark the release's plan lists that has no series yet
 *   (clock->planned_unmeasured; a planned series that has one is waited for
 *   as any series short of runs);
 * - a release with not one candidate run in any series (counted as one).
 * READY when nothing is missing; otherwise DEADLINE once now_us >=
 * deadline_us, else MORE. series[i].n_cand is what has arrived; the samples
 * themselves are not read. state (may be NULL) receives the counts.
 */
pw_gate_wait pw_gate_wait_decide(const pw_gate_policy *policy, size_t n_families,
                                 const pw_gate_series_input *series, size_t n_series,
                                 const pw_gate_wait_clock *clock, pw_gate_wait_state *state);

/*
 * The clock under which a decided release is watched for late data: no
 * deadline (INT64_MAX), no settling, the baseliner always waited for, so that
 * pw_gate_wait_decide's missing counts what the data still lacks and READY
 * means complete; planned_unmeasured is the release's (pw_gate_release).
 */
pw_gate_wait_clock pw_gate_wait_late_clock(int64_t now_us, bool families_named,
                                           size_t planned_unmeasured);

/*
 * Whether a release decided on data `decided_seen` while lacking
 * `decided_lacking` things (late-clock missing at the decision) is decided
 * again, as a new evaluation, at a look that finds `now` (late clock) after
 * a look that found `prev` (NULL at the first look): only when it lacked
 * something, late data arrived (now->seen > decided_seen), and the release
 * is complete (now->missing == 0) or has stopped moving since the previous
 * look (the same seen and the same missing: no run arrived and no baseline
 * caught up). A pure function of its arguments.
 */
bool pw_gate_late_redecide(size_t decided_lacking, int64_t decided_seen,
                           const pw_gate_wait_state *now, const pw_gate_wait_state *prev);

/*
 * What a look found missing, in words, into buf (always NUL-terminated):
 * "12 of 77 series short of candidate runs, 3 baselines behind, 1 family
 * without series, 2 planned benchmarks never measured (deadline in 4m58s)", "no candidate run yet, 2 families
 * without series (deadline passed 1m02s ago)", or "complete" when nothing
 * is missing; no deadline part when deadline_us is INT64_MAX (the late clock).
 */
void pw_gate_wait_describe(char *buf, size_t len, const pw_gate_wait_state *st,
                           int64_t deadline_us, int64_t now_us);

/*
 * How long to wait before the next look at a pending release: min_ms while
 * runs are arriving (missing changed since the last look, or first look:
 * prev_missing SIZE_MAX), else twice the previous interval, capped at max_ms,
 * so that a release waiting a day for its runs does not cost PostgreSQL a
 * count query every poll, and a release whose last run just arrived is seen
 * within max_ms.
 */
int64_t pw_gate_next_poll_ms(size_t prev_missing, size_t missing, int64_t prev_interval_ms,
                             int64_t min_ms, int64_t max_ms);

/*
 * Screens the inputs before pw_gate_evaluate, which fails the whole release
 * on a series it cannot test relatively: a series whose baseline median is
 * zero (a relative change is undefined) gets n_base = 0, so that it is
 * reported INSUFFICIENT_DATA with the rest of the release decided. work has
 * room for the largest n_base doubles. Returns the number of series screened
 * out.
 */
size_t pw_gate_screen(pw_gate_series_input *series, size_t n_series, double *work);

/* ------------------------------------------------------------------ waivers */

/* A waiver as stored (GateRequest.Waiver); strings borrowed, empty = any. */
typedef struct pw_gate_waiver {
	const char *waiver_id;
	const char *model, *platform, *config, *metric;
	int64_t expires_unix_us;
} pw_gate_waiver;

/* The components of a canonical series key model/hlo/platform/config/metric. */
typedef struct pw_gate_key_parts {
	char model[128], hlo[128], platform[128], config[128], metric[128];
} pw_gate_key_parts;

/* Splits key into its five components; PW_ERR_INVALID when it has not five
 * non-empty ones or a component does not fit. */
pw_status pw_gate_key_split(const char *key, pw_gate_key_parts *out);

/* True when w has not expired at now_us and each of its non-empty selectors
 * equals the series' component. */
bool pw_gate_waiver_matches(const pw_gate_waiver *w, const pw_gate_key_parts *k, int64_t now_us);

/*
 * Decides, after a first pw_gate_evaluate with no family waived, which
 * families a live waiver lets pass: family j is waived by the first waiver w
 * (in the order given) such that the family's unwaived verdict is neither
 * PASS nor VALIDATED_WIN, w's model selector is empty or names the family,
 * and every series of the family that made it fail (REGRESSED or
 * INSUFFICIENT_DATA) matches w at now_us. A family that failed with no such
 * series (all frozen) is waived only by a waiver without platform, config or
 * metric selectors. An expired waiver covers nothing. Writes waived[j] and
 * waiver_of[j] (index into w, or SIZE_MAX); the caller then sets
 * families[j].waived and evaluates again. Series keys that do not split are
 * never matched by a selector. Returns the number of families waived.
 */
size_t pw_gate_waivers_resolve(const pw_gate_waiver *w, size_t nw, int64_t now_us,
                               const pw_gate_family_input *families, size_t n_families,
                               const pw_gate_series_input *series,
                               const pw_gate_series_result *results, size_t n_series,
                               const pw_gate_family_result *family_results, bool *waived,
                               size_t *waiver_of);

/* ------------------------------------------------------------------ decide */

/*
 * The whole decision of one release: pw_gate_evaluate with no family waived,
 * pw_gate_waivers_resolve at now_us, and — when a live waiver covers a
 * family — pw_gate_evaluate again with those families waived; then the
 * reported outcome of every series (series_out, n_series) and the waiver that
 * let each family pass (waiver_of, n_families: index into w or SIZE_MAX).
 * families[].waived is read as false and left as decided. Same failures as
 * pw_gate_evaluate.
 */
pw_status pw_gate_decide(const pw_gate_policy *policy, pw_gate_family_input *families,
                         size_t n_families, const pw_gate_series_input *series, size_t n_series,
                         const pw_gate_waiver *w, size_t nw, int64_t now_us,
                         pw_gate_series_result *series_out, pw_gate_family_result *family_out,
                         pw_gate_release_result *release, pw_gate_outcome *outcomes,
                         size_t *waiver_of, char *errbuf, size_t errlen);

/* ------------------------------------------------------------------ power */

/*
 * The per-tier n table of §4.5 as the gate computes it (`pw-gate
 * --power-table`): for each tier and platform class at the class's σ norm
 * (tpu_sigma_pct, gpu_sigma_pct; §4.1's 0.4% and 2%), the MDE the gate
 * certifies (pw_gate_series_mde), the normal formula's real n, the floor
 * (the tier's minimum runs) and the required n (pw_stats_required_n), as a
 * Markdown table; then the GPU platform at the top tier's own MDE (why its
 * MDE is policy->mde_gpu_pct). A series' own n comes from its own σ. Writes
 * to out; PW_ERR_INVALID when a figure cannot be computed (σ <= 0).
 */
pw_status pw_gate_power_table(FILE *out, const pw_gate_policy *policy, double tpu_sigma_pct,
                              double gpu_sigma_pct);

/* ------------------------------------------------------------------ P1 tickets */

/*
 * The filing rule of §8's "1–3% on gated series: release proceeds; P1 bug
 * auto-filed with artifacts, must resolve before next RC": true when the
 * series' reported outcome `o` is P1 — a gated series (tested: active, of a
 * family the release gates), significant under the release's BH and past
 * the effect filter the worse way (r->verdict REGRESSED, r->worse_pct > 0),
 * neither blocking alone (>= blocking_top_pct on a top-tier series) nor in a
 * family that blocks on the spend-weighted aggregate, and not waived. Below
 * the filter (TREND, PASS), BLOCKING, improvements (INVESTIGATE,
 * VALIDATED_WIN), WAIVED and untested series (FROZEN, QUARANTINED,
 * INSUFFICIENT_DATA, UNDER_POWERED) file nothing. A pure function.
 */
bool pw_gate_p1_files(pw_gate_outcome o, const pw_gate_series_result *r);

/* An open P1 ticket (perfwatch.p1_tickets) of a series the release gates. */
typedef struct pw_gate_p1_ticket {
	int64_t ticket_id;
	int64_t series_id;
	const char *series_key;    /* borrowed */
	const char *found_release; /* borrowed: the release whose gate filed it */
	int64_t found_us;          /* that release's request time */
	double effect_pct;         /* the effect it was filed for, percent */
	int64_t age_s;             /* set by pw_gate_drift_select: found_us to requested_us */
} pw_gate_p1_ticket;

/*
 * Compounding drift (§8: "must resolve before next RC (no compounding
 * drift)"): keeps, in place and in order, the open tickets t[0..n) that the
 * release `release_id` requested at `requested_us` must report — filed on an
 * earlier release (found_release differs, found_us before requested_us) on
 * one of the release's series (series_ids[0..n_series)) — sets their age_s,
 * and returns how many it kept. A ticket of the same release (a re-decision)
 * or of a later request is not drift. A pure function.
 */
size_t pw_gate_drift_select(const char *release_id, int64_t requested_us, pw_gate_p1_ticket *t,
                            size_t n, const int64_t *series_ids, size_t n_series);

/*
 * The report line of one drifting ticket into buf (always NUL-terminated):
 * "WARN compounding drift: P1-7 chat-8b/hlo:1/v6e-4/decode/tpot_p50_ms
 * (+2.1%) open since xla-rc-1, 3d04h, due by this RC". `perfwatch gate
 * show` prints it as stored.
 */
void pw_gate_drift_line(char *buf, size_t len, const pw_gate_p1_ticket *t);

/*
 * The summary's part for drift, appended to buf at its end (kept
 * NUL-terminated, cut with "..." when too long): nothing when n is 0, else
 * "; WARN compounding drift: 2 open P1 tickets from earlier releases (P1-7,
 * P1-9)".
 */
void pw_gate_drift_summary(char *buf, size_t len, const pw_gate_p1_ticket *t, size_t n);

/* ------------------------------------------------------------------ summary */

/*
 * The one-line summary of GateVerdict.summary into buf (len bytes, always
 * NUL-terminated, cut with "..." when too long), e.g.
 *   "BLOCKING: chat-8b (2 series, 0.60% fleet)"
 *   "INSUFFICIENT_DATA: lacks data: chat-8b/hlo:1/v6e-4/x/tpot_p50_ms (2/5 runs)"
 *   "PASS: 3 families, 12 tests, 0.00% fleet impact"
 * It names every BLOCKING and P1 family with its regressed series count and
 * impact, every WAIVED family, every family without any measured series,
 * per family what the plan of the candidate's sweep lists and did not
 * arrive ("; chat-8b: 6 planned series without a candidate run (KEY, ...)",
 * the baselining ones; "; rank-x: 24 planned benchmarks never measured"),
 * every series that lacked data (", planned" when the plan lists it); the
 * inheritances the plan records ("; rank-x inherits from chat-8b, similarity
 * 0.98", with " (decided on its own runs)" or " (representative not
 * gated)" when the verdict is not the representative's; an inheriting
 * BLOCKING or P1 family is named "rank-x (through chat-8b)"); then,
 * when there are any, the count of
 * UNDER_POWERED series ("; 4 series under-powered (fewer candidate runs than
 * their noise needs for the MDE)") and, when a GPU-class series was tested
 * at an MDE above its tier's, the band the production canary owns ("; GPU
 * series certified at MDE 4%: the 1-4% band is the production canary's").
 */
void pw_gate_summary(char *buf, size_t len, const pw_gate_policy *policy,
                     const pw_gate_family_input *families, const pw_gate_family_result *fr,
                     size_t n_families, const pw_gate_series_input *series,
                     const pw_gate_series_result *sr, size_t n_series,
                     const pw_gate_release_result *release);

#endif
