/*
 * test_baseline.c: the baseliner's window rules, quarantine, outlier and
 * freeze state machine (services/baseliner/baseline.c), without any server.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "baseline.h"
#include "test_noise.h"

#define DAY_US (86400LL * 1000000LL)

typedef struct feed {
	pw_baseline_series s;
	uint64_t rng;
	int64_t t;
	size_t i;
	size_t updated, quarantined, outliers, frozen, unfrozen, excursion;
} feed;

static void feed_init(feed *f, const pw_baseline_params *p)
{
	memset(f, 0, sizeof *f);
	cr_assert_eq(pw_baseline_series_init(&f->s, p), PW_OK);
	f->rng = 42;
	f->t = 1750000000LL * 1000000LL;
}

/* One point at level*(1+sigma*noise); 8 points a day, chip-sets rotating over nchip. */
static void feed_point(feed *f, double level, double sigma, size_t nchip)
{
	pw_baseline_point pt = {
		.value = level * (1.0 + sigma * noise(&f->rng)),
		.ts_us = f->t,
		.chipset = 1000 + f->i % nchip,
	};
	f->t += DAY_US / 8;
	f->i++;
	pw_baseline_event ev[2];
	size_t nev = 0;
	cr_assert_eq(pw_baseline_series_add(&f->s, &pt, ev, &nev), PW_OK);
	for (size_t k = 0; k < nev; k++) {
		switch (ev[k].kind) {
		case PW_BASELINE_EV_UPDATED: f->updated++; break;
		case PW_BASELINE_EV_QUARANTINED: f->quarantined++; break;
		case PW_BASELINE_EV_OUTLIER: f->outliers++; break;
		case PW_BASELINE_EV_FROZEN: f->frozen++; break;
		case PW_BASELINE_EV_UNFROZEN: f->unfrozen++; break;
		case PW_BASELINE_EV_EXCURSION: f->excursion++; break;
		default: break;
		}
	}
}

/* A TPU-class series (default parameters) with an active baseline from n
 * points at 3.90 ms, σ 0.4%, on 3 chip-sets. */
static void feed_steady(feed *f, int n)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	feed_init(f, &p);
	for (int i = 0; i < n; i++)
		feed_point(f, 3.90, 0.004, 3);
	cr_assert_eq(f->s.state, PW_BASELINE_ACTIVE);
}

Test(baseline, window_needs_runs_days_and_chipsets)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	feed f;
	feed_init(&f, &p);
	/* 29 runs: not enough runs, whatever the days */
	for (int i = 0; i < 29; i++)
		feed_point(&f, 3.90, 0.004, 3);
	cr_assert_eq(f.s.state, PW_BASELINE_BASELINING);
	cr_assert_eq(f.updated, 0);
	/* run 30 lands at 29/8 = 3.6 days: still short of 5 days */
	feed_point(&f, 3.90, 0.004, 3);
	cr_assert_eq(f.s.state, PW_BASELINE_BASELINING);
	char need[256];
	pw_baseline_series_describe_need(&f.s, need, sizeof need);
	cr_assert(strstr(need, "more days") != NULL, "%s", need);
	/* 5 days = 40 runs at 8 a day (first at day 0, run 41 at day 5.0) */
	while (f.s.state == PW_BASELINE_BASELINING)
		feed_point(&f, 3.90, 0.004, 3);
	cr_assert_eq(f.i, 41);
	cr_assert_eq(f.s.state, PW_BASELINE_ACTIVE);
	cr_assert_eq(f.updated, 1);
	cr_assert_eq(f.s.current.version, 1);
	cr_assert_eq(f.s.current.n, 41);
	cr_assert_eq(f.s.current.n_chipsets, 3);
	cr_assert_float_eq(f.s.current.median, 3.90, 0.02);
	cr_assert_float_eq(f.s.current.band_hi - f.s.current.median, 3.0 * f.s.current.mad_n, 1e-12);
	pw_baseline_series_release(&f.s);
}

Test(baseline, two_chipsets_never_complete)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	feed f;
	feed_init(&f, &p);
	for (int i = 0; i < 100; i++)
		feed_point(&f, 3.90, 0.004, 2);
	cr_assert_eq(f.s.state, PW_BASELINE_BASELINING);
	cr_assert_eq(f.updated, 0);
	pw_baseline_series_release(&f.s);
}

