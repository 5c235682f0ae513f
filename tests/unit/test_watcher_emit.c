/*
 * test_watcher_emit.c: the watcher's decisions around watch.c — messages of
 * an event (services/watcher/watch_emit.c), fleet-change selectors, point order,
 * the series table (watch_table.c), the configuration (watch_config.c) and
 * watch.c's placement of a shift on a build boundary when a build has
 * several points. test_watch.c covers the per-series detection itself.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "watch_emit.h"
#include "pw_config.h"
#include "watch_table.h"
#include "watch.h"
#include "watch_config.h"

#define DAY_US (86400LL * 1000000LL)
#define T0_US (1781654400LL * 1000000LL) /* 2026-06-17T00:00:00Z */

static pw_watch_build build(const char *id, int64_t cl, int64_t ts_us)
{
	pw_watch_build b;
	memset(&b, 0, sizeof b);
	snprintf(b.build_id, sizeof b.build_id, "%s", id);
	snprintf(b.cl, sizeof b.cl, "cl/%lld", (long long)cl);
	b.cl_number = cl;
	b.ts_us = ts_us;
	return b;
}

/* The worked example's event as watch.c would describe it (§7 artifact 3). */
static pw_watch_event worked_event(void)
{
	pw_watch_event ev;
	memset(&ev, 0, sizeof ev);
	ev.cp.index = 36;
	ev.cp.before = 3.90;
	ev.cp.after = 4.22;
	ev.level_before = 3.90; /* no registered change: as measured */
	ev.level_after = 4.22;
	ev.cp.rel_change = 0.32 / 3.90;
	ev.cp.p = 1e-9;
	ev.cp.noise = 0.017;
	ev.regression = true;
	ev.last_clean = build("xla-nightly-2026-06-16", 7841885, T0_US - DAY_US + 12 * 3600000000LL);
	ev.first_shifted = build("xla-nightly-2026-06-17", 7841923, T0_US + 12 * 3600000000LL);
	ev.routing = PW_WATCH_ROUTE_PAGE;
	return ev;
}

static const char *KEY = "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms";

Test(watcher_emit, worked_example_messages_carry_day_cl_range_and_page)
{
	pw_watch_event ev = worked_event();
	pw_watch_info info = {.series_id = 412, .series_key = KEY, .unit = "ms"};
	pw_watch_msgs m;
	pw_watch_msgs_build(&m, &ev, &info, "ml-perf-triage", 1781740800000000LL);

	const Perfwatch__V1__Changepoint *cp = &m.cp;
	cr_assert_str_eq(cp->changepoint_id,
	                 "chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms@xla-nightly-2026-06-17");
	cr_assert_str_eq(cp->day, "2026-06-17");
	cr_assert_str_eq(cp->last_clean_cl, "cl/7841885");
	cr_assert_str_eq(cp->first_shifted_cl, "cl/7841923");
	cr_assert_eq(cp->n_cls, 38);
	cr_assert_eq(cp->position, 36);
	cr_assert_float_eq(cp->delta_pct, 8.205, 0.001);
	cr_assert_eq(cp->direction, PERFWATCH__V1__SHIFT_DIRECTION__SHIFT_DIRECTION_REGRESSION);
	cr_assert_eq(cp->routing, PERFWATCH__V1__ROUTING__ROUTING_PAGE);
	cr_assert_eq(cp->annotation, PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_NONE);
	cr_assert_str_eq(cp->key->model, "chat-8b");
	cr_assert_str_eq(cp->key->hlo_fingerprint, "hlo:9f31c2ab");
	cr_assert_str_eq(cp->key->platform, "v6e-4");
	cr_assert_str_eq(cp->key->config, "decode.B64.s2048.int8");
	cr_assert_str_eq(cp->key->metric, "tpot_p50_ms");

	const Perfwatch__V1__Alert *a = &m.alert;
	cr_assert_str_eq(a->alert_id, "watch-412@xla-nightly-2026-06-17");
	cr_assert_eq(a->kind, PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION);
	cr_assert_eq(a->source, PERFWATCH__V1__ALERT_SOURCE__ALERT_SOURCE_WATCHER);
	cr_assert_eq(a->verdict, PERFWATCH__V1__VERDICT__VERDICT_INVESTIGATE);
	cr_assert_str_eq(a->page, "ml-perf-triage");
	cr_assert_str_eq(a->changepoint->nightly, "2026-06-17");
	cr_assert_str_eq(a->changepoint->cl_range_lo, "cl/7841885");
	cr_assert_str_eq(a->changepoint->cl_range_hi, "cl/7841923");
	cr_assert_eq(a->changepoint->n_cls, 38);
	cr_assert_float_eq(a->delta->abs, 0.32, 1e-9);
	cr_assert_float_eq(a->delta->z_robust, 0.32 / 0.017, 1e-9);
	cr_assert(strstr(a->summary, "cl/7841885..cl/7841923, 38 CLs") != NULL, "%s", a->summary);

	/* the messages pack and read back */
	uint8_t buf[4096];
	size_t len = perfwatch__v1__changepoint__get_packed_size(cp);
	cr_assert_lt(len, sizeof buf);
	perfwatch__v1__changepoint__pack(cp, buf);
	Perfwatch__V1__Changepoint *back = perfwatch__v1__changepoint__unpack(NULL, len, buf);
	cr_assert_not_null(back);
	cr_assert_str_eq(back->first_shifted_build_id, "xla-nightly-2026-06-17");
	cr_assert_eq(back->n_cls, 38);
	perfwatch__v1__changepoint__free_unpacked(back, NULL);
	len = perfwatch__v1__alert__get_packed_size(a);
	cr_assert_lt(len, sizeof buf);
	perfwatch__v1__alert__pack(a, buf);
	Perfwatch__V1__Alert *aback = perfwatch__v1__alert__unpack(NULL, len, buf);
	cr_assert_not_null(aback);
	cr_assert_str_eq(aback->changepoint->changepoint_id, cp->changepoint_id);
	perfwatch__v1__alert__free_unpacked(aback, NULL);
}

