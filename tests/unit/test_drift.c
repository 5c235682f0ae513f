/*
 * test_drift.c: pw_drift tells a sustained trend from a staircase (issue 17):
 * a flat series with a +10% drift over 300 points is one drift (start 0,
 * total ≈ 10%, rate ≈ 0.033% a point); three real steps are no drift; a flat
 * series is none; a drift that starts late is found with its start; edges.
 * Series are drawn with a fixed splitmix64/Box–Muller generator.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "pw_changepoint.h"
#include "pw_drift.h"

static uint64_t rng_state;

static double gauss(void)
{
	double u[2];
	for (int k = 0; k < 2; k++) {
		uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		u[k] = ((double)(z >> 11) + 0.5) * 0x1.0p-53;
	}
	return sqrt(-2.0 * log(u[0])) * cos(2.0 * M_PI * u[1]);
}

#define N 300

/* level 100, σ = sigma %, +drift_pct linearly from `from` to the end, steps of step_pct at N/4, N/2, 3N/4. */
static void make(double *x, double sigma, double drift_pct, size_t from, double step_pct)
{
	for (size_t i = 0; i < N; i++) {
		double lvl = 100.0;
		if (i >= from)
			lvl += drift_pct * (double)(i - from) / (double)(N - from);
		for (size_t s = 1; s <= 3; s++)
			if (i >= s * N / 4)
				lvl += step_pct;
		x[i] = lvl + sigma * gauss();
	}
}

Test(drift, ten_percent_over_300_is_one_drift)
{
	double x[N];
	int found = 0;
	for (int t = 0; t < 100; t++) {
		rng_state = 1000 + (uint64_t)t;
		make(x, 0.5, 10.0, 0, 0.0);
		pw_drift d;
		cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
		if (!d.found)
			continue;
		found++;
		cr_assert_lt(d.start, 30, "start %zu", d.start);
		cr_assert(d.total_pct > 8.5 && d.total_pct < 11.5, "total %g", d.total_pct);
		cr_assert(d.rate_pct > 0.028 && d.rate_pct < 0.038, "rate %g", d.rate_pct);
	}
	cr_assert_geq(found, 98, "found in %d of 100", found);
}

Test(drift, staircase_of_three_steps_is_not_a_drift)
{
	double x[N];
	for (int t = 0; t < 100; t++) {
		rng_state = 2000 + (uint64_t)t;
		make(x, 0.5, 0.0, 0, 3.0);
		pw_drift d;
		cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
		cr_assert(!d.trend, "trial %d: %zu of %zu segments sloped", t, d.sloped, d.segments);
	}
}

Test(drift, flat_is_not_a_drift)
{
	double x[N];
	for (int t = 0; t < 200; t++) {
		rng_state = 3000 + (uint64_t)t;
		make(x, 1.0, 0.0, 0, 0.0);
		pw_drift d;
		cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
		cr_assert(!d.found, "trial %d: total %g%%", t, d.total_pct);
	}
}

Test(drift, late_start_is_located)
{
	double x[N];
	rng_state = 4000;
	make(x, 0.3, 8.0, 150, 0.0);
	pw_drift d;
	cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
	cr_assert(d.found);
	cr_assert(d.start >= 130 && d.start <= 170, "start %zu", d.start);
	cr_assert(d.total_pct > 6.5 && d.total_pct < 9.5, "total %g", d.total_pct);
}

Test(drift, edges)
{
	pw_drift d;
	double x[N];
	for (size_t i = 0; i < N; i++)
		x[i] = 5.0;
	cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
	cr_assert(!d.found, "constant");
	cr_assert_eq(pw_drift_detect(x, 10, NULL, 0, NULL, &d), PW_OK);
	cr_assert(!d.found, "too short");
	cr_assert_eq(pw_drift_detect(x, 0, NULL, 0, NULL, &d), PW_OK);
	x[7] = NAN;
	cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_ERR_INVALID);
	for (size_t i = 0; i < N; i++)
		x[i] = 100.0 + 0.01 * (double)i; /* a noiseless line: a drift of 3% */
	cr_assert_eq(pw_drift_detect(x, N, NULL, 0, NULL, &d), PW_OK);
	cr_assert(d.found);
	cr_assert_float_eq(d.rate, 0.01, 1e-9);
}

