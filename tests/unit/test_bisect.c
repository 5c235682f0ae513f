/*
 * test_bisect.c: the bisector's decisions (services/bisector/bisect.h) on
 * the simulator's scenarios, with no broker or database: every job the
 * state machine asks for is answered by the simulator's model
 * (pw_sim_run_make at the build the job names), as pw-sim answer would.
 * Scenario files are read from tools/simulator/scenarios (found from
 * PW_TEST_DATA = tests/data).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr_door.h"
#include "bisect.h"
#include "bisect_log.h"
#include "bisect_msg.h"
#include "perfwatch/v1/bisect.pb-c.h"
#include "sim_proto.h"
#include "pw_stats.h"
#include "sim_model.h"

static char errbuf[512];

static pw_sim *world(const char *name)
{
	const char *data = getenv("PW_TEST_DATA");
	char path[1024];
	snprintf(path, sizeof path, "%s/../../tools/simulator/scenarios/%s.scn",
	         data ? data : "tests/data", name);
	pw_sim_scenario *sc = NULL;
	cr_assert_eq(pw_sim_scenario_load(path, &sc, errbuf, sizeof errbuf), PW_OK, "%s", errbuf);
	pw_sim *w = NULL;
	cr_assert_eq(pw_sim_new(&w, sc, NULL, errbuf, sizeof errbuf), PW_OK, "%s", errbuf);
	pw_sim_scenario_free(sc);
	return w;
}

/* The CL history of (lo, hi] as the bisector reads it from perfwatch.compiler_cls. */
static pw_bisect_cl *history(const pw_sim *w, int64_t lo, int64_t hi, size_t *n)
{
	pw_bisect_cl *cls = calloc((size_t)(hi - lo), sizeof *cls);
	cr_assert_not_null(cls);
	for (int64_t c = lo + 1; c <= hi; c++) {
		pw_sim_cl_info ci;
		pw_sim_cl_describe(w, c, &ci);
		cls[c - lo - 1] = (pw_bisect_cl){c, ci.perf_relevant, ci.upstream};
	}
	*n = (size_t)(hi - lo);
	return cls;
}

/* The simulator's answer to a job: job->repeats values of metric m of series s. */
static void answer(const pw_sim *w, size_t s, int m, const pw_bisect_job *job, double *x)
{
	pw_sim_build bd;
	pw_sim_build_at(&bd, PW_SIM_BUILD_BISECT, NULL, job->npicks ? job->base : job->cl);
	bd.upstream_limit = job->upstream_k;
	for (size_t i = 0; i < job->npicks; i++)
		bd.picks[bd.npicks++] = job->picks[i];
	int64_t t = pw_sim_start_us(w) + 40LL * 86400000000LL + (int64_t)job->step * 600000000LL;
	for (uint32_t r = 0; r < job->repeats; r++) {
		char id[64];
		snprintf(id, sizeof id, "bj-%u-%u", job->step, r);
		pw_sim_run run;
		cr_assert_eq(pw_sim_run_make(w, s, &bd, id, r, t + r * 60000000LL, id, &run), PW_OK);
		cr_assert(run.has[m]);
		x[r] = run.value[m];
	}
}

typedef struct trace {
	pw_bisect_job jobs[128];
	double x[128][32];
	pw_bisect_verdict v[128];
	size_t n;
} trace;

/* Runs the bisection to its end (or max_steps), recording every step. */
static void drive(const pw_sim *w, size_t s, int m, pw_bisect *b, trace *tr, size_t max_steps)
{
	pw_bisect_job job;
	while (tr->n < max_steps && pw_bisect_next(b, &job)) {
		cr_assert_lt(tr->n, 128);
		cr_assert_leq(job.repeats, 32);
		answer(w, s, m, &job, tr->x[tr->n]);
		cr_assert_eq(pw_bisect_apply(b, &job, tr->x[tr->n], job.repeats, &tr->v[tr->n]), PW_OK);
		tr->jobs[tr->n++] = job;
	}
}

static size_t series(const pw_sim *w, const char *model, const char *platform, const char *config)
{
	size_t i;
	cr_assert_eq(pw_sim_series_find(w, model, platform, config, &i), PW_OK);
	return i;
}

static void print_log(const char *name, const pw_bisect *b, const trace *tr)
{
	char n1[48];
	printf("-- %s: range cl/%lld..cl/%lld (%lld CLs), %zu flagged\n", name, (long long)b->lo,
	       (long long)b->hi, (long long)(b->hi - b->lo), b->nflagged);
	for (size_t i = 0; i < tr->n; i++) {
		const pw_bisect_job *j = &tr->jobs[i];
		const pw_bisect_verdict *v = &tr->v[i];
		if (j->npicks == 2)
			snprintf(n1, sizeof n1, "cl/%lld+%lld+%lld", (long long)j->base,
			         (long long)j->picks[0], (long long)j->picks[1]);
		else if (j->npicks == 1)
			snprintf(n1, sizeof n1, "cl/%lld+%lld", (long long)j->base, (long long)j->picks[0]);
		else
			pw_bisect_cl_name(j->cl, j->upstream_k, n1, sizeof n1);
		printf("   %2u %-18s %-28s n=%-2u %.4f ±%.4f → %s\n", j->step,
		       pw_bisect_purpose_name(j->purpose), n1, j->repeats, v->median, v->spread,
		       pw_bisect_outcome_name(v->outcome));
	}
	printf("   status %s confidence %s culprit cl/%lld upstream %lld builds %u (search %u, verify "
	       "%u, pairwise %u, roll %u) %s\n",
	       pw_bisect_status_name(b->status), pw_bisect_confidence_name(b->confidence),
	       (long long)b->culprit, (long long)b->culprit_upstream, b->builds, b->builds_search,
	       b->builds_verify, b->builds_pairwise, b->builds_roll, b->reason);
}

