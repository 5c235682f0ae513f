/*
 * pg.c: the PostgreSQL prologue the reading commands share (cli.h):
 * connect at PW_PG_DSN, run one parameterised query, say what failed.
 *
 * `gate show`, `attribution show`, `bisect show`, `report card`,
 * `coverage` and `noise-floors` read through these (the reports over one
 * period start with pw_cli_period_connect); `series` and `series plot` have their own (a --dsn
 * option and a default DSN).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int pw_cli_pg_connect(PGconn **conn)
{
	*conn = NULL;
	const char *dsn = getenv("PW_PG_DSN");
	if (!dsn || !*dsn) {
		pw_cli_missing_env("PW_PG_DSN");
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

int pw_cli_show_args(int argc, char **argv, void (*usage)(FILE *out), const char *what, size_t max,
                     const char **id, bool *json)
{
	*id = NULL;
	*json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			*json = true;
		else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return PW_CLI_EXIT_OK;
		} else if (argv[i][0] != '-' && !*id)
			*id = argv[i];
		else {
			usage(stderr);
			return PW_CLI_EXIT_USAGE;
		}
	}
	if (!*id) {
		usage(stderr);
		return PW_CLI_EXIT_USAGE;
	}
	return pw_cli_check_id(what, *id, max);
}

int pw_cli_period_connect(int argc, char **argv, const char *what, const char *opt,
                          bool (*valid)(const char *), const char *form, void (*usage)(FILE *),
                          const char **value, bool *text, PGconn **conn)
{
	*conn = NULL;
	int rc = pw_cli_parse_period(argc, argv, what, opt, valid, form, usage, value, text);
	if (rc >= 0)
		return rc;
	return pw_cli_pg_connect(conn);
}
