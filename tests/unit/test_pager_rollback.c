/*
 * test_pager_rollback.c: the production canary's ROLLBACK as the pager sees
 * it (docs/pager.md, "Canary rollbacks"): the door on perf.rollouts.v1, the
 * finding, its own incident, §8 routing, the summary and payload, the stale
 * rule; and pw_plot_cs_svg, the triage page's plot of the evidence.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pager_msg.h"
#include "pw_plot.h"
#include "wire_messages.h"

static Perfwatch__V1__RolloutDecision decision(void)
{
	Perfwatch__V1__RolloutDecision d;
	wire_rollback_init(&d);
	return d;
}

/* The door on d packed: the reason, the part in *pt. */
static Perfwatch__V1__DlqReason door(const Perfwatch__V1__RolloutDecision *d, pw_pager_part *pt, char *why, size_t len)
{
	uint8_t buf[2048];
	size_t n = perfwatch__v1__rollout_decision__pack(d, buf);
	Perfwatch__V1__GateVerdict *gv = NULL;
	return pw_pager_door(PW_PAGER_IN_ROLLOUT, buf, n, pt, &gv, why, len);
}

Test(pager_rollback, rollback_is_one_critical_page_to_triage_with_the_evidence)
{
	cr_assert_eq(pw_pager_in_of("perf.rollouts.v1"), PW_PAGER_IN_ROLLOUT);
	Perfwatch__V1__RolloutDecision d = decision();
	pw_pager_part *pt = calloc(1, sizeof *pt);
	char why[256];
	cr_assert_eq(door(&d, pt, why, sizeof why), PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED, "%s", why);
	const pw_finding *f = &pt->f;
	cr_assert(pt->opens);
	cr_assert_eq(f->kind, PW_FIND_ROLLBACK);
	cr_assert_str_eq(f->alert_id, "rollback-rollout-xla-2026-06-22-chat-8b");
	cr_assert_str_eq(pt->key, "rollout:rollback-rollout-xla-2026-06-22-chat-8b");
	cr_assert_str_eq(f->model, "chat-8b");
	cr_assert_str_eq(f->metric, "tpot");
	cr_assert_str_eq(f->rollback.artifact, "serving/chat-8b/xla-rc-2026-06-15.aot");
	cr_assert_eq(f->rollback.windows, 38);

	pw_pager_params prm;
	pw_pager_params_default(&prm);
	pw_route r;
	pw_route_decide(&prm, f, &r);
	cr_assert_eq(r.action, PW_ACT_PAGE);
	cr_assert_eq(r.severity, PW_SEV_CRITICAL);
	cr_assert_str_eq(r.route, "ml-perf-triage");
	cr_assert_eq(r.owner, PW_OWNER_COMPILER, "only the compiler release differs between the arms");

	pw_incident *inc = calloc(1, sizeof *inc);
	pw_incident_open(inc, "inc-rollback-rollout-xla-2026-06-22-chat-8b", f);
	char summary[512];
	pw_incident_summary(inc, summary, sizeof summary);
	cr_assert_str_eq(summary, "canary ROLLBACK chat-8b TPOT +1.11% [+0.50%, +2.23%] after 38 windows, to "
	                          "serving/chat-8b/xla-rc-2026-06-15.aot");
	char *json = pw_payload_json(inc, &r, false);
	cr_assert_not_null(json);
	cr_assert_not_null(strstr(json, "\"canary\":{\"decision\":\"ROLLBACK\",\"rollout_id\":\"rollout-xla-2026-06-22\","
	                                "\"family\":\"chat-8b\",\"metric\":\"tpot\",\"effect_pct\":1.113,\"lo_pct\":0.501,"
	                                "\"hi_pct\":2.231,\"windows\":38,\"family_windows\":114,"
	                                "\"decided_window_start_unix_us\":1781870700000000,\"release\":\"xla-rc-2026-06-22\","
	                                "\"previous_release\":\"xla-rc-2026-06-15\","
	                                "\"rollback_artifact\":\"serving/chat-8b/xla-rc-2026-06-15.aot\",\"alpha\":0.05,"
	                                "\"mde_pct\":1,\"tolerance_pct\":0.5}"),
	          "%s", json);
	free(json);

	/* a benchmark event of the same release and family never joins the rollback, nor the other way */
	pw_finding *g = calloc(1, sizeof *g);
	snprintf(g->alert_id, sizeof g->alert_id, "gate-1");
	g->revision = 1;
	snprintf(g->model, sizeof g->model, "chat-8b");
	snprintf(g->release_id, sizeof g->release_id, "xla-rc-2026-06-22");
	g->verdict = PW_FV_BLOCKING;
	g->from_gate = true;
	g->created_us = f->created_us;
	inc->open = true; /* even were it open (the service closes it at once) */
	cr_assert_not(pw_incident_matches(&prm, inc, g));
	pw_incident *other = calloc(1, sizeof *other);
	pw_incident_open(other, "inc-gate-1", g);
	cr_assert_not(pw_incident_matches(&prm, other, f));
	cr_assert_not(pw_incident_same_event(inc, other));
	cr_assert_not(pw_incident_same_event(other, inc));
	free(other);
	free(g);
	free(inc);
	free(pt);
}