/* ---- the event ------------------------------------------------------------ */

/*
 * The worked example's RC against prod, series by series and metric by
 * metric as the gate sees them (a 30-nightly baseline, the RC's 5 runs): every (series, metric)
 * that moved by more than 1% at more than 8 robust σ is an alert of the
 * event. They start one bisection, on decode B64 v6e-4.
 */
Test(bisect_event, worked_example_alerts_start_one_bisection_on_decode_b64_v6e4)
{
	pw_sim *w = world("worked-example");
	pw_bisect_finding f[256];
	char keys[256][160];
	size_t n = 0;
	int64_t prod = 7841657, rc = 7841923;
	for (size_t s = 0; s < pw_sim_series_count(w); s++) {
		const pw_sim_series *se = pw_sim_series_at(w, s);
		/* the baseline: 30 nightlies before the RC; observed: the RC's 5 runs */
		double base[PW_SIM_METRIC_COUNT][30], cand[PW_SIM_METRIC_COUNT][5];
		bool has[PW_SIM_METRIC_COUNT];
		for (int d = 0; d < 30; d++) {
			pw_sim_build bb;
			pw_sim_build_at(&bb, PW_SIM_BUILD_NIGHTLY, "nightly", pw_sim_nightly_cl(w, 6 + d));
			int64_t t = pw_sim_start_us(w) + (6 + d) * 86400000000LL;
			pw_sim_run rb;
			char id[32];
			snprintf(id, sizeof id, "nightly-%d", d);
			cr_assert_eq(pw_sim_run_make(w, s, &bb, id, 0, t, NULL, &rb), PW_OK);
			for (int m = 0; m < PW_SIM_METRIC_COUNT; m++)
				base[m][d] = rb.value[m];
		}
		pw_sim_build bc;
		pw_sim_build_at(&bc, PW_SIM_BUILD_RC, "rc", rc);
		int64_t t = pw_sim_start_us(w) + 36LL * 86400000000LL;
		for (uint32_t r = 0; r < 5; r++) {
			pw_sim_run rcn;
			cr_assert_eq(pw_sim_run_make(w, s, &bc, "rc", r, t + r, NULL, &rcn), PW_OK);
			for (int m = 0; m < PW_SIM_METRIC_COUNT; m++) {
				has[m] = rcn.has[m];
				cand[m][r] = rcn.value[m];
			}
		}
		for (int m = 0; m < PW_SIM_METRIC_COUNT; m++) {
			if (!has[m])
				continue;
			double work[32], mb, madb, mc;
			cr_assert_eq(pw_stats_median_mad(base[m], 30, work, &mb, &madb), PW_OK);
			cr_assert_eq(pw_stats_median(cand[m], 5, work, &mc), PW_OK);
			double z = madb > 0 ? fabs(mc - mb) / madb : 0;
			if (m == PW_SIM_TPOT_P50_MS)
				printf("  %s/%s/%s: %.4f -> %.4f mad %.4f z %.1f\n", se->model.name,
				       se->platform->name, se->config.name, mb, mc, madb, z);
			if (z > 8 && fabs(mc - mb) > 0.01 * fabs(mb)) {
				cr_assert_lt(n, 256);
				snprintf(keys[n], sizeof keys[n], "%s/%s/%s/%s", se->model.name,
				         se->platform->name, se->config.name, pw_sim_metric_name(m));
				bool target_cp = strcmp(se->platform->name, "v6e-4") == 0 &&
				                 strcmp(se->config.name, "decode.B64.s2048.int8") == 0;
				f[n] = (pw_bisect_finding){keys[n], keys[n], prod, rc,
				                           target_cp ? 7841885 : 0, target_cp ? rc : 0,
				                           mc - mb, madb, pw_sim_metric_name(m), (mc - mb) / mb * 100};
				n++;
			}
		}
	}
	printf("worked example: %zu alerts of one event\n", n);
	cr_assert_geq(n, 10, "the event should raise many correlated alerts, got %zu", n);
	pw_bisect_event ev;
	cr_assert_eq(pw_bisect_event_plan(f, n, &ev), PW_OK);
	printf("target %s (score %.1f), range cl/%lld..cl/%lld\n", f[ev.target].series_key, ev.score,
	       (long long)ev.lo, (long long)ev.hi);
	/* the alert's primary latency metric, not the cost derived from it (same z, same ratio) */
	cr_assert_str_eq(f[ev.target].series_key, "chat-8b/v6e-4/decode.B64.s2048.int8/tpot_p50_ms",
	                 "target %s", f[ev.target].series_key);
	cr_assert_eq(ev.rank, 0);
	/* the cost series of B8 and B64 moved too and stay in the event, listed */
	size_t ncost = 0;
	for (size_t i = 0; i < n; i++)
		ncost += strstr(f[i].series_key, "/cost_per_mtok_usd") != NULL;
	cr_assert_geq(ncost, 2);
	cr_assert(ev.narrowed);
	cr_assert_eq(ev.lo, 7841885);
	cr_assert_eq(ev.hi, 7841923);
	cr_assert_eq(ev.hi - ev.lo, 38);
	pw_sim_free(w);
}

