/*
 * pw_redis.c: the reconnecting Redis cache connection. See pw_redis.h.
 *
 * Every command goes through redis_call(), which (re)connects under the
 * backoff schedule, sends an argv command (binary-safe), and drops the
 * connection on any I/O error or timeout so that the next call starts clean.
 * Each reply is freed in the function that asked for it.
 */
#include "pw_redis.h"

#include "pw_backoff.h"

#include <hiredis/hiredis.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

struct pw_redis {
	const pw_log *lg;
	char *host;
	int port;
	struct timeval connect_tv, command_tv;
	redisContext *ctx; /* NULL while disconnected */
	pw_backoff backoff;
	int64_t next_attempt; /* monotonic ms; 0 = now */
	bool down_logged;
	char last_error[256];
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timeval tv_of_ms(int ms)
{
	return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
}

pw_status pw_redis_new(pw_redis **out, const char *addr, const pw_redis_opts *o,
                       const pw_log *lg, char *errbuf, size_t errlen)
{
	*out = NULL;
	const char *colon = addr ? strrchr(addr, ':') : NULL;
	char *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;
	if (!colon || colon == addr || !end || *end || port <= 0 || port > 65535)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "invalid redis address \"%s\": expected host:port", addr ? addr : "");
	pw_redis *r = calloc(1, sizeof *r);
	if (!r)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for redis handle");
	r->host = strndup(addr, (size_t)(colon - addr));
	if (!r->host) {
		free(r);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for redis handle");
	}
	r->lg = lg;
	r->port = (int)port;
	r->connect_tv = tv_of_ms(o && o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 500);
	r->command_tv = tv_of_ms(o && o->command_timeout_ms > 0 ? o->command_timeout_ms : 500);
	pw_backoff_init(&r->backoff, o && o->backoff_ms ? o->backoff_ms : 100,
	                o && o->backoff_max_ms ? o->backoff_max_ms : 5000,
	                (uint64_t)now_ms() ^ (uint64_t)(uintptr_t)r);
	char ignored[64];
	(void)pw_redis_ping(r, ignored, sizeof ignored);
	*out = r;
	return PW_OK;
}

static void drop_connection(pw_redis *r, const char *why)
{
	snprintf(r->last_error, sizeof r->last_error, "%s", why);
	redisFree(r->ctx);
	r->ctx = NULL;
	r->next_attempt = now_ms() + pw_backoff_next(&r->backoff);
	if (!r->down_logged) {
		r->down_logged = true;
		pw_log_warn(r->lg, "redis %s:%d unavailable (retrying with backoff): %s", r->host,
		            r->port, why);
	}
}

static pw_status ensure(pw_redis *r, char *errbuf, size_t errlen)
{
	if (r->ctx)
		return PW_OK;
	int64_t now = now_ms();
	if (now < r->next_attempt)
		return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen,
		               "redis unavailable (next attempt in %lld ms): %s",
		               (long long)(r->next_attempt - now), r->last_error);
	r->ctx = redisConnectWithTimeout(r->host, r->port, r->connect_tv);
	if (!r->ctx || r->ctx->err) {
		drop_connection(r, r->ctx ? r->ctx->errstr : "out of memory");
		return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "redis unavailable: %s",
		               r->last_error);
	}
	if (redisSetTimeout(r->ctx, r->command_tv) != REDIS_OK) {
		drop_connection(r, "cannot set command timeout");
		return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "redis unavailable: %s",
		               r->last_error);
	}
	redisEnableKeepAlive(r->ctx);
	pw_backoff_reset(&r->backoff);
	r->next_attempt = 0;
	if (r->down_logged)
		pw_log_info(r->lg, "redis %s:%d connection re-established", r->host, r->port);
	r->down_logged = false;
	r->last_error[0] = '\0';
	return PW_OK;
}

/*
 * Sends argv and returns the reply in *out (caller freeReplyObject). Error
 * replies become PW_ERR_REDIS (reply freed), except LOADING/BUSY/MASTERDOWN
 * which are PW_ERR_UNAVAILABLE.
 */
static pw_status redis_call(pw_redis *r, int argc, const char **argv, const size_t *argvlen,
                            redisReply **out, char *errbuf, size_t errlen)
{
	*out = NULL;
	pw_status st = ensure(r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	redisReply *rep = redisCommandArgv(r->ctx, argc, argv, argvlen);
	if (!rep) {
		char why[160];
		snprintf(why, sizeof why, "%s", r->ctx->err ? r->ctx->errstr : "no reply");
		drop_connection(r, why);
		return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "redis %s failed: %s", argv[0], why);
	}
	if (rep->type == REDIS_REPLY_ERROR) {
		bool transient = strncmp(rep->str, "LOADING", 7) == 0 ||
		                 strncmp(rep->str, "BUSY", 4) == 0 ||
		                 strncmp(rep->str, "MASTERDOWN", 10) == 0;
		st = pw_fail(transient ? PW_ERR_UNAVAILABLE : PW_ERR_REDIS, errbuf, errlen,
		             "redis %s failed: %s", argv[0], rep->str);
		freeReplyObject(rep);
		return st;
	}
	*out = rep;
	return PW_OK;
}

static pw_status copy_value(const char *s, size_t n, char **val, size_t *len, char *errbuf,
                            size_t errlen)
{
	char *v = malloc(n + 1);
	if (!v)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a %zu-byte value", n);
	memcpy(v, s, n);
	v[n] = '\0';
	*val = v;
	*len = n;
	return PW_OK;
}

