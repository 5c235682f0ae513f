/*
 * test_accept.c: accepted shifts (services/baseliner/accept.h) — which
 * changepoints the baseliner tracks, when a tracked shift has held or was
 * fixed, and the accept id the metrics of one run configuration share —
 * and the door of perf.changepoints.v1 (pw_baseliner_changepoint_decode).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "baseliner.h"

#define STAGE(s) PERFWATCH__V1__CHANGEPOINT_STAGE__CHANGEPOINT_STAGE_##s
#define ANN(a) PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_##a

Test(accept, software_shifts_are_tracked_infra_frozen_and_drifts_are_not)
{
	cr_expect_eq(pw_accept_cp_action_of(STAGE(PROVISIONAL), ANN(NONE)), PW_ACCEPT_CP_TRACK);
	cr_expect_eq(pw_accept_cp_action_of(STAGE(CONFIRMED), ANN(NONE)), PW_ACCEPT_CP_TRACK);
	/* messages from before stages count as confirmed */
	cr_expect_eq(pw_accept_cp_action_of(STAGE(UNSPECIFIED), ANN(UNSPECIFIED)), PW_ACCEPT_CP_TRACK);
	cr_expect_eq(pw_accept_cp_action_of(STAGE(CONFIRMED), ANN(INFRA)), PW_ACCEPT_CP_IGNORE);
	cr_expect_eq(pw_accept_cp_action_of(STAGE(CONFIRMED), ANN(FROZEN)), PW_ACCEPT_CP_IGNORE);
	cr_expect_eq(pw_accept_cp_action_of(STAGE(TREND), ANN(NONE)), PW_ACCEPT_CP_IGNORE);
	cr_expect_eq(pw_accept_cp_action_of(STAGE(WITHDRAWN), ANN(NONE)), PW_ACCEPT_CP_WITHDRAW);
}

/* the worked example: TPOT 3.90 -> 4.22 ms */
Test(accept, held_only_after_the_configured_nightlies)
{
	const double shifted[3] = {4.21, 4.23, 4.22};
	for (size_t n = 0; n < 7; n++)
		cr_expect_eq(pw_accept_decide(3.90, 4.22, n, shifted, 3, 7), PW_ACCEPT_WAIT, "n=%zu", n);
	cr_expect_eq(pw_accept_decide(3.90, 4.22, 7, shifted, 3, 7), PW_ACCEPT_HELD);
	cr_expect_eq(pw_accept_decide(3.90, 4.22, 12, shifted, 3, 7), PW_ACCEPT_HELD);
	/* 0: never */
	cr_expect_eq(pw_accept_decide(3.90, 4.22, 500, shifted, 3, 0), PW_ACCEPT_WAIT);
}

Test(accept, a_revert_is_fixed_not_accepted)
{
	const double back[3] = {3.91, 3.89, 3.90};
	cr_expect_eq(pw_accept_decide(3.90, 4.22, 9, back, 3, 7), PW_ACCEPT_FIXED);
	/* one reverted nightly among shifted ones is not a fix: the newest median decides */
	const double one_back[3] = {3.90, 4.22, 4.23};
	cr_expect_eq(pw_accept_decide(3.90, 4.22, 9, one_back, 3, 7), PW_ACCEPT_HELD);
	const double two_back[3] = {3.90, 3.92, 4.23};
	cr_expect_eq(pw_accept_decide(3.90, 4.22, 9, two_back, 3, 7), PW_ACCEPT_FIXED);
	/* a partial fix: nearer the old level than the new one */
	const double partial[1] = {4.0};
	cr_expect_eq(pw_accept_decide(3.90, 4.22, 9, partial, 1, 7), PW_ACCEPT_FIXED);
}

Test(accept, improvements_and_higher_is_better_metrics_too)
{
	/* throughput down 5%: a regression of a higher-is-better metric */
	const double lower[2] = {950.0, 951.0};
	cr_expect_eq(pw_accept_decide(1000.0, 950.0, 7, lower, 2, 7), PW_ACCEPT_HELD);
	const double up[2] = {1001.0, 999.0};
	cr_expect_eq(pw_accept_decide(1000.0, 950.0, 7, up, 2, 7), PW_ACCEPT_FIXED);
}

Test(accept, no_evidence_or_bad_levels_wait)
{
	const double v[1] = {4.2};
	cr_expect_eq(pw_accept_decide(3.90, 4.22, 9, v, 0, 7), PW_ACCEPT_WAIT);
	cr_expect_eq(pw_accept_decide(NAN, 4.22, 9, v, 1, 7), PW_ACCEPT_WAIT);
	cr_expect_eq(pw_accept_decide(3.90, 3.90, 9, v, 1, 7), PW_ACCEPT_WAIT);
	const double nan[1] = {NAN};
	cr_expect_eq(pw_accept_decide(3.90, 4.22, 9, nan, 1, 7), PW_ACCEPT_WAIT);
}