Test(bisect_event, no_changepoint_keeps_prod_to_rc_and_mixed_heads_are_refused)
{
	pw_bisect_finding f[2] = {{"a", "a", 7841657, 7841923, 0, 0, 0.3, 0.02, "tpot_p50_ms", 0},
	                          {"b", "b", 7841657, 7841923, 0, 0, 0.1, 0.02, "tpot_p50_ms", 0}};
	pw_bisect_event ev;
	cr_assert_eq(pw_bisect_event_plan(f, 2, &ev), PW_OK);
	cr_assert_eq(ev.target, 0);
	cr_assert_not(ev.narrowed);
	cr_assert_eq(ev.hi - ev.lo, 266);
	f[1].hi = 7841900;
	cr_assert_eq(pw_bisect_event_plan(f, 2, &ev), PW_ERR_INVALID);
	cr_assert_eq(pw_bisect_event_plan(f, 0, &ev), PW_ERR_INVALID);
}

Test(bisect_event, latency_outranks_cost_and_throughput_then_effect_over_noise)
{
	cr_assert_eq(pw_bisect_metric_rank("tpot_p50_ms"), 0);
	cr_assert_eq(pw_bisect_metric_rank("ttft_p50_ms"), 0);
	cr_assert_eq(pw_bisect_metric_rank("goodput_tok_s_chip"), 1);
	cr_assert_eq(pw_bisect_metric_rank("tpot_p99_ms"), 2);
	cr_assert_eq(pw_bisect_metric_rank("mfu"), 3);
	cr_assert_eq(pw_bisect_metric_rank("no_such_metric"), 3);
	cr_assert_eq(pw_bisect_metric_rank(NULL), 3);
	cr_assert_eq(pw_bisect_metric_rank("cost_per_mtok_usd"), 4);
	/*
	 * The dev stack's worked example: B8's cost and B8's TPOT are as far
	 * above their noise as B64's TPOT (z 23.6-23.7, saturated), B8's cost
	 * comes first; B64's TPOT is the target by rank, then by relative effect.
	 */
	pw_bisect_finding f[4] = {
		{"b8-cost", "m/p/decode.B8/cost_per_mtok_usd", 100, 200, 0, 0, 0.0676, 0.0029, "cost_per_mtok_usd", 7.69},
		{"b8-tpot", "m/p/decode.B8/tpot_p50_ms", 100, 200, 0, 0, 0.1657, 0.0070, "tpot_p50_ms", 7.69},
		{"b64-tpot", "m/p/decode.B64/tpot_p50_ms", 100, 200, 150, 190, 0.3192, 0.0135, "tpot_p50_ms", 8.18},
		{"b64-goodput", "m/p/decode.B64/goodput_tok_s_chip", 100, 200, 0, 0, -285, 13, "goodput_tok_s_chip", -7.56},
	};
	pw_bisect_event ev;
	cr_assert_eq(pw_bisect_event_plan(f, 4, &ev), PW_OK);
	cr_assert_eq(ev.target, 2);
	cr_assert_eq(ev.rank, 0);
	cr_assert_float_eq(ev.score, PW_BISECT_SCORE_SATURATION, 1e-12);
	cr_assert_float_eq(ev.pct, 8.18, 1e-12);
	cr_assert(ev.narrowed);
	cr_assert_eq(ev.lo, 150);
	/* without latency alerts, throughput before cost; a cost alert alone is still bisected */
	cr_assert_eq(pw_bisect_event_plan((pw_bisect_finding[]){f[0], f[3]}, 2, &ev), PW_OK);
	cr_assert_eq(ev.target, 1);
	cr_assert_eq(pw_bisect_event_plan(f, 1, &ev), PW_OK);
	cr_assert_eq(ev.target, 0);
	cr_assert_eq(ev.rank, 4);
	/* below the saturation, effect over noise decides, not the relative effect */
	pw_bisect_finding h[2] = {f[2], f[1]};
	h[0].noise = h[0].delta_abs / 5;  /* z 5, +8.18% */
	h[1].noise = h[1].delta_abs / 8;  /* z 8, +7.69% */
	cr_assert_eq(pw_bisect_event_plan(h, 2, &ev), PW_OK);
	cr_assert_eq(ev.target, 1);
	cr_assert_float_eq(ev.score, 8, 1e-9);
	/* the score's edges: sign ignored, no noise saturates, NaN and infinities score nothing */
	cr_assert_float_eq(pw_bisect_score(-0.3, 0.1), 3, 1e-12);
	cr_assert_float_eq(pw_bisect_score(0.3, 0), PW_BISECT_SCORE_SATURATION, 1e-12);
	cr_assert_float_eq(pw_bisect_score(0, 0), 0, 1e-12);
	cr_assert_float_eq(pw_bisect_score(NAN, 0.1), 0, 1e-12);
	cr_assert_float_eq(pw_bisect_score(INFINITY, 0.1), 0, 1e-12);
	cr_assert_float_eq(pw_bisect_score(0.3, NAN), 0, 1e-12);
	cr_assert_float_eq(pw_bisect_score(0.3, INFINITY), 0, 1e-12);
	cr_assert_float_eq(pw_bisect_score(1e300, 1e-300), PW_BISECT_SCORE_SATURATION, 1e-12);
	/* equal rank and score: the earlier one */
	pw_bisect_finding g[2] = {f[2], f[2]};
	g[1].id = "later";
	cr_assert_eq(pw_bisect_event_plan(g, 2, &ev), PW_OK);
	cr_assert_eq(ev.target, 0);
}

/* ---- the judgement ---------------------------------------------------------- */

