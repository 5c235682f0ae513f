/*
 * pw_pg.h: one PostgreSQL connection (libpq) that survives server restarts.
 *
 * PostgreSQL is the source of truth (docs/architecture.md): a consumer's
 * batch callback (pw_kafka.h) opens a transaction here, writes idempotently,
 * commits, and only then lets the loop commit the Kafka offsets. This module
 * therefore separates the two ways a statement can fail: the server went
 * away or asked to be retried (PW_ERR_UNAVAILABLE / PW_ERR_TIMEOUT, both
 * pw_status_retriable: do the whole transaction again later) and the
 * statement itself is wrong for the data (PW_ERR_PG: retrying the same input
 * fails the same way). A lost connection is re-established on the next call,
 * with capped, jittered exponential backoff (pw_backoff.h) between attempts;
 * while the server is down each call returns PW_ERR_UNAVAILABLE at once.
 * One pw_pg is used by one thread at a time.
 */
#ifndef PW_PG_H
#define PW_PG_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "pw_log.h"
#include "pw_status.h"

typedef struct pw_pg pw_pg;

typedef struct pw_pg_opts {
	int connect_timeout_s;   /* 0 = 5; libpq connect_timeout unless the DSN sets one */
	uint32_t backoff_ms;     /* 0 = 100: first wait after a failed connect */
	uint32_t backoff_max_ms; /* 0 = 10000: cap of the wait */
} pw_pg_opts;

/*
 * Creates the handle and makes a first connection attempt. dsn is a libpq
 * connection string or URI, copied. o may be NULL for the defaults. lg is
 * borrowed and must outlive the handle. A server that is down is not an
 * error here (it is logged; the first call returns PW_ERR_UNAVAILABLE and
 * reconnects later, see pw_pg_wait_connected). Returns PW_OK and *out,
 * PW_ERR_CONFIG for a DSN libpq cannot parse, PW_ERR_NOMEM; *out is NULL on
 * failure.
 */
pw_status pw_pg_new(pw_pg **out, const char *dsn, const pw_pg_opts *o, const pw_log *lg,
                    char *errbuf, size_t errlen);

/*
 * Makes sure the connection is up, reconnecting when it is down and the
 * backoff allows. Returns PW_OK, or PW_ERR_UNAVAILABLE immediately while the
 * server is unreachable (with the last connection error).
 */
pw_status pw_pg_ensure(pw_pg *pg, char *errbuf, size_t errlen);

/*
 * Retries pw_pg_ensure, sleeping out the backoff, until connected, timeout_ms
 * passed (PW_ERR_UNAVAILABLE) or *stop is set (PW_ERR_SHUTDOWN; stop may be
 * NULL). For start-up.
 */
pw_status pw_pg_wait_connected(pw_pg *pg, int timeout_ms, volatile sig_atomic_t *stop,
                               char *errbuf, size_t errlen);

/*
 * Runs one statement with nparams text parameters (params[i] NULL is SQL
 * NULL), see pw_pg_execv. res may be NULL when the result is not needed.
 */
pw_status pw_pg_exec(pw_pg *pg, const char *sql, int nparams, const char *const *params,
                     PGresult **res, char *errbuf, size_t errlen);

/*
 * Runs one statement through PQexecParams: values/lengths/formats as libpq
 * takes them (lengths and formats may be NULL for all-text), result_format 0
 * text, 1 binary. On PW_OK *res (when res is not NULL) is the result,
 * PGRES_COMMAND_OK or PGRES_TUPLES_OK, which the caller must PQclear. On
 * failure *res is NULL and errbuf holds the server's message, its detail and
 * the SQLSTATE; the code is pw_pg_classify's. Outside a transaction the
 * connection is (re)established first; inside one a lost connection returns
 * PW_ERR_UNAVAILABLE and ends the transaction (its effects are gone).
 */
pw_status pw_pg_execv(pw_pg *pg, const char *sql, int nparams, const char *const *values,
                      const int *lengths, const int *formats, int result_format,
                      PGresult **res, char *errbuf, size_t errlen);

/*
 * BEGIN / COMMIT / ROLLBACK. After any failure inside a transaction the
 * caller calls pw_pg_rollback (which returns PW_OK when the connection is
 * already gone: the server dropped the transaction). pw_pg_commit returns
 * PW_ERR_PG when the server rolled the transaction back instead (an earlier
 * statement failed), and PW_ERR_UNAVAILABLE when the connection broke during
 * COMMIT: the outcome is then unknown, which is why every write is
 * idempotent and redoing the transaction is safe.
 */
pw_status pw_pg_begin(pw_pg *pg, char *errbuf, size_t errlen);
pw_status pw_pg_commit(pw_pg *pg, char *errbuf, size_t errlen);
pw_status pw_pg_rollback(pw_pg *pg, char *errbuf, size_t errlen);

/*
 * Parameter lists: a statement reads as its SQL plus the values in order.
 *
 *   pw_pg_params p;
 *   pw_pg_params_init(&p);
 *   pw_pg_params_text(&p, release_id);
 *   pw_pg_params_int(&p, evaluation);
 *   pw_pg_params_bin(&p, payload, len);
 *   st = pw_pg_exec_params(pg, "INSERT ... VALUES ($1, $2, $3)", &p, 0, NULL, err, errlen);
 *
 * Text values and binary values (bytea: format 1) are borrowed and must stay
 * valid until the statement ran; numbers are formatted into the list itself.
 * A NULL text value is SQL NULL. More than PW_PG_PARAMS_MAX values marks the
 * list overflowed and pw_pg_exec_params fails with PW_ERR_INVALID. The list
 * lives on the caller's stack; nothing to free.
 */
