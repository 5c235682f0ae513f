/*
 * pw_redis.h: one Redis connection (hiredis, synchronous) for the hot-baseline
 * cache.
 *
 * Redis only caches (docs/architecture.md): losing it loses nothing, and every
 * reader falls back to PostgreSQL (pw_pg.h). So this module never makes a
 * caller wait for a server that is gone: connects and commands have short
 * timeouts, a lost connection is retried with capped, jittered exponential
 * backoff (pw_backoff.h), and between attempts every call returns
 * PW_ERR_UNAVAILABLE at once. Values are binary-safe. A versioned value
 * (pw_redis_set_versioned) is only replaced by a higher version, so that a
 * slow writer cannot put an older baseline back over a newer one. One
 * pw_redis is used by one thread at a time.
 */
#ifndef PW_REDIS_H
#define PW_REDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_log.h"
#include "pw_status.h"

typedef struct pw_redis pw_redis;

typedef struct pw_redis_opts {
	int connect_timeout_ms;  /* 0 = 500 */
	int command_timeout_ms;  /* 0 = 500 */
	uint32_t backoff_ms;     /* 0 = 100: first wait after a failed connect */
	uint32_t backoff_max_ms; /* 0 = 5000: cap of the wait */
} pw_redis_opts;

/*
 * Creates the handle for addr "host:port" (copied) and makes a first
 * connection attempt. o may be NULL for the defaults; lg is borrowed and must
 * outlive the handle. A server that is down is not an error here (the first
 * call returns PW_ERR_UNAVAILABLE). Returns PW_OK and *out, PW_ERR_CONFIG for
 * a malformed address, PW_ERR_NOMEM; *out is NULL on failure.
 */
pw_status pw_redis_new(pw_redis **out, const char *addr, const pw_redis_opts *o,
                       const pw_log *lg, char *errbuf, size_t errlen);

/*
 * Every command below first (re)connects when needed. Common failures:
 * PW_ERR_UNAVAILABLE when the server is down, timed out or the connection
 * broke (the connection is dropped and retried later with backoff), and
 * PW_ERR_REDIS when the server answered with an error.
 */

/* PING; PW_OK on PONG. */
pw_status pw_redis_ping(pw_redis *r, char *errbuf, size_t errlen);

/*
 * GET key. On PW_OK *val is a malloc'd copy of the value with a terminating
 * NUL added (not counted in *len), which the caller frees. PW_ERR_NOT_FOUND
 * when the key does not exist (*val NULL).
 */
pw_status pw_redis_get(pw_redis *r, const char *key, char **val, size_t *len, char *errbuf,
                       size_t errlen);

/* SET key to len bytes of val (copied); ttl_s > 0 sets an expiry. */
pw_status pw_redis_set(pw_redis *r, const char *key, const void *val, size_t len, int ttl_s,
                       char *errbuf, size_t errlen);

/* DEL key; PW_OK whether or not it existed. */
pw_status pw_redis_del(pw_redis *r, const char *key, char *errbuf, size_t errlen);

/*
 * Stores val (len bytes) under key with version, atomically (one Lua script),
 * only when the stored version is lower or the key is absent; ttl_s > 0 sets
 * an expiry, 0 clears one. *stored (may be NULL) tells whether it was
 * written. Versions are compared as Lua numbers: exact up to 2^53. The key
 * holds a hash (fields v, d); read it with pw_redis_get_versioned only. The
 * one-write case of pw_redis_write_many.
 */
pw_status pw_redis_set_versioned(pw_redis *r, const char *key, uint64_t version,
                                 const void *val, size_t len, int ttl_s, bool *stored,
                                 char *errbuf, size_t errlen);

/*
 * Reads a versioned value: *version and a malloc'd, NUL-terminated copy in
 * *val / *len, which the caller frees. PW_ERR_NOT_FOUND when absent.
 */
pw_status pw_redis_get_versioned(pw_redis *r, const char *key, uint64_t *version, char **val,
                                 size_t *len, char *errbuf, size_t errlen);