Test(watcher_emit, infra_step_is_infra_health_frozen_and_pages_nobody)
{
	pw_watch_event ev = worked_event();
	pw_watch_event_set_infra(&ev, "fc-2026-06-03-0007");
	cr_assert_eq(ev.annotation, PW_WATCH_ANNOTATION_INFRA);
	cr_assert_eq(ev.routing, PW_WATCH_ROUTE_NONE);
	pw_watch_info info = {.series_id = 7, .series_key = KEY, .unit = "ms"};
	pw_watch_msgs m;
	pw_watch_msgs_build(&m, &ev, &info, "ml-perf-triage", 0);
	cr_assert_eq(m.alert.kind, PERFWATCH__V1__ALERT_KIND__ALERT_KIND_INFRA_HEALTH);
	cr_assert_eq(m.alert.verdict, PERFWATCH__V1__VERDICT__VERDICT_FROZEN);
	cr_assert_eq(m.alert.routing, PERFWATCH__V1__ROUTING__ROUTING_NONE);
	cr_assert_str_eq(m.alert.page, "");
	cr_assert_str_eq(m.alert.fleet_event_id, "fc-2026-06-03-0007");
	cr_assert_eq(m.cp.annotation, PERFWATCH__V1__CHANGEPOINT_ANNOTATION__CHANGEPOINT_ANNOTATION_INFRA);
	cr_assert_str_eq(m.cp.fleet_event_id, "fc-2026-06-03-0007");
	cr_assert(strncmp(m.summary, "infra step", 10) == 0, "%s", m.summary);
}

Test(watcher_emit, verdicts_and_kinds_follow_direction_routing_and_annotation)
{
	pw_watch_event ev = worked_event();
	ev.routing = PW_WATCH_ROUTE_QUEUE;
	cr_assert_eq(pw_watch_verdict(&ev), PERFWATCH__V1__VERDICT__VERDICT_TREND);
	cr_assert_str_eq(pw_watch_verdict_name(pw_watch_verdict(&ev)), "trend");
	ev.regression = false;
	cr_assert_eq(pw_watch_alert_kind(&ev), PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT);
	cr_assert_eq(pw_watch_verdict(&ev), PERFWATCH__V1__VERDICT__VERDICT_INVESTIGATE);
	cr_assert_str_eq(pw_watch_alert_kind_name(pw_watch_alert_kind(&ev)), "improvement");
	ev.annotation = PW_WATCH_ANNOTATION_FROZEN;
	ev.routing = PW_WATCH_ROUTE_NONE;
	cr_assert_eq(pw_watch_alert_kind(&ev), PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT);
	cr_assert_eq(pw_watch_verdict(&ev), PERFWATCH__V1__VERDICT__VERDICT_FROZEN);
	/* a queued alert names no page receiver */
	ev = worked_event();
	ev.routing = PW_WATCH_ROUTE_QUEUE;
	pw_watch_info info = {.series_id = 1, .series_key = KEY, .unit = "ms"};
	pw_watch_msgs m;
	pw_watch_msgs_build(&m, &ev, &info, "ml-perf-triage", 0);
	cr_assert_str_eq(m.alert.page, "");
}