Test(accept, one_id_per_run_configuration_and_shifted_build)
{
	char a[24], b[24], c[24], d[24];
	cr_assert_eq(pw_accept_id("chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms",
	                          "xla-nightly-2026-06-17", a, sizeof a), PW_OK);
	cr_assert_eq(pw_accept_id("chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/step_time_ms",
	                          "xla-nightly-2026-06-17", b, sizeof b), PW_OK);
	cr_assert_eq(pw_accept_id("chat-8b/hlo:9f31c2ab/v6e-4/decode.B8.s2048.int8/tpot_p50_ms",
	                          "xla-nightly-2026-06-17", c, sizeof c), PW_OK);
	cr_assert_eq(pw_accept_id("chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms",
	                          "xla-nightly-2026-06-18", d, sizeof d), PW_OK);
	cr_expect_eq(strlen(a), 20);
	cr_expect_eq(strncmp(a, "acc-", 4), 0);
	cr_expect_str_eq(a, b);    /* two metrics of one run: one id, one re-baseline job */
	cr_expect_str_neq(a, c);   /* another configuration */
	cr_expect_str_neq(a, d);   /* another shift */
	char small[20];
	cr_expect_eq(pw_accept_id("m/h/p/c/x", "b", small, sizeof small), PW_ERR_INVALID);
}

/* ------------------------------------------------------------ the door */

static size_t pack_cp(const Perfwatch__V1__Changepoint *cp, uint8_t *buf)
{
	return perfwatch__v1__changepoint__pack(cp, buf);
}

static Perfwatch__V1__Changepoint good_cp(void)
{
	Perfwatch__V1__Changepoint cp = PERFWATCH__V1__CHANGEPOINT__INIT;
	cp.changepoint_id = "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms@xla-nightly-2026-06-17";
	cp.series_id = 412;
	cp.series_key = "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms";
	cp.first_shifted_build_id = "xla-nightly-2026-06-17";
	cp.shift_unix_us = 1781654400000000LL;
	cp.level_before = 3.90;
	cp.level_after = 4.22;
	cp.stage = STAGE(PROVISIONAL);
	cp.annotation = ANN(NONE);
	return cp;
}

static Perfwatch__V1__DlqReason door(const Perfwatch__V1__Changepoint *cp, char *why, size_t n)
{
	static uint8_t buf[4096];
	size_t len = pack_cp(cp, buf);
	Perfwatch__V1__Changepoint *out = NULL;
	Perfwatch__V1__DlqReason r = pw_baseliner_changepoint_decode(buf, len, &out, why, n);
	if (out) {
		cr_expect_eq(r, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED);
		cr_expect_str_eq(out->changepoint_id, cp->changepoint_id);
		perfwatch__v1__changepoint__free_unpacked(out, NULL);
	}
	return r;
}

#define R_OK_ PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED
#define R_MISSING PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD
#define R_INVALID PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE
#define R_DECODE PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED

Test(accept_door, good_and_bad_changepoints)
{
	char why[512];
	Perfwatch__V1__Changepoint cp = good_cp();
	cr_expect_eq(door(&cp, why, sizeof why), R_OK_);

	cp = good_cp();
	cp.changepoint_id = "";
	cr_expect_eq(door(&cp, why, sizeof why), R_MISSING);
	cp = good_cp();
	cp.series_id = 0;
	cr_expect_eq(door(&cp, why, sizeof why), R_MISSING);
	cp = good_cp();
	cp.first_shifted_build_id = "";
	cr_expect_eq(door(&cp, why, sizeof why), R_MISSING);
	cr_expect(strstr(why, "first_shifted_build_id") != NULL, "%s", why);
	cp = good_cp();
	cp.level_after = NAN;
	cr_expect_eq(door(&cp, why, sizeof why), R_INVALID);
	cp = good_cp();
	cp.level_after = cp.level_before;
	cr_expect_eq(door(&cp, why, sizeof why), R_INVALID);
	cp = good_cp();
	cp.shift_unix_us = 0;
	cr_expect_eq(door(&cp, why, sizeof why), R_INVALID);
	cr_expect(strstr(why, "shift_unix_us") != NULL, "%s", why);

	/* a drift carries no second level: it passes the door and is ignored */
	cp = good_cp();
	cp.stage = STAGE(TREND);
	cp.level_after = NAN;
	cp.first_shifted_build_id = "";
	cr_expect_eq(door(&cp, why, sizeof why), R_OK_);

	static const uint8_t junk[] = {0x0a, 0xff, 0xff, 0xff};
	Perfwatch__V1__Changepoint *out = NULL;
	cr_expect_eq(pw_baseliner_changepoint_decode(junk, sizeof junk, &out, why, sizeof why),
	             R_DECODE);
	cr_expect_null(out);
}

/* ------------------------------------------------- the gate verdicts' door */

