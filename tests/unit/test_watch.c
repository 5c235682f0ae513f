/*
 * test_watch.c: the watcher's per-series logic (services/watcher/watch.c):
 * the worked example's nightly shift localised to its builds and CLs,
 * routing by direction and tier, infra annotation, and no shift emitted
 * twice, across a restart included.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "watch.h"
#include "test_noise.h"
#include "../fault_run_series.h"

#define DAY_US (86400LL * 1000000LL)
#define T0_US (1746057600LL * 1000000LL) /* 2025-05-01 */

/* Nightly k: build "nightly-k", head CL 7841885 + 38·(k − shift_at + 1) around the
 * shift, so that the last clean nightly heads cl/7841885 and the first shifted
 * cl/7841923, as in §7 artifact 3. */
static pw_watch_build nightly(int k, int shift_at)
{
	pw_watch_build b;
	memset(&b, 0, sizeof b);
	snprintf(b.build_id, sizeof b.build_id, "nightly-%03d", k);
	b.cl_number = 7841885 + 38LL * (k - (shift_at - 1));
	snprintf(b.cl, sizeof b.cl, "cl/%lld", (long long)b.cl_number);
	b.ts_us = T0_US + (int64_t)k * DAY_US;
	return b;
}

/* A replay's findings: provisional or confirmed-at-once reports in ev[]; PELT's
 * confirmations of provisional ones (the same finding's next revision) and
 * withdrawals apart. */
typedef struct run {
	pw_watch_event ev[8];
	size_t nev;
	int first_event_at; /* nightly at which the first event came */
	pw_watch_event conf[8];
	size_t nconf;
	int confirmed_at;   /* nightly at which the first confirmation (or confirmed report) came */
	size_t nwithdrawn;
} run;

static void replay(pw_watch_series *s, int n, int shift_at, double before, double after,
                   double sigma, uint64_t seed, run *r)
{
	uint64_t rng = seed;
	r->nev = 0;
	r->first_event_at = -1;
	r->nconf = 0;
	r->confirmed_at = -1;
	r->nwithdrawn = 0;
	for (int k = 0; k < n; k++) {
		double level = k >= shift_at ? after : before;
		pw_watch_build b = nightly(k, shift_at);
		pw_watch_event ev[4];
		size_t nev;
		char err[256];
		cr_assert_eq(pw_watch_series_append(s, level * (1 + sigma * noise(&rng)), &b, ev, 4,
		                                    &nev, err, sizeof err),
		             PW_OK, "%s", err);
		for (size_t j = 0; j < nev; j++) {
			if (ev[j].stage == PW_WATCH_STAGE_CONFIRMING) {
				if (r->nconf < 8)
					r->conf[r->nconf++] = ev[j];
			} else if (ev[j].stage == PW_WATCH_STAGE_WITHDRAWN) {
				r->nwithdrawn++;
			} else if (r->nev < 8) {
				r->ev[r->nev++] = ev[j];
			}
			if (ev[j].stage != PW_WATCH_STAGE_PROVISIONAL &&
			    ev[j].stage != PW_WATCH_STAGE_WITHDRAWN && r->confirmed_at < 0)
				r->confirmed_at = k;
		}
		if (nev && r->first_event_at < 0)
			r->first_event_at = k;
	}
}

static pw_watch_series *series_k(bool lower_is_better, bool top, size_t early_k)
{
	pw_watch_params p;
	pw_watch_params_default(&p);
	p.early.k = early_k;
	char err[256];
	pw_watch_series *s = pw_watch_series_new(&p, lower_is_better, top, err, sizeof err);
	cr_assert_not_null(s, "%s", err);
	return s;
}

static pw_watch_series *series(bool lower_is_better, bool top)
{
	return series_k(lower_is_better, top, 3);
}

static pw_watch_series *series_no_drift(void)
{
	pw_watch_params p;
	pw_watch_params_default(&p);
	p.drift_every = 0;
	char err[256];
	pw_watch_series *s = pw_watch_series_new(&p, true, true, err, sizeof err);
	cr_assert_not_null(s, "%s", err);
	return s;
}