Test(watcher_emit, n_cls_is_zero_when_cls_do_not_increase)
{
	pw_watch_event ev = worked_event();
	ev.first_shifted.cl_number = ev.last_clean.cl_number;
	cr_assert_eq(pw_watch_n_cls(&ev), 0);
	ev.first_shifted.cl_number = ev.last_clean.cl_number - 5;
	cr_assert_eq(pw_watch_n_cls(&ev), 0);
}

Test(watcher_emit, day_is_the_utc_date_also_before_1970)
{
	char d[16];
	pw_watch_format_day(T0_US, d, sizeof d);
	cr_assert_str_eq(d, "2026-06-17");
	pw_watch_format_day(T0_US + DAY_US - 1, d, sizeof d);
	cr_assert_str_eq(d, "2026-06-17");
	pw_watch_format_day(-1, d, sizeof d);
	cr_assert_str_eq(d, "1969-12-31");
}

Test(watcher_emit, selectors_empty_lists_match_anything_and_lists_combine_with_and)
{
	pw_watch_env env;
	memset(&env, 0, sizeof env);
	snprintf(env.platform, sizeof env.platform, "v6e-4");
	snprintf(env.cell, sizeof env.cell, "cell-mtv5-c12");
	snprintf(env.chip_set, sizeof env.chip_set, "pinned-7");
	snprintf(env.firmware, sizeof env.firmware, "fw-1");
	snprintf(env.harness, sizeof env.harness, "perfbench-2.31");

	Perfwatch__V1__FleetChangeEvent fc = PERFWATCH__V1__FLEET_CHANGE_EVENT__INIT;
	pw_watch_selectors sel;
	pw_watch_selectors_from_proto(&sel, &fc);
	cr_assert(pw_watch_selectors_match(&sel, &env), "no selector: everything");

	char *cells[] = {"cell-mtv5-c11", "cell-mtv5-c12"};
	char *platforms[] = {"v5e-8"};
	fc.cells = cells;
	fc.n_cells = 2;
	pw_watch_selectors_from_proto(&sel, &fc);
	cr_assert(pw_watch_selectors_match(&sel, &env), "OR within a list");
	fc.platforms = platforms;
	fc.n_platforms = 1;
	pw_watch_selectors_from_proto(&sel, &fc);
	cr_assert_not(pw_watch_selectors_match(&sel, &env), "AND across lists");
	platforms[0] = "v6e-4";
	cr_assert(pw_watch_selectors_match(&sel, &env));
	char *harness[] = {"perfbench-2.30"};
	fc.harness_versions = harness;
	fc.n_harness_versions = 1;
	pw_watch_selectors_from_proto(&sel, &fc);
	cr_assert_not(pw_watch_selectors_match(&sel, &env), "harness differs");
}

Test(watcher_emit, point_order_is_time_then_run_then_repeat)
{
	pw_watch_point_key a = {.ts_us = 10, .run_id = "r1", .repeat_index = 0};
	pw_watch_point_key b = a;
	cr_assert_eq(pw_watch_point_key_cmp(&a, &b), 0);
	b.repeat_index = 1;
	cr_assert_eq(pw_watch_point_key_cmp(&a, &b), -1);
	snprintf(b.run_id, sizeof b.run_id, "r0");
	cr_assert_eq(pw_watch_point_key_cmp(&a, &b), 1);
	b.ts_us = 11;
	cr_assert_eq(pw_watch_point_key_cmp(&a, &b), -1);
}

