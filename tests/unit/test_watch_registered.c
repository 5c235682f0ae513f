/*
 * test_watch_registered.c: the watcher judges a series with a registered
 * change as observed − expected (services/watcher/watch.h
 * pw_watch_series_register; the rule is common/pw_expected.h's, the gate's).
 *
 * Generated nightly series (σ 0.4%, the deterministic noise of
 * test_noise.h) of chat-8b's TPOT, lower is better, top tier:
 *   - a registered −4% that arrives as registered is one validated win and
 *     no investigation; unregistered, the same data is an improvement to
 *     investigate (§9);
 *   - a +4.17% regression three nightlies after a registered −4% win nets the
 *     series out (the level a week later is the level before the win): the
 *     watcher without the registration reports no regression, with it one, at
 *     the regression's own nightly and CL range, paged;
 *   - the registration arriving after the win was reported (a rebuild) revises
 *     that report into the validated win;
 *   - both CLs in one nightly: a shortfall of the registration (queued);
 *     twice the registered change: an overshoot to investigate.
 * Each test prints its figures.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "watch.h"
#include "test_noise.h"

#define DAY_US (86400LL * 1000000LL)
#define T0_US (1781049600LL * 1000000LL) /* 2026-06-10 */
#define N 90
#define WIN_AT 60
#define LEVEL 3.90
#define SIGMA 0.004

/* Nightly k: head CL 7840000 + 38k (38 CLs a day, as the worked example). */
static pw_watch_build nightly(int k)
{
	pw_watch_build b;
	memset(&b, 0, sizeof b);
	snprintf(b.build_id, sizeof b.build_id, "nightly-%03d", k);
	b.cl_number = 7840000 + 38LL * k;
	snprintf(b.cl, sizeof b.cl, "cl/%lld", (long long)b.cl_number);
	b.ts_us = T0_US + (int64_t)k * DAY_US;
	return b;
}

/* A CL that lands in nightly k (its head is the last CL of the day). */
static int64_t cl_in(int k)
{
	return 7840000 + 38LL * k - 17;
}

static pw_watch_series *new_series(void)
{
	pw_watch_params p;
	pw_watch_params_default(&p);
	char err[256];
	pw_watch_series *s = pw_watch_series_new(&p, true, true, err, sizeof err);
	cr_assert_not_null(s, "%s", err);
	return s;
}

static void do_register(pw_watch_series *s, int k, double pct)
{
	char cl[32], err[256];
	snprintf(cl, sizeof cl, "cl/%lld", (long long)cl_in(k));
	cr_assert_eq(pw_watch_series_register(s, cl, cl_in(k), pct, false, err, sizeof err), PW_OK,
	             "%s", err);
}

/* The level of nightly k: LEVEL, times (1 + win) from win_at, times (1 + reg) from reg_at. */
typedef struct shape {
	int win_at;
	double win;
	int reg_at;
	double reg;
} shape;

static double level_at(const shape *sh, int k)
{
	double v = LEVEL;
	if (sh->win_at >= 0 && k >= sh->win_at)
		v *= 1.0 + sh->win;
	if (sh->reg_at >= 0 && k >= sh->reg_at)
		v *= 1.0 + sh->reg;
	return v;
}

typedef struct found {
	pw_watch_event ev[32];
	size_t n;
	int at[32]; /* the nightly each was reported at */
} found;

static void run(pw_watch_series *s, const shape *sh, uint64_t seed, found *f)
{
	uint64_t rng = seed;
	f->n = 0;
	for (int k = 0; k < N; k++) {
		pw_watch_build b = nightly(k);
		pw_watch_event ev[8];
		size_t nev = 0;
		char err[256];
		cr_assert_eq(pw_watch_series_append(s, level_at(sh, k) * (1 + SIGMA * noise(&rng)), &b,
		                                    ev, 8, &nev, err, sizeof err),
		             PW_OK, "%s", err);
		for (size_t j = 0; j < nev && f->n < 32; j++) {
			f->at[f->n] = k;
			f->ev[f->n++] = ev[j];
		}
	}
}

