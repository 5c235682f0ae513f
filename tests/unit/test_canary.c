/*
 * test_canary.c: the canary service's decisions (services/canary/canary.h):
 * the family rule over its three sequences — ROLLBACK at the first window a
 * metric's sequence says REGRESSION (even one that had cleared), PROMOTE at
 * the window the last metric first says NO_REGRESSION, HOLD, and HOLD
 * inconclusive and final once the horizon passed — checked against pw_cs
 * sequences run alone on the same pairs; the input it refuses without
 * changing anything; that two families fed the same windows agree bit for
 * bit (what the service's replay after a restart relies on); per-family MDE
 * configuration. The sequences themselves are pw_cs's, tested against scipy
 * in test_canary_cs.c. The scenario test runs the windows pw-sim canary
 * publishes (sim_canary, family i's seed 1000·seed + i).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "canary.h"
#include "sim_canary.h"
#include "sim_rng.h"

#define MIN_US 60000000LL
#define T0_US 1782118800000000LL /* 2026-06-22T09:00:00Z */

static void family_default(pw_canary_family *f, bool gpu, int64_t horizon_us)
{
	pw_canary_params p;
	pw_canary_params_default(&p);
	double mde = pw_canary_mde_pct(&p, "fam", gpu);
	cr_assert_eq(pw_canary_family_init(f, p.alpha, mde, p.tolerance_frac * mde, p.pilot_windows,
	                                   horizon_us ? horizon_us : p.horizon_us),
	             PW_OK);
}

/* A lone pw_cs with the family's options for metric m. */
static pw_cs *lone(const pw_canary_family *f, pw_canary_metric m)
{
	pw_cs_opts o;
	pw_cs_opts_init(&o);
	o.direction = pw_canary_metric_direction(m);
	o.alpha = f->alpha;
	o.mde_pct = f->mde_pct;
	o.tolerance_pct = f->tolerance_pct;
	o.pilot_windows = f->pilot_windows;
	pw_cs *cs;
	cr_assert_eq(pw_cs_new(&o, &cs), PW_OK);
	return cs;
}

/* ---- the scenario pw-sim canary publishes ---- */

/* Runs windows 0..n of a simulated family through f; the window index that decided, or -1. */
static long run_sim(pw_canary_family *f, const pw_sim_canary_params *sp, uint64_t seed, long n)
{
	long at = -1;
	for (long w = 0; w < n; w++) {
		pw_sim_canary_window win;
		pw_sim_canary_window_make(sp, seed, (uint32_t)w, &win);
		const double *pairs[3] = {win.tpot_ms, win.ttft_ms, win.goodput_tok_s_chip};
		for (int m = 0; m < PW_CANARY_NMETRICS; m++) {
			bool decided;
			cr_assert_eq(pw_canary_family_add(f, (pw_canary_metric)m, T0_US + w * 5 * MIN_US, 300,
			                                  pairs[m][PW_SIM_CANARY_CANARY], pairs[m][PW_SIM_CANARY_BASELINE],
			                                  &decided),
			             PW_OK);
			if (decided) {
				cr_assert_eq(at, -1, "decided twice");
				at = w;
			}
		}
	}
	return at;
}

/*
 * Eight runs of the scenario (48 h each): the TPU family with +1% TPOT is
 * rolled back on TPOT or on goodput (goodput falls as TPOT rises) with the
 * interval above the tolerance; the null TPU and GPU families are promoted
 * with every metric cleared and the deciding interval below the MDE. The
 * bench (docs/canary.md §7) has the rates over 1,000 trials; these runs are
 * the seeds pw-sim canary uses (1..8).
 */