Test(baseline, noisy_series_is_quarantined_once_and_recovers)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	p.max_window = 60;
	feed f;
	feed_init(&f, &p);
	/* σ 1.2% on a TPU-class platform: 3× the 0.4% norm, above the 2× limit */
	for (int i = 0; i < 60; i++)
		feed_point(&f, 3.90, 0.012, 3);
	cr_assert_eq(f.s.state, PW_BASELINE_QUARANTINED);
	cr_assert_eq(f.quarantined, 1, "one alert, not one per point");
	cr_assert_eq(f.updated, 0);
	/* the harness is fixed: a full window of quiet points brings it back */
	for (int i = 0; i < 60; i++)
		feed_point(&f, 3.90, 0.003, 3);
	cr_assert_eq(f.s.state, PW_BASELINE_ACTIVE);
	cr_assert_eq(f.quarantined, 1);
	cr_assert_gt(f.updated, 0);
	pw_baseline_series_release(&f.s);
}

Test(baseline, gpu_norm_tolerates_two_percent)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, true);
	feed f;
	feed_init(&f, &p);
	for (int i = 0; i < 80; i++)
		feed_point(&f, 12.0, 0.02, 4);
	cr_assert_eq(f.s.state, PW_BASELINE_ACTIVE);
	cr_assert_eq(f.quarantined, 0);
	pw_baseline_series_release(&f.s);
}

Test(baseline, outlier_alerts_and_does_not_widen_band)
{
	feed f;
	feed_steady(&f, 50);
	double mad_before = f.s.current.mad_n;
	size_t len_before = pw_baseline_series_window_len(&f.s);
	/* an 8σ infra hiccup */
	pw_baseline_point spike = {3.90 * (1 + 8 * 0.004), f.t, 1000};
	pw_baseline_event ev[2];
	size_t nev;
	cr_assert_eq(pw_baseline_series_add(&f.s, &spike, ev, &nev), PW_OK);
	cr_assert_eq(nev, 1);
	cr_assert_eq(ev[0].kind, PW_BASELINE_EV_OUTLIER);
	cr_assert_gt(ev[0].z, 5.0);
	cr_assert_eq(pw_baseline_series_window_len(&f.s), len_before, "kept out of the window");
	cr_assert_float_eq(f.s.current.mad_n, mad_before, 1e-15);
	pw_baseline_series_release(&f.s);
}

/* Feeds one point of exactly value measured at ts; returns the kind of its
 * only event (NONE when none). */
static pw_baseline_event_kind feed_at(feed *f, double value, int64_t ts)
{
	pw_baseline_point pt = {value, ts, 1000 + f->i % 3};
	f->i++;
	pw_baseline_event ev[2];
	size_t nev = 0;
	cr_assert_eq(pw_baseline_series_add(&f->s, &pt, ev, &nev), PW_OK);
	return nev > 0 ? ev[0].kind : PW_BASELINE_EV_NONE;
}

/* The same at the feed's clock, which then moves on. */
static pw_baseline_event_kind feed_value(feed *f, double value)
{
	pw_baseline_event_kind k = feed_at(f, value, f->t);
	f->t += DAY_US / 8;
	return k;
}

Test(baseline, a_run_of_outliers_on_one_side_is_one_excursion_and_one_alert)
{
	feed f;
	feed_steady(&f, 50);
	size_t len = pw_baseline_series_window_len(&f.s);
	uint64_t version = f.s.current.version;
	double med = f.s.current.median, hi = med * 1.082, lo = med * 0.92;

	/* the worked example's TPOT step, +8.2%: the first point alerts, the next
	 * ten of the shifted level are the same excursion */
	cr_assert_eq(feed_value(&f, hi), PW_BASELINE_EV_OUTLIER);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(feed_value(&f, hi * (1 + 0.001 * (i % 3))), PW_BASELINE_EV_EXCURSION);
	cr_assert_eq(pw_baseline_series_window_len(&f.s), len, "excursion points kept out");
	cr_assert_eq(f.s.current.version, version, "the baseline stays where it was");
	/* the other side is another excursion */
	cr_assert_eq(feed_value(&f, lo), PW_BASELINE_EV_OUTLIER);
	cr_assert_eq(feed_value(&f, lo), PW_BASELINE_EV_EXCURSION);
	/* a point back within the band ends it: the next outlier alerts again */
	cr_assert_neq(feed_value(&f, med), PW_BASELINE_EV_EXCURSION);
	cr_assert_eq(feed_value(&f, hi), PW_BASELINE_EV_OUTLIER);
	/* a cleared window ends it too */
	pw_baseline_series_clear_window(&f.s);
	cr_assert_eq(f.s.excursion, 0);

	/* the restart path: resumed from the kept-out value, on its side only */
	pw_baseline_series_resume_excursion(&f.s, hi, f.t - DAY_US / 8);
	cr_assert_eq(feed_value(&f, hi), PW_BASELINE_EV_EXCURSION);
	pw_baseline_series_clear_window(&f.s);
	pw_baseline_series_resume_excursion(&f.s, lo, f.t - DAY_US / 8);
	cr_assert_eq(feed_value(&f, hi), PW_BASELINE_EV_OUTLIER);
	pw_baseline_series_release(&f.s);
}

