/*
 * test_pager.c: the pager's decisions (services/pager/pager.h): grouping the
 * worked example into one incident, §8 routing and owners, the false-page
 * budget, the artifact-3 payload and the signed triage links.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <stdlib.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "pager.h"

#define HOUR_US (3600LL * 1000000)

static void cp(char *d, size_t n, const char *s) { snprintf(d, n, "%s", s); }

/* The gate's finding of artifact 3 (chat-8b v6e-4 decode.B64, +8.2% BLOCKING). */
static pw_finding gate_b64(void)
{
	pw_finding f;
	memset(&f, 0, sizeof f);
	cp(f.alert_id, sizeof f.alert_id, "perfreg-2026-06-18-00412");
	f.revision = 1;
	f.kind = PW_FIND_REGRESSION;
	f.from_gate = true;
	f.created_us = 1000 * HOUR_US;
	cp(f.series_key, sizeof f.series_key, "chat-8b|hlo:9f31c2|v6e-4|decode.B64.s2048.int8|tpot_p50_ms");
	cp(f.model, sizeof f.model, "chat-8b");
	cp(f.hlo_fingerprint, sizeof f.hlo_fingerprint, "hlo:9f31c2");
	cp(f.platform, sizeof f.platform, "v6e-4");
	cp(f.config, sizeof f.config, "decode.B64.s2048.int8");
	cp(f.metric, sizeof f.metric, "tpot_p50_ms");
	f.top_tier = true;
	f.spend_pct = 0.6;
	f.base_median = 3.90;
	f.base_mad = 0.017;
	f.base_n = 30;
	cp(f.base_window, sizeof f.base_window, "2026-05-12..06-16");
	f.obs_median = 4.22;
	f.obs_n = 5;
	cp(f.obs_release, sizeof f.obs_release, "xla-rc-2026-06-17");
	f.delta_abs = 0.32;
	cp(f.abs_unit, sizeof f.abs_unit, "ms");
	f.delta_pct = 8.2;
	f.z_robust = 18.8;
	f.fdr_q = 1.2e-9;
	f.mde_pct = 1.0;
	f.passed_min_effect = true;
	cp(f.clean[0], PW_PAGER_STR, "chat-8b/v5e-8/*");
	cp(f.clean[1], PW_PAGER_STR, "chat-8b/*/prefill.*");
	f.n_clean = 2;
	f.verdict = PW_FV_BLOCKING;
	cp(f.release_id, sizeof f.release_id, "xla-rc-2026-06-17");
	return f;
}

static pw_finding gate_b8(void)
{
	pw_finding f = gate_b64();
	cp(f.alert_id, sizeof f.alert_id, "perfreg-2026-06-18-00413");
	cp(f.series_key, sizeof f.series_key, "chat-8b|hlo:9f31c2|v6e-4|decode.B8.s2048.int8|tpot_p50_ms");
	cp(f.config, sizeof f.config, "decode.B8");
	f.delta_pct = 7.4;
	f.verdict = PW_FV_BLOCKING;
	f.created_us += 1000;
	return f;
}

/* rank-moe-110b's watcher shift, same CL range, no release: correlated by the range. */
static pw_finding watcher_moe(void)
{
	pw_finding f = gate_b64();
	cp(f.alert_id, sizeof f.alert_id, "perfcp-rank-moe-110b-2026-06-17");
	f.from_gate = false;
	cp(f.series_key, sizeof f.series_key, "rank-moe-110b|hlo:aa|v6e-16|decode|tpot_p50_ms");
	cp(f.model, sizeof f.model, "rank-moe-110b");
	cp(f.platform, sizeof f.platform, "v6e-16");
	cp(f.config, sizeof f.config, "decode");
	f.delta_pct = 3.1;
	f.verdict = PW_FV_NONE;
	f.release_id[0] = '\0';
	f.n_clean = 0;
	cp(f.nightly, sizeof f.nightly, "2026-06-17");
	cp(f.cl_lo, sizeof f.cl_lo, "cl/7841885");
	cp(f.cl_hi, sizeof f.cl_hi, "cl/7841923");
	f.n_cls = 38;
	f.created_us += 2 * HOUR_US;
	return f;
}

Test(pager, cl_number)
{
	cr_expect_eq(pw_cl_number("cl/7841917"), 7841917);
	cr_expect_eq(pw_cl_number("7841917"), 7841917);
	cr_expect_eq(pw_cl_number("cl/"), -1);
	cr_expect_eq(pw_cl_number("cl/12x"), -1);
	cr_expect_eq(pw_cl_number(""), -1);
	cr_expect_eq(pw_cl_number(NULL), -1);
}