Test(canary_rule, simulated_scenario_decides_each_family)
{
	for (uint64_t seed = 1; seed <= 8; seed++) {
		for (int kind = 0; kind < PW_SIM_CANARY_FAMILIES; kind++) {
			pw_sim_canary_params sp;
			pw_sim_canary_scenario_params((size_t)kind, &sp);
			bool regressed = pw_sim_canary_scenario[kind].tpot_regression > 0;
			pw_canary_family f;
			family_default(&f, pw_sim_canary_scenario[kind].gpu, 0);
			long at = run_sim(&f, &sp, pw_sim_canary_scenario_seed(seed, (size_t)kind), 576);
			cr_assert(f.final && at > 0, "seed %llu family %d undecided in 48 h", (unsigned long long)seed, kind);
			cr_assert(!f.inconclusive);
			cr_assert_eq(f.decided_start_us, T0_US + at * 5 * MIN_US);
			if (regressed) {
				cr_expect_eq(f.decision, PW_CANARY_ROLLBACK, "seed %llu: %s", (unsigned long long)seed,
				             pw_canary_decision_name(f.decision));
				cr_expect(f.metric == PW_CANARY_TPOT || f.metric == PW_CANARY_GOODPUT);
				double tol = f.metric == PW_CANARY_GOODPUT ? -f.tolerance_pct : f.tolerance_pct;
				cr_expect(f.metric == PW_CANARY_GOODPUT ? f.decided.hi_pct < tol : f.decided.lo_pct > tol);
			} else {
				cr_expect_eq(f.decision, PW_CANARY_PROMOTE, "seed %llu family %d: %s", (unsigned long long)seed, kind,
				             pw_canary_decision_name(f.decision));
				for (int m = 0; m < PW_CANARY_NMETRICS; m++)
					cr_expect_eq(f.m[m].verdict, PW_CS_NO_REGRESSION);
				cr_expect_eq(f.decided.decision, PW_CS_NO_REGRESSION);
			}
			pw_canary_family_release(&f);
		}
	}
}

/* ---- the rule against lone sequences ---- */

/* Window w's pair of metric m: level × (1 + effect) × exp(noise·z) on the canary, level × exp(noise·z') on the baseline. */
typedef struct gen {
	double effect[PW_CANARY_NMETRICS], noise[PW_CANARY_NMETRICS];
	long shift_at;       /* from this window on, effect_after replaces effect (-1: never) */
	double effect_after[PW_CANARY_NMETRICS];
	uint64_t seed;
} gen;

static void gen_pair(const gen *g, long w, int m, double *c, double *b)
{
	pw_sim_rng r;
	pw_sim_rng_init(&r, g->seed * 1000003 + (uint64_t)w * 7 + (uint64_t)m);
	double level = m == PW_CANARY_GOODPUT ? 4000.0 : m == PW_CANARY_TTFT ? 180.0 : 3.9;
	double e = g->shift_at >= 0 && w >= g->shift_at ? g->effect_after[m] : g->effect[m];
	*c = level * (1 + e) * exp(g->noise[m] * pw_sim_rng_normal(&r));
	*b = level * exp(g->noise[m] * pw_sim_rng_normal(&r));
}

/*
 * Feeds n windows of g to f (metrics in order each window) and to a lone
 * pw_cs per metric; first_reg[m], first_clear[m] the window index where the
 * lone sequence first said REGRESSION / NO_REGRESSION (-1: never), at the
 * window index that made f final (-1: none).
 */
static long run_gen(pw_canary_family *f, const gen *g, long n, long first_reg[3], long first_clear[3])
{
	pw_cs *cs[3];
	long at = -1;
	for (int m = 0; m < 3; m++) {
		cs[m] = lone(f, (pw_canary_metric)m);
		first_reg[m] = first_clear[m] = -1;
	}
	for (long w = 0; w < n; w++)
		for (int m = 0; m < 3; m++) {
			double c, b;
			gen_pair(g, w, m, &c, &b);
			pw_cs_result r;
			cr_assert_eq(pw_cs_add(cs[m], c, b, &r), PW_OK);
			if (r.decision == PW_CS_REGRESSION && first_reg[m] < 0)
				first_reg[m] = w;
			if (r.decision == PW_CS_NO_REGRESSION && first_clear[m] < 0)
				first_clear[m] = w;
			bool decided;
			cr_assert_eq(pw_canary_family_add(f, (pw_canary_metric)m, T0_US + w * 5 * MIN_US, 300, c, b, &decided),
			             PW_OK);
			if (decided)
				at = w;
		}
	for (int m = 0; m < 3; m++)
		pw_cs_free(cs[m]);
	return at;
}

