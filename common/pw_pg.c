/*
 * pw_pg.c: the reconnecting PostgreSQL connection. See pw_pg.h.
 *
 * State is small: the PGconn (NULL before the first successful connect), a
 * transaction flag and a COPY flag (so that a connection lost mid-transaction
 * is reported instead of silently replaced), and the backoff schedule for the
 * next reconnect attempt.
 */
#include "pw_pg.h"

#include "pw_backoff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct pw_pg {
	const pw_log *lg;
	char *dsn;
	char connect_timeout[16];
	PGconn *conn;
	bool in_tx;
	bool in_copy;
	bool was_up;          /* connected at the last look: for the "lost" log line */
	bool ever_up;         /* for the "re-established" log line */
	pw_backoff backoff;
	int64_t next_attempt; /* monotonic ms; 0 = now */
	char last_error[512];
	char last_sqlstate[8];  /* of the last failed statement, "" after a success */
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Copies a libpq message without its trailing newline. */
static void copy_msg(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
	size_t l = strlen(dst);
	while (l > 0 && (dst[l - 1] == '\n' || dst[l - 1] == '\r'))
		dst[--l] = '\0';
}

pw_status pw_pg_classify(const char *sqlstate, bool connection_bad)
{
	if (connection_bad)
		return PW_ERR_UNAVAILABLE;
	if (!sqlstate || strlen(sqlstate) != 5)
		return PW_ERR_PG;
	if (strncmp(sqlstate, "08", 2) == 0 || strncmp(sqlstate, "53", 2) == 0 ||
	    strcmp(sqlstate, "57P01") == 0 || strcmp(sqlstate, "57P02") == 0 ||
	    strcmp(sqlstate, "57P03") == 0 || strcmp(sqlstate, "40001") == 0 ||
	    strcmp(sqlstate, "40P01") == 0)
		return PW_ERR_UNAVAILABLE;
	if (strcmp(sqlstate, "57014") == 0 || strcmp(sqlstate, "55P03") == 0)
		return PW_ERR_TIMEOUT;
	return PW_ERR_PG;
}

static bool conn_ok(const pw_pg *pg)
{
	return pg->conn && PQstatus(pg->conn) == CONNECTION_OK;
}

/* Server notices (e.g. "table does not exist, skipping") go to the log, not
 * to libpq's default of raw stderr. */
static void forward_notice(void *arg, const char *message)
{
	const pw_pg *pg = arg;
	char msg[512];
	copy_msg(msg, sizeof msg, message);
	pw_log_debug(pg->lg, "postgresql: %s", msg);
}

/* One connection attempt; on failure schedules the next one. */
static bool try_connect(pw_pg *pg)
{
	if (pg->conn) {
		PQreset(pg->conn);
	} else {
		const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname",
		                            NULL};
		const char *const vals[] = {pg->connect_timeout,
		                            pg->lg && pg->lg->service ? pg->lg->service : "perfwatch",
		                            pg->dsn, NULL};
		pg->conn = PQconnectdbParams(keys, vals, 1);
		if (pg->conn) /* kept across PQreset */
			PQsetNoticeProcessor(pg->conn, forward_notice, pg);
	}
	if (conn_ok(pg)) {
		pw_backoff_reset(&pg->backoff);
		pg->next_attempt = 0;
		pg->in_tx = pg->in_copy = false;
		if (pg->ever_up)
			pw_log_info(pg->lg, "postgresql connection re-established");
		pg->last_error[0] = '\0';
		pg->was_up = pg->ever_up = true;
		return true;
	}
	bool first = pg->last_error[0] == '\0';
	copy_msg(pg->last_error, sizeof pg->last_error,
	         pg->conn ? PQerrorMessage(pg->conn) : "out of memory");
	uint32_t wait = pw_backoff_next(&pg->backoff);
	pg->next_attempt = now_ms() + wait;
	if (first)
		pw_log_warn(pg->lg, "cannot connect to postgresql (retrying with backoff): %s",
		            pg->last_error);
	else
		pw_log_debug(pg->lg, "postgresql still unavailable, next attempt in %u ms: %s", wait,
		             pg->last_error);
	return false;
}