Test(pager_rollback, promote_and_hold_page_nobody)
{
	Perfwatch__V1__RolloutDecision d = decision();
	pw_pager_part *pt = calloc(1, sizeof *pt);
	char why[256];
	d.decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_PROMOTE;
	d.rollback_artifact = "";
	cr_assert_eq(door(&d, pt, why, sizeof why), PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED, "%s", why);
	cr_assert_not(pt->opens);
	cr_assert_neq(pt->f.kind, PW_FIND_ROLLBACK);
	cr_assert_str_eq(pt->f.rollback.decision, "PROMOTE");
	d.decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_HOLD;
	d.inconclusive = true;
	d.effect_pct = NAN; /* a HOLD's numbers are not checked: it pages nobody */
	cr_assert_eq(door(&d, pt, why, sizeof why), PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED, "%s", why);
	cr_assert_not(pt->opens);
	cr_assert_str_eq(pt->f.rollback.decision, "HOLD");
	cr_assert(pt->f.rollback.inconclusive);
	free(pt);
}

Test(pager_rollback, bad_decisions_are_dead_lettered_with_the_reason)
{
	pw_pager_part *pt = calloc(1, sizeof *pt);
	char why[256];
	static const struct {
		const char *name;
		Perfwatch__V1__DlqReason reason;
		const char *detail;
	} rows[] = {
		{"no rollout", PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "no rollout_id"},
		{"no family", PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "no family"},
		{"no decision", PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "no decision"},
		{"no artifact", PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "no rollback_artifact"},
		{"no metric", PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD, "no metric"},
		{"effect outside", PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "outside its interval"},
		{"NaN bound", PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "outside its interval"},
		{"no windows", PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "no windows"},
		{"long release", PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE, "release is 138 bytes"},
	};
	char long_release[139];
	memset(long_release, 'r', 138);
	long_release[138] = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		Perfwatch__V1__RolloutDecision d = decision();
		switch (i) {
		case 0: d.rollout_id = ""; break;
		case 1: d.family = ""; break;
		case 2: d.decision = PERFWATCH__V1__ROLLOUT_DECISION_KIND__ROLLOUT_DECISION_UNSPECIFIED; break;
		case 3: d.rollback_artifact = ""; break;
		case 4: d.metric = PERFWATCH__V1__CANARY_METRIC__CANARY_METRIC_UNSPECIFIED; break;
		case 5: d.effect_pct = 3; break;
		case 6: d.hi_pct = NAN; break;
		case 7: d.windows = 0; break;
		case 8: d.release = long_release; break;
		}
		cr_assert_eq(door(&d, pt, why, sizeof why), rows[i].reason, "%s: %s", rows[i].name, why);
		cr_assert_not_null(strstr(why, rows[i].detail), "%s: %s", rows[i].name, why);
	}
	Perfwatch__V1__GateVerdict *gv = NULL;
	cr_assert_eq(pw_pager_door(PW_PAGER_IN_ROLLOUT, "\n\x05" "abc", 5, pt, &gv, why, sizeof why),
	             PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED);
	free(pt);
}

Test(pager_rollback, long_names_get_distinct_ids_that_fit)
{
	pw_rollback a = {0}, b = {0};
	memset(a.rollout_id, 'r', 200);
	memset(a.family, 'f', 200);
	b = a;
	b.family[199] = 'g'; /* differs past what the id keeps */
	char ia[PW_PAGER_STR], ib[PW_PAGER_STR];
	pw_rollback_incident_id(&a, ia);
	pw_rollback_incident_id(&b, ib);
	cr_assert_lt(strlen(ia), PW_PAGER_STR - 8);
	cr_assert_str_neq(ia, ib);
	cr_assert_eq(strncmp(ia, "inc-rollback-", 13), 0);
}