/* One read of a pipelined batch (pw_redis_get_versioned_many). */
typedef struct pw_redis_read {
	const char *key;    /* borrowed for the call */
	pw_status st;       /* out: PW_OK, PW_ERR_NOT_FOUND (absent), PW_ERR_REDIS (refused or not a
	                     * versioned value), PW_ERR_UNAVAILABLE (the pipeline failed) */
	uint64_t version;   /* out, when PW_OK */
	char *val;          /* out, when PW_OK: malloc'd, NUL-terminated (pw_redis_reads_release) */
	size_t len;
} pw_redis_read;

/*
 * pw_redis_get_versioned for x[0..n) in pipelines of up to 256 reads, one
 * round trip each. Every x[i] gets its own status. Returns PW_OK when every
 * read has its answer; PW_ERR_UNAVAILABLE when the server is down or the
 * connection failed on the way (every x[i].st is then PW_ERR_UNAVAILABLE and
 * no value is held); PW_ERR_NOMEM. The caller frees the values with
 * pw_redis_reads_release.
 */
pw_status pw_redis_get_versioned_many(pw_redis *r, pw_redis_read *x, size_t n, char *errbuf,
                                      size_t errlen);

/* Frees the values of x[0..n) and clears them. Accepts NULL. */
void pw_redis_reads_release(pw_redis_read *x, size_t n);

/* One write of a pipelined batch (pw_redis_write_many). */
typedef struct pw_redis_write {
	const char *key;    /* borrowed for the call */
	const void *val;    /* NULL: DEL key; else a versioned set of len bytes, as pw_redis_set_versioned */
	size_t len;
	uint64_t version;
	int ttl_s;
	pw_status st;       /* out: PW_OK, or PW_ERR_REDIS when the server refused this write */
	bool stored;        /* out: a versioned set was written (false when the stored version was newer) */
} pw_redis_write;

/*
 * Sends w[0..n) as pipelines of up to 64 commands, one round trip each, and
 * reads every reply into w[i].st / w[i].stored. A run of versioned sets is
 * one call of the versioned-set script for up to 256 keys (EVALSHA, the
 * script loaded once per connection; a server that lost its scripts gets the
 * call again as EVAL); a delete is a DEL. Returns PW_OK when every write has its answer;
 * PW_ERR_UNAVAILABLE when the connection failed on the way (it is dropped
 * and retried as for any call, and which writes landed is unknown: treat all
 * of them as not written); PW_ERR_NOMEM.
 */
pw_status pw_redis_write_many(pw_redis *r, pw_redis_write *w, size_t n, char *errbuf,
                              size_t errlen);

/*
 * pw_redis_write_many in two halves, so that the server works while the
 * caller goes on: pw_redis_write_send writes every command of w[0..n) to the
 * socket and returns *pending (owned by the caller); pw_redis_write_collect
 * later reads their replies into the same w[0..n) (st, stored; the keys are
 * read for messages, the values no longer) and frees pending. Between the
 * two, nothing else may be sent on this connection. A set the server
 * refuses because it lost its scripts after the send is PW_ERR_REDIS (the
 * next send loads the script again). Errors as pw_redis_write_many;
 * collecting a NULL pending is PW_OK; pw_redis_pending_free drops one
 * without reading it (only before the handle itself is freed).
 */
typedef struct pw_redis_pending pw_redis_pending;
pw_status pw_redis_write_send(pw_redis *r, const pw_redis_write *w, size_t n,
                              pw_redis_pending **pending, char *errbuf, size_t errlen);
pw_status pw_redis_write_collect(pw_redis *r, pw_redis_pending *pending, pw_redis_write *w,
                                 size_t n, char *errbuf, size_t errlen);
void pw_redis_pending_free(pw_redis_pending *p);

/* True while a connection is established (no I/O). */
bool pw_redis_connected(const pw_redis *r);

/* Closes the connection and frees r. Accepts NULL. */
void pw_redis_free(pw_redis *r);

#endif
