/*
 * test_series_table.c: the baseliner's series table, resume marks,
 * fleet-change selector matching (services/baseliner/series_table.c) and
 * configuration table (baseliner_config.c), without any server.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseliner_config.h"
#include "series_table.h"

#define DAY_US (86400LL * 1000000LL)
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

Test(selector, empty_lists_match_anything_and_lists_are_and_across_or_within)
{
	pw_point_env a = env_of("v6e-4", "pinned-7", "cell-mtv5-c12", "tpufw-1", "perfbench-2.31");
	pw_point_env b = env_of("v5e-8", "pinned-2", "cell-mtv5-c11", "tpufw-1", "perfbench-2.31");
	pw_fleet_selector all = {0};
	cr_assert(pw_fleet_selector_is_empty(&all));
	cr_assert(pw_fleet_selector_match(&all, &a));

	const char *cells[] = {"cell-mtv5-c12"};
	pw_fleet_selector one_cell = {.cells = cells, .ncells = 1};
	cr_assert_not(pw_fleet_selector_is_empty(&one_cell));
	cr_assert(pw_fleet_selector_match(&one_cell, &a));
	cr_assert_not(pw_fleet_selector_match(&one_cell, &b));

	const char *two_cells[] = {"cell-x", "cell-mtv5-c11"};
	pw_fleet_selector either = {.cells = two_cells, .ncells = 2};
	cr_assert(pw_fleet_selector_match(&either, &b), "OR within a list");
	cr_assert_not(pw_fleet_selector_match(&either, &a));

	const char *plat[] = {"v6e-4"};
	const char *fw[] = {"tpufw-2"};
	pw_fleet_selector and = {.platforms = plat, .nplatforms = 1, .firmware = fw, .nfirmware = 1};
	cr_assert_not(pw_fleet_selector_match(&and, &a), "AND across lists: firmware differs");
	const char *fw1[] = {"tpufw-2", "tpufw-1"};
	and.firmware = fw1;
	and.nfirmware = 2;
	cr_assert(pw_fleet_selector_match(&and, &a));
	cr_assert_not(pw_fleet_selector_match(&and, &b), "platform differs");

	const char *h[] = {"perfbench-2.31"};
	const char *chips[] = {"pinned-2"};
	pw_fleet_selector hc = {.harness_versions = h, .nharness_versions = 1, .chip_sets = chips,
	                        .nchip_sets = 1};
	cr_assert(pw_fleet_selector_match(&hc, &b));
	cr_assert_not(pw_fleet_selector_match(&hc, &a));

	/* an empty-string value only matches an explicit empty selector entry */
	pw_point_env none = env_of("v6e-4", "", "", "", "");
	cr_assert_not(pw_fleet_selector_match(&one_cell, &none));
}

Test(selector, gpu_prefixes)
{
	cr_assert(pw_series_platform_is_gpu("h100-8", "h100,b200,gpu"));
	cr_assert(pw_series_platform_is_gpu("b200-8", "h100,b200,gpu"));
	cr_assert_not(pw_series_platform_is_gpu("v6e-4", "h100,b200,gpu"));
	cr_assert_not(pw_series_platform_is_gpu("v6e-4", ""));
	cr_assert_not(pw_series_platform_is_gpu("h100-8", ",,"));
	cr_assert_not(pw_series_platform_is_gpu(NULL, "h100"));
}

Test(mark, offsets_of_the_series_partition_tell_redeliveries)
{
	pw_point_mark m = {.ts_us = 100, .partition = 3, .offset = 41};
	cr_assert(pw_point_mark_seen(&m, 3, 41));
	cr_assert(pw_point_mark_seen(&m, 3, 7));
	cr_assert_not(pw_point_mark_seen(&m, 3, 42));
	cr_assert_not(pw_point_mark_seen(&m, 4, 7), "another partition: a repartitioned topic");
	cr_assert_not(pw_point_mark_seen(&m, -1, 0), "no position: never a redelivery");
	pw_point_mark none = {.ts_us = 0, .partition = -1, .offset = -1};
	cr_assert_not(pw_point_mark_seen(&none, 0, 0));
	cr_assert_neq(pw_series_point_id("r1", 0), pw_series_point_id("r1", 1));
	cr_assert_neq(pw_series_point_id("r1", 0), pw_series_point_id("r10", 0));
	cr_assert_eq(pw_series_point_id("r1", 0), pw_series_point_id("r1", 0));
}

