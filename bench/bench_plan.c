/*
 * bench_plan.c: the planner over simulated weeks (docs/planner.md, "Figures";
 * bench/planner.sh runs it). One catalogue (tools/simulator/sim_catalogue.h),
 * a nightly every day and an RC every Monday from 2026-05-04, each day's CLs
 * with the ops they touch (cl/7841917, the worked example's fusion cap, on
 * 2026-06-17), every plan made by pw_plan_make with the results of the
 * plans before it. The fleet's measurements are drawn here: σ per platform
 * (0.4% TPU, 2% GPU), and the regressions injected below; a planned series
 * measured at n ≥ 3 is judged by pw_stats_compare against 30 baseline
 * runs, a nightly's single run by the baseliner's 3σ excursion rule.
 *
 *   bench_plan [--models N] [--weeks W] [--seed S] [--quiet]
 *   bench_plan --curve 300,1000,3000 [--weeks W] [--svg FILE]
 *
 * Prints the week's budget lines (the §5 table), RC coverage, pruning,
 * 28-day coverage and plan times; with the default scenario also what the
 * injected regressions became. Exit status 0; the figures are for the
 * reader (bench/planner.sh checks the Must-show bounds and says so).
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan.h"
#include "pw_stats.h"
#include "sim_catalogue.h"
#include "sim_rng.h"
#include "pw_plot.h"

#define DAY0 20577            /* 2026-05-04, a Monday, days since the epoch */
#define WORKED_DAY PW_SIM_CAT_ANCHOR_DAY
#define CLS_PER_DAY PW_SIM_CAT_CLS_PER_DAY
#define CULPRIT PW_SIM_CAT_CULPRIT

static int64_t head_of(int32_t day)
{
	return pw_sim_catalogue_head(day);
}