Test(canary_rule, rollback_at_the_first_regression_of_any_metric)
{
	gen g = {.effect = {0.05, 0, 0}, .noise = {0.01, 0.01, 0.01}, .shift_at = -1, .seed = 11};
	pw_canary_family f;
	family_default(&f, false, 0);
	long reg[3], clr[3];
	long at = run_gen(&f, &g, 200, reg, clr);
	cr_assert_geq(reg[PW_CANARY_TPOT], 12, "the pilot decides nothing");
	cr_assert_eq(f.decision, PW_CANARY_ROLLBACK);
	cr_assert_eq(f.metric, PW_CANARY_TPOT);
	cr_assert_eq(at, reg[PW_CANARY_TPOT], "rolled back at window %ld, TPOT said REGRESSION at %ld", at,
	             reg[PW_CANARY_TPOT]);
	cr_assert_gt(f.decided.lo_pct, f.tolerance_pct);
	cr_assert_eq(f.decided_start_us, T0_US + at * 5 * MIN_US);
	pw_canary_family_release(&f);
}

Test(canary_rule, promote_when_the_last_metric_clears)
{
	/* TTFT noisier than the others: it clears last */
	gen g = {.effect = {0, 0, 0}, .noise = {0.006, 0.02, 0.004}, .shift_at = -1, .seed = 12};
	pw_canary_family f;
	family_default(&f, false, 0);
	long reg[3], clr[3];
	long at = run_gen(&f, &g, 400, reg, clr);
	long last = -1;
	int last_m = -1;
	for (int m = 0; m < 3; m++) {
		cr_assert_eq(reg[m], -1, "a null metric said REGRESSION");
		cr_assert_geq(clr[m], 12);
		if (clr[m] > last) {
			last = clr[m];
			last_m = m;
		}
	}
	cr_assert_eq(f.decision, PW_CANARY_PROMOTE);
	cr_assert_eq(at, last, "promoted at window %ld, the last metric cleared at %ld", at, last);
	cr_assert_eq(f.metric, (pw_canary_metric)last_m);
	cr_assert_eq(f.decided.decision, PW_CS_NO_REGRESSION);
	cr_assert_lt(f.decided.hi_pct, f.mde_pct);
	/* undecided the window before */
	pw_canary_family h;
	family_default(&h, false, 0);
	cr_assert_eq(run_gen(&h, &g, last, reg, clr), -1);
	cr_assert_eq(h.decision, PW_CANARY_HOLD);
	cr_assert(!h.final);
	pw_canary_family_release(&h);
	pw_canary_family_release(&f);
}

Test(canary_rule, a_cleared_metric_that_regresses_still_rolls_back)
{
	/* TPOT clears, then a +8% step; TTFT too noisy to clear (±25%) keeps the family undecided */
	gen g = {.effect = {0, 0, 0}, .noise = {0.005, 0.25, 0.004}, .shift_at = 80, .effect_after = {0.08, 0, 0},
	         .seed = 13};
	pw_canary_family f;
	family_default(&f, false, 0);
	long reg[3], clr[3];
	long at = run_gen(&f, &g, 400, reg, clr);
	cr_assert_geq(clr[PW_CANARY_TPOT], 0);
	cr_assert_lt(clr[PW_CANARY_TPOT], 80, "TPOT cleared before the step");
	cr_assert_eq(clr[PW_CANARY_TTFT], -1, "TTFT never cleared");
	cr_assert_gt(reg[PW_CANARY_TPOT], 80);
	cr_assert_eq(f.decision, PW_CANARY_ROLLBACK);
	cr_assert_eq(f.metric, PW_CANARY_TPOT);
	cr_assert_eq(at, reg[PW_CANARY_TPOT]);
	cr_assert_eq(f.m[PW_CANARY_TPOT].verdict, PW_CS_NO_REGRESSION, "the first verdict is kept");
	pw_canary_family_release(&f);
}