static pw_baseline_params small_params(void)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	p.min_runs = 10;
	p.min_days = 2;
	p.min_chipsets = 3;
	p.max_window = 16;
	return p;
}

Test(table, get_find_grow_to_capacity_and_clear)
{
	pw_baseline_params p = small_params();
	pw_series_table *t = pw_series_table_new(3, &p);
	cr_assert_not_null(t);
	pw_series_table_set_sigma(t, 0.004, 0.02);
	pw_series_entry *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	bool created = false;
	cr_assert_eq(pw_series_table_get(t, "m/h/v6e-4/c/x", false, &a, &created), PW_OK);
	cr_assert(created);
	cr_assert_not(a->loaded);
	cr_assert_eq(a->bs.state, PW_BASELINE_BASELINING);
	cr_assert_float_eq(a->bs.params.platform_sigma, 0.004, 1e-15);
	cr_assert_eq(pw_series_table_get(t, "m/h/h100-8/c/x", true, &b, &created), PW_OK);
	cr_assert_float_eq(b->bs.params.platform_sigma, 0.02, 1e-15);
	pw_series_entry *again = NULL;
	cr_assert_eq(pw_series_table_get(t, "m/h/v6e-4/c/x", false, &again, &created), PW_OK);
	cr_assert_not(created);
	cr_assert_eq(again, a, "entries never move");
	cr_assert_eq(pw_series_table_find(t, "m/h/h100-8/c/x"), b);
	cr_assert_null(pw_series_table_find(t, "nope"));
	cr_assert_eq(pw_series_table_get(t, "k3", false, &c, &created), PW_OK);
	cr_assert_eq(pw_series_table_get(t, "k4", false, &d, &created), PW_ERR_INSUFFICIENT);
	cr_assert_null(d);
	cr_assert_eq(pw_series_table_get(t, "", false, &d, &created), PW_ERR_INVALID);
	char longkey[PW_ST_KEY_MAX + 8];
	memset(longkey, 'k', sizeof longkey - 1);
	longkey[sizeof longkey - 1] = '\0';
	cr_assert_eq(pw_series_table_get(t, longkey, false, &d, &created), PW_ERR_INVALID);
	cr_assert_eq(pw_series_table_count(t), 3);
	cr_assert_eq(pw_series_table_at(t, 0), a);
	cr_assert_eq(pw_series_table_at(t, 2), c);
	cr_assert_null(pw_series_table_at(t, 3));
	pw_series_table_clear(t);
	cr_assert_eq(pw_series_table_count(t), 0);
	cr_assert_null(pw_series_table_find(t, "k3"));
	cr_assert_eq(pw_series_table_get(t, "k4", false, &d, &created), PW_OK, "room again");
	pw_series_table_free(t);
	pw_series_table_free(NULL);
}

Test(table, many_series_hash_without_collisions_losing_entries)
{
	pw_baseline_params p = small_params();
	pw_series_table *t = pw_series_table_new(4000, &p);
	cr_assert_not_null(t);
	char key[64];
	for (int i = 0; i < 4000; i++) {
		snprintf(key, sizeof key, "model-%d/hlo:%x/v6e-4/decode.B8/tpot_p50_ms", i, i);
		pw_series_entry *e = NULL;
		bool created = false;
		cr_assert_eq(pw_series_table_get(t, key, false, &e, &created), PW_OK);
		cr_assert(created);
		e->series_id = i + 1;
	}
	for (int i = 3999; i >= 0; i--) {
		snprintf(key, sizeof key, "model-%d/hlo:%x/v6e-4/decode.B8/tpot_p50_ms", i, i);
		pw_series_entry *e = pw_series_table_find(t, key);
		cr_assert_not_null(e);
		cr_assert_eq(e->series_id, i + 1);
	}
	pw_series_table_free(t);
}

