/*
 * bench_canary.c: the canary's always-valid paired comparison (pw_cs_*,
 * common/pw_stats.h) beside Kayenta's fixed-horizon judge applied at every
 * look (pw_stats_mw_judge), on simulated canaries (tools/simulator/sim_canary.h:
 * diurnal load, prefix-cache hit-rate changes, a noisy neighbour, an injected
 * TPOT regression), every decision taken in the same run from the same windows.
 *
 * Each trial is one canary of one model family, one window every 5 simulated
 * minutes; every method looks at every window:
 *   - ours: pw_cs_add(canary TPOT, baseline TPOT) with the family's MDE and
 *     tolerance; a false rollback is any REGRESSION when nothing regressed;
 *   - Kayenta's judge as shipped (NetflixACAJudge: 98% interval, tolerance
 *     0.25 of the estimate) on the two arms' window values from the end of
 *     the warm-up hour to now, as Kayenta's standalone canary analysis judges
 *     each interval over the whole scope so far and fails at the first bad
 *     judgement; a false rollback is any HIGH;
 *   - the same Mann–Whitney at a one-sided 5% level with no tolerance (90%
 *     interval, tolerance 0): the textbook fixed-horizon test at ours' α;
 *   - and, for its fixed-horizon validity, Kayenta's judge looked at once,
 *     at the end.
 * The first hour (12 windows) is our pilot and Kayenta's warm-up alike.
 *
 * It prints two tables (docs/canary.md §7 has one run's):
 *  1. null canaries (no regression), 48 h: the false-rollback rate of each
 *     method, and when ours promotes (NO_REGRESSION);
 *  2. power: +1% TPOT on a TPU family, +2% on a GPU family, 24 h: the share
 *     rolled back within 24 h (ours: a REGRESSION before any NO_REGRESSION,
 *     as the canary stops at its first decision), and the median and 90th
 *     percentile of the time to that decision;
 * and a robustness table (null canaries that bend our assumptions: noise
 * persisting across windows, more and longer noisy-neighbour episodes, a
 * persistent canary offset below the tolerance).
 *
 *   bench_canary [TRIALS [SEED]]   (1,000 trials and seed 20270301 by default)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rng.h"
#include "pw_stats.h"
#include "sim_canary.h"
#include "sim_rng.h"

#define WINDOWS_NULL 576 /* 48 h of 5-minute windows */
#define WINDOWS_POWER 288 /* 24 h */
#define WARMUP 12        /* our pilot, Kayenta's warm-up: the first hour */
#define ALPHA 0.05

typedef struct family {
	const char *name;
	bool gpu;
	double mde_pct;
} family;

static const family TPU = {"TPU", false, 1.0};
static const family GPU = {"GPU", true, 2.0};

/* Per trial: the window (1-based, pilot included) of each method's first call, 0 if none. */
typedef struct trial_out {
	int ours_reg, ours_noreg, ours_reg_tol0;
	int kay_high, mw05_high;
	bool kay_final_high;
} trial_out;

typedef struct bench_buf {
	double *cand, *base, *work;
	size_t work_len;
} bench_buf;

static int judge_high(bench_buf *b, size_t n, double conf, double tol, bool *high)
{
	pw_mw_judge_result r;
	pw_status st = pw_stats_mw_judge(b->cand, n, b->base, n, conf, tol, b->work, b->work_len, &r);
	if (st != PW_OK)
		return -1;
	*high = r.cls == PW_MW_JUDGE_HIGH;
	return 0;
}

/*
 * One canary: windows 1..n_windows of seed under p. The judges stop looking
 * once they have fired (a rollback ends a canary); ours looks on to the end
 * so that both of its decisions are seen. kayenta false: ours only.
 */
