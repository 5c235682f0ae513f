/*
 * test_noise_floor.c: the baseliner's scheduled noise-floor derivation
 * (services/baseliner/noise_floor.h): when it is due, which runs make a
 * group (one run's repeats; one re-baseline job's runs), and one series'
 * conclusion — a floor, INSUFFICIENT_DATA or INVALID — checked against
 * numpy/scipy. The estimator itself is test_stats.c's; the store and the
 * schedule through the service are tests/integration/test_noise_floor.sh's.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "noise_floor.h"
#include "pw_stats.h"
#include "test_near.h"

#define DAY_US (86400LL * 1000000LL)

/* tests/reference/gen_noise_floor_reference.py's ROWS */
typedef struct row {
	const char *run, *build, *job;
	double v;
} row;
static const row ROWS[] = {
	{"nb-0601", "xla-nightly-0601", "", 100.9},
	{"rc-a", "xla-rc-1", "", 100.2}, {"rc-a", "xla-rc-1", "", 99.8}, {"rc-a", "xla-rc-1", "", 100.5},
	{"rc-b", "xla-rc-2", "", 101.0}, {"rc-b", "xla-rc-2", "", 100.6},
	{"nb-0602", "xla-nightly-0602", "", 99.7},
	{"cf-c", "xla-nightly-0603", "", 99.1}, {"cf-c", "xla-nightly-0603", "", 99.5},
	{"cf-c", "xla-nightly-0603", "", 99.3}, {"cf-c", "xla-nightly-0603", "", 98.9},
	{"rc-d", "xla-rc-3", "", 102.3}, {"rc-d", "xla-rc-3", "", 101.9}, {"rc-d", "xla-rc-3", "", 102.8},
	{"rc-e", "xla-rc-4", "", 100.0}, {"rc-e", "xla-rc-4", "", 100.4},
	{"rx-1", "xla-nightly-0603", "rb-fc7-1", 97.9}, {"rx-2", "xla-nightly-0603", "rb-fc7-1", 98.3},
	{"rx-3", "xla-nightly-0603", "rb-fc7-1", 98.1}, {"rx-4", "xla-nightly-0603", "rb-fc7-1", 98.6},
	{"rx-5", "xla-nightly-0603", "rb-fc7-1", 98.0},
};
#define NROWS N_OF(ROWS)

static pw_nf_params params(size_t min_groups, size_t min_samples)
{
	pw_nf_params p;
	pw_nf_params_default(&p);
	p.min_groups = min_groups;
	p.min_samples = min_samples;
	return p;
}

/* the rows as samples, in an order that is not the groups' (reversed) */
static void samples_of(pw_nf_sample *s, char keys[][64], bool with_jobs)
{
	for (size_t i = 0; i < NROWS; i++) {
		const row *r = &ROWS[NROWS - 1 - i];
		cr_assert_eq(pw_nf_group_key(r->run, r->build, with_jobs ? r->job : "", keys[i], 64), PW_OK);
		s[i].key = keys[i];
		s[i].value = r->v;
	}
}

Test(noise_floor, defaults_are_quarterly_and_section_4_2)
{
	pw_nf_params p;
	pw_nf_params_default(&p);
	cr_expect_eq(p.every_us, 90 * DAY_US);
	cr_expect_eq(p.lookback_us, 90 * DAY_US);
	cr_expect_eq(p.min_groups, 5);
	cr_expect_eq(p.min_samples, 30);
}

Test(noise_floor, due_at_once_then_every_period)
{
	int64_t every = 90 * DAY_US, t0 = 1780000000LL * 1000000LL;
	cr_expect(pw_nf_due(t0, false, 0, every), "the first derivation is due at once");
	cr_expect(!pw_nf_due(t0 + every - 1, true, t0, every));
	cr_expect(pw_nf_due(t0 + every, true, t0, every));
	cr_expect(pw_nf_due(t0 + 3 * every, true, t0, every), "a missed period derives once, now");
	cr_expect(!pw_nf_due(t0 - DAY_US, true, t0, every), "a clock set back waits");
	cr_expect(!pw_nf_due(t0, false, 0, 0), "every 0: never");
	cr_expect(!pw_nf_due(t0 + every, true, t0, 0));
}

Test(noise_floor, group_keys_are_the_run_or_the_rebaseline_job)
{
	char k[64];
	cr_assert_eq(pw_nf_group_key("rc-a", "xla-rc-1", "", k, sizeof k), PW_OK);
	cr_expect_str_eq(k, "r:rc-a");
	cr_assert_eq(pw_nf_group_key("rx-3", "xla-nightly-0603", "rb-fc7-1", k, sizeof k), PW_OK);
	cr_expect_str_eq(k, "j:xla-nightly-0603/rb-fc7-1");
	cr_assert_eq(pw_nf_group_key("rc-a", "xla-rc-1", NULL, k, sizeof k), PW_OK);
	cr_expect_str_eq(k, "r:rc-a");
	/* no run id, or a key that does not fit: refused, nothing half-written */
	cr_expect_eq(pw_nf_group_key("", "b", "", k, sizeof k), PW_ERR_INVALID);
	cr_expect_eq(pw_nf_group_key(NULL, "b", "", k, sizeof k), PW_ERR_INVALID);
	cr_expect_eq(pw_nf_group_key("a-long-run-id", "b", "", k, 8), PW_ERR_INVALID);
	cr_expect_str_eq(k, "");
}