Test(bisect_judge, clean_regressed_inconclusive_in_either_direction)
{
	double c[5] = {3.90, 3.91, 3.89, 3.905, 3.895}, r[5] = {4.22, 4.21, 4.23, 4.215, 4.225};
	double xc[3] = {3.91, 3.90, 3.92}, xr[3] = {4.21, 4.20, 4.24}, xm[3] = {4.05, 4.06, 4.04};
	pw_bisect_verdict v;
	cr_assert_eq(pw_bisect_judge(xc, 3, c, 5, r, 5, 0.05, 0.35, &v), PW_BISECT_CLEAN);
	cr_assert_float_eq(v.median, 3.91, 1e-12);
	cr_assert_float_eq(v.spread, 0.01, 1e-12);
	cr_assert_eq(pw_bisect_judge(xr, 3, c, 5, r, 5, 0.05, 0.35, NULL), PW_BISECT_REGRESSED);
	cr_assert_eq(pw_bisect_judge(xm, 3, c, 5, r, 5, 0.05, 0.35, NULL), PW_BISECT_INCONCLUSIVE);
	/* one run cannot reach p < 0.05 against five: never judged on n = 1 */
	cr_assert_eq(pw_bisect_judge(xc, 1, c, 5, r, 5, 0.05, 0.35, NULL), PW_BISECT_INCONCLUSIVE);
	/* higher is better (goodput): the regressed level is below */
	cr_assert_eq(pw_bisect_judge(xc, 3, r, 5, c, 5, 0.05, 0.35, NULL), PW_BISECT_REGRESSED);
}

/* ---- scenarios ---------------------------------------------------------------- */

Test(bisect_scenario, worked_example_culprit_verified_both_sides)
{
	pw_sim *w = world("worked-example");
	size_t s = series(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841923, &ncls);
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 7841885, 7841923, cls, ncls), PW_OK);
	cr_assert_eq(b.nflagged, 9, "cost-model filter: 38 -> 9, got %zu", b.nflagged);
	static trace tr;
	memset(&tr, 0, sizeof tr);
	drive(w, s, PW_SIM_TPOT_P50_MS, &b, &tr, 128);
	print_log("worked-example", &b, &tr);
	cr_assert_eq(b.status, PW_BISECT_DONE, "%s", b.reason);
	cr_assert_eq(b.culprit, 7841917);
	cr_assert_eq(b.confidence, PW_BISECT_VERIFIED_BOTH_SIDES);
	cr_assert(b.adjacent_clean && b.pick_reproduced);
	cr_assert_leq(b.builds_search, 6, "bisection builds %u > ceil(log2 9) + 2", b.builds_search);
	cr_assert_eq(b.builds_verify, 2);
	cr_assert_not(b.full_range);
	/* artifact 4's steps: 7841904 CLEAN, 7841917 REGRESSED, 7841911 CLEAN, then 7841916 CLEAN */
	cr_assert_eq(tr.jobs[2].cl, 7841904);
	cr_assert_eq(tr.v[2].outcome, PW_BISECT_CLEAN);
	cr_assert_eq(tr.v[2].range_n, 4);
	cr_assert_eq(tr.jobs[3].cl, 7841917);
	cr_assert_eq(tr.v[3].range_n, 2);
	cr_assert_eq(tr.jobs[4].cl, 7841911);
	cr_assert_eq(tr.jobs[5].purpose, PW_BISECT_VERIFY_ADJACENT);
	cr_assert_eq(tr.jobs[5].cl, 7841916);
	cr_assert_eq(tr.jobs[6].purpose, PW_BISECT_VERIFY_CHERRY_PICK);
	cr_assert_eq(tr.jobs[6].base, 7841885);
	cr_assert_eq(tr.jobs[6].picks[0], 7841917);
	/* the levels are artifact 4's: 3.90 clean, 4.22 regressed */
	cr_assert(fabs(b.clean_level - 3.90) < 0.05 && fabs(b.regressed_level - 4.22) < 0.05,
	          "%f %f", b.clean_level, b.regressed_level);
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}

Test(bisect_scenario, worked_example_without_the_flag_falls_back_to_every_cl)
{
	pw_sim *w = world("worked-example");
	size_t s = series(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841923, &ncls);
	cls[7841917 - 7841885 - 1].flagged = false; /* the cost model missed it */
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 7841885, 7841923, cls, ncls), PW_OK);
	static trace tr;
	memset(&tr, 0, sizeof tr);
	drive(w, s, PW_SIM_TPOT_P50_MS, &b, &tr, 128);
	print_log("worked-example, 7841917 unflagged", &b, &tr);
	cr_assert_eq(b.status, PW_BISECT_DONE, "%s", b.reason);
	cr_assert_eq(b.culprit, 7841917);
	cr_assert_eq(b.confidence, PW_BISECT_VERIFIED_BOTH_SIDES);
	cr_assert(b.full_range);
	cr_assert(strstr(b.reason, "fell back") != NULL, "%s", b.reason);
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}

Test(bisect_scenario, two_cl_interaction_names_the_pair_and_blames_neither)
{
	pw_sim *w = world("two-cl-interaction");
	size_t s = series(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841923, &ncls);
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 7841885, 7841923, cls, ncls), PW_OK);
	static trace tr;
	memset(&tr, 0, sizeof tr);
	drive(w, s, PW_SIM_TPOT_P50_MS, &b, &tr, 128);
	print_log("two-cl-interaction", &b, &tr);
	cr_assert_eq(b.status, PW_BISECT_DONE, "%s", b.reason);
	cr_assert_eq(b.confidence, PW_BISECT_INTERACTION);
	cr_assert_eq(b.culprit, 0);
	cr_assert_not(b.pick_reproduced);
	cr_assert_eq(b.pair_cls[0], 7841893);
	cr_assert_eq(b.pair_cls[1], 7841911);
	cr_assert_leq(b.builds_pairwise, 36);
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}

