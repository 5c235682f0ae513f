/*
 * pw_time.h: the two clocks every service reads — wall time for the
 * timestamps it stores and publishes (unix microseconds, the unit of every
 * *_unix_us field in proto/), and a monotonic clock for durations and
 * deadlines, which must not jump when the wall clock is set.
 */
#ifndef PW_TIME_H
#define PW_TIME_H

#include <stdint.h>

/*
 * 9999-12-31T23:59:59.999999Z in unix microseconds: the latest time a
 * service stores or shows. PostgreSQL holds it (INT64_MAX microseconds it
 * refuses: "interval out of range"), and RFC 3339 has four-digit years.
 */
#define PW_TIME_MAX_US INT64_C(253402300799999999)

/* Wall-clock time now, unix microseconds. */
int64_t pw_now_us(void);

/* Monotonic time now in seconds, for measuring and waiting only. */
double pw_mono_s(void);

#endif
