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
	char sha[41];              /* SHA-1 of the versioned-set script */
	const redisContext *sha_conn; /* the connection it was loaded on; NULL: load again */
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
	r->sha_conn = NULL;
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

/*
 * The versioned set, for any number of keys: KEYS[i] gets version
 * ARGV[3i-2] and data ARGV[3i-1] unless it holds that version or a newer one;
 * ARGV[3i] > 0 sets an expiry in seconds, 0 clears one. Returns per key 1
 * (written) or 0 (kept the newer). One call per many keys: Lua's per-call
 * cost was most of the server's time for single-key calls.
 */
static const char set_versioned_lua[] =
	"local out = {}\n"
	"for i = 1, #KEYS do\n"
	"  local v, ttl = ARGV[3 * i - 2], tonumber(ARGV[3 * i])\n"
	"  local cur = redis.call('HGET', KEYS[i], 'v')\n"
	"  if cur and tonumber(cur) >= tonumber(v) then out[i] = 0 else\n"
	"    redis.call('HSET', KEYS[i], 'v', v, 'd', ARGV[3 * i - 1])\n"
	"    if ttl > 0 then redis.call('EXPIRE', KEYS[i], ttl) else redis.call('PERSIST', KEYS[i]) end\n"
	"    out[i] = 1\n"
	"  end\n"
	"end\n"
	"return out\n";

/* Loads the script once per connection (SCRIPT LOAD is idempotent). */
static pw_status script_sha(pw_redis *r, char *errbuf, size_t errlen)
{
	if (r->ctx && r->sha_conn == r->ctx)
		return PW_OK;
	redisReply *rep;
	const char *argv[] = {"SCRIPT", "LOAD", set_versioned_lua};
	size_t argvlen[] = {6, 4, sizeof set_versioned_lua - 1};
	pw_status st = redis_call(r, 3, argv, argvlen, &rep, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (rep->type != REDIS_REPLY_STRING || rep->len != 40) {
		st = pw_fail(PW_ERR_REDIS, errbuf, errlen, "redis SCRIPT LOAD: unexpected reply");
	} else {
		memcpy(r->sha, rep->str, 41);
		r->sha_conn = r->ctx;
	}
	freeReplyObject(rep);
	return st;
}

#define PIPELINE_CMDS 64 /* commands in flight per round trip */
#define SET_KEYS 256     /* keys per script call */

/* One command of a pipeline: DEL of w[first], or the script over w[first .. first + n). */
typedef struct wcmd {
	size_t first, n;
	bool del;
} wcmd;

/* Scratch for building one script call's argv. */
typedef struct argv_buf {
	const char **argv;
	size_t *argvlen;
	char (*num)[24];
} argv_buf;

/* Appends one script call over w[0..n); eval sends the script's text instead of its SHA-1. */
static int append_sets(pw_redis *r, const pw_redis_write *w, size_t n, bool eval, argv_buf *a)
{
	const char **argv = a->argv;
	size_t *argvlen = a->argvlen;
	char (*num)[24] = a->num;
	int argc = 0;
	char nk[24];
	snprintf(nk, sizeof nk, "%zu", n);
	argv[argc] = eval ? "EVAL" : "EVALSHA";
	argvlen[argc++] = eval ? 4 : 7;
	argv[argc] = eval ? set_versioned_lua : r->sha;
	argvlen[argc++] = eval ? sizeof set_versioned_lua - 1 : 40;
	argv[argc] = nk;
	argvlen[argc++] = strlen(nk);
	for (size_t i = 0; i < n; i++) {
		argv[argc] = w[i].key;
		argvlen[argc++] = strlen(w[i].key);
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(num[2 * i], sizeof num[0], "%llu", (unsigned long long)w[i].version);
		snprintf(num[2 * i + 1], sizeof num[0], "%d", w[i].ttl_s > 0 ? w[i].ttl_s : 0);
		argv[argc] = num[2 * i];
		argvlen[argc++] = strlen(num[2 * i]);
		argv[argc] = w[i].val;
		argvlen[argc++] = w[i].len;
		argv[argc] = num[2 * i + 1];
		argvlen[argc++] = strlen(num[2 * i + 1]);
	}
	return redisAppendCommandArgv(r->ctx, argc, argv, argvlen);
}

/* Books the reply of one command into its writes; NOSCRIPT is PW_ERR_NOT_FOUND for a resend. */
static pw_status book_reply(const redisReply *rep, pw_redis_write *w, const wcmd *c,
                            char *errbuf, size_t errlen)
{
	if (rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "NOSCRIPT", 8) == 0)
		return PW_ERR_NOT_FOUND;
	for (size_t i = 0; i < c->n; i++) {
		pw_redis_write *x = &w[c->first + i];
		x->stored = false;
		if (rep->type == REDIS_REPLY_ERROR) {
			x->st = pw_fail(PW_ERR_REDIS, errbuf, errlen, "redis write \"%s\" failed: %s", x->key,
			                rep->str);
		} else if (c->del) {
			x->st = PW_OK;
		} else if (rep->type == REDIS_REPLY_ARRAY && rep->elements == c->n &&
		           rep->element[i]->type == REDIS_REPLY_INTEGER) {
			x->st = PW_OK;
			x->stored = rep->element[i]->integer == 1;
		} else {
			x->st = pw_fail(PW_ERR_REDIS, errbuf, errlen,
			                "redis versioned set \"%s\": unexpected reply", x->key);
		}
	}
	return PW_OK;
}