Test(bisect_scenario, llvm_roll_names_the_upstream_commit)
{
	pw_sim *w = world("llvm-roll");
	size_t s = series(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841923, &ncls);
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 7841885, 7841923, cls, ncls), PW_OK);
	static trace tr;
	memset(&tr, 0, sizeof tr);
	drive(w, s, PW_SIM_TPOT_P50_MS, &b, &tr, 128);
	print_log("llvm-roll", &b, &tr);
	cr_assert_eq(b.status, PW_BISECT_DONE, "%s", b.reason);
	cr_assert_eq(b.culprit, 7841917);
	cr_assert_eq(b.confidence, PW_BISECT_VERIFIED_BOTH_SIDES);
	cr_assert_eq(b.culprit_upstream, 6137);
	cr_assert_leq(b.builds_roll, 14); /* ceil(log2 10000) */
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}

Test(bisect_scenario, llvm_roll_lane_budget_leaves_the_commit_unnamed)
{
	pw_sim *w = world("llvm-roll");
	size_t s = series(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841923, &ncls);
	pw_bisect_config cfg;
	pw_bisect_config_init(&cfg);
	cfg.roll_budget = 5;
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, &cfg, 7841885, 7841923, cls, ncls), PW_OK);
	static trace tr;
	memset(&tr, 0, sizeof tr);
	drive(w, s, PW_SIM_TPOT_P50_MS, &b, &tr, 128);
	cr_assert_eq(b.status, PW_BISECT_DONE);
	cr_assert_eq(b.culprit, 7841917);
	cr_assert_eq(b.culprit_upstream, -1);
	cr_assert_eq(b.builds_roll, 5);
	cr_assert(strstr(b.reason, "roll lane budget") != NULL, "%s", b.reason);
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}

Test(bisect_scenario, endpoints_that_do_not_differ_fail_without_a_culprit)
{
	pw_sim *w = world("worked-example");
	size_t s = series(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841910, &ncls); /* before the culprit */
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 7841885, 7841910, cls, ncls), PW_OK);
	static trace tr;
	memset(&tr, 0, sizeof tr);
	drive(w, s, PW_SIM_TPOT_P50_MS, &b, &tr, 128);
	print_log("equal endpoints", &b, &tr);
	cr_assert_eq(b.status, PW_BISECT_FAILED);
	cr_assert_eq(b.culprit, 0);
	cr_assert_eq(tr.n, 2);
	cr_assert(strstr(b.reason, "do not differ") != NULL, "%s", b.reason);
	pw_bisect_job j;
	cr_assert_not(pw_bisect_next(&b, &j));
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}

Test(bisect_scenario, the_v5e_series_does_not_reproduce)
{
	/* the exact config matters: the same model on v5e-8 never moved */
	pw_sim *w = world("worked-example");
	size_t s = series(w, "chat-8b", "v5e-8", "decode.B64.s2048.int8");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841923, &ncls);
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 7841885, 7841923, cls, ncls), PW_OK);
	static trace tr;
	memset(&tr, 0, sizeof tr);
	drive(w, s, PW_SIM_TPOT_P50_MS, &b, &tr, 128);
	cr_assert_eq(b.status, PW_BISECT_FAILED);
	cr_assert_eq(b.culprit, 0);
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}

Test(bisect_scenario, build_budget_exhausted_fails_without_a_culprit)
{
	pw_sim *w = world("worked-example");
	size_t s = series(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841923, &ncls);
	pw_bisect_config cfg;
	pw_bisect_config_init(&cfg);
	cfg.build_budget = 4;
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, &cfg, 7841885, 7841923, cls, ncls), PW_OK);
	static trace tr;
	memset(&tr, 0, sizeof tr);
	drive(w, s, PW_SIM_TPOT_P50_MS, &b, &tr, 128);
	cr_assert_eq(b.status, PW_BISECT_FAILED);
	cr_assert_eq(b.culprit, 0);
	cr_assert_eq(b.builds, 4);
	cr_assert(strstr(b.reason, "budget") != NULL, "%s", b.reason);
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}

/* ---- restart ------------------------------------------------------------------ */

Test(bisect_state, replaying_stored_steps_resumes_with_the_same_jobs_and_culprit)
{
	pw_sim *w = world("worked-example");
	size_t s = series(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841923, &ncls);
	pw_bisect full, part;
	static trace tf, tp;
	memset(&tf, 0, sizeof tf);
	memset(&tp, 0, sizeof tp);
	cr_assert_eq(pw_bisect_init(&full, NULL, 7841885, 7841923, cls, ncls), PW_OK);
	drive(w, s, PW_SIM_TPOT_P50_MS, &full, &tf, 128);
	for (size_t cut = 1; cut < tf.n; cut++) {
		/* a bisector killed after `cut` stored steps, restarted: re-init, re-apply */
		cr_assert_eq(pw_bisect_init(&part, NULL, 7841885, 7841923, cls, ncls), PW_OK);
		for (size_t i = 0; i < cut; i++)
			cr_assert_eq(pw_bisect_apply(&part, &tf.jobs[i], tf.x[i], tf.jobs[i].repeats, NULL),
			             PW_OK);
		pw_bisect_job j;
		cr_assert(pw_bisect_next(&part, &j));
		cr_assert_eq(j.step, tf.jobs[cut].step);
		cr_assert_eq(j.cl, tf.jobs[cut].cl);
		cr_assert_eq(j.purpose, tf.jobs[cut].purpose);
		/* a step applied twice (a redelivered result) is refused */
		cr_assert_eq(pw_bisect_apply(&part, &tf.jobs[cut - 1], tf.x[cut - 1],
		                             tf.jobs[cut - 1].repeats, NULL),
		             PW_ERR_INVALID);
		memset(&tp, 0, sizeof tp);
		tp.n = cut;
		drive(w, s, PW_SIM_TPOT_P50_MS, &part, &tp, 128);
		cr_assert_eq(part.culprit, full.culprit);
		cr_assert_eq(part.builds, full.builds);
		pw_bisect_release(&part);
	}
	pw_bisect_release(&full);
	free(cls);
	pw_sim_free(w);
}