pw_status pw_redis_ping(pw_redis *r, char *errbuf, size_t errlen)
{
	redisReply *rep;
	const char *argv[] = {"PING"};
	pw_status st = redis_call(r, 1, argv, NULL, &rep, errbuf, errlen);
	if (st != PW_OK)
		return st;
	bool pong = rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "PONG") == 0;
	freeReplyObject(rep);
	return pong ? PW_OK : pw_fail(PW_ERR_REDIS, errbuf, errlen, "redis PING: unexpected reply");
}

pw_status pw_redis_get(pw_redis *r, const char *key, char **val, size_t *len, char *errbuf,
                       size_t errlen)
{
	redisReply *rep;
	*val = NULL;
	*len = 0;
	const char *argv[] = {"GET", key};
	pw_status st = redis_call(r, 2, argv, NULL, &rep, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (rep->type == REDIS_REPLY_NIL)
		st = pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "redis key \"%s\" not found", key);
	else if (rep->type != REDIS_REPLY_STRING)
		st = pw_fail(PW_ERR_REDIS, errbuf, errlen, "redis GET \"%s\": unexpected reply", key);
	else
		st = copy_value(rep->str, rep->len, val, len, errbuf, errlen);
	freeReplyObject(rep);
	return st;
}

pw_status pw_redis_set(pw_redis *r, const char *key, const void *val, size_t len, int ttl_s,
                       char *errbuf, size_t errlen)
{
	redisReply *rep;
	char ttl[16];
	snprintf(ttl, sizeof ttl, "%d", ttl_s);
	const char *argv[] = {"SET", key, val, "EX", ttl};
	size_t argvlen[] = {3, strlen(key), len, 2, strlen(ttl)};
	pw_status st = redis_call(r, ttl_s > 0 ? 5 : 3, argv, argvlen, &rep, errbuf, errlen);
	if (st != PW_OK)
		return st;
	freeReplyObject(rep);
	return PW_OK;
}

pw_status pw_redis_del(pw_redis *r, const char *key, char *errbuf, size_t errlen)
{
	redisReply *rep;
	const char *argv[] = {"DEL", key};
	pw_status st = redis_call(r, 2, argv, NULL, &rep, errbuf, errlen);
	if (st != PW_OK)
		return st;
	freeReplyObject(rep);
	return PW_OK;
}

/* KEYS[1] key; ARGV[1] version, ARGV[2] data, ARGV[3] ttl seconds (0 = none). */
static const char set_versioned_lua[] =
	"local cur = redis.call('HGET', KEYS[1], 'v')\n"
	"if cur and tonumber(cur) >= tonumber(ARGV[1]) then return 0 end\n"
	"redis.call('HMSET', KEYS[1], 'v', ARGV[1], 'd', ARGV[2])\n"
	"if tonumber(ARGV[3]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[3]) "
	"else redis.call('PERSIST', KEYS[1]) end\n"
	"return 1\n";

pw_status pw_redis_set_versioned(pw_redis *r, const char *key, uint64_t version,
                                 const void *val, size_t len, int ttl_s, bool *stored,
                                 char *errbuf, size_t errlen)
{
	redisReply *rep;
	char ver[24], ttl[16];
	if (stored)
		*stored = false;
	snprintf(ver, sizeof ver, "%llu", (unsigned long long)version);
	snprintf(ttl, sizeof ttl, "%d", ttl_s > 0 ? ttl_s : 0);
	const char *argv[] = {"EVAL", set_versioned_lua, "1", key, ver, val, ttl};
	size_t argvlen[] = {4, sizeof set_versioned_lua - 1, 1, strlen(key), strlen(ver), len,
	                    strlen(ttl)};
	pw_status st = redis_call(r, 7, argv, argvlen, &rep, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (rep->type != REDIS_REPLY_INTEGER)
		st = pw_fail(PW_ERR_REDIS, errbuf, errlen, "redis versioned set \"%s\": unexpected reply",
		             key);
	else if (stored)
		*stored = rep->integer == 1;
	freeReplyObject(rep);
	return st;
}

pw_status pw_redis_get_versioned(pw_redis *r, const char *key, uint64_t *version, char **val,
                                 size_t *len, char *errbuf, size_t errlen)
{
	redisReply *rep;
	*val = NULL;
	*len = 0;
	*version = 0;
	const char *argv[] = {"HMGET", key, "v", "d"};
	pw_status st = redis_call(r, 4, argv, NULL, &rep, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
		st = pw_fail(PW_ERR_REDIS, errbuf, errlen, "redis HMGET \"%s\": unexpected reply", key);
	} else if (rep->element[0]->type != REDIS_REPLY_STRING ||
	           rep->element[1]->type != REDIS_REPLY_STRING) {
		st = pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "redis key \"%s\" not found", key);
	} else {
		*version = strtoull(rep->element[0]->str, NULL, 10);
		st = copy_value(rep->element[1]->str, rep->element[1]->len, val, len, errbuf, errlen);
	}
	freeReplyObject(rep);
	return st;
}

bool pw_redis_connected(const pw_redis *r)
{
	return r->ctx != NULL;
}

void pw_redis_free(pw_redis *r)
{
	if (!r)
		return;
	redisFree(r->ctx);
	free(r->host);
	free(r);
}