Test(canary_rule, undecided_at_the_horizon_is_inconclusive_and_final)
{
	gen g = {.effect = {0, 0, 0}, .noise = {0.005, 0.25, 0.004}, .shift_at = -1, .seed = 14};
	pw_canary_family f;
	family_default(&f, false, 3 * 60 * MIN_US); /* 3 h: 36 windows */
	long reg[3], clr[3];
	long at = run_gen(&f, &g, 100, reg, clr);
	cr_assert_eq(clr[PW_CANARY_TTFT], -1);
	cr_assert(f.final && f.inconclusive);
	cr_assert_eq(f.decision, PW_CANARY_HOLD);
	cr_assert_eq(at, 35, "the window ending 3 h after the first starts (index 35), got %ld", at);
	cr_assert_eq(f.metric, PW_CANARY_TTFT, "the metric that did not clear");
	cr_assert_eq(f.windows, 300u, "windows after the decision are still taken");
	pw_canary_family_release(&f);
}

/* ---- input ---- */

Test(canary_input, refused_windows_change_nothing)
{
	pw_canary_family f;
	family_default(&f, false, 0);
	cr_assert_eq(pw_canary_family_add(&f, PW_CANARY_TPOT, T0_US, 300, 3.9, 3.9, NULL), PW_OK);
	pw_canary_family before = f;
	static const double bad[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, -3.9};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_expect_eq(pw_canary_family_add(&f, PW_CANARY_TPOT, T0_US + 5 * MIN_US, 300, bad[i], 3.9, NULL),
		             PW_ERR_INVALID, "canary %g", bad[i]);
		cr_expect_eq(pw_canary_family_add(&f, PW_CANARY_TPOT, T0_US + 5 * MIN_US, 300, 3.9, bad[i], NULL),
		             PW_ERR_INVALID, "baseline %g", bad[i]);
	}
	cr_expect_eq(pw_canary_family_add(&f, PW_CANARY_TPOT, T0_US + 5 * MIN_US, 0, 3.9, 3.9, NULL), PW_ERR_INVALID);
	cr_expect_eq(pw_canary_family_add(&f, PW_CANARY_TPOT, 0, 300, 3.9, 3.9, NULL), PW_ERR_INVALID);
	cr_expect_eq(pw_canary_family_add(&f, PW_CANARY_NMETRICS, T0_US + 5 * MIN_US, 300, 3.9, 3.9, NULL), PW_ERR_INVALID);
	/* out of order for its metric: the same start, an earlier one */
	cr_expect_eq(pw_canary_family_add(&f, PW_CANARY_TPOT, T0_US, 300, 3.9, 3.9, NULL), PW_ERR_CONFLICT);
	cr_expect_eq(pw_canary_family_add(&f, PW_CANARY_TPOT, T0_US - 5 * MIN_US, 300, 3.9, 3.9, NULL), PW_ERR_CONFLICT);
	cr_expect_eq(f.windows, before.windows);
	cr_expect_eq(f.m[PW_CANARY_TPOT].windows, 1u);
	cr_expect_eq(f.m[PW_CANARY_TPOT].last_start_us, T0_US);
	cr_expect_eq(f.first_start_us, before.first_start_us);
	cr_expect_eq(f.last_end_us, before.last_end_us);
	/* another metric at the same start is its own first window */
	cr_expect_eq(pw_canary_family_add(&f, PW_CANARY_TTFT, T0_US, 300, 180, 181, NULL), PW_OK);
	pw_canary_family_release(&f);
}

/* ---- replay ---- */