Test(pager, worked_example_is_one_incident)
{
	pw_pager_params p;
	pw_incident incs[4];
	size_t n = 0;
	pw_pager_params_default(&p);

	pw_finding parts[5];
	parts[0] = gate_b64();
	parts[1] = gate_b8();
	/* the changepoint part of the B64 alert: revision 2 adds the range */
	parts[2] = gate_b64();
	parts[2].revision = 2;
	cp(parts[2].nightly, sizeof parts[2].nightly, "2026-06-17");
	cp(parts[2].cl_lo, sizeof parts[2].cl_lo, "cl/7841885");
	cp(parts[2].cl_hi, sizeof parts[2].cl_hi, "cl/7841923");
	parts[2].n_cls = 38;
	parts[2].created_us += HOUR_US;
	parts[3] = watcher_moe();
	/* the bisection and attribution: revision 3 */
	parts[4] = parts[2];
	parts[4].revision = 3;
	cp(parts[4].bisect_status, sizeof parts[4].bisect_status, "done");
	cp(parts[4].culprit, sizeof parts[4].culprit, "cl/7841917");
	parts[4].verified_adjacent_clean = true;
	parts[4].cherry_pick_reproduced = true;
	cp(parts[4].op_diff, sizeof parts[4].op_diff, "/opdiff/00412");
	cp(parts[4].owner_hint, sizeof parts[4].owner_hint, "xla-fusion");
	parts[4].created_us += 3 * HOUR_US;

	for (size_t i = 0; i < 5; i++) {
		long k = pw_incident_find(&p, incs, n, &parts[i]);
		if (k < 0) {
			cr_assert_lt(n, 4);
			pw_incident_open(&incs[n++], "inc-1", &parts[i]);
		} else {
			pw_incident_add(&incs[k], &parts[i]);
		}
	}
	cr_assert_eq(n, 1, "the worked example's %zu findings opened %zu incidents", (size_t)5, n);
	pw_incident *inc = &incs[0];
	cr_expect_eq(inc->n_members, 3);
	cr_expect_str_eq(inc->primary.alert_id, "perfreg-2026-06-18-00412");
	cr_expect_str_eq(inc->primary.culprit, "cl/7841917");
	cr_expect_eq(inc->primary.revision, 3);
	cr_expect_eq(inc->n_scope, 2);

	char summary[256];
	pw_incident_summary(inc, summary, sizeof summary);
	cr_expect_str_eq(summary, "chat-8b v6e-4 TPOT +8.2% BLOCKING, culprit cl/7841917");
	char key[256];
	pw_incident_dedup_key(inc, key, sizeof key);
	cr_expect_str_eq(key, "xla-rc-2026-06-17/chat-8b");

	pw_route r;
	pw_route_decide(&p, &inc->primary, &r);
	cr_expect_eq(r.action, PW_ACT_PAGE);
	cr_expect_eq(r.severity, PW_SEV_CRITICAL);
	cr_expect_str_eq(r.route, "ml-perf-triage");
	cr_expect_eq(r.owner, PW_OWNER_COMPILER);

	char *json = pw_payload_json(inc, &r, false);
	cr_assert_not_null(json);
	const char *want[] = {
		"\"alert_id\":\"perfreg-2026-06-18-00412\"",
		"\"series\":{\"model\":\"chat-8b\",\"hlo_fingerprint\":\"hlo:9f31c2\",\"platform\":\"v6e-4\",\"config\":\"decode.B64.s2048.int8\",\"metric\":\"tpot_p50_ms\"}",
		"\"baseline\":{\"median\":3.9,\"mad\":0.017,\"n\":30,\"window\":\"2026-05-12..06-16\"}",
		"\"observed\":{\"median\":4.22,\"n\":5,\"release\":\"xla-rc-2026-06-17\"}",
		"\"delta\":{\"abs_ms\":0.32,\"pct\":8.2,\"z_robust\":18.8,\"fdr_q\":1.2e-09}",
		"\"effect_gate\":{\"mde_pct\":1,\"passed_min_effect\":true}",
		"\"correlated_series\":[\"chat-8b/v6e-4/decode.B8: +7.4%\",\"rank-moe-110b/v6e-16/decode: +3.1%\"]",
		"\"clean_series\":[\"chat-8b/v5e-8/*\",\"chat-8b/*/prefill.*\"]",
		"\"changepoint\":{\"nightly\":\"2026-06-17\",\"cl_range\":[\"cl/7841885\",\"cl/7841923\"],\"n_cls\":38}",
		"\"bisection\":{\"status\":\"done\",\"culprit\":\"cl/7841917\",\"verified_adjacent_clean\":true",
		"\"op_diff\":\"/opdiff/00412\"",
		"\"verdict\":\"BLOCKING\"",
		"\"owner_hint\":\"xla-fusion\"",
		"\"page\":\"ml-perf-triage\"",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_expect_not_null(strstr(json, want[i]), "payload lacks %s\n%s", want[i], json);
	if (getenv("PW_TEST_SHOW")) fprintf(stderr, "%s\n", json);
	free(json);
}

/* The watcher's shift first, then the gate's alerts and their changepoint part: still one event. */
Test(pager, late_range_merges_incidents)
{
	pw_pager_params p;
	pw_incident incs[4];
	size_t n = 0;
	pw_pager_params_default(&p);
	pw_finding parts[3];
	parts[0] = watcher_moe();
	parts[0].created_us = 999 * HOUR_US; /* the nightly shift was seen before the RC was gated */
	parts[1] = gate_b64();
	parts[2] = gate_b64();
	parts[2].revision = 2;
	cp(parts[2].cl_lo, sizeof parts[2].cl_lo, "cl/7841885");
	cp(parts[2].cl_hi, sizeof parts[2].cl_hi, "cl/7841923");
	parts[2].n_cls = 38;
	for (size_t i = 0; i < 3; i++) {
		long k = pw_incident_find(&p, incs, n, &parts[i]);
		if (k < 0) {
			char id[16];
			snprintf(id, sizeof id, "inc-%zu", n);
			pw_incident_open(&incs[n++], id, &parts[i]);
			k = (long)n - 1;
		} else {
			pw_incident_add(&incs[k], &parts[i]);
		}
		for (size_t j = 0; j < n; j++)
			if ((long)j != k && pw_incident_same_event(&incs[k], &incs[j])) {
				bool j_older = incs[j].opened_us <= incs[k].opened_us;
				pw_incident_absorb(j_older ? &incs[j] : &incs[k], j_older ? &incs[k] : &incs[j]);
			}
	}
	cr_assert_eq(n, 2, "the gate's alert opened its own incident before its range was known");
	size_t open = 0;
	for (size_t j = 0; j < n; j++)
		open += incs[j].open;
	cr_assert_eq(open, 1);
	pw_incident *inc = incs[0].open ? &incs[0] : &incs[1];
	cr_expect_str_eq(inc->incident_id, "inc-0", "the older incident survives");
	cr_expect_str_eq(inc->primary.alert_id, "perfreg-2026-06-18-00412", "the gate's BLOCKING alert leads");
	cr_expect_eq(inc->n_members, 2);
	cr_expect_eq(inc->n_scope, 1);
	cr_expect_str_eq(inc->scope[0], "rank-moe-110b/v6e-16/decode: +3.1%");
}

Test(pager, payload_before_parts_arrive_has_nulls)
{
	pw_pager_params p;
	pw_incident inc;
	pw_route r;
	pw_pager_params_default(&p);
	pw_finding f = gate_b64();
	pw_incident_open(&inc, "inc-2", &f);
	pw_route_decide(&p, &f, &r);
	char *json = pw_payload_json(&inc, &r, true);
	cr_assert_not_null(json);
	cr_expect_not_null(strstr(json, "\"changepoint\":null"));
	cr_expect_not_null(strstr(json, "\"bisection\":null"));
	cr_expect_not_null(strstr(json, "\"op_diff\":null"));
	cr_expect_not_null(strstr(json, "\"budget_pressure\":true"));
	free(json);
}

Test(pager, independent_events_are_separate_incidents)
{
	pw_pager_params p;
	pw_incident inc;
	pw_pager_params_default(&p);
	pw_finding a = gate_b64();
	pw_incident_open(&inc, "inc-a", &a);

	pw_finding other_family = gate_b64();
	cp(other_family.alert_id, sizeof other_family.alert_id, "x1");
	cp(other_family.model, sizeof other_family.model, "other-7b");
	cr_expect_not(pw_incident_matches(&p, &inc, &other_family));

	pw_finding other_release = gate_b64();
	cp(other_release.alert_id, sizeof other_release.alert_id, "x2");
	cp(other_release.release_id, sizeof other_release.release_id, "xla-rc-2026-06-24");
	cr_expect_not(pw_incident_matches(&p, &inc, &other_release));

	/* disjoint CL ranges do not group */
	pw_finding w1 = watcher_moe(), w2 = watcher_moe();
	pw_incident winc;
	pw_incident_open(&winc, "inc-w", &w1);
	cp(w2.alert_id, sizeof w2.alert_id, "x3");
	cp(w2.cl_lo, sizeof w2.cl_lo, "cl/7841923");
	cp(w2.cl_hi, sizeof w2.cl_hi, "cl/7841990");
	cr_expect_not(pw_incident_matches(&p, &winc, &w2));
	cp(w2.cl_lo, sizeof w2.cl_lo, "cl/7841900");
	cr_expect(pw_incident_matches(&p, &winc, &w2));

	/* too late: past the incident window */
	w2.created_us = winc.last_us + p.incident_window_us + 1;
	cr_expect_not(pw_incident_matches(&p, &winc, &w2));
	/* a closed incident takes nothing */
	w2.created_us = winc.last_us;
	winc.open = false;
	cr_expect_not(pw_incident_matches(&p, &winc, &w2));
}

Test(pager, fleet_change_groups_and_routes_to_infra)
{
	pw_pager_params p;
	pw_incident inc;
	pw_route r;
	pw_pager_params_default(&p);
	pw_finding a = watcher_moe();
	a.kind = PW_FIND_INFRA_HEALTH;
	cp(a.fleet_event_id, sizeof a.fleet_event_id, "fc-recable-07");
	cp(a.owner_hint, sizeof a.owner_hint, "xla-fusion"); /* a misleading hint never wins over infra */
	pw_incident_open(&inc, "inc-f", &a);
	pw_finding b = gate_b64();
	cp(b.alert_id, sizeof b.alert_id, "y1");
	cp(b.fleet_event_id, sizeof b.fleet_event_id, "fc-recable-07");
	cr_expect(pw_incident_matches(&p, &inc, &b));
	/* a finding without the fleet event does not join the fleet incident */
	pw_finding c = watcher_moe();
	cp(c.alert_id, sizeof c.alert_id, "y2");
	cr_expect_not(pw_incident_matches(&p, &inc, &c));

	pw_route_decide(&p, &a, &r);
	cr_expect_eq(r.owner, PW_OWNER_INFRA);
	cr_expect_eq(r.action, PW_ACT_INFO);
	cr_expect_str_eq(r.route, "perf-infra");
	cr_expect_str_neq(r.route, p.route_compiler);
	/* even a BLOCKING verdict behind a fleet change never pages the compiler rotation */
	b.verdict = PW_FV_BLOCKING;
	pw_route_decide(&p, &b, &r);
	cr_expect_str_neq(r.route, p.route_compiler);
	cr_expect_eq(r.owner, PW_OWNER_INFRA);
}

Test(pager, routing_follows_section_8)
{
	pw_pager_params p;
	pw_route r;
	pw_pager_params_default(&p);
	pw_finding f = gate_b64();

	f.verdict = PW_FV_P1;
	f.delta_pct = 1.8;
	pw_route_decide(&p, &f, &r);
	cr_expect_eq(r.action, PW_ACT_TICKET);

	f.verdict = PW_FV_TREND;
	pw_route_decide(&p, &f, &r);
	cr_expect_eq(r.action, PW_ACT_QUEUE);

	f.verdict = PW_FV_VALIDATED_WIN;
	f.kind = PW_FIND_IMPROVEMENT;
	f.delta_pct = -4;
	pw_route_decide(&p, &f, &r);
	cr_expect_eq(r.action, PW_ACT_INFO);
	cr_expect_str_eq(r.route, "xla-compiler");

	/* watcher shifts: by size, effect gate and tier; thresholds from params */
	f = watcher_moe();
	pw_route_decide(&p, &f, &r); /* +3.1% top tier >= 3 */
	cr_expect_eq(r.action, PW_ACT_PAGE);
	cr_expect_eq(r.severity, PW_SEV_HIGH);
	p.page_min_pct = 5;
	pw_route_decide(&p, &f, &r);
	cr_expect_eq(r.action, PW_ACT_TICKET);
	p.ticket_min_pct = 4;
	pw_route_decide(&p, &f, &r);
	cr_expect_eq(r.action, PW_ACT_QUEUE);
	pw_pager_params_default(&p);
	f.top_tier = false;
	pw_route_decide(&p, &f, &r);
	cr_expect_eq(r.action, PW_ACT_QUEUE, "tail tier pages nobody");
	f.top_tier = true;
	f.passed_min_effect = false;
	pw_route_decide(&p, &f, &r);
	cr_expect_eq(r.action, PW_ACT_QUEUE, "sub-MDE pages nobody");
}

Test(pager, owner_from_hint)
{
	pw_pager_params p;
	pw_pager_params_default(&p);
	pw_finding f = gate_b64();
	cr_expect_eq(pw_route_owner(&p, &f), PW_OWNER_UNSPECIFIED);
	cp(f.owner_hint, sizeof f.owner_hint, "xla-fusion");
	cr_expect_eq(pw_route_owner(&p, &f), PW_OWNER_COMPILER);
	cp(f.owner_hint, sizeof f.owner_hint, "model-chat");
	cr_expect_eq(pw_route_owner(&p, &f), PW_OWNER_MODEL);
	f.owner_hint[0] = '\0';
	cp(f.culprit, sizeof f.culprit, "cl/1");
	cr_expect_eq(pw_route_owner(&p, &f), PW_OWNER_COMPILER);
	cp(f.owner_hint, sizeof f.owner_hint, "infra");
	cr_expect_eq(pw_route_owner(&p, &f), PW_OWNER_INFRA, "the attributor's infra hint beats the culprit");
	f.owner_hint[0] = '\0';
	f.verdict = PW_FV_QUARANTINED;
	cr_expect_eq(pw_route_owner(&p, &f), PW_OWNER_INFRA);
}

/* Twelve independent top-tier regressions in one week: five page, the rest queue, each decision said. */
Test(pager, budget_twelve_regressions)
{
	pw_pager_params p;
	pw_budget_usage u = {0};
	pw_pager_params_default(&p);
	int paged = 0, queued = 0, pressured = 0;
	for (int i = 0; i < 12; i++) {
		pw_finding f = gate_b64();
		f.spend_pct = 0.1 + 0.05 * i; /* all below the 1% override */
		pw_budget_decision d;
		pw_budget_decide(&p, &u, &f, &d);
		cr_expect_neq(d.reason[0], '\0');
		if (d.page) {
			paged++;
			pressured += d.pressure;
			u.delivered++;
		} else {
			queued++;
			cr_expect_not_null(strstr(d.reason, "queued"), "%s", d.reason);
		}
	}
	cr_expect_eq(paged, 5);
	cr_expect_eq(queued, 7);
	cr_expect_eq(pressured, 3, "pages 3..5 of 5 say the budget is under pressure (0.6)");

	/* a high-spend finding still pages over budget, saying so */
	pw_finding big = gate_b64();
	big.spend_pct = 1.5;
	pw_budget_decision d;
	pw_budget_decide(&p, &u, &big, &d);
	cr_expect(d.page);
	cr_expect(d.pressure);

	/* true verdicts give budget back: the charge is pages not confirmed true */
	u.true_pages = 3;
	cr_expect_float_eq(pw_budget_used(&u), 2.0, 1e-12);
	pw_finding small = gate_b64();
	small.spend_pct = 0.1;
	pw_budget_decide(&p, &u, &small, &d);
	cr_expect(d.page);
	u.true_pages = 99; /* more verdicts than pages cannot go negative */
	cr_expect_float_eq(pw_budget_used(&u), 0.0, 1e-12);
}

/* An independent HMAC of the same message, to check the signature's definition. */
static void hmac_hex(const char *key, const char *msg, char out[65])
{
	unsigned char mac[32];
	unsigned int n = 0;
	HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)msg, strlen(msg), mac, &n);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
}