Test(noise_floor, group_ids_number_runs_of_equal_keys)
{
	const char *keys[] = {"r:a", "r:a", "r:b", "r:c", "r:c", "r:c"};
	int64_t g[6];
	pw_nf_group_ids(keys, 6, g);
	int64_t want[] = {0, 0, 1, 2, 2, 2};
	for (int i = 0; i < 6; i++)
		cr_expect_eq(g[i], want[i], "group[%d] = %lld", i, (long long)g[i]);
	pw_nf_group_ids(keys, 0, g); /* nothing to do */
}

/*
 * gen_noise_floor_reference.py, ROWS (numpy 1.24 / scipy 1.10): six groups
 * of >= 2 runs (rc-a, rc-b, cf-c, rc-d, rc-e and the re-baseline job's five
 * runs), the two lone nightlies left out:
 *   floor_pct 0.4172606663340315 level 100.2 n_groups 6 n_samples 19 n_pairs 24
 */
Test(noise_floor, rows_against_numpy)
{
	pw_nf_sample s[NROWS];
	char keys[NROWS][64];
	samples_of(s, keys, true);
	pw_nf_params p = params(5, 19);
	pw_nf_result r;
	cr_assert_eq(pw_nf_derive_samples(s, NROWS, &p, &r), PW_OK);
	cr_assert_eq(r.status, PW_NF_DERIVED, "%s", pw_nf_status_name(r.status));
	NEAR(r.floor_pct, 0.4172606663340315, 1e-12);
	NEAR(r.level, 100.2, 1e-12);
	cr_expect_eq(r.n_groups, 6);
	cr_expect_eq(r.n_samples, 19);
	cr_expect_eq(r.n_pairs, 24);
}

/*
 * The re-baseline job's runs have run ids of their own: without the job in
 * the key each is alone and left out. gen_noise_floor_reference.py, "ROWS by
 * run only": floor_pct 0.4185062205618944 n_groups 5 n_samples 14.
 */
Test(noise_floor, rebaseline_runs_are_one_group_only_by_their_job)
{
	pw_nf_sample s[NROWS];
	char keys[NROWS][64];
	samples_of(s, keys, false);
	pw_nf_params p = params(5, 14);
	pw_nf_result r;
	cr_assert_eq(pw_nf_derive_samples(s, NROWS, &p, &r), PW_OK);
	cr_assert_eq(r.status, PW_NF_DERIVED);
	NEAR(r.floor_pct, 0.4185062205618944, 1e-12);
	cr_expect_eq(r.n_groups, 5);
	cr_expect_eq(r.n_samples, 14);
}

/* one fewer group or run than the rules ask: INSUFFICIENT_DATA, no number */
Test(noise_floor, too_few_groups_or_runs_is_insufficient_data_never_a_guess)
{
	pw_nf_sample s[NROWS];
	char keys[NROWS][64];
	pw_nf_result r;
	samples_of(s, keys, true);
	pw_nf_params p = params(7, 19);
	cr_assert_eq(pw_nf_derive_samples(s, NROWS, &p, &r), PW_OK);
	cr_expect_eq(r.status, PW_NF_INSUFFICIENT_DATA);
	cr_expect(isnan(r.floor_pct) && isnan(r.level));
	cr_expect_eq(r.n_groups, 6, "the counts are reported all the same");
	cr_expect_eq(r.n_samples, 19);
	samples_of(s, keys, true);
	p = params(6, 20);
	cr_assert_eq(pw_nf_derive_samples(s, NROWS, &p, &r), PW_OK);
	cr_expect_eq(r.status, PW_NF_INSUFFICIENT_DATA);
	/* the §4.2 defaults (5 groups, 30 runs): 19 runs are not enough */
	samples_of(s, keys, true);
	pw_nf_params_default(&p);
	cr_assert_eq(pw_nf_derive_samples(s, NROWS, &p, &r), PW_OK);
	cr_expect_eq(r.status, PW_NF_INSUFFICIENT_DATA);
	/* nightlies of one repeat each: no group at all, even with min_groups 1 */
	double v[] = {100.1, 99.9, 100.3};
	int64_t g[] = {0, 1, 2};
	double work[8];
	p = params(1, 2);
	cr_assert_eq(pw_nf_derive(v, g, 3, &p, work, &r), PW_OK);
	cr_expect_eq(r.status, PW_NF_INSUFFICIENT_DATA);
	cr_expect_eq(r.n_groups, 0);
	cr_assert_eq(pw_nf_derive(NULL, NULL, 0, &p, NULL, &r), PW_OK);
	cr_expect_eq(r.status, PW_NF_INSUFFICIENT_DATA);
}

