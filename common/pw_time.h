/*
 * pw_time.h: the two clocks every service reads — wall time for the
 * timestamps it stores and publishes (unix microseconds, the unit of every
 * *_unix_us field in proto/), and a monotonic clock for durations and
 * deadlines, which must not jump when the wall clock is set.
 */
#ifndef PW_TIME_H
#define PW_TIME_H

#include <stdint.h>

/* Wall-clock time now, unix microseconds. */
int64_t pw_now_us(void);

/* Monotonic time now in seconds, for measuring and waiting only. */
double pw_mono_s(void);

#endif