pw_status pw_pg_new(pw_pg **out, const char *dsn, const pw_pg_opts *o, const pw_log *lg,
                    char *errbuf, size_t errlen)
{
	char *why = NULL;
	*out = NULL;
	if (!dsn)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen, "no postgresql connection string");
	PQconninfoOption *opts = PQconninfoParse(dsn, &why);
	if (!opts) {
		char msg[256];
		copy_msg(msg, sizeof msg, why ? why : "out of memory");
		PQfreemem(why);
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen, "invalid postgresql connection string: %s",
		               msg);
	}
	PQconninfoFree(opts);

	pw_pg *pg = calloc(1, sizeof *pg);
	if (!pg)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for postgresql handle");
	pg->dsn = strdup(dsn);
	if (!pg->dsn) {
		free(pg);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for postgresql handle");
	}
	pg->lg = lg;
	snprintf(pg->connect_timeout, sizeof pg->connect_timeout, "%d",
	         o && o->connect_timeout_s > 0 ? o->connect_timeout_s : 5);
	pw_backoff_init(&pg->backoff, o && o->backoff_ms ? o->backoff_ms : 100,
	                o && o->backoff_max_ms ? o->backoff_max_ms : 10000,
	                (uint64_t)now_ms() ^ (uint64_t)(uintptr_t)pg);
	try_connect(pg);
	*out = pg;
	return PW_OK;
}

pw_status pw_pg_ensure(pw_pg *pg, char *errbuf, size_t errlen)
{
	if (conn_ok(pg))
		return PW_OK;
	if (pg->was_up) {
		pg->was_up = false;
		pw_log_warn(pg->lg, "postgresql connection lost%s",
		            pg->in_tx ? " inside a transaction" : "");
	}
	if (pg->in_tx || pg->in_copy) {
		/* the server has dropped the transaction; the caller must redo it */
		pg->in_tx = pg->in_copy = false;
		return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen,
		               "postgresql connection lost inside a transaction");
	}
	int64_t now = now_ms();
	if (now < pg->next_attempt)
		return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen,
		               "postgresql unavailable (next attempt in %lld ms): %s",
		               (long long)(pg->next_attempt - now), pg->last_error);
	if (try_connect(pg))
		return PW_OK;
	return pw_fail(PW_ERR_UNAVAILABLE, errbuf, errlen, "postgresql unavailable: %s",
	               pg->last_error);
}

pw_status pw_pg_wait_connected(pw_pg *pg, int timeout_ms, volatile sig_atomic_t *stop,
                               char *errbuf, size_t errlen)
{
	int64_t end = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		pw_status st = pw_pg_ensure(pg, errbuf, errlen);
		if (st != PW_ERR_UNAVAILABLE)
			return st;
		if (stop && *stop)
			return pw_fail(PW_ERR_SHUTDOWN, errbuf, errlen,
			               "stopped while waiting for postgresql");
		int64_t now = now_ms();
		if (now >= end)
			return st;
		int64_t wait = pg->next_attempt - now;
		if (wait > end - now)
			wait = end - now;
		if (wait > 100)
			wait = 100;
		sleep_ms(wait > 0 ? wait : 1);
	}
}

/* Turns a failed result (or none) into a status and message; clears res. */
static pw_status fail_result(pw_pg *pg, PGresult *res, const char *what, char *errbuf,
                             size_t errlen)
{
	char msg[512], detail[512];
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	copy_msg(msg, sizeof msg,
	         res && PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)
	                 ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)
	                 : PQerrorMessage(pg->conn));
	copy_msg(detail, sizeof detail, res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL);
	bool bad = PQstatus(pg->conn) != CONNECTION_OK;
	pw_status st = pw_pg_classify(state, bad);
	char sqlstate[8];
	snprintf(sqlstate, sizeof sqlstate, "%s", state ? state : "");
	memcpy(pg->last_sqlstate, sqlstate, sizeof pg->last_sqlstate);
	PQclear(res);
	if (bad) {
		pg->in_tx = pg->in_copy = false;
		if (pg->was_up) {
			pg->was_up = false;
			pw_log_warn(pg->lg, "postgresql connection lost: %s", msg);
		}
	}
	return pw_fail(st, errbuf, errlen, "%s failed: %s%s%s%s%s%s", what, msg,
	               detail[0] ? "\ndetail: " : "", detail, sqlstate[0] ? " (sqlstate " : "",
	               sqlstate, sqlstate[0] ? ")" : "");
}

bool pw_pg_sqlstate_is_data(const char *sqlstate)
{
	return sqlstate && strlen(sqlstate) == 5 &&
	       (strncmp(sqlstate, "22", 2) == 0 || strncmp(sqlstate, "23", 2) == 0);
}

const char *pw_pg_last_sqlstate(const pw_pg *pg)
{
	return pg ? pg->last_sqlstate : "";
}