Test(baseline, excursions_follow_measurement_time_not_arrival_order)
{
	feed f;
	feed_steady(&f, 50);
	double med = f.s.current.median, hi = med * 1.082;
	int64_t t = f.t; /* the step: every point measured from t on is at hi */
	int64_t d = DAY_US / 8;

	/* as from two ingester workers: the shifted points arrive out of order */
	cr_assert_eq(feed_at(&f, hi, t + 3 * d), PW_BASELINE_EV_OUTLIER, "the first to arrive alerts");
	cr_assert_eq(feed_at(&f, hi, t + 5 * d), PW_BASELINE_EV_EXCURSION);
	/* an infra hiccup from before the step, with in-band points between it
	 * and the excursion: an alert of its own, and the excursion stands */
	cr_assert_eq(feed_at(&f, hi, t - 20 * d), PW_BASELINE_EV_OUTLIER);
	cr_assert_eq(feed_at(&f, hi, t), PW_BASELINE_EV_EXCURSION, "the step's first point, late");
	cr_assert_eq(feed_at(&f, hi, t + 4 * d), PW_BASELINE_EV_EXCURSION, "inside the excursion");
	/* the level comes back (a revert): an in-band point measured after the
	 * excursion ends it, whenever it arrives */
	cr_assert_neq(feed_at(&f, med, t + 7 * d), PW_BASELINE_EV_EXCURSION);
	cr_assert_eq(feed_at(&f, hi, t + 6 * d), PW_BASELINE_EV_EXCURSION,
	             "still no window point between it and the excursion");
	cr_assert_eq(feed_at(&f, hi, t + 9 * d), PW_BASELINE_EV_OUTLIER, "a new excursion");
	/* a shifted point that joined the window before the baseline existed is
	 * no in-band point: it does not split the excursion */
	pw_baseline_point early = {hi, t + 10 * d, 1000};
	pw_baseline_series_push_quiet(&f.s, &early);
	cr_assert_eq(feed_at(&f, hi, t + 11 * d), PW_BASELINE_EV_EXCURSION);
	pw_baseline_series_release(&f.s);
}

Test(baseline, freeze_rebaselines_from_later_points_only)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	feed f;
	feed_init(&f, &p);
	for (int i = 0; i < 60; i++)
		feed_point(&f, 3.90, 0.004, 3);
	cr_assert_eq(f.s.state, PW_BASELINE_ACTIVE);
	double old_median = f.s.current.median;
	uint64_t old_version = f.s.current.version;

	cr_assert(pw_baseline_series_freeze(&f.s, "fc-1", "recabling cell mtv5-c12"));
	cr_assert_not(pw_baseline_series_freeze(&f.s, "fc-1", "recabling cell mtv5-c12"),
	              "the same event freezes once");
	cr_assert_eq(f.s.state, PW_BASELINE_FROZEN);
	cr_assert_not(f.s.has_baseline);
	cr_assert_eq(pw_baseline_series_window_len(&f.s), 0);
	cr_assert_str_eq(f.s.freeze_event, "fc-1");

	/* after recabling the level is +0.7%; a 0.7% step is ~1.75σ, not an outlier,
	 * and there is no baseline to compare with while frozen anyway */
	size_t updated_before = f.updated;
	while (f.s.state == PW_BASELINE_FROZEN)
		feed_point(&f, 3.90 * 1.007, 0.004, 3);
	cr_assert_eq(f.s.state, PW_BASELINE_ACTIVE);
	cr_assert_eq(f.unfrozen, 1);
	cr_assert_eq(f.updated, updated_before + 1);
	cr_assert_gt(f.s.current.version, old_version);
	cr_assert_eq(f.s.current.n, 41, "re-baseline used only post-change points");
	double shift = f.s.current.median / old_median - 1.0;
	cr_assert_float_eq(shift, 0.007, 0.002, "new baseline +%.3f%% from old", 100 * shift);
	cr_assert_str_eq(f.s.freeze_event, "");
	pw_baseline_series_release(&f.s);
}

/* Issue 17: the requested re-baseline runs of a frozen series are measured
 * within hours; rebaseline_min_days (0) lets them complete the window, while
 * a first window and an active series keep §4.2's 5 days. */