static void print(const char *what, const found *f)
{
	printf("%s: %zu findings\n", what, f->n);
	for (size_t i = 0; i < f->n; i++) {
		const pw_watch_event *e = &f->ev[i];
		printf("  at nightly %d: %s %s %s, %s..%s (%s..%s), measured %.4f -> %.4f (%+.2f%%), "
		       "observed - expected %.4f -> %.4f (%+.2f%%), registered %s %+.2f%% %s, routing %s\n",
		       f->at[i], pw_watch_stage_name(e->stage), pw_watch_annotation_name(e->annotation),
		       e->regression ? "regression" : "improvement", e->last_clean.build_id,
		       e->first_shifted.build_id, e->last_clean.cl, e->first_shifted.cl, e->level_before,
		       e->level_after, 100.0 * (e->level_after / e->level_before - 1.0), e->cp.before,
		       e->cp.after, 100.0 * (e->cp.after / e->cp.before - 1.0),
		       e->registered_cl[0] ? e->registered_cl : "-", e->expected_pct,
		       e->registered_cl[0] ? pw_expected_outcome_name(e->expected) : "",
		       pw_watch_routing_name(e->routing));
	}
}

/* Findings that would be investigated as an unregistered improvement (§9). */
static size_t investigations(const found *f)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += !f->ev[i].regression && f->ev[i].annotation == PW_WATCH_ANNOTATION_NONE &&
		     f->ev[i].stage != PW_WATCH_STAGE_WITHDRAWN;
	return n;
}

/* Regressions reported (provisional or confirmed at once; PELT's confirmation of
 * a provisional one is the same finding), annotation none. */
static const pw_watch_event *regression(const found *f, size_t *count)
{
	const pw_watch_event *first = NULL;
	*count = 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->ev[i].regression && f->ev[i].annotation == PW_WATCH_ANNOTATION_NONE &&
		    f->ev[i].stage != PW_WATCH_STAGE_WITHDRAWN &&
		    f->ev[i].stage != PW_WATCH_STAGE_CONFIRMING) {
			if (!first)
				first = &f->ev[i];
			(*count)++;
		}
	return first;
}

static const pw_watch_event *validated(const found *f, size_t *count)
{
	const pw_watch_event *first = NULL;
	*count = 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->ev[i].stage == PW_WATCH_STAGE_REGISTERED) {
			if (!first)
				first = &f->ev[i];
			(*count)++;
		}
	return first;
}

Test(watch_registered, a_registered_win_that_arrives_is_validated_not_investigated)
{
	shape sh = {.win_at = WIN_AT, .win = -0.04, .reg_at = -1};
	for (uint64_t seed = 1; seed <= 6; seed++) {
		pw_watch_series *plain = new_series(), *reg = new_series();
		do_register(reg, WIN_AT, -4.0);
		found a, b;
		run(plain, &sh, seed, &a);
		run(reg, &sh, seed, &b);
		if (seed == 1) {
			print("unregistered -4% win", &a);
			print("registered -4% win", &b);
		}
		cr_assert_geq(investigations(&a), 1, "seed %llu: unregistered, the win is investigated",
		              (unsigned long long)seed);
		cr_assert_eq(investigations(&b), 0, "seed %llu: registered, no investigation",
		             (unsigned long long)seed);
		size_t nv = 0, nr = 0;
		const pw_watch_event *v = validated(&b, &nv);
		cr_assert_eq(nv, 1, "seed %llu: one validated win, got %zu", (unsigned long long)seed, nv);
		cr_assert_str_eq(v->first_shifted.build_id, "nightly-060");
		cr_assert_str_eq(v->last_clean.build_id, "nightly-059");
		cr_assert_eq(v->annotation, PW_WATCH_ANNOTATION_REGISTERED);
		cr_assert_eq(v->expected, PW_EXPECTED_VALIDATED);
		cr_assert_eq(v->routing, PW_WATCH_ROUTE_NONE, "a validated win pages nobody");
		cr_assert(!v->revises);
		cr_assert_float_eq(v->expected_pct, -4.0, 1e-9);
		cr_assert_lt(fabs(100.0 * (v->level_after / v->level_before - 1.0) + 4.0), 0.6,
		             "measured %.3f -> %.3f", v->level_before, v->level_after);
		regression(&b, &nr);
		cr_assert_eq(nr, 0, "seed %llu: no regression", (unsigned long long)seed);
		pw_watch_series_free(plain);
		pw_watch_series_free(reg);
	}
}

