/*
 * pw_status.h: the one status code every perfwatch library function returns.
 *
 * PW_OK is 0; codes are only ever appended, never renumbered, so that logs and
 * metrics that recorded a number stay readable. Functions that fail say why
 * in an errbuf the caller passes; the code says what kind of failure it was,
 * and pw_status_retriable() whether trying again can help.
 */
#ifndef PW_STATUS_H
#define PW_STATUS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum pw_status {
	PW_OK = 0,
	PW_ERR_INVALID,     /* bad argument or malformed input: do not retry */
	PW_ERR_NOMEM,       /* allocation failed */
	PW_ERR_IO,          /* file or socket error */
	PW_ERR_NOT_FOUND,   /* the thing asked for does not exist */
	PW_ERR_CONFIG,      /* configuration key unknown or value out of range */
	PW_ERR_KAFKA,       /* Kafka client error */
	PW_ERR_PG,          /* PostgreSQL error */
	PW_ERR_REDIS,       /* Redis error */
	PW_ERR_TIMEOUT,     /* gave up waiting */
	PW_ERR_UNAVAILABLE, /* a server is down or unreachable: retry later */
	PW_ERR_CONFLICT,    /* a stored fact disagrees with the request (e.g. changed migration) */
	PW_ERR_INSUFFICIENT,/* not enough data for the computation asked for */
	PW_ERR_SHUTDOWN,    /* stopped because shutdown was requested */
	PW_ERR_TOO_LARGE,   /* a message over the limit of where it goes (a topic's): set it aside, do not retry */
	PW_STATUS__COUNT
} pw_status;

/* A static, lower-case description of the code; never NULL. */
const char *pw_strerror(pw_status st);

/* True when the same call may succeed later (timeouts, servers down). */
bool pw_status_retriable(pw_status st);

/*
 * Writes a printf-style message into errbuf (if errbuf and errlen > 0) and
 * returns st, so that a failure path reads `return pw_fail(st, e, n, "...")`.
 */
pw_status pw_fail(pw_status st, char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