Test(pager, triage_links)
{
	const unsigned char key[] = "k3y-for-tests";
	size_t kl = sizeof key - 1;
	char sig[PW_LINK_SIG_HEX], ref[65];
	cr_assert_eq(pw_link_sign(key, kl, "pg-1", "false", 2000, sig), PW_OK);
	hmac_hex("k3y-for-tests", "perfwatch-triage\npg-1\nfalse\n2000", ref);
	cr_expect_str_eq(sig, ref);
	/* RFC 4231 test case 2 checks the HMAC itself */
	hmac_hex("Jefe", "what do ya want for nothing?", ref);
	cr_expect_str_eq(ref, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

	cr_expect_eq(pw_link_verify(key, kl, "pg-1", "false", 2000, sig, 1999), PW_LINK_OK);
	cr_expect_eq(pw_link_verify(key, kl, "pg-1", "false", 2000, sig, 2000), PW_LINK_EXPIRED);
	cr_expect_eq(pw_link_verify(key, kl, "pg-1", "true", 2000, sig, 1), PW_LINK_TAMPERED);
	cr_expect_eq(pw_link_verify(key, kl, "pg-2", "false", 2000, sig, 1), PW_LINK_TAMPERED);
	cr_expect_eq(pw_link_verify(key, kl, "pg-1", "false", 999999, sig, 1), PW_LINK_TAMPERED,
	             "a stretched expiry is a tampered link");
	char bad[PW_LINK_SIG_HEX];
	memcpy(bad, sig, sizeof bad);
	bad[10] = bad[10] == 'a' ? 'b' : 'a';
	cr_expect_eq(pw_link_verify(key, kl, "pg-1", "false", 2000, bad, 1), PW_LINK_TAMPERED);
	cr_expect_eq(pw_link_verify(key, kl, "pg-1", "false", 2000, "abc", 1), PW_LINK_MALFORMED);
	const unsigned char other[] = "another-key";
	cr_expect_eq(pw_link_verify(other, sizeof other - 1, "pg-1", "false", 2000, sig, 1),
	             PW_LINK_TAMPERED);
	cr_expect_eq(pw_link_sign(key, 0, "pg-1", "view", 1, sig), PW_ERR_INVALID);

	char path[256];
	cr_assert_eq(pw_link_path(key, kl, "pg-2026-06-18-0001", "view", 2000, path, sizeof path), PW_OK);
	cr_assert_eq(pw_link_sign(key, kl, "pg-2026-06-18-0001", "view", 2000, sig), PW_OK);
	char want_path[256];
	snprintf(want_path, sizeof want_path, "/triage?page=pg-2026-06-18-0001&action=view&exp=2000&sig=%s", sig);
	cr_expect_str_eq(path, want_path, "the link the triage page serves");
	cr_expect_eq(pw_link_path(key, kl, "pg/../x", "view", 2000, path, sizeof path), PW_ERR_INVALID);
	cr_expect_eq(pw_link_path(key, kl, "pg-1", "view", 2000, path, 20), PW_ERR_INVALID);
}

Test(pager, config_keys)
{
	size_t n;
	char err[256];
	pw_pager_params p;
	const pw_conf_key *k = pw_pager_config_keys(&n);
	pw_config *cfg = pw_config_new("pager", k, n, err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	cr_assert_eq(pw_pager_params_from_config(cfg, &p, err, sizeof err), PW_OK, "%s", err);
	pw_pager_params d;
	pw_pager_params_default(&d);
	cr_expect_float_eq(p.budget_per_week, d.budget_per_week, 1e-12);
	cr_expect_float_eq(p.page_min_pct, d.page_min_pct, 1e-12);
	cr_expect_eq(p.incident_window_us, d.incident_window_us);
	cr_expect_str_eq(p.route_infra, d.route_infra);
	cr_assert_eq(pw_config_set(cfg, "pager.route.infra", "xla-compiler", "test", err, sizeof err), PW_OK, "%s", err);
	cr_expect_eq(pw_pager_params_from_config(cfg, &p, err, sizeof err), PW_ERR_CONFIG);
	cr_assert_eq(pw_config_set(cfg, "pager.route.infra", "perf-infra", "test", err, sizeof err), PW_OK);
	cr_assert_eq(pw_config_set(cfg, "pager.ticket_min_pct", "4", "test", err, sizeof err), PW_OK, "%s", err);
	cr_expect_eq(pw_pager_params_from_config(cfg, &p, err, sizeof err), PW_ERR_CONFIG);
	pw_config_free(cfg);
}

/* The gate raises every metric of a regressed config: cost/token moves a little more than TPOT. */
static pw_finding gate_metric(pw_finding f, const char *metric, double pct, const char *id)
{
	cp(f.alert_id, sizeof f.alert_id, id);
	char key[2 * PW_PAGER_STR];
	snprintf(key, sizeof key, "chat-8b|hlo:9f31c2|v6e-4|%s|%s", f.config, metric);
	cp(f.series_key, sizeof f.series_key, key);
	cp(f.metric, sizeof f.metric, metric);
	f.delta_pct = pct;
	return f;
}

/*
 * Regression (seen on the stack): the page led with "COST +8.2%" and listed
 * the primary's own config and B8's cost line as correlated. The headline is
 * the median latency; one scope line per other config, of the primary's metric.
 */
Test(incident, headline_metric_and_one_scope_line_per_config)
{
	pw_pager_params p;
	pw_pager_params_default(&p);
	pw_finding b64 = gate_b64(), b8 = gate_b8();
	pw_finding in[] = {
		gate_metric(b64, "cost_per_mtok_usd", 8.4, "a1"), gate_metric(b8, "goodput_tok_s_chip", -7.1, "a2"),
		gate_metric(b8, "cost_per_mtok_usd", 7.7, "a3"), b64, gate_metric(b64, "mfu", -7.6, "a4"), b8,
		gate_metric(b8, "tpot_p99_ms", 7.9, "a5"),
	};
	pw_incident inc;
	pw_incident_open(&inc, "inc-1", &in[0]);
	for (size_t i = 1; i < sizeof in / sizeof in[0]; i++) {
		cr_assert_eq(pw_incident_find(&p, &inc, 1, &in[i]), 0);
		pw_incident_add(&inc, &in[i]);
	}
	char s[256];
	pw_incident_summary(&inc, s, sizeof s);
	cr_expect_str_eq(s, "chat-8b v6e-4 TPOT +8.2% BLOCKING");
	cr_assert_eq(inc.n_scope, 1, "scope: %zu entries, first \"%s\"", inc.n_scope, inc.scope[0]);
	cr_expect_str_eq(inc.scope[0], "chat-8b/v6e-4/decode.B8: +7.4%");
}

/*
 * Regression (seen on the stack): another series' attribution arrived first
 * and its owner hint became the page's. Only the primary's own parts name
 * its owner and artifacts.
 */
Test(incident, owner_hint_from_the_primary_series_only)
{
	pw_pager_params p;
	pw_pager_params_default(&p);
	pw_finding b64 = gate_b64(), b8 = gate_b8();
	pw_incident inc;
	pw_incident_open(&inc, "inc-1", &b64);
	pw_incident_add(&inc, &b8);
	pw_finding at8, at64;
	memset(&at8, 0, sizeof at8);
	cp(at8.alert_id, sizeof at8.alert_id, b8.alert_id);
	cp(at8.series_key, sizeof at8.series_key, b8.series_key);
	cp(at8.owner_hint, sizeof at8.owner_hint, "infra");
	at8.created_us = b8.created_us + 10;
	at64 = at8;
	cp(at64.alert_id, sizeof at64.alert_id, b64.alert_id);
	cp(at64.series_key, sizeof at64.series_key, b64.series_key);
	cp(at64.owner_hint, sizeof at64.owner_hint, "compiler");
	cr_assert_eq(pw_incident_find(&p, &inc, 1, &at8), 0);
	pw_incident_add(&inc, &at8);
	cr_expect_str_eq(inc.primary.owner_hint, "");
	pw_incident_add(&inc, &at64);
	cr_expect_str_eq(inc.primary.owner_hint, "compiler");
}

/* registered-win's release: code-34b +5.1% BLOCKING (expired waiver), every metric of its config raised. */
static pw_finding code34b(const char *metric, double pct, const char *id)
{
	pw_finding f = gate_b64();
	cp(f.model, sizeof f.model, "code-34b");
	cp(f.hlo_fingerprint, sizeof f.hlo_fingerprint, "hlo:72f0f1a6");
	f = gate_metric(f, metric, pct, id);
	char key[2 * PW_PAGER_STR];
	snprintf(key, sizeof key, "code-34b|hlo:72f0f1a6|v6e-4|%s|%s", f.config, metric);
	cp(f.series_key, sizeof f.series_key, key);
	f.n_clean = 0;
	cp(f.cl_lo, sizeof f.cl_lo, "cl/7841657");
	cp(f.cl_hi, sizeof f.cl_hi, "cl/7841923");
	return f;
}

/*
 * Regression (registered-win on the stack): the page of code-34b's BLOCKING
 * regression led with a win's or a non-headline line, listed rank-moe-110b's
 * unregistered improvement (same RC, same CL range) among its alerts, and the
 * attributor's "infra" hint turned the BLOCKING page into an info notice to
 * infra although the bisector verified the culprit CL on both sides. The
 * page's headline is the regression that pages; a win is its own incident.
 */
Test(incident, registered_win_page_leads_with_the_regression)
{
	pw_pager_params p;
	pw_pager_params_default(&p);
	pw_finding win = code34b("tpot_p50_ms", -4.1, "moe-tpot"); /* the unregistered win: INVESTIGATE */
	cp(win.model, sizeof win.model, "rank-moe-110b");
	cp(win.series_key, sizeof win.series_key, "rank-moe-110b|hlo:09|v6e-4|decode.B64.s2048.int8|tpot_p50_ms");
	win.kind = PW_FIND_IMPROVEMENT;
	win.verdict = PW_FV_INVESTIGATE;
	pw_finding hbm_win = win;
	cp(hbm_win.alert_id, sizeof hbm_win.alert_id, "moe-hbm");
	cp(hbm_win.metric, sizeof hbm_win.metric, "hbm_bw_util");
	hbm_win.delta_pct = 4.2;
	pw_finding validated = win; /* a validated win with a larger effect than the regression */
	cp(validated.alert_id, sizeof validated.alert_id, "chat8b-hbm");
	cp(validated.model, sizeof validated.model, "chat-8b");
	validated.verdict = PW_FV_VALIDATED_WIN;
	validated.delta_pct = -9.0;
	pw_finding in[] = {
		win,
		code34b("cost_per_mtok_usd", 5.1, "c-cost"),
		code34b("hbm_bw_util", -4.9, "c-hbm"),
		hbm_win,
		validated,
		code34b("tpot_p50_ms", 5.1, "c-tpot"),
		code34b("mfu", -4.8, "c-mfu"),
	};
	pw_incident incs[8];
	size_t n = 0;
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		long j = pw_incident_find(&p, incs, n, &in[i]);
		if (j < 0)
			pw_incident_open(&incs[n++], in[i].alert_id, &in[i]);
		else
			pw_incident_add(&incs[j], &in[i]);
	}
	cr_assert_eq(n, 2, "the wins and the regression are two incidents, not %zu", n);
	pw_incident *reg = &incs[1], *wins = &incs[0];
	cr_assert_str_eq(reg->incident_id, "c-cost");
	for (size_t i = 0; i < reg->n_members; i++)
		cr_expect(strncmp(reg->members[i], "c-", 2) == 0, "a win among the page's alerts: %s", reg->members[i]);
	cr_expect_eq(reg->n_members, 4);
	for (size_t i = 0; i < wins->n_members; i++)
		cr_expect(strncmp(wins->members[i], "c-", 2) != 0, "a regression among the wins: %s", wins->members[i]);
	cr_expect(!pw_incident_same_event(reg, wins));

	/* the bisection (done, verified both sides) and the attributor's infra hint */
	pw_finding bis, at;
	memset(&bis, 0, sizeof bis);
	cp(bis.alert_id, sizeof bis.alert_id, "c-tpot");
	cp(bis.series_key, sizeof bis.series_key, in[5].series_key);
	cp(bis.bisect_status, sizeof bis.bisect_status, "done");
	cp(bis.culprit, sizeof bis.culprit, "cl/7841905");
	bis.verified_adjacent_clean = bis.cherry_pick_reproduced = true;
	bis.created_us = in[5].created_us + 10;
	at = bis;
	memset(at.bisect_status, 0, sizeof at.bisect_status);
	memset(at.culprit, 0, sizeof at.culprit);
	at.verified_adjacent_clean = at.cherry_pick_reproduced = false;
	cp(at.owner_hint, sizeof at.owner_hint, "infra");
	cr_assert_eq(pw_incident_find(&p, incs, n, &at), 1);
	pw_incident_add(reg, &at);
	cr_assert_eq(pw_incident_find(&p, incs, n, &bis), 1);
	pw_incident_add(reg, &bis);

	char s[256];
	pw_incident_summary(reg, s, sizeof s);
	cr_expect_str_eq(s, "code-34b v6e-4 TPOT +5.1% BLOCKING, culprit cl/7841905");
	pw_route r;
	pw_route_decide(&p, &reg->primary, &r);
	cr_expect_eq(r.action, PW_ACT_PAGE, "the BLOCKING regression pages (action %s)", pw_action_name(r.action));
	cr_expect_eq(r.severity, PW_SEV_CRITICAL);
	cr_expect_str_eq(r.route, "ml-perf-triage");
	cr_expect_eq(r.owner, PW_OWNER_COMPILER, "the verified culprit is the compiler's");
	char *json = pw_payload_json(reg, &r, false);
	cr_assert(json);
	cr_expect(strstr(json, "\"verdict\":\"BLOCKING\""), "%s", json);
	cr_expect(strstr(json, "\"metric\":\"tpot_p50_ms\""), "%s", json);
	cr_expect(!strstr(json, "moe-") && !strstr(json, "chat8b-"), "a win in the page's payload: %s", json);
	free(json);

	/* without a verified culprit, the infra hint still pages the triage rotation, owner infra */
	pw_finding f = in[5];
	cp(f.owner_hint, sizeof f.owner_hint, "infra");
	pw_route_decide(&p, &f, &r);
	cr_expect_eq(r.action, PW_ACT_PAGE);
	cr_expect_eq(r.owner, PW_OWNER_INFRA);
	cr_expect_str_eq(r.route, "ml-perf-triage");
	/* a nightly shift the attributor calls infra's (recabling without the fleet change on the alert): info to infra */
	f = watcher_moe();
	cp(f.owner_hint, sizeof f.owner_hint, "infra");
	pw_route_decide(&p, &f, &r);
	cr_expect_eq(r.action, PW_ACT_INFO, "an infra nightly shift is a %s", pw_action_name(r.action));
	cr_expect_str_eq(r.route, "perf-infra");

	/* the wins' incident heads with no regression and is routed as what it is */
	pw_route_decide(&p, &wins->primary, &r);
	cr_expect_neq(r.action, PW_ACT_PAGE);
}

/* The baseliner's unconfirmed first signal (ALERT_KIND_UNCONFIRMED): no CL range, no release. */
static pw_finding first_signal(const char *model, const char *config, const char *metric, double pct, int i)
{
	pw_finding f = gate_b64();
	snprintf(f.alert_id, sizeof f.alert_id, "bl-outlier/%d/%s-%s", i, model, metric);
	f.from_gate = false;
	f.first_signal = true;
	f.verdict = PW_FV_INVESTIGATE;
	cp(f.model, sizeof f.model, model);
	cp(f.config, sizeof f.config, config);
	cp(f.metric, sizeof f.metric, metric);
	snprintf(f.series_key, sizeof f.series_key, "%s|h|v6e-4|%s|%s", model, config, metric);
	f.delta_pct = pct;
	f.release_id[0] = '\0';
	f.obs_release[0] = '\0';
	f.n_clean = 0;
	f.created_us = 990 * HOUR_US + i * 1000;
	return f;
}

/*
 * Regression (make demo): the first signals of the worked example's nightly
 * opened about 30 ticket incidents, one per series and metric. They are the
 * first sign of their family's event: one queued incident per family, folded
 * into the confirmed event when it opens, without changing its page.
 */
Test(incident, first_signals_join_their_event)
{
	pw_pager_params p;
	pw_pager_params_default(&p);
	static const char *const metrics[] = {"tpot_p50_ms", "tpot_p99_ms", "goodput_tok_s_chip", "mfu", "cost_per_mtok_usd"};
	pw_incident incs[32];
	size_t n = 0;
	int id = 0;
	for (int c = 0; c < 2; c++)
		for (size_t m = 0; m < 5; m++) {
			pw_finding f = first_signal(m % 2 ? "rank-moe-110b" : "chat-8b", c ? "decode.B8" : "decode.B64.s2048.int8",
			                            metrics[m], 8.1 - m, id++);
			pw_finding g = first_signal(m % 2 ? "chat-8b" : "rank-moe-110b", "decode.B64.s2048.int8", metrics[m], 3.1,
			                            id++);
			pw_finding both[] = {f, g};
			for (int b = 0; b < 2; b++) {
				long j = pw_incident_find(&p, incs, n, &both[b]);
				if (j < 0)
					pw_incident_open(&incs[n++], both[b].alert_id, &both[b]);
				else
					pw_incident_add(&incs[j], &both[b]);
			}
		}
	cr_assert_eq(n, 2, "20 first signals of two families: 2 incidents, not %zu", n);
	pw_route r;
	pw_route_decide(&p, &incs[0].primary, &r);
	cr_expect_eq(r.action, PW_ACT_QUEUE, "a first signal is queued for confirmation, not a %s", pw_action_name(r.action));
	cr_expect(strstr(r.reason, "unconfirmed first signal"), "%s", r.reason);

	/* the confirmed event: the gate's BLOCKING alert opens its own incident; the first signals fold in */
	pw_finding g64 = gate_b64();
	g64.created_us = 1000 * HOUR_US;
	cr_assert_eq(pw_incident_find(&p, incs, n, &g64), -1, "a confirmed finding does not join a first-signal incident");
	pw_incident_open(&incs[n++], "inc-gate", &g64);
	pw_incident *conf = &incs[2], *chat = strcmp(incs[0].family, "chat-8b") == 0 ? &incs[0] : &incs[1];
	char before[256], after[256];
	pw_incident_summary(conf, before, sizeof before);
	cr_assert(pw_incident_same_event(conf, chat));
	cr_expect(!pw_incident_same_event(conf, chat == &incs[0] ? &incs[1] : &incs[0]), "another family's first signals");
	size_t scope = conf->n_scope;
	int64_t opened = conf->opened_us;
	cr_expect(!pw_incident_absorb(conf, chat), "folding the first signals changed the page");
	pw_incident_summary(conf, after, sizeof after);
	cr_expect_str_eq(after, before);
	cr_expect_eq(conf->n_scope, scope);
	cr_expect_eq(conf->opened_us, opened);
	cr_expect_eq(conf->n_members, 11, "the page's alert and its 10 first signals: %zu", conf->n_members);
	cr_expect(!chat->open);
	/* a later first signal of the family joins the confirmed incident quietly */
	pw_finding late = first_signal("chat-8b", "decode.B8", "tpot_p50_ms", 7.4, 99);
	late.created_us = 1001 * HOUR_US;
	cr_assert_eq(pw_incident_find(&p, incs, n, &late), 2);
	cr_expect(!pw_incident_add(conf, &late));
	cr_expect_str_eq(conf->primary.alert_id, g64.alert_id);
}

/*
 * Regression (the fault harness, tests/faults): the page's owner was the first
 * hint to arrive, so a kill -9 of the pager that let the bisection's part in
 * before the attribution paged "xla-fusion" (the culprit CL's author) where
 * the uninterrupted run paged "compiler" (the attribution's). The attribution's
 * hint wins in either order; the bisection's stands only while it is alone.
 */
Test(incident, owner_hint_attribution_over_bisection_in_either_order)
{
	pw_finding b64 = gate_b64();
	pw_finding bis, att;
	memset(&bis, 0, sizeof bis);
	cp(bis.alert_id, sizeof bis.alert_id, b64.alert_id);
	cp(bis.series_key, sizeof bis.series_key, b64.series_key);
	cp(bis.bisect_status, sizeof bis.bisect_status, "done");
	cp(bis.culprit, sizeof bis.culprit, "cl/7841917");
	cp(bis.owner_hint, sizeof bis.owner_hint, "xla-fusion");
	bis.owner_from_bisection = true;
	bis.created_us = b64.created_us + 10;
	memset(&att, 0, sizeof att);
	cp(att.alert_id, sizeof att.alert_id, b64.alert_id);
	cp(att.series_key, sizeof att.series_key, b64.series_key);
	cp(att.owner_hint, sizeof att.owner_hint, "compiler");
	att.created_us = b64.created_us + 20;

	pw_incident a, b;
	pw_incident_open(&a, "inc-1", &b64);
	pw_incident_add(&a, &bis);
	cr_expect_str_eq(a.primary.owner_hint, "xla-fusion", "the bisection's owner while it is alone");
	pw_incident_add(&a, &att);
	cr_expect_str_eq(a.primary.owner_hint, "compiler");
	pw_incident_add(&a, &bis); /* redelivered */
	cr_expect_str_eq(a.primary.owner_hint, "compiler");

	pw_incident_open(&b, "inc-1", &b64);
	pw_incident_add(&b, &att);
	pw_incident_add(&b, &bis);
	cr_expect_str_eq(b.primary.owner_hint, "compiler");
	cr_expect_str_eq(b.primary.culprit, "cl/7841917");
}

/* A gate finding of the event of one RC: family, metric, config, change, fleet spend share. */
static pw_finding rc_finding(const char *id, const char *model, const char *config, const char *metric,
                             double pct, double share, pw_find_verdict v)
{
	pw_finding f = gate_b64();
	cp(f.alert_id, sizeof f.alert_id, id);
	cp(f.model, sizeof f.model, model);
	cp(f.config, sizeof f.config, config);
	cp(f.metric, sizeof f.metric, metric);
	snprintf(f.series_key, sizeof f.series_key, "%s|hlo:1|v6e-4|%s|%s", model, config, metric);
	f.delta_pct = pct;
	f.spend_pct = share * (pct < 0 ? -pct : pct);
	f.verdict = v;
	f.n_clean = 0;
	cp(f.cl_lo, sizeof f.cl_lo, "cl/7841885");
	cp(f.cl_hi, sizeof f.cl_hi, "cl/7841923");
	return f;
}

/*
 * The headline of an event is its largest spend-weighted finding and does not
 * depend on the order the findings arrive in: the worked example's RC
 * (chat-8b, 7.8% of fleet spend, TPOT +8.2%; rank-moe-110b, 5%, MFU -3.3% and
 * TPOT p99 +3.0%) with a tail model whose TPOT moved more (+12%) on 1% of the
 * spend, in 200 orders. Before, the larger change won (the tail model's
 * headline), and the incident's opener kept the family.
 */
Test(incident, headline_is_the_largest_spend_weighted_finding_in_any_order)
{
	pw_finding fs[] = {
		rc_finding("gate-rc-e1-s10", "chat-8b", "decode.B64", "tpot_p50_ms", 8.2, 0.078, PW_FV_BLOCKING),
		rc_finding("gate-rc-e1-s15", "chat-8b", "decode.B64", "cost_per_mtok_usd", 8.2, 0.078, PW_FV_BLOCKING),
		rc_finding("gate-rc-e1-s12", "chat-8b", "decode.B64", "goodput_tok_s_chip", -7.6, 0.078, PW_FV_BLOCKING),
		rc_finding("gate-rc-e1-s78", "chat-8b", "decode.B8", "tpot_p50_ms", 7.4, 0.078, PW_FV_BLOCKING),
		rc_finding("gate-rc-e1-s14", "chat-8b", "decode.B64", "hbm_bw_util", -1.6, 0.078, PW_FV_P1),
		rc_finding("gate-rc-e1-s29", "rank-moe-110b", "decode.B8", "mfu", -3.3, 0.05, PW_FV_BLOCKING),
		rc_finding("gate-rc-e1-s27", "rank-moe-110b", "decode.B8", "tpot_p99_ms", 3.0, 0.05, PW_FV_BLOCKING),
		rc_finding("gate-rc-e1-s90", "tail-13b", "decode.B8", "tpot_p50_ms", 12.0, 0.01, PW_FV_BLOCKING),
	};
	const size_t n = sizeof fs / sizeof fs[0];
	pw_pager_params p;
	pw_pager_params_default(&p);
	char want[256] = "";
	uint32_t seed = 17;
	for (int round = 0; round < 200; round++) {
		size_t order[sizeof fs / sizeof fs[0]];
		for (size_t i = 0; i < n; i++)
			order[i] = i;
		for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates with a fixed LCG: the same 200 orders every run */
			seed = seed * 1664525u + 1013904223u;
			size_t j = (seed >> 8) % (i + 1), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		pw_incident *inc = calloc(1, sizeof *inc);
		cr_assert_not_null(inc);
		pw_incident_open(inc, "inc-rc", &fs[order[0]]);
		for (size_t i = 1; i < n; i++) {
			cr_assert_eq(pw_incident_find(&p, inc, 1, &fs[order[i]]), 0, "one event");
			pw_incident_add(inc, &fs[order[i]]);
		}
		char summary[256];
		pw_incident_summary(inc, summary, sizeof summary);
		cr_expect_str_eq(inc->primary.alert_id, "gate-rc-e1-s10", "round %d (first %s): headline %s", round,
		                 fs[order[0]].alert_id, summary);
		cr_expect_str_eq(summary, "chat-8b v6e-4 TPOT +8.2% BLOCKING", "round %d", round);
		cr_expect_float_eq(inc->primary.spend_pct, 0.078 * 8.2, 1e-12, "the headline keeps its own spend");
		cr_expect_float_eq(inc->spend_pct, 0.078 * 8.2, 1e-12, "the event's largest spend-weighted impact");
		cr_expect_eq(inc->n_members, n);
		size_t gate = 0;
		for (size_t i = 0; i < inc->n_members; i++)
			gate += inc->gate_members >> i & 1;
		cr_expect_eq(gate, n, "every member is marked a gate alert");
		if (!want[0])
			cp(want, sizeof want, summary);
		cr_expect_str_eq(summary, want, "the same headline in every order");
		free(inc);
	}
	/* the order itself: spend before the size of the change, the metric's rank before spend */
	cr_expect_gt(pw_incident_headline_cmp(&fs[0], &fs[7]), 0, "7.8%% x 8.2 over 1%% x 12");
	cr_expect_gt(pw_incident_headline_cmp(&fs[0], &fs[1]), 0, "TPOT over the cost it derives from");
	cr_expect_lt(pw_incident_headline_cmp(&fs[4], &fs[5]), 0, "BLOCKING over P1");
	cr_expect_eq(pw_incident_headline_cmp(&fs[0], &fs[0]), 0);
	pw_finding twin = fs[3];
	cp(twin.alert_id, sizeof twin.alert_id, "gate-rc-e1-s77");
	cr_expect_lt(pw_incident_headline_cmp(&fs[3], &twin), 0, "a tie goes to the smaller alert id, in either order");
	cr_expect_gt(pw_incident_headline_cmp(&twin, &fs[3]), 0);
}

/*
 * A link signs every parameter that changes what a verdict records: an owner
 * or a triager added to a signed link, or changed, is a tampered link (before,
 * owner and by were outside the signature: one link recorded a verdict per
 * owner and flipped the routing). A link without them signs as before.
 * Checked against an HMAC computed here, independently of payload.c.
 */
Test(triage, links_sign_owner_and_triager)
{
	const unsigned char key[] = "k3y-for-tests";
	size_t kl = sizeof key - 1;
	char sig[PW_LINK_SIG_HEX], ref[65];
	cr_assert_eq(pw_link_sign_with(key, kl, "pg-1", "true", "compiler", "alice", 2000, sig), PW_OK);
	hmac_hex("k3y-for-tests", "perfwatch-triage\npg-1\ntrue\n2000\nowner=compiler\nby=alice", ref);
	cr_expect_str_eq(sig, ref);
	cr_expect_eq(pw_link_verify_with(key, kl, "pg-1", "true", "compiler", "alice", 2000, sig, 1), PW_LINK_OK);
	cr_expect_eq(pw_link_verify_with(key, kl, "pg-1", "true", "model", "alice", 2000, sig, 1), PW_LINK_TAMPERED,
	             "another owner");
	cr_expect_eq(pw_link_verify_with(key, kl, "pg-1", "true", "compiler", "mallory", 2000, sig, 1), PW_LINK_TAMPERED,
	             "another triager");
	cr_expect_eq(pw_link_verify_with(key, kl, "pg-1", "true", NULL, NULL, 2000, sig, 1), PW_LINK_TAMPERED,
	             "owner and triager taken off");
	char plain[PW_LINK_SIG_HEX];
	cr_assert_eq(pw_link_sign(key, kl, "pg-1", "true", 2000, plain), PW_OK);
	hmac_hex("k3y-for-tests", "perfwatch-triage\npg-1\ntrue\n2000", ref);
	cr_expect_str_eq(plain, ref, "a link without owner and triager signs as before");
	cr_expect_eq(pw_link_verify_with(key, kl, "pg-1", "true", "", "", 2000, plain, 1), PW_LINK_OK);
	cr_expect_eq(pw_link_verify_with(key, kl, "pg-1", "true", "model", NULL, 2000, plain, 1), PW_LINK_TAMPERED,
	             "an owner added to a signed link");
	cr_expect_eq(pw_link_verify_with(key, kl, "pg-1", "true", NULL, "x", 2000, plain, 1), PW_LINK_TAMPERED,
	             "a triager added to a signed link");
	cr_expect_eq(pw_link_sign_with(key, kl, "pg-1", "true", "compiler\nby=x", NULL, 2000, sig), PW_ERR_INVALID,
	             "a newline could forge the fields");
	cr_expect_eq(pw_link_verify_with(key, kl, "pg-1", "true", NULL, "a\nb", 2000, plain, 1), PW_LINK_MALFORMED);
}

/*
 * The verdict form's tokens: one per (page, outcome, owner, expiry, nonce),
 * each with the CSRF token bound to it; any field changed is tampered, a
 * token of another showing of the page (nonce) does not fit, a CSRF token of
 * another token is refused, and the expiry holds.
 */
Test(triage, verdict_and_csrf_tokens)
{
	const unsigned char key[] = "k3y-for-tests";
	size_t kl = sizeof key - 1;
	const char *nonce = "0123456789abcdef0123456789abcdef";
	char t[PW_LINK_SIG_HEX], ref[65], c[PW_LINK_SIG_HEX], c2[PW_LINK_SIG_HEX], t2[PW_LINK_SIG_HEX];
	cr_assert_eq(pw_verdict_sign(key, kl, "pg-1", "true", "compiler", 2000, nonce, t), PW_OK);
	hmac_hex("k3y-for-tests", "perfwatch-triage-verdict\npg-1\ntrue\ncompiler\n2000\n0123456789abcdef0123456789abcdef", ref);
	cr_expect_str_eq(t, ref);
	cr_expect_eq(pw_verdict_verify(key, kl, "pg-1", "true", "compiler", 2000, nonce, t, 1999), PW_LINK_OK);
	cr_expect_eq(pw_verdict_verify(key, kl, "pg-1", "true", "compiler", 2000, nonce, t, 2000), PW_LINK_EXPIRED);
	cr_expect_eq(pw_verdict_verify(key, kl, "pg-1", "true", "model", 2000, nonce, t, 1), PW_LINK_TAMPERED, "owner");
	cr_expect_eq(pw_verdict_verify(key, kl, "pg-1", "false", "compiler", 2000, nonce, t, 1), PW_LINK_TAMPERED,
	             "outcome");
	cr_expect_eq(pw_verdict_verify(key, kl, "pg-2", "true", "compiler", 2000, nonce, t, 1), PW_LINK_TAMPERED, "page");
	cr_expect_eq(pw_verdict_verify(key, kl, "pg-1", "true", "compiler", 3000, nonce, t, 1), PW_LINK_TAMPERED,
	             "a stretched expiry");
	cr_expect_eq(pw_verdict_verify(key, kl, "pg-1", "true", "compiler", 2000, "ffff", t, 1), PW_LINK_TAMPERED,
	             "another showing's nonce");
	cr_expect_eq(pw_verdict_verify(key, kl, "pg-1", "true", "compiler", 2000, nonce, "abc", 1), PW_LINK_MALFORMED);
	cr_assert_eq(pw_csrf_sign(key, kl, t, c), PW_OK);
	hmac_hex("k3y-for-tests", "perfwatch-triage-csrf\n", ref); /* (not it: the token is part of the message) */
	cr_expect_str_neq(c, ref);
	char msg[128];
	snprintf(msg, sizeof msg, "perfwatch-triage-csrf\n%s", t);
	hmac_hex("k3y-for-tests", msg, ref);
	cr_expect_str_eq(c, ref);
	cr_expect(pw_csrf_verify(key, kl, t, c));
	cr_assert_eq(pw_verdict_sign(key, kl, "pg-1", "true", "model", 2000, nonce, t2), PW_OK);
	cr_assert_eq(pw_csrf_sign(key, kl, t2, c2), PW_OK);
	cr_expect_not(pw_csrf_verify(key, kl, t, c2), "the CSRF token of another choice");
	cr_expect_not(pw_csrf_verify(key, kl, t, NULL));
	cr_expect_not(pw_csrf_verify(key, kl, t, "short"));
	const unsigned char other[] = "another-key";
	cr_expect_not(pw_csrf_verify(other, sizeof other - 1, t, c));
}

/* Who recorded a verdict: a login or an address, nothing markup or a log could read as syntax. */
Test(triage, triager_and_owner_validated)
{
	const char *good[] = {"alice", "a", "alice.b-c_d", "oncall+perf@example.com", "0xdead"};
	const char *bad[] = {"", "<img src=x onerror=alert(1)>", "alice bob", "\"alice\"", "alice\n", "-alice", ".x",
	                     "a&b", "a;b", "a/b", "caf\xc3\xa9", "a'b"};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		cr_expect(pw_triager_ok(good[i]), "%s", good[i]);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_expect_not(pw_triager_ok(bad[i]), "%s", bad[i]);
	char longest[66];
	memset(longest, 'a', 64);
	longest[64] = 0;
	cr_expect(pw_triager_ok(longest));
	longest[64] = 'a';
	longest[65] = 0;
	cr_expect_not(pw_triager_ok(longest), "65 bytes");
	cr_expect_not(pw_triager_ok(NULL));
	cr_expect(pw_triage_owner_ok("compiler") && pw_triage_owner_ok("model") && pw_triage_owner_ok("infra") &&
	          pw_triage_owner_ok("unspecified"));
	cr_expect_not(pw_triage_owner_ok("Compiler"));
	cr_expect_not(pw_triage_owner_ok(""));
	cr_expect_not(pw_triage_owner_ok(NULL));
}