/* Two families fed the same windows agree bit for bit, decided or not, at every window. */
Test(canary_replay, the_same_windows_give_the_same_state)
{
	gen g = {.effect = {0.01, 0, 0}, .noise = {0.006, 0.015, 0.004}, .shift_at = -1, .seed = 15};
	pw_canary_family a, b;
	family_default(&a, false, 0);
	family_default(&b, false, 0);
	for (long w = 0; w < 150; w++)
		for (int m = 0; m < 3; m++) {
			double c, bb;
			gen_pair(&g, w, m, &c, &bb);
			bool da, db;
			cr_assert_eq(pw_canary_family_add(&a, (pw_canary_metric)m, T0_US + w * 5 * MIN_US, 300, c, bb, &da), PW_OK);
			cr_assert_eq(pw_canary_family_add(&b, (pw_canary_metric)m, T0_US + w * 5 * MIN_US, 300, c, bb, &db), PW_OK);
			cr_assert_eq(da, db);
			cr_assert_eq(a.final, b.final);
			cr_assert_eq(a.decision, b.decision);
			cr_assert(memcmp(&a.decided, &b.decided, sizeof a.decided) == 0);
			cr_assert(memcmp(&a.m[m].last, &b.m[m].last, sizeof a.m[m].last) == 0, "window %ld metric %d", w, m);
		}
	cr_assert(a.final);
	pw_canary_family_release(&a);
	pw_canary_family_release(&b);
}

/* ---- configuration ---- */

Test(canary_params, family_mde_overrides)
{
	pw_canary_params p;
	pw_canary_params_default(&p);
	char err[256];
	cr_assert_eq(pw_canary_params_family_mde(&p, " chat-8b=1.5, code-34b = 3 ,", err, sizeof err), PW_OK, "%s", err);
	cr_expect_eq(p.nfamily_mde, 2u);
	cr_expect_float_eq(pw_canary_mde_pct(&p, "chat-8b", false), 1.5, 1e-12);
	cr_expect_float_eq(pw_canary_mde_pct(&p, "code-34b", true), 3.0, 1e-12);
	cr_expect_float_eq(pw_canary_mde_pct(&p, "other", false), 1.0, 1e-12);
	cr_expect_float_eq(pw_canary_mde_pct(&p, "other", true), 2.0, 1e-12);
	cr_expect_eq(pw_canary_params_family_mde(&p, "", err, sizeof err), PW_OK);
	cr_expect_eq(p.nfamily_mde, 0u);
	static const char *const bad[] = {"chat-8b", "chat-8b=0", "chat-8b=101", "chat-8b=nan", "a/b=1", "=1",
	                                  "chat-8b=1x", "chat-8b="};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = 0;
		cr_expect_eq(pw_canary_params_family_mde(&p, bad[i], err, sizeof err), PW_ERR_CONFIG, "\"%s\"", bad[i]);
		cr_expect(strstr(err, "canary.mde.families") != NULL, "\"%s\": %s", bad[i], err);
	}
	pw_canary_family f;
	cr_expect_eq(pw_canary_family_init(&f, 0.05, 1.0, 1.0, 12, 1), PW_ERR_INVALID, "tolerance must be below the MDE");
	cr_expect_eq(pw_canary_family_init(&f, 0.05, 1.0, 0.5, 12, 0), PW_ERR_INVALID, "a horizon of 0");
}

/* ---- pins (docs/canary.md "Pins") ---- */

/*
 * Every state the service can be in, with the action written out by hand
 * from the rule in canary.h (not from the code): a recorded decision stands;
 * a recorded, unexpired pin holds the family (also when the waiver has
 * passed but its expiry is not reported yet, and when another pin is live);
 * a live pin is recorded when none is, or only an expired other one.
 */