Test(watch, worked_example_shift_is_pinned_to_its_nightly_and_cl_range)
{
	pw_watch_series *s = series(true, true);
	run r;
	replay(s, 90, 60, 3.90, 4.22, 0.004, 11, &r);
	cr_assert_eq(r.nev, 1, "exactly one shift in 90 nightlies, got %zu", r.nev);
	pw_watch_event *e = &r.ev[0];
	cr_assert_eq(e->cp.index, 60);
	cr_assert_str_eq(e->last_clean.build_id, "nightly-059");
	cr_assert_str_eq(e->first_shifted.build_id, "nightly-060");
	cr_assert_str_eq(e->last_clean.cl, "cl/7841885");
	cr_assert_str_eq(e->first_shifted.cl, "cl/7841923");
	cr_assert(e->regression);
	cr_assert_float_eq(e->cp.rel_change, 0.082, 0.01);
	cr_assert_eq(e->annotation, PW_WATCH_ANNOTATION_NONE);
	cr_assert_eq(e->routing, PW_WATCH_ROUTE_PAGE);
	/* reported provisionally by the early rule at the third shifted nightly,
	 * then confirmed by PELT as the same finding (same first shifted build) */
	cr_assert_eq(e->stage, PW_WATCH_STAGE_PROVISIONAL);
	cr_assert_eq(r.first_event_at, 62, "first reported at nightly %d", r.first_event_at);
	cr_assert_eq(e->reported_after, 3);
	cr_assert_eq(r.nconf, 1);
	cr_assert_str_eq(r.conf[0].first_shifted.build_id, "nightly-060");
	cr_assert_gt(r.confirmed_at, 62);
	cr_assert_lt(r.confirmed_at, 60 + 12, "confirmed at nightly %d", r.confirmed_at);
	cr_assert_eq(r.nwithdrawn, 0);
	pw_watch_series_free(s);
}

/* The same series without the early rule: PELT alone, min_segment nightlies late at best. */
Test(watch, without_the_early_rule_pelt_reports_it_later)
{
	pw_watch_series *s = series_k(true, true, 0);
	run r;
	replay(s, 90, 60, 3.90, 4.22, 0.004, 11, &r);
	cr_assert_eq(r.nev, 1);
	cr_assert_eq(r.ev[0].stage, PW_WATCH_STAGE_CONFIRMED);
	cr_assert_str_eq(r.ev[0].first_shifted.build_id, "nightly-060");
	cr_assert_geq(r.first_event_at, 60 + 4, "PELT at nightly %d", r.first_event_at);
	cr_assert_eq(r.nconf, 0);
	pw_watch_series_free(s);
}

/* Three shifted nightlies that go back: provisional, then withdrawn, never confirmed. */
Test(watch, a_short_excursion_is_withdrawn)
{
	pw_watch_series *s = series(true, true);
	uint64_t rng = 21;
	size_t prov = 0, withdrawn = 0, confirmed = 0;
	int withdrawn_at = -1;
	for (int k = 0; k < 80; k++) {
		double level = k >= 40 && k < 43 ? 4.22 : 3.90;
		pw_watch_build b = nightly(k, 40);
		pw_watch_event ev[4];
		size_t nev;
		char err[256];
		cr_assert_eq(pw_watch_series_append(s, level * (1 + 0.004 * noise(&rng)), &b, ev, 4,
		                                    &nev, err, sizeof err),
		             PW_OK, "%s", err);
		for (size_t j = 0; j < nev; j++) {
			prov += ev[j].stage == PW_WATCH_STAGE_PROVISIONAL;
			confirmed += ev[j].stage == PW_WATCH_STAGE_CONFIRMING ||
			             ev[j].stage == PW_WATCH_STAGE_CONFIRMED;
			if (ev[j].stage == PW_WATCH_STAGE_WITHDRAWN) {
				withdrawn++;
				withdrawn_at = k;
				cr_assert_str_eq(ev[j].first_shifted.build_id, "nightly-040");
				cr_assert_eq(ev[j].routing, PW_WATCH_ROUTE_NONE);
			}
		}
	}
	cr_assert_eq(prov, 1);
	cr_assert_eq(confirmed, 0);
	cr_assert_eq(withdrawn, 1);
	cr_assert_eq(withdrawn_at, 40 + 20, "withdrawn at %d", withdrawn_at);
	pw_watch_series_free(s);
}

Test(watch, improvement_is_emitted_and_queued)
{
	pw_watch_series *s = series(true, true);
	run r;
	replay(s, 80, 50, 3.90, 3.70, 0.004, 12, &r);
	cr_assert_eq(r.nev, 1);
	cr_assert_not(r.ev[0].regression);
	cr_assert_eq(r.ev[0].routing, PW_WATCH_ROUTE_QUEUE);
	pw_watch_series_free(s);
}