Test(table, bad_params_are_refused)
{
	pw_baseline_params p = small_params();
	p.min_runs = p.max_window + 1;
	cr_assert_null(pw_series_table_new(10, &p));
	p = small_params();
	cr_assert_null(pw_series_table_new(0, &p));
	cr_assert_null(pw_series_table_new(10, NULL));
}

/* Point k of a series at 6-hour steps; its offset in the series' partition is off. */
static void add(pw_series_entry *e, int k, double v, int64_t off, bool *skipped, size_t *nev,
                pw_baseline_event *ev)
{
	pw_point_env env = env_of("v6e-4", k % 3 == 0 ? "p0" : k % 3 == 1 ? "p1" : "p2", "cell-1",
	                          "fw", "h");
	pw_baseline_point pt = {.value = v, .ts_us = T0 + k * (DAY_US / 4),
	                        .chipset = pw_series_hash(env.chip_set)};
	char run[32];
	snprintf(run, sizeof run, "r%02d", k);
	cr_assert_eq(pw_series_entry_add(e, &pt, pw_series_point_id(run, 0), 0, off, &env, ev, nev,
	                                 skipped),
	             PW_OK);
}

Test(entry, redelivered_points_are_skipped_by_the_mark_in_any_time_order)
{
	pw_baseline_params p = small_params();
	pw_series_table *t = pw_series_table_new(4, &p);
	pw_series_entry *e = NULL;
	bool created, skipped;
	cr_assert_eq(pw_series_table_get(t, "s", false, &e, &created), PW_OK);
	cr_assert_eq(e->mark.partition, -1);
	pw_baseline_event ev[2];
	size_t nev, updates = 0;
	/* measured out of order (the ingester publishes in the order it reads runs) */
	int order[12] = {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10};
	for (int j = 0; j < 12; j++) {
		add(e, order[j], 10.0 + 0.001 * (order[j] % 5), j, &skipped, &nev, ev);
		cr_assert_not(skipped, "point %d", order[j]);
		updates += nev;
	}
	cr_assert_eq(updates, 3, "the 10th, 11th and 12th points each made a version");
	cr_assert(e->touched);
	cr_assert_str_eq(e->env.cell, "cell-1");
	cr_assert_eq(e->mark.offset, 11);
	cr_assert_eq(e->mark.ts_us, T0 + 11 * (DAY_US / 4), "the newest measurement");
	/* a redelivery of offsets 5..11: nothing happens */
	for (int j = 5; j < 12; j++) {
		add(e, order[j], 99.0, j, &skipped, &nev, ev);
		cr_assert(skipped);
		cr_assert_eq(nev, 0);
	}
	cr_assert_eq(e->bs.current.version, 3);
	cr_assert_eq(pw_baseline_series_window_len(&e->bs), 12);
	add(e, 12, 10.002, 12, &skipped, &nev, ev);
	cr_assert_not(skipped);
	cr_assert_eq(e->bs.current.version, 4);
	pw_series_table_free(t);
}

/* issue 19, item 3: the ingester killed -9 re-sends a batch's points at new offsets */
Test(entry, a_point_resent_at_a_new_offset_is_skipped_by_its_identity)
{
	pw_baseline_params p = small_params();
	pw_series_table *t = pw_series_table_new(4, &p);
	pw_series_entry *e = NULL;
	bool created, skipped;
	cr_assert_eq(pw_series_table_get(t, "s", false, &e, &created), PW_OK);
	pw_baseline_event ev[2];
	size_t nev;
	for (int k = 0; k < 6; k++) {
		add(e, k, 10.0, k, &skipped, &nev, ev);
		cr_assert_not(skipped);
	}
	/* the same runs again at offsets 6..11: counted once */
	for (int k = 0; k < 6; k++) {
		add(e, k, 10.0, 6 + k, &skipped, &nev, ev);
		cr_assert(skipped, "point %d re-sent at offset %d", k, 6 + k);
	}
	cr_assert_eq(pw_baseline_series_window_len(&e->bs), 6);
	add(e, 6, 10.0, 12, &skipped, &nev, ev);
	cr_assert_not(skipped);
	cr_assert_eq(pw_baseline_series_window_len(&e->bs), 7);
	pw_series_table_free(t);
}