Test(baseline, rebaseline_window_needs_its_own_days_only)
{
	for (int relaxed = 0; relaxed <= 1; relaxed++) {
		pw_baseline_params p;
		pw_baseline_params_default(&p, false);
		cr_assert_lt(p.rebaseline_min_days, 0.0, "the default keeps the days rule of a first window");
		if (relaxed)
			p.rebaseline_min_days = 0.0;
		feed f;
		feed_init(&f, &p);
		for (int i = 0; i < 60; i++)
			feed_point(&f, 3.90, 0.004, 3);
		cr_assert_eq(f.s.state, PW_BASELINE_ACTIVE);
		cr_assert(pw_baseline_series_freeze(&f.s, "fc-1", "recabling"));
		/* 30 runs 15 minutes apart on 3 chip-sets: 7.25 h */
		pw_baseline_event ev[2];
		size_t nev;
		uint64_t rng = 7;
		for (int i = 0; i < 30; i++) {
			pw_baseline_point pt = {.value = 3.90 * 1.007 * (1.0 + 0.004 * noise(&rng)),
			                        .ts_us = f.t + (int64_t)i * 15 * 60 * 1000000LL,
			                        .chipset = 2000 + (uint64_t)(i % 3)};
			cr_assert_eq(pw_baseline_series_add(&f.s, &pt, ev, &nev), PW_OK);
			if (i < 29)
				cr_assert_eq(f.s.state, PW_BASELINE_FROZEN, "complete before 30 runs (%d)", i);
		}
		if (!relaxed) {
			cr_assert_eq(f.s.state, PW_BASELINE_FROZEN, "5 days still needed");
			char need[256];
			pw_baseline_series_describe_need(&f.s, need, sizeof need);
			cr_assert(strstr(need, "4.7 more days"), "%s", need);
		} else {
			cr_assert_eq(f.s.state, PW_BASELINE_ACTIVE);
			cr_assert_eq(nev, 2, "a new version and the unfreeze");
			cr_assert_eq(f.s.current.n, 30);
			cr_assert_eq(f.s.current.n_chipsets, 3);
			double shift = f.s.current.median / 3.90 - 1.0;
			cr_assert_float_eq(shift, 0.007, 0.0015, "+%.3f%%", 100 * shift);
		}
		pw_baseline_series_release(&f.s);
	}
}

Test(baseline, rejects_non_finite_and_bad_params)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	pw_baseline_series s;
	cr_assert_eq(pw_baseline_series_init(&s, &p), PW_OK);
	pw_baseline_point pt = {NAN, 0, 1};
	pw_baseline_event ev[2];
	size_t nev;
	cr_assert_eq(pw_baseline_series_add(&s, &pt, ev, &nev), PW_ERR_INVALID);
	pt.value = INFINITY;
	cr_assert_eq(pw_baseline_series_add(&s, &pt, ev, &nev), PW_ERR_INVALID);
	cr_assert_eq(pw_baseline_series_window_len(&s), 0);
	pw_baseline_series_release(&s);
	pw_baseline_series_release(NULL);

	p.min_runs = p.max_window + 1;
	cr_assert_eq(pw_baseline_series_init(&s, &p), PW_ERR_INVALID);
}

Test(baseline, sliding_window_keeps_max_window)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	p.max_window = 40;
	p.min_runs = 30;
	p.min_days = 1.0;
	feed f;
	feed_init(&f, &p);
	for (int i = 0; i < 200; i++)
		feed_point(&f, 3.90, 0.004, 3);
	cr_assert_eq(pw_baseline_series_window_len(&f.s), 40);
	cr_assert_eq(f.s.current.n, 40);
	/* every point after the window filled produced a new version */
	cr_assert_eq(f.s.current.version, f.updated);
	pw_baseline_series_release(&f.s);
}

Test(baseline, quarantined_version_and_values_stand_while_noisy)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	p.max_window = 60;
	feed f;
	feed_init(&f, &p);
	while (f.s.state != PW_BASELINE_QUARANTINED && f.i < 200)
		feed_point(&f, 3.90, 0.012, 3);
	cr_assert_eq(f.s.state, PW_BASELINE_QUARANTINED);
	pw_baseline_value q = f.s.current;
	for (int i = 0; i < 30; i++)
		feed_point(&f, 3.90, 0.012, 3);
	cr_assert_eq(f.s.state, PW_BASELINE_QUARANTINED);
	/* what was stored and published at the quarantine is still what the series holds */
	cr_assert_eq(f.s.current.version, q.version);
	cr_assert_float_eq(f.s.current.median, q.median, 0.0);
	cr_assert_eq(f.s.current.window_end_us, q.window_end_us);
	pw_baseline_series_release(&f.s);
}