Test(watch, higher_is_better_drop_is_a_regression)
{
	pw_watch_series *s = series(false, true);
	run r;
	replay(s, 80, 50, 1200.0, 1100.0, 0.004, 13, &r);
	cr_assert_eq(r.nev, 1);
	cr_assert(r.ev[0].regression);
	cr_assert_eq(r.ev[0].routing, PW_WATCH_ROUTE_PAGE);
	pw_watch_series_free(s);
}

Test(watch, tail_tier_regression_goes_to_the_queue)
{
	pw_watch_series *s = series(true, false);
	run r;
	replay(s, 80, 50, 3.90, 4.22, 0.004, 14, &r);
	cr_assert_eq(r.nev, 1);
	cr_assert(r.ev[0].regression);
	cr_assert_eq(r.ev[0].routing, PW_WATCH_ROUTE_QUEUE);
	pw_watch_series_free(s);
}

Test(watch, step_at_a_fleet_change_is_infra_and_pages_nobody)
{
	pw_watch_series *s = series(true, true);
	/* recabling took effect between nightly 49 and 50: +0.7% on the cell (σ 0.1%
	 * here so that a 0.7% step is unmistakable) */
	pw_watch_series_fleet_change(s, "fc-recable-1", T0_US + 49 * DAY_US + DAY_US / 2);
	run r;
	replay(s, 80, 50, 3.90, 3.90 * 1.007, 0.001, 15, &r);
	cr_assert_eq(r.nev, 1);
	cr_assert_eq(r.ev[0].annotation, PW_WATCH_ANNOTATION_INFRA);
	cr_assert_str_eq(r.ev[0].fleet_event_id, "fc-recable-1");
	cr_assert_eq(r.ev[0].routing, PW_WATCH_ROUTE_NONE);
	pw_watch_series_free(s);
}

/* the group's feed partition and the instance's own reader may both bring a
 * change: recorded again, it does not push older marks out of the ring (8) */
Test(watch, a_fleet_change_recorded_twice_takes_one_mark)
{
	pw_watch_series *s = series(true, true);
	pw_watch_series_fleet_change(s, "fc-recable-1", T0_US + 49 * DAY_US + DAY_US / 2);
	for (int i = 0; i < 12; i++)
		pw_watch_series_fleet_change(s, "fc-elsewhere", T0_US + DAY_US);
	run r;
	replay(s, 80, 50, 3.90, 3.90 * 1.007, 0.001, 15, &r);
	cr_assert_eq(r.nev, 1);
	cr_assert_eq(r.ev[0].annotation, PW_WATCH_ANNOTATION_INFRA);
	cr_assert_str_eq(r.ev[0].fleet_event_id, "fc-recable-1");
	pw_watch_series_free(s);
}

Test(watch, flat_noisy_year_emits_nothing)
{
	pw_watch_series *s = series(true, true);
	run r;
	replay(s, 365, 1000, 3.90, 3.90, 0.004, 16, &r);
	cr_assert_eq(r.nev, 0, "a flat year raised %zu shifts", r.nev);
	pw_watch_series_free(s);
}

Test(watch, restart_with_reloaded_keys_emits_nothing_twice)
{
	pw_watch_series *s = series(true, true);
	run r;
	replay(s, 90, 60, 3.90, 4.22, 0.004, 11, &r);
	cr_assert_eq(r.nev, 1);
	char key[PW_WATCH_BUILD_LEN];
	snprintf(key, sizeof key, "%s", r.ev[0].first_shifted.build_id);
	pw_watch_series_free(s);

	/* the restarted watcher reloads what it stored and replays the same history */
	s = series(true, true);
	pw_watch_series_mark_emitted(s, key);
	replay(s, 90, 60, 3.90, 4.22, 0.004, 11, &r);
	cr_assert_eq(r.nev, 0);
	pw_watch_series_free(s);
}

