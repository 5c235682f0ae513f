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
 * null window) is INSUFFICIENT_DATA; the rest map one to one.
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

/* ------------------------------------------------------------------ waiting */

typedef enum pw_gate_wait {
	PW_GATE_WAIT_MORE = 0, /* some active series lacks candidate runs; deadline ahead */
	PW_GATE_WAIT_READY,    /* every active series has its runs */
	PW_GATE_WAIT_DEADLINE, /* deadline passed: evaluate with what there is */
} pw_gate_wait;

/*
 * The waiting rule: a release is READY when every ACTIVE series has at least
 * the tier's candidate runs (frozen and quarantined series are not waited
 * for: they will not be gated), and — until settle_until_us — no series is
 * BASELINING: right after a request arrives the baseliner may still be
 * catching up on the runs that make a series active, so a baselining series
 * is waited for until then and not after (a new series must not hold a
 * release for a day); likewise a family of the n_families without any
 * series yet (its first runs may not be ingested). Until catchup_until_us a
 * series whose baseline is behind (baseline_behind: the baseliner has not
 * folded points measured before the request, e.g. it was restarting) is
 * waited for too, so that the verdict is not taken on a baseline that is
 * about to move; after that it is tested on what there is. A release with not one
 * candidate run in any series is never READY: it waits for its deadline
 * (its runs have not started, the ingester is stalled, or the release does
 * not exist), and counts as one missing. Otherwise DEADLINE once
 * now_us >= deadline_us, else MORE. series[i].n_cand is what has arrived;
 * the samples themselves are not read. n_missing (may be NULL) receives the
 * number of series and families waited for.
 */
pw_gate_wait pw_gate_wait_decide(const pw_gate_policy *policy, size_t n_families,
                                 const pw_gate_series_input *series, size_t n_series,
                                 int64_t now_us, int64_t deadline_us, int64_t settle_until_us,
                                 int64_t catchup_until_us, size_t *n_missing);

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

/* ------------------------------------------------------------------ summary */

/*
 * The one-line summary of GateVerdict.summary into buf (len bytes, always
 * NUL-terminated, cut with "..." when too long), e.g.
 *   "BLOCKING: chat-8b (2 series, 0.60% fleet)"
 *   "INSUFFICIENT_DATA: lacks data: chat-8b/hlo:1/v6e-4/x/tpot_p50_ms (2/5 runs)"
 *   "PASS: 3 families, 12 tests, 0.00% fleet impact"
 * It names every BLOCKING and P1 family with its regressed series count and
 * impact, every WAIVED family, every family without any measured series,
 * and every series that lacked data.
 */
void pw_gate_summary(char *buf, size_t len, const pw_gate_policy *policy,
                     const pw_gate_family_input *families, const pw_gate_family_result *fr,
                     size_t n_families, const pw_gate_series_input *series,
                     const pw_gate_series_result *sr, size_t n_series,
                     const pw_gate_release_result *release);

#endif