static Perfwatch__V1__DlqReason verdict_door(Perfwatch__V1__GateSeriesResult *x, char *why,
                                             size_t n)
{
	static uint8_t buf[8192];
	Perfwatch__V1__GateSeriesResult pass = PERFWATCH__V1__GATE_SERIES_RESULT__INIT;
	pass.verdict = PERFWATCH__V1__VERDICT__VERDICT_PASS; /* not the baseliner's: never checked */
	Perfwatch__V1__GateSeriesResult *rows[2] = {&pass, x};
	Perfwatch__V1__GateVerdict v = PERFWATCH__V1__GATE_VERDICT__INIT;
	v.release_id = "xla-rc-2026-06-17";
	v.verdict = PERFWATCH__V1__VERDICT__VERDICT_PASS;
	v.n_series = 2;
	v.series = rows;
	size_t len = perfwatch__v1__gate_verdict__pack(&v, buf);
	Perfwatch__V1__GateVerdict *out = NULL;
	Perfwatch__V1__DlqReason r = pw_baseliner_verdict_decode(buf, len, &out, why, n);
	cr_expect_eq(out != NULL, r == R_OK_);
	if (out) {
		cr_expect_eq(out->n_series, 2);
		perfwatch__v1__gate_verdict__free_unpacked(out, NULL);
	}
	return r;
}

static Perfwatch__V1__GateSeriesResult waived_row(void)
{
	Perfwatch__V1__GateSeriesResult x = PERFWATCH__V1__GATE_SERIES_RESULT__INIT;
	x.series_id = 412;
	x.series_key = "chat-8b/hlo:9f31c2ab/v6e-4/decode.B8.s2048.int8/tpot_p50_ms";
	x.verdict = PERFWATCH__V1__VERDICT__VERDICT_WAIVED;
	x.waiver_id = "wv-2026-06-18-01";
	x.baseline_median = 2.15;
	x.candidate_median = 2.32;
	return x;
}

Test(accept_door, waived_series_results)
{
	char why[512];
	Perfwatch__V1__GateSeriesResult x = waived_row();
	cr_expect_eq(verdict_door(&x, why, sizeof why), R_OK_);
	x = waived_row();
	x.waiver_id = "";
	cr_expect_eq(verdict_door(&x, why, sizeof why), R_MISSING);
	cr_expect(strstr(why, "waived series 1") != NULL, "%s", why);
	x = waived_row();
	x.series_id = -3;
	cr_expect_eq(verdict_door(&x, why, sizeof why), R_MISSING);
	x = waived_row();
	x.candidate_median = INFINITY;
	cr_expect_eq(verdict_door(&x, why, sizeof why), R_INVALID);
	x = waived_row();
	x.candidate_median = x.baseline_median;
	cr_expect_eq(verdict_door(&x, why, sizeof why), R_INVALID);
	/* the same gaps in a result that is not waived are not the baseliner's business */
	x = waived_row();
	x.verdict = PERFWATCH__V1__VERDICT__VERDICT_BLOCKING;
	x.waiver_id = "";
	x.candidate_median = NAN;
	cr_expect_eq(verdict_door(&x, why, sizeof why), R_OK_);
}

/* ------------------------------------------------- the triage verdicts' door */

static Perfwatch__V1__DlqReason triage_door(const Perfwatch__V1__TriageVerdict *t, char *why,
                                            size_t n)
{
	static uint8_t buf[1024];
	size_t len = perfwatch__v1__triage_verdict__pack(t, buf);
	Perfwatch__V1__TriageVerdict *out = NULL;
	Perfwatch__V1__DlqReason r = pw_baseliner_triage_decode(buf, len, &out, why, n);
	cr_expect_eq(out != NULL, r == R_OK_);
	if (out) {
		cr_expect_str_eq(out->page_id, t->page_id);
		perfwatch__v1__triage_verdict__free_unpacked(out, NULL);
	}
	return r;
}

Test(accept_door, triage_verdicts)
{
	char why[512];
	Perfwatch__V1__TriageVerdict t = PERFWATCH__V1__TRIAGE_VERDICT__INIT;
	t.page_id = "pg-2026-06-18-0031";
	t.outcome = PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_TRUE_REGRESSION;
	cr_expect_eq(triage_door(&t, why, sizeof why), R_OK_);
	t.outcome = PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_FALSE_REGRESSION;
	cr_expect_eq(triage_door(&t, why, sizeof why), R_OK_, "a false page passes and changes nothing");
	t.outcome = PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_UNSPECIFIED;
	cr_expect_eq(triage_door(&t, why, sizeof why), R_MISSING);
	cr_expect(strstr(why, "no outcome") != NULL, "%s", why);
	t.outcome = PERFWATCH__V1__TRIAGE_OUTCOME__TRIAGE_OUTCOME_TRUE_REGRESSION;
	t.page_id = "";
	cr_expect_eq(triage_door(&t, why, sizeof why), R_MISSING);
}