static int run_trial(const pw_sim_canary_params *p, const family *f, uint64_t seed,
                     int n_windows, bool kayenta, bench_buf *b, trial_out *o)
{
	memset(o, 0, sizeof *o);
	pw_cs_opts opts;
	pw_cs_opts_init(&opts);
	opts.alpha = ALPHA;
	opts.mde_pct = f->mde_pct;
	pw_cs_opts opts0 = opts;
	opts0.tolerance_pct = 0.0;
	pw_cs *cs = NULL, *cs0 = NULL;
	if (pw_cs_new(&opts, &cs) != PW_OK || pw_cs_new(&opts0, &cs0) != PW_OK) {
		pw_cs_free(cs);
		return -1;
	}
	int rc = 0;
	size_t n = 0;
	for (int w = 0; w < n_windows; w++) {
		pw_sim_canary_window win;
		pw_sim_canary_window_make(p, seed, (uint32_t)w, &win);
		double c = win.tpot_ms[PW_SIM_CANARY_CANARY], bl = win.tpot_ms[PW_SIM_CANARY_BASELINE];
		pw_cs_result r, r0;
		if (pw_cs_add(cs, c, bl, &r) != PW_OK || pw_cs_add(cs0, c, bl, &r0) != PW_OK) {
			rc = -1;
			break;
		}
		if (!o->ours_reg && r.decision == PW_CS_REGRESSION)
			o->ours_reg = w + 1;
		if (!o->ours_noreg && r.decision == PW_CS_NO_REGRESSION)
			o->ours_noreg = w + 1;
		if (!o->ours_reg_tol0 && r0.decision == PW_CS_REGRESSION)
			o->ours_reg_tol0 = w + 1;
		if (!kayenta || w < WARMUP)
			continue;
		b->cand[n] = c;
		b->base[n] = bl;
		n++;
		bool high;
		if (!o->kay_high) {
			if (judge_high(b, n, PW_MW_JUDGE_CONF, PW_MW_JUDGE_TOLERANCE, &high) != 0) {
				rc = -1;
				break;
			}
			if (high)
				o->kay_high = w + 1;
		}
		if (!o->mw05_high) {
			if (judge_high(b, n, 1.0 - 2.0 * ALPHA, 0.0, &high) != 0) {
				rc = -1;
				break;
			}
			if (high)
				o->mw05_high = w + 1;
		}
	}
	if (rc == 0 && kayenta && n > 0 &&
	    judge_high(b, n, PW_MW_JUDGE_CONF, PW_MW_JUDGE_TOLERANCE, &o->kay_final_high) != 0)
		rc = -1;
	pw_cs_free(cs);
	pw_cs_free(cs0);
	return rc;
}

static uint64_t trial_seed(uint64_t base, uint64_t scenario, uint64_t trial)
{
	return pw_sim_hash_u64(pw_sim_hash_u64(pw_sim_hash_u64(PW_SIM_HASH_INIT, base), scenario),
	                       trial);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* "3.4 h" for a window count, "> 24 h" (the horizon in hours) for none. */
static void fmt_time(char *buf, size_t len, int window, int horizon_h)
{
	if (window <= 0)
		snprintf(buf, len, "> %d h", horizon_h);
	else
		snprintf(buf, len, "%.1f h", window * 5.0 / 60.0);
}

/* The q-quantile (type 1) of decision times, a window of 0 counting as never. */
static int quantile_time(const int *t, int n, double q)
{
	int *s = malloc((size_t)n * sizeof *s);
	if (!s)
		return 0;
	for (int i = 0; i < n; i++)
		s[i] = t[i] > 0 ? t[i] : 1 << 30;
	qsort(s, (size_t)n, sizeof *s, cmp_int);
	int k = (int)ceil(q * n) - 1;
	int v = s[k < 0 ? 0 : k];
	free(s);
	return v == 1 << 30 ? 0 : v;
}

static double pct(int k, int n)
{
	return 100.0 * k / n;
}

/* A binomial 95% upper bound on a rate seen k times in n (Wilson). */
static double wilson_hi(int k, int n)
{
	double z = 1.959964, p = (double)k / n, d = 1.0 + z * z / n;
	return 100.0 * (p + z * z / (2.0 * n) + z * sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))) / d;
}

typedef struct null_row {
	int trials, ours, ours0, kay, mw05, kay_final, promote;
	int *promote_t;
} null_row;