/* The commands of a send, as built by plan(): which writes each reply books. */
struct pw_redis_pending {
	size_t n;     /* writes */
	size_t ncmds;
	wcmd cmds[];
};

/* Groups w[0..n) into commands: a DEL per delete, one script call per run of up to SET_KEYS sets. */
static size_t plan(const pw_redis_write *w, size_t n, wcmd *cmds)
{
	size_t ncmds = 0;
	for (size_t next = 0; next < n;) {
		wcmd c = {.first = next, .n = 1, .del = w[next].val == NULL};
		if (!c.del)
			while (c.n < SET_KEYS && next + c.n < n && w[next + c.n].val)
				c.n++;
		next += c.n;
		cmds[ncmds++] = c;
	}
	return ncmds;
}

static pw_status argv_buf_init(argv_buf *a, char *errbuf, size_t errlen)
{
	size_t maxargs = 3 + 4 * SET_KEYS;
	a->argv = malloc(maxargs * sizeof *a->argv);
	a->argvlen = malloc(maxargs * sizeof *a->argvlen);
	a->num = malloc(2 * SET_KEYS * sizeof *a->num);
	if (a->argv && a->argvlen && a->num)
		return PW_OK;
	free(a->argv);
	free(a->argvlen);
	free(a->num);
	return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a redis pipeline");
}

static void argv_buf_release(argv_buf *a)
{
	free(a->argv);
	free(a->argvlen);
	free(a->num);
}

/* Appends cmds[0..ncmds) of w to the output buffer. */
static pw_status append_cmds(pw_redis *r, const pw_redis_write *w, const wcmd *cmds, size_t ncmds,
                             argv_buf *a, char *errbuf, size_t errlen)
{
	for (size_t k = 0; k < ncmds; k++) {
		int rc;
		if (cmds[k].del) {
			const char *dv[] = {"DEL", w[cmds[k].first].key};
			rc = redisAppendCommandArgv(r->ctx, 2, dv, NULL);
		} else {
			rc = append_sets(r, &w[cmds[k].first], cmds[k].n, false, a);
		}
		if (rc != REDIS_OK)
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a redis pipeline");
	}
	return PW_OK;
}

/* Reads the replies of cmds[0..ncmds) into w; resend[k] when command k met NOSCRIPT. */
static pw_status read_replies(pw_redis *r, pw_redis_write *w, const wcmd *cmds, size_t ncmds,
                              bool *resend, char *errbuf, size_t errlen)
{
	for (size_t k = 0; k < ncmds; k++) {
		redisReply *rep = NULL;
		if (redisGetReply(r->ctx, (void **)&rep) != REDIS_OK || !rep) {
			char why[160];
			snprintf(why, sizeof why, "%s", r->ctx->err ? r->ctx->errstr : "no reply");
			drop_connection(r, why);
			return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "redis pipeline failed: %s", why);
		}
		resend[k] = book_reply(rep, w, &cmds[k], errbuf, errlen) == PW_ERR_NOT_FOUND;
		freeReplyObject(rep);
	}
	return PW_OK;
}

/* A connection for w[0..n), with the script loaded when any write is a set. */
static pw_status pipeline_ready(pw_redis *r, const pw_redis_write *w, size_t n, char *errbuf,
                                size_t errlen)
{
	bool any_set = false;
	for (size_t i = 0; i < n && !any_set; i++)
		any_set = w[i].val != NULL;
	return any_set ? script_sha(r, errbuf, errlen) : ensure(r, errbuf, errlen);
}

