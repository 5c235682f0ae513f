/*
 * pw_log.h: JSON-lines logging to stderr, one object per line.
 *
 * Every line carries ts (RFC 3339, UTC, milliseconds), level, service and msg,
 * plus key/value fields the caller adds. A collector (journald, Loki, a file)
 * can parse every line without knowing the service. The logger is a small
 * struct main() owns and passes down; there is no global logger.
 */
#ifndef PW_LOG_H
#define PW_LOG_H

#include <stdio.h>

typedef enum pw_log_level {
	PW_LOG_DEBUG = 0,
	PW_LOG_INFO,
	PW_LOG_WARN,
	PW_LOG_ERROR,
} pw_log_level;

typedef struct pw_log {
	const char *service;  /* borrowed; e.g. "ingester" */
	pw_log_level min_level;
	FILE *out;            /* borrowed; stderr when NULL */
} pw_log;

/* Fills lg; service is borrowed and must outlive it. */
void pw_log_init(pw_log *lg, const char *service, pw_log_level min_level);

/* Parses "debug", "info", "warn" or "error"; returns -1 for anything else. */
int pw_log_level_parse(const char *s);

/*
 * Writes one line. fields is NULL or a NULL-terminated list of key, value
 * string pairs, e.g. (const char *[]){"topic", t, "offset", o, NULL}. Values
 * are JSON-escaped; msg is a printf format.
 */
void pw_log_write(const pw_log *lg, pw_log_level level, const char *const *fields,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define pw_log_info(lg, ...)  pw_log_write((lg), PW_LOG_INFO, NULL, __VA_ARGS__)
#define pw_log_warn(lg, ...)  pw_log_write((lg), PW_LOG_WARN, NULL, __VA_ARGS__)
#define pw_log_error(lg, ...) pw_log_write((lg), PW_LOG_ERROR, NULL, __VA_ARGS__)
#define pw_log_debug(lg, ...) pw_log_write((lg), PW_LOG_DEBUG, NULL, __VA_ARGS__)

/*
 * Appends s to out as a JSON string body (no surrounding quotes), escaping
 * quotes, backslashes and control characters. Shared by every JSON writer.
 */
void pw_json_escape(FILE *out, const char *s);

#endif
