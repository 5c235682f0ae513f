/*
 * test_expected.c: observed − expected (common/pw_expected.h), the one
 * definition the gate and the watcher test a registered change with.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>

#include "pw_expected.h"

Test(expected, remove_takes_the_registration_out)
{
	cr_assert_float_eq(pw_expected_remove(96.0, -4.0), 100.0, 1e-12);
	cr_assert_float_eq(pw_expected_remove(104.17, 4.17), 100.0, 1e-12);
	cr_assert_float_eq(pw_expected_remove(7.5, 0.0), 7.5, 0.0);
	cr_assert(isnan(pw_expected_remove(1.0, -100.0)), "-100%% has no inverse");
	cr_assert(isnan(pw_expected_remove(1.0, -150.0)));
	cr_assert(isnan(pw_expected_remove(1.0, NAN)));
	cr_assert(!pw_expected_valid(INFINITY));
	cr_assert(pw_expected_valid(-99.0));
}

/* the gate's table: every branch of the rule */
Test(expected, classify_follows_the_gates_rule)
{
	struct {
		bool sig, above;
		double raw_worse, excess_worse, threshold;
		pw_expected_outcome want;
	} t[] = {
		{false, true, -4.0, 0.1, 0.7, PW_EXPECTED_VALIDATED},     /* arrived as registered */
		{false, false, -0.2, 0.1, 0.7, PW_EXPECTED_WITHIN_NOISE}, /* nothing moved, tiny registration */
		{false, true, 4.0, 0.1, 0.7, PW_EXPECTED_WITHIN_NOISE},   /* a registered slowdown that arrived */
		{true, true, 4.0, 8.0, 0.7, PW_EXPECTED_REGRESSED},       /* worse, and worse than before */
		{true, false, 0.1, 4.1, 0.7, PW_EXPECTED_SHORTFALL},      /* nets out: the win did not show */
		{true, true, -1.0, 3.0, 0.7, PW_EXPECTED_SHORTFALL},      /* better, but less than registered */
		{true, true, -8.0, -4.0, 0.7, PW_EXPECTED_OVERSHOOT},     /* twice the registration */
		{true, true, -4.5, -0.5, 0.7, PW_EXPECTED_VALIDATED},     /* a little better, within the filter */
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		cr_assert_eq(pw_expected_classify(t[i].sig, t[i].above, t[i].raw_worse,
		                                  t[i].excess_worse, t[i].threshold),
		             t[i].want, "row %zu: %s", i,
		             pw_expected_outcome_name(pw_expected_classify(
				     t[i].sig, t[i].above, t[i].raw_worse, t[i].excess_worse,
				     t[i].threshold)));
}

/* a generated baseline (σ 0.4%) against candidates that moved as registered and not */
Test(expected, compare_judges_generated_samples)
{
	double base[30], cand[5], adj[5];
	unsigned s = 7;
	for (int i = 0; i < 30; i++) {
		s = s * 1103515245u + 12345u;
		base[i] = 10.0 * (1.0 + 0.004 * (((double)(s >> 8) / 16777216.0) - 0.5) * 3.4641);
	}
	for (int i = 0; i < 5; i++)
		cand[i] = base[3 * i + 1] * 0.96; /* the registered −4% */
	pw_compare_opts o;
	pw_compare_opts_init(&o);
	o.mde_pct = 1.0;
	o.practical_pct = 0.7;
	double *work = malloc(pw_stats_compare_work_len(30, 5) * sizeof *work);
	pw_expected_result x;
	cr_assert_eq(pw_expected_compare(base, 30, cand, 5, -4.0, &o, work, adj, &x), PW_OK);
	cr_assert_lt(x.raw.effect_pct, -3.5, "raw %.3f%%", x.raw.effect_pct);
	cr_assert_lt(fabs(x.excess_pct), 0.5, "excess %.3f%%", x.excess_pct);
	/* lower is better: worse is +effect */
	cr_assert_eq(pw_expected_classify(x.against.p < 0.05, x.raw.effect_filter_passed,
	                                  x.raw.effect_pct, x.excess_pct, x.raw.threshold_pct),
	             PW_EXPECTED_VALIDATED);
	/* the same −4% registered, but the nightlies did not move (a regression of the
	 * same size landed with the win): observed − expected is +4.17% */
	for (int i = 0; i < 5; i++)
		cand[i] = base[3 * i + 1];
	cr_assert_eq(pw_expected_compare(base, 30, cand, 5, -4.0, &o, work, adj, &x), PW_OK);
	cr_assert_gt(x.excess_pct, 3.8, "excess %.3f%%", x.excess_pct);
	cr_assert_lt(x.against.p, 0.05);
	cr_assert_eq(pw_expected_classify(true, x.raw.effect_filter_passed, x.raw.effect_pct,
	                                  x.excess_pct, x.raw.threshold_pct),
	             PW_EXPECTED_SHORTFALL);
	cr_assert_eq(pw_expected_compare(base, 30, cand, 5, -100.0, &o, work, adj, &x),
	             PW_ERR_INVALID);
	free(work);
}