static int run_null(const char *label, const pw_sim_canary_params *p, const family *f,
                    uint64_t seed, uint64_t scenario, int trials, bool kayenta, bench_buf *b)
{
	null_row r = {trials, 0, 0, 0, 0, 0, 0, malloc((size_t)trials * sizeof(int))};
	if (!r.promote_t)
		return -1;
	double t0 = now();
	for (int i = 0; i < trials; i++) {
		trial_out o;
		if (run_trial(p, f, trial_seed(seed, scenario, (uint64_t)i), WINDOWS_NULL, kayenta, b,
		              &o) != 0) {
			free(r.promote_t);
			return -1;
		}
		r.ours += o.ours_reg > 0;
		r.ours0 += o.ours_reg_tol0 > 0;
		r.kay += o.kay_high > 0;
		r.mw05 += o.mw05_high > 0;
		r.kay_final += o.kay_final_high;
		r.promote += o.ours_noreg > 0;
		r.promote_t[i] = o.ours_noreg;
	}
	char med[32], p90[32], ratio[48];
	/* the repeated 5% test's rate against ours; none when ours never fired */
	if (r.ours > 0)
		snprintf(ratio, sizeof ratio, "%.1f×", (double)r.mw05 / r.ours);
	else
		snprintf(ratio, sizeof ratio, "— (ours 0 of %d)", trials);
	fmt_time(med, sizeof med, quantile_time(r.promote_t, trials, 0.5), 48);
	fmt_time(p90, sizeof p90, quantile_time(r.promote_t, trials, 0.9), 48);
	if (kayenta)
		printf("| %s | %d | **%.1f%%** (≤ %.1f%%) | %.1f%% | **%.1f%%** | %.1f%% | %.1f%% | "
		       "%s | %.1f%% | %s / %s | %.0f s |\n",
		       label, trials, pct(r.ours, trials), wilson_hi(r.ours, trials),
		       pct(r.ours0, trials), pct(r.kay, trials), pct(r.mw05, trials),
		       pct(r.kay_final, trials),
		       ratio,
		       pct(r.promote, trials), med, p90, now() - t0);
	else
		printf("| %s | %d | **%.1f%%** (≤ %.1f%%) | %.1f%% | %.1f%% | %s / %s | %.0f s |\n",
		       label, trials, pct(r.ours, trials), wilson_hi(r.ours, trials),
		       pct(r.ours0, trials), pct(r.promote, trials), med, p90, now() - t0);
	fflush(stdout);
	free(r.promote_t);
	return 0;
}

