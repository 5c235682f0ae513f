/*
 * test_first_signal.c: who owns the baseliner's outlier alert
 * (services/baseliner/first_signal.h) and where the pager sends it
 * (services/pager/route.c): infra only with an infra cause, otherwise an
 * unconfirmed first signal for the triage rotation, neither infra nor a page.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "first_signal.h"
#include "pager.h"
#include "pager_msg.h"

#define HOUR_US (3600LL * 1000000LL)
#define T0 (1780272000LL * 1000000LL)

static pw_point_env env_of(const char *platform, const char *chip, const char *cell,
                           const char *fw, const char *harness)
{
	pw_point_env e;
	memset(&e, 0, sizeof e);
	snprintf(e.platform, sizeof e.platform, "%s", platform);
	snprintf(e.chip_set, sizeof e.chip_set, "%s", chip);
	snprintf(e.cell, sizeof e.cell, "%s", cell);
	snprintf(e.firmware, sizeof e.firmware, "%s", fw);
	snprintf(e.harness_version, sizeof e.harness_version, "%s", harness);
	return e;
}

Test(first_signal, chip_set_rotation_is_not_an_environment_change)
{
	pw_point_env a = env_of("v6e-4", "pinned-2", "c12", "fw-1", "perfbench-2.31");
	pw_point_env b = env_of("v6e-4", "pinned-7", "c12", "fw-1", "perfbench-2.31");
	char out[256];
	cr_assert_not(pw_signal_env_changed(&a, &b, out, sizeof out));
	cr_assert_str_eq(out, "");
	cr_assert_not(pw_signal_env_changed(NULL, &b, out, sizeof out));
}

Test(first_signal, harness_firmware_and_cell_changes_are_named)
{
	pw_point_env a = env_of("v6e-4", "pinned-2", "c12", "fw-1", "perfbench-2.31");
	pw_point_env b = env_of("v6e-4", "pinned-2", "c12", "fw-1", "perfbench-2.32");
	char out[256];
	cr_assert(pw_signal_env_changed(&a, &b, out, sizeof out));
	cr_assert_str_eq(out, "harness perfbench-2.31 -> perfbench-2.32");
	pw_point_env c = env_of("v6e-4", "pinned-2", "c13", "fw-2", "perfbench-2.31");
	cr_assert(pw_signal_env_changed(&a, &c, out, sizeof out));
	cr_assert_str_eq(out, "cell c12 -> c13, firmware fw-1 -> fw-2");
	/* an unknown side is not evidence */
	pw_point_env d = env_of("v6e-4", "pinned-2", "", "fw-1", "");
	cr_assert_not(pw_signal_env_changed(&a, &d, out, sizeof out));
}

Test(first_signal, causes_and_their_owner)
{
	cr_assert(pw_signal_cause_is_infra(PW_SIGNAL_FLEET_CHANGE));
	cr_assert(pw_signal_cause_is_infra(PW_SIGNAL_HARNESS_CHANGE));
	cr_assert(pw_signal_cause_is_infra(PW_SIGNAL_FLEET_WIDE));
	cr_assert_not(pw_signal_cause_is_infra(PW_SIGNAL_NONE_FOUND));
	cr_assert_not(pw_signal_cause_is_infra(PW_SIGNAL_UNSPECIFIED));
	cr_assert_str_eq(pw_signal_cause_name(PW_SIGNAL_NONE_FOUND), "none_found");
	cr_assert_str_eq(pw_signal_cause_name(PW_SIGNAL_FLEET_WIDE), "fleet_wide");
}

Test(first_signal, fleet_wide_needs_distinct_models_on_one_chip_set_within_the_window)
{
	pw_fleet_wide_params p;
	pw_fleet_wide_params_default(&p);
	cr_assert_eq(p.min_models, 3);
	pw_fleet_wide *t = pw_fleet_wide_new(&p);
	cr_assert_not_null(t);
	pw_point_env bad = env_of("v6e-4", "pinned-bad", "c1", "fw", "h");
	pw_point_env other = env_of("v6e-4", "pinned-ok", "c1", "fw", "h");
	pw_point_env gpu = env_of("b200", "pinned-bad", "c1", "fw", "h");
	uint64_t newly[8];
	size_t nn = 9;

	/* one model's compiler regression over several of its series: one model */
	cr_assert_eq(pw_fleet_wide_add(t, &bad, "chat-8b", T0, 1, newly, 8, &nn), 1);
	cr_assert_eq(nn, 0);
	cr_assert_eq(pw_fleet_wide_add(t, &bad, "chat-8b", T0 + HOUR_US, 2, newly, 8, &nn), 1);
	cr_assert_eq(nn, 0);
	/* another chip set, another platform, or outside the window do not count */
	cr_assert_eq(pw_fleet_wide_add(t, &other, "moe-47b", T0, 3, newly, 8, &nn), 1);
	cr_assert_eq(pw_fleet_wide_add(t, &gpu, "rank-1", T0, 4, newly, 8, &nn), 1);
	cr_assert_eq(pw_fleet_wide_add(t, &bad, "rank-1", T0 + 11 * HOUR_US, 5, newly, 8, &nn), 1);
	cr_assert_eq(nn, 0);
	/* a second model within 6 h of the first: two of three */
	cr_assert_eq(pw_fleet_wide_add(t, &bad, "moe-47b", T0 + 2 * HOUR_US, 6, newly, 8, &nn), 2);
	cr_assert_eq(nn, 0);
	/* the third distinct model completes the group: every member in the window */
	cr_assert_eq(pw_fleet_wide_add(t, &bad, "emb-2t", T0 + 3 * HOUR_US, 7, newly, 8, &nn), 3);
	uint64_t want[] = {1, 2, 6, 7};
	cr_assert_eq(nn, 4, "members: %zu", nn);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(newly[i], want[i]);
	/* members are reported once; a later member of the same group is reported alone */
	cr_assert_eq(pw_fleet_wide_add(t, &bad, "chat-70b", T0 + 4 * HOUR_US, 8, newly, 8, &nn), 4);
	cr_assert_eq(nn, 1);
	cr_assert_eq(newly[0], 8);
	pw_fleet_wide_free(t);
}

