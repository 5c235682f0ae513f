/*
 * pw_log.c: the JSON-lines logger. See pw_log.h.
 */
#include "pw_log.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void pw_log_init(pw_log *lg, const char *service, pw_log_level min_level)
{
	lg->service = service;
	lg->min_level = min_level;
	lg->out = NULL;
}

int pw_log_level_parse(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (s && strcmp(s, level_names[i]) == 0)
			return i;
	return -1;
}

void pw_json_escape(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
}

void pw_log_write(const pw_log *lg, pw_log_level level, const char *const *fields,
                  const char *fmt, ...)
{
	if (level < lg->min_level)
		return;
	FILE *out = lg->out ? lg->out : stderr;
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);

	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char when[32];
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);

	/* One fprintf-series under one lock so that threads never interleave lines. */
	flockfile(out);
	fprintf(out, "{\"ts\":\"%s.%03ldZ\",\"level\":\"%s\",\"service\":\"", when,
	        ts.tv_nsec / 1000000, level_names[level]);
	pw_json_escape(out, lg->service);
	fputs("\",\"msg\":\"", out);
	pw_json_escape(out, msg);
	fputc('"', out);
	for (const char *const *f = fields; f && f[0] && f[1]; f += 2) {
		fputs(",\"", out);
		pw_json_escape(out, f[0]);
		fputs("\":\"", out);
		pw_json_escape(out, f[1]);
		fputc('"', out);
	}
	fputs("}\n", out);
	fflush(out);
	funlockfile(out);
}