Test(bisect_state, inconclusive_doubles_repeats_and_is_bounded)
{
	/* a step midway between the levels: 3, then 3 more (6 total), then 6 more (12), then FAILED */
	pw_bisect_cl cls[4] = {{11, true, 0}, {12, true, 0}, {13, true, 0}, {14, false, 0}};
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 10, 14, cls, 4), PW_OK);
	pw_bisect_job j;
	double c[5] = {1.00, 1.01, 0.99, 1.005, 0.995}, r[5] = {1.10, 1.11, 1.09, 1.105, 1.095};
	cr_assert(pw_bisect_next(&b, &j));
	cr_assert_eq(j.purpose, PW_BISECT_ENDPOINT);
	cr_assert_eq(pw_bisect_apply(&b, &j, c, 5, NULL), PW_OK);
	cr_assert(pw_bisect_next(&b, &j));
	cr_assert_eq(pw_bisect_apply(&b, &j, r, 5, NULL), PW_OK);
	double mid[12] = {1.05, 1.051, 1.049, 1.052, 1.048, 1.05, 1.053, 1.047, 1.05, 1.051, 1.049, 1.05};
	uint32_t want[3] = {3, 3, 6};
	for (int k = 0; k < 3; k++) {
		cr_assert(pw_bisect_next(&b, &j));
		cr_assert_eq(j.purpose, PW_BISECT_STEP);
		cr_assert_eq(j.cl, 12);
		cr_assert_eq(j.repeats, want[k]);
		cr_assert_eq(j.rerun, k > 0);
		pw_bisect_verdict v;
		cr_assert_eq(pw_bisect_apply(&b, &j, mid, j.repeats, &v), PW_OK);
		cr_assert_eq(v.outcome, PW_BISECT_INCONCLUSIVE);
	}
	cr_assert_eq(b.status, PW_BISECT_FAILED);
	cr_assert(strstr(b.reason, "inconclusive") != NULL, "%s", b.reason);
	cr_assert_eq(b.builds, 3); /* the re-runs reuse the build */
	cr_assert_not(pw_bisect_next(&b, &j));
	pw_bisect_release(&b);
}

Test(bisect_state, bad_input_is_refused)
{
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 10, 10, NULL, 0), PW_ERR_INVALID);
	cr_assert_eq(pw_bisect_init(&b, NULL, 10, 12, NULL, 0), PW_OK);
	pw_bisect_job j;
	cr_assert(pw_bisect_next(&b, &j));
	double nan_[1] = {NAN};
	cr_assert_eq(pw_bisect_apply(&b, &j, nan_, 1, NULL), PW_ERR_INVALID);
	cr_assert_eq(pw_bisect_apply(&b, &j, nan_, 0, NULL), PW_ERR_INVALID);
	cr_assert_eq(b.steps, 0);
	pw_bisect_release(&b);
	pw_bisect_release(NULL);
}

/* ---- the log (artifact 4) -------------------------------------------------------- */

Test(bisect_log, worked_example_renders_artifact_4)
{
	pw_sim *w = world("worked-example");
	size_t s = series(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841923, &ncls);
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 7841885, 7841923, cls, ncls), PW_OK);
	static trace tr;
	memset(&tr, 0, sizeof tr);
	drive(w, s, PW_SIM_TPOT_P50_MS, &b, &tr, 128);
	pw_bisect_log_step steps[128];
	int64_t t0 = 1781740800000000LL;
	for (size_t i = 0; i < tr.n; i++)
		pw_bisect_log_step_from(&steps[i], &tr.jobs[i], &tr.v[i], t0 + (int64_t)(i + 1) * 21000000LL);
	pw_sim_cl_info ci;
	pw_sim_cl_describe(w, b.culprit, &ci);
	char culprit[32];
	pw_bisect_cl_name(b.culprit, -1, culprit, sizeof culprit);
	pw_bisect_log_head h = {.bisection_id = "bs-1", .series_key = "k", .metric = "tpot_p50_ms",
	                        .unit = "ms", .started_us = t0, .finished_us = t0 + 8 * 21000000LL,
	                        .lo = b.lo, .hi = b.hi, .n_cls = (uint32_t)(b.hi - b.lo),
	                        .n_flagged = (uint32_t)b.nflagged, .status = b.status,
	                        .confidence = b.confidence, .culprit = culprit,
	                        .culprit_title = ci.title, .culprit_owner = ci.author,
	                        .adjacent_clean = b.adjacent_clean, .pick_reproduced = b.pick_reproduced,
	                        .reason = b.reason, .builds = b.builds};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	pw_bisect_log_render(f, &h, steps, tr.n);
	fclose(f);
	printf("%s", text);
	cr_assert(strstr(text, "[00:00] range cl/7841885..cl/7841923 (38 CLs); cost-model filter → 9 perf-relevant\n"));
	cr_assert(strstr(text, "build xla @ cl/7841904 … tpot_p50_ms 3.90"), "%s", text);
	cr_assert(strstr(text, "range → (7841904, 7841923], 4 CLs\n"), "%s", text);
	cr_assert(strstr(text, "range → (7841904, 7841917], 2 CLs\n"), "%s", text);
	cr_assert(strstr(text, "range → (7841911, 7841917], 1 CL\n"), "%s", text);
	cr_assert(strstr(text, "verify: cl/7841916 → "), "%s", text);
	cr_assert(strstr(text, "verify: cherry-pick cl/7841917 alone on cl/7841885 → 4.2"), "%s", text);
	cr_assert(strstr(text, "REPRODUCED ✔"), "%s", text);
	cr_assert(strstr(text, "culprit = cl/7841917 \"fusion: cap producer-consumer fusion VMEM footprint at 1.5MB"
	                       " to prevent double-buffering spills\" (author: xla-fusion) · confidence: "
	                       "verified-both-sides\n"),
	          "%s", text);
	free(text);
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}

