/*
 * pg.c: the PostgreSQL prologue the reading commands share (cli.h):
 * connect at PW_PG_DSN, run one parameterised query, say what failed.
 *
 * `gate show`, `attribution show`, `bisect show` and `report card` read
 * through these two; `series` and `series plot` have their own (a --dsn
 * option and a default DSN).
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int pw_cli_pg_connect(PGconn **conn)
{
	*conn = NULL;
	const char *dsn = getenv("PW_PG_DSN");
	if (!dsn || !*dsn) {
		fprintf(stderr, "perfwatch: PW_PG_DSN is not set\n");
		return PW_CLI_EXIT_USAGE;
	}
	PGconn *c = PQconnectdb(dsn);
	if (PQstatus(c) != CONNECTION_OK) {
		/* libpq's message ends with its own newline */
		fprintf(stderr, "perfwatch: cannot connect to postgresql: %s", PQerrorMessage(c));
		PQfinish(c);
		return PW_CLI_EXIT_FAIL;
	}
	*conn = c;
	return -1;
}

PGresult *pw_cli_pg_query(PGconn *conn, const char *what, const char *sql, int nparams,
                          const char *const *params)
{
	PGresult *r = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		return r;
	fprintf(stderr, "perfwatch: %s: %s", what, PQerrorMessage(conn));
	PQclear(r);
	return NULL;
}
