/*
 * pw_backoff.h: capped exponential backoff with jitter, as a pure value type.
 *
 * The Kafka consumer loop (retrying a failed batch), the PostgreSQL connection
 * and the Redis connection (reconnecting to a server that went away) all wait
 * the same way: base, 2·base, 4·base, ... up to a cap, each delay drawn
 * uniformly from the upper half of its step ("equal jitter") so that a fleet
 * of consumers does not reconnect in lock-step. The state is a small struct
 * the caller owns; the random source is a seeded xorshift so that tests can
 * check the sequence exactly. Header-only: every function is a few lines.
 */
#ifndef PW_BACKOFF_H
#define PW_BACKOFF_H

#include <stdint.h>

typedef struct pw_backoff {
	uint32_t base_ms;  /* first step; 0 is treated as 1 */
	uint32_t cap_ms;   /* no delay ever exceeds this; raised to base_ms if lower */
	uint32_t attempt;  /* steps taken since the last reset */
	uint64_t rng;      /* xorshift64 state, never 0 */
} pw_backoff;

/* Fills b. seed 0 is replaced by a fixed non-zero constant. */
static inline void pw_backoff_init(pw_backoff *b, uint32_t base_ms, uint32_t cap_ms,
                                   uint64_t seed)
{
	b->base_ms = base_ms ? base_ms : 1;
	b->cap_ms = cap_ms < b->base_ms ? b->base_ms : cap_ms;
	b->attempt = 0;
	b->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

/* Forgets past failures: the next delay is drawn from the first step again. */
static inline void pw_backoff_reset(pw_backoff *b)
{
	b->attempt = 0;
}

/*
 * The ceiling of step `attempt` (0-based): min(cap, base·2^attempt), without
 * overflow for any attempt. Pure.
 */
static inline uint32_t pw_backoff_ceiling(uint32_t base_ms, uint32_t cap_ms, uint32_t attempt)
{
	uint64_t c = base_ms ? base_ms : 1;
	for (uint32_t i = 0; i < attempt && c < cap_ms; i++)
		c <<= 1;
	return c > cap_ms ? cap_ms : (uint32_t)c;
}

/*
 * The next delay in milliseconds, in [ceiling/2, ceiling] of the current step;
 * advances the step. Never returns more than cap_ms nor less than 1.
 */
static inline uint32_t pw_backoff_next(pw_backoff *b)
{
	uint32_t ceil = pw_backoff_ceiling(b->base_ms, b->cap_ms, b->attempt);
	if (b->attempt < 64)
		b->attempt++;
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	uint32_t half = ceil / 2;
	uint32_t d = half + (uint32_t)(b->rng % ((uint64_t)(ceil - half) + 1));
	return d ? d : 1;
}

#endif