#define PW_PG_PARAMS_MAX 32

typedef struct pw_pg_params {
	int n;
	bool overflow;
	const char *values[PW_PG_PARAMS_MAX];
	int lengths[PW_PG_PARAMS_MAX];
	int formats[PW_PG_PARAMS_MAX];
	char num[PW_PG_PARAMS_MAX][32]; /* formatted numbers */
} pw_pg_params;

void pw_pg_params_init(pw_pg_params *p);
void pw_pg_params_text(pw_pg_params *p, const char *s);
/* len bytes; a NULL b is SQL NULL. */
void pw_pg_params_bin(pw_pg_params *p, const void *b, size_t len);
void pw_pg_params_int(pw_pg_params *p, int64_t v);
/* Shortest text that reads back to the same double (%.17g); NaN and infinities as PostgreSQL spells them. */
void pw_pg_params_double(pw_pg_params *p, double v);
void pw_pg_params_bool(pw_pg_params *p, bool v);
/* SQL NULL. */
void pw_pg_params_null(pw_pg_params *p);
/* v when has, else SQL NULL: for columns that are NULL when a value is absent. */
void pw_pg_params_opt_int(pw_pg_params *p, bool has, int64_t v);
void pw_pg_params_opt_double(pw_pg_params *p, bool has, double v);

/* pw_pg_execv with the list's values (result_format 0 text, 1 binary). */
pw_status pw_pg_exec_params(pw_pg *pg, const char *sql, const pw_pg_params *p, int result_format,
                            PGresult **res, char *errbuf, size_t errlen);

/*
 * A PostgreSQL text[] literal of list[0..n) (a NULL element is the empty
 * string), for a statement parameter such as $1::text[]: {"a","b"} with '"'
 * and '\' escaped, so that an element is always one element; at most
 * 2 + Σ (2·strlen + 3) bytes with its NUL. malloc'd, the caller frees it.
 * NULL when out of memory.
 */
char *pw_pg_text_array(const char *const *list, size_t n);

/* True between a successful pw_pg_begin and its commit or rollback. */
bool pw_pg_in_transaction(const pw_pg *pg);

/*
 * COPY ... FROM STDIN: pw_pg_copy_begin runs the COPY statement; then
 * pw_pg_copy_put sends buffers (len bytes each, copied by libpq; rows in the
 * COPY's format); pw_pg_copy_end finishes and reports the server's verdict,
 * with the row count in *rows (may be NULL); pw_pg_copy_abort makes the server
 * fail the COPY (reason is logged server-side). After copy_begin succeeded,
 * exactly one of copy_end or copy_abort must follow.
 */
pw_status pw_pg_copy_begin(pw_pg *pg, const char *copy_sql, char *errbuf, size_t errlen);
pw_status pw_pg_copy_put(pw_pg *pg, const void *buf, size_t len, char *errbuf, size_t errlen);
pw_status pw_pg_copy_end(pw_pg *pg, uint64_t *rows, char *errbuf, size_t errlen);
void pw_pg_copy_abort(pw_pg *pg, const char *reason);

/*
 * The libpq connection, borrowed (e.g. for PQescapeLiteral), or NULL while
 * disconnected. Do not close it or run statements on it behind pw_pg's back.
 */
PGconn *pw_pg_conn(pw_pg *pg);

/*
 * A text-format result's cell: pw_pg_value is NULL for SQL NULL;
 * pw_pg_int and pw_pg_double read it as a number, 0 for SQL NULL.
 */
const char *pw_pg_value(const PGresult *res, int row, int col);
int64_t pw_pg_int(const PGresult *res, int row, int col);
double pw_pg_double(const PGresult *res, int row, int col);

/*
 * How a failure should be treated, from the SQLSTATE (may be NULL) and
 * whether the connection is gone. Pure. PW_ERR_UNAVAILABLE: connection gone,
 * class 08 (connection exception), 53 (insufficient resources), 57P01-57P03
 * (server shutting down or starting), 40001 and 40P01 (serialization failure,
 * deadlock: redo the transaction); PW_ERR_TIMEOUT: 57014 (statement timeout or
 * cancel) and 55P03 (lock not available); PW_ERR_PG: everything else.
 */
pw_status pw_pg_classify(const char *sqlstate, bool connection_bad);

/*
 * True when sqlstate names an error in the data of one statement rather than
 * in the server or the schema: class 22 (data exception: invalid UTF-8,
 * value out of range, string too long, bad timestamp) and class 23 (integrity
 * constraint: check, not-null, foreign key, unique). Such a statement fails
 * the same way on every retry, so the message behind it is a dead letter.
 */
bool pw_pg_sqlstate_is_data(const char *sqlstate);

/* The SQLSTATE of pg's last failed statement ("" when it succeeded or had none). */
const char *pw_pg_last_sqlstate(const pw_pg *pg);

/* Closes the connection and frees pg. Accepts NULL. */
void pw_pg_free(pw_pg *pg);

#endif
