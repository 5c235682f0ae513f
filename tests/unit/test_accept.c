/*
 * test_accept.c: accepted shifts (services/baseliner/accept.h) — which
 * changepoints the baseliner tracks, when a tracked shift has held or was
 * fixed, and the accept id the metrics of one run configuration share.
 * The doors of the three accepted-shift topics are test_accept_door.c's.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"

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
