/*
 * test_pager_msg.c: Alert and Bisection messages into pager findings, and an
 * incident into Alertmanager's v2 alerts (services/pager/pager_msg.h).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "pager_msg.h"

Test(pager_msg, alert_of_artifact_3)
{
	Perfwatch__V1__SeriesKey sk = PERFWATCH__V1__SERIES_KEY__INIT;
	Perfwatch__V1__AlertBaseline b = PERFWATCH__V1__ALERT_BASELINE__INIT;
	Perfwatch__V1__AlertObserved o = PERFWATCH__V1__ALERT_OBSERVED__INIT;
	Perfwatch__V1__AlertDelta d = PERFWATCH__V1__ALERT_DELTA__INIT;
	Perfwatch__V1__AlertEffectGate e = PERFWATCH__V1__ALERT_EFFECT_GATE__INIT;
	Perfwatch__V1__AlertScope sc = PERFWATCH__V1__ALERT_SCOPE__INIT;
	Perfwatch__V1__Alert a = PERFWATCH__V1__ALERT__INIT;
	char *clean[] = {"chat-8b/v5e-8/*", "chat-8b/*/prefill.*"};
	sk.model = "chat-8b";
	sk.hlo_fingerprint = "hlo:9f31c2";
	sk.platform = "v6e-4";
	sk.config = "decode.B64.s2048.int8";
	sk.metric = "tpot_p50_ms";
	b.median = 3.90;
	b.mad = 0.017;
	b.n = 30;
	b.window = "2026-05-12..06-16";
	o.median = 4.22;
	o.n = 5;
	o.release = "xla-rc-2026-06-17";
	d.abs = 0.32;
	d.abs_unit = "ms";
	d.pct = 8.2;
	d.z_robust = 18.8;
	d.fdr_q = 1.2e-9;
	e.mde_pct = 1.0;
	e.passed_min_effect = 1;
	sc.n_clean_series = 2;
	sc.clean_series = clean;
	a.alert_id = "perfreg-2026-06-18-00412";
	a.revision = 1;
	a.kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION;
	a.source = PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_GATE;
	a.created_unix_us = 1781740800000000LL; /* 2026-06-18T00:00:00Z */
	a.series_key = "chat-8b|hlo:9f31c2|v6e-4|decode.B64.s2048.int8|tpot_p50_ms";
	a.series = &sk;
	a.baseline = &b;
	a.observed = &o;
	a.delta = &d;
	a.effect_gate = &e;
	a.scope = &sc;
	a.verdict = PERFWATCH__V1__VERDICT__VERDICT_BLOCKING;
	a.release_id = "xla-rc-2026-06-17";

	pw_finding f;
	cr_assert_eq(pw_finding_from_alert(&a, &f), PW_OK);
	cr_expect_str_eq(f.model, "chat-8b");
	cr_expect_eq(f.verdict, PW_FV_BLOCKING);
	cr_expect(f.from_gate);
	cr_expect_eq(f.n_clean, 2);
	cr_expect_float_eq(f.fdr_q, 1.2e-9, 1e-20);

	/* the bisector's answer joins the alert's incident and names the culprit */
	Perfwatch__V1__Bisection bs = PERFWATCH__V1__BISECTION__INIT;
	bs.bisection_id = "bs-00412";
	bs.alert_id = a.alert_id;
	bs.series_key = a.series_key;
	bs.series = &sk;
	bs.range_lo = "cl/7841885";
	bs.range_hi = "cl/7841923";
	bs.n_cls = 38;
	bs.culprit = "cl/7841917";
	bs.culprit_owner = "xla-fusion";
	bs.verified_adjacent_clean = 1;
	bs.cherry_pick_reproduced = 1;
	bs.status = PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_VERIFYING;
	bs.started_unix_us = a.created_unix_us + 3600000000LL;
	pw_finding part;
	cr_assert_eq(pw_finding_from_bisection(&bs, &part), PW_OK);
	cr_expect_str_eq(part.culprit, "", "an unverified culprit is not the incident's culprit");
	bs.status = PERFWATCH__V1__BISECTION_STATUS__BISECTION_STATUS_DONE;
	cr_assert_eq(pw_finding_from_bisection(&bs, &part), PW_OK);
	cr_expect_str_eq(part.culprit, "cl/7841917");
	cr_expect_str_eq(part.bisect_status, "done");
	cr_expect(part.owner_from_bisection, "the culprit owner is marked as the bisection's");

	pw_pager_params p;
	pw_pager_params_default(&p);
	pw_incident inc;
	pw_incident_open(&inc, "inc-00412", &f);
	cr_assert_eq(pw_incident_find(&p, &inc, 1, &part), 0);
	pw_incident_add(&inc, &part);
	cr_expect_str_eq(inc.primary.culprit, "cl/7841917");
	cr_expect_str_eq(inc.primary.owner_hint, "xla-fusion");
	cr_expect_str_eq(inc.primary.cl_lo, "cl/7841885");
	cr_expect_eq(inc.primary.revision, 1, "a part does not replace the alert's revision");

	pw_route r;
	pw_route_decide(&p, &inc.primary, &r);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	cr_assert_not_null(m);
	cr_assert_eq(pw_alertmanager_write(m, &inc, &r, "pg-00412", "http://127.0.0.1:1/triage/pg-00412?x=1",
	                                   true, false, 0), PW_OK);
	fclose(m);
	const char *want[] = {
		"[{\"labels\":{\"alertname\":\"PerfwatchIncident\",\"incident\":\"inc-00412\",\"page_id\":\"pg-00412\",\"severity\":\"critical\",\"route\":\"ml-perf-triage\",\"family\":\"chat-8b\",\"release\":\"xla-rc-2026-06-17\",\"owner\":\"compiler\",\"culprit\":\"cl/7841917\"}",
		"\"summary\":\"chat-8b v6e-4 TPOT +8.2% BLOCKING, culprit cl/7841917 [false-page budget under pressure]\",\"owner\":\"compiler\"",
		"\"payload\":\"{\\\"alert_id\\\":\\\"perfreg-2026-06-18-00412\\\"",
		"\"startsAt\":\"2026-06-18T00:00:00.000Z\"",
		"\"generatorURL\":\"http://127.0.0.1:1/triage/pg-00412?x=1\"}]",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_expect_not_null(strstr(buf, want[i]), "lacks %s\n%s", want[i], buf);
	cr_expect_null(strstr(buf, "endsAt"), "an open incident has no endsAt");
	free(buf);

	m = open_memstream(&buf, &len);
	cr_assert_eq(pw_alertmanager_write(m, &inc, &r, "pg-00412", "u", false, true,
	                                   a.created_unix_us + 86400000000LL + 1500), PW_OK);
	fclose(m);
	cr_expect_not_null(strstr(buf, "\"endsAt\":\"2026-06-19T00:00:00.001Z\""), "%s", buf);
	free(buf);
}