Test(watch_registered, a_regression_the_same_week_as_a_registered_win_is_found)
{
	/* −4% at nightly 60 (registered), +4.17% at nightly 63: from 63 on the
	 * series is back where it was, 3.90 */
	shape sh = {.win_at = WIN_AT, .win = -0.04, .reg_at = WIN_AT + 3, .reg = 1.0 / 0.96 - 1.0};
	for (uint64_t seed = 1; seed <= 6; seed++) {
		pw_watch_series *plain = new_series(), *reg = new_series();
		do_register(reg, WIN_AT, -4.0);
		found a, b;
		run(plain, &sh, seed, &a);
		run(reg, &sh, seed, &b);
		if (seed == 1) {
			print("unregistered: -4% win then +4.17% regression 3 nightlies later", &a);
			print("registered -4% win, +4.17% regression 3 nightlies later", &b);
		}
		size_t na = 0, nb = 0;
		regression(&a, &na);
		cr_assert_eq(na, 0, "seed %llu: the series nets out, no regression without the "
		             "registration", (unsigned long long)seed);
		const pw_watch_event *r = regression(&b, &nb);
		cr_assert_eq(nb, 1, "seed %llu: one regression with the registration, got %zu",
		             (unsigned long long)seed, nb);
		cr_assert_str_eq(r->first_shifted.build_id, "nightly-063", "seed %llu",
		                 (unsigned long long)seed);
		cr_assert_str_eq(r->last_clean.build_id, "nightly-062");
		cr_assert_eq(r->routing, PW_WATCH_ROUTE_PAGE, "a top-tier regression pages");
		/* measured: from the win's level back to the old one; observed − expected the same step */
		double measured = 100.0 * (r->level_after / r->level_before - 1.0);
		double excess = 100.0 * (r->cp.after / r->cp.before - 1.0);
		cr_assert_lt(fabs(measured - 4.17), 0.6, "measured %+.2f%%", measured);
		cr_assert_lt(fabs(excess - 4.17), 0.6, "observed - expected %+.2f%%", excess);
		cr_assert_lt(fabs(r->cp.before - LEVEL), 0.02, "observed - expected before: %.4f",
		             r->cp.before);
		cr_assert_eq(r->registered_cl[0], '\0', "the registered CL is not in the regression's range");
		cr_assert_eq(investigations(&b), 0, "seed %llu", (unsigned long long)seed);
		/* and the win itself arrived as registered for three nightlies */
		size_t nv = 0;
		const pw_watch_event *v = validated(&b, &nv);
		cr_assert_eq(nv, 1, "seed %llu: the win validated, got %zu", (unsigned long long)seed, nv);
		cr_assert_str_eq(v->first_shifted.build_id, "nightly-060");
		pw_watch_series_free(plain);
		pw_watch_series_free(reg);
	}
}

/* The rebuild after a registration arrived late: the history loaded with it,
 * the early rule's report of the win (stored before the registration) marked
 * provisional; the scan revises it into the validated win. */
Test(watch_registered, a_late_registration_revises_the_report_of_the_win)
{
	shape sh = {.win_at = WIN_AT, .win = -0.04, .reg_at = -1};
	pw_watch_series *before = new_series();
	found a;
	uint64_t rng = 5;
	a.n = 0;
	/* the watcher without the registration, up to nightly 64 */
	for (int k = 0; k < 65; k++) {
		pw_watch_build b = nightly(k);
		pw_watch_event ev[8];
		size_t nev = 0;
		char err[256];
		cr_assert_eq(pw_watch_series_append(before, level_at(&sh, k) * (1 + SIGMA * noise(&rng)),
		                                    &b, ev, 8, &nev, err, sizeof err),
		             PW_OK);
		for (size_t j = 0; j < nev && a.n < 32; j++) {
			a.at[a.n] = k;
			a.ev[a.n++] = ev[j];
		}
	}
	print("before the registration", &a);
	cr_assert_geq(a.n, 1);
	const pw_watch_event *rep = &a.ev[0];
	cr_assert_eq(rep->stage, PW_WATCH_STAGE_PROVISIONAL);
	cr_assert(!rep->regression);
	/* the rebuild: registration, points, the stored provisional report, one scan */
	pw_watch_series *s = new_series();
	do_register(s, WIN_AT, -4.0);
	rng = 5;
	char err[256];
	for (int k = 0; k < 65; k++) {
		pw_watch_build b = nightly(k);
		cr_assert_eq(pw_watch_series_load(s, level_at(&sh, k) * (1 + SIGMA * noise(&rng)), &b,
		                                  err, sizeof err),
		             PW_OK);
	}
	pw_watch_series_mark_provisional(s, rep->first_shifted.build_id, rep->cp.before,
	                                  rep->cp.after, rep->cp.p);
	found b;
	b.n = 0;
	pw_watch_event ev[16];
	size_t nev = 0;
	cr_assert_eq(pw_watch_series_scan_loaded(s, 65, ev, 16, &nev, err, sizeof err), PW_OK);
	for (size_t j = 0; j < nev; j++) {
		b.at[b.n] = 64;
		b.ev[b.n++] = ev[j];
	}
	print("rebuilt with the registration", &b);
	size_t nv = 0;
	const pw_watch_event *v = validated(&b, &nv);
	cr_assert_eq(nv, 1);
	cr_assert(v->revises, "the validated win replaces the earlier report");
	cr_assert_str_eq(v->first_shifted.build_id, rep->first_shifted.build_id);
	cr_assert_eq(investigations(&b), 0);
	/* nothing else comes of it: 25 more nightlies, no withdrawal, no shift */
	found c;
	c.n = 0;
	rng = 99;
	for (int k = 65; k < N; k++) {
		pw_watch_build bb = nightly(k);
		cr_assert_eq(pw_watch_series_append(s, level_at(&sh, k) * (1 + SIGMA * noise(&rng)), &bb,
		                                    ev, 16, &nev, err, sizeof err),
		             PW_OK);
		for (size_t j = 0; j < nev && c.n < 32; j++) {
			c.at[c.n] = k;
			c.ev[c.n++] = ev[j];
		}
	}
	print("after the rebuild", &c);
	cr_assert_eq(c.n, 0, "the revised report is not withdrawn later, and nothing else moved");
	pw_watch_series_free(before);
	pw_watch_series_free(s);
}

