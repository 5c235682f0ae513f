/*
 * test_redis.c: unit tests of common/pw_redis.c that need no server.
 *
 * The cache must never make a service wait for a Redis that is gone: these
 * tests point the client at a port nobody listens on and check that every
 * call fails fast with PW_ERR_UNAVAILABLE and that reconnects follow the
 * backoff. The PING round trip against a real server is in
 * tests/integration/test_redis.sh.
 */
#include <criterion/criterion.h>

#include "pw_redis.h"

#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

Test(redis_conn, malformed_addresses_are_config_errors)
{
	char err[256];
	pw_log lg;
	pw_log_init(&lg, "test_redis", PW_LOG_ERROR);
	const char *bad[] = {NULL, "", "localhost", ":6379", "h:", "h:0", "h:70000", "h:12x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pw_redis *r = NULL;
		cr_assert_eq(pw_redis_new(&r, bad[i], NULL, &lg, err, sizeof err), PW_ERR_CONFIG,
		             "address %zu", i);
		cr_assert_null(r);
	}
	pw_redis_free(NULL);
}

Test(redis_conn, server_down_every_call_fails_fast)
{
	char err[256];
	pw_log lg;
	pw_log_init(&lg, "test_redis", PW_LOG_ERROR);
	pw_redis *r = NULL;
	pw_redis_opts o = {.backoff_ms = 200, .backoff_max_ms = 200};
	cr_assert_eq(pw_redis_new(&r, "127.0.0.1:1", &o, &lg, err, sizeof err), PW_OK);
	cr_assert_not(pw_redis_connected(r));
	double t0 = now_s();
	char *v = NULL;
	size_t n = 0;
	uint64_t ver = 7;
	bool stored = true;
	cr_assert_eq(pw_redis_ping(r, err, sizeof err), PW_ERR_UNAVAILABLE);
	cr_assert(strstr(err, "next attempt") != NULL, "inside the backoff: %s", err);
	cr_assert_eq(pw_redis_get(r, "k", &v, &n, err, sizeof err), PW_ERR_UNAVAILABLE);
	cr_assert_null(v);
	cr_assert_eq(pw_redis_set(r, "k", "v", 1, 0, err, sizeof err), PW_ERR_UNAVAILABLE);
	cr_assert_eq(pw_redis_del(r, "k", err, sizeof err), PW_ERR_UNAVAILABLE);
	cr_assert_eq(pw_redis_set_versioned(r, "k", 1, "v", 1, 0, &stored, err, sizeof err),
	             PW_ERR_UNAVAILABLE);
	cr_assert_not(stored);
	cr_assert_eq(pw_redis_get_versioned(r, "k", &ver, &v, &n, err, sizeof err),
	             PW_ERR_UNAVAILABLE);
	cr_assert_eq(ver, 0);
	cr_assert_lt(now_s() - t0, 0.1, "no call waits for the server");

	/* after the backoff the client tries again (and fails again, refused) */
	struct timespec ts = {0, 250 * 1000000};
	nanosleep(&ts, NULL);
	cr_assert_eq(pw_redis_ping(r, err, sizeof err), PW_ERR_UNAVAILABLE);
	cr_assert(strstr(err, "next attempt") == NULL, "a fresh attempt was made: %s", err);
	pw_redis_free(r);
}