Test(bisect_state, interaction_on_a_synthetic_history_measures_the_partner_alone)
{
	/* a synthetic history: CLs 102 and 105 regress only together; bisection lands on 105,
	 * alone it does not reproduce, the pair (102, 105) does and 102 alone does not */
	pw_bisect_cl cls[8];
	for (int i = 0; i < 8; i++)
		cls[i] = (pw_bisect_cl){101 + i, true, 0};
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 100, 108, cls, 8), PW_OK);
	pw_bisect_job j;
	uint64_t st = 7;
	size_t steps = 0;
	while (pw_bisect_next(&b, &j)) {
		bool has2, has5;
		if (j.npicks) {
			has2 = j.picks[0] == 102 || (j.npicks > 1 && j.picks[1] == 102);
			has5 = j.picks[0] == 105 || (j.npicks > 1 && j.picks[1] == 105);
		} else {
			has2 = j.cl >= 102;
			has5 = j.cl >= 105;
		}
		double x[32];
		for (uint32_t r = 0; r < j.repeats; r++) {
			st = st * 6364136223846793005ULL + 1442695040888963407ULL;
			x[r] = (has2 && has5 ? 1.10 : 1.00) * (1 + 0.002 * ((double)(st >> 40) / (1 << 24) - 0.5));
		}
		cr_assert_eq(pw_bisect_apply(&b, &j, x, j.repeats, NULL), PW_OK);
		cr_assert_lt(++steps, 100);
	}
	cr_assert_eq(b.status, PW_BISECT_DONE, "%s", b.reason);
	cr_assert_eq(b.confidence, PW_BISECT_INTERACTION);
	cr_assert_eq(b.pair_cls[0], 102);
	cr_assert_eq(b.pair_cls[1], 105);
	cr_assert_eq(b.culprit, 0);
	pw_bisect_release(&b);
}

/* ---- messages: the simulator reads the jobs as the bisector meant them -------------- */