pw_status pw_pg_execv(pw_pg *pg, const char *sql, int nparams, const char *const *values,
                      const int *lengths, const int *formats, int result_format,
                      PGresult **res, char *errbuf, size_t errlen)
{
	if (res)
		*res = NULL;
	if (!sql)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "no statement");
	if (pg->in_copy)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "statement during COPY");
	pw_status st = pw_pg_ensure(pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pg->last_sqlstate[0] = '\0';
	PGresult *r = PQexecParams(pg->conn, sql, nparams, NULL, values, lengths, formats,
	                           result_format);
	ExecStatusType es = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	if (es != PGRES_COMMAND_OK && es != PGRES_TUPLES_OK)
		return fail_result(pg, r, "statement", errbuf, errlen);
	if (res)
		*res = r;
	else
		PQclear(r);
	return PW_OK;
}

pw_status pw_pg_exec(pw_pg *pg, const char *sql, int nparams, const char *const *params,
                     PGresult **res, char *errbuf, size_t errlen)
{
	return pw_pg_execv(pg, sql, nparams, params, NULL, NULL, 0, res, errbuf, errlen);
}

pw_status pw_pg_begin(pw_pg *pg, char *errbuf, size_t errlen)
{
	if (pg->in_tx)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "transaction already open");
	pw_status st = pw_pg_exec(pg, "BEGIN", 0, NULL, NULL, errbuf, errlen);
	if (st == PW_OK)
		pg->in_tx = true;
	return st;
}

pw_status pw_pg_commit(pw_pg *pg, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	if (!pg->in_tx)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "commit without a transaction");
	pw_status st = pw_pg_exec(pg, "COMMIT", 0, NULL, &r, errbuf, errlen);
	pg->in_tx = false;
	if (st != PW_OK)
		return st;
	/* COMMIT of an aborted transaction "succeeds" with the tag ROLLBACK */
	bool rolled_back = strcmp(PQcmdStatus(r), "COMMIT") != 0;
	PQclear(r);
	if (rolled_back)
		return pw_fail(PW_ERR_PG, errbuf, errlen,
		               "transaction was rolled back by the server (an earlier statement failed)");
	return PW_OK;
}

pw_status pw_pg_rollback(pw_pg *pg, char *errbuf, size_t errlen)
{
	if (pg->in_copy)
		pw_pg_copy_abort(pg, "rollback");
	if (!conn_ok(pg)) {
		pg->in_tx = false;
		return PW_OK;
	}
	pg->in_tx = false; /* so that pw_pg_exec does not treat this as inside */
	pw_status st = pw_pg_exec(pg, "ROLLBACK", 0, NULL, NULL, errbuf, errlen);
	return st == PW_ERR_UNAVAILABLE ? PW_OK : st;
}

bool pw_pg_in_transaction(const pw_pg *pg)
{
	return pg->in_tx;
}

pw_status pw_pg_copy_begin(pw_pg *pg, const char *copy_sql, char *errbuf, size_t errlen)
{
	if (pg->in_copy)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "COPY already in progress");
	pw_status st = pw_pg_ensure(pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	PGresult *r = PQexec(pg->conn, copy_sql);
	if (!r || PQresultStatus(r) != PGRES_COPY_IN) {
		if (r && PQresultStatus(r) != PGRES_FATAL_ERROR) {
			PQclear(r);
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "not a COPY FROM STDIN: %s",
			               copy_sql);
		}
		return fail_result(pg, r, "COPY", errbuf, errlen);
	}
	PQclear(r);
	pg->in_copy = true;
	return PW_OK;
}

pw_status pw_pg_copy_put(pw_pg *pg, const void *buf, size_t len, char *errbuf, size_t errlen)
{
	if (!pg->in_copy)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "no COPY in progress");
	const char *p = buf;
	while (len > 0) {
		int chunk = len > (1u << 30) ? (1 << 30) : (int)len;
		if (PQputCopyData(pg->conn, p, chunk) != 1)
			return fail_result(pg, NULL, "COPY data", errbuf, errlen);
		p += chunk;
		len -= (size_t)chunk;
	}
	return PW_OK;
}

pw_status pw_pg_copy_end(pw_pg *pg, uint64_t *rows, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	if (rows)
		*rows = 0;
	if (!pg->in_copy)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "no COPY in progress");
	pg->in_copy = false;
	if (PQputCopyEnd(pg->conn, NULL) != 1)
		return fail_result(pg, NULL, "COPY end", errbuf, errlen);
	PGresult *r;
	bool failed = false;
	while ((r = PQgetResult(pg->conn)) != NULL) {
		if (!failed && PQresultStatus(r) != PGRES_COMMAND_OK) {
			failed = true;
			st = fail_result(pg, r, "COPY", errbuf, errlen);
			continue; /* fail_result cleared r */
		}
		if (!failed && rows)
			*rows = strtoull(PQcmdTuples(r), NULL, 10);
		PQclear(r);
	}
	if (!failed && PQstatus(pg->conn) != CONNECTION_OK)
		st = fail_result(pg, NULL, "COPY", errbuf, errlen);
	return st;
}

