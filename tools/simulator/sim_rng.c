/*
 * sim_rng.c: xoshiro256**, splitmix64 and FNV-1a for the fleet simulator.
 *
 * Reference implementations: https://prng.di.unimi.it/ (public domain). The
 * model (sim_model.c) derives one generator per drawn thing from these.
 */
#include "sim_rng.h"

#include <math.h>

uint64_t pw_sim_hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t pw_sim_hash_str(uint64_t h, const char *s)
{
	/* hash the terminator too, so that ("ab","c") and ("a","bc") differ */
	for (;; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
		if (*s == '\0')
			break;
	}
	return h;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t pw_sim_hash_u64(uint64_t h, uint64_t v)
{
	uint64_t x = h ^ v;
	return splitmix64(&x);
}

void pw_sim_rng_init(pw_sim_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t pw_sim_rng_next(pw_sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double pw_sim_rng_uniform(pw_sim_rng *r)
{
	return (double)(pw_sim_rng_next(r) >> 11) * 0x1.0p-53;
}

double pw_sim_rng_normal(pw_sim_rng *r)
{
	double u, v, s;
	do {
		u = 2.0 * pw_sim_rng_uniform(r) - 1.0;
		v = 2.0 * pw_sim_rng_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	return u * sqrt(-2.0 * log(s) / s);
}