static void jobs_read_back(const char *scenario, int64_t lo, int64_t hi)
{
	pw_sim *w = world(scenario);
	size_t s = series(w, "chat-8b", "v6e-4", "decode.B64.s2048.int8");
	const pw_sim_series *se = pw_sim_series_at(w, s);
	size_t ncls;
	pw_bisect_cl *cls = history(w, lo, hi, &ncls);
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, lo, hi, cls, ncls), PW_OK);
	static trace tr;
	memset(&tr, 0, sizeof tr);
	drive(w, s, PW_SIM_TPOT_P50_MS, &b, &tr, 128);
	pw_sim_run r0;
	pw_sim_build b0;
	pw_sim_build_at(&b0, PW_SIM_BUILD_NIGHTLY, "n", lo);
	cr_assert_eq(pw_sim_run_make(w, s, &b0, "x", 0, pw_sim_start_us(w) + 36LL * 86400000000LL, NULL, &r0), PW_OK);
	pw_bisect_target t = {.series_key = "k", .model = se->model.name, .model_rev = r0.model_rev,
	                      .hlo_fingerprint = r0.fingerprint, .platform = se->platform->name,
	                      .config = se->config.name, .firmware = r0.firmware,
	                      .metric = "tpot_p50_ms", .config_hash = "h"};
	for (size_t i = 0; i < tr.n; i++) {
		uint8_t *buf;
		size_t len;
		cr_assert_eq(pw_bisect_job_pack("bs-test", &t, &tr.jobs[i], 1, &buf, &len), PW_OK);
		Perfwatch__V1__BisectJob *j = perfwatch__v1__bisect_job__unpack(NULL, len, buf);
		cr_assert_not_null(j);
		char want_id[64];
		snprintf(want_id, sizeof want_id, "bs-test-%02zu", i);
		cr_assert_str_eq(j->job_id, want_id);
		pw_sim_bisect_plan plan;
		cr_assert_eq(pw_sim_bisect_plan_make(w, j, &plan, errbuf, sizeof errbuf), PW_OK, "%s", errbuf);
		cr_assert_eq(plan.series, s);
		cr_assert_eq(plan.repeats, tr.jobs[i].repeats);
		if (tr.jobs[i].npicks) {
			cr_assert_eq(plan.build.cl, tr.jobs[i].base);
			cr_assert_eq(plan.build.npicks, tr.jobs[i].npicks);
			for (size_t k = 0; k < tr.jobs[i].npicks; k++)
				cr_assert_eq(plan.build.picks[k], tr.jobs[i].picks[k]);
		} else {
			cr_assert_eq(plan.build.cl, tr.jobs[i].cl);
			cr_assert_eq(plan.build.upstream_limit, tr.jobs[i].upstream_k);
		}
		perfwatch__v1__bisect_job__free_unpacked(j, NULL);
		free(buf);
	}
	/* the Bisection after the last step */
	pw_bisect_log_step steps[128];
	for (size_t i = 0; i < tr.n; i++)
		pw_bisect_log_step_from(&steps[i], &tr.jobs[i], &tr.v[i], 2 + (int64_t)i);
	char culprit[32] = "";
	if (b.culprit)
		pw_bisect_cl_name(b.culprit, -1, culprit, sizeof culprit);
	pw_bisect_log_head h = {.bisection_id = "bs-test", .unit = "ms", .started_us = 1,
	                        .culprit = culprit, .culprit_title = "t", .culprit_owner = "o"};
	const char *corr[2] = {"a", "b"};
	uint8_t *buf;
	size_t len;
	cr_assert_eq(pw_bisect_pack(&h, "alert-1", "", &t, &b, steps, tr.n, corr, 2, 99, &buf, &len), PW_OK);
	Perfwatch__V1__Bisection *m = perfwatch__v1__bisection__unpack(NULL, len, buf);
	cr_assert_not_null(m);
	cr_assert_eq(m->n_steps, tr.n);
	char last_id[64];
	snprintf(last_id, sizeof last_id, "bs-test-%02zu", tr.n - 1);
	cr_assert_str_eq(m->steps[tr.n - 1]->job_id, last_id);
	cr_assert_eq((int)m->status, (int)b.status);
	cr_assert_eq((int)m->confidence, (int)b.confidence);
	cr_assert_str_eq(m->culprit, culprit);
	cr_assert_eq(m->n_flagged_cls, b.nflagged);
	cr_assert_eq(m->builds, b.builds);
	cr_assert_eq(m->n_correlated_series, 2);
	cr_assert_eq(m->culprit_upstream_index, b.culprit_upstream);
	if (b.culprit_upstream >= 0)
		cr_assert_str_eq(m->culprit_upstream, "cl/7841917@6137");
	/* each step names the number of the CL it built (cl/N: N; a roll's
	 * cl/N@K: 0, since every commit of the roll would share N) */
	for (size_t i = 0; i < m->n_steps; i++) {
		bool roll = strchr(m->steps[i]->cl, '@') != NULL;
		int64_t want = roll ? 0 : strtoll(m->steps[i]->cl + 3, NULL, 10);
		cr_assert(roll || want > 0, "step %zu: cl \"%s\"", i, m->steps[i]->cl);
		cr_assert_eq(m->steps[i]->cl_number, want, "step %zu: cl \"%s\", cl_number %" PRId64, i,
		             m->steps[i]->cl, m->steps[i]->cl_number);
	}
	perfwatch__v1__bisection__free_unpacked(m, NULL);
	free(buf);
	/*
	 * A done bisection with a plain culprit is the attributor's: its door
	 * takes it (a job on each side of the culprit, found by cl_number), with
	 * the canonical series_key the bisector writes.
	 */
	if (b.status == PW_BISECT_DONE && culprit[0] && b.culprit_upstream < 0) {
		char key[512];
		snprintf(key, sizeof key, "%s/%s/%s/%s/%s", t.model, t.hlo_fingerprint, t.platform, t.config, t.metric);
		t.series_key = key;
		cr_assert_eq(pw_bisect_pack(&h, "alert-1", "", &t, &b, steps, tr.n, corr, 2, 99, &buf, &len), PW_OK);
		Perfwatch__V1__Bisection *a = NULL;
		Perfwatch__V1__DlqReason why = 0;
		char detail[512];
		cr_assert_eq(pw_attr_bisection_decode(buf, len, &a, &why, detail, sizeof detail), PW_ATTR_INPUT_ACCEPT,
		             "the attributor refuses the bisection: %s", detail);
		perfwatch__v1__bisection__free_unpacked(a, NULL);
		free(buf);
	}
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}

Test(bisect_msg, worked_example_jobs_are_read_back_by_the_simulator)
{
	jobs_read_back("worked-example", 7841885, 7841923);
}

Test(bisect_msg, roll_and_pair_jobs_are_read_back_by_the_simulator)
{
	jobs_read_back("llvm-roll", 7841885, 7841923);
	jobs_read_back("two-cl-interaction", 7841885, 7841923);
}

/*
 * A build nobody answers: the service gives up after bisector.max_reissues
 * (pw_bisect_give_up with PW_BISECT_NO_ANSWER). The bisection is then over,
 * FAILED, names no culprit, and its reason starts with "no_answer"; an ended
 * bisection is left as it is.
 */
Test(bisect_scenario, a_job_nobody_answers_fails_the_bisection_with_no_answer)
{
	pw_sim *w = world("worked-example");
	size_t ncls;
	pw_bisect_cl *cls = history(w, 7841885, 7841923, &ncls);
	pw_bisect b;
	cr_assert_eq(pw_bisect_init(&b, NULL, 7841885, 7841923, cls, ncls), PW_OK);
	pw_bisect_job job;
	cr_assert(pw_bisect_next(&b, &job), "the first job is due");
	pw_bisect_give_up(&b, PW_BISECT_NO_ANSWER ": job bs-x-00 (step 0, cl/7841885) has 0 of 5 results after 3 "
	                      "re-issues 1800 s apart");
	cr_assert_not(pw_bisect_next(&b, &job), "no job after giving up");
	cr_assert_eq(b.status, PW_BISECT_FAILED);
	cr_assert_str_eq(pw_bisect_status_name(b.status), "failed");
	cr_assert_eq(b.culprit, 0);
	cr_assert(strncmp(b.reason, "no_answer: job bs-x-00", 22) == 0, "%s", b.reason);
	/* over already: a second call changes nothing */
	char was[sizeof b.reason];
	memcpy(was, b.reason, sizeof was);
	pw_bisect_give_up(&b, "something else");
	cr_assert_str_eq(b.reason, was);
	pw_bisect_release(&b);
	free(cls);
	pw_sim_free(w);
}