Test(pager_msg, attribution_part)
{
	Perfwatch__V1__Attribution at = PERFWATCH__V1__ATTRIBUTION__INIT;
	pw_finding f;
	cr_expect_eq(pw_finding_from_attribution(&at, &f), PW_ERR_INVALID);
	at.alert_id = "perfreg-1";
	at.owner_hint = "model";
	at.created_unix_us = 5;
	cr_assert_eq(pw_finding_from_attribution(&at, &f), PW_OK);
	cr_expect_eq(f.revision, 0);
	cr_expect_str_eq(f.owner_hint, "model");
	pw_pager_params p;
	pw_pager_params_default(&p);
	cr_expect_eq(pw_route_owner(&p, &f), PW_OWNER_MODEL);
}

Test(pager_msg, bad_messages)
{
	Perfwatch__V1__Alert a = PERFWATCH__V1__ALERT__INIT;
	Perfwatch__V1__Bisection b = PERFWATCH__V1__BISECTION__INIT;
	pw_finding f;
	cr_expect_eq(pw_finding_from_alert(&a, &f), PW_ERR_INVALID);
	cr_expect_eq(pw_finding_from_alert(NULL, &f), PW_ERR_INVALID);
	cr_expect_eq(pw_finding_from_bisection(&b, &f), PW_ERR_INVALID);
	a.alert_id = "x";
	a.verdict = (Perfwatch__V1__Verdict)99;
	cr_expect_eq(pw_finding_from_alert(&a, &f), PW_OK);
	cr_expect_eq(f.verdict, PW_FV_NONE, "an unknown verdict is no verdict");
	cr_expect_eq(f.revision, 1);
}

/*
 * Alertmanager notifies again only when an alert's labels change, so what
 * on-call must hear about — the headline's family, the owner, the culprit —
 * is in the labels: an incident opened by rank-moe-110b's alert whose
 * headline became chat-8b's is labelled chat-8b (it said rank-moe-110b), and
 * the owner and culprit arriving change the label set (before, only an
 * annotation changed, which Alertmanager never sends again).
 */