Test(baseline, noisy_rebaseline_ends_the_freeze_in_quarantine)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	feed f;
	feed_init(&f, &p);
	for (int i = 0; i < 60; i++)
		feed_point(&f, 3.90, 0.003, 3);
	cr_assert_eq(f.s.state, PW_BASELINE_ACTIVE);
	cr_assert(pw_baseline_series_freeze(&f.s, "fc-2", "harness perfbench-2.32"));
	while (f.s.state == PW_BASELINE_FROZEN && f.i < 400)
		feed_point(&f, 3.90, 0.015, 3);
	cr_assert_eq(f.s.state, PW_BASELINE_QUARANTINED);
	cr_assert_eq(f.unfrozen, 1, "the re-baseline completed: the freeze ends");
	cr_assert_eq(f.quarantined, 1);
	cr_assert_str_eq(f.s.freeze_event, "");
	pw_baseline_series_release(&f.s);
}

Test(baseline, push_quiet_refills_without_deciding)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	p.max_window = 40;
	pw_baseline_series s;
	cr_assert_eq(pw_baseline_series_init(&s, &p), PW_OK);
	for (int i = 0; i < 50; i++) {
		pw_baseline_point pt = {3.9, 1750000000LL * 1000000LL + i * DAY_US / 4, 1000 + (uint64_t)(i % 3)};
		pw_baseline_series_push_quiet(&s, &pt);
	}
	cr_assert_eq(pw_baseline_series_window_len(&s), 40, "the ring still slides");
	cr_assert_eq(s.state, PW_BASELINE_BASELINING);
	cr_assert_not(s.has_baseline);
	cr_assert_eq(s.current.version, 0);
	/* the next real point decides on the whole re-filled window */
	pw_baseline_point pt = {3.9, 1750000000LL * 1000000LL + 50 * DAY_US / 4, 1000};
	pw_baseline_event ev[2];
	size_t nev = 0;
	cr_assert_eq(pw_baseline_series_add(&s, &pt, ev, &nev), PW_OK);
	cr_assert_eq(nev, 1);
	cr_assert_eq(ev[0].kind, PW_BASELINE_EV_UPDATED);
	cr_assert_eq(s.current.n, 40);
	pw_baseline_series_release(&s);
}

/* An accepted shift's (or a fleet change's) freeze whose re-filled window is
 * already complete: settle ends the freeze without waiting for a new point. */
Test(baseline, settle_ends_a_freeze_whose_refilled_window_is_complete)
{
	pw_baseline_params p;
	pw_baseline_params_default(&p, false);
	p.rebaseline_min_days = 0.0;
	feed f;
	feed_init(&f, &p);
	for (int i = 0; i < 40; i++)
		feed_point(&f, 3.90, 0.004, 3);
	pw_baseline_event ev[2];
	size_t nev = 9;
	cr_assert_eq(pw_baseline_series_settle(&f.s, ev, &nev), PW_OK);
	cr_assert_eq(nev, 0, "an active series has nothing to settle");
	cr_assert(pw_baseline_series_freeze(&f.s, "acc-0123456789abcdef", "accepted shift"));
	uint64_t rng = 11;
	for (int i = 0; i < 30; i++) {
		pw_baseline_point pt = {.value = 4.22 * (1.0 + 0.004 * noise(&rng)),
		                        .ts_us = f.t + (int64_t)i * 15 * 60 * 1000000LL,
		                        .chipset = 3000 + (uint64_t)(i % 3)};
		pw_baseline_series_push_quiet(&f.s, &pt);
		if (i == 28) {
			cr_assert_eq(pw_baseline_series_settle(&f.s, ev, &nev), PW_OK);
			cr_assert_eq(nev, 0, "29 runs are one short");
			cr_assert_eq(f.s.state, PW_BASELINE_FROZEN);
		}
	}
	cr_assert_eq(pw_baseline_series_settle(&f.s, ev, &nev), PW_OK);
	cr_assert_eq(nev, 2);
	cr_assert_eq(ev[0].kind, PW_BASELINE_EV_UNFROZEN);
	cr_assert_eq(ev[1].kind, PW_BASELINE_EV_UPDATED);
	cr_assert_eq(f.s.state, PW_BASELINE_ACTIVE);
	cr_assert_float_eq(f.s.current.median, 4.22, 0.02);
	cr_assert_eq(f.s.current.n, 30);
	cr_assert_eq(pw_baseline_series_settle(&f.s, ev, &nev), PW_OK);
	cr_assert_eq(nev, 0, "settled once");
	pw_baseline_series_release(&f.s);
}
