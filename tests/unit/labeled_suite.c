/*
 * labeled_suite.c: the generator and the table of labeled patterns declared in
 * labeled_suite.h.
 *
 * Every series is level 100 plus Gaussian noise (Box–Muller over splitmix64)
 * plus the pattern: steps, a noise change, two modes, bad runs, drift,
 * quantisation, a shifted tail. The expectation columns say what a careful
 * human reading the plot would answer; the detector and the classifier must
 * agree with all of them. test_labeled_suite.c includes this file directly,
 * since the unit-test build makes one executable per test_*.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "labeled_suite.h"
#include "pw_stats.h"

#define N 300
#define R PW_CLS_REGRESSED
#define I PW_CLS_IMPROVED
#define U PW_CLS_UNCHANGED

static const ls_spec SPECS[] = {
	/* ---- flat lines: nothing, at every noise level (LNT: "flat but noisy line") ---- */
	{.name = "flat_0.4pct", .seed = 101, .n = N, .spr = 1, .sigma = 0.4, .verdict = U,
	 .why = "TPU-class noise, no change"},
	{.name = "flat_1pct", .seed = 102, .n = N, .spr = 1, .sigma = 1.0, .verdict = U,
	 .why = "no change"},
	{.name = "flat_2pct", .seed = 103, .n = N, .spr = 1, .sigma = 2.0, .verdict = U,
	 .why = "GPU-class noise, no change"},
	{.name = "flat_5pct", .seed = 104, .n = N, .spr = 1, .sigma = 5.0, .verdict = U,
	 .why = "LNT: a flat line with 5% noise flagged all the time"},
	{.name = "flat_10pct", .seed = 105, .n = N, .spr = 1, .sigma = 10.0, .verdict = U,
	 .why = "very noisy, no change"},
	{.name = "flat_5pct_multi5", .seed = 106, .n = N, .spr = 5, .sigma = 5.0, .verdict = U,
	 .why = "multi-sample runs, no change"},
	{.name = "flat_2pct_multi3", .seed = 107, .n = N, .spr = 3, .sigma = 2.0, .verdict = U,
	 .why = "three samples a run, no change"},
	{.name = "flat_long_1pct", .seed = 108, .n = 1000, .spr = 1, .sigma = 1.0, .verdict = U,
	 .why = "1,000 nights, no change"},
	{.name = "constant", .seed = 109, .n = 100, .spr = 1, .sigma = 0.0, .verdict = U,
	 .why = "every value identical"},
	{.name = "quantised_timer", .seed = 110, .n = N, .spr = 1, .sigma = 0.4, .quantum = 1.0,
	 .verdict = U, .why = "a coarse timer: values on a 1% grid, no change"},
	/* ---- steps that persist: one changepoint each; the newest run is at the new level ---- */
	{.name = "step5_in_noise5", .seed = 201, .n = N, .spr = 1, .sigma = 5.0,
	 .steps = {{150, 5.0}}, .nsteps = 1, .ncp = 1, .cp_at = {150}, .cp_sign = {1}, .tol = 15,
	 .verdict = U, .why = "LNT: 5% regression in 5% noise; 150 runs on each side"},
	{.name = "step1_in_noise0.4", .seed = 202, .n = N, .spr = 1, .sigma = 0.4,
	 .steps = {{200, 1.0}}, .nsteps = 1, .ncp = 1, .cp_at = {200}, .cp_sign = {1}, .tol = 5,
	 .verdict = U, .why = "the TPU MDE: 1% in 0.4% noise"},
	{.name = "step1_in_noise0.4_multi5", .seed = 203, .n = N, .spr = 5, .sigma = 0.4,
	 .steps = {{120, 1.0}}, .nsteps = 1, .ncp = 1, .cp_at = {120}, .cp_sign = {1}, .tol = 3,
	 .verdict = U, .why = "1% in 0.4% noise, five repeats a run"},
	{.name = "step10_in_noise1", .seed = 204, .n = N, .spr = 1, .sigma = 1.0,
	 .steps = {{90, 10.0}}, .nsteps = 1, .ncp = 1, .cp_at = {90}, .cp_sign = {1}, .tol = 1,
	 .verdict = U, .why = "a big obvious step is located exactly"},
	{.name = "step4_in_noise2_multi6", .seed = 205, .n = N, .spr = 6, .sigma = 2.0,
	 .steps = {{170, 4.0}}, .nsteps = 1, .ncp = 1, .cp_at = {170}, .cp_sign = {1}, .tol = 3,
	 .verdict = U, .why = "GPU-class: 4% MDE at n=6"},
	{.name = "improvement_3pct", .seed = 206, .n = N, .spr = 1, .sigma = 1.0,
	 .steps = {{150, -3.0}}, .nsteps = 1, .ncp = 1, .cp_at = {150}, .cp_sign = {-1}, .tol = 4,
	 .verdict = U, .why = "an improvement is a changepoint too, of the other sign"},
	{.name = "throughput_drop_3pct", .seed = 207, .n = N, .spr = 1, .sigma = 1.0,
	 .steps = {{110, -3.0}}, .nsteps = 1, .higher_is_better = true, .ncp = 1, .cp_at = {110},
	 .cp_sign = {-1}, .tol = 4, .verdict = U, .why = "higher is better: a drop is a regression"},
	{.name = "step_near_start", .seed = 208, .n = N, .spr = 1, .sigma = 0.5,
	 .steps = {{12, 3.0}}, .nsteps = 1, .ncp = 1, .cp_at = {12}, .cp_sign = {1}, .tol = 2,
	 .verdict = U, .why = "12 runs before the step: inside the calibration prefix"},
	{.name = "step_near_end", .seed = 209, .n = N, .spr = 1, .sigma = 0.5,
	 .steps = {{N - 8, 3.0}}, .nsteps = 1, .ncp = 1, .cp_at = {N - 8}, .cp_sign = {1},
	 .tol = 2, .verdict = U,
	 .why = "8 runs at the new level: localised; the newest run is no longer news"},
	{.name = "step_then_fix", .seed = 210, .n = N, .spr = 1, .sigma = 1.0,
	 .steps = {{100, 5.0}, {200, -5.0}}, .nsteps = 2, .ncp = 2, .cp_at = {100, 200},
	 .cp_sign = {1, -1}, .tol = 3, .verdict = U, .why = "a regression and its fix"},
	{.name = "several_steps", .seed = 211, .n = N, .spr = 1, .sigma = 0.5,
	 .steps = {{75, 2.0}, {150, 3.0}, {225, -4.0}}, .nsteps = 3, .ncp = 3,
	 .cp_at = {75, 150, 225}, .cp_sign = {1, 1, -1}, .tol = 3, .verdict = U,
	 .why = "three shifts, each localised"},
	{.name = "staircase_1.5pct", .seed = 212, .n = N, .spr = 1, .sigma = 0.3,
	 .steps = {{100, 1.5}, {200, 1.5}}, .nsteps = 2, .ncp = 2, .cp_at = {100, 200},
	 .cp_sign = {1, 1}, .tol = 3, .verdict = U, .why = "two small regressions in a row"},
	{.name = "step_on_quantised_timer", .seed = 213, .n = N, .spr = 1, .sigma = 0.4,
	 .quantum = 1.0, .steps = {{160, 3.0}}, .nsteps = 1, .ncp = 1, .cp_at = {160},
	 .cp_sign = {1}, .tol = 3, .verdict = U, .why = "ties everywhere, a clear step"},
	{.name = "step_in_long_series", .seed = 214, .n = 1000, .spr = 1, .sigma = 1.0,
	 .steps = {{640, 2.0}}, .nsteps = 1, .ncp = 1, .cp_at = {640}, .cp_sign = {1}, .tol = 8,
	 .verdict = U, .why = "2% in 1% noise among 1,000 nights"},
	/* ---- bimodal lines: the modes are noise, not levels ---- */
	{.name = "bimodal_50_50", .seed = 301, .n = N, .spr = 1, .sigma = 0.3, .bimodal_p = 0.5,
	 .bimodal_gap = 5.0, .verdict = U, .why = "LNT: bimodal; two modes 5% apart"},
	{.name = "bimodal_70_30", .seed = 302, .n = N, .spr = 1, .sigma = 0.3, .bimodal_p = 0.3,
	 .bimodal_gap = 5.0, .verdict = U, .why = "bimodal, the upper mode less common"},
	{.name = "bimodal_90_10", .seed = 303, .n = N, .spr = 1, .sigma = 0.3, .bimodal_p = 0.1,
	 .bimodal_gap = 4.0, .verdict = U, .why = "bimodal, a rare upper mode"},
	{.name = "bimodal_multi5", .seed = 304, .n = N, .spr = 5, .sigma = 0.3, .bimodal_p = 0.4,
	 .bimodal_gap = 5.0, .verdict = U, .why = "each sample picks its mode"},
	{.name = "bimodal_newest_upper", .seed = 305, .n = N, .spr = 1, .sigma = 0.3,
	 .bimodal_p = 0.3, .bimodal_gap = 5.0, .tail_runs = 2, .tail_upper_mode = true, .verdict = U,
	 .why = "the newest two runs both in the upper mode: seen before, not a step"},
	/* ---- outliers: a bad run is not a level ---- */
	{.name = "spike_mid", .seed = 401, .n = N, .spr = 1, .sigma = 0.5, .spikes = {150},
	 .nspikes = 1, .spike_pct = 30.0, .verdict = U, .why = "one bad run, +30%"},
	{.name = "dip_mid", .seed = 402, .n = N, .spr = 1, .sigma = 0.5, .spikes = {120},
	 .nspikes = 1, .spike_pct = -20.0, .verdict = U, .why = "one fast run, −20%"},
	{.name = "spikes_scattered", .seed = 403, .n = N, .spr = 1, .sigma = 1.0,
	 .spikes = {20, 77, 140, 141, 210, 260}, .nspikes = 6, .spike_pct = 15.0, .verdict = U,
	 .why = "six bad runs, two adjacent"},
	{.name = "spike_newest", .seed = 404, .n = N, .spr = 1, .sigma = 0.5, .spikes = {N - 1},
	 .nspikes = 1, .spike_pct = 20.0, .verdict = R,
	 .why = "the newest run alone is off: at its first run a spike and a step look alike; "
	        "flagged (issue 17), a confirmation rerun tells them apart"},
	{.name = "spike_before_newest", .seed = 405, .n = N, .spr = 1, .sigma = 0.5,
	 .spikes = {N - 2}, .nspikes = 1, .spike_pct = 20.0, .verdict = U,
	 .why = "an outlier then back to normal"},
	{.name = "outlier_sample_in_newest_run", .seed = 406, .n = N, .spr = 5, .sigma = 0.5,
	 .newest_outlier_pct = 50.0, .verdict = U, .why = "one of five samples is off"},
	/* ---- noise changes without a level change ---- */
	{.name = "noise_up_x4", .seed = 501, .n = N, .spr = 1, .sigma = 0.5, .noise_at = 150,
	 .sigma2 = 2.0, .verdict = U, .why = "the machine got noisier; the level did not move"},
	{.name = "noise_down_x6", .seed = 502, .n = N, .spr = 1, .sigma = 3.0, .noise_at = 150,
	 .sigma2 = 0.5, .verdict = U, .why = "clocks pinned: quieter, same level"},
	/* ---- slow drift ---- */
	{.name = "slow_drift_up", .seed = 601, .n = N, .spr = 1, .sigma = 0.5, .drift_pct = 6.0,
	 .cp_kind = LS_CP_DRIFT, .cp_sign = {1}, .verdict = U,
	 .why = "6% over 300 runs: a regression the detector reports as up-steps; "
	        "0.02% a run is nothing for the newest run"},
	{.name = "slow_drift_tiny", .seed = 602, .n = N, .spr = 1, .sigma = 1.0, .drift_pct = 0.5,
	 .verdict = U, .why = "0.5% over 300 runs in 1% noise: below any minimum effect"},
	/* ---- the newest runs are the news: the classifier fires ---- */
	{.name = "newest_step_single", .seed = 701, .n = N, .spr = 1, .sigma = 0.5, .tail_runs = 1,
	 .tail_pct = 5.0, .verdict = R, .why = "single samples: +5% in 0.5% noise, at its first run"},
	{.name = "newest_step_multi5", .seed = 702, .n = N, .spr = 5, .sigma = 0.4, .tail_runs = 1,
	 .tail_pct = 3.0, .verdict = R, .why = "five samples, all +3% in 0.4% noise"},
	{.name = "newest_improvement_multi5", .seed = 703, .n = N, .spr = 5, .sigma = 0.4,
	 .tail_runs = 1, .tail_pct = -3.0, .verdict = I, .why = "five samples, all −3%"},
	{.name = "newest_throughput_drop", .seed = 704, .n = N, .spr = 1, .sigma = 0.5,
	 .tail_runs = 2, .tail_pct = -4.0, .higher_is_better = true, .verdict = R,
	 .why = "higher is better, −4% twice"},
	{.name = "newest_throughput_gain_multi4", .seed = 705, .n = N, .spr = 4, .sigma = 0.5,
	 .tail_runs = 1, .tail_pct = 4.0, .higher_is_better = true, .verdict = I,
	 .why = "higher is better, +4% on four samples"},
	{.name = "newest_10pct_in_5pct_multi10", .seed = 706, .n = N, .spr = 10, .sigma = 5.0,
	 .tail_runs = 1, .tail_pct = 10.0, .verdict = R, .why = "noisy but ten samples"},
	{.name = "newest_fix_after_long_regression", .seed = 707, .n = N, .spr = 1, .sigma = 0.5,
	 .steps = {{60, 5.0}}, .nsteps = 1, .tail_runs = 1, .tail_pct = -5.0, .ncp = 1,
	 .cp_at = {60}, .cp_sign = {1}, .tol = 2, .verdict = I,
	 .why = "regressed 239 runs ago, fixed in the newest"},
	{.name = "newest_too_small_to_care", .seed = 708, .n = N, .spr = 5, .sigma = 0.1,
	 .tail_runs = 1, .tail_pct = 0.5, .verdict = U,
	 .why = "significant but 0.5% < the 1% minimum effect (LNT: too small to care)"},
	{.name = "newest_5pct_in_5pct_single", .seed = 709, .n = N, .spr = 1, .sigma = 5.0,
	 .tail_runs = 2, .tail_pct = 5.0, .verdict = U,
	 .why = "one sigma on single samples is indistinguishable from noise"},
	{.name = "newest_step_single_unconfirmed", .seed = 710, .n = N, .spr = 1, .sigma = 0.5,
	 .tail_runs = 2, .tail_pct = 5.0, .verdict = U,
	 .why = "+5% on the two newest: flagged at the first, the second is at a level already "
	        "seen (one finding, not two)"},
};

