/*
 * test_noise.h: the deterministic noise of the service-logic unit tests
 * (test_baseline, test_gate_eval, test_watch): roughly N(0,1) as the sum of
 * twelve uniforms from a 64-bit LCG. Fixed and self-contained so that each
 * test's fixture is the same on every machine and build.
 */
#ifndef PW_TEST_NOISE_H
#define PW_TEST_NOISE_H

#include <stdint.h>

static inline double noise(uint64_t *state)
{
	double sum = 0.0;
	for (int i = 0; i < 12; i++) {
		*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
		sum += (double)(*state >> 11) / 9007199254740992.0;
	}
	return sum - 6.0;
}

#endif