/*
 * Normal noise of relative σ 0.5% at twelve levels 95..105, four repeats
 * each; gen_noise_floor_reference.py NORMAL12 (numpy default_rng(20261205),
 * rounded to 6 decimals): floor_pct 0.45456353057789 level 97.87487999999999
 * n_groups 12 n_samples 48 n_pairs 72. The levels differ by up to 7%, the
 * floor stays near the runs' own 0.5%.
 */
static const double NORMAL12[12][4] = {
	{98.299599, 98.51952, 98.090116, 97.472391}, {97.178448, 96.662427, 97.520827, 96.533428},
	{101.278812, 101.065243, 101.627904, 101.131334}, {97.48453, 97.914953, 98.734547, 99.362403},
	{99.128558, 99.440212, 98.935072, 99.679203}, {99.641998, 100.378474, 99.882107, 99.581654},
	{97.148074, 96.72478, 96.820228, 97.1425}, {96.26758, 97.595413, 96.976734, 96.570293},
	{97.439425, 95.872149, 97.271546, 96.585559}, {97.280836, 97.796641, 97.501104, 97.544139},
	{97.591147, 98.716811, 97.518658, 97.385485}, {103.864537, 103.625907, 104.065292, 104.016447},
};

Test(noise_floor, normal_noise_against_numpy)
{
	double v[48];
	int64_t g[48];
	for (int i = 0; i < 12; i++)
		for (int j = 0; j < 4; j++) {
			v[4 * i + j] = NORMAL12[i][j];
			g[4 * i + j] = i;
		}
	double *work = malloc(pw_stats_noise_floor_work_len(g, 48) * sizeof *work);
	cr_assert(work);
	pw_nf_params p = params(5, 30);
	pw_nf_result r;
	cr_assert_eq(pw_nf_derive(v, g, 48, &p, work, &r), PW_OK);
	free(work);
	cr_assert_eq(r.status, PW_NF_DERIVED);
	NEAR(r.floor_pct, 0.45456353057789, 1e-12);
	NEAR(r.level, 97.87487999999999, 1e-12);
	cr_expect_eq(r.n_groups, 12);
	cr_expect_eq(r.n_samples, 48);
	cr_expect_eq(r.n_pairs, 72);
}

/* a metric at zero (a group median <= 0): no relative floor; INVALID, kept */
Test(noise_floor, a_group_at_zero_is_invalid_not_a_floor)
{
	double v[] = {0.0, 0.0, 1.0, 1.01, 2.0, 2.02};
	int64_t g[] = {0, 0, 1, 1, 2, 2};
	double work[16];
	pw_nf_params p = params(3, 6);
	pw_nf_result r;
	cr_assert_eq(pw_nf_derive(v, g, 6, &p, work, &r), PW_OK);
	cr_expect_eq(r.status, PW_NF_INVALID);
	cr_expect(isnan(r.floor_pct));
	cr_expect_str_eq(pw_nf_status_name(r.status), "invalid");
}

Test(noise_floor, bad_input_is_refused)
{
	double work[16];
	pw_nf_params p = params(1, 2);
	pw_nf_result r;
	double nan_v[] = {1.0, NAN, 1.0};
	int64_t g[] = {0, 0, 1};
	cr_expect_eq(pw_nf_derive(nan_v, g, 3, &p, work, &r), PW_ERR_INVALID);
	double inf_v[] = {1.0, 1.0, INFINITY};
	cr_expect_eq(pw_nf_derive(inf_v, g, 3, &p, work, &r), PW_ERR_INVALID);
	double ok[] = {1.0, 1.01, 1.02};
	int64_t back[] = {1, 1, 0};
	cr_expect_eq(pw_nf_derive(ok, back, 3, &p, work, &r), PW_ERR_INVALID);
	cr_expect_eq(pw_nf_derive(ok, g, 3, NULL, work, &r), PW_ERR_INVALID);
	pw_nf_sample s[] = {{"r:a", 1.0}, {NULL, 1.0}};
	cr_expect_eq(pw_nf_derive_samples(s, 2, &p, &r), PW_ERR_INVALID);
}

Test(noise_floor, change_pct)
{
	NEAR(pw_nf_change_pct(0.40, 0.50), 25.0, 1e-12);
	NEAR(pw_nf_change_pct(0.50, 0.40), -20.0, 1e-12);
	cr_expect(isnan(pw_nf_change_pct(0.0, 0.4)));
	cr_expect(isnan(pw_nf_change_pct(NAN, 0.4)));
	cr_expect(isnan(pw_nf_change_pct(0.4, NAN)));
}