const ls_spec *ls_specs(size_t *n)
{
	*n = sizeof SPECS / sizeof SPECS[0];
	return SPECS;
}

static uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double next_unit(uint64_t *s)
{
	return ((double)(next_u64(s) >> 11) + 0.5) * 0x1.0p-53; /* (0, 1) */
}

static double next_normal(uint64_t *s)
{
	double u1 = next_unit(s), u2 = next_unit(s);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

int ls_case_generate(const ls_spec *sp, ls_case *out)
{
	memset(out, 0, sizeof *out);
	out->spec = sp;
	out->samples = malloc(sp->n * sp->spr * sizeof *out->samples);
	out->series = malloc(sp->n * sizeof *out->series);
	double *work = malloc(sp->spr * sizeof *work);
	if (!out->samples || !out->series || !work) {
		free(work);
		ls_case_release(out);
		return -1;
	}
	uint64_t rng = sp->seed;
	for (size_t r = 0; r < sp->n; r++) {
		double level = 100.0;
		for (size_t k = 0; k < sp->nsteps; k++)
			if (r >= sp->steps[k].at)
				level += sp->steps[k].pct;
		if (sp->n > 1)
			level += sp->drift_pct * (double)r / (double)(sp->n - 1);
		bool tail = r + sp->tail_runs >= sp->n;
		if (tail)
			level += sp->tail_pct;
		for (size_t k = 0; k < sp->nspikes; k++)
			if (sp->spikes[k] == r)
				level += sp->spike_pct;
		double sigma = sp->noise_at && r >= sp->noise_at ? sp->sigma2 : sp->sigma;
		double *run = out->samples + r * sp->spr;
		for (size_t j = 0; j < sp->spr; j++) {
			double v = level + sigma * next_normal(&rng);
			bool upper = sp->bimodal_p > 0.0 && next_unit(&rng) < sp->bimodal_p;
			if (upper || (tail && sp->tail_upper_mode))
				v += sp->bimodal_gap;
			if (sp->quantum > 0.0)
				v = sp->quantum * round(v / sp->quantum);
			run[j] = v;
		}
		if (r + 1 == sp->n && sp->newest_outlier_pct != 0.0)
			run[0] += sp->newest_outlier_pct;
		if (pw_stats_median(run, sp->spr, work, &out->series[r]) != PW_OK) {
			free(work);
			ls_case_release(out);
			return -1;
		}
	}
	free(work);
	return 0;
}

void ls_case_release(ls_case *c)
{
	free(c->samples);
	free(c->series);
	c->samples = c->series = NULL;
}
