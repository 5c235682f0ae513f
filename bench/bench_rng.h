/*
 * bench_rng.h: the seeded generator the changepoint and watcher benchmarks
 * draw their series from (splitmix64, Box–Muller normals), and their clock,
 * so that both benchmarks measure the same kind of input.
 */
#ifndef PW_BENCH_RNG_H
#define PW_BENCH_RNG_H

#include <math.h>
#include <stdint.h>
#include <time.h>

static inline double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline double unit(uint64_t *s)
{
	return ((double)(next_u64(s) >> 11) + 0.5) * 0x1.0p-53;
}

static inline double gauss(uint64_t *s)
{
	double u1 = unit(s), u2 = unit(s);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

#endif
