/*
 * bench_power.c: the power of the two-sample verdict (pw_stats_compare, what
 * `perfwatch compare` and the gate decide with) at the gate's sizes, measured
 * over simulated trials against the rule it replaced, re-implemented here.
 *
 * Series are normal with σ = 0.4% of a 100 ms level, 30 baseline runs and 5
 * candidate runs (and 6…10 for the sample-size question), the candidate's
 * level shifted by s% (the worse direction, lower is better).
 *
 *   old rule: MWU p < α  and  median Δ > max(MDE, 2σ̂)          (until 2026-12)
 *   new rule: MWU p < α  and  HL effect > max(0.7·MDE, 2σ̂·√(1/n_b + 1/n_c))
 *
 * It prints
 *  1. the power curve of one comparison at α = 0.05 (`perfwatch compare`),
 *     s = 0.25% … 3%, 2,000 trials a point, both rules;
 *  2. the quiet release: 2,160 null comparisons, Benjamini–Hochberg at
 *     q = 0.05 as the gate does, the share of releases in which anything
 *     fires, and the per-test false-fire rate without BH at α = 0.05;
 *  3. the release power: one series shifted by 1.0% (or 0.3%) among 2,159
 *     quiet ones, BH over all, the share of trials that call it REGRESSED,
 *     for n_cand = 5…10.
 * docs/statistics.md §6 explains the rule and the arithmetic behind it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rng.h"
#include "pw_stats.h"

#define N_BASE 30
#define SIGMA 0.4 /* percent */
#define MDE 1.0
#define TRIALS 2000
#define RELEASE 2160
#define RELEASES 200
#define REL_TRIALS 400

typedef struct outcome {
	double p;
	bool fire_new; /* effect filter of the new rule, in the worse direction */
	bool fire_old; /* effect filter of the old rule, in the worse direction */
} outcome;

static void draw(uint64_t *rng, double *x, size_t n, double shift_pct)
{
	for (size_t i = 0; i < n; i++)
		x[i] = 100.0 * (1.0 + shift_pct / 100.0) + gauss(rng) * SIGMA;
}

static int one(uint64_t *rng, size_t n_cand, double shift_pct, double *work, outcome *o)
{
	double base[N_BASE], cand[64];
	draw(rng, base, N_BASE, 0.0);
	draw(rng, cand, n_cand, shift_pct);
	pw_compare_opts opts;
	pw_compare_opts_init(&opts);
	opts.mde_pct = MDE;
	pw_compare_result r;
	if (pw_stats_compare(base, N_BASE, cand, n_cand, &opts, work, &r) != PW_OK)
		return -1;
	double old_thr = MDE > r.two_sigma_pct ? MDE : r.two_sigma_pct;
	o->p = r.p;
	o->fire_new = r.effect_filter_passed && r.effect_pct > 0.0;
	o->fire_old = r.delta_pct > old_thr;
	return 0;
}

/* BH at q over p[0..n): whether test i is rejected, via the q-values. */
static int bh(const double *p, size_t n, size_t *iw, double *q)
{
	return pw_stats_bh_qvalues(p, n, iw, q) == PW_OK ? 0 : -1;
}

int main(void)
{
	uint64_t rng = 0x5eed0017ULL;
	double *work = malloc(pw_stats_compare_work_len(N_BASE, 64) * sizeof *work);
	double *p = malloc(RELEASE * sizeof *p), *q = malloc(RELEASE * sizeof *q);
	size_t *iw = malloc(RELEASE * sizeof *iw);
	outcome *rel = malloc((size_t)RELEASES * RELEASE * sizeof *rel);
	if (!work || !p || !q || !iw || !rel)
		return 1;
	double t0 = now();

	printf("bench_power: σ = %.1f%%, n_base = %d, MDE = %.1f%%, %d trials a point\n", SIGMA,
	       N_BASE, MDE, TRIALS);
	printf("\n1. one comparison at alpha = 0.05 (perfwatch compare), n_cand = 5\n");
	printf("  shift%%   new rule   old rule\n");
	static const double shifts[] = {0.0, 0.25, 0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9,
	                                1.0, 1.1, 1.25, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0};
	for (size_t s = 0; s < sizeof shifts / sizeof shifts[0]; s++) {
		int fn = 0, fo = 0;
		for (int t = 0; t < TRIALS; t++) {
			outcome o;
			if (one(&rng, 5, shifts[s], work, &o) != 0)
				return 1;
			fn += o.p < 0.05 && o.fire_new;
			fo += o.p < 0.05 && o.fire_old;
		}
		printf("  %5.2f    %6.4f     %6.4f\n", shifts[s], (double)fn / TRIALS,
		       (double)fo / TRIALS);
	}

	printf("\n2./3. releases of %d series, BH q = 0.05 (the gate); %d quiet releases, "
	       "%d shifted trials an n\n",
	       RELEASE, RELEASES, REL_TRIALS);
	printf("  n_cand  quiet:any-fire new/old  per-test@0.05 new/old  "
	       "1.0%%-power new/old  0.3%%-called new/old\n");
	for (size_t n_cand = 5; n_cand <= 10; n_cand++) {
		int any_new = 0, any_old = 0;
		long unadj_new = 0, unadj_old = 0;
		for (int r = 0; r < RELEASES; r++) {
			outcome *o = rel + (size_t)r * RELEASE;
			for (int i = 0; i < RELEASE; i++) {
				if (one(&rng, n_cand, 0.0, work, &o[i]) != 0)
					return 1;
				p[i] = o[i].p;
				unadj_new += o[i].p < 0.05 && o[i].fire_new;
				unadj_old += o[i].p < 0.05 && o[i].fire_old;
			}
			if (bh(p, RELEASE, iw, q) != 0)
				return 1;
			bool an = false, ao = false;
			for (int i = 0; i < RELEASE; i++) {
				an |= q[i] < 0.05 && o[i].fire_new;
				ao |= q[i] < 0.05 && o[i].fire_old;
			}
			any_new += an;
			any_old += ao;
		}
		/* One shifted series replaces series 0 of a quiet release (reused in turn). */
		double pw[2][2] = {{0, 0}, {0, 0}};
		static const double sh[2] = {1.0, 0.3};
		for (int k = 0; k < 2; k++) {
			for (int t = 0; t < REL_TRIALS; t++) {
				outcome *o = rel + (size_t)(t % RELEASES) * RELEASE;
				outcome x;
				if (one(&rng, n_cand, sh[k], work, &x) != 0)
					return 1;
				p[0] = x.p;
				for (int i = 1; i < RELEASE; i++)
					p[i] = o[i].p;
				if (bh(p, RELEASE, iw, q) != 0)
					return 1;
				pw[k][0] += q[0] < 0.05 && x.fire_new;
				pw[k][1] += q[0] < 0.05 && x.fire_old;
			}
		}
		printf("  %6zu  %8.3f / %-8.3f      %.2e / %.2e    %5.3f / %-5.3f     %5.3f / %5.3f\n",
		       n_cand, (double)any_new / RELEASES, (double)any_old / RELEASES,
		       (double)unadj_new / ((double)RELEASES * RELEASE),
		       (double)unadj_old / ((double)RELEASES * RELEASE), pw[0][0] / REL_TRIALS,
		       pw[0][1] / REL_TRIALS, pw[1][0] / REL_TRIALS, pw[1][1] / REL_TRIALS);
		fflush(stdout);
	}
	printf("\n  elapsed %.1f s\n", now() - t0);
	free(rel);
	free(iw);
	free(q);
	free(p);
	free(work);
	return 0;
}
