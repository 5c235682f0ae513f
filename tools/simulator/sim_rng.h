/*
 * sim_rng.h: the simulator's own pseudo-random numbers, deterministic under a
 * seed on every platform and libc.
 *
 * The fleet simulator (sim_model.h) never calls rand() or reads the clock:
 * every draw comes from a pw_sim_rng seeded by hashing the scenario seed with
 * the identity of what is being drawn (a series, a run id, a repeat), so that
 * one run's numbers do not depend on the order runs are generated in or on
 * how many other series exist. The generator is xoshiro256** (Blackman and
 * Vigna, 2018) seeded through splitmix64; normals use the Marsaglia polar
 * method.
 */
#ifndef PW_SIM_RNG_H
#define PW_SIM_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct pw_sim_rng {
	uint64_t s[4];
} pw_sim_rng;

/* 64-bit FNV-1a of len bytes of p, continuing from h (start with PW_SIM_HASH_INIT). */
#define PW_SIM_HASH_INIT 0xcbf29ce484222325ULL
uint64_t pw_sim_hash_bytes(uint64_t h, const void *p, size_t len);

/* The same over a NUL-terminated string, and over one integer (mixed through splitmix64). */
uint64_t pw_sim_hash_str(uint64_t h, const char *s);
uint64_t pw_sim_hash_u64(uint64_t h, uint64_t v);

/* Seeds r from one 64-bit value (splitmix64 expansion; any value, 0 included, is fine). */
void pw_sim_rng_init(pw_sim_rng *r, uint64_t seed);

/* Next raw 64-bit output. */
uint64_t pw_sim_rng_next(pw_sim_rng *r);

/* Uniform double in [0, 1) with 53 random bits. */
double pw_sim_rng_uniform(pw_sim_rng *r);

/* Standard normal N(0, 1). */
double pw_sim_rng_normal(pw_sim_rng *r);

#endif