/* scipy.stats.theilslopes(y).slope: 0.15999999999999998 and 0.0 (scipy 1.10). */
Test(drift, theil_sen_matches_scipy)
{
	const double y[] = {3.1, 2.9, 3.4, 3.3, 3.8, 3.6, 4.1, 3.9, 4.4, 4.6, 4.2};
	const double spike[] = {1.0, 1.0, 1.0, 5.0, 1.0, 1.0, 1.0};
	double b;
	cr_assert_eq(pw_drift_theil_sen(y, 11, &b), PW_OK);
	cr_assert_float_eq(b, 0.15999999999999998, 1e-12);
	cr_assert_eq(pw_drift_theil_sen(spike, 7, &b), PW_OK);
	cr_assert_float_eq(b, 0.0, 1e-15);
	cr_assert_eq(pw_drift_theil_sen(y, 1, &b), PW_ERR_INVALID);
}

/* ---- Steps or a drift (pw_drift_decide): staircases and trends ------------- */

static double unif(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) * 0x1.0p-53;
}

#define MAXN 600
#define MAXCP 64

typedef struct findings {
	pw_drift drift;
	size_t nsteps;          /* steps kept */
	size_t step_at[MAXCP];  /* their indices */
} findings;

/* What `perfwatch changepoints` reports: the default detector, then pw_drift_decide. */
static void findings_of(const double *x, size_t n, findings *f)
{
	static pw_cp_detector *det;
	char err[256];
	if (!det)
		cr_assert_eq(pw_cp_detector_new(NULL, MAXN, &det, err, sizeof err), PW_OK, "%s", err);
	pw_changepoint cps[MAXCP];
	bool keep[MAXCP];
	size_t k = 0;
	cr_assert_eq(pw_cp_detect(det, x, n, cps, MAXCP, &k, err, sizeof err), PW_OK, "%s", err);
	cr_assert_leq(k, MAXCP);
	cr_assert_eq(pw_drift_decide(x, n, cps, k, NULL, &f->drift, keep), PW_OK);
	f->nsteps = 0;
	for (size_t j = 0; j < k; j++)
		if (keep[j])
			f->step_at[f->nsteps++] = cps[j].index;
}

/*
 * Staircases of 2 to 4 equal steps (+2% and +3% at σ = 0.5%, i.e. 4σ and
 * 6σ; also −3%), plateaus of 15 to 80 points drawn independently (to 42 where
 * four must fit in 200 points), the
 * first step anywhere from point 30 and the last plateau running to the
 * newest point (where the hinge model of issue 17 saw a drift), series of
 * 200 and 400 points, 6 seeds each: every step is reported as a step at its
 * index ±2, nothing else is, and there is no drift. Plateaus under 14 points
 * cannot pass the level-shift filter's Mann–Whitney test (13 against 13
 * points cannot reach p <= 1e-5), so a shorter one is not a staircase the
 * detector can see.
 */
