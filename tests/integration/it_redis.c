/*
 * it_redis.c: the Redis cache client (common/pw_redis.c) against the dev
 * stack's Redis.
 *
 * Run by tests/integration/test_redis.sh with PW_REDIS_ADDR from
 * run/stack.env: PING round trip, binary-safe SET/GET/DEL, and the versioned
 * set that refuses to put an older baseline over a newer one. Reconnecting
 * after a Redis restart is exercised by the baseliner's tests. Keys carry the
 * process id so that parallel runs do not collide; they are deleted at the end.
 * Exit 0 = pass.
 */
#include "pw_log.h"
#include "pw_redis.h"
#include "pw_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void check(bool ok, const char *what, const char *err, int *failures)
{
	printf("%s: %s%s%s\n", ok ? "ok" : "FAIL", what, ok ? "" : ": ", ok ? "" : err);
	if (!ok)
		(*failures)++;
}

int main(void)
{
	char err[512], key[64], vkey[64];
	int failures = 0;
	const char *addr = getenv("PW_REDIS_ADDR");
	if (!addr) {
		fprintf(stderr, "it_redis: PW_REDIS_ADDR must be set\n");
		return 1;
	}
	pw_log lg;
	pw_log_init(&lg, "it_redis", PW_LOG_WARN);
	pw_redis *r = NULL;
	if (pw_redis_new(&r, addr, NULL, &lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_redis: %s\n", err);
		return 1;
	}
	snprintf(key, sizeof key, "pw:it:%ld:plain", (long)getpid());
	snprintf(vkey, sizeof vkey, "pw:it:%ld:versioned", (long)getpid());

	check(pw_redis_ping(r, err, sizeof err) == PW_OK, "PING", err, &failures);

	static const char bin[] = {'a', '\0', 'b', '\n', (char)0xff};
	char *v = NULL;
	size_t n = 0;
	check(pw_redis_set(r, key, bin, sizeof bin, 60, err, sizeof err) == PW_OK,
	      "SET binary value with TTL", err, &failures);
	pw_status st = pw_redis_get(r, key, &v, &n, err, sizeof err);
	check(st == PW_OK && n == sizeof bin && memcmp(v, bin, n) == 0,
	      "GET returns the same 5 bytes (NUL and 0xff included)", err, &failures);
	free(v);
	check(pw_redis_del(r, key, err, sizeof err) == PW_OK, "DEL", err, &failures);
	check(pw_redis_get(r, key, &v, &n, err, sizeof err) == PW_ERR_NOT_FOUND && !v,
	      "GET after DEL is not found", err, &failures);

	bool stored = false;
	uint64_t ver = 0;
	st = pw_redis_set_versioned(r, vkey, 5, "five", 4, 0, &stored, err, sizeof err);
	check(st == PW_OK && stored, "versioned set v5 stored", err, &failures);
	st = pw_redis_set_versioned(r, vkey, 3, "three", 5, 0, &stored, err, sizeof err);
	check(st == PW_OK && !stored, "versioned set v3 refused (older)", err, &failures);
	st = pw_redis_get_versioned(r, vkey, &ver, &v, &n, err, sizeof err);
	check(st == PW_OK && ver == 5 && n == 4 && memcmp(v, "five", 4) == 0,
	      "versioned get returns v5", err, &failures);
	free(v);
	st = pw_redis_set_versioned(r, vkey, 6, "six", 3, 60, &stored, err, sizeof err);
	check(st == PW_OK && stored, "versioned set v6 stored", err, &failures);
	pw_redis_del(r, vkey, err, sizeof err);
	check(pw_redis_get_versioned(r, vkey, &ver, &v, &n, err, sizeof err) == PW_ERR_NOT_FOUND,
	      "versioned get after DEL is not found", err, &failures);
	pw_redis_free(r);
	printf("it_redis: %s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
