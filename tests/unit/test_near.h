/*
 * test_near.h: the relative comparison the statistics tests hold computed
 * values to against their quoted reference values (test_stats, test_canary_cs).
 */
#ifndef PW_TEST_NEAR_H
#define PW_TEST_NEAR_H

#include <criterion/criterion.h>
#include <math.h>

/* |got − want| <= rel·|want| (or <= rel when want is 0). */
#define NEAR(got, want, rel)                                                              \
	do {                                                                              \
		double g_ = (got), w_ = (want);                                           \
		double tol_ = (rel) * (w_ == 0.0 ? 1.0 : fabs(w_));                       \
		cr_assert(fabs(g_ - w_) <= tol_, "%s = %.17g, want %.17g (rel %g)", #got, g_, \
		          w_, (double)(rel));                                             \
	} while (0)

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

#endif
