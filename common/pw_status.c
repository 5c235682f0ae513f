/*
 * pw_status.c: names of the status codes and the helper that fills an error
 * buffer. See pw_status.h.
 */
#include "pw_status.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const pw_status_names[PW_STATUS__COUNT] = {
	[PW_OK] = "ok",
	[PW_ERR_INVALID] = "invalid argument or input",
	[PW_ERR_NOMEM] = "out of memory",
	[PW_ERR_IO] = "input/output error",
	[PW_ERR_NOT_FOUND] = "not found",
	[PW_ERR_CONFIG] = "configuration error",
	[PW_ERR_KAFKA] = "kafka error",
	[PW_ERR_PG] = "postgresql error",
	[PW_ERR_REDIS] = "redis error",
	[PW_ERR_TIMEOUT] = "timed out",
	[PW_ERR_UNAVAILABLE] = "server unavailable",
	[PW_ERR_CONFLICT] = "conflicts with stored state",
	[PW_ERR_INSUFFICIENT] = "insufficient data",
	[PW_ERR_SHUTDOWN] = "shutting down",
	[PW_ERR_TOO_LARGE] = "message too large",
};

const char *pw_strerror(pw_status st)
{
	if ((int)st < 0 || st >= PW_STATUS__COUNT || !pw_status_names[st])
		return "unknown status";
	return pw_status_names[st];
}

bool pw_status_retriable(pw_status st)
{
	return st == PW_ERR_TIMEOUT || st == PW_ERR_UNAVAILABLE;
}

pw_status pw_fail(pw_status st, char *errbuf, size_t errlen, const char *fmt, ...)
{
	if (errbuf && errlen > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return st;
}