Test(canary_pin, every_state_has_its_action)
{
	static const struct {
		bool decided, pinned, expired, live, same;
		pw_canary_pin_action want;
		const char *why;
	} rows[] = {
		{0, 0, 0, 0, 0, PW_CANARY_PIN_NONE, "no pin: the rule decides"},
		{0, 0, 0, 1, 0, PW_CANARY_PIN_RECORD, "a live pin, none recorded: PINNED"},
		{0, 1, 0, 1, 1, PW_CANARY_PIN_HOLD, "the recorded pin, live: held"},
		{0, 1, 0, 0, 0, PW_CANARY_PIN_HOLD, "the pin passed, its expiry not reported yet: held until PIN_EXPIRED"},
		{0, 1, 0, 1, 0, PW_CANARY_PIN_HOLD, "another pin live while the recorded one lasts: held"},
		{0, 1, 1, 0, 0, PW_CANARY_PIN_NONE, "the pin reported expired, none live: the family takes N"},
		{0, 1, 1, 1, 0, PW_CANARY_PIN_RECORD, "expired, and a new waiver pins it again: PINNED again"},
		{0, 1, 1, 1, 1, PW_CANARY_PIN_NONE, "expired and still live (clock skew): no second PINNED of one waiver"},
		{1, 0, 0, 1, 0, PW_CANARY_PIN_NONE, "decided before the pin came: the decision stands"},
		{1, 1, 0, 1, 1, PW_CANARY_PIN_NONE, "a recorded decision is never re-decided"},
		{1, 1, 1, 0, 0, PW_CANARY_PIN_NONE, "decided after the pin: nothing more"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		pw_canary_pin_state s = {rows[i].decided, rows[i].pinned, rows[i].expired, rows[i].live, rows[i].same};
		pw_canary_pin_action got = pw_canary_pin_step(&s);
		cr_expect_eq(got, rows[i].want, "%s: %s, want %s", rows[i].why, pw_canary_pin_action_name(got),
		             pw_canary_pin_action_name(rows[i].want));
	}
}

/*
 * A pinned family of the scenario (chat-8b, +1% TPOT: the rule rolls it
 * back) is never recorded PROMOTE or ROLLBACK while the pin holds: the rule
 * reaches its decision in memory, and what the service records is the pin
 * (once) and then, after PIN_EXPIRED, the decision the windows support.
 */
Test(canary_pin, a_pinned_family_is_recorded_pinned_then_decided_after_expiry)
{
	pw_canary_family f;
	family_default(&f, false, 0);
	pw_sim_canary_params sp;
	pw_sim_canary_scenario_params(0, &sp); /* chat-8b, +1% TPOT */
	pw_canary_pin_state st = {.live = true, .live_is_recorded = false};
	int recorded_pins = 0, recorded_decisions = 0;
	long w = 0;
	for (; w < 144; w++) {
		pw_sim_canary_window win;
		pw_sim_canary_window_make(&sp, pw_sim_canary_scenario_seed(1, 0), (uint32_t)w, &win);
		const double *pairs[3] = {win.tpot_ms, win.ttft_ms, win.goodput_tok_s_chip};
		if (w == 100) /* the pin's expiry reported */
			st.pin_expired = true, st.live = false;
		for (int m = 0; m < 3; m++) {
			pw_canary_pin_action a = pw_canary_pin_step(&st);
			cr_assert_eq(pw_canary_family_add(&f, (pw_canary_metric)m, T0_US + w * 5 * MIN_US, 300,
			                                  pairs[m][PW_SIM_CANARY_CANARY], pairs[m][PW_SIM_CANARY_BASELINE], NULL),
			             PW_OK);
			if (a == PW_CANARY_PIN_RECORD) {
				recorded_pins++;
				st.pinned = true, st.live_is_recorded = true;
			} else if (a == PW_CANARY_PIN_NONE && f.final && !st.decision_recorded) {
				recorded_decisions++;
				st.decision_recorded = true;
				cr_expect_geq(w, 100, "a decision recorded at window %ld, while the pin held", w);
			}
		}
	}
	cr_expect_eq(recorded_pins, 1, "PINNED recorded %d times", recorded_pins);
	cr_expect_eq(recorded_decisions, 1);
	cr_expect_eq(f.decision, PW_CANARY_ROLLBACK, "the windows say %s", pw_canary_decision_name(f.decision));
	pw_canary_family_release(&f);
}