static void day_name(int32_t day, char *buf, size_t len)
{
	time_t t = (time_t)day * 86400;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d", &tm);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A regression in the fleet's truth: from build cl on, series of `model` (on `platform`, "" all; config index, -1 all) move by pct. */
typedef struct effect {
	const char *label;
	long model;
	const char *platform;
	int config;
	int64_t cl;
	double pct;
	int32_t first_seen, planned, detected; /* days; INT32_MIN = not yet */
	const char *tier;
	uint32_t repeats;
	bool through_rep;           /* caught through its representative's verdict */
	const char *rep;
	double rep_similarity;
} effect;

typedef struct history {
	size_t n;
	pw_plan_seen *seen;         /* per model; model NULL when never */
	char (*fp)[24];             /* fingerprints the seen rows point to */
	int64_t *ran;               /* per model × platform × config: head of the last run, INT64_MIN never */
	int32_t *adopted;           /* per model: the day its current program was adopted */
} history;

typedef struct week_sum {
	double line[PW_PLAN_TIERS], planned_t0, naive, min_cov;
	uint32_t candidates, pruned, t1_models, clusters, rotation, inherits;
	double rc_ms, nightly_ms_max;
	uint32_t items;
} week_sum;

static int platform_index(const pw_sim_catalogue *c, const char *p)
{
	for (size_t i = 0; i < c->nplatforms; i++)
		if (strcmp(c->platforms[i].facts.name, p) == 0)
			return (int)i;
	return -1;
}

static int config_index(const pw_plan_model *m, const char *cfg)
{
	for (size_t i = 0; i < m->nconfigs; i++)
		if (strcmp(m->configs[i], cfg) == 0)
			return (int)i;
	return -1;
}

/* Judges one planned series against an effect: draws 30 baseline runs and the item's repeats. */
static bool detect(const pw_sim_catalogue *c, const pw_plan_item *it, double pct, uint64_t seed,
                   double *work)
{
	int pi = platform_index(c, it->platform);
	double sigma = c->platforms[pi].sigma_pct / 100;
	pw_sim_rng r;
	pw_sim_rng_init(&r, pw_sim_hash_str(pw_sim_hash_u64(PW_SIM_HASH_INIT, seed), it->model));
	double base[30], cand[16];
	for (int i = 0; i < 30; i++)
		base[i] = 1 + sigma * pw_sim_rng_normal(&r);
	uint32_t n = it->repeats > 16 ? 16 : it->repeats;
	for (uint32_t i = 0; i < n; i++)
		cand[i] = (1 + pct / 100) * (1 + sigma * pw_sim_rng_normal(&r));
	if (n < 3) /* the nightly's point against the baseliner's band: median ± 3·σ */
		return fabs(cand[0] - 1) > 3 * sigma;
	pw_compare_opts o;
	pw_compare_opts_init(&o);
	o.mde_pct = it->mde_pct;
	pw_compare_result res;
	if (pw_stats_compare(base, 30, cand, n, &o, work, &res) != PW_OK)
		return false;
	return res.verdict == PW_COMPARE_REGRESSED;
}

static void history_record(history *h, const pw_sim_catalogue *c, const pw_plan *p, int32_t day,
                           int64_t head)
{
	for (size_t k = 0; k < p->nitems; k++) {
		const pw_plan_item *it = &p->items[k];
		size_t mi = it->model_index;
		const pw_plan_model *m = &c->models[mi];
		pw_plan_seen *s = &h->seen[mi];
		if (!s->model || strcmp(h->fp[mi], m->fingerprint) != 0) {
			snprintf(h->fp[mi], sizeof h->fp[mi], "%s", m->fingerprint);
			*s = (pw_plan_seen){m->model, h->fp[mi], INT32_MIN, INT32_MIN};
		}
		s->day = day;
		if (it->tier == PW_PLAN_T1 || it->tier == PW_PLAN_T2)
			s->full_day = day;
		int pi = platform_index(c, it->platform), ci = config_index(m, it->config);
		h->ran[(mi * PW_SIM_CAT_PLATFORMS + (size_t)pi) * PW_SIM_CAT_CONFIGS + (size_t)ci] = head;
	}
}

typedef struct run_result {
	week_sum weeks[16];
	size_t nweeks;
	double min_cov_all, pruned_pct, measured28_min_pct;
	double chip_h_week_avg, naive_week, plan_ms_rc_med, plan_ms_nightly_med;
	size_t models;
} run_result;

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Runs `weeks` weeks on a catalogue of n; effects may be NULL. */
static int simulate(size_t n, int weeks, uint64_t seed, effect *effects, size_t neffects,
                    long readopt_model, int32_t readopt_day, bool verbose, run_result *rr)
{
	pw_sim_catalogue *c;
	if (pw_sim_catalogue_new(n, seed, &c) != PW_OK)
		return 1;
	pw_plan_params prm;
	pw_plan_params_default(&prm);
	history h = {n, calloc(n, sizeof *h.seen), calloc(n, sizeof *h.fp),
	             malloc(n * PW_SIM_CAT_PLATFORMS * PW_SIM_CAT_CONFIGS * sizeof *h.ran), malloc(n * sizeof *h.adopted)};
	for (size_t i = 0; i < n; i++)
		h.adopted[i] = DAY0;
	pw_plan_seen *seen = malloc(n * sizeof *seen);
	pw_plan_ran *ran = malloc(n * PW_SIM_CAT_PLATFORMS * PW_SIM_CAT_CONFIGS * sizeof *ran);
	double *work = malloc(pw_stats_compare_work_len(30, 16) * sizeof *work);
	double *rc_ms = calloc((size_t)weeks + 1, sizeof *rc_ms), *nt_ms = calloc((size_t)weeks * 7 + 1, sizeof *nt_ms);
	size_t nrc = 0, nnt = 0;
	pw_sim_cl_buf cls = {0};
	for (size_t i = 0; i < n * PW_SIM_CAT_PLATFORMS * PW_SIM_CAT_CONFIGS; i++)
		h.ran[i] = INT64_MIN;
	memset(rr, 0, sizeof *rr);
	rr->min_cov_all = 1;
	rr->measured28_min_pct = 100;
	rr->models = n;
	uint32_t cand_all = 0, pruned_all = 0;
	for (int32_t d = 0; d < weeks * 7; d++) {
		int32_t day = DAY0 + d;
		int64_t head = head_of(day), prev = head_of(day - 1);
		/* the day's CLs (cl/7841917 is the fusion cap) */
		if (pw_sim_catalogue_day_cls(c, prev, CLS_PER_DAY, &cls) != PW_OK)
			return 1;
		for (size_t e = 0; e < neffects; e++)
			if (effects[e].cl > prev && effects[e].cl <= head && effects[e].first_seen == INT32_MIN)
				effects[e].first_seen = day;
		if (readopt_model >= 0 && day == readopt_day) {
			pw_sim_catalogue_readopt(c, (size_t)readopt_model);
			h.adopted[readopt_model] = day;
		}
		for (int kind = 0; kind < 2; kind++) {
			if (kind == 1 && (d % 7) != 0)
				continue;
			char sid[48], dn[16];
			day_name(day, dn, sizeof dn);
			snprintf(sid, sizeof sid, "%s-%s", kind ? "rc" : "nightly", dn);
			pw_plan_sweep sw = {sid, kind ? PW_PLAN_RC : PW_PLAN_NIGHTLY, sid, head, day};
			size_t ns = 0, nr = 0;
			for (size_t i = 0; i < n; i++)
				if (h.seen[i].model)
					seen[ns++] = h.seen[i];
			for (size_t i = 0; i < n; i++)
				for (size_t p = 0; p < PW_SIM_CAT_PLATFORMS; p++)
					for (size_t q = 0; q < PW_SIM_CAT_CONFIGS; q++) {
						int64_t v = h.ran[(i * PW_SIM_CAT_PLATFORMS + p) * PW_SIM_CAT_CONFIGS + q];
						if (v != INT64_MIN)
							ran[nr++] = (pw_plan_ran){c->models[i].model, c->models[i].platforms[p],
							                          c->models[i].configs[q], v};
					}
			pw_plan_inputs in = {c->models, n, c->platforms, c->nplatforms, cls.cls, cls.ncls,
			                     NULL, 0, seen, ns, ran, nr, &sw};
			pw_plan plan;
			double t0 = now_ms();
			if (pw_plan_make(&in, &prm, &plan) != PW_OK) {
				fprintf(stderr, "bench_plan: plan %s failed\n", sid);
				return 1;
			}
			double ms = now_ms() - t0;
			week_sum *w = &rr->weeks[d / 7];
			for (int t = 0; t < PW_PLAN_TIERS; t++)
				w->line[t] += plan.lines[t].chip_h;
			w->items += (uint32_t)plan.nitems;
			if (kind == 0) {
				w->planned_t0 += plan.lines[PW_PLAN_T0].planned_chip_h;
				w->candidates += plan.t0_candidates;
				w->pruned += plan.t0_pruned;
				cand_all += plan.t0_candidates;
				pruned_all += plan.t0_pruned;
				nt_ms[nnt++] = ms;
				if (ms > w->nightly_ms_max)
					w->nightly_ms_max = ms;
			} else {
				w->min_cov = plan.spend_coverage;
				w->naive = plan.naive_chip_h_week;
				w->t1_models = plan.t1_models;
				w->clusters = plan.clusters;
				w->rotation = plan.rotation_models;
				w->inherits = (uint32_t)plan.ninherits;
				w->rc_ms = ms;
				rc_ms[nrc++] = ms;
				if (plan.spend_coverage < rr->min_cov_all)
					rr->min_cov_all = plan.spend_coverage;
			}
			/* what the plan's measurements show of the injected regressions */
			for (size_t e = 0; e < neffects; e++) {
				effect *ef = &effects[e];
				if (ef->detected != INT32_MIN || head < ef->cl)
					continue;
				for (size_t k = 0; k < plan.nitems && ef->detected == INT32_MIN; k++) {
					const pw_plan_item *it = &plan.items[k];
					if ((long)it->model_index != ef->model ||
					    (ef->platform[0] && strcmp(ef->platform, it->platform) != 0) ||
					    (ef->config >= 0 && strcmp(c->models[ef->model].configs[ef->config], it->config) != 0))
						continue;
					if (ef->planned == INT32_MIN)
						ef->planned = day;
					if (detect(c, it, ef->pct, seed ^ (uint64_t)day ^ k, work)) {
						ef->detected = day;
						ef->tier = pw_plan_tier_name(it->tier);
						ef->repeats = it->repeats;
					}
				}
				/* an inheritor: caught when its representative's series is */
				for (size_t k = 0; k < plan.ninherits && ef->detected == INT32_MIN; k++) {
					const pw_plan_inherit *ih = &plan.inherits[k];
					if ((long)ih->model_index != ef->model || !ih->measured)
						continue;
					for (size_t x = 0; x < neffects; x++)
						if (x != e && effects[x].detected == day && effects[x].cl == ef->cl &&
						    strcmp(c->models[effects[x].model].model, ih->representative) == 0) {
							ef->detected = day;
							ef->through_rep = true;
							ef->rep = ih->representative;
							ef->rep_similarity = ih->similarity;
							ef->tier = "inherits";
						}
				}
			}
			if (verbose && kind == 1 && readopt_model >= 0 && day > readopt_day) {
				for (size_t k = 0; k < plan.nitems; k++)
					if ((long)plan.items[k].model_index == readopt_model) {
						printf("  %s: %s (new fingerprint %s) runs on its own: %s %s %s n=%u\n", sid,
						       c->models[readopt_model].model, c->models[readopt_model].fingerprint,
						       pw_plan_tier_name(plan.items[k].tier), plan.items[k].platform,
						       plan.items[k].config, plan.items[k].repeats);
						break;
					}
			}
			if (verbose && kind == 1) {
				for (size_t k = 0; k < plan.ninherits; k++)
					if (strcmp(plan.inherits[k].model, "rank-x") == 0)
						printf("  %s: rank-x inherits from %s, similarity %.2f%s\n", sid,
						       plan.inherits[k].representative, plan.inherits[k].similarity,
						       plan.inherits[k].measured ? "" : " (representative not measured)");
			}
			if (verbose && kind == 0 && day == WORKED_DAY) {
				bool v6e = false, v5e = false;
				for (size_t k = 0; k < plan.nitems; k++) {
					v6e |= strcmp(plan.items[k].model, "chat-8b") == 0 && strcmp(plan.items[k].platform, "v6e-4") == 0 &&
					       strcmp(plan.items[k].config, "decode.B64.s2048.int8") == 0;
					v5e |= strcmp(plan.items[k].model, "chat-8b") == 0 && strcmp(plan.items[k].platform, "v5e-8") == 0 &&
					       strcmp(plan.items[k].config, "decode.B64.s2048.int8") == 0;
				}
				printf("  %s: chat-8b/v6e-4/decode.B64.s2048.int8 %s, chat-8b/v5e-8/decode.B64.s2048.int8 %s (%u of %u T0 benchmarks pruned)\n",
				       sid, v6e ? "PLANNED" : "skipped", v5e ? "planned" : "skipped", plan.t0_pruned, plan.t0_candidates);
			}
			history_record(&h, c, &plan, day, head);
			pw_plan_release(&plan);
		}
		/* 28-day coverage: every model's current program measured in the last 28 days, or adopted since */
		if (d >= 27) {
			size_t ok = 0;
			for (size_t i = 0; i < n; i++)
				ok += (h.seen[i].model && strcmp(h.fp[i], c->models[i].fingerprint) == 0 &&
				       day - h.seen[i].day < 28) || day - h.adopted[i] < 28;
			double pct = 100.0 * ok / n;
			if (pct < rr->measured28_min_pct)
				rr->measured28_min_pct = pct;
		}
	}
	rr->nweeks = (size_t)weeks;
	double sum = 0;
	for (size_t w = 0; w < rr->nweeks; w++) {
		double t = 0;
		for (int k = 0; k < PW_PLAN_TIERS; k++)
			t += rr->weeks[w].line[k];
		sum += t;
	}
	rr->chip_h_week_avg = sum / (double)rr->nweeks;
	rr->naive_week = rr->weeks[0].naive;
	rr->pruned_pct = cand_all ? 100.0 * pruned_all / cand_all : 0;
	qsort(rc_ms, nrc, sizeof *rc_ms, cmp_d);
	qsort(nt_ms, nnt, sizeof *nt_ms, cmp_d);
	rr->plan_ms_rc_med = nrc ? rc_ms[nrc / 2] : 0;
	rr->plan_ms_nightly_med = nnt ? nt_ms[nnt / 2] : 0;
	pw_sim_cl_buf_release(&cls);
	free(h.seen);
	free(h.fp);
	free(h.ran);
	free(h.adopted);
	free(seen);
	free(ran);
	free(work);
	free(rc_ms);
	free(nt_ms);
	pw_sim_catalogue_free(c);
	return 0;
}

static void print_weeks(const run_result *rr)
{
	printf("\nweek  T0 run/planned    T1      T2    tail  reserve   total  %%naive  RC-coverage  pruned  T1-models clusters rotation inherits  RC-plan-ms\n");
	for (size_t w = 0; w < rr->nweeks; w++) {
		const week_sum *s = &rr->weeks[w];
		double t = 0;
		for (int k = 0; k < PW_PLAN_TIERS; k++)
			t += s->line[k];
		printf("%4zu  %6.1f/%6.1f  %6.1f  %6.1f  %6.1f  %7.1f  %6.1f  %5.2f%%  %10.1f%%  %5.1f%%  %9u %8u %8u %8u  %10.1f\n",
		       w + 1, s->line[PW_PLAN_T0], s->planned_t0, s->line[PW_PLAN_T1], s->line[PW_PLAN_T2],
		       s->line[PW_PLAN_TAIL], s->line[PW_PLAN_RESERVE], t, 100 * t / s->naive, 100 * s->min_cov,
		       s->candidates ? 100.0 * s->pruned / s->candidates : 0, s->t1_models, s->clusters,
		       s->rotation, s->inherits, s->rc_ms);
	}
}

static void print_effect(const effect *e)
{
	char a[16] = "-", b[16] = "-", c[16] = "-";
	if (e->first_seen != INT32_MIN)
		day_name(e->first_seen, a, sizeof a);
	if (e->planned != INT32_MIN)
		day_name(e->planned, b, sizeof b);
	if (e->detected != INT32_MIN)
		day_name(e->detected, c, sizeof c);
	char lat[24] = "not caught";
	if (e->detected != INT32_MIN)
		snprintf(lat, sizeof lat, "%d days", e->detected - e->first_seen);
	printf("  %-58s first visible %s, first planned %s, caught %s (%s, n=%u), latency %s",
	       e->label, a, b, c, e->tier ? e->tier : "-", e->repeats, lat);
	if (e->through_rep)
		printf(" — through %s, similarity %.2f", e->rep, e->rep_similarity);
	printf("\n");
}

static int run_default(size_t n, int weeks, uint64_t seed, bool quiet)
{
	pw_sim_catalogue *c;
	if (pw_sim_catalogue_new(n, seed, &c) != PW_OK)
		return 1;
	long chat = pw_sim_catalogue_find(c, "chat-8b"), rx = pw_sim_catalogue_find(c, "rank-x");
	long tail = (long)(n / 2); /* a model in the middle of the tail */
	char tail_label[128], rx_label[128];
	snprintf(tail_label, sizeof tail_label, "%s +4%% (all series; tail)", c->models[tail].model);
	snprintf(rx_label, sizeof rx_label, "rank-x +3%% on ironwood-8 (shares chat-8b's program)");
	pw_sim_catalogue_free(c);
	effect ef[] = {
		{"chat-8b/v6e-4/decode.B64.s2048.int8 +8.2% (cl/7841917)", chat, "v6e-4", 0, CULPRIT, 8.2,
		 INT32_MIN, INT32_MIN, INT32_MIN, NULL, 0, false, NULL, 0},
		{tail_label, tail, "", -1, head_of(DAY0 + 9) - 5, 4.0, INT32_MIN, INT32_MIN, INT32_MIN, NULL, 0, false, NULL, 0},
		{"chat-8b +3% on ironwood-8 (the shared program)", chat, "ironwood-8", -1, head_of(DAY0 + 22) - 3, 3.0,
		 INT32_MIN, INT32_MIN, INT32_MIN, NULL, 0, false, NULL, 0},
		{rx_label, rx, "ironwood-8", -1, head_of(DAY0 + 22) - 3, 3.0, INT32_MIN, INT32_MIN, INT32_MIN, NULL, 0, false, NULL, 0},
	};
	size_t ne = sizeof ef / sizeof ef[0];
	run_result rr;
	printf("planner, %zu models, %d weeks from 2026-05-04 (seed %" PRIu64 "); rank-x re-adopted (new fingerprint) on 2026-06-10\n",
	       n, weeks, seed);
	if (simulate(n, weeks, seed, ef, ne, rx, DAY0 + 37, !quiet, &rr) != 0)
		return 1;
	print_weeks(&rr);
	printf("\nsummary: %.0f chip-h/week average = %.2f%% of the naive %.0f; RC spend coverage min %.1f%%; "
	       "models measured within 28 days (from day 28) min %.1f%%; nightly pruning %.1f%%; "
	       "plan time median RC %.1f ms, nightly %.1f ms\n",
	       rr.chip_h_week_avg, 100 * rr.chip_h_week_avg / rr.naive_week, rr.naive_week,
	       100 * rr.min_cov_all, rr.measured28_min_pct, rr.pruned_pct, rr.plan_ms_rc_med,
	       rr.plan_ms_nightly_med);
	printf("\nregressions injected:\n");
	for (size_t e = 0; e < ne; e++)
		print_effect(&ef[e]);
	return 0;
}

static int run_curve(const char *list, int weeks, uint64_t seed, const char *svg)
{
	size_t sizes[8], ns = 0;
	for (const char *p = list; *p && ns < 8;) {
		sizes[ns++] = strtoul(p, (char **)&p, 10);
		if (*p == ',')
			p++;
	}
	run_result rr[8];
	printf("models  chip-h/week  %%naive  naive     RC-coverage-min  measured-28d-min  pruned  RC-plan-ms  nightly-plan-ms\n");
	for (size_t i = 0; i < ns; i++) {
		if (simulate(sizes[i], weeks, seed, NULL, 0, -1, 0, false, &rr[i]) != 0)
			return 1;
		printf("%6zu  %11.0f  %5.2f%%  %7.0f  %14.1f%%  %15.1f%%  %5.1f%%  %10.1f  %15.1f\n", sizes[i],
		       rr[i].chip_h_week_avg, 100 * rr[i].chip_h_week_avg / rr[i].naive_week, rr[i].naive_week,
		       100 * rr[i].min_cov_all, rr[i].measured28_min_pct, rr[i].pruned_pct, rr[i].plan_ms_rc_med,
		       rr[i].plan_ms_nightly_med);
	}
	if (ns >= 2)
		printf("growth %zu → %zu models (×%.1f): chip-h/week ×%.2f (ratio of chip-h growth to catalogue growth %.2f)\n",
		       sizes[0], sizes[ns - 1], (double)sizes[ns - 1] / sizes[0],
		       rr[ns - 1].chip_h_week_avg / rr[0].chip_h_week_avg,
		       (rr[ns - 1].chip_h_week_avg / rr[0].chip_h_week_avg) / ((double)sizes[ns - 1] / sizes[0]));
	if (svg) {
		FILE *f = fopen(svg, "w");
		if (!f)
			return 1;
		pw_plot_xy_point pts[2][8];
		for (size_t i = 0; i < ns; i++) {
			pts[0][i] = (pw_plot_xy_point){(double)sizes[i], rr[i].chip_h_week_avg};
			pts[1][i] = (pw_plot_xy_point){(double)sizes[i], rr[i].naive_week * 0.065};
		}
		pw_plot_xy_line lines[2] = {{"planned chip-h/week", pts[0], ns, false},
		                            {"6.5% of naive (linear in models)", pts[1], ns, true}};
		pw_plot_xy chart = {"planner: chip-hours a week against catalogue size", "models in the catalogue",
		                    "chip-h/week", lines, 2};
		char err[256];
		pw_status st = pw_plot_xy_svg(f, &chart, 720, 420, err, sizeof err);
		fclose(f);
		if (st != PW_OK) {
			fprintf(stderr, "bench_plan: %s\n", err);
			return 1;
		}
		printf("plot: %s\n", svg);
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = 300;
	int weeks = 8;
	uint64_t seed = 20260504;
	const char *curve = NULL, *svg = NULL;
	bool quiet = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--models") == 0 && i + 1 < argc)
			n = strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--weeks") == 0 && i + 1 < argc)
			weeks = atoi(argv[++i]);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--curve") == 0 && i + 1 < argc)
			curve = argv[++i];
		else if (strcmp(argv[i], "--svg") == 0 && i + 1 < argc)
			svg = argv[++i];
		else if (strcmp(argv[i], "--quiet") == 0)
			quiet = true;
		else {
			fprintf(stderr, "usage: bench_plan [--models N] [--weeks W] [--seed S] [--quiet] | --curve N,N,N [--weeks W] [--svg FILE]\n");
			return 2;
		}
	}
	if (weeks < 1 || weeks > 16 || n < 20)
		return 2;
	return curve ? run_curve(curve, weeks, seed, svg) : run_default(n, weeks, seed, quiet);
}
