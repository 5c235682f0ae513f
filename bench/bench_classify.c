/*
 * bench_classify.c: the per-run classifier (pw_classify, `perfwatch
 * classify`) side by side with LNT's own rule, re-implemented here from
 * llvm/llvm-lnt lnt/server/reporting/analysis.py (ComparisonResult with
 * aggregation min, get_value_status() defaults: the 1% and 0.01 absolute
 * floors, Mann–Whitney when both sides have >= 4 samples, the 2.576·stddev
 * interval of a multi-sample run, else any change >= 0.2% against the
 * nearest earlier sample, absmin_diff).
 *
 * Every cell is a single-sample series at level 10 with 20 earlier runs
 * (3 in the short-history cells), normal noise of the given σ, and the
 * newest run is judged: false flags on flat and bimodal series (20,000
 * trials, so that 0.1% is 20 events), the first shifted run of a step, a
 * slow drift, and the 29 LNT patterns (tests/unit/lnt_patterns.h). The
 * "60 earlier runs" cells keep the 20-run window and give the classifier the
 * 40 runs before it for its rare-mode rule; PW_BENCH_NO_MODE_MEMORY=1 turns
 * the rule off to show what it removes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/unit/lnt_patterns.h"
#include "bench_rng.h"
#include "pw_stats.h"

#define LEVEL 10.0
#define HIST 20
#define LONG_HIST 60 /* cells that also show the runs before the window (mode memory) */
#define TRIALS 2000
#define FLAT_TRIALS 20000

/* LNT's get_value_status for one newest run against earlier samples (min aggregation). */
static pw_cls_verdict lnt_rule(const double *cur, size_t ncur, const double *prev, size_t nprev,
                               double *work)
{
	double c = cur[0];
	for (size_t i = 1; i < ncur; i++)
		c = cur[i] < c ? cur[i] : c;
	/* absmin_diff: the nearest earlier sample, the last one on ties */
	size_t best = 0;
	for (size_t i = 0; i < nprev; i++)
		if (fabs(c - prev[i]) <= fabs(c - prev[best]))
			best = i;
	double delta = c - prev[best];
	double pct = prev[best] != 0.0 ? delta / prev[best] : 0.0;
	if (fabs(pct) < 0.01 || fabs(delta) < 0.01 || fabs(delta) <= 2 * 0.0001 * 2.576)
		return PW_CLS_UNCHANGED;
	if (ncur >= 4 && nprev >= 4) {
		pw_mwu_result mw;
		if (pw_stats_mann_whitney(cur, ncur, prev, nprev, PW_ALT_TWO_SIDED, PW_MWU_AUTO, work,
		                          &mw) == PW_OK &&
		    mw.p >= 0.05)
			return PW_CLS_UNCHANGED;
	}
	if (ncur > 1) {
		double mean, var;
		if (pw_stats_mean_var(cur, ncur, &mean, &var) != PW_OK)
			return PW_CLS_UNCHANGED;
		/* LNT's stats.standard_deviation is the population form */
		double sd = sqrt(var * (double)(ncur - 1) / (double)ncur);
		if (!(fabs(delta) > sd * 2.576))
			return PW_CLS_UNCHANGED;
		return delta < 0 ? PW_CLS_IMPROVED : PW_CLS_REGRESSED;
	}
	if (fabs(pct) >= 0.002)
		return delta < 0 ? PW_CLS_IMPROVED : PW_CLS_REGRESSED;
	return PW_CLS_UNCHANGED;
}

typedef struct cell {
	const char *name;
	size_t hist;
	double sigma_pct;
	double bimodal_gap_pct; /* upper mode this far above, with probability bimodal_p */
	double bimodal_p;
	double step_pct;        /* the newest run shifted by this */
	double drift_pct_per_run;
	double recent_pct;      /* the last recent_runs earlier runs shifted by this (a recovery cell) */
	size_t recent_runs;
	int trials;
	int want_fire;          /* 1: a detection cell, 0: a false-flag cell */
} cell;

static double draw(uint64_t *rng, const cell *c, size_t i, bool newest)
{
	double x = LEVEL * (1.0 + c->sigma_pct / 100.0 * gauss(rng));
	if (c->bimodal_p > 0.0 && unit(rng) < c->bimodal_p)
		x += LEVEL * c->bimodal_gap_pct / 100.0;
	x += LEVEL * c->drift_pct_per_run / 100.0 * (double)i;
	if (!newest && i + c->recent_runs >= c->hist)
		x *= 1.0 + c->recent_pct / 100.0;
	if (newest)
		x *= 1.0 + c->step_pct / 100.0;
	return x;
}