Test(pager_msg, labels_follow_the_headline_owner_and_culprit)
{
	pw_finding moe, chat;
	memset(&moe, 0, sizeof moe);
	snprintf(moe.alert_id, sizeof moe.alert_id, "gate-rc-e1-s29");
	moe.revision = 1;
	moe.from_gate = true;
	moe.verdict = PW_FV_BLOCKING;
	snprintf(moe.series_key, sizeof moe.series_key, "rank-moe-110b/hlo:5b/v6e-16/decode.B8/mfu");
	snprintf(moe.model, sizeof moe.model, "rank-moe-110b");
	snprintf(moe.platform, sizeof moe.platform, "v6e-16");
	snprintf(moe.config, sizeof moe.config, "decode.B8");
	snprintf(moe.metric, sizeof moe.metric, "mfu");
	moe.delta_pct = -3.3;
	moe.spend_pct = 0.05 * 3.3;
	snprintf(moe.release_id, sizeof moe.release_id, "rc");
	snprintf(moe.cl_lo, sizeof moe.cl_lo, "cl/100");
	snprintf(moe.cl_hi, sizeof moe.cl_hi, "cl/120");
	chat = moe;
	snprintf(chat.alert_id, sizeof chat.alert_id, "gate-rc-e1-s10");
	snprintf(chat.series_key, sizeof chat.series_key, "chat-8b/hlo:9f/v6e-4/decode.B64/tpot_p50_ms");
	snprintf(chat.model, sizeof chat.model, "chat-8b");
	snprintf(chat.platform, sizeof chat.platform, "v6e-4");
	snprintf(chat.config, sizeof chat.config, "decode.B64");
	snprintf(chat.metric, sizeof chat.metric, "tpot_p50_ms");
	chat.delta_pct = 8.2;
	chat.spend_pct = 0.078 * 8.2;

	pw_pager_params p;
	pw_pager_params_default(&p);
	pw_incident inc;
	pw_incident_open(&inc, "inc-gate-rc-e1-s29", &moe);
	cr_assert_eq(pw_incident_find(&p, &inc, 1, &chat), 0);
	pw_incident_add(&inc, &chat);
	char *labels[3];
	for (int step = 0; step < 3; step++) {
		if (step == 1) { /* the attribution: the owner */
			pw_finding at;
			memset(&at, 0, sizeof at);
			snprintf(at.alert_id, sizeof at.alert_id, "%s", chat.alert_id);
			snprintf(at.series_key, sizeof at.series_key, "%s", chat.series_key);
			snprintf(at.owner_hint, sizeof at.owner_hint, "compiler");
			pw_incident_add(&inc, &at);
		} else if (step == 2) { /* the bisection: the culprit */
			pw_finding bs;
			memset(&bs, 0, sizeof bs);
			snprintf(bs.alert_id, sizeof bs.alert_id, "%s", chat.alert_id);
			snprintf(bs.bisect_status, sizeof bs.bisect_status, "done");
			snprintf(bs.culprit, sizeof bs.culprit, "cl/117");
			pw_incident_add(&inc, &bs);
		}
		pw_route r;
		pw_route_decide(&p, &inc.primary, &r);
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		cr_assert_not_null(m);
		cr_assert_eq(pw_alertmanager_write(m, &inc, &r, "pg-x", "u", false, false, 0), PW_OK);
		fclose(m);
		char *end = strstr(buf, "},\"annotations\"");
		cr_assert_not_null(end, "%s", buf);
		labels[step] = strndup(buf, (size_t)(end - buf));
		free(buf);
	}
	cr_expect_not_null(strstr(labels[0], "\"family\":\"chat-8b\""), "the headline's family: %s", labels[0]);
	cr_expect_not_null(strstr(labels[0], "\"owner\":\"unspecified\""), "%s", labels[0]);
	cr_expect_null(strstr(labels[0], "\"culprit\""), "no culprit label before the bisection: %s", labels[0]);
	cr_expect_not_null(strstr(labels[1], "\"owner\":\"compiler\""), "%s", labels[1]);
	cr_expect_not_null(strstr(labels[2], "\"culprit\":\"cl/117\""), "%s", labels[2]);
	cr_expect_str_neq(labels[0], labels[1], "the owner arriving changes the labels");
	cr_expect_str_neq(labels[1], labels[2], "the culprit arriving changes the labels");
	for (int i = 0; i < 3; i++) {
		cr_expect_not_null(strstr(labels[i], "\"incident\":\"inc-gate-rc-e1-s29\""), "the same group: %s", labels[i]);
		free(labels[i]);
	}
}