static pw_watch_series *new_series(void)
{
	pw_watch_params p;
	pw_watch_params_default(&p);
	char err[256];
	pw_watch_series *s = pw_watch_series_new(&p, true, false, err, sizeof err);
	cr_assert_not_null(s, "%s", err);
	return s;
}

Test(watcher_table, put_get_grow_iterate_and_conflict)
{
	pw_watch_table *t = pw_watch_table_new(4);
	cr_assert_not_null(t);
	enum { N = 300 };
	for (int i = 0; i < N; i++) {
		char key[64];
		snprintf(key, sizeof key, "m%d/hlo:x/v6e-4/cfg/tpot_p50_ms", i);
		pw_watch_entry *e = pw_watch_entry_new(key, new_series(), 400);
		cr_assert_not_null(e);
		e->series_id = i;
		cr_assert_eq(pw_watch_table_put(t, e), PW_OK);
	}
	cr_assert_eq(pw_watch_table_count(t), N);
	for (int i = 0; i < N; i++) {
		char key[64];
		snprintf(key, sizeof key, "m%d/hlo:x/v6e-4/cfg/tpot_p50_ms", i);
		pw_watch_entry *e = pw_watch_table_get(t, key);
		cr_assert_not_null(e, "%s", key);
		cr_assert_eq(e->series_id, i);
	}
	cr_assert_null(pw_watch_table_get(t, "absent/hlo:x/v6e-4/cfg/tpot_p50_ms"));
	cr_assert_eq(pw_watch_table_put(t, pw_watch_entry_new("m7/hlo:x/v6e-4/cfg/tpot_p50_ms",
	                                                      new_series(), 400)),
	             PW_ERR_CONFLICT);
	cr_assert_eq(pw_watch_table_count(t), N);
	size_t it = 0, seen = 0;
	long sum = 0;
	for (pw_watch_entry *e; (e = pw_watch_table_next(t, &it));) {
		seen++;
		sum += (long)e->series_id;
	}
	cr_assert_eq(seen, N);
	cr_assert_eq(sum, (long)N * (N - 1) / 2);
	pw_watch_table_free(t);
	pw_watch_table_free(NULL);
	pw_watch_entry_free(NULL);
}

Test(watcher_table, too_long_a_key_is_refused)
{
	char key[PW_WATCH_KEY_LEN + 8];
	memset(key, 'k', sizeof key - 1);
	key[sizeof key - 1] = '\0';
	cr_assert_null(pw_watch_entry_new(key, new_series(), 400));
}

