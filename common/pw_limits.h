/*
 * pw_limits.h: the lengths of the names that identify things, defined once.
 *
 * A series key is model/hlo_fingerprint/platform/config/metric. The ingester
 * is the one door that enforces the length of each part (validate.c: a run
 * with a longer part is dead-lettered as oversize); every later reader of a
 * key, in a message (the baseliner's, the watcher's, the bisector's, the
 * attributor's and the pager's doors), on GET /api/baseline or on the
 * command line, accepts any key made of parts within these limits, because
 * the parts at their maxima with their four '/' still fit
 * PW_SERIES_KEY_MAX (tests/unit/test_key_limits.c runs every door on such
 * keys). A reader never refuses a key the ingester stored.
 *
 * Bytes, without the terminating NUL unless the name says so.
 */
#ifndef PW_LIMITS_H
#define PW_LIMITS_H

/* The parts of a series key. The model's bound leaves room in the bisector's
 * ids built from it ("bs-MODEL-CL"), which must fit PW_ID_MAX. */
#define PW_KEY_MODEL_MAX 100
#define PW_KEY_HLO_FINGERPRINT_MAX 64
#define PW_KEY_PLATFORM_MAX 24
#define PW_KEY_CONFIG_MAX 40
#define PW_KEY_METRIC_MAX 23

/* Bytes of a series key, its terminating NUL included (a key is at most 255 bytes). */
#define PW_SERIES_KEY_MAX 256

_Static_assert(PW_KEY_MODEL_MAX + PW_KEY_HLO_FINGERPRINT_MAX + PW_KEY_PLATFORM_MAX + PW_KEY_CONFIG_MAX +
                       PW_KEY_METRIC_MAX + 4 <= PW_SERIES_KEY_MAX - 1,
               "a series key with every part at its maximum must fit PW_SERIES_KEY_MAX");

/* An id: alert, bisection, changepoint, bisect job, CL, config hash. */
#define PW_ID_MAX 200

/* A release id (perf.gate.requests.v1, `perfwatch gate show RELEASE`). */
#define PW_RELEASE_ID_MAX 255

#endif