void pw_pg_copy_abort(pw_pg *pg, const char *reason)
{
	if (!pg->in_copy)
		return;
	pg->in_copy = false;
	if (PQputCopyEnd(pg->conn, reason ? reason : "aborted by client") == 1) {
		PGresult *r;
		while ((r = PQgetResult(pg->conn)) != NULL)
			PQclear(r);
	}
}

/* ------------------------------------------------------------ parameters */

void pw_pg_params_init(pw_pg_params *p)
{
	p->n = 0;
	p->overflow = false;
}

/* The next slot, or -1 (and the list is marked overflowed). */
static int params_slot(pw_pg_params *p)
{
	if (p->n >= PW_PG_PARAMS_MAX) {
		p->overflow = true;
		return -1;
	}
	return p->n++;
}

void pw_pg_params_text(pw_pg_params *p, const char *s)
{
	int i = params_slot(p);
	if (i < 0)
		return;
	p->values[i] = s;
	p->lengths[i] = 0;
	p->formats[i] = 0;
}

void pw_pg_params_bin(pw_pg_params *p, const void *b, size_t len)
{
	int i = params_slot(p);
	if (i < 0)
		return;
	p->values[i] = b;
	p->lengths[i] = b ? (int)len : 0;
	p->formats[i] = b ? 1 : 0;
}

void pw_pg_params_int(pw_pg_params *p, int64_t v)
{
	int i = params_slot(p);
	if (i < 0)
		return;
	snprintf(p->num[i], sizeof p->num[i], "%lld", (long long)v);
	p->values[i] = p->num[i];
	p->lengths[i] = 0;
	p->formats[i] = 0;
}

void pw_pg_params_double(pw_pg_params *p, double v)
{
	int i = params_slot(p);
	if (i < 0)
		return;
	if (isnan(v))
		snprintf(p->num[i], sizeof p->num[i], "NaN");
	else if (isinf(v))
		snprintf(p->num[i], sizeof p->num[i], v > 0 ? "Infinity" : "-Infinity");
	else
		snprintf(p->num[i], sizeof p->num[i], "%.17g", v);
	p->values[i] = p->num[i];
	p->lengths[i] = 0;
	p->formats[i] = 0;
}

void pw_pg_params_bool(pw_pg_params *p, bool v)
{
	pw_pg_params_text(p, v ? "true" : "false");
}

void pw_pg_params_null(pw_pg_params *p)
{
	pw_pg_params_text(p, NULL);
}

void pw_pg_params_opt_int(pw_pg_params *p, bool has, int64_t v)
{
	if (has)
		pw_pg_params_int(p, v);
	else
		pw_pg_params_null(p);
}

void pw_pg_params_opt_double(pw_pg_params *p, bool has, double v)
{
	if (has)
		pw_pg_params_double(p, v);
	else
		pw_pg_params_null(p);
}

pw_status pw_pg_exec_params(pw_pg *pg, const char *sql, const pw_pg_params *p, int result_format,
                            PGresult **res, char *errbuf, size_t errlen)
{
	if (res)
		*res = NULL;
	if (p->overflow)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "more than %d statement parameters", PW_PG_PARAMS_MAX);
	return pw_pg_execv(pg, sql, p->n, p->values, p->lengths, p->formats, result_format, res,
	                   errbuf, errlen);
}

PGconn *pw_pg_conn(pw_pg *pg)
{
	return conn_ok(pg) ? pg->conn : NULL;
}

void pw_pg_free(pw_pg *pg)
{
	if (!pg)
		return;
	PQfinish(pg->conn);
	free(pg->dsn);
	free(pg);
}

char *pw_pg_text_array(const char *const *list, size_t n)
{
	size_t len = 3;
	for (size_t i = 0; i < n; i++)
		len += 2 * strlen(list[i] ? list[i] : "") + 3;
	char *s = malloc(len), *w = s;
	if (!s)
		return NULL;
	*w++ = '{';
	for (size_t i = 0; i < n; i++) {
		if (i)
			*w++ = ',';
		*w++ = '"';
		for (const char *c = list[i] ? list[i] : ""; *c; c++) {
			if (*c == '"' || *c == '\\')
				*w++ = '\\';
			*w++ = *c;
		}
		*w++ = '"';
	}
	*w++ = '}';
	*w = '\0';
	return s;
}
