/*
 * test_pg.c: unit tests of common/pw_pg.c that need no server.
 *
 * The error classification (what a consumer retries and what it dead-letters)
 * is a pure function; the reconnect schedule is checked against a port nobody
 * listens on. Statements against a real PostgreSQL are exercised by
 * tests/integration/it_roundtrip.c on the dev stack.
 */
#include <criterion/criterion.h>

#include "pw_pg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

Test(pg_classify, connection_problems_are_retriable)
{
	cr_assert_eq(pw_pg_classify(NULL, true), PW_ERR_UNAVAILABLE);
	cr_assert_eq(pw_pg_classify("23505", true), PW_ERR_UNAVAILABLE, "a dead connection wins");
	cr_assert_eq(pw_pg_classify("08006", false), PW_ERR_UNAVAILABLE);
	cr_assert_eq(pw_pg_classify("08P01", false), PW_ERR_UNAVAILABLE);
	cr_assert_eq(pw_pg_classify("57P01", false), PW_ERR_UNAVAILABLE, "admin shutdown");
	cr_assert_eq(pw_pg_classify("57P03", false), PW_ERR_UNAVAILABLE, "cannot connect now");
	cr_assert_eq(pw_pg_classify("53300", false), PW_ERR_UNAVAILABLE, "too many connections");
	cr_assert_eq(pw_pg_classify("40001", false), PW_ERR_UNAVAILABLE, "serialization failure");
	cr_assert_eq(pw_pg_classify("40P01", false), PW_ERR_UNAVAILABLE, "deadlock");
	cr_assert_eq(pw_pg_classify("57014", false), PW_ERR_TIMEOUT, "statement timeout");
	cr_assert_eq(pw_pg_classify("55P03", false), PW_ERR_TIMEOUT, "lock not available");
	cr_assert(pw_status_retriable(pw_pg_classify("08006", false)));
}

Test(pg_classify, data_errors_are_not)
{
	cr_assert_eq(pw_pg_classify("23505", false), PW_ERR_PG, "unique violation");
	cr_assert_eq(pw_pg_classify("22P02", false), PW_ERR_PG, "invalid text representation");
	cr_assert_eq(pw_pg_classify("42P01", false), PW_ERR_PG, "undefined table");
	cr_assert_eq(pw_pg_classify("57P04", false), PW_ERR_PG);
	cr_assert_eq(pw_pg_classify(NULL, false), PW_ERR_PG);
	cr_assert_eq(pw_pg_classify("08", false), PW_ERR_PG, "malformed sqlstate");
	cr_assert_not(pw_status_retriable(pw_pg_classify("23505", false)));
}

Test(pg_conn, invalid_dsn_is_a_config_error)
{
	char err[256];
	pw_log lg;
	pw_log_init(&lg, "test_pg", PW_LOG_ERROR);
	pw_pg *pg = NULL;
	cr_assert_eq(pw_pg_new(&pg, "host=x nosuchkeyword=1", NULL, &lg, err, sizeof err),
	             PW_ERR_CONFIG);
	cr_assert_null(pg);
	cr_assert(strstr(err, "nosuchkeyword") != NULL, "%s", err);
	cr_assert_eq(pw_pg_new(&pg, NULL, NULL, &lg, err, sizeof err), PW_ERR_CONFIG);
	pw_pg_free(NULL);
}

Test(pg_conn, server_down_fails_fast_and_backs_off)
{
	char err[512];
	pw_log lg;
	pw_log_init(&lg, "test_pg", PW_LOG_ERROR);
	pw_pg *pg = NULL;
	pw_pg_opts o = {.connect_timeout_s = 1, .backoff_ms = 300, .backoff_max_ms = 300};
	cr_assert_eq(pw_pg_new(&pg, "host=127.0.0.1 port=1 dbname=x user=x", &o, &lg, err,
	                       sizeof err),
	             PW_OK, "a server that is down is not an error at creation");
	cr_assert_null(pw_pg_conn(pg));
	double t0 = now_s();
	PGresult *res = (PGresult *)&lg;
	cr_assert_eq(pw_pg_exec(pg, "SELECT 1", 0, NULL, &res, err, sizeof err),
	             PW_ERR_UNAVAILABLE);
	cr_assert_null(res);
	cr_assert(strstr(err, "next attempt") != NULL, "inside the backoff: %s", err);
	cr_assert_eq(pw_pg_begin(pg, err, sizeof err), PW_ERR_UNAVAILABLE);
	cr_assert_not(pw_pg_in_transaction(pg));
	cr_assert_lt(now_s() - t0, 0.1, "calls inside the backoff return at once");
	cr_assert_eq(pw_pg_wait_connected(pg, 700, NULL, err, sizeof err), PW_ERR_UNAVAILABLE);
	double waited = now_s() - t0;
	cr_assert(waited >= 0.6 && waited < 3.0, "waited %.2f s", waited);
	volatile sig_atomic_t stop = 1;
	cr_assert_eq(pw_pg_wait_connected(pg, 10000, &stop, err, sizeof err), PW_ERR_SHUTDOWN);
	cr_assert_eq(pw_pg_rollback(pg, err, sizeof err), PW_OK, "nothing to roll back");
	cr_assert_eq(pw_pg_commit(pg, err, sizeof err), PW_ERR_INVALID, "no transaction");
	pw_pg_free(pg);
}