Test(first_signal, ring_forgets_the_oldest)
{
	pw_fleet_wide_params p = {.min_models = 2, .window_us = 100 * HOUR_US, .cap = 2};
	pw_fleet_wide *t = pw_fleet_wide_new(&p);
	pw_point_env bad = env_of("v6e-4", "pinned-bad", "c1", "fw", "h");
	uint64_t newly[4];
	size_t nn;
	cr_assert_eq(pw_fleet_wide_add(t, &bad, "a", T0, 1, newly, 4, &nn), 1);
	cr_assert_eq(pw_fleet_wide_add(t, &bad, "a", T0, 2, newly, 4, &nn), 1);
	/* "a"@1 is gone; "a"@2 and "b" make two models */
	cr_assert_eq(pw_fleet_wide_add(t, &bad, "b", T0, 3, newly, 4, &nn), 2);
	cr_assert_eq(nn, 2);
	cr_assert_eq(newly[0] + newly[1], 5);
	pw_fleet_wide_free(t);
	cr_assert_null(pw_fleet_wide_new(&(pw_fleet_wide_params){.min_models = 0, .cap = 1}));
}

/* The baseliner's outlier alert as it goes on the wire (baseliner_store.c pw_bstore_alert_pack). */
static pw_route route_of(Perfwatch__V1__AlertKind kind, Perfwatch__V1__SignalCause cause,
                         const char *owner)
{
	Perfwatch__V1__AlertDelta d = PERFWATCH__V1__ALERT_DELTA__INIT;
	d.pct = 8.2;
	d.z_robust = 20.0;
	Perfwatch__V1__Alert a = PERFWATCH__V1__ALERT__INIT;
	a.alert_id = "bl-outlier/7/run-1/0";
	a.revision = 1;
	a.kind = kind;
	a.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_BASELINER;
	a.series_key = "chat-8b/hlo:9f31c2/v6e-4/decode.B64.s2048.int8/tpot_p50_ms";
	a.delta = &d;
	a.verdict = PERFWATCH__V1__VERDICT__VERDICT_INVESTIGATE;
	a.owner_hint = (char *)owner;
	a.routing = PERFWATCH__V1__ROUTING__ROUTING_QUEUE;
	a.signal_cause = cause;
	a.needs_confirmation = kind == PERFWATCH__V1__ALERT_KIND__ALERT_KIND_UNCONFIRMED;
	pw_finding f;
	cr_assert_eq(pw_finding_from_alert(&a, &f), PW_OK);
	pw_pager_params p;
	pw_pager_params_default(&p);
	pw_route r;
	pw_route_decide(&p, &f, &r);
	return r;
}

Test(first_signal, pager_sends_an_unconfirmed_outlier_to_triage_not_infra_and_pages_nobody)
{
	pw_pager_params p;
	pw_pager_params_default(&p);
	pw_route r = route_of(PERFWATCH__V1__ALERT_KIND__ALERT_KIND_UNCONFIRMED,
	                      PERFWATCH__V1__SIGNAL_CAUSE__SIGNAL_CAUSE_NONE_FOUND,
	                      "needs-confirmation");
	cr_assert_neq(r.owner, PW_OWNER_INFRA);
	cr_assert_neq(r.action, PW_ACT_PAGE);
	cr_assert_str_eq(r.route, p.route_triage);
	cr_assert_str_neq(r.route, p.route_infra);

	pw_route i = route_of(PERFWATCH__V1__ALERT_KIND__ALERT_KIND_INFRA_HEALTH,
	                      PERFWATCH__V1__SIGNAL_CAUSE__SIGNAL_CAUSE_HARNESS_CHANGE, "infra");
	cr_assert_eq(i.owner, PW_OWNER_INFRA);
	cr_assert_str_eq(i.route, p.route_infra);
	cr_assert_neq(i.action, PW_ACT_PAGE);
}