/* The late registration over a netted week: the rebuild finds the regression
 * three nightlies after the reported win as a shift of its own (not PELT's
 * confirmation of the win's report, which lies within the same-shift slack
 * but the other way), and revises the win's report into the validated win. */
#define LOADED 75
Test(watch_registered, a_late_registration_over_a_netted_week_finds_the_regression)
{
	shape sh = {.win_at = WIN_AT, .win = -0.04, .reg_at = WIN_AT + 3, .reg = 1.0 / 0.96 - 1.0};
	pw_watch_series *before = new_series();
	found a;
	uint64_t rng = 8;
	a.n = 0;
	char err[256];
	pw_watch_event ev[16];
	size_t nev = 0;
	for (int k = 0; k < 70; k++) {
		pw_watch_build b = nightly(k);
		if (k >= 67)
			break; /* the registration arrives after nightly 66 */
		cr_assert_eq(pw_watch_series_append(before, level_at(&sh, k) * (1 + SIGMA * noise(&rng)),
		                                    &b, ev, 16, &nev, err, sizeof err),
		             PW_OK);
		for (size_t j = 0; j < nev && a.n < 32; j++) {
			a.at[a.n] = k;
			a.ev[a.n++] = ev[j];
		}
	}
	print("netted week, before the registration", &a);
	size_t nr = 0;
	regression(&a, &nr);
	cr_assert_eq(nr, 0, "without the registration the week nets out");
	cr_assert_geq(a.n, 1);
	const pw_watch_event *rep = &a.ev[0];
	cr_assert(!rep->regression && rep->stage == PW_WATCH_STAGE_PROVISIONAL);
	pw_watch_series *s = new_series();
	do_register(s, WIN_AT, -4.0);
	rng = 8;
	for (int k = 0; k < LOADED; k++) {
		pw_watch_build b = nightly(k);
		cr_assert_eq(pw_watch_series_load(s, level_at(&sh, k) * (1 + SIGMA * noise(&rng)), &b,
		                                  err, sizeof err),
		             PW_OK);
	}
	pw_watch_series_mark_provisional(s, rep->first_shifted.build_id, rep->level_before,
	                                  rep->level_after, rep->cp.p);
	found b;
	b.n = 0;
	/* the load's scan, then the next nightly (the rebuild's judgement may
	 * wait for the regression's report to cut its candidate) */
	cr_assert_eq(pw_watch_series_scan_loaded(s, LOADED, ev, 16, &nev, err, sizeof err), PW_OK);
	for (size_t j = 0; j < nev; j++) {
		b.at[b.n] = LOADED - 1;
		b.ev[b.n++] = ev[j];
	}
	/* PELT places the regression in the load's own scan (seven nightlies after it) */
	pw_watch_build b70 = nightly(LOADED);
	cr_assert_eq(pw_watch_series_append(s, level_at(&sh, 70), &b70, ev, 16, &nev, err, sizeof err),
	             PW_OK);
	for (size_t j = 0; j < nev; j++) {
		b.at[b.n] = LOADED;
		b.ev[b.n++] = ev[j];
	}
	print("netted week, rebuilt with the registration", &b);
	const pw_watch_event *r = regression(&b, &nr);
	cr_assert_eq(nr, 1, "the regression, got %zu", nr);
	cr_assert_str_eq(r->first_shifted.build_id, "nightly-063");
	cr_assert_eq(r->annotation, PW_WATCH_ANNOTATION_NONE);
	size_t nv = 0;
	const pw_watch_event *v = validated(&b, &nv);
	cr_assert_eq(nv, 1, "the win validated");
	cr_assert(v->revises);
	cr_assert_str_eq(v->first_shifted.build_id, rep->first_shifted.build_id);
	for (size_t i = 0; i < b.n; i++)
		cr_assert(b.ev[i].stage != PW_WATCH_STAGE_CONFIRMING ||
		              strcmp(b.ev[i].first_shifted.build_id, rep->first_shifted.build_id) != 0,
		          "nothing confirms the win's report as a shift");
	pw_watch_series_free(before);
	pw_watch_series_free(s);
}