/* issue 19, item 3: after a broker restart the topic's offsets start from 0 again */
Test(entry, a_new_point_at_an_old_offset_is_not_taken_for_a_redelivery)
{
	pw_baseline_params p = small_params();
	pw_series_table *t = pw_series_table_new(4, &p);
	pw_series_entry *e = NULL;
	bool created, skipped;
	cr_assert_eq(pw_series_table_get(t, "s", false, &e, &created), PW_OK);
	pw_baseline_event ev[2];
	size_t nev;
	for (int k = 0; k < 5; k++) {
		add(e, k, 10.0, 1000 + k, &skipped, &nev, ev);
		cr_assert_not(skipped);
	}
	/* a redelivery after the baseliner's own restart (ids not remembered) is still skipped */
	e->nrecent = 0;
	add(e, 2, 10.0, 1002, &skipped, &nev, ev);
	cr_assert(skipped, "a redelivery by offset, measured before the mark");
	/* the new replay: measured later, at offsets from 0 */
	for (int k = 5; k < 9; k++) {
		add(e, k, 10.0, k - 5, &skipped, &nev, ev);
		cr_assert_not(skipped, "new point %d at offset %d", k, k - 5);
	}
	cr_assert_eq(pw_baseline_series_window_len(&e->bs), 9);
	cr_assert_eq(e->mark.offset, 3, "the mark follows the topic as it is now");
	pw_series_table_free(t);
}

Test(entry, point_ids_use_the_whole_run_id)
{
	char a[300], b[300];
	memset(a, 'r', 299);
	a[299] = '\0';
	memcpy(b, a, sizeof b);
	b[250] = 's';
	cr_assert_neq(pw_series_point_id(a, 0), pw_series_point_id(b, 0));
	cr_assert_neq(pw_series_point_id("r1", 0), pw_series_point_id("r1", 1));
	/* the same bytes as before for short ids: FNV-1a of "run/repeat" */
	cr_assert_eq(pw_series_point_id("t1-00412", 3), pw_series_hash("t1-00412/3"));
}

Test(entry, refilled_points_are_not_added_twice)
{
	pw_baseline_params p = small_params();
	pw_series_table *t = pw_series_table_new(4, &p);
	pw_series_entry *e = NULL;
	bool created, skipped;
	cr_assert_eq(pw_series_table_get(t, "s", false, &e, &created), PW_OK);
	/* a load re-filled the window with points 0..4 (stored but maybe never consumed) */
	uint64_t ids[5];
	for (int k = 0; k < 5; k++) {
		char run[32];
		snprintf(run, sizeof run, "r%02d", k);
		ids[k] = pw_series_point_id(run, 0);
		pw_baseline_point pt = {10.0, T0 + k * (DAY_US / 4), pw_series_hash(k % 3 ? "p1" : "p0")};
		pw_baseline_series_push_quiet(&e->bs, &pt);
	}
	cr_assert_eq(pw_series_entry_set_refilled(e, ids, 5), PW_OK);
	pw_baseline_event ev[2];
	size_t nev;
	add(e, 3, 10.0, 100, &skipped, &nev, ev);
	cr_assert(skipped, "already in the window");
	cr_assert_eq(e->mark.offset, 100, "but consumed: the mark moves on");
	add(e, 5, 10.0, 101, &skipped, &nev, ev);
	cr_assert_not(skipped);
	cr_assert_eq(pw_baseline_series_window_len(&e->bs), 6);
	pw_series_table_free(t);
}