Test(watch, rejects_non_finite_and_bad_params)
{
	pw_watch_series *s = series(true, true);
	pw_watch_build b = nightly(0, 10);
	pw_watch_event ev[2];
	size_t nev;
	char err[256];
	cr_assert_eq(pw_watch_series_append(s, NAN, &b, ev, 2, &nev, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_watch_series_append(s, INFINITY, &b, ev, 2, &nev, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_watch_series_points(s), 0);
	pw_watch_series_free(s);
	pw_watch_series_free(NULL);

	pw_watch_params p;
	pw_watch_params_default(&p);
	p.max_points = 3;
	cr_assert_null(pw_watch_series_new(&p, true, true, err, sizeof err));
	cr_assert(strstr(err, "max_points") != NULL, "%s", err);
}

/* Issue 17: a slow drift is one TREND finding, queued, and not a staircase of steps. */
static void drift_run(pw_watch_series *s, int n, double (*level)(int), uint64_t seed,
                      size_t *trend, size_t *steps, pw_watch_event *first_trend)
{
	uint64_t rng = seed;
	*trend = *steps = 0;
	for (int k = 0; k < n; k++) {
		pw_watch_build b = nightly(k, 100);
		pw_watch_event ev[8];
		size_t nev;
		char err[256];
		cr_assert_eq(pw_watch_series_append(s, level(k) * (1 + 0.005 * noise(&rng)), &b, ev, 8,
		                                    &nev, err, sizeof err),
		             PW_OK, "%s", err);
		for (size_t j = 0; j < nev; j++) {
			if (ev[j].stage == PW_WATCH_STAGE_TREND) {
				if (*trend == 0)
					*first_trend = ev[j];
				(*trend)++;
			} else if (ev[j].stage != PW_WATCH_STAGE_CONFIRMING &&
			           ev[j].stage != PW_WATCH_STAGE_WITHDRAWN) {
				(*steps)++;
			}
		}
	}
}

static double drift_level(int k) { return 3.90 * (1.0 + 0.10 * k / 300.0); }
static double stair_level(int k) { return 3.90 * (1.0 + 0.03 * (k >= 75) + 0.03 * (k >= 150) + 0.03 * (k >= 225)); }
static double flat_level(int k) { (void)k; return 3.90; }

Test(watch, a_slow_drift_is_one_queued_trend_finding)
{
	size_t found = 0, steps_with = 0, steps_without = 0;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		pw_watch_series *s = series(true, true);
		size_t trend, steps;
		pw_watch_event t;
		memset(&t, 0, sizeof t);
		drift_run(s, 300, drift_level, seed, &trend, &steps, &t);
		found += trend == 1;
		steps_with += steps;
		pw_watch_series *n = series_no_drift();
		size_t trend0, steps0;
		pw_watch_event t0;
		drift_run(n, 300, drift_level, seed, &trend0, &steps0, &t0);
		cr_assert_eq(trend0, 0);
		steps_without += steps0;
		pw_watch_series_free(n);
		if (trend == 1) {
			cr_assert(t.regression);
			cr_assert_eq(t.routing, PW_WATCH_ROUTE_QUEUE, "a trend pages nobody");
			cr_assert_gt(t.drift_rate_pct, 0.02);
			cr_assert_lt(t.drift_rate_pct, 0.05);
		}
		pw_watch_series_free(s);
	}
	cr_assert_geq(found, 9, "drift found once in %zu of 10", found);
	/* the stairs PELT cuts before the drift is long enough to be recognised (60
	 * points, 1% and 5 sigma) are still reported; after it, none */
	fprintf(stderr, "drift series, 10 seeds: steps reported %zu with the drift finding, %zu "
	        "without\n", steps_with, steps_without);
	cr_assert_lt(steps_with * 2, steps_without, "stairs: %zu with, %zu without", steps_with,
	             steps_without);
}

Test(watch, a_staircase_stays_three_steps_and_flat_stays_quiet)
{
	for (uint64_t seed = 1; seed <= 5; seed++) {
		pw_watch_series *s = series(true, true);
		size_t trend, steps;
		pw_watch_event t;
		drift_run(s, 300, stair_level, seed, &trend, &steps, &t);
		cr_assert_eq(trend, 0, "seed %llu: a staircase gave %zu drifts", (unsigned long long)seed, trend);
		cr_assert_eq(steps, 3, "seed %llu: %zu steps", (unsigned long long)seed, steps);
		pw_watch_series_free(s);
		s = series(true, true);
		drift_run(s, 300, flat_level, seed, &trend, &steps, &t);
		cr_assert_eq(trend + steps, 0);
		pw_watch_series_free(s);
	}
}

/*
 * The 2026-06-17 shift of one worked-example series as the fault harness
 * stored it (chat-8b v6e-4 decode.B64 cost_per_mtok_usd, nightlies
 * 2026-05-12..07-02, +7.7%): streamed, the early rule reports it at its third
 * nightly (06-19) and PELT confirms it at 06-25. A watcher that loads the
 * series from PostgreSQL after 06-23 was stored (restarted, or rebuilt after
 * a failed batch, while the ingester was ahead) holds seven shifted points:
 * too few for PELT, and the early rule over the newest three no longer fires
 * (the four before them are in its reference). The load applies the rule as
 * the stream had it, so the shift is reported there too.
 */

Test(watch, series_loaded_past_the_early_rule_still_reports_the_shift)
{
	char err[256];
	pw_watch_event ev[16];
	size_t nev = 0;
	/* streamed: provisional at the third shifted nightly */
	pw_watch_series *s = series(true, true);
	int provisional_at = -1;
	for (int k = 0; k < 43; k++) {
		pw_watch_build b = nightly(k, PW_FAULT_RUN_SHIFT);
		cr_assert_eq(pw_watch_series_append(s, pw_fault_run_cost[k], &b, ev, 16, &nev, err,
		                                    sizeof err),
		             PW_OK, "%s", err);
		for (size_t j = 0; j < nev; j++)
			if (ev[j].stage == PW_WATCH_STAGE_PROVISIONAL && provisional_at < 0)
				provisional_at = k;
	}
	cr_assert_eq(provisional_at, PW_FAULT_RUN_SHIFT + 2);
	pw_watch_series_free(s);

	/* loaded through 06-23 (seven shifted points) and scanned once */
	s = series(true, true);
	for (int k = 0; k < 43; k++) {
		pw_watch_build b = nightly(k, PW_FAULT_RUN_SHIFT);
		cr_assert_eq(pw_watch_series_load(s, pw_fault_run_cost[k], &b, err, sizeof err), PW_OK);
	}
	/* the newest three alone do not show it, nor does PELT yet */
	pw_watch_series *plain = series(true, true);
	for (int k = 0; k < 43; k++) {
		pw_watch_build b = nightly(k, PW_FAULT_RUN_SHIFT);
		cr_assert_eq(pw_watch_series_load(plain, pw_fault_run_cost[k], &b, err, sizeof err), PW_OK);
	}
	cr_assert_eq(pw_watch_series_scan(plain, ev, 16, &nev, err, sizeof err), PW_OK);
	cr_assert_eq(nev, 0, "a plain scan of the loaded window found %zu", nev);
	pw_watch_series_free(plain);

	cr_assert_eq(pw_watch_series_scan_loaded(s, 43, ev, 16, &nev, err, sizeof err), PW_OK, "%s",
	             err);
	cr_assert_eq(nev, 1, "the load reported %zu shifts", nev);
	cr_assert_eq(ev[0].stage, PW_WATCH_STAGE_PROVISIONAL);
	pw_watch_build first = nightly(PW_FAULT_RUN_SHIFT, PW_FAULT_RUN_SHIFT);
	cr_assert_str_eq(ev[0].first_shifted.build_id, first.build_id);
	cr_assert(ev[0].regression);

	/* 06-24 adds nothing; at 06-25 PELT confirms it, as it does the streamed one */
	size_t confirmed = 0;
	for (int k = 43; k < 45; k++) {
		pw_watch_build b = nightly(k, PW_FAULT_RUN_SHIFT);
		cr_assert_eq(pw_watch_series_append(s, pw_fault_run_cost[k], &b, ev, 16, &nev, err,
		                                    sizeof err),
		             PW_OK);
		cr_assert_eq(nev, k == 44 ? 1 : 0, "nightly %d: %zu events", k, nev);
		confirmed += nev;
	}
	cr_assert_eq(confirmed, 1);
	cr_assert_eq(ev[0].stage, PW_WATCH_STAGE_CONFIRMING);
	cr_assert_str_eq(ev[0].first_shifted.build_id, first.build_id);
	/* and a load that holds nothing new reports nothing twice */
	cr_assert_eq(pw_watch_series_scan_loaded(s, 45, ev, 16, &nev, err, sizeof err), PW_OK);
	cr_assert_eq(nev, 0);
	pw_watch_series_free(s);
}