Test(drift, every_step_of_a_staircase_is_a_step)
{
	static const size_t lens[] = {200, 400};
	static const double sizes[] = {2.0, 3.0, -3.0};
	size_t cases = 0, ok = 0;
	double x[MAXN];
	for (uint64_t seed = 0; seed < 6; seed++)
		for (size_t li = 0; li < 2; li++)
			for (size_t k = 2; k <= 4; k++)
				for (size_t si = 0; si < 3; si++) {
					size_t n = lens[li], at[4], plateau[4], span = 0;
					rng_state = 7000 + 97 * seed + 13 * li + 5 * k + si;
					/* plateau j follows step j (the last one is the tail):
					 * 15 to 80 points, fewer where k of them must fit */
					size_t longest = (n - 30) / k < 80 ? (n - 30) / k : 80;
					for (size_t j = 0; j < k; j++) {
						plateau[j] = 15 + (size_t)(unif() * (double)(longest - 14));
						span += plateau[j];
					}
					size_t first = 30 + (size_t)(unif() * (double)(n - 30 - span));
					at[0] = first;
					for (size_t j = 1; j < k; j++)
						at[j] = at[j - 1] + plateau[j - 1];
					cr_assert_leq(at[k - 1] + 15, n, "a last plateau of 15 at least");
					for (size_t i = 0; i < n; i++) {
						double lvl = 100.0;
						for (size_t j = 0; j < k; j++)
							if (i >= at[j])
								lvl += sizes[si];
						x[i] = lvl + 0.5 * gauss();
					}
					findings f;
					findings_of(x, n, &f);
					cases++;
					bool good = !f.drift.found && f.nsteps == k;
					for (size_t j = 0; good && j < k; j++) {
						size_t d = f.step_at[j] > at[j] ? f.step_at[j] - at[j] : at[j] - f.step_at[j];
						good = d <= 2;
					}
					ok += good;
					cr_expect(good,
					          "seed %llu, n %zu, %zu steps of %+g%% at %zu %zu %zu %zu: drift %d "
					          "(start %zu), %zu steps kept, first at %zu",
					          (unsigned long long)seed, n, k, sizes[si], at[0], at[1],
					          k > 2 ? at[2] : 0, k > 3 ? at[3] : 0, f.drift.found, f.drift.start,
					          f.nsteps, f.nsteps ? f.step_at[0] : 0);
				}
	fprintf(stderr, "staircases: %zu of %zu with every step a step at its index ±2 and no drift\n",
	        ok, cases);
	cr_assert_eq(ok, cases);
}

enum trend_shape { T_LINEAR_UP, T_LINEAR_DOWN, T_QUADRATIC, T_EXPONENTIAL, T_SQRT, T_RANDOM_WALK,
                   T_LOGISTIC, T_SHAPES };
static const char *const trend_name[T_SHAPES] = {
	"linear +20%", "linear -15%", "quadratic", "exponential", "square root",
	"random walk (exchange rate)", "logistic (population)"};

/*
 * Trend look-alikes (generated, not downloaded). t runs 0..1 over the series:
 *  linear      100(1 + 0.20 t) and 100(1 − 0.15 t), σ 0.5
 *  quadratic   100(1 + 0.30 t²), σ 0.5; exponential 100 e^{0.7 t}, σ 0.5;
 *  square root 100(1 + 0.2 √t), σ 0.3
 *  random walk 100 exp(Σ 0.5% N(0, 1)): a daily exchange rate
 *  logistic    a yearly population count: 1,000,000 / (1 + e^{−8(t − 0.4)})
 *              + 50,000, ±0.2% census noise, rounded to whole people
 */
static void make_trend(double *x, size_t n, enum trend_shape sh)
{
	double walk = 0.0;
	for (size_t i = 0; i < n; i++) {
		double t = (double)i / (double)(n - 1), e = gauss();
		switch (sh) {
		case T_LINEAR_UP: x[i] = 100.0 * (1.0 + 0.20 * t) + 0.5 * e; break;
		case T_LINEAR_DOWN: x[i] = 100.0 * (1.0 - 0.15 * t) + 0.5 * e; break;
		case T_QUADRATIC: x[i] = 100.0 * (1.0 + 0.30 * t * t) + 0.5 * e; break;
		case T_EXPONENTIAL: x[i] = 100.0 * exp(0.7 * t) + 0.5 * e; break;
		case T_SQRT: x[i] = 100.0 * (1.0 + 0.2 * sqrt(t)) + 0.3 * e; break;
		case T_RANDOM_WALK:
			walk += 0.005 * e;
			x[i] = 100.0 * exp(walk);
			break;
		case T_LOGISTIC: {
			double p = 1e6 / (1.0 + exp(-8.0 * (t - 0.4))) + 5e4;
			x[i] = round(p * (1.0 + 0.002 * e));
			break;
		}
		default: break;
		}
	}
}