/* ------------------------------------------------------------ parameters */

Test(pg_params, values_in_order_with_their_formats)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	static const unsigned char blob[] = {0, 1, 2, 0xff};
	pw_pg_params_text(&p, "chat-8b");
	pw_pg_params_int(&p, -9007199254740993LL);
	pw_pg_params_double(&p, 0.1);
	pw_pg_params_bin(&p, blob, sizeof blob);
	pw_pg_params_null(&p);
	pw_pg_params_bool(&p, true);
	pw_pg_params_bin(&p, NULL, 0);
	cr_assert_eq(p.n, 7);
	cr_assert_not(p.overflow);
	cr_assert_str_eq(p.values[0], "chat-8b");
	cr_assert_eq(p.formats[0], 0);
	cr_assert_str_eq(p.values[1], "-9007199254740993");
	/* %.17g reads back to the same double */
	cr_assert_eq(strtod(p.values[2], NULL), 0.1);
	cr_assert_eq(p.values[3], (const char *)blob, "binary values are borrowed");
	cr_assert_eq(p.lengths[3], 4);
	cr_assert_eq(p.formats[3], 1);
	cr_assert_null(p.values[4], "SQL NULL");
	cr_assert_str_eq(p.values[5], "true");
	cr_assert_null(p.values[6], "a NULL binary value is SQL NULL");
	cr_assert_eq(p.formats[6], 0);
}

Test(pg_params, non_finite_doubles_as_postgresql_spells_them)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_double(&p, NAN);
	pw_pg_params_double(&p, INFINITY);
	pw_pg_params_double(&p, -INFINITY);
	pw_pg_params_double(&p, -0.0);
	cr_assert_str_eq(p.values[0], "NaN");
	cr_assert_str_eq(p.values[1], "Infinity");
	cr_assert_str_eq(p.values[2], "-Infinity");
	cr_assert_str_eq(p.values[3], "-0");
}

Test(pg_params, overflow_fails_the_statement_without_running_it)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	for (int i = 0; i < PW_PG_PARAMS_MAX + 1; i++)
		pw_pg_params_int(&p, i);
	cr_assert_eq(p.n, PW_PG_PARAMS_MAX);
	cr_assert(p.overflow);
	char last[16], why[64];
	snprintf(last, sizeof last, "%d", PW_PG_PARAMS_MAX - 1);
	snprintf(why, sizeof why, "more than %d statement parameters", PW_PG_PARAMS_MAX);
	cr_assert_str_eq(p.values[PW_PG_PARAMS_MAX - 1], last);
	char err[256];
	pw_log lg;
	pw_log_init(&lg, "test_pg", PW_LOG_ERROR);
	pw_pg *pg = NULL;
	/* a port nobody listens on: the overflow is reported before any connection attempt */
	cr_assert_eq(pw_pg_new(&pg, "host=127.0.0.1 port=1 connect_timeout=1", NULL, &lg, err,
	                       sizeof err),
	             PW_OK, "%s", err);
	PGresult *res = (PGresult *)&p; /* must be reset to NULL */
	cr_assert_eq(pw_pg_exec_params(pg, "SELECT 1", &p, 0, &res, err, sizeof err), PW_ERR_INVALID);
	cr_assert_null(res);
	cr_assert(strstr(err, why) != NULL, "%s", err);
	pw_pg_free(pg);
}