#undef LOADED

Test(watch_registered, one_nightly_with_both_is_a_shortfall_and_twice_is_an_overshoot)
{
	/* the win and a regression of its size in the same nightly: the series does
	 * not move, observed − expected +4.17% over the registered CL */
	shape both = {.win_at = WIN_AT, .win = -0.04, .reg_at = WIN_AT, .reg = 1.0 / 0.96 - 1.0};
	pw_watch_series *s = new_series();
	do_register(s, WIN_AT, -4.0);
	found f;
	run(s, &both, 3, &f);
	print("registered -4% and a +4.17% regression in one nightly", &f);
	size_t n = 0;
	const pw_watch_event *e = NULL;
	for (size_t i = 0; i < f.n; i++)
		if (f.ev[i].annotation == PW_WATCH_ANNOTATION_REGISTERED &&
		    f.ev[i].stage != PW_WATCH_STAGE_WITHDRAWN) {
			e = e ? e : &f.ev[i];
			n++;
		}
	cr_assert_geq(n, 1);
	cr_assert_eq(e->expected, PW_EXPECTED_SHORTFALL, "%s", pw_expected_outcome_name(e->expected));
	cr_assert(e->regression, "observed − expected got worse");
	cr_assert_eq(e->routing, PW_WATCH_ROUTE_QUEUE, "a shortfall is queued, not paged");
	cr_assert_str_eq(e->first_shifted.build_id, "nightly-060");
	pw_watch_series_free(s);

	shape twice = {.win_at = WIN_AT, .win = -0.08, .reg_at = -1};
	s = new_series();
	do_register(s, WIN_AT, -4.0);
	run(s, &twice, 4, &f);
	print("registered -4%, delivered -8%", &f);
	e = NULL;
	for (size_t i = 0; i < f.n && !e; i++)
		if (f.ev[i].annotation == PW_WATCH_ANNOTATION_REGISTERED)
			e = &f.ev[i];
	cr_assert_not_null(e);
	cr_assert_eq(e->expected, PW_EXPECTED_OVERSHOOT, "%s", pw_expected_outcome_name(e->expected));
	cr_assert(!e->regression);
	cr_assert_eq(e->routing, PW_WATCH_ROUTE_QUEUE);
	cr_assert_eq(investigations(&f), 0, "the overshoot is the registration's finding");
	pw_watch_series_free(s);
}

Test(watch_registered, registrations_are_checked)
{
	pw_watch_series *s = new_series();
	char err[256];
	cr_assert_eq(pw_watch_series_register(s, "cl/1", 1, -100.0, false, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_watch_series_register(s, "cl/1", 1, NAN, false, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_watch_series_register(s, "cl/1", 1, -4.0, false, err, sizeof err), PW_OK);
	cr_assert(pw_watch_series_registered(s, 1, -4.0));
	cr_assert_eq(pw_watch_series_register(s, "cl/1", 1, -3.0, false, err, sizeof err), PW_OK,
	             "the same CL again replaces it");
	cr_assert(!pw_watch_series_registered(s, 1, -4.0));
	cr_assert(pw_watch_series_registered(s, 1, -3.0));
	for (int i = 2; i <= PW_WATCH_MAX_REGISTERED; i++)
		cr_assert_eq(pw_watch_series_register(s, "cl/x", i, 1.0, false, err, sizeof err), PW_OK);
	cr_assert_eq(pw_watch_series_register(s, "cl/y", 999, 1.0, false, err, sizeof err),
	             PW_ERR_INVALID, "at most PW_WATCH_MAX_REGISTERED");
	pw_watch_build b = nightly(0);
	cr_assert_eq(pw_watch_series_load(s, 1.0, &b, err, sizeof err), PW_OK);
	cr_assert_eq(pw_watch_series_register(s, "cl/2", 2, 1.0, false, err, sizeof err),
	             PW_ERR_INVALID, "after the points: the series is rebuilt instead");
	pw_watch_series_free(s);
}