Test(entry, freeze_keeps_the_version_counter_and_ignores_pre_change_points)
{
	pw_baseline_params p = small_params();
	pw_series_table *t = pw_series_table_new(4, &p);
	pw_series_entry *e = NULL;
	bool created, skipped;
	cr_assert_eq(pw_series_table_get(t, "s", false, &e, &created), PW_OK);
	pw_baseline_event ev[2];
	size_t nev;
	for (int k = 0; k < 16; k++)
		add(e, k, 10.0 + 0.001 * (k % 5), k, &skipped, &nev, ev);
	cr_assert_eq(e->bs.state, PW_BASELINE_ACTIVE);
	uint64_t v = e->bs.current.version;
	cr_assert_eq(v, 7);
	e->touched = false;
	int64_t change = T0 + 20 * (DAY_US / 4);
	cr_assert(pw_series_entry_freeze(e, "fc-1", "recabling", change));
	cr_assert_not(pw_series_entry_freeze(e, "fc-1", "recabling", change), "once per event");
	cr_assert(e->touched);
	cr_assert(e->cache_dirty);
	cr_assert_eq(e->frozen_version, 7);
	cr_assert_eq(e->bs.current.version, 7, "the counter continues across the freeze");
	cr_assert_eq(e->bs.state, PW_BASELINE_FROZEN);
	/* points measured before the change (late arrivals of the old fleet) are ignored */
	for (int k = 16; k < 20; k++) {
		add(e, k, 10.0, k, &skipped, &nev, ev);
		cr_assert(skipped);
	}
	cr_assert_eq(pw_baseline_series_window_len(&e->bs), 0);
	/* after the change: +0.7%, the re-baseline completes at the 10th point */
	bool unfrozen = false;
	for (int k = 20; k < 30; k++) {
		add(e, k, 10.07 + 0.001 * (k % 5), k, &skipped, &nev, ev);
		cr_assert_not(skipped);
		for (size_t j = 0; j < nev; j++)
			unfrozen = unfrozen || ev[j].kind == PW_BASELINE_EV_UNFROZEN;
	}
	cr_assert(unfrozen);
	cr_assert_eq(e->bs.state, PW_BASELINE_ACTIVE);
	cr_assert_eq(e->bs.current.version, 8, "the re-baseline is the next version");
	cr_assert_float_eq(e->bs.current.median / 10.002 - 1.0, 0.007, 0.0005);
	pw_series_table_free(t);
}