Test(pager_rollback, a_rollback_older_than_max_age_is_not_paged)
{
	pw_pager_params prm;
	pw_pager_params_default(&prm);
	cr_assert_eq(prm.rollout_max_age_us, 24LL * 3600 * 1000000);
	pw_finding *f = calloc(1, sizeof *f);
	f->kind = PW_FIND_ROLLBACK;
	f->created_us = 1000LL * 3600 * 1000000;
	cr_assert_not(pw_rollback_stale(&prm, f, f->created_us + prm.rollout_max_age_us));
	cr_assert(pw_rollback_stale(&prm, f, f->created_us + prm.rollout_max_age_us + 1));
	f->created_us = 0; /* no time recorded: paged */
	cr_assert_not(pw_rollback_stale(&prm, f, 1000LL * 3600 * 1000000));
	f->kind = PW_FIND_REGRESSION;
	f->created_us = 1;
	cr_assert_not(pw_rollback_stale(&prm, f, 1000LL * 3600 * 1000000));
	free(f);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

Test(pager_rollback, plot_has_one_point_and_interval_per_window)
{
	pw_plot_cs_point pts[26];
	for (int i = 0; i < 26; i++) /* an interval narrowing onto +1.1%, the first ones open */
		pts[i] = (pw_plot_cs_point){(uint32_t)(13 + i), 1.1 + 0.3 * sin(i), i < 2 ? -100 : 1.1 - 8.0 / (i + 1),
		                            i < 3 ? INFINITY : 1.1 + 8.0 / (i + 1)};
	pw_plot_cs c = {.title = "chat-8b <tpot>", .points = pts, .npoints = 26, .tolerance_pct = 0.5, .mde_pct = 1,
	                .decided_window = 38};
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(pw_plot_cs_svg(f, &c, 900, 340, err, sizeof err), PW_OK, "%s", err);
	fclose(f);
	cr_assert_eq(count(buf, "<circle class=\"cs-effect\""), 26);
	cr_assert_eq(count(buf, "<line class=\"cs-interval"), 26);
	cr_assert_geq(count(buf, "<line class=\"cs-interval open\""), 3, "the open intervals are cut at the edge");
	cr_assert_eq(count(buf, "class=\"cs-tolerance\""), 1);
	cr_assert_eq(count(buf, "class=\"cs-mde\""), 1);
	cr_assert_eq(count(buf, "class=\"cs-decision\""), 1);
	cr_assert_not_null(strstr(buf, "chat-8b &lt;tpot&gt;"));
	cr_assert_not_null(strstr(buf, "(+0.50%)</title>"), "the tolerance above 0 for a lower-is-better metric");
	cr_assert_null(strstr(buf, "inf"), "no infinity reaches the picture's coordinates");
	free(buf);
	/* goodput: a regression is negative, the bounds below 0 */
	c.higher_is_better = true;
	buf = NULL;
	f = open_memstream(&buf, &len);
	cr_assert_eq(pw_plot_cs_svg(f, &c, 900, 340, err, sizeof err), PW_OK, "%s", err);
	fclose(f);
	cr_assert_not_null(strstr(buf, "(-0.50%)</title>"));
	free(buf);
	/* refusals */
	f = fopen("/dev/null", "w");
	c.npoints = 0;
	cr_assert_eq(pw_plot_cs_svg(f, &c, 900, 340, err, sizeof err), PW_ERR_INSUFFICIENT);
	c.npoints = 26;
	pts[5].effect_pct = NAN;
	cr_assert_eq(pw_plot_cs_svg(f, &c, 900, 340, err, sizeof err), PW_ERR_INVALID);
	pts[5].effect_pct = 1;
	pts[6].lo_pct = 5;
	pts[6].hi_pct = 4;
	cr_assert_eq(pw_plot_cs_svg(f, &c, 900, 340, err, sizeof err), PW_ERR_INVALID);
	pts[6].hi_pct = 6;
	cr_assert_eq(pw_plot_cs_svg(f, &c, 300, 340, err, sizeof err), PW_ERR_INVALID);
	fclose(f);
}