pw_status pw_redis_write_send(pw_redis *r, const pw_redis_write *w, size_t n,
                              pw_redis_pending **pending, char *errbuf, size_t errlen)
{
	*pending = NULL;
	pw_status st = pipeline_ready(r, w, n, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_redis_pending *p = malloc(sizeof *p + (n ? n : 1) * sizeof p->cmds[0]);
	argv_buf a;
	if (!p)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a redis pipeline");
	if ((st = argv_buf_init(&a, errbuf, errlen)) != PW_OK) {
		free(p);
		return st;
	}
	p->n = n;
	p->ncmds = plan(w, n, p->cmds);
	st = append_cmds(r, w, p->cmds, p->ncmds, &a, errbuf, errlen);
	argv_buf_release(&a);
	/* out of the buffer and onto the socket: the server works while the caller goes on */
	for (int done = 0; st == PW_OK && !done;)
		if (redisBufferWrite(r->ctx, &done) != REDIS_OK) {
			char why[160];
			snprintf(why, sizeof why, "%s", r->ctx->err ? r->ctx->errstr : "write failed");
			drop_connection(r, why);
			st = pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "redis pipeline failed: %s", why);
		}
	if (st != PW_OK) {
		if (r->ctx)
			drop_connection(r, "pipeline abandoned"); /* a partial command may be buffered */
		free(p);
		return st;
	}
	*pending = p;
	return PW_OK;
}

pw_status pw_redis_write_collect(pw_redis *r, pw_redis_pending *p, pw_redis_write *w, size_t n,
                                 char *errbuf, size_t errlen)
{
	if (!p)
		return PW_OK;
	pw_status st = PW_OK;
	bool *resend = calloc(p->ncmds ? p->ncmds : 1, sizeof *resend);
	if (n != p->n)
		st = pw_fail(PW_ERR_INVALID, errbuf, errlen, "collecting %zu writes of a send of %zu", n,
		             p->n);
	else if (!resend)
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a redis pipeline");
	else if (!r->ctx)
		st = pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "redis connection lost: %s",
		             r->last_error);
	else
		st = read_replies(r, w, p->cmds, p->ncmds, resend, errbuf, errlen);
	/* the values are the caller's no longer: a set the server refused for want of its
	 * script (SCRIPT FLUSH since the send) fails, and the next send loads it again */
	for (size_t k = 0; st == PW_OK && k < p->ncmds; k++) {
		if (!resend[k])
			continue;
		r->sha_conn = NULL;
		for (size_t i = 0; i < p->cmds[k].n; i++)
			w[p->cmds[k].first + i].st = pw_fail(PW_ERR_REDIS, errbuf, errlen,
			                                     "redis lost its scripts before the write");
	}
	if (st != PW_OK && st != PW_ERR_INVALID && r->ctx)
		drop_connection(r, "pipeline abandoned");
	free(resend);
	free(p);
	return st;
}

void pw_redis_pending_free(pw_redis_pending *p)
{
	free(p);
}

pw_status pw_redis_write_many(pw_redis *r, pw_redis_write *w, size_t n, char *errbuf,
                              size_t errlen)
{
	pw_status st = pipeline_ready(r, w, n, errbuf, errlen);
	if (st != PW_OK)
		return st;
	argv_buf a;
	wcmd *cmds = malloc((n ? n : 1) * sizeof *cmds);
	bool *resend = malloc((n ? n : 1) * sizeof *resend);
	if (!cmds || !resend || (st = argv_buf_init(&a, errbuf, errlen)) != PW_OK) {
		free(cmds);
		free(resend);
		return st != PW_OK ? st : pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	}
	size_t ncmds = plan(w, n, cmds);
	/* PIPELINE_CMDS commands a round trip */
	for (size_t base = 0; base < ncmds && st == PW_OK; base += PIPELINE_CMDS) {
		size_t m = ncmds - base < PIPELINE_CMDS ? ncmds - base : PIPELINE_CMDS;
		if ((st = append_cmds(r, w, cmds + base, m, &a, errbuf, errlen)) != PW_OK ||
		    (st = read_replies(r, w, cmds + base, m, resend + base, errbuf, errlen)) != PW_OK)
			break;
		/* a server that lost its scripts (restart, SCRIPT FLUSH): those calls again as EVAL */
		for (size_t k = base; k < base + m && st == PW_OK; k++) {
			if (!resend[k])
				continue;
			r->sha_conn = NULL;
			redisReply *rep = NULL;
			if (append_sets(r, &w[cmds[k].first], cmds[k].n, true, &a) !=
			        REDIS_OK ||
			    redisGetReply(r->ctx, (void **)&rep) != REDIS_OK || !rep) {
				drop_connection(r, r->ctx->err ? r->ctx->errstr : "no reply");
				st = pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "redis pipeline failed: %s",
				             r->last_error);
				break;
			}
			book_reply(rep, w, &cmds[k], errbuf, errlen);
			freeReplyObject(rep);
		}
	}
	argv_buf_release(&a);
	free(cmds);
	free(resend);
	if (st != PW_OK && r->ctx)
		drop_connection(r, "pipeline abandoned"); /* replies may still be in flight */
	return st;
}