static int run_power(const char *label, const pw_sim_canary_params *p, const family *f,
                     uint64_t seed, uint64_t scenario, int trials, bench_buf *b)
{
	int *ours = malloc((size_t)trials * sizeof *ours), *kay = malloc((size_t)trials * sizeof *kay);
	int *mw = malloc((size_t)trials * sizeof *mw);
	if (!ours || !kay || !mw) {
		free(ours);
		free(kay);
		free(mw);
		return -1;
	}
	int n_ours = 0, n_kay = 0, n_mw = 0, n_promote = 0;
	double t0 = now();
	for (int i = 0; i < trials; i++) {
		trial_out o;
		if (run_trial(p, f, trial_seed(seed, scenario, (uint64_t)i), WINDOWS_POWER, true, b,
		              &o) != 0) {
			free(ours);
			free(kay);
			free(mw);
			return -1;
		}
		/* a canary that promoted first is not rolled back: its later REGRESSION is not seen */
		bool promoted_first = o.ours_noreg > 0 && (o.ours_reg == 0 || o.ours_noreg < o.ours_reg);
		ours[i] = promoted_first ? 0 : o.ours_reg;
		kay[i] = o.kay_high;
		mw[i] = o.mw05_high;
		n_ours += ours[i] > 0;
		n_kay += o.kay_high > 0;
		n_mw += o.mw05_high > 0;
		n_promote += promoted_first;
	}
	char om[32], o9[32], km[32], k9[32], mm[32], m9[32];
	fmt_time(om, sizeof om, quantile_time(ours, trials, 0.5), 24);
	fmt_time(o9, sizeof o9, quantile_time(ours, trials, 0.9), 24);
	fmt_time(km, sizeof km, quantile_time(kay, trials, 0.5), 24);
	fmt_time(k9, sizeof k9, quantile_time(kay, trials, 0.9), 24);
	fmt_time(mm, sizeof mm, quantile_time(mw, trials, 0.5), 24);
	fmt_time(m9, sizeof m9, quantile_time(mw, trials, 0.9), 24);
	printf("| %s | %d | **%.1f%%** | %s / %s | %.1f%% | %.1f%% | %s / %s | %.1f%% | %s / %s | "
	       "%.0f s |\n",
	       label, trials, pct(n_ours, trials), om, o9, pct(n_promote, trials),
	       pct(n_kay, trials), km, k9, pct(n_mw, trials), mm, m9, now() - t0);
	fflush(stdout);
	free(ours);
	free(kay);
	free(mw);
	return 0;
}

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 1000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 20270301ULL;
	if (trials < 1) {
		fprintf(stderr, "usage: bench_canary [TRIALS [SEED]]\n");
		return 2;
	}
	bench_buf b;
	b.cand = malloc(WINDOWS_NULL * sizeof *b.cand);
	b.base = malloc(WINDOWS_NULL * sizeof *b.base);
	b.work_len = pw_stats_mw_judge_work_len(WINDOWS_NULL, WINDOWS_NULL);
	b.work = malloc(b.work_len * sizeof *b.work);
	if (!b.cand || !b.base || !b.work)
		return 1;

	pw_sim_canary_params tpu, gpu;
	pw_sim_canary_params_init(&tpu, false);
	pw_sim_canary_params_init(&gpu, true);
	printf("bench_canary: %d trials a row, seed %llu, α = %.2f, a window every 5 min; "
	       "TPU: σ %.1f%% a window and arm, MDE %.0f%%, tolerance %.1f%%; GPU: σ %.1f%%, "
	       "MDE %.0f%%, tolerance %.1f%%; noisy neighbour on %.0f%% of cells\n\n",
	       trials, (unsigned long long)seed, ALPHA, 100 * tpu.sigma, TPU.mde_pct,
	       PW_CS_TOLERANCE_FRAC * TPU.mde_pct, 100 * gpu.sigma, GPU.mde_pct,
	       PW_CS_TOLERANCE_FRAC * GPU.mde_pct, 100 * tpu.contam_frac);

	printf("Null canaries, 48 h, looked at every window (false rollbacks; ours at α = %.2f):\n\n",
	       ALPHA);
	printf("| family | trials | ours: false rollback (95%% upper) | ours, tolerance 0 | "
	       "Kayenta judge every look | MW 5%% every look | Kayenta judge once, at 48 h | "
	       "MW 5%% every look / ours | ours promotes | promote median / p90 | wall |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	if (run_null("TPU", &tpu, &TPU, seed, 1, trials, true, &b) != 0 ||
	    run_null("GPU", &gpu, &GPU, seed, 2, trials, true, &b) != 0)
		return 1;

	printf("\nPower within 24 h (rolled back = REGRESSION / HIGH; times from the canary's "
	       "start, the pilot hour included):\n\n");
	printf("| regression | trials | ours rolled back | ours median / p90 | ours promoted instead | "
	       "Kayenta judge | Kayenta median / p90 | MW 5%% | MW 5%% median / p90 | wall |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	pw_sim_canary_params tpu1 = tpu, gpu2 = gpu;
	tpu1.tpot_regression = 0.01;
	gpu2.tpot_regression = 0.02;
	if (run_power("TPU +1% TPOT", &tpu1, &TPU, seed, 3, trials, &b) != 0 ||
	    run_power("GPU +2% TPOT", &gpu2, &GPU, seed, 4, trials, &b) != 0)
		return 1;

	printf("\nNull canaries that bend the assumptions (48 h, ours only):\n\n");
	printf("| TPU family, null | trials | ours: false rollback (95%% upper) | ours, tolerance 0 | "
	       "ours promotes | promote median / p90 | wall |\n");
	printf("|---|---|---|---|---|---|---|\n");
	pw_sim_canary_params ar = tpu, heavy = tpu, bias = tpu, iid = tpu;
	ar.arm_ar = 0.3;
	heavy.contam_frac = 0.05;
	heavy.contam_mean_windows = 6.0;
	bias.arm_bias = 0.002;
	iid.contam_frac = 0.0;
	iid.load_amp = 0.0;
	iid.load_jitter = 0.0;
	iid.cache_lo = iid.cache_hi = 0.5;
	iid.sigma_load = 0.0;
	if (run_null("no load, cache or neighbour (i.i.d. normal)", &iid, &TPU, seed, 5, trials,
	             false, &b) != 0 ||
	    run_null("arm noise AR(1), φ = 0.3", &ar, &TPU, seed, 6, trials, false, &b) != 0 ||
	    run_null("neighbour on 5% of cells, 6-window episodes", &heavy, &TPU, seed, 7, trials,
	             false, &b) != 0 ||
	    run_null("canary replicas 0.2% slower (below the 0.5% tolerance)", &bias, &TPU, seed, 8,
	             trials, false, &b) != 0)
		return 1;
	free(b.cand);
	free(b.base);
	free(b.work);
	return 0;
}