int main(void)
{
	static const cell cells[] = {
		{"flat, 1% noise", HIST, 1, 0, 0, 0, 0, 0, 0, FLAT_TRIALS, 0},
		{"flat, 2% noise", HIST, 2, 0, 0, 0, 0, 0, 0, FLAT_TRIALS, 0},
		{"flat, 5% noise", HIST, 5, 0, 0, 0, 0, 0, 0, FLAT_TRIALS, 0},
		{"bimodal 50/50, modes 5% apart, 1% noise", HIST, 1, 5, 0.5, 0, 0, 0, 0, FLAT_TRIALS, 0},
		{"bimodal 80/20, modes 5% apart, 0.5% noise", HIST, 0.5, 5, 0.2, 0, 0, 0, 0, FLAT_TRIALS, 0},
		{"flat, 1% noise, 3 earlier runs", 3, 1, 0, 0, 0, 0, 0, 0, FLAT_TRIALS, 0},
		{"first run of a 2x step, 1% noise", HIST, 1, 0, 0, 100, 0, 0, 0, TRIALS, 1},
		{"first run of a 2x step, 5% noise", HIST, 5, 0, 0, 100, 0, 0, 0, TRIALS, 1},
		{"first run of a +10% step, 1% noise", HIST, 1, 0, 0, 10, 0, 0, 0, TRIALS, 1},
		{"first run of a +10% step, 2% noise", HIST, 2, 0, 0, 10, 0, 0, 0, TRIALS, 1},
		{"first run of a 2x step, 1% noise, 3 earlier runs", 3, 1, 0, 0, 100, 0, 0, 0, TRIALS, 1},
		{"slow drift +0.5%/run, 0.5% noise (newest continues)", HIST, 0.5, 0, 0, 0, 0.5, 0, 0, TRIALS,
		 1},
		{"bimodal 80/20, modes 5% apart, 0.5% noise, 60 earlier runs", LONG_HIST, 0.5, 5, 0.2, 0,
		 0, 0, 0, FLAT_TRIALS, 0},
		{"bimodal 50/50, modes 5% apart, 1% noise, 60 earlier runs", LONG_HIST, 1, 5, 0.5, 0, 0,
		 0, 0, FLAT_TRIALS, 0},
		{"flat, 1% noise, 60 earlier runs", LONG_HIST, 1, 0, 0, 0, 0, 0, 0, FLAT_TRIALS, 0},
		{"first run of a +10% step, 1% noise, 60 earlier runs", LONG_HIST, 1, 0, 0, 10, 0, 0, 0,
		 TRIALS, 1},
		{"recovery: back from +5% held 20 runs, 0.5% noise, 60 earlier", LONG_HIST, 0.5, 0, 0, 0,
		 0, 5, 20, TRIALS, 1},
	};
	uint64_t rng = 0xc1a551f7ULL;
	pw_cls_params params;
	pw_cls_params_default(&params);
	params.lookback = HIST;
	if (getenv("PW_BENCH_NO_MODE_MEMORY"))
		params.mode_lookback = 0;
	double v[LONG_HIST + 1], work[4 * (LONG_HIST + 8)];
	pw_cls_run runs[LONG_HIST + 1];
	double t0 = now();

	printf("bench_classify: newest run flagged (REGRESSED or IMPROVED), share of trials\n");
	printf("  %-55s %7s  %10s  %10s  %10s\n", "cell", "trials", "perfwatch", "(as drift)",
	       "LNT rule");
	for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++) {
		const cell *c = &cells[k];
		long ours = 0, lnt = 0, drift = 0;
		for (int t = 0; t < c->trials; t++) {
			for (size_t i = 0; i <= c->hist; i++) {
				v[i] = draw(&rng, c, i, i == c->hist);
				runs[i].v = &v[i];
				runs[i].n = 1;
			}
			pw_cls_result r;
			char err[256];
			if (pw_classify(&params, runs, c->hist + 1, &r, err, sizeof err) != PW_OK) {
				fprintf(stderr, "bench_classify: %s\n", err);
				return 1;
			}
			ours += r.verdict != PW_CLS_UNCHANGED;
			drift += r.verdict != PW_CLS_UNCHANGED && r.drift;
			lnt += lnt_rule(&v[c->hist], 1, v, c->hist, work) != PW_CLS_UNCHANGED;
		}
		printf("  %-55s %7d  %9.4f%%  %9.4f%%  %9.4f%%\n", c->name, c->trials,
		       100.0 * (double)ours / c->trials, 100.0 * (double)drift / c->trials,
		       100.0 * (double)lnt / c->trials);
		fflush(stdout);
	}

	pw_cls_run lr[64];
	int ours = 0, lnt = 0;
	printf("\n  LNT's 29 value patterns (tests/server/reporting/analysis.py):\n");
	for (size_t k = 0; k < LNT_NCASES; k++) {
		const lnt_case *c = &LNT_CASES[k];
		pw_cls_params lp;
		pw_cls_params_default(&lp);
		int o = lnt_case_classify(c, &lp, lr);
		pw_cls_verdict l = lnt_rule(c->cur, c->ncur, c->prev, c->nprev, work);
		ours += o == (int)c->want;
		lnt += l == c->want;
		printf("    %-44s want %-9s perfwatch %-9s LNT %-9s%s\n", c->name,
		       pw_cls_verdict_name(c->want), o < 0 ? "ERROR" : pw_cls_verdict_name(o),
		       pw_cls_verdict_name(l), c->fixme ? " (Fixme in LNT)" : "");
	}
	printf("  score: perfwatch %d/%zu, LNT rule %d/%zu\n", ours, LNT_NCASES, lnt, LNT_NCASES);
	printf("  elapsed %.1f s\n", now() - t0);
	return 0;
}