pw_status pw_redis_set_versioned(pw_redis *r, const char *key, uint64_t version,
                                 const void *val, size_t len, int ttl_s, bool *stored,
                                 char *errbuf, size_t errlen)
{
	pw_redis_write w = {.key = key, .val = val ? val : "", .len = len, .version = version,
	                    .ttl_s = ttl_s};
	if (stored)
		*stored = false;
	pw_status st = pw_redis_write_many(r, &w, 1, errbuf, errlen);
	if (st == PW_OK)
		st = w.st;
	if (st == PW_OK && stored)
		*stored = w.stored;
	return st;
}

/*
 * Reads one HMGET key v d reply into x: PW_OK with the version and a copy of
 * the value, PW_ERR_NOT_FOUND when the key (or either field) is absent,
 * PW_ERR_REDIS for an error or unexpected reply.
 */
static pw_status book_versioned(const redisReply *rep, pw_redis_read *x, char *errbuf,
                                size_t errlen)
{
	x->version = 0;
	x->val = NULL;
	x->len = 0;
	if (rep->type == REDIS_REPLY_ERROR)
		return pw_fail(PW_ERR_REDIS, errbuf, errlen, "redis HMGET \"%s\" failed: %s", x->key,
		               rep->str);
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2)
		return pw_fail(PW_ERR_REDIS, errbuf, errlen, "redis HMGET \"%s\": unexpected reply",
		               x->key);
	if (rep->element[0]->type != REDIS_REPLY_STRING ||
	    rep->element[1]->type != REDIS_REPLY_STRING)
		return pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "redis key \"%s\" not found", x->key);
	x->version = strtoull(rep->element[0]->str, NULL, 10);
	return copy_value(rep->element[1]->str, rep->element[1]->len, &x->val, &x->len, errbuf,
	                  errlen);
}

pw_status pw_redis_get_versioned(pw_redis *r, const char *key, uint64_t *version, char **val,
                                 size_t *len, char *errbuf, size_t errlen)
{
	redisReply *rep;
	pw_redis_read x = {.key = key};
	*val = NULL;
	*len = 0;
	*version = 0;
	const char *argv[] = {"HMGET", key, "v", "d"};
	pw_status st = redis_call(r, 4, argv, NULL, &rep, errbuf, errlen);
	if (st != PW_OK)
		return st;
	st = book_versioned(rep, &x, errbuf, errlen);
	freeReplyObject(rep);
	*version = x.version;
	*val = x.val;
	*len = x.len;
	return st;
}

pw_status pw_redis_get_versioned_many(pw_redis *r, pw_redis_read *x, size_t n, char *errbuf,
                                      size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		x[i].st = PW_ERR_UNAVAILABLE;
		x[i].version = 0;
		x[i].val = NULL;
		x[i].len = 0;
	}
	pw_status st = ensure(r, errbuf, errlen);
	/* PIPELINE_CMDS x 4 commands a round trip: a read's reply is small */
	for (size_t base = 0; base < n && st == PW_OK; base += 4 * PIPELINE_CMDS) {
		size_t m = n - base < 4 * PIPELINE_CMDS ? n - base : 4 * PIPELINE_CMDS;
		for (size_t i = base; i < base + m; i++) {
			const char *argv[] = {"HMGET", x[i].key, "v", "d"};
			if (redisAppendCommandArgv(r->ctx, 4, argv, NULL) != REDIS_OK) {
				st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a redis pipeline");
				break;
			}
		}
		for (size_t i = base; i < base + m && st == PW_OK; i++) {
			redisReply *rep = NULL;
			if (redisGetReply(r->ctx, (void **)&rep) != REDIS_OK || !rep) {
				char why[160];
				snprintf(why, sizeof why, "%s", r->ctx->err ? r->ctx->errstr : "no reply");
				drop_connection(r, why);
				st = pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "redis pipeline failed: %s",
				             why);
				break;
			}
			char xerr[256];
			x[i].st = book_versioned(rep, &x[i], xerr, sizeof xerr);
			freeReplyObject(rep);
			if (x[i].st == PW_ERR_NOMEM)
				st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "%s", xerr);
		}
	}
	if (st != PW_OK) {
		if (r->ctx)
			drop_connection(r, "pipeline abandoned"); /* replies may still be in flight */
		pw_redis_reads_release(x, n);
		for (size_t i = 0; i < n; i++)
			x[i].st = st == PW_ERR_NOMEM ? PW_ERR_NOMEM : PW_ERR_UNAVAILABLE;
	}
	return st;
}

void pw_redis_reads_release(pw_redis_read *x, size_t n)
{
	for (size_t i = 0; x && i < n; i++) {
		free(x[i].val);
		x[i].val = NULL;
		x[i].len = 0;
	}
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