Test(config, table_builds_env_overrides_and_docs_name_every_key)
{
	char err[512];
	size_t n = 0;
	const pw_conf_key *keys = pw_baseliner_config_keys(&n);
	cr_assert_gt(n, 0);
	pw_config *cfg = pw_config_new("baseliner", keys, n, err, sizeof err);
	cr_assert_not_null(cfg, "%s", err);
	pw_baseline_params p;
	cr_assert_eq(pw_baseliner_params_from_config(cfg, &p, err, sizeof err), PW_OK);
	cr_assert_eq(p.min_runs, 30);
	cr_assert_float_eq(p.min_days, 5.0, 1e-12);
	cr_assert_eq(p.min_chipsets, 3);
	cr_assert_float_eq(p.platform_sigma, 0.004, 1e-12);

	char *env[] = {"PW_BASELINER_MIN_RUNS=10", "PW_BASELINER_MIN_DAYS=2",
	               "PW_BASELINER_MAX_WINDOW=16", NULL};
	cr_assert_eq(pw_config_load_env(cfg, env, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_baseliner_params_from_config(cfg, &p, err, sizeof err), PW_OK);
	cr_assert_eq(p.min_runs, 10);
	cr_assert_eq(p.max_window, 16);
	char *bad[] = {"PW_BASELINER_MIN_RUNS=20", NULL};
	cr_assert_eq(pw_config_load_env(cfg, bad, err, sizeof err), PW_OK);
	cr_assert_eq(pw_baseliner_params_from_config(cfg, &p, err, sizeof err), PW_ERR_CONFIG);
	cr_assert(strstr(err, "max_window") != NULL, "%s", err);
	pw_config_free(cfg);

	/* docs/baseliner.md names every key */
	const char *data = getenv("PW_TEST_DATA");
	cr_assert_not_null(data, "PW_TEST_DATA is set by ctest");
	char path[1024];
	snprintf(path, sizeof path, "%s/../../docs/baseliner.md", data);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s", path);
	static char doc[65536];
	size_t len = fread(doc, 1, sizeof doc - 1, f);
	doc[len] = '\0';
	fclose(f);
	for (size_t i = 0; i < n; i++) {
		char needle[128];
		snprintf(needle, sizeof needle, "`%s`", keys[i].name);
		cr_assert(strstr(doc, needle) != NULL, "docs/baseliner.md does not name %s", needle);
	}
}

Test(fleet_log, events_due_in_measurement_time_match_old_or_new_environment)
{
	pw_fleet_log *l = pw_fleet_log_new();
	cr_assert_not_null(l);
	const char *cells[] = {"cell-1"};
	const char *fws[] = {"fw-old"};
	pw_fleet_selector by_cell = {.cells = cells, .ncells = 1};
	pw_fleet_selector by_fw = {.firmware = fws, .nfirmware = 1};
	/* added out of order: kept in occurred order */
	cr_assert_eq(pw_fleet_log_add(l, "fc-b", T0 + 5 * DAY_US, "firmware: upgrade", &by_fw), PW_OK);
	cr_assert_eq(pw_fleet_log_add(l, "fc-a", T0 + 2 * DAY_US, "recabling: cell-1", &by_cell), PW_OK);
	cr_assert_eq(pw_fleet_log_add(l, "fc-a", T0 + 9 * DAY_US, "again", &by_cell), PW_OK, "same id kept once");
	cr_assert_eq(pw_fleet_log_count(l), 2);
	cr_assert_eq(pw_fleet_log_add(l, "", T0, "", &by_cell), PW_ERR_INVALID);

	pw_point_env c1 = env_of("v6e-4", "p0", "cell-1", "fw-new", "h");
	pw_point_env c2 = env_of("v6e-4", "p0", "cell-2", "fw-new", "h");
	pw_point_env c2old = env_of("v6e-4", "p0", "cell-2", "fw-old", "h");
	size_t pos = 0;
	/* previous point day 1, this one day 3: fc-a (day 2) is due for cell-1 */
	const pw_fleet_event *e = pw_fleet_log_due(l, &pos, T0 + DAY_US, T0 + 3 * DAY_US, &c1, &c1);
	cr_assert_not_null(e);
	cr_assert_str_eq(e->id, "fc-a");
	cr_assert_str_eq(e->reason, "recabling: cell-1");
	cr_assert_null(pw_fleet_log_due(l, &pos, T0 + DAY_US, T0 + 3 * DAY_US, &c1, &c1));
	/* not for cell-2 */
	pos = 0;
	cr_assert_null(pw_fleet_log_due(l, &pos, T0 + DAY_US, T0 + 3 * DAY_US, &c2, &c2));
	/* a point exactly at the event's time is after the change; one before is not */
	pos = 0;
	cr_assert_not_null(pw_fleet_log_due(l, &pos, T0 + DAY_US, T0 + 2 * DAY_US, &c1, &c1));
	pos = 0;
	cr_assert_null(pw_fleet_log_due(l, &pos, T0 + 2 * DAY_US, T0 + 3 * DAY_US, &c1, &c1),
	               "the previous point was already after it");
	/* the firmware change: the previous point ran the old firmware, this one the new */
	pos = 0;
	e = pw_fleet_log_due(l, &pos, T0 + 4 * DAY_US, T0 + 6 * DAY_US, &c2old, &c2);
	cr_assert_not_null(e);
	cr_assert_str_eq(e->id, "fc-b");
	pos = 0;
	cr_assert_null(pw_fleet_log_due(l, &pos, T0 + 4 * DAY_US, T0 + 6 * DAY_US, NULL, &c2));
	/* both over a long gap, in time order */
	pos = 0;
	pw_point_env c1old = env_of("v6e-4", "p0", "cell-1", "fw-old", "h");
	e = pw_fleet_log_due(l, &pos, T0, T0 + 8 * DAY_US, &c1old, &c1);
	cr_assert_str_eq(e->id, "fc-a");
	e = pw_fleet_log_due(l, &pos, T0, T0 + 8 * DAY_US, &c1old, &c1);
	cr_assert_str_eq(e->id, "fc-b");
	cr_assert_null(pw_fleet_log_due(l, &pos, T0, T0 + 8 * DAY_US, &c1old, &c1));
	pw_fleet_log_free(l);
	pw_fleet_log_free(NULL);
}