/*
 * Each shape at 100, 250 and 600 points, 6 seeds each: at most one finding,
 * and that one a drift (no step survives); every shape but the random walk,
 * whose net change may be small, is reported as a drift in the trend's
 * direction.
 */
Test(drift, a_trend_is_at_most_one_finding_and_a_drift)
{
	static const size_t lens[] = {100, 250, 600};
	double x[MAXN];
	size_t total_cases = 0, total_ok = 0;
	for (int sh = 0; sh < T_SHAPES; sh++) {
		size_t cases = 0, ok = 0, drifts = 0;
		for (uint64_t seed = 0; seed < 6; seed++)
			for (size_t li = 0; li < 3; li++) {
				size_t n = lens[li];
				rng_state = 9000 + 1000 * (uint64_t)sh + 10 * seed + li;
				make_trend(x, n, (enum trend_shape)sh);
				findings f;
				findings_of(x, n, &f);
				cases++;
				bool good = f.nsteps == 0;
				if (sh != T_RANDOM_WALK)
					good = good && f.drift.found &&
					       (f.drift.rate < 0.0) == (sh == T_LINEAR_DOWN);
				ok += good;
				drifts += f.drift.found;
				cr_expect(good, "%s, seed %llu, n %zu: drift %d (%+.2f%% from %zu), %zu steps",
				          trend_name[sh], (unsigned long long)seed, n, f.drift.found,
				          f.drift.total_pct, f.drift.start, f.nsteps);
			}
		fprintf(stderr, "trends: %-28s %zu of %zu at most one finding, a drift (%zu drifts)\n",
		        trend_name[sh], ok, cases, drifts);
		total_cases += cases;
		total_ok += ok;
	}
	cr_assert_eq(total_ok, total_cases);
}

/*
 * The fit against numpy (2.2.0), for x_i = 100 + 0.05 i + 0.3 sin(2.1 i) +
 * 0.2 cos(5.3 i), i = 0..79 (no point is clipped; the best fit is one line):
 *   d = np.diff(x)
 *   sigma = np.quantile(np.abs(d - np.median(d)), 0.8) / (1.2815515655446004 * np.sqrt(2))
 *         = 0.310108452280029
 *   p = np.polyfit(i, x, 1); r = x - np.polyval(p, i)
 *   r @ r / sigma**2 + 7.5 (one segment: no boundary, one slope) = 60.91903587284325
 *   np.polyval(p, 0) = 100.00378740251311, np.polyval(p, 79) = 103.95671237766821
 *   (103.95671237766821 - 100.00378740251311) / 79 = 0.05003702500196325 (p[0])
 */
Test(drift, one_line_matches_numpy)
{
	double x[80];
	for (int i = 0; i < 80; i++)
		x[i] = 100.0 + 0.05 * i + 0.3 * sin(2.1 * i) + 0.2 * cos(5.3 * i);
	pw_drift d;
	cr_assert_eq(pw_drift_detect(x, 80, NULL, 0, NULL, &d), PW_OK);
	cr_assert(d.trend && d.found && d.segments == 1 && d.sloped == 1);
	cr_assert_eq(d.start, 0);
	cr_assert_eq(d.end, 80);
	cr_assert_float_eq(d.noise, 0.310108452280029, 1e-12);
	cr_assert_float_eq(d.cost_lines, 60.91903587284325, 1e-9);
	cr_assert_float_eq(d.level_before, 100.00378740251311, 1e-10);
	cr_assert_float_eq(d.level_after, 103.95671237766821, 1e-10);
	cr_assert_float_eq(d.rate, 0.05003702500196325, 1e-12);
}