Test(watcher_config, table_builds_and_defaults_match_the_logic)
{
	size_t n = 0;
	const pw_conf_key *keys = pw_watch_config_keys(&n);
	char err[512];
	pw_config *cfg = pw_config_new("watcher", keys, n, err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	pw_watch_params p, d;
	pw_watch_params_default(&d);
	cr_assert_eq(pw_watch_params_from_config(cfg, &p, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(p.max_points, d.max_points);
	cr_assert_eq(p.cp.min_segment, d.cp.min_segment);
	cr_assert_float_eq(p.cp.penalty, d.cp.penalty, 1e-12);
	cr_assert_float_eq(p.cp.alpha, d.cp.alpha, 1e-15);
	cr_assert_float_eq(p.cp.min_effect, d.cp.min_effect, 1e-15);
	cr_assert_str_eq(pw_config_get_str(cfg, "watcher.page_route"), "ml-perf-triage");
	/* two segments must fit in the window */
	cr_assert_eq(pw_config_set(cfg, "watcher.max_points", "20", "--set", err, sizeof err), PW_OK);
	cr_assert_eq(pw_config_set(cfg, "watcher.min_segment", "11", "--set", err, sizeof err), PW_OK);
	cr_assert_eq(pw_watch_params_from_config(cfg, &p, err, sizeof err), PW_ERR_CONFIG);
	cr_assert(strstr(err, "watcher.max_points") != NULL, "%s", err);
	pw_config_free(cfg);
}

/* Three repeats per nightly: the split must land on a build's first point. */
Test(watcher_repeats, shift_is_placed_on_a_build_boundary)
{
	pw_watch_params p;
	pw_watch_params_default(&p);
	char err[256];
	pw_watch_series *s = pw_watch_series_new(&p, true, true, err, sizeof err);
	cr_assert_not_null(s, "%s", err);
	uint64_t rng = 99;
	size_t total = 0;
	pw_watch_event found[4];
	size_t nfound = 0;
	for (int day = 0; day < 60; day++) {
		char id[32];
		snprintf(id, sizeof id, "nightly-%03d", day);
		pw_watch_build b = build(id, 7841000 + 38 * day, T0_US + day * DAY_US);
		for (int r = 0; r < 3; r++) {
			double u = 0;
			for (int i = 0; i < 12; i++) {
				rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
				u += (double)(rng >> 11) / 9007199254740992.0;
			}
			/* the level moves within nightly 40: its first repeat still looks clean */
			bool after = day > 40 || (day == 40 && r > 0);
			double v = (after ? 4.22 : 3.90) * (1 + 0.004 * (u - 6.0));
			pw_watch_event ev[4];
			size_t nev = 0;
			cr_assert_eq(pw_watch_series_append(s, v, &b, ev, 4, &nev, err, sizeof err), PW_OK);
			for (size_t j = 0; j < nev && nfound < 4; j++)
				found[nfound++] = ev[j];
			total++;
		}
	}
	cr_assert_eq(nfound, 1, "one shift, got %zu", nfound);
	cr_assert_str_eq(found[0].first_shifted.build_id, "nightly-040");
	cr_assert_str_eq(found[0].last_clean.build_id, "nightly-039");
	cr_assert_eq(found[0].cp.index, 120, "first point of nightly 40, got %zu", found[0].cp.index);
	cr_assert_eq(pw_watch_series_points(s), total);
	pw_watch_series_free(s);
}

Test(watcher_table, remove_keeps_the_rest_findable)
{
	pw_watch_table *t = pw_watch_table_new(4);
	enum { N = 200 };
	char key[N][64];
	for (int i = 0; i < N; i++) {
		snprintf(key[i], sizeof key[i], "s%d/h/p/c/m", i);
		cr_assert_eq(pw_watch_table_put(t, pw_watch_entry_new(key[i], new_series(), 8)), PW_OK);
	}
	for (int i = 0; i < N; i += 3)
		cr_assert_eq(pw_watch_table_remove(t, key[i]), PW_OK);
	cr_assert_eq(pw_watch_table_remove(t, key[0]), PW_ERR_NOT_FOUND);
	for (int i = 0; i < N; i++)
		cr_assert_eq(pw_watch_table_get(t, key[i]) != NULL, i % 3 != 0, "%s", key[i]);
	cr_assert_eq(pw_watch_table_count(t), N - (N + 2) / 3);
	pw_watch_table_free(t);
}

Test(watcher_table, seen_points_are_remembered_for_the_window_only)
{
	pw_watch_entry *e = pw_watch_entry_new("s/h/p/c/m", new_series(), 3);
	cr_assert_not_null(e);
	pw_watch_point_key k[4];
	for (int i = 0; i < 4; i++) {
		memset(&k[i], 0, sizeof k[i]);
		k[i].ts_us = 1000 + i;
		snprintf(k[i].run_id, sizeof k[i].run_id, "run-%d", i);
	}
	pw_watch_entry_remember(e, &k[0]);
	cr_assert(pw_watch_entry_has_seen(e, &k[0]));
	cr_assert_not(pw_watch_entry_has_seen(e, &k[1]));
	pw_watch_point_key other = k[0];
	other.repeat_index = 1;
	cr_assert_not(pw_watch_entry_has_seen(e, &other), "another repeat is another point");
	for (int i = 1; i < 4; i++)
		pw_watch_entry_remember(e, &k[i]);
	cr_assert_not(pw_watch_entry_has_seen(e, &k[0]), "pushed out of a window of 3");
	cr_assert(pw_watch_entry_has_seen(e, &k[3]));
	pw_watch_entry_free(e);
}

/* docs/watcher.md carries the generated reference of the watcher's own keys, verbatim. */
Test(watcher_config, docs_carry_the_generated_key_table)
{
	size_t n = 0;
	const pw_conf_key *keys = pw_watch_config_keys(&n);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	cr_assert_eq(pw_config_write_reference(f, "Watcher configuration keys", keys, n), PW_OK);
	fclose(f);
	const char *data = getenv("PW_TEST_DATA");
	cr_assert_not_null(data, "PW_TEST_DATA must name tests/data (ctest sets it)");
	char path[1024];
	snprintf(path, sizeof path, "%s/../../docs/watcher.md", data);
	FILE *r = fopen(path, "r");
	cr_assert_not_null(r, "cannot read %s", path);
	char *doc = calloc(1, 1 << 20);
	cr_assert_not_null(doc);
	size_t got = fread(doc, 1, (1 << 20) - 1, r);
	fclose(r);
	doc[got] = '\0';
	/* the table rows, from the first "|" line to the end of the generated text */
	const char *table = strstr(text, "\n|");
	cr_assert_not_null(table);
	if (getenv("PW_REGEN_DOCS"))
		fprintf(stderr, "---- generated watcher key table ----\n%s\n----\n", table + 1);
	cr_expect(strstr(doc, table + 1) != NULL,
	          "%s does not hold the current key table; run with PW_REGEN_DOCS=1 to print it", path);
	free(doc);
	free(text);
}

/* The restart path: loading a history and scanning once finds the shift appending found. */
Test(watcher_repeats, load_then_one_scan_finds_what_appending_found)
{
	enum { N = 90 };
	pw_watch_params p;
	pw_watch_params_default(&p);
	char err[256];
	pw_watch_series *live = pw_watch_series_new(&p, true, true, err, sizeof err);
	pw_watch_series *loaded = pw_watch_series_new(&p, true, true, err, sizeof err);
	pw_watch_series *again = pw_watch_series_new(&p, true, true, err, sizeof err);
	cr_assert(live && loaded && again, "%s", err);
	static pw_watch_build b[N];
	double v[N];
	uint64_t rng = 5;
	for (int day = 0; day < N; day++) {
		char id[32];
		snprintf(id, sizeof id, "nightly-%03d", day);
		b[day] = build(id, 7841885 + 38 * (day - 59), T0_US + day * DAY_US);
		double u = 0;
		for (int i = 0; i < 12; i++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			u += (double)(rng >> 11) / 9007199254740992.0;
		}
		v[day] = (day >= 60 ? 4.22 : 3.90) * (1 + 0.004 * (u - 6.0));
	}
	pw_watch_event ev[4], first;
	memset(&first, 0, sizeof first);
	size_t nlive = 0, n = 0;
	for (int day = 0; day < N; day++) {
		cr_assert_eq(pw_watch_series_append(live, v[day], &b[day], ev, 4, &n, err, sizeof err),
		             PW_OK);
		if (n && nlive == 0)
			first = ev[0];
		/* PELT's confirmation of the early rule's report is the same finding */
		for (size_t j = 0; j < n; j++)
			nlive += ev[j].stage != PW_WATCH_STAGE_CONFIRMING;
		cr_assert_eq(pw_watch_series_load(loaded, v[day], &b[day], err, sizeof err), PW_OK);
	}
	cr_assert_eq(nlive, 1);
	cr_assert_eq(pw_watch_series_points(loaded), N);
	cr_assert_eq(pw_watch_series_scan(loaded, ev, 4, &n, err, sizeof err), PW_OK);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(ev[0].first_shifted.build_id, first.first_shifted.build_id);
	cr_assert_str_eq(ev[0].last_clean.cl, "cl/7841885");
	cr_assert_str_eq(ev[0].first_shifted.cl, "cl/7841923");
	/* once emitted, another scan finds nothing new */
	cr_assert_eq(pw_watch_series_scan(loaded, ev, 4, &n, err, sizeof err), PW_OK);
	cr_assert_eq(n, 0);
	/* a restarted series told what was emitted reloads the history and finds nothing */
	pw_watch_series_mark_emitted(again, first.first_shifted.build_id);
	for (int day = 0; day < N; day++)
		cr_assert_eq(pw_watch_series_load(again, v[day], &b[day], err, sizeof err), PW_OK);
	cr_assert_eq(pw_watch_series_scan(again, ev, 4, &n, err, sizeof err), PW_OK);
	cr_assert_eq(n, 0);
	/* a non-finite value is refused and appends nothing */
	cr_assert_eq(pw_watch_series_load(again, NAN, &b[0], err, sizeof err), PW_ERR_INVALID);
	cr_assert_eq(pw_watch_series_points(again), N);
	pw_watch_series_free(again);
	pw_watch_series_free(live);
	pw_watch_series_free(loaded);
}
